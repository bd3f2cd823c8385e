//! The embedded store as a project grows (run with `cargo bench --bench archive`; issue 63).
//! Whole `baton` processes, as an agent runs them, on three folder projects measured in one
//! run, trials interleaved so a busy moment of the machine falls on none of them alone:
//!
//! - `100`: 100 available tasks;
//! - `10,000 (9,900 landed)`: 9,900 done hours ago, with their result reports, and 100
//!   available; its first command archives the landed ones, as it would in a project of the
//!   previous version;
//! - `2,000 live`: 2,000 available tasks;
//! - `10,000 live`: 10,000 available tasks (for the record: nothing of it can be archived).
//!
//! Prints each project's `worker claim` p50/p99 and `leader status` p50, and the claims' ratios
//! to the 100-task project's. Targets (issue 63): a claim at 10,000 with 9,900 landed ≤ 1.3×
//! one at 100; with 2,000 live ≤ 2×; `leader status` of the 10,000-task project ≤ 100 ms.
//!
//! With `BATON_BENCH_BASELINE=/path/to/an/older/baton`, every figure is measured for that binary
//! too, in the same run, each right after the current binary's ("baseline" lines).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use baton_folder::FolderStore;
use baton_test_support::stats::{ms, percentile};

#[path = "common/tasks.rs"]
mod tasks;

fn baton() -> &'static str {
    env!("CARGO_BIN_EXE_baton")
}

/// A folder project of `landed` tasks done hours ago and `live` available ones after them
/// (each depending on the one before), its board as it stands once its first command ran.
fn project(landed: usize, live: usize) -> (tempfile::TempDir, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let project = FolderStore::init(dir.path(), "benchmark", None).unwrap();
    let file = tasks::landed_and_live(landed, live);
    let board = project.layout().tasks_file();
    std::fs::write(&board, baton_folder::encode(&file).unwrap()).unwrap();
    // The first command: a project of the previous version is archived by it.
    let first = run(dir.path(), &["leader", "status"]);
    assert!(first.status.success(), "{first:?}");
    (dir, std::fs::read(&board).unwrap())
}

fn run(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(baton())
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// The binaries measured: this build's, and the baseline's when one is named.
fn binaries() -> Vec<(&'static str, String)> {
    let mut all = vec![("current", baton().to_string())];
    if let Ok(baseline) = std::env::var("BATON_BENCH_BASELINE") {
        all.push(("baseline", baseline));
    }
    all
}

fn timed(binary: &str, dir: &Path, args: &[&str]) -> Duration {
    let started = Instant::now();
    let status = Command::new(binary)
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    let took = started.elapsed();
    assert!(status.success(), "baton {args:?}: {status}");
    took
}

struct Measured {
    binary: &'static str,
    label: &'static str,
    claims: Vec<Duration>,
    statuses: Vec<Duration>,
    board: usize,
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--list") {
        return;
    }
    let trials = match args.iter().any(|a| a == "--bench") {
        true => 60,
        // Under `cargo test --all-targets`: a smoke run so the benchmark cannot rot.
        false => 2,
    };
    let sizes: [(&'static str, usize, usize); 4] = [
        ("100", 0, 100),
        ("10,000 (9,900 landed)", 9_900, 100),
        ("2,000 live", 0, 2_000),
        ("10,000 live", 0, 10_000),
    ];
    let projects: Vec<_> = sizes
        .iter()
        .map(|(label, landed, live)| (*label, project(*landed, *live)))
        .collect();
    let binaries = binaries();
    // Per binary, per project, in the order of `projects`.
    let mut measured: Vec<Measured> = binaries
        .iter()
        .flat_map(|(binary, _)| {
            projects.iter().map(|(label, (_, board))| Measured {
                binary,
                label,
                claims: Vec::new(),
                statuses: Vec::new(),
                board: board.len(),
            })
        })
        .collect();
    for trial in 0..trials {
        for k in 0..projects.len() {
            // Each trial's order turned around, so no project always goes first.
            let which = match trial % 2 {
                0 => k,
                _ => projects.len() - 1 - k,
            };
            let (_, (dir, board)) = &projects[which];
            let tasks = dir.path().join(".coordination/tasks.json");
            let agent = format!("w{}", trial % 4);
            for (b, (_, binary)) in binaries.iter().enumerate() {
                baton_fs::write_atomic(&tasks, board).unwrap();
                let m = &mut measured[b * projects.len() + which];
                m.claims.push(timed(
                    binary,
                    dir.path(),
                    &["worker", "claim", &agent, "--json"],
                ));
                m.statuses
                    .push(timed(binary, dir.path(), &["leader", "status", "--json"]));
            }
        }
    }
    for m in &mut measured {
        m.claims.sort();
        m.statuses.sort();
    }
    for m in &measured {
        // Each binary's claims against its own claim at 100 tasks.
        let base = measured
            .iter()
            .find(|b| b.binary == m.binary)
            .map(|b| percentile(&b.claims, 0.5))
            .expect("the 100-task project is measured first");
        let p50 = percentile(&m.claims, 0.5);
        println!(
            "{:<8} {:<22} board {:>7} KiB  claim p50 {} p99 {} ({:.2}× the 100-task claim)  status p50 {}  ({trials} trials, whole processes)",
            m.binary,
            m.label,
            m.board >> 10,
            ms(p50, 2),
            ms(percentile(&m.claims, 0.99), 2),
            p50.as_secs_f64() / base.as_secs_f64(),
            ms(percentile(&m.statuses, 0.5), 2),
        );
    }
}
