#!/usr/bin/env bash
# Builds the Debian package of the desktop app with the Tauri bundler, the `baton` CLI shipped
# beside it in /usr/bin, and checks what it holds:
#   ./scripts/package.sh        # writes <target>/release/bundle/deb/Baton_<version>_amd64.deb
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ensure_core
ensure_desktop
ensure_packages dpkg-dev
build_ui
target_dir="${CARGO_TARGET_DIR:-$BATON_ROOT/target}"

say "building baton (release), to ship in the package"
cargo build --release --quiet --manifest-path "$BATON_ROOT/Cargo.toml" --bin baton
# tauri.conf.json maps /usr/bin/baton to src-tauri/bundle/baton; stage the binary there.
# Shipped without debug line tables (the release profile keeps them for profiling).
mkdir -p "$BATON_ROOT/src-tauri/bundle"
strip --strip-debug -o "$BATON_ROOT/src-tauri/bundle/baton" "$target_dir/release/baton"
# Its man pages and shell completions, from the same definitions as its --help.
rm -rf "$BATON_ROOT/src-tauri/bundle/man" "$BATON_ROOT/src-tauri/bundle/completions"
mkdir -p "$BATON_ROOT/src-tauri/bundle/completions"
"$target_dir/release/baton" manpages "$BATON_ROOT/src-tauri/bundle/man" >/dev/null
gzip -9n "$BATON_ROOT"/src-tauri/bundle/man/man1/*.1
for shell in bash zsh fish; do
    "$target_dir/release/baton" completions "$shell" >"$BATON_ROOT/src-tauri/bundle/completions/baton.$shell"
done

say "building the desktop app (release)"
(cd "$BATON_ROOT" && ui/node_modules/.bin/tauri build --no-bundle --ci >/dev/null)
strip --strip-debug "$target_dir/release/baton-desktop"
say "bundling the .deb"
(cd "$BATON_ROOT" && ui/node_modules/.bin/tauri bundle --bundles deb --ci >/dev/null)

version="$(sed -n 's/^version = "\(.*\)"/\1/p' "$BATON_ROOT/Cargo.toml" | head -1)"
deb="$target_dir/release/bundle/deb/Baton_${version}_amd64.deb"
[ -f "$deb" ] || { echo "package.sh: no package at $deb" >&2; exit 1; }

# What a user gets: both programs, a desktop entry, the icon; the CLI runs.
contents="$(dpkg-deb -c "$deb")"
for path in usr/bin/baton-desktop usr/bin/baton usr/share/applications/Baton.desktop \
    usr/share/man/man1/baton.1.gz usr/share/man/man1/baton-team-up.1.gz \
    usr/share/bash-completion/completions/baton usr/share/zsh/vendor-completions/_baton \
    usr/share/fish/vendor_completions.d/baton.fish usr/share/baton/ui/index.html; do
    grep -q " $path\$" <<<"$contents" || { echo "package.sh: $deb lacks $path" >&2; exit 1; }
done
unpacked="$(mktemp -d)"
trap 'rm -rf "$unpacked"' EXIT
dpkg-deb -x "$deb" "$unpacked"
"$unpacked/usr/bin/baton" --version >/dev/null
dpkg-deb -f "$deb" Depends | grep -q libwebkit2gtk-4.1 \
    || { echo "package.sh: $deb does not depend on WebKitGTK" >&2; exit 1; }
dpkg-deb -f "$deb" Depends | grep -q bubblewrap \
    || { echo "package.sh: $deb does not depend on bubblewrap (the agents' sandbox)" >&2; exit 1; }
say "packaged $deb ($(du -h "$deb" | cut -f1)): baton-desktop and baton in /usr/bin, baton's man pages and completions, the UI baton serve serves"
