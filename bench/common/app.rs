//! The desktop app as a benchmark runs it: started with its timing reports on (stderr lines
//! the UI asks it to print), its idle memory as PSS, stopped when the benchmark ends.

#![allow(dead_code)] // each benchmark uses its own share

use baton_test_support::xvfb;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A process stopped when the benchmark ends.
pub struct Killed(pub Child);

impl Drop for Killed {
    fn drop(&mut self) {
        xvfb::stop_gently(&mut self.0);
    }
}

/// PSS in kB of `pid` and all its descendants.
pub fn pss_tree(pid: u32) -> u64 {
    let mut total = 0;
    let mut stack = vec![pid];
    while let Some(pid) = stack.pop() {
        if let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")) {
            total += text
                .lines()
                .find_map(|l| l.strip_prefix("Pss:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
                .unwrap_or(0);
        }
        if let Ok(children) = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")) {
            stack.extend(
                children
                    .split_whitespace()
                    .filter_map(|c| c.parse::<u32>().ok()),
            );
        }
    }
    total
}

/// Starts the app with its timing reports on; the app, and its stderr by lines.
pub fn start_app(
    app: &Path,
    display: &str,
    project: &Path,
    env: &[(&str, &str)],
) -> (Killed, Stderr) {
    let mut child = Command::new(app)
        .arg(project)
        .envs(env.iter().copied())
        .env("DISPLAY", display)
        .env("BATON_DESKTOP_TIMING", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = BufReader::new(child.stderr.take().unwrap()).lines();
    (Killed(child), stderr)
}

/// Five starts: time to the first board (or view) paint, and PSS (kB) 3 s later.
pub fn measure(
    app: &Path,
    display: &str,
    project: &Path,
    env: &[(&str, &str)],
) -> (Vec<Duration>, Vec<u64>) {
    let (mut paints, mut pss): (Vec<Duration>, Vec<u64>) = (0..5)
        .map(|_| start_once(app, display, project, env))
        .unzip();
    paints.sort();
    pss.sort();
    (paints, pss)
}

/// One start: the time to the first board (or view) paint, and PSS (kB) 3 s later.
pub fn start_once(
    app: &Path,
    display: &str,
    project: &Path,
    env: &[(&str, &str)],
) -> (Duration, u64) {
    let started = Instant::now();
    let (app_process, mut stderr) = start_app(app, display, project, env);
    wait_for_line(&mut stderr, "first board paint");
    let paint = started.elapsed();
    drain(stderr);
    std::thread::sleep(Duration::from_secs(3)); // idle on purpose: memory at rest
    (paint, pss_tree(app_process.0.id()))
}

/// The app's stderr, line by line.
pub type Stderr = std::io::Lines<BufReader<std::process::ChildStderr>>;

/// Reads `stderr` up to the first line containing `marker`, and returns it.
pub fn wait_for_line(stderr: &mut Stderr, marker: &str) -> String {
    for line in stderr.by_ref() {
        let line = line.expect("the app's stderr");
        if line.contains(marker) {
            return line;
        }
    }
    panic!("the app stopped before printing {marker:?}");
}

/// Reads the rest of `stderr` on a thread of its own, so the app never writes to a closed
/// pipe (its later timing lines would fail) or a full one.
pub fn drain(stderr: Stderr) {
    std::thread::spawn(move || stderr.for_each(drop));
}
