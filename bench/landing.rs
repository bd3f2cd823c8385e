//! A team left alone on a big repository, whole CLI processes (run with
//! `cargo bench --bench landing`). Prints, in one run:
//!
//! - worktrees: on a generated repository of `BATON_BENCH_FILES` (50,000) files of 4 KiB
//!   (about 200 MB checked out), one `git worktree add` of a new branch and one
//!   `git checkout -B` in an existing worktree (the floor), then a one-worker team of 6 tasks
//!   whose agent only makes an empty commit: its wall time per task, and the disk its
//!   worktrees hold after. With `BATON_BENCH_BASELINE=/path/to/an/older/baton` the team is
//!   run with that binary too, on the same repository.
//! - merge queue: `BATON_BENCH_LANDINGS` (30) tasks, each writing a file of its own, run by a
//!   one-worker team with `--merge auto` and the check `true`: tasks landed per minute (wall
//!   time of the whole run), against the same team without the queue followed by
//!   `leader merge --all` by hand.
//!
//! Targets (issue 42): per-task overhead on such a repository within 2× of the switch; about
//! one checkout per live worker on disk.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

#[path = "common/project.rs"]
mod project;
#[path = "common/repo.rs"]
mod repo;
#[path = "common/run.rs"]
mod run;
use baton_test_support::stats::ms;
use project::{Project, Store};
use repo::{baton_with, git, landing_project, team_of_one};
use run::BenchRun;

fn timed(what: impl FnOnce()) -> Duration {
    let clock = Instant::now();
    what();
    clock.elapsed()
}

/// A repository of `files` files of 4 KiB in folders of 100, committed on `main`, with a
/// project folder at its top.
fn big_repository(files: usize) -> Project {
    let p = Project::new(Store::Folder);
    let top = p.path();
    git(top, &["init", "-q", "-b", "main"]);
    let block = "x".repeat(4095) + "\n";
    for i in 0..files {
        let dir = top.join(format!("src/d{:04}", i / 100));
        if i % 100 == 0 {
            std::fs::create_dir_all(&dir).unwrap();
        }
        std::fs::write(dir.join(format!("f{i}.txt")), format!("{i}\n{block}")).unwrap();
    }
    std::fs::write(top.join(".gitignore"), ".coordination/\n").unwrap();
    git(top, &["add", "-A"]);
    git(top, &["commit", "-qm", "a big repository"]);
    p
}

/// Bytes under `path` on disk (`du`).
fn disk(path: &Path) -> u64 {
    let out = Command::new("du").arg("-sk").arg(path).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    text.split_whitespace()
        .next()
        .and_then(|k| k.parse::<u64>().ok())
        .unwrap_or(0)
        * 1024
}

