# Shared helpers for run.sh, test.sh and .ci/run: install only what is missing, idempotently.
# Sourced, not executed.

set -euo pipefail

BATON_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

# Runs a command as root: directly when we are root, through sudo otherwise.
as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo "$@"
    else
        echo "error: installing system packages needs root; run as root or install sudo" >&2
        return 1
    fi
}

# ensure_packages PKG…: installs the Debian packages that are not installed yet.
# `apt-get update` runs at most once per invocation, and only if something is missing.
ensure_packages() {
    local missing=()
    for pkg in "$@"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" \
            || missing+=("$pkg")
    done
    [ "${#missing[@]}" -eq 0 ] && return 0
    say "installing Debian packages: ${missing[*]}"
    if [ -z "${BATON_APT_UPDATED:-}" ]; then
        as_root apt-get update -qq
        export BATON_APT_UPDATED=1
    fi
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# ensure_rust: a Rust toolchain new enough for edition 2024 (1.89+), through rustup.
ensure_rust() {
    if [ -x "$HOME/.cargo/bin/cargo" ]; then
        export PATH="$HOME/.cargo/bin:$PATH"
    fi
    if command -v cargo >/dev/null 2>&1; then
        return 0
    fi
    ensure_packages curl ca-certificates build-essential
    say "installing Rust with rustup (https://rustup.rs)"
    curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs \
        | sh -s -- -y --profile minimal --component rustfmt,clippy
    export PATH="$HOME/.cargo/bin:$PATH"
}

# What building and testing the CLI and its crates needs on Debian; bubblewrap is the sandbox
# every supervised agent runs in (`baton team up` refuses without it unless `--no-sandbox`).
CORE_PACKAGES=(build-essential pkg-config ca-certificates curl git python3 bubblewrap)

ensure_core() {
    ensure_packages "${CORE_PACKAGES[@]}"
    ensure_rust
}

# PostgreSQL for the store's tests: Debian's server programs, without the cluster the package
# would create and start (each test run starts its own throwaway server on loopback and stops
# it), and the unprivileged user that server runs as (PostgreSQL refuses to run as root); and
# `faketime`, for the test of a worker whose clock is wrong; PgBouncer, which the tests start
# in front of their server as they start the server.
ensure_postgres() {
    if ! dpkg-query -W -f='${Status}' postgresql 2>/dev/null | grep -q "install ok installed"; then
        as_root mkdir -p /etc/postgresql-common/createcluster.d
        echo "create_main_cluster = false" \
            | as_root tee /etc/postgresql-common/createcluster.d/baton-tests.conf >/dev/null
    fi
    ensure_packages postgresql pgbouncer faketime
    # The package's own pooler is not the tests' (each test starts its own, as with the
    # server): not left running or started at boot.
    if command -v systemctl >/dev/null 2>&1 && systemctl is-enabled pgbouncer >/dev/null 2>&1; then
        as_root systemctl disable --now pgbouncer >/dev/null 2>&1 || true
    fi
    if [ "$(id -u)" -eq 0 ] && ! id "${BATON_TEST_PG_USER:-baton-test}" >/dev/null 2>&1; then
        say "creating the user ${BATON_TEST_PG_USER:-baton-test}, for the tests' PostgreSQL server"
        useradd --system --no-create-home --shell /usr/sbin/nologin "${BATON_TEST_PG_USER:-baton-test}"
    fi
}

# Real MCP clients and servers the tests drive, pinned, in a cache outside the clone:
# the Python SDK (venv), the MCP Inspector CLI, Playwright MCP and the agent CLIs the team runs
# (Claude Code, Codex, the Gemini CLI; npm),
# Debian's Chromium.
TEST_TOOLS="${BATON_TEST_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/baton-test-tools}"
PYTHON_MCP_VERSION=2.3.0
INSPECTOR_VERSION=2.12.0
PLAYWRIGHT_MCP_VERSION=0.0.83
CLAUDE_CODE_VERSION=2.1.330
CODEX_VERSION=0.169.0
GEMINI_CLI_VERSION=0.61.0
OPENCODE_VERSION=1.18.33
# The official MCP conformance suite, run against `baton mcp --http`; it needs Node 22 (its
# `fs.globSync`), which it gets from npm's node-linux-* package, not the system's Node.
CONFORMANCE_VERSION=0.1.16
# Web Push's reference decryption (RFC 8188/8291, by one of their authors): the push test
# decrypts what `baton serve` pushes with it.
HTTP_ECE_VERSION=1.2.1
CONFORMANCE_NODE_VERSION=22.22.0

ensure_test_tools() {
    ensure_packages chromium python3-venv
    if ! command -v npm >/dev/null 2>&1; then
        ensure_packages nodejs npm
    fi
    mkdir -p "$TEST_TOOLS"
    if ! "$TEST_TOOLS/venv/bin/python" -c "import mcp" >/dev/null 2>&1; then
        say "installing the Python MCP SDK $PYTHON_MCP_VERSION into $TEST_TOOLS/venv"
        python3 -m venv "$TEST_TOOLS/venv"
        "$TEST_TOOLS/venv/bin/pip" install --quiet "mcp==$PYTHON_MCP_VERSION"
    fi
    local bin="$TEST_TOOLS/node/node_modules/.bin"
    local claude_version="" codex_version="" gemini_version="" opencode_version=""
    [ -x "$bin/claude" ] && claude_version="$("$bin/claude" --version 2>/dev/null | cut -d' ' -f1)"
    [ -x "$bin/codex" ] && codex_version="$("$bin/codex" --version 2>/dev/null | cut -d' ' -f2)"
    [ -x "$bin/gemini" ] && gemini_version="$("$bin/gemini" --version 2>/dev/null | tail -1)"
    [ -x "$bin/opencode" ] && opencode_version="$("$bin/opencode" --version 2>/dev/null | tail -1)"
    if [ ! -x "$bin/mcp-inspector" ] || [ ! -x "$bin/playwright-mcp" ] \
        || [ "$claude_version" != "$CLAUDE_CODE_VERSION" ] \
        || [ "$codex_version" != "$CODEX_VERSION" ] \
        || [ "$gemini_version" != "$GEMINI_CLI_VERSION" ] \
        || [ "$opencode_version" != "$OPENCODE_VERSION" ]; then
        say "installing the MCP Inspector $INSPECTOR_VERSION, Playwright MCP $PLAYWRIGHT_MCP_VERSION, Claude Code $CLAUDE_CODE_VERSION, Codex $CODEX_VERSION, the Gemini CLI $GEMINI_CLI_VERSION and OpenCode $OPENCODE_VERSION into $TEST_TOOLS/node"
        mkdir -p "$TEST_TOOLS/node"
        npm install --prefix "$TEST_TOOLS/node" --no-audit --no-fund --loglevel=error \
            "@modelcontextprotocol/inspector@$INSPECTOR_VERSION" "@playwright/mcp@$PLAYWRIGHT_MCP_VERSION" \
            "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" "@openai/codex@$CODEX_VERSION" \
            "@google/gemini-cli@$GEMINI_CLI_VERSION" "opencode-ai@$OPENCODE_VERSION"
    fi
    local arch
    case "$(uname -m)" in
        aarch64 | arm64) arch=arm64 ;;
        *) arch=x64 ;;
    esac
    local suite="$TEST_TOOLS/conformance" wanted="node-linux-$arch@$CONFORMANCE_NODE_VERSION conformance@$CONFORMANCE_VERSION"
    if [ "$(cat "$suite/versions" 2>/dev/null)" != "$wanted" ]; then
        say "installing the MCP conformance suite $CONFORMANCE_VERSION and Node $CONFORMANCE_NODE_VERSION into $suite"
        mkdir -p "$suite"
        npm install --prefix "$suite" --no-audit --no-fund --loglevel=error \
            "node-linux-$arch@$CONFORMANCE_NODE_VERSION" "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION"
        echo "$wanted" > "$suite/versions"
    fi
    local push="$TEST_TOOLS/push"
    if [ "$(cat "$push/versions" 2>/dev/null)" != "http_ece@$HTTP_ECE_VERSION" ]; then
        say "installing http_ece $HTTP_ECE_VERSION (Web Push's reference decryption) into $push"
        mkdir -p "$push"
        npm install --prefix "$push" --no-audit --no-fund --loglevel=error "http_ece@$HTTP_ECE_VERSION"
        echo "http_ece@$HTTP_ECE_VERSION" > "$push/versions"
    fi
    export BATON_TEST_TOOLS="$TEST_TOOLS"
}

