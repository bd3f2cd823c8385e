//! Claim benchmark, whole CLI processes (run with `cargo bench --bench claim`).
//!
//! Prints:
//! - single `baton worker claim` latency (p50, p99) at 100 and 10,000 tasks;
//! - end-to-end claims per second with 4 and 8 contending worker processes;
//! - the same throughput for `bench/baseline_claim.py`, a straightforward Python version of
//!   the source design's claim (one process per claim), when python3 is present.
//!
//! With `BATON_BENCH_BASELINE=/path/to/an/older/baton`, every figure is measured for that binary
//! too, in the same run, each right after the current binary's.
//!
//! Targets (issue 2): p50 ≤ 5 ms at 100 tasks, ≤ 50 ms at 10,000; ≥ 200 claims/s with 4.

use baton_test_support::stats;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use stats::{ms, percentile};
use std::time::Instant;

use baton_core::NewTask;
use baton_core::{TaskFile, Timestamp};
use baton_folder::FolderStore;

fn baton() -> &'static str {
    env!("CARGO_BIN_EXE_baton")
}

/// The binaries measured: this build's, and the baseline's when one is given.
fn binaries() -> Vec<(&'static str, String)> {
    let mut all = vec![("baton", baton().to_string())];
    if let Ok(baseline) = std::env::var("BATON_BENCH_BASELINE") {
        all.push(("baseline", baseline));
    }
    all
}

/// A project with `n` available tasks; every tenth depends on an earlier one.
fn project_with(n: usize) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let project = FolderStore::init(dir.path(), "benchmark", None).unwrap();
    let mut file = TaskFile::new(Timestamp::now());
    for i in 1..=n {
        let dependencies = if i % 10 == 0 && i > 1 {
            vec![format!("task-{}", i - 1)]
        } else {
            vec![]
        };
        // Dependencies are on done tasks' neighbours; mark those done so the queue stays ready.
        file.add_task(
            NewTask {
                description: format!("Implement part {i} of the feature, with tests and docs"),
                priority: 1 + (i % 5) as u32,
                dependencies,
                files: vec![format!("src/part_{i}.rs")],
                hints: "Follow the existing module layout".into(),
                id: None,
                ..Default::default()
            },
            Timestamp::now(),
        )
        .unwrap();
    }
    let tasks = project.layout().tasks_file();
    std::fs::write(&tasks, serde_json::to_vec_pretty(&file).unwrap()).unwrap();
    (dir, tasks)
}

fn claim_once(dir: &Path, agent: &str) -> Option<i32> {
    claim_with(baton(), dir, agent)
}

fn claim_with(binary: &str, dir: &Path, agent: &str) -> Option<i32> {
    Command::new(binary)
        .args(["worker", "claim", agent, "--json"])
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap()
        .code()
}

/// Claim latency at `n` tasks for each binary; trials alternate between the binaries (and the
/// order within a pair), so a busy moment of the machine does not fall on one of them.
fn latency(binaries: &[(&str, String)], n: usize, trials: usize) {
    let (dir, tasks) = project_with(n);
    let pristine = std::fs::read(&tasks).unwrap();
    let mut samples = vec![Vec::with_capacity(trials); binaries.len()];
    for i in 0..trials {
        for k in 0..binaries.len() {
            let which = if i % 2 == 0 {
                k
            } else {
                binaries.len() - 1 - k
            };
            // Restore the queue outside the timing so every trial claims from n ready tasks.
            // Synced, so its dirty pages are not flushed by the claim's own fsync (ext4
            // ordered mode).
            baton_fs::write_atomic(&tasks, &pristine).unwrap();
            let started = Instant::now();
            let code = claim_with(&binaries[which].1, dir.path(), &format!("w{}", i % 4));
            samples[which].push(started.elapsed());
            assert_eq!(code, Some(0), "claim failed");
        }
    }
    for ((label, _), mut samples) in binaries.iter().zip(samples) {
        samples.sort();
        println!(
            "{label} claim latency at {n:>6} tasks ({}): p50 {}  p99 {}  ({trials} trials, whole process)",
            human_size(pristine.len()),
            ms(percentile(&samples, 0.50), 2),
            ms(percentile(&samples, 0.99), 2)
        );
    }
}

fn human_size(bytes: usize) -> String {
    if bytes > 1 << 20 {
        format!("{:.1} MiB", bytes as f64 / (1 << 20) as f64)
    } else {
        format!("{} KiB", bytes >> 10)
    }
}

/// `workers` threads, each running one claiming process after another until none is ready.
fn throughput(
    label: &str,
    tasks: usize,
    workers: usize,
    claim: impl Fn(&Path, &str) -> Option<i32> + Sync,
) -> f64 {
    let (dir, _tasks) = project_with(tasks);
    let started = Instant::now();
    let claimed: usize = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let (dir, claim) = (dir.path(), &claim);
                s.spawn(move || {
                    let agent = format!("w{w}");
                    let mut n = 0;
                    while claim(dir, &agent) == Some(0) {
                        n += 1;
                    }
                    n
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    });
    let elapsed = started.elapsed();
    // Tasks behind an unclaimed dependency are not ready, so fewer than all can be claimed.
    let rate = claimed as f64 / elapsed.as_secs_f64();
    println!(
        "{label} throughput at {tasks:>5} tasks, {workers} workers: {claimed} claims in {:.2} s = {rate:.0} claims/s",
        elapsed.as_secs_f64()
    );
    rate
}

fn python_claim(dir: &Path, agent: &str) -> Option<i32> {
    let script = baton_test_support::source_root().join("bench/baseline_claim.py");
    Command::new("python3")
        .arg(script)
        .arg(agent)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .ok()?
        .code()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--list") {
        return; // `cargo test --benches` probes harness-less benches with --list
    }
    println!("baton: {}", baton());
    if !args.iter().any(|a| a == "--bench") {
        // Under `cargo test --all-targets`: a quick smoke run so the benchmark cannot rot.
        latency(&binaries(), 100, 5);
        assert!(throughput("baton", 40, 2, claim_once) > 0.0);
        return;
    }
    let binaries = binaries();
    for n in [100, 10_000] {
        latency(&binaries, n, 200);
    }
    let python = Command::new("python3")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    for tasks in [300, 1000] {
        for workers in [4, 8] {
            for (label, binary) in &binaries {
                throughput(label, tasks, workers, |dir, agent| {
                    claim_with(binary, dir, agent)
                });
            }
        }
        if python {
            throughput("python baseline", tasks, 4, python_claim);
        }
    }
}
