//! Hundreds of agents on one PostgreSQL project through PgBouncer (run with `cargo bench
//! --bench scale`; issue 28). A throwaway server and a PgBouncer in transaction mode in front
//! of it are started for the run; four "machines" (folders connected to the project through
//! the pooler) each run a quarter of the workers. Every worker does what Baton's worker
//! prompt tells an agent to, each step a `baton` process: `worker claim` (on exit code 3,
//! `worker claim --wait --timeout`), `worker start`, the work (a pause of a random length),
//! `worker complete --modified` with the task's files. The workers join over the first work
//! period, as a team's agents start one after another.
//!
//! The board: `BATON_BENCH_TASKS` (10,000) tasks, each with one or two files out of 2,500
//! (so claims pass over tasks whose files another worker holds) and, past the first
//! `WINDOW`, one or two dependencies on tasks some way before it.
//!
//! Prints: the wall time; `worker claim` process p50/p99 (the claims that found a task without
//! waiting) and how many claims waited; the `worker start` and `worker complete` processes'
//! p50/p99; each task done exactly once (no task claimed twice, none lost); the server
//! connections at peak, the pooler's against its pool size and the listening ones (a waiting
//! claim `LISTEN`s on the server directly).
//!
//! `BATON_BENCH_PROFILE=1` also prints the statements that took the server's time.
//!
//! Sizes: `BATON_BENCH_WORKERS` (200), `BATON_BENCH_TASKS` (10,000), `BATON_BENCH_POOL` (10
//! server connections), `BATON_BENCH_WORK_MS` (the mean pause, 4,000 ms: an agent's minutes
//! of work shortened so 200 of them offer ~50 tasks a second). Targets (issue 28): claim p99
//! ≤ 50 ms, 0 double claims, 0 lost tasks, server connections bounded by the pool.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use baton_core::{NewTask, TaskStore};
use baton_test_support::pg::{PgServer, psql};
use baton_test_support::pgbouncer::{PgBouncer, PoolerStats};
use baton_test_support::stats::{env_number, ms, percentile};
use baton_test_support::{Dice, expect_code};

#[path = "common/project.rs"]
mod project;
use project::Project;

/// Tasks before the first with dependencies; a task depends on tasks between `2 × WINDOW` and
/// `WINDOW` before it, so with the workers taking tasks in board order its dependencies are
/// mostly done when it is reached.
const WINDOW: usize = 400;

/// The floor's workers, the share of the board they do (one task in `FLOOR_SHARE`, the
/// first ones), and how much shorter their pause is than the load's (so the floor takes
/// seconds, its claims still seldom meeting).
const FLOOR_WORKERS: usize = 8;
const FLOOR_SHARE: usize = 40;
const FLOOR_PAUSE_DIVISOR: u32 = 10;

fn files_of(dice: &mut Dice, tasks: usize) -> Vec<String> {
    let paths = 2_500.min(tasks * 4);
    let n = 1 + dice.roll(2);
    let mut files: Vec<String> = (0..n)
        .map(|_| format!("src/module_{}.rs", dice.roll(paths)))
        .collect();
    files.dedup();
    files
}

/// Adds the board through the library, on a direct connection (setup, not measured).
fn add_board(url: &str, project: &str, tasks: usize) {
    let store = baton_pg::PgStore::open(url, project).unwrap();
    let mut dice = Dice(0x9e37_79b9_7f4a_7c15);
    let window = WINDOW.min(tasks / 4).max(1);
    for i in 1..=tasks {
        let dependencies = if i > 2 * window {
            let n = 1 + dice.roll(2);
            let mut deps: Vec<String> = (0..n)
                .map(|_| format!("task-{}", i - window - dice.roll(window)))
                .collect();
            deps.dedup();
            deps
        } else {
            Vec::new()
        };
        store
            .add_task(NewTask {
                description: format!("Part {i} of the feature, with its tests"),
                dependencies,
                files: files_of(&mut dice, tasks),
                ..NewTask::default()
            })
            .unwrap();
    }
}

/// What the workers found, together.
#[derive(Default)]
struct Tally {
    /// Each claim that found a task without waiting: the tasks completed when it was made,
    /// and how long the process took.
    claims: Vec<(usize, Duration)>,
    waited: usize,
    /// How long each `worker start` and `worker complete` process took.
    steps: Vec<Duration>,
    /// Task id → the workers that completed it.
    completed: HashMap<String, Vec<String>>,
}

