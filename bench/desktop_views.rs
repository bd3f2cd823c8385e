//! The lead's Team and Review views (run with `cargo build --release -p baton-desktop -p baton
//! && cargo bench --bench desktop_views`): the release app under Xvfb, on projects a real team
//! of `exec` workers (`baton team up --detach`) is working on.
//!
//! Prints, in one run:
//! - transcript: an agent that printed 10,000 lines (10,000 events and the supervisor's own);
//!   the app opens on the Team view, which shows it: the time from the transcript's component
//!   appearing to the frame after its entries are drawn (measured by the UI), over 5 starts;
//! - follow: the same agent prints one more line, 50 times: from just before the line is
//!   written for the agent to print to the frame after the open transcript shows it
//!   (the agent's print, the supervisor's ingestion, the change feed, the UI's draw);
//! - diff: a done task whose branch adds a 5,000-line file, the app opened on the Review
//!   view: from the review's component appearing to the frame after the diff is drawn (the
//!   `task_review` read included; the diff is drawn a piece of lines a frame, and the first
//!   piece is what opens it), over 5 starts; the read alone; and the frame after the file's
//!   first 1,000 lines are all drawn;
//! - idle: 20 workers at work; PSS of the app and its WebKit processes 3 s after the first
//!   paint, the Team view (with the first worker's transcript) against the board, starts
//!   alternating, 5 each.
//!
//! Targets (issue 27): a 10,000-event transcript opens in ≤ 1 s and follows new events p99 ≤
//! 100 ms; a 5,000-line diff opens in ≤ 500 ms; idle PSS with the Team view open on 20
//! workers within 10 % of the board's.

use baton_test_support::stats::{ms, percentile};
use baton_test_support::xvfb;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

#[path = "common/app.rs"]
mod app;
use app::{drain, start_app, start_once, wait_for_line};

fn baton() -> &'static str {
    env!("CARGO_BIN_EXE_baton")
}

fn app() -> PathBuf {
    let app = Path::new(baton()).with_file_name("baton-desktop");
    assert!(
        app.exists(),
        "{} is missing: cargo build --release -p baton-desktop",
        app.display()
    );
    app
}

/// Runs `baton ARGS` in `dir`; its stdout, after asserting it succeeded.
fn run(dir: &Path, args: &[&str]) -> String {
    let out = Command::new(baton())
        .args(args)
        .current_dir(dir)
        .stderr(Stdio::inherit())
        .output()
        .unwrap();
    assert!(out.status.success(), "baton {args:?} failed");
    String::from_utf8(out.stdout).unwrap()
}

/// A project with `tasks` tasks (`t1`, `t2`, …) and nothing else.
fn project(tasks: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    run(dir.path(), &["leader", "init", "views benchmark"]);
    for i in 1..=tasks {
        run(
            dir.path(),
            &[
                "leader",
                "add-task",
                &format!("Task {i}"),
                "--id",
                &format!("t{i}"),
            ],
        );
    }
    dir
}

/// A team of `workers` exec workers running `command`, stopped (now) when dropped.
struct Team<'a>(&'a Path);

impl<'a> Team<'a> {
    fn up(dir: &'a Path, workers: usize, command: &str) -> Team<'a> {
        let n = workers.to_string();
        run(
            dir,
            &[
                "team",
                "up",
                "--detach",
                "--agent",
                "exec",
                "--workers",
                &n,
                "--exec",
                command,
            ],
        );
        Team(dir)
    }

    /// Waits until `ready` holds of `team status --json` (up to 2 minutes).
    fn wait(&self, what: &str, ready: impl Fn(&serde_json::Value) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let status: serde_json::Value =
                serde_json::from_str(&run(self.0, &["team", "status", "--json"])).unwrap();
            if ready(&status) {
                return;
            }
            assert!(Instant::now() < deadline, "timed out waiting for {what}");
            std::thread::sleep(Duration::from_millis(200)); // polling a whole CLI's status
        }
    }
}

