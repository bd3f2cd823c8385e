//! The two stores side by side, as workers use them: `baton worker claim` as a whole CLI
//! process (run with `cargo bench --bench stores`). A throwaway PostgreSQL server is started
//! for the run (`BATON_TEST_PG_URL` for an existing one).
//!
//! Prints, in one run, for the folder, for PostgreSQL, and (claims) for PostgreSQL through
//! PgBouncer in transaction mode (`BATON_BENCH_ONLY=pooled` runs that comparison alone, one
//! claim on each store after another, and prints the pooled claim against the other two; then
//! three rounds of a drain on the folder and one through PgBouncer, each round's folder rate
//! against its PgBouncer rate (issue 63: ≥ 0.8×), and one drain on PostgreSQL direct):
//! - one `worker claim` process's latency, p50/p99, at 100 and at 100,000 tasks (the claim
//!   is undone outside the timing, so every trial claims from the same queue);
//! - claims per second with 8 worker processes claiming one after another until none is left
//!   (the disk settled before each drain: see `settle`);
//! - a task added on one connection to a `worker claim --wait` process (another "machine")
//!   printing its claim, p50/p99;
//! - a signal written on one connection to a `signal wait` process (another "machine")
//!   printing that it was signalled, p50/p99;
//! - `worker claim` p50 at 1,000 tasks with 200 reservations in force against none
//!   (alternating, one run);
//! - Claude Code's tool-use hook (`claude-hook tool-use`) against a `worker heartbeat`
//!   process, p50/p99 (alternating, one run).
//!
//! With `BATON_BENCH_BASELINE=/path/to/an/older/baton`, every figure is measured for that binary
//! too, in the same run, each right after the current binary's (the same schema version is
//! assumed for the database).
//!
//! Targets (issue 12, 2 cores): on PostgreSQL, claim p50 ≤ 8 ms at 100 tasks and at most 1.5×
//! that at 100,000. Issue 13: signal wake-up p99 ≤ 15 ms. Issue 14: the reservation check costs
//! at most 15 % of the claim. The library's figures (long-lived connections, and the bare SQL loop they
//! are compared with) are `cargo bench -p baton-pg --bench claims`.

use std::process::{Command, Stdio};
use std::time::Instant;

use baton_test_support::pg::{PgServer, insert_tasks};
use baton_test_support::pgbouncer::PgBouncer;

#[path = "common/tasks.rs"]
mod tasks;
use baton_test_support::stats::{ms, percentile};
use tasks::folder_tasks;

/// The binary measured now: this build's, or the baseline's (`BATON_BENCH_BASELINE`), with
/// its label.
static MEASURED: std::sync::RwLock<(&str, String)> = std::sync::RwLock::new(("", String::new()));

fn baton() -> String {
    let measured = MEASURED.read().unwrap();
    if measured.1.is_empty() {
        env!("CARGO_BIN_EXE_baton").to_string()
    } else {
        measured.1.clone()
    }
}

/// The binaries measured, with their labels: this build's, then the baseline's when given.
fn binaries() -> Vec<(&'static str, String)> {
    let mut all = vec![("", env!("CARGO_BIN_EXE_baton").to_string())];
    if let Ok(baseline) = std::env::var("BATON_BENCH_BASELINE") {
        all.push(("baseline ", baseline));
    }
    all
}

/// Runs `figure` for this build's binary, then for the baseline's when one is given.
fn for_each_binary(mut figure: impl FnMut()) {
    for measured in binaries() {
        *MEASURED.write().unwrap() = measured;
        figure();
    }
    *MEASURED.write().unwrap() = ("", String::new());
}

/// Where a benchmark project's tasks are kept.
#[derive(Clone, Copy)]
enum Store<'a> {
    Folder,
    Postgres(&'a PgServer),
    /// The same server, reached through a pooler.
    Pooled(&'a PgServer, &'a PgBouncer),
}

impl Store<'_> {
    /// The store, after "baseline" while the baseline binary is measured.
    fn label(&self) -> String {
        let store = match self {
            Store::Folder => "folder",
            Store::Postgres(_) => "postgres",
            Store::Pooled(..) => "pgbouncer",
        };
        format!("{}{store}", MEASURED.read().unwrap().0)
    }
}

/// A project folder with `n` available tasks, kept in `store`.
struct Bench {
    dir: tempfile::TempDir,
    password: Option<String>,
    /// The database's own connection for putting tasks back, kept open so that no process
    /// starts and no server backend forks or exits around a timed claim.
    restorer: Option<std::sync::Mutex<postgres::Client>>,
    /// The folder's pristine `tasks.json`, or the database project's name.
    pristine: Vec<u8>,
    project: String,
}