# The desktop app: Tauri's system libraries, the end-to-end test drivers (Xvfb, Debian's
# WebKitWebDriver, tauri-driver, a private D-Bus session bus whose notifications the tests
# watch, dunst to show them and click one), and the web UI's packages.
DESKTOP_PACKAGES=(libwebkit2gtk-4.1-dev libgtk-3-dev libayatana-appindicator3-dev librsvg2-dev
    libssl-dev pkg-config xvfb xauth webkit2gtk-driver dbus-daemon dbus-bin xdotool dunst)
TAURI_DRIVER_VERSION=2.1.0

ensure_desktop() {
    ensure_packages "${DESKTOP_PACKAGES[@]}"
    if ! command -v npm >/dev/null 2>&1; then
        ensure_packages nodejs npm
    fi
}

ensure_desktop_test_tools() {
    if ! command -v tauri-driver >/dev/null 2>&1; then
        say "installing tauri-driver $TAURI_DRIVER_VERSION (cargo install)"
        cargo install --quiet --locked "tauri-driver@$TAURI_DRIVER_VERSION"
    fi
}

# mdBook builds the user guide (docs/guide); its server and search are not needed here.
MDBOOK_VERSION=0.5.4

ensure_docs_tools() {
    if ! mdbook --version 2>/dev/null | grep -q "v$MDBOOK_VERSION"; then
        say "installing mdBook $MDBOOK_VERSION (cargo install, without its server and search)"
        cargo install --quiet --locked --no-default-features "mdbook@$MDBOOK_VERSION"
    fi
}

# Installs the UI's packages (when package-lock.json changed) and builds ui/dist, which the
# desktop app embeds. `npm install` rather than `npm ci`: this npm writes lock files without
# other platforms' optional packages (rollup's native builds), which `npm ci` then refuses;
# the versions still come from the lock file.
build_ui() {
    local ui="$BATON_ROOT/ui"
    if [ ! -d "$ui/node_modules" ] || [ "$ui/package-lock.json" -nt "$ui/node_modules/.package-lock.json" ]; then
        say "installing the UI's npm packages"
        (cd "$ui" && npm install --no-audit --no-fund --loglevel=error)
    fi
    say "building the UI"
    (cd "$ui" && npm run --silent build >/dev/null)
}