/// One worker, as the worker prompt has an agent work, until every task is done.
fn work(
    machine: &Project,
    name: &str,
    mut dice: Dice,
    mean_pause: Duration,
    until: usize,
    tally: &Mutex<Tally>,
) {
    // Agents join over the first work period, as a team's do (each takes seconds to start,
    // and a supervisor starts them one after another): 200 claims in the same instant would
    // measure the two cores' queue at the start, not the store.
    let pause = mean_pause.as_millis() as usize;
    std::thread::sleep(Duration::from_millis(dice.roll(pause.max(1)) as u64));
    loop {
        if tally.lock().unwrap().completed.len() >= until {
            return;
        }
        let started = Instant::now();
        let out = machine.output(&["worker", "claim", name, "--json"]);
        let took = started.elapsed();
        let stdout = if out.status.code() == Some(3) {
            let waited = machine.output(&[
                "worker",
                "claim",
                name,
                "--wait",
                "--timeout",
                "2s",
                "--json",
            ]);
            tally.lock().unwrap().waited += 1;
            if waited.status.code() == Some(5) {
                continue; // nothing came: look again whether all is done
            }
            expect_code("worker claim --wait", waited, 0).0
        } else {
            let stdout = expect_code("worker claim", out, 0).0;
            let mut tally = tally.lock().unwrap();
            let done = tally.completed.len();
            tally.claims.push((done, took));
            stdout
        };
        let claimed: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        let task = &claimed["task"];
        let id = task["id"].as_str().unwrap().to_string();
        let step = Instant::now();
        expect_code(
            "worker start",
            machine.output(&["worker", "start", name, &id]),
            0,
        );
        let started_in = step.elapsed();
        std::thread::sleep(Duration::from_millis(
            (pause / 2 + dice.roll(pause.max(1))) as u64,
        ));
        let files: Vec<&str> = task["context"]["files"]
            .as_array()
            .map(|f| f.iter().filter_map(|f| f.as_str()).collect())
            .unwrap_or_default();
        let modified = files.join(",");
        let mut args = vec!["worker", "complete", name, &id, "done"];
        if !modified.is_empty() {
            args.extend(["--modified", &modified]);
        }
        let step = Instant::now();
        expect_code("worker complete", machine.output(&args), 0);
        let mut tally = tally.lock().unwrap();
        tally.steps.extend([started_in, step.elapsed()]);
        tally
            .completed
            .entry(id)
            .or_default()
            .push(name.to_string());
    }
}

/// The server's connections at peak while `running`: the pooler's (its `SHOW POOLS`) and
/// every session of the role on the server, with those listening. One session each for the
/// whole run: a `psql` process per sample took 4 % of the two cores the run measures.
fn sample_connections(
    server: &PgServer,
    bouncer: &PgBouncer,
    running: &AtomicBool,
) -> (u32, usize, usize) {
    let mut on_server = postgres::Client::connect(server.admin_url(), postgres::NoTls).unwrap();
    let mut console = postgres::Client::connect(&bouncer.console_url(), postgres::NoTls).unwrap();
    let (mut pooled, mut sessions, mut listening) = (0, 0, 0);
    while running.load(Ordering::Relaxed) {
        pooled = pooled.max(pooled_connections(&mut console));
        let row = on_server
            .query_one(
                "SELECT count(*), count(*) FILTER (WHERE query LIKE 'LISTEN%')
                 FROM pg_stat_activity WHERE usename = 'baton' AND backend_type = 'client backend'",
                &[],
            )
            .unwrap();
        sessions = sessions.max(row.get::<_, i64>(0) as usize);
        listening = listening.max(row.get::<_, i64>(1) as usize);
        std::thread::sleep(Duration::from_millis(200)); // a sampling interval
    }
    (pooled, sessions, listening)
}

/// The server connections the pooler holds for the test database (`SHOW POOLS`: active,
/// idle, used, tested and logging in).
fn pooled_connections(console: &mut postgres::Client) -> u32 {
    let columns = ["sv_active", "sv_idle", "sv_used", "sv_tested", "sv_login"];
    console
        .simple_query("SHOW POOLS")
        .unwrap()
        .into_iter()
        .filter_map(|message| match message {
            postgres::SimpleQueryMessage::Row(row) if row.get("database") == Some("baton") => {
                Some(row)
            }
            _ => None,
        })
        .map(|row| {
            columns
                .iter()
                .map(|c| row.get(*c).and_then(|n| n.parse::<u32>().ok()).unwrap_or(0))
                .sum::<u32>()
        })
        .sum()
}

/// The machine's CPU time so far: (busy, total), in clock ticks (`/proc/stat`).
fn cpu_times() -> (u64, u64) {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let ticks: Vec<u64> = stat
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .skip(1)
        .filter_map(|n| n.parse().ok())
        .collect();
    let idle = ticks.get(3).copied().unwrap_or(0) + ticks.get(4).copied().unwrap_or(0);
    let total: u64 = ticks.iter().take(8).sum();
    (total - idle, total)
}

/// The share of the machine's CPU busy since `before`.
fn cpu_busy(before: &(u64, u64)) -> f64 {
    let now = cpu_times();
    (now.0 - before.0) as f64 / (now.1 - before.1).max(1) as f64
}

