//! How a benchmark program was started: by `cargo bench` (full sizes, `BATON_BENCH_*` taken), by
//! `cargo test --all-targets` (a smoke run at small sizes, so it cannot rot), or probed with
//! `--list` (nothing to run); and which parts `BATON_BENCH_ONLY` asks for.

#![allow(dead_code)] // each benchmark uses its own share

use baton_test_support::stats::env_number;

pub struct BenchRun {
    /// Run by `cargo bench` (`--bench`), not as a smoke test.
    full: bool,
    /// `BATON_BENCH_ONLY`: the parts asked for, comma-separated; empty for all.
    only: String,
}

impl BenchRun {
    /// This process's run; `None` when it is only probed (`--list`).
    pub fn from_args() -> Option<BenchRun> {
        let args: Vec<String> = std::env::args().collect();
        if args.iter().any(|a| a == "--list") {
            return None; // `cargo test --benches` probes harness-less benches with --list
        }
        Some(BenchRun {
            full: args.iter().any(|a| a == "--bench"),
            only: std::env::var("BATON_BENCH_ONLY").unwrap_or_default(),
        })
    }

    /// A size: `name`'s value (default `bench`) under `cargo bench`, else `smoke`.
    pub fn size(&self, name: &str, bench: usize, smoke: usize) -> usize {
        match self.full {
            true => env_number(name, bench),
            false => smoke,
        }
    }

    /// Whether part `part` is to run.
    pub fn wanted(&self, part: &str) -> bool {
        self.only.is_empty() || self.only.split(',').any(|p| p == part)
    }
}
