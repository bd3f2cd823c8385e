#!/usr/bin/env bash
# Installs what is missing and runs every check and test Baton has: formatting, lints (Rust and
# TypeScript), unit tests (Rust and Vitest), end-to-end tests (CLI, MCP with real clients, the
# proxy with Playwright and Chromium, the desktop app under Xvfb, a throwaway PostgreSQL
# server), benchmark smoke runs, the user guide (built, its links checked), and the Debian package
# (built, inspected, its CLI run).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$BATON_ROOT"

ensure_core
ensure_test_tools
ensure_postgres
ensure_desktop
ensure_desktop_test_tools
ensure_docs_tools

say "UI: lint, unit tests (Vitest), build"
build_ui
(cd ui && npm run --silent lint && npm run --silent test)

say "the user guide: mdbook build, and every link of it and of the README checked"
mdbook build docs/guide --dest-dir "${CARGO_TARGET_DIR:-$BATON_ROOT/target}/guide" >/dev/null
python3 scripts/check-guide-links.py

say "cargo fmt --check"
cargo fmt --all --check

say "crate layout: no import circles between modules, no source file over 600 lines (docs/CRATES.md)"
python3 scripts/check-layout.py

say "cargo clippy (all targets, warnings are errors)"
cargo clippy --workspace --all-targets --locked -- -D warnings

say "cargo build (every binary: the end-to-end tests run the desktop app too)"
cargo build --workspace --bins --locked

say "cargo test (unit and end-to-end)"
cargo test --workspace --all-targets --locked

say "vendored crates' own tests (vendor/README.md: SCRAM's key derivation as patched)"
cargo test --manifest-path vendor/postgres-protocol/Cargo.toml --lib --locked

"$BATON_ROOT/scripts/package.sh"

say "all checks passed"