/// What one phase of the run measured.
struct Phase {
    workers: usize,
    wall: Duration,
    /// Claims that found a task without waiting: all of them, and those made while the first
    /// 90 % of the board was done (the last tasks' dependencies are among the ones just before
    /// them: most workers wait there, and their wakes fall on the claims still running).
    claims: Vec<Duration>,
    steady: Vec<Duration>,
    waited: usize,
    /// `worker start` and `worker complete` processes.
    steps: Vec<Duration>,
    busy: f64,
    pooler: PoolerStats,
    /// Server connections at peak: the pooler's, the role's, the role's listening.
    connections: (u32, usize, usize),
}

/// Runs `workers` workers (named from `first`) on the machines until `until` tasks of the
/// `tasks` on the board are done, and what they measured.
#[allow(clippy::too_many_arguments)] // one phase of the run, every size of it named
fn phase(
    machines: &[Project],
    server: &PgServer,
    bouncer: &PgBouncer,
    (workers, first): (usize, usize),
    mean_pause: Duration,
    until: usize,
    tasks: usize,
    tally: &Mutex<Tally>,
) -> Phase {
    let cpu_before = cpu_times();
    let pooler_before = bouncer.stats();
    let running = AtomicBool::new(true);
    let started = Instant::now();
    let finished = AtomicUsize::new(0);
    let connections = std::thread::scope(|scope| {
        let sampler = scope.spawn(|| sample_connections(server, bouncer, &running));
        let handles: Vec<_> = (first..first + workers)
            .map(|i| {
                let (machine, finished) = (&machines[i % machines.len()], &finished);
                scope.spawn(move || {
                    let name = format!("m{}-w{i}", i % machines.len());
                    let dice = Dice(0x2545_f491_4f6c_dd1d ^ (i as u64 + 1));
                    work(machine, &name, dice, mean_pause, until, tally);
                    finished.fetch_add(1, Ordering::Relaxed);
                })
            })
            .collect();
        for handle in handles {
            handle.join().unwrap();
        }
        running.store(false, Ordering::Relaxed);
        sampler.join().unwrap()
    });
    let wall = started.elapsed();
    assert_eq!(finished.into_inner(), workers);
    let mut tally = tally.lock().unwrap();
    let claims = std::mem::take(&mut tally.claims);
    let mut steady: Vec<Duration> = claims
        .iter()
        .filter(|(done, _)| *done < tasks * 9 / 10)
        .map(|(_, took)| *took)
        .collect();
    steady.sort();
    let mut claims: Vec<Duration> = claims.into_iter().map(|(_, took)| took).collect();
    claims.sort();
    let mut steps = std::mem::take(&mut tally.steps);
    steps.sort();
    Phase {
        workers,
        wall,
        claims,
        steady,
        waited: std::mem::take(&mut tally.waited),
        steps,
        busy: cpu_busy(&cpu_before),
        pooler: bouncer.stats().since(&pooler_before),
        connections,
    }
}

impl Phase {
    fn print(&self, pool: u32) {
        let (claims, steady) = (&self.claims, &self.steady);
        println!(
            "  `worker claim` process: p50 {}  p90 {}  p99 {}  ({} claims; {} waited for a task)",
            ms(percentile(claims, 0.50), 2),
            ms(percentile(claims, 0.90), 2),
            ms(percentile(claims, 0.99), 2),
            claims.len(),
            self.waited
        );
        println!(
            "  … while the first 90 % of the tasks were done: p50 {}  p99 {}  ({} claims); the machine's CPU {:.0} % busy",
            ms(percentile(steady, 0.50), 2),
            ms(percentile(steady, 0.99), 2),
            steady.len(),
            self.busy * 100.0
        );
        println!(
            "  `worker start` and `worker complete` processes: p50 {}  p99 {}",
            ms(percentile(&self.steps, 0.50), 2),
            ms(percentile(&self.steps, 0.99), 2),
        );
        let (pooled, sessions, listening) = self.connections;
        println!(
            "  server connections at peak: the pooler's {pooled} (pool {pool}); all of the role's {sessions}, of them listening {listening}"
        );
        let stats = &self.pooler;
        println!(
            "  the pooler ran {} transactions: {} in one on average, {} waiting for a server connection before it",
            stats.transactions,
            ms(stats.average_in_transaction(), 2),
            ms(stats.average_wait(), 2)
        );
    }
}

