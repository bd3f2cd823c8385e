//! Wake-up benchmark, whole CLI processes (run with `cargo bench --bench live`).
//!
//! Prints p50/p99 over 200 trials of:
//! - signal latency: from starting `baton signal write NAME` to the exit of a
//!   `baton signal wait NAME` that was already waiting;
//! - pickup latency: from starting `baton leader add-task` to the exit of a
//!   `baton worker claim AGENT --wait` that was already waiting, having claimed the task;
//! - for scale, a bare `baton signal write` process (start to exit), the floor of the first;
//! - the source design's way, a shell loop that checks for the file every second, over a few
//!   trials.
//!
//! With `BATON_BENCH_BASELINE=/path/to/an/older/baton`, each figure is measured for that binary
//! too, in the same run, right after the current binary's.
//!
//! Target (issue 3): p99 ≤ 10 ms for both latencies on this machine.

use baton_test_support::stats;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use stats::report;
#[path = "common/waiter.rs"]
mod waiter;
use std::time::{Duration, Instant};
use waiter::Waiter;

/// The binary being measured now (this build's unless `use_binary` chose another).
static BINARY: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);

fn baton() -> String {
    BINARY
        .lock()
        .unwrap()
        .clone()
        .unwrap_or_else(|| env!("CARGO_BIN_EXE_baton").to_string())
}

fn use_binary(binary: &str) {
    *BINARY.lock().unwrap() = Some(binary.to_string());
}

/// The binaries measured: this build's, and the baseline's when one is given.
fn binaries() -> Vec<(&'static str, String)> {
    let mut all = vec![("baton", env!("CARGO_BIN_EXE_baton").to_string())];
    if let Ok(baseline) = std::env::var("BATON_BENCH_BASELINE") {
        all.push(("baseline", baseline));
    }
    all
}

fn baton_in(dir: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(baton());
    command
        .args(args)
        .current_dir(dir)
        .env_remove("BATON_DIR")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    command
}

/// Starts a waiting `baton ARGS` in `dir` and returns once it says its watch is armed.
fn armed(dir: &Path, args: &[&str]) -> Waiter {
    waiter::armed(baton_in(dir, args))
}

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let status = baton_in(dir.path(), &["leader", "init", "benchmark"])
        .status()
        .unwrap();
    assert!(status.success());
    dir
}

fn signal_latency(trials: usize) -> Vec<(Duration, Duration)> {
    let dir = project();
    (0..trials)
        .map(|i| {
            let name = format!("signal-{i}");
            let waiter = armed(dir.path(), &["signal", "wait", &name, "--timeout", "60s"]);
            let started = Instant::now();
            let mut writer = baton_in(dir.path(), &["signal", "write", &name])
                .spawn()
                .unwrap();
            let times = waiter.finish_from(started);
            writer.wait().unwrap();
            times
        })
        .collect()
}

fn writer_alone(trials: usize) -> Vec<Duration> {
    let dir = project();
    (0..trials)
        .map(|i| {
            let started = Instant::now();
            let status = baton_in(dir.path(), &["signal", "write", &format!("alone-{i}")])
                .status()
                .unwrap();
            assert!(status.success());
            started.elapsed()
        })
        .collect()
}

fn pickup_latency(trials: usize) -> Vec<(Duration, Duration)> {
    let dir = project();
    (0..trials)
        .map(|i| {
            let worker = armed(
                dir.path(),
                &["worker", "claim", "w1", "--wait", "--timeout", "60s"],
            );
            let started = Instant::now();
            let mut leader = baton_in(dir.path(), &["leader", "add-task", &format!("task {i}")])
                .spawn()
                .unwrap();
            let times = worker.finish_from(started);
            leader.wait().unwrap();
            times
        })
        .collect()
}

/// Reports the time to the waiter's answer and the time to its exit.
fn report_pair(what: &str, samples: Vec<(Duration, Duration)>) {
    report(
        &format!("{what}: answer printed"),
        samples.iter().map(|s| s.0).collect(),
    );
    report(
        &format!("{what}: process exited"),
        samples.iter().map(|s| s.1).collect(),
    );
}

/// The source design's reader: a shell loop checking for the file every second.
fn polling_baseline(trials: usize) -> Vec<Duration> {
    let dir = tempfile::tempdir().unwrap();
    (0..trials)
        .map(|i| {
            let file = dir.path().join(format!(".ui-test-done-{i}"));
            let script = format!(
                "echo waiting >&2; while [ ! -f '{}' ]; do sleep 1; done",
                file.display()
            );
            let mut reader = Command::new("sh")
                .args(["-c", &script])
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            let mut stderr = BufReader::new(reader.stderr.take().unwrap());
            stderr.read_line(&mut String::new()).unwrap();
            // Writes land at a random moment of the reader's cycle, as in real use.
            std::thread::sleep(Duration::from_millis((i as u64 * 379) % 1000));
            let started = Instant::now();
            std::fs::write(&file, "done").unwrap();
            reader.wait().unwrap();
            started.elapsed()
        })
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--list") {
        return; // `cargo test --benches` probes harness-less benches with --list
    }
    println!("baton: {}", baton());
    if !args.iter().any(|a| a == "--bench") {
        // Under `cargo test --all-targets`: a quick smoke run so the benchmark cannot rot.
        report_pair("signal write -> waiter", signal_latency(3));
        report_pair("add-task -> claim --wait", pickup_latency(3));
        return;
    }
    let binaries = binaries();
    for (label, binary) in &binaries {
        use_binary(binary);
        report_pair(
            &format!("{label}: signal write -> waiter"),
            signal_latency(200),
        );
    }
    for (label, binary) in &binaries {
        use_binary(binary);
        report_pair(
            &format!("{label}: add-task -> claim --wait"),
            pickup_latency(200),
        );
    }
    for (label, binary) in &binaries {
        use_binary(binary);
        report(
            &format!("{label}: signal write alone (start to exit)"),
            writer_alone(200),
        );
    }
    report(
        "source design's 1 s polling reader (write -> reader exit)",
        polling_baseline(10),
    );
}