impl Drop for Team<'_> {
    fn drop(&mut self) {
        let _ = Command::new(baton())
            .args(["team", "stop", "--now"])
            .current_dir(self.0)
            .stdout(Stdio::null())
            .status();
    }
}

fn working(status: &serde_json::Value) -> usize {
    status["workers"]
        .as_array()
        .map_or(0, |w| w.iter().filter(|w| w["state"] == "working").count())
}

/// The time in the `… at N us` line the app printed, in microseconds since the epoch.
fn at(line: &str) -> u128 {
    line.split_whitespace()
        .rev()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .expect("a time in microseconds")
}

/// The `N` of `… in N ms` in a line the app printed.
fn in_ms(line: &str) -> Duration {
    let ms: f64 = line
        .split(" in ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .expect("a duration in milliseconds");
    Duration::from_secs_f64(ms / 1000.0)
}

fn unix_micros() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_micros()
}

/// Starts the app `starts` times with `env`; each time, the `marker` line's in-UI duration.
fn opened(
    display: &str,
    dir: &Path,
    env: &[(&str, &str)],
    marker: &str,
    starts: usize,
) -> (Vec<Duration>, String) {
    let mut times = Vec::new();
    let mut last = String::new();
    for _ in 0..starts {
        let (_app, mut stderr) = start_app(&app(), display, dir, env);
        last = wait_for_line(&mut stderr, marker);
        times.push(in_ms(&last));
        drain(stderr);
    }
    times.sort();
    (times, last)
}

fn transcript(display: &str) {
    let dir = project(1);
    let feed = dir.path().join("feed");
    std::fs::write(&feed, "").unwrap();
    // 10,000 lines, then each line the benchmark appends to `feed`, as it comes.
    let team = Team::up(
        dir.path(),
        1,
        "seq -f 'line %g' 10000; exec tail -n +1 -f \"$BATON_DIR/feed\"",
    );
    team.wait("10,000 events in t1's transcript", |_| {
        // (No attempt at t1 yet is an error: not yet.)
        let out = Command::new(baton())
            .args(["team", "logs", "t1", "--json"])
            .current_dir(dir.path())
            .stderr(Stdio::null())
            .output()
            .unwrap();
        serde_json::from_slice::<serde_json::Value>(&out.stdout)
            .is_ok_and(|log| log["events"].as_array().map_or(0, Vec::len) >= 10_000)
    });
    let env = [("BATON_DESKTOP_VIEW", "team")];
    let (opens, line) = opened(display, dir.path(), &env, "transcript opened", 5);
    println!("{}", line.trim_start_matches("baton-desktop: "));
    println!(
        "transcript of 10,000 events: opened p50 {}  max {}  (5 starts, in the UI)",
        ms(percentile(&opens, 0.5), 1),
        ms(*opens.last().unwrap(), 1)
    );

    let (_app, mut stderr) = start_app(&app(), display, dir.path(), &env);
    let mut next = |marker: &str| wait_for_line(&mut stderr, marker);
    next("transcript opened");
    let mut follows = Vec::new();
    let mut events = Vec::new();
    let mut writer = std::fs::OpenOptions::new()
        .append(true)
        .open(&feed)
        .unwrap();
    for i in 0..50 {
        let before = unix_micros();
        writeln!(writer, "follow {i}").unwrap();
        let event = at(&next("change event at"));
        let line = next(&format!("transcript shows follow {i} at"));
        events.push(Duration::from_micros((event - before) as u64));
        follows.push(Duration::from_micros((at(&line) - before) as u64));
    }
    follows.sort();
    events.sort();
    println!(
        "transcript followed: an agent's line to the app's change event p50 {}  p99 {}  (50 lines)",
        ms(percentile(&events, 0.5), 1),
        ms(percentile(&events, 0.99), 1),
    );
    println!(
        "transcript followed: an agent's line to the frame showing it p50 {}  p99 {}  max {}  (50 lines)",
        ms(percentile(&follows, 0.5), 1),
        ms(percentile(&follows, 0.99), 1),
        ms(*follows.last().unwrap(), 1)
    );
}

