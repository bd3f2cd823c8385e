//! A team that plans and judges itself, whole CLI processes with `exec` seats that answer at
//! once, so what is measured is Baton's own overhead (run with `cargo bench --bench planning`).
//! Prints, in one run:
//!
//! - goal → first worker: `team up --goal … --plan auto` on a project without a worktree per
//!   task, every attempt sandboxed; the planner adds one task and prints the time it finished
//!   (its last words, the plan task's report); the worker writes the time it started. The gap,
//!   p50/p99 over `BATON_BENCH_TRIALS` (20) runs: what Baton adds beyond the planner's own time
//!   (its attempt's end, the plan's approval, the worker's claim and start). Against a plain
//!   team's pickup in the same run (`leader add-task` → the waiting worker's agent started).
//! - judged landing: a one-worker `--merge auto` team of `BATON_BENCH_LANDINGS` (20) tasks with
//!   a judge that approves at once, against the same team without one: wall time per landed
//!   task, and the ratio.
//!
//! Targets (issue 61): goal → first worker, beyond the planner, p50 ≤ 500 ms; a judged landing
//! ≤ 1.2× an unjudged one.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

#[path = "common/project.rs"]
mod project;
#[path = "common/repo.rs"]
mod repo;
#[path = "common/run.rs"]
mod run;
use baton_test_support::stats::{ms, report};
use project::{Project, Store};
use repo::{landing_project, team_of_one};
use run::BenchRun;

fn now_ns() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

/// The planner: one task, then the time it finished (its report).
const PLANNER: &str = "baton leader add-task \"Task of $BATON_TASK_ID\" >/dev/null && date +%s%N";
/// The worker: the time it started, in a file of the project's.
const WORKER: &str = "date +%s%N > \"started-$BATON_TASK_ID\"";

/// Goal → first worker started, beyond the planner's own time, over `trials` runs.
fn goal_to_worker(trials: usize) -> Duration {
    let p = Project::new(Store::Folder);
    std::fs::create_dir_all(p.path().join(".coordination/team")).unwrap();
    std::fs::write(
        p.path().join(".coordination/team/profiles.toml"),
        format!("[profiles.planner]\nkind = \"exec\"\ncommand = '{PLANNER}'\n"),
    )
    .unwrap();
    let mut samples = Vec::new();
    for trial in 1..=trials {
        let goal = format!("Goal {trial}");
        let out = p.output(&[
            "--json",
            "team",
            "up",
            "--exec",
            WORKER,
            "--no-worktree",
            "--goal",
            &goal,
            "--plan",
            "auto",
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let board = p.output(&["--json", "leader", "status"]);
        let board: serde_json::Value = serde_json::from_slice(&board.stdout).unwrap();
        let tasks = board["tasks"].as_array().unwrap();
        let plan = tasks
            .iter()
            .find(|t| t["description"] == goal.as_str())
            .unwrap();
        let planned: u128 = plan["result"]["output"]
            .as_str()
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let task = tasks.iter().find(|t| t["plan"] == plan["id"]).unwrap();
        let started: u128 = std::fs::read_to_string(
            p.path()
                .join(format!("started-{}", task["id"].as_str().unwrap())),
        )
        .unwrap()
        .trim()
        .parse()
        .unwrap();
        samples.push(Duration::from_nanos(started.saturating_sub(planned) as u64));
    }
    report("goal → first worker, beyond the planner", samples)
}

/// A plain team's pickup in the same setting: `leader add-task` → its worker's agent started.
fn pickup(trials: usize) -> Duration {
    let p = Project::new(Store::Folder);
    let mut runner = Running(p.spawn(&["team", "up", "--stay", "--no-worktree", "--exec", WORKER]));
    let mut samples = Vec::new();
    for i in 1..=trials {
        let before = now_ns();
        p.ok(&["leader", "add-task", &format!("Task {i}")]);
        let path = p.path().join(format!("started-task-{i}"));
        let deadline = Instant::now() + Duration::from_secs(30);
        let started: u128 = loop {
            if let Some(at) = std::fs::read_to_string(&path)
                .ok()
                .and_then(|t| t.trim().parse().ok())
            {
                break at;
            }
            assert!(Instant::now() < deadline, "task {i} never started");
            std::thread::sleep(Duration::from_micros(200)); // the next look
        };
        samples.push(Duration::from_nanos(started.saturating_sub(before) as u64));
    }
    runner.stop();
    report("a plain team's pickup", samples)
}

/// A child process interrupted (Ctrl-C) and reaped when dropped.
struct Running(std::process::Child);

impl Running {
    fn stop(&mut self) {
        if self.0.try_wait().unwrap().is_some() {
            return;
        }
        let _ = std::process::Command::new("kill")
            .args(["-INT", &self.0.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(20);
        while self.0.try_wait().unwrap().is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20)); // the next look
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop();
    }
}

/// `n` tasks landed by a one-worker team, judged and not.
fn judged_landing(n: usize) {
    let judged = landing_project(n);
    std::fs::create_dir_all(judged.path().join(".coordination/team")).unwrap();
    std::fs::write(
        judged.path().join(".coordination/team/profiles.toml"),
        "[profiles.judge]\nkind = \"exec\"\ncommand = 'cat > /dev/null'\n",
    )
    .unwrap();
    let with_judge = team_of_one(&judged, &["--merge", "auto", "--judge", "judge"]);
    let plain = landing_project(n);
    let without = team_of_one(&plain, &["--merge", "auto"]);
    let per = |d: Duration| d / n as u32;
    println!(
        "judged landing: {n} tasks in {} ({} a task), unjudged in {} ({} a task): {:.2}×",
        ms(with_judge, 0),
        ms(per(with_judge), 1),
        ms(without, 0),
        ms(per(without), 1),
        with_judge.as_secs_f64() / without.as_secs_f64()
    );
}

fn main() {
    // Under `cargo test --all-targets`: a quick smoke run so the benchmark cannot rot.
    let Some(bench) = BenchRun::from_args() else {
        return;
    };
    let size = |name: &str, full: usize, smoke: usize| bench.size(name, full, smoke);
    // BATON_BENCH_ONLY=goal,judge runs only those.
    let run = |part: &str| bench.wanted(part);
    let trials = size("BATON_BENCH_TRIALS", 20, 2);
    if run("goal") {
        println!("== goal → first worker (folder, sandboxed) ==");
        let planned = goal_to_worker(trials);
        let plain = pickup(trials);
        println!(
            "goal → first worker: {} beyond the planner, against a plain pickup of {}",
            ms(planned, 2),
            ms(plain, 2)
        );
    }
    if run("judge") {
        println!("== judged landing ==");
        judged_landing(size("BATON_BENCH_LANDINGS", 20, 3));
    }
}
