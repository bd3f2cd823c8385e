#!/usr/bin/env bash
# Installs what is missing and runs every check and test Baton has: formatting, lints,
# unit tests, end-to-end tests, and a compile check of the benchmarks.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$BATON_ROOT"

ensure_core
ensure_test_tools

say "cargo fmt --check"
cargo fmt --all --check

say "cargo clippy (all targets, warnings are errors)"
cargo clippy --workspace --all-targets --locked -- -D warnings

say "cargo test (unit and end-to-end)"
cargo test --workspace --all-targets --locked

say "all checks passed"