impl Bench {
    fn new(store: Store<'_>, n: usize) -> Bench {
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);
        let dir = tempfile::tempdir().unwrap();
        let project = format!(
            "bench{}",
            NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        );
        let mut bench = Bench {
            dir,
            password: None,
            restorer: None,
            pristine: Vec::new(),
            project,
        };
        match store {
            Store::Folder => {
                bench.run(&["leader", "init", "benchmark"]);
                // The same rows the database gets, as the folder's own file.
                bench.pristine = folder_tasks(n);
                let path = bench.dir.path().join(".coordination/tasks.json");
                std::fs::write(&path, &bench.pristine).unwrap();
            }
            Store::Postgres(server) | Store::Pooled(server, _) => {
                bench.password = Some(server.password());
                let url = match store {
                    Store::Pooled(_, bouncer) => bouncer.url_without_password(),
                    _ => server.url_without_password(),
                };
                bench.run(&[
                    "leader",
                    "init",
                    "benchmark",
                    "--store",
                    &url,
                    "--project",
                    &bench.project,
                ]);
                insert_tasks(server.url(), &bench.project, n);
                let restorer = postgres::Client::connect(server.url(), postgres::NoTls).unwrap();
                bench.restorer = Some(std::sync::Mutex::new(restorer));
            }
        }
        bench
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(baton());
        cmd.args(args)
            .current_dir(self.dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if let Some(password) = &self.password {
            cmd.env("PGPASSWORD", password);
        }
        cmd
    }

    fn run(&self, args: &[&str]) -> Option<i32> {
        self.command(args).status().unwrap().code()
    }

    /// Puts every task back to available, outside the timing.
    fn restore(&self, store: Store<'_>) {
        match store {
            Store::Folder => baton_fs::write_atomic(
                &self.dir.path().join(".coordination/tasks.json"),
                &self.pristine,
            )
            .unwrap(),
            Store::Postgres(_) | Store::Pooled(..) => {
                let mut restorer = self.restorer.as_ref().unwrap().lock().unwrap();
                restorer
                    .execute(
                        "UPDATE baton_tasks SET status = 'available', claimed_by = NULL,
                             lease_expires_at = NULL,
                             body = body || jsonb_build_object('status', 'available',
                                 'claimed_by', null, 'claimed_at', null,
                                 'lease_expires_at', null, 'attempts', 0)
                         WHERE project = $1 AND status <> 'available'",
                        &[&self.project],
                    )
                    .unwrap();
            }
        }
    }
}

/// `tasks.json` with `n` available tasks shaped like `insert_tasks`' rows.
fn latency(store: Store<'_>, n: usize, trials: usize) {
    let bench = Bench::new(store, n);
    let mut samples = Vec::with_capacity(trials);
    for i in 0..trials {
        bench.restore(store);
        let started = Instant::now();
        let code = bench.run(&["worker", "claim", &format!("w{}", i % 4), "--json"]);
        samples.push(started.elapsed());
        assert_eq!(code, Some(0), "claim failed");
    }
    samples.sort();
    println!(
        "{:>8} `worker claim` at {n:>6} tasks: p50 {}  p99 {}  ({trials} processes)",
        store.label(),
        ms(percentile(&samples, 0.50), 2),
        ms(percentile(&samples, 0.99), 2)
    );
}

