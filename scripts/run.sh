#!/usr/bin/env bash
# Installs what is missing, builds Baton and runs it:
#   ./scripts/run.sh                      # the desktop app on the project in this folder (with a
#                                         # display), or `baton --help` on a headless machine
#   ./scripts/run.sh leader init "goal"   # any baton CLI command, in the current directory
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ensure_core
target_dir="${CARGO_TARGET_DIR:-$BATON_ROOT/target}"
if [ "$#" -eq 0 ] && [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
    ensure_desktop
    build_ui
    say "building the desktop app (release)"
    cargo build --release --quiet --manifest-path "$BATON_ROOT/Cargo.toml" -p baton-desktop -p baton
    exec "$target_dir/release/baton-desktop" "$PWD"
fi
say "building baton (release)"
cargo build --release --quiet --manifest-path "$BATON_ROOT/Cargo.toml" --bin baton
if [ "$#" -eq 0 ]; then
    set -- --help
fi
exec "$target_dir/release/baton" "$@"