/// The JSON `baton ARGS --json` prints, with `binary`, in project `p`.
fn json_with(binary: &str, p: &Project, args: &[&str]) -> serde_json::Value {
    let out = Command::new(binary)
        .arg("--json")
        .args(args)
        .current_dir(p.path())
        .env_remove("BATON_DIR")
        .output()
        .unwrap();
    assert!(out.status.success(), "baton {args:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

fn at(value: &serde_json::Value) -> chrono_free::Instant {
    chrono_free::parse(value.as_str().unwrap())
}

/// Timestamps as RFC 3339 text, read without a date library: seconds of the day are enough
/// for gaps within one run.
mod chrono_free {
    pub type Instant = f64;
    pub fn parse(text: &str) -> Instant {
        // 2026-11-26T06:24:16.123456Z
        let time = text.split('T').nth(1).unwrap().trim_end_matches('Z');
        let mut parts = time.split(':');
        let h: f64 = parts.next().unwrap().parse().unwrap();
        let m: f64 = parts.next().unwrap().parse().unwrap();
        let s: f64 = parts
            .next()
            .unwrap()
            .trim_end_matches("+00")
            .parse()
            .unwrap();
        h * 3600.0 + m * 60.0 + s
    }
}

/// A team of one running 6 tasks that each make an empty commit, with `baton` at `binary`:
/// its wall time, the time between one task's attempt ending and the next one's starting
/// after the first (claim, completion, worktree: Baton's per-task overhead), and the disk its
/// worktrees hold after.
fn six_tasks(p: &Project, binary: &str, label: &str) {
    let ids: Vec<String> = (0..6)
        .map(|i| {
            let added = json_with(binary, p, &["leader", "add-task", &format!("{label} {i}")]);
            added["task"]["id"].as_str().unwrap().to_string()
        })
        .collect();
    let command = "git commit --allow-empty -qm \"$BATON_TASK_ID\"";
    let took = timed(|| assert!(baton_with(binary, p, &["team", "up", "--exec", command])));
    let held = disk(&p.path().join(".coordination/worktrees"));
    let spans: Vec<(f64, f64)> = ids
        .iter()
        .map(|id| {
            let log = json_with(binary, p, &["team", "logs", id]);
            (
                at(&log["attempt"]["started_at"]),
                at(&log["attempt"]["ended_at"]),
            )
        })
        .collect();
    let gaps: Vec<f64> = spans.windows(2).map(|w| w[1].0 - w[0].1).collect();
    let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
    println!(
        "{label}: a one-worker team of 6 tasks took {} ({} per task); between tasks (after the \
         first) {:.0} ms on average (max {:.0} ms); its worktrees hold {:.0} MB",
        ms(took, 0),
        ms(took / 6, 0),
        mean * 1000.0,
        gaps.iter().cloned().fold(0.0, f64::max) * 1000.0,
        held as f64 / 1e6
    );
    // The next run starts from no worktrees.
    let _ = std::fs::remove_dir_all(p.path().join(".coordination/worktrees"));
    git(p.path(), &["worktree", "prune"]);
}

fn worktrees(files: usize) {
    let clock = Instant::now();
    let p = big_repository(files);
    let checkout = disk(&p.path().join("src"));
    println!(
        "a repository of {files} files ({:.0} MB checked out), made in {}",
        checkout as f64 / 1e6,
        ms(clock.elapsed(), 0)
    );
    let top = p.path();
    let add = timed(|| {
        git(
            top,
            &[
                "worktree",
                "add",
                "-q",
                "-b",
                "floor",
                "../floor-wt",
                "main",
            ],
        )
    });
    let wt = top.join("../floor-wt");
    let switch = timed(|| git(&wt, &["checkout", "-q", "-B", "floor-2", "main"]));
    println!(
        "git worktree add: {}; git checkout -B in an existing worktree: {}",
        ms(add, 0),
        ms(switch, 0)
    );
    git(
        top,
        &["worktree", "remove", "--force", &wt.to_string_lossy()],
    );
    six_tasks(&p, project::baton(), "this build");
    if let Ok(baseline) = std::env::var("BATON_BENCH_BASELINE") {
        six_tasks(&p, &baseline, "the baseline");
    }
}

/// `n` tasks that each write a file of their own, on a small repository with the check
/// `true`.
fn merge_queue(n: usize) {
    let queued = landing_project(n);
    let with_queue = team_of_one(&queued, &["--merge", "auto"]);
    let by_hand = landing_project(n);
    let team = team_of_one(&by_hand, &[]);
    let merge = timed(|| by_hand.ok(&["leader", "merge", "--all"]));
    let per_minute = |d: Duration| n as f64 / d.as_secs_f64() * 60.0;
    println!(
        "merge queue: {n} tasks done and landed in {} ({:.0} landed per minute)",
        ms(with_queue, 0),
        per_minute(with_queue)
    );
    println!(
        "by hand: the team in {}, then leader merge --all in {} ({:.0} per minute overall, \
         {:.0} per minute merging)",
        ms(team, 0),
        ms(merge, 0),
        per_minute(team + merge),
        per_minute(merge)
    );
}

fn main() {
    // Under `cargo test --all-targets`: a quick smoke run so the benchmark cannot rot.
    let Some(bench) = BenchRun::from_args() else {
        return;
    };
    let size = |name: &str, full: usize, smoke: usize| bench.size(name, full, smoke);
    // BATON_BENCH_ONLY=worktrees,merge-queue runs only those.
    let run = |part: &str| bench.wanted(part);
    if run("worktrees") {
        worktrees(size("BATON_BENCH_FILES", 50_000, 200));
    }
    if run("merge-queue") {
        merge_queue(size("BATON_BENCH_LANDINGS", 30, 4));
    }
}