fn diff(display: &str) {
    let dir = project(1);
    let path = dir.path();
    baton_test_support::repository(path);
    baton_test_support::git(path, &["checkout", "-q", "-b", "baton/t1"]);
    let text: String = (1..=5000)
        .map(|i| format!("fn line_{i}() -> u32 {{ {i} }}\n"))
        .collect();
    std::fs::write(path.join("big.rs"), text).unwrap();
    baton_test_support::git(path, &["add", "big.rs"]);
    baton_test_support::git(path, &["commit", "-q", "-m", "5,000 lines"]);
    baton_test_support::git(path, &["checkout", "-q", "main"]);
    run(path, &["worker", "claim", "w1", "--task", "t1"]);
    run(path, &["worker", "start", "w1", "t1"]);
    run(path, &["worker", "complete", "w1", "t1", "5,000 lines"]);
    let env = [("BATON_DESKTOP_VIEW", "review")];
    let mut reads = Vec::new();
    let mut opens = Vec::new();
    let mut wholes = Vec::new();
    let mut last = String::new();
    for _ in 0..5 {
        let (_app, mut stderr) = start_app(&app(), display, path, &env);
        reads.push(in_ms(&wait_for_line(&mut stderr, "review read")));
        last = wait_for_line(&mut stderr, "review opened");
        opens.push(in_ms(&last));
        wholes.push(in_ms(&wait_for_line(&mut stderr, "file drawn")));
        drain(stderr);
    }
    reads.sort();
    opens.sort();
    wholes.sort();
    println!("{}", last.trim_start_matches("baton-desktop: "));
    println!(
        "diff of 5,000 lines: opened p50 {}  max {}, of which the task_review read p50 {}  (5 starts, in the UI)",
        ms(percentile(&opens, 0.5), 1),
        ms(*opens.last().unwrap(), 1),
        ms(percentile(&reads, 0.5), 1)
    );
    println!(
        "  its first 1,000 lines all drawn (a piece a frame after the first): p50 {}  max {}",
        ms(percentile(&wholes, 0.5), 1),
        ms(*wholes.last().unwrap(), 1)
    );
}

fn idle(display: &str) {
    let dir = project(20);
    let team = Team::up(
        dir.path(),
        20,
        "echo \"working on $BATON_TASK_ID\"; exec sleep 3600",
    );
    team.wait("20 workers at work", |s| working(s) == 20);
    let mut board = Vec::new();
    let mut team_view = Vec::new();
    for _ in 0..5 {
        board.push(start_once(&app(), display, dir.path(), &[]).1);
        team_view.push(
            start_once(
                &app(),
                display,
                dir.path(),
                &[("BATON_DESKTOP_VIEW", "team")],
            )
            .1,
        );
    }
    board.sort();
    team_view.sort();
    let median = |v: &[u64]| v[v.len() / 2] / 1024;
    println!(
        "idle PSS, 20 workers at work: board median {} MB  max {} MB; Team view median {} MB  max {} MB ({:+.1} %)",
        median(&board),
        board.last().unwrap() / 1024,
        median(&team_view),
        team_view.last().unwrap() / 1024,
        (median(&team_view) as f64 / median(&board) as f64 - 1.0) * 100.0
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--list") || !args.iter().any(|a| a == "--bench") {
        return; // needs a release build of the app and a few seconds per start: `cargo bench` only
    }
    let xvfb = xvfb::Xvfb::start(300..400, Duration::from_secs(20));
    let only = std::env::var("BATON_BENCH_ONLY").unwrap_or_default();
    let part = |name: &str| only.is_empty() || only.split(',').any(|o| o == name);
    if part("transcript") {
        transcript(&xvfb.display);
    }
    if part("diff") {
        diff(&xvfb.display);
    }
    if part("idle") {
        idle(&xvfb.display);
    }
}