/// [`latency`] for several stores (and the baseline binary, when given) at once: each trial
/// claims once on each, one right after the other, so they are measured under the same load.
/// Then the pooled claim's p50 against the direct and the folder ones (issue 28).
fn interleaved(stores: &[Store<'_>], n: usize, trials: usize) {
    let binaries = binaries();
    let benches: Vec<Bench> = stores.iter().map(|&store| Bench::new(store, n)).collect();
    let mut samples = vec![vec![Vec::with_capacity(trials); stores.len()]; binaries.len()];
    for i in 0..trials {
        for (b, binary) in binaries.iter().enumerate() {
            *MEASURED.write().unwrap() = (binary.0, binary.1.clone());
            // Each store in turn goes first, so none always follows the same other one.
            for k in 0..stores.len() {
                let s = (i + k) % stores.len();
                let (store, bench) = (stores[s], &benches[s]);
                bench.restore(store);
                let started = Instant::now();
                let code = bench.run(&["worker", "claim", &format!("w{}", i % 4), "--json"]);
                samples[b][s].push(started.elapsed());
                assert_eq!(code, Some(0), "claim failed");
            }
        }
    }
    for (b, binary) in binaries.iter().enumerate() {
        *MEASURED.write().unwrap() = (binary.0, binary.1.clone());
        let mut p50 = Vec::new();
        for (s, store) in stores.iter().enumerate() {
            let taken = &mut samples[b][s];
            taken.sort();
            p50.push(percentile(taken, 0.50));
            println!(
                "{:>8} `worker claim` at {n:>6} tasks: p50 {}  p99 {}  ({trials} processes, interleaved)",
                store.label(),
                ms(percentile(taken, 0.50), 2),
                ms(percentile(taken, 0.99), 2)
            );
        }
        if let [folder, direct, pooled] = p50[..] {
            println!(
                "{:>8} p50 through PgBouncer: {:.2} x direct, {:.2} x folder",
                binary.0,
                pooled.as_secs_f64() / direct.as_secs_f64(),
                pooled.as_secs_f64() / folder.as_secs_f64()
            );
        }
    }
    *MEASURED.write().unwrap() = ("", String::new());
}

/// `workers` threads, each running one claiming process after another until none is ready.
fn throughput(store: Store<'_>, tasks: usize, workers: usize) -> f64 {
    let bench = Bench::new(store, tasks);
    let started = Instant::now();
    let claimed: usize = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let bench = &bench;
                s.spawn(move || {
                    let agent = format!("w{w}");
                    let mut n = 0;
                    while bench.run(&["worker", "claim", &agent]) == Some(0) {
                        n += 1;
                    }
                    n
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    });
    assert_eq!(claimed, tasks, "every task claimed once");
    let rate = claimed as f64 / started.elapsed().as_secs_f64();
    println!(
        "{:>8} {workers} worker processes, {tasks} tasks: {rate:.0} claims/s",
        store.label(),
    );
    rate
}

/// Lets the disk settle before a drain: the server's dirty pages written out (a checkpoint)
/// and every file's flushed, so that neither store's drain pays for the writes of the one
/// before it (one disk, one journal: each `fdatasync` waits for what else is being written).
fn settle(server: &PgServer) {
    server.admin_sql("CHECKPOINT");
    assert!(Command::new("sync").status().unwrap().success());
}

/// The lead's side of `bench`'s project, opened through the library (its own connection).
fn lead(store: Store<'_>, bench: &Bench) -> baton_api::OpenProject {
    let url = match store {
        Store::Postgres(server) => Some(server.url().to_string()),
        Store::Pooled(_, bouncer) => Some(bouncer.url()),
        Store::Folder => None,
    };
    let choice = baton_api::Choice {
        dir: Some(bench.dir.path()),
        store: url.as_deref(),
        project: Some(&bench.project),
        password: None,
    };
    baton_api::OpenProject::open(
        &choice,
        bench.dir.path(),
        std::time::Duration::from_secs(900),
    )
    .unwrap()
}

/// Starts `args` (a waiting command) and returns it once it says it is waiting.
fn armed(bench: &Bench, args: &[&str]) -> std::process::Child {
    use std::io::{BufRead, BufReader};
    let mut waiter = bench
        .command(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(waiter.stderr.take().unwrap());
    let mut line = String::new();
    while !line.contains("waiting") {
        line.clear();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "the waiter ended");
    }
    waiter
}

/// Reads the waiter's first output line, which marks the moment it knew; the time since
/// `started`. The rest of its output is read after the timing and returned.
fn answered(mut waiter: std::process::Child, started: Instant) -> (std::time::Duration, String) {
    use std::io::{BufRead, BufReader};
    let mut stdout = BufReader::new(waiter.stdout.take().unwrap());
    let mut answer = String::new();
    stdout.read_line(&mut answer).unwrap();
    let elapsed = started.elapsed();
    std::io::Read::read_to_string(&mut stdout, &mut answer).unwrap();
    waiter.wait().unwrap();
    (elapsed, answer)
}

/// `worker claim` processes at 1,000 tasks on a project with 200 reservations in force (other
/// agents' paths, none overlapping the tasks' files: every claim checks them and passes) and
/// on one with none, trial by trial alternately, in one run.
fn reservation_cost(store: Store<'_>, trials: usize) {
    let plain = Bench::new(store, 1000);
    let reserved = Bench::new(store, 1000);
    let lead = lead(store, &reserved);
    for k in 0..200 {
        lead.tasks
            .reserve(baton_core::NewReservation {
                agent: format!("holder-{k}"),
                paths: vec![format!("lib/module_{k}/")],
                ..Default::default()
            })
            .unwrap();
    }
    let mut samples = [Vec::with_capacity(trials), Vec::with_capacity(trials)];
    for i in 0..trials {
        for (which, bench) in [&plain, &reserved].into_iter().enumerate() {
            bench.restore(store);
            let started = Instant::now();
            let code = bench.run(&["worker", "claim", &format!("w{}", i % 4), "--json"]);
            samples[which].push(started.elapsed());
            assert_eq!(code, Some(0), "claim failed");
        }
    }
    let [mut none, mut some] = samples;
    none.sort();
    some.sort();
    let (p_none, p_some) = (percentile(&none, 0.50), percentile(&some, 0.50));
    println!(
        "{:>8} `worker claim` at 1000 tasks: p50 {} with no reservations, {} with 200 ({:+.1} %)  ({trials} each, alternating)",
        store.label(),
        ms(p_none, 2),
        ms(p_some, 2),
        (p_some.as_secs_f64() / p_none.as_secs_f64() - 1.0) * 100.0
    );
}

/// What Claude Code's tool-use hook costs a worker per tool call: a `claude-hook tool-use`
/// process (the hook's JSON on stdin, the agent holding a task at 1,000 tasks) against the
/// `worker heartbeat` process an agent would run by hand, alternately, in one run. The keeper
/// the hook starts runs already (as it does after the session's first hook).
fn hook_cost(store: Store<'_>, trials: usize) {
    use std::io::Write;
    let bench = Bench::new(store, 1000);
    assert_eq!(bench.run(&["worker", "claim", "cc1"]), Some(0));
    let keeper = bench
        .command(&[
            "worker",
            "keepalive",
            "cc1",
            "--while-pid",
            &std::process::id().to_string(),
        ])
        .spawn()
        .unwrap();
    let mut samples = [Vec::with_capacity(trials), Vec::with_capacity(trials)];
    for _ in 0..trials {
        let started = Instant::now();
        let mut hook = bench
            .command(&["claude-hook", "tool-use"])
            .env("BATON_AGENT", "cc1")
            .stdin(Stdio::piped())
            .spawn()
            .unwrap();
        let input = br#"{"hook_event_name":"PostToolUse","tool_name":"Bash","session_id":"s"}"#;
        hook.stdin.take().unwrap().write_all(input).unwrap();
        assert!(hook.wait().unwrap().success());
        samples[0].push(started.elapsed());
        let started = Instant::now();
        assert_eq!(bench.run(&["worker", "heartbeat", "cc1"]), Some(0));
        samples[1].push(started.elapsed());
    }
    let mut keeper = keeper;
    let _ = keeper.kill();
    let _ = keeper.wait();
    let [mut hook, mut beat] = samples;
    hook.sort();
    beat.sort();
    println!(
        "{:>8} `claude-hook tool-use` p50 {} p99 {}; `worker heartbeat` p50 {} p99 {}  ({trials} each, alternating, 1000 tasks)",
        store.label(),
        ms(percentile(&hook, 0.50), 2),
        ms(percentile(&hook, 0.99), 2),
        ms(percentile(&beat, 0.50), 2),
        ms(percentile(&beat, 0.99), 2)
    );
}

/// A signal written (through the library, on its own connection) to a `signal wait` process
/// on another "machine" of the same project, printing that it was signalled.
fn signal_wake(store: Store<'_>, trials: usize) {
    use baton_core::{ForeignFile, SignalTarget};
    let bench = Bench::new(store, 0);
    let writer = lead(store, &bench);
    let run = writer.signals.resolve_run(None).unwrap();
    let mut samples = Vec::with_capacity(trials);
    for i in 0..trials {
        let name = format!("ui-test-done-{i}");
        let waiter = armed(
            &bench,
            &["signal", "wait", &name, "--timeout", "60s", "--json"],
        );
        let started = Instant::now();
        let target = SignalTarget::named(run, &name).unwrap();
        writer
            .signals
            .write_signal(&target, Some("ui-tester"), None, ForeignFile::Keep)
            .unwrap();
        let (elapsed, answer) = answered(waiter, started);
        samples.push(elapsed);
        assert!(answer.contains("signalled"), "{answer}");
    }
    samples.sort();
    println!(
        "{:>8} signal written -> a waiting `signal wait` process answers: p50 {}  p99 {}  ({trials} trials)",
        store.label(),
        ms(percentile(&samples, 0.50), 2),
        ms(percentile(&samples, 0.99), 2)
    );
}

/// A task added (through the library, on its own connection) to a `worker claim --wait`
/// process, on another "machine" of the same project, printing its claim.
fn wake_up(store: Store<'_>, trials: usize) {
    let bench = Bench::new(store, 0);
    let lead = lead(store, &bench);
    let mut samples = Vec::with_capacity(trials);
    for i in 0..trials {
        let agent = format!("w{i}");
        let waiter = armed(&bench, &["worker", "claim", &agent, "--wait", "--json"]);
        let started = Instant::now();
        lead.tasks
            .add_task(baton_core::NewTask {
                description: "wake up".into(),
                ..Default::default()
            })
            .unwrap();
        let (elapsed, claim) = answered(waiter, started);
        samples.push(elapsed);
        assert!(claim.contains("wake up"), "{claim}");
    }
    samples.sort();
    println!(
        "{:>8} add-task -> `worker claim --wait` process prints the claim: p50 {}  p99 {}  ({trials} trials)",
        store.label(),
        ms(percentile(&samples, 0.50), 2),
        ms(percentile(&samples, 0.99), 2)
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--list") {
        return; // `cargo test --benches` probes harness-less benches with --list
    }
    let server = PgServer::start();
    let bouncer = PgBouncer::start(&server, 4);
    let stores = [Store::Folder, Store::Postgres(&server)];
    let claiming = [
        Store::Folder,
        Store::Postgres(&server),
        Store::Pooled(&server, &bouncer),
    ];
    if !args.iter().any(|a| a == "--bench") {
        // Under `cargo test --all-targets`: a quick smoke run so the benchmark cannot rot.
        interleaved(&claiming, 20, 2);
        for store in claiming {
            latency(store, 20, 3);
            throughput(store, 20, 2);
            wake_up(store, 2);
            signal_wake(store, 2);
            reservation_cost(store, 2);
            hook_cost(store, 2);
        }
        return;
    }
    if std::env::var("BATON_BENCH_ONLY").is_ok_and(|only| only == "pooled") {
        // One claim of each store (and binary) after another, three times over, so the
        // machine's load and its drift fall on all alike.
        for _ in 0..3 {
            interleaved(&claiming, 100, 100);
        }
        // The drains too, folder and PgBouncer in turn, three times over (a drain takes
        // seconds, and the machine's pace moves between two of them): each round's folder
        // drain against the PgBouncer drain right after it.
        let [folder, direct, pooled] = claiming;
        for round in 1..=3 {
            for_each_binary(|| {
                settle(&server);
                let on_folder = throughput(folder, 3_000, 8);
                settle(&server);
                let through_pooler = throughput(pooled, 3_000, 8);
                println!(
                    "         round {round}: the folder drains at {:.2} x PgBouncer's rate",
                    on_folder / through_pooler
                );
            });
        }
        for_each_binary(|| {
            throughput(direct, 3_000, 8);
        });
        return;
    }
    // `BATON_BENCH_ONLY=reservations` (or `hooks`, `waits`, `claims`) runs that part alone.
    let only = std::env::var("BATON_BENCH_ONLY").unwrap_or_default();
    if only == "reservations" {
        for store in stores {
            for_each_binary(|| reservation_cost(store, 100));
        }
        return;
    }
    if only == "hooks" {
        for store in stores {
            for_each_binary(|| hook_cost(store, 100));
        }
        return;
    }
    if only == "claims" {
        for store in stores {
            for_each_binary(|| latency(store, 100, 200));
        }
        return;
    }
    if only == "waits" {
        for store in stores {
            for_each_binary(|| wake_up(store, 100));
            for_each_binary(|| signal_wake(store, 100));
        }
        return;
    }
    for store in stores {
        for_each_binary(|| latency(store, 100, 200));
    }
    for_each_binary(|| latency(Store::Postgres(&server), 100_000, 200));
    // A claim on the folder rewrites the whole file: 100,000 tasks are tens of megabytes.
    for_each_binary(|| latency(Store::Folder, 100_000, 10));
    for store in stores {
        for_each_binary(|| {
            settle(&server);
            throughput(store, 3_000, 8);
        });
    }
    for store in stores {
        for_each_binary(|| wake_up(store, 100));
    }
    for store in stores {
        for_each_binary(|| signal_wake(store, 100));
    }
    for store in stores {
        for_each_binary(|| reservation_cost(store, 100));
    }
    for store in stores {
        for_each_binary(|| hook_cost(store, 100));
    }
}
