#!/usr/bin/env bash
# Installs what is missing, builds Baton, and runs the `baton` CLI with the given arguments.
#   ./scripts/run.sh                      # prints baton --help
#   ./scripts/run.sh leader init "goal"   # any baton command, in the current directory
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ensure_core
say "building baton (release)"
cargo build --release --quiet --manifest-path "$BATON_ROOT/Cargo.toml" --bin baton
target_dir="${CARGO_TARGET_DIR:-$BATON_ROOT/target}"
if [ "$#" -eq 0 ]; then
    set -- --help
fi
exec "$target_dir/release/baton" "$@"