fn run(workers: usize, tasks: usize, pool: u32, mean_pause: Duration) {
    let profiled = std::env::var_os("BATON_BENCH_PROFILE").is_some();
    let server = match profiled {
        true => PgServer::start_allowing_profiled((workers + 50) as u32),
        false => PgServer::start_allowing((workers + 50) as u32),
    };
    let bouncer = PgBouncer::start(&server, pool);
    let project = format!("scale{}", std::process::id());
    // The lead's folder, created through the pooler; the machines connect to it there.
    let lead = Project {
        dir: tempfile::tempdir().unwrap(),
        password: Some(server.password()),
        store: Some((bouncer.url(), project.clone())),
    };
    let pooler = bouncer.url_without_password();
    lead.ok(&[
        "leader",
        "init",
        "scale",
        "--store",
        &pooler,
        "--project",
        &project,
    ]);
    let setup = Instant::now();
    add_board(server.url(), &project, tasks);
    // What autovacuum does on a live server shortly after a bulk load: the planner sees the
    // board's size (the completion's dependents are found through their index).
    psql(server.url(), "ANALYZE baton_tasks");
    println!(
        "board: {tasks} tasks with files and dependencies added in {:.1} s",
        setup.elapsed().as_secs_f64()
    );
    let machines: Vec<Project> = (0..4).map(|_| lead.another_machine()).collect();
    let tally = Mutex::new(Tally::default());
    // The floor: the same claims on the same board and server by a few workers, whose
    // claims seldom meet, measured first in the same run. The load's figures are read against
    // it: what 200 workers add, and how much of it is waiting for one of the pool's
    // connections (the pooler's wait, apart).
    let floor_workers = FLOOR_WORKERS.min(workers / 2).max(1);
    let floor = phase(
        &machines,
        &server,
        &bouncer,
        (floor_workers, 0),
        mean_pause / FLOOR_PAUSE_DIVISOR,
        (tasks / FLOOR_SHARE).max(floor_workers),
        tasks,
        &tally,
    );
    let floor_done = tally.lock().unwrap().completed.len();
    println!(
        "floor: {floor_workers} workers did the first {floor_done} tasks in {:.1} s",
        floor.wall.as_secs_f64()
    );
    floor.print(pool);
    let load = phase(
        &machines,
        &server,
        &bouncer,
        (workers, floor_workers),
        mean_pause,
        tasks,
        tasks,
        &tally,
    );
    println!(
        "load: {workers} workers on 4 machines through PgBouncer (pool {pool}) drained the other {} tasks in {:.1} s",
        tasks - floor_done,
        load.wall.as_secs_f64()
    );
    load.print(pool);
    let ratio = |q: f64| {
        percentile(&load.claims, q).as_secs_f64()
            / percentile(&floor.claims, q).as_secs_f64().max(1e-6)
    };
    println!(
        "load against floor ({} workers against {}): claim p50 {:.2} x, p99 {:.2} x; the pooler's wait per transaction {} against {}",
        load.workers,
        floor.workers,
        ratio(0.50),
        ratio(0.99),
        ms(load.pooler.average_wait(), 2),
        ms(floor.pooler.average_wait(), 2),
    );
    let tally = tally.into_inner().unwrap();
    let twice = tally.completed.values().filter(|by| by.len() > 1).count();
    // What the store says: every task done, each claimed once.
    let store = baton_pg::PgStore::open(server.url(), &project).unwrap();
    let (board, _) = store.snapshot().unwrap();
    let not_done = board
        .tasks
        .iter()
        .filter(|t| t.status != baton_core::TaskStatus::Done)
        .count();
    let attempts_other_than_one = board.tasks.iter().filter(|t| t.attempts != 1).count();
    println!(
        "done: {} of {tasks}; completed twice: {twice}; not done (lost): {not_done}; claimed other than once: {attempts_other_than_one}",
        tally.completed.len()
    );
    if profiled {
        println!(
            "where the server's time went:\n{}",
            server.statement_profile(12)
        );
    }
    assert!(
        !floor.claims.is_empty() && !load.claims.is_empty(),
        "both phases claimed"
    );
    assert_eq!(tally.completed.len(), tasks, "every task completed");
    assert_eq!(twice, 0, "no task completed twice");
    assert_eq!(not_done, 0, "no task lost");
    assert_eq!(attempts_other_than_one, 0, "each task claimed once");
    for phase in [&floor, &load] {
        assert!(
            phase.connections.0 <= pool,
            "the pooler kept within its pool"
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--list") {
        return; // `cargo test --benches` probes harness-less benches with --list
    }
    if !args.iter().any(|a| a == "--bench") {
        // Under `cargo test --all-targets`: a small run so the benchmark cannot rot, with
        // every check it makes.
        run(8, 60, 2, Duration::from_millis(20));
        return;
    }
    run(
        env_number("BATON_BENCH_WORKERS", 200),
        env_number("BATON_BENCH_TASKS", 10_000),
        env_number("BATON_BENCH_POOL", 10) as u32,
        Duration::from_millis(env_number("BATON_BENCH_WORK_MS", 4_000) as u64),
    );
}
