//! The supervised team, whole CLI processes (run with `cargo bench --bench team`). A throwaway
//! PostgreSQL server is started for the run. Prints, in one run:
//!
//! - pickup: from starting `baton leader add-task` to the agent process of a waiting
//!   `team up --stay` worker starting on it (the agent writes the time it started), p50/p99,
//!   against a waiting `worker loop --stay` running the same command;
//! - idle: CPU time of a team of 8 waiting workers over `BATON_BENCH_IDLE_SECS` (60), against
//!   8 waiting `worker loop`s;
//! - ingestion: an agent printing a little over 10,000 lines a second for about 6 s, into the
//!   folder and into PostgreSQL: the events stored per second, and `worker claim` (a process)
//!   p50 meanwhile against the same claims with no team; then the rate for an agent printing
//!   60,000 lines as fast as it can;
//! - scale: `BATON_BENCH_WORKERS` (100) exec workers drain `BATON_BENCH_TASKS` (5,000) tasks
//!   on the folder, and two teams of that many on PostgreSQL ("two machines"), each task once,
//!   wall time against the same number of `worker loop` processes;
//! - sandboxed pickup: pickup with every attempt in a sandbox (the default) against the same
//!   team with `--no-sandbox`, what bubblewrap adds to an attempt's start. The scale figures
//!   run the team with `--no-sandbox`, as the worker loops they are compared with run;
//! - download: `BATON_BENCH_DOWNLOAD_MB` (1,024) from a server on loopback by `curl` on the
//!   machine, against the same `curl` in a sandboxed attempt through its proxy (plain HTTP,
//!   and a CONNECT tunnel).
//!
//! Targets (issue 25): pickup p50 within 20 ms of the worker loop's; an idle team uses no CPU
//! to speak of; ingestion ≥ 10,000 events/s with claims within 10 % of their no-team p50.
//! Issue 43: a sandboxed attempt starts at most 15 ms later at p50.

use std::path::Path;
use std::process::{Child, Command};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use baton_test_support::pg::PgServer;

#[path = "common/project.rs"]
mod project;
#[path = "common/run.rs"]
mod run;
#[path = "common/tasks.rs"]
mod tasks;
use baton_test_support::stats::{ms, percentile, report};
use project::{Project, Store, cpu_of};
use run::BenchRun;

impl Project {
    fn add_tasks(&self, n: usize) {
        match &self.store {
            Some((url, name)) => baton_test_support::pg::insert_tasks(url, name, n),
            None => std::fs::write(
                self.path().join(".coordination/tasks.json"),
                tasks::folder_tasks(n),
            )
            .unwrap(),
        }
    }
}

fn now_ns() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

/// `a` against `b` in words: "1.20 ms above" or "0.30 ms below".
fn signed(a: Duration, b: Duration) -> String {
    match a >= b {
        true => format!("{} above", ms(a - b, 2)),
        false => format!("{} below", ms(b - a, 2)),
    }
}

/// Waits for `path` to exist (the agent wrote it), up to 30 s.
fn wait_file(path: &Path) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(text) = std::fs::read_to_string(path)
            && text.ends_with('\n')
        {
            return text;
        }
        assert!(Instant::now() < deadline, "{} never came", path.display());
        std::thread::sleep(Duration::from_micros(200));
    }
}

fn stop(mut child: Child) {
    let _ = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    let deadline = Instant::now() + Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// Ready → agent started, for a waiting runner started by `args` (its command is appended).
fn pickup(label: &str, args: &[&str], trials: usize) -> Duration {
    let p = Project::new(Store::Folder);
    let command = "date +%s%N > \"started-$BATON_TASK_ID\"";
    let mut full: Vec<&str> = args.to_vec();
    full.push(command);
    let runner = p.spawn(&full);
    std::thread::sleep(Duration::from_millis(500)); // let it arm its wait
    let mut samples = Vec::new();
    for i in 1..=trials {
        let before = now_ns();
        p.ok(&["leader", "add-task", &format!("Task {i}")]);
        let started: u128 = wait_file(&p.path().join(format!("started-task-{i}")))
            .trim()
            .parse()
            .unwrap();
        samples.push(Duration::from_nanos(started.saturating_sub(before) as u64));
    }
    stop(runner);
    report(label, samples)
}

/// An HTTP server on loopback that answers every request with `bytes` bytes; its port.
fn large_file_server(bytes: u64) -> u16 {
    use std::io::{BufRead, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut reader = std::io::BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
                    line.clear();
                }
                let mut stream = stream;
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {bytes}\r\nConnection: close\r\n\r\n"
                );
                let _ = stream.write_all(head.as_bytes());
                let chunk = vec![7u8; 1 << 20];
                let mut left = bytes;
                while left > 0 {
                    let n = left.min(chunk.len() as u64) as usize;
                    if stream.write_all(&chunk[..n]).is_err() {
                        return;
                    }
                    left -= n as u64;
                }
            });
        }
    });
    port
}

/// `curl`'s time for the download of `url`, from the curl command's `-w '%{time_total}'`.
fn curl_seconds(output: &str) -> Duration {
    Duration::from_secs_f64(
        output
            .trim()
            .parse::<f64>()
            .unwrap_or_else(|_| panic!("{output}")),
    )
}

/// A large download (`megabytes`) from a server on the machine's loopback: by `curl` directly,
/// and by `curl` in a sandboxed attempt through its proxy (plain HTTP through `HTTP_PROXY`,
/// and a tunnel through CONNECT); `trials` of each, the medians.
fn download(megabytes: u64, trials: usize) {
    let port = large_file_server(megabytes << 20);
    let url = format!("http://127.0.0.1:{port}/large");
    let curl = |extra: &str| {
        format!(
            "curl -sf -o /dev/null -w '%{{time_total}}' {extra} {url} > \"took-$BATON_TASK_ID.tmp\" && mv \"took-$BATON_TASK_ID.tmp\" \"took-$BATON_TASK_ID\""
        )
    };
    let direct: Vec<Duration> = (0..trials)
        .map(|_| {
            let out = Command::new("curl")
                .args([
                    "-sf",
                    "-o",
                    "/dev/null",
                    "-w",
                    "%{time_total}",
                    "--noproxy",
                    "*",
                    &url,
                ])
                .output()
                .unwrap();
            assert!(out.status.success(), "{out:?}");
            curl_seconds(&String::from_utf8_lossy(&out.stdout))
        })
        .collect();
    let sandboxed = |label: &str, extra: &str| {
        let p = Project::new(Store::Folder);
        std::fs::create_dir_all(p.path().join(".coordination/team")).unwrap();
        std::fs::write(
            p.path().join(".coordination/team/profiles.toml"),
            format!("[profiles.exec.sandbox]\nallow = [\"127.0.0.1:{port}\"]\n"),
        )
        .unwrap();
        let command = curl(extra);
        let runner = p.spawn(&["team", "up", "--stay", "--no-worktree", "--exec", &command]);
        let samples: Vec<Duration> = (1..=trials)
            .map(|i| {
                p.ok(&["leader", "add-task", &format!("Download {i}")]);
                let path = p.path().join(format!("took-task-{i}"));
                let deadline = Instant::now() + Duration::from_secs(300);
                loop {
                    if let Ok(text) = std::fs::read_to_string(&path) {
                        break curl_seconds(&text);
                    }
                    assert!(Instant::now() < deadline, "{label}: no download");
                    std::thread::sleep(Duration::from_millis(20));
                }
            })
            .collect();
        stop(runner);
        samples
    };
    let through = sandboxed("proxy", "--noproxy '' -x http://127.0.0.1:3128");
    let tunnel = sandboxed("tunnel", "--noproxy '' -p -x http://127.0.0.1:3128");
    let forwarded = sandboxed("forwarded", "");
    let rate = |d: Duration| megabytes as f64 / d.as_secs_f64();
    for (label, samples) in [
        ("direct, on the machine", direct),
        ("sandboxed, through the proxy (HTTP_PROXY)", through),
        ("sandboxed, through the proxy (CONNECT tunnel)", tunnel),
        (
            "sandboxed, its loopback address forwarded to the machine's",
            forwarded,
        ),
    ] {
        let mut samples = samples;
        samples.sort();
        let p50 = percentile(&samples, 0.50);
        println!(
            "download {megabytes} MB {label}: p50 {}  ({:.0} MB/s, {} trials)",
            ms(p50, 1),
            rate(p50),
            samples.len()
        );
    }
}

fn idle(seconds: u64) {
    let p = Project::new(Store::Folder);
    let team = p.spawn(&[
        "team",
        "up",
        "--workers",
        "8",
        "--stay",
        "--no-worktree",
        "--exec",
        "true",
    ]);
    let loops: Vec<Child> = (1..=8)
        .map(|i| {
            p.spawn(&[
                "worker",
                "loop",
                &format!("w{i}"),
                "--stay",
                "--exec",
                "true",
            ])
        })
        .collect();
    std::thread::sleep(Duration::from_secs(2));
    let team_before = cpu_of(team.id());
    let loops_before: Duration = loops.iter().map(|c| cpu_of(c.id())).sum();
    std::thread::sleep(Duration::from_secs(seconds));
    let team_cpu = cpu_of(team.id()) - team_before;
    let loops_cpu = loops.iter().map(|c| cpu_of(c.id())).sum::<Duration>() - loops_before;
    println!(
        "idle over {seconds} s: a team of 8 waiting workers used {} of CPU; 8 waiting worker loops {}",
        ms(team_cpu, 0),
        ms(loops_cpu, 0)
    );
    stop(team);
    for l in loops {
        stop(l);
    }
}

/// `worker claim` process latencies on `p` (each claim released again), `n` trials.
fn claims(p: &Project, n: usize) -> Vec<Duration> {
    (0..n)
        .map(|_| {
            let start = Instant::now();
            p.ok(&["worker", "claim", "bench"]);
            let took = start.elapsed();
            p.ok(&["worker", "release", "bench", "task-2"]);
            took
        })
        .collect()
}

/// A project whose task-1 (first by priority) a team floods with `command`'s output, and whose
/// task-2's file is reserved for the claimer, so the team passes it over and only the claims
/// measured take it (and give it back).
fn flooded_project(store: Store<'_>) -> Project {
    let p = Project::new(store);
    p.add_tasks(2);
    p.ok(&["leader", "edit", "task-1", "--priority", "1"]);
    p.ok(&["reserve", "src/part_2.rs", "--agent", "bench"]);
    p
}

fn transcript_head(p: &Project, after: usize) -> serde_json::Value {
    let out = p.output(&[
        "--json",
        "team",
        "logs",
        "task-1",
        "--limit",
        "1",
        "--after",
        &after.to_string(),
    ]);
    serde_json::from_slice(&out.stdout).unwrap_or_default()
}

/// Runs a team whose agent prints `lines` lines with `command`, measuring `claims` of
/// task-2 while it runs (none: no claims); returns the events stored per second, and the
/// claims' p50.
fn flood(
    store: Store<'_>,
    label: &str,
    command: &str,
    lines: usize,
    trials: usize,
) -> (f64, Option<Duration>) {
    let p = flooded_project(store);
    let team = p.spawn(&[
        "team",
        "up",
        "--no-worktree",
        "--exec",
        command,
        "--max-attempts",
        "1",
    ]);
    let deadline = Instant::now() + Duration::from_secs(30);
    while transcript_head(&p, 0)["events"][0].is_null() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let during = (trials > 0).then(|| {
        report(
            &format!("{label}: worker claim, during it"),
            claims(&p, trials),
        )
    });
    // The attempt ends; the team then waits (task-2's file is held), so it is stopped.
    let deadline = Instant::now() + Duration::from_secs(300);
    while transcript_head(&p, 0)["attempt"]["end"] == "running" && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    stop(team);
    let (first, last) = (transcript_head(&p, 0), transcript_head(&p, lines + 1));
    let at = |v: &serde_json::Value| {
        baton_core::Timestamp::parse(v["events"][0]["at"].as_str().unwrap()).unwrap()
    };
    let events = last["attempt"]["events"].as_u64().unwrap_or(0);
    let span = (at(&last).0 - at(&first).0).to_std().unwrap_or_default();
    let rate = events as f64 / span.as_secs_f64();
    println!(
        "{label}: {events} events stored in {} ({rate:.0} events/s)",
        ms(span, 0)
    );
    (rate, during)
}

fn ingestion(store: Store<'_>, label: &str, lines: usize, trials: usize) {
    // No team: the claim figure to compare with.
    let quiet = flooded_project(store);
    quiet.ok(&["worker", "claim", "holder"]);
    let base = report(
        &format!("{label}: worker claim, no team"),
        claims(&quiet, trials),
    );
    // Sustained: 600 lines every 50 ms (a little over 10,000 a second).
    let rounds = lines.div_ceil(600);
    let sustained = format!("for i in $(seq 1 {rounds}); do seq 1 600; sleep 0.05; done");
    let (rate, during) = flood(
        store,
        &format!("{label}, sustained"),
        &sustained,
        rounds * 600,
        trials,
    );
    let during = during.unwrap();
    println!(
        "{label}: sustained {rate:.0} events/s; claims during it p50 {} against {} with no team ({:+.1} %)",
        ms(during, 2),
        ms(base, 2),
        (during.as_secs_f64() / base.as_secs_f64() - 1.0) * 100.0
    );
    // As fast as the agent prints.
    flood(
        store,
        &format!("{label}, unthrottled"),
        &format!("seq 1 {lines}"),
        lines,
        0,
    );
}

fn scale(store: Store<'_>, label: &str, workers: usize, tasks: usize, teams: usize) {
    for runner in ["team", "worker loops"] {
        let p = Project::new(store);
        p.add_tasks(tasks);
        // Each team on a "machine" of its own: a folder connected to the same project.
        let machines: Vec<Project> = (1..teams).map(|_| p.another_machine()).collect();
        // The server's connections, sampled while the run lasts (PostgreSQL only).
        let sampling = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
        let peak_connections = match store {
            Store::Postgres(server) => {
                let (server, sampling) = (server.admin_url().to_string(), sampling.clone());
                Some(std::thread::spawn(move || {
                    let mut peak = 0usize;
                    while sampling.load(std::sync::atomic::Ordering::Relaxed) {
                        let now: usize = baton_test_support::pg::psql(
                            &server,
                            "SELECT count(*) FROM pg_stat_activity WHERE usename = 'baton'",
                        )
                        .trim()
                        .parse()
                        .unwrap_or(0);
                        peak = peak.max(now);
                        std::thread::sleep(Duration::from_millis(200));
                    }
                    peak
                }))
            }
            Store::Folder => None,
        };
        let start = Instant::now();
        let children: Vec<Child> = match runner {
            "team" => (0..teams)
                .map(|t| {
                    let on = if t == 0 { &p } else { &machines[t - 1] };
                    let mut c = on.command(&[
                        "team",
                        "up",
                        "--workers",
                        &workers.to_string(),
                        "--no-worktree",
                        // Against unsandboxed worker loops: the sandbox's cost per attempt is
                        // the pickup figures'.
                        "--no-sandbox",
                        "--prefix",
                        &format!("m{t}-"),
                        "--exec",
                        "true",
                    ]);
                    c.env("BATON_HOST", format!("machine{t}"));
                    let log = std::fs::File::create(p.path().join(format!("team{t}.log"))).unwrap();
                    c.stdout(log.try_clone().unwrap());
                    c.stderr(log);
                    c.spawn().unwrap()
                })
                .collect(),
            _ => (0..workers * teams)
                .map(|i| {
                    p.spawn(&[
                        "worker",
                        "loop",
                        &format!("w{i}"),
                        "--quiet",
                        "--exec",
                        "true",
                    ])
                })
                .collect(),
        };
        for mut child in children {
            let status = child.wait().unwrap();
            if !status.success() {
                let logs: String = (0..teams)
                    .filter_map(|t| {
                        std::fs::read_to_string(p.path().join(format!("team{t}.log"))).ok()
                    })
                    .flat_map(|l| {
                        l.lines()
                            .filter(|l| l.contains("error") || l.contains("baton:"))
                            .map(str::to_string)
                            .collect::<Vec<_>>()
                    })
                    .take(20)
                    .collect::<Vec<_>>()
                    .join("\n");
                panic!("{runner}: {status}\n{logs}");
            }
        }
        let took = start.elapsed();
        let peak = peak_connections.map(|sampler| {
            sampling.store(false, std::sync::atomic::Ordering::Relaxed);
            sampler.join().unwrap()
        });
        let out = p.output(&["--json", "leader", "status"]);
        let board: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let done = board["counts"]["done"].as_u64().unwrap();
        let twice = board["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["attempts"].as_u64().unwrap_or(0) != 1)
            .count();
        let peak = peak.map_or(String::new(), |n| {
            format!("; server connections at peak: {n}")
        });
        println!(
            "{label}: {} × {workers} {runner} drained {tasks} tasks in {:.1} s: {done} done, {twice} claimed other than once{peak}",
            teams,
            took.as_secs_f64()
        );
    }
}

fn main() {
    // Under `cargo test --all-targets`: a quick smoke run so the benchmark cannot rot.
    let Some(bench) = BenchRun::from_args() else {
        return;
    };
    let size = |name: &str, full: usize, smoke: usize| bench.size(name, full, smoke);
    // BATON_BENCH_ONLY=pickup,download,idle,ingestion,scale-folder,scale-postgres runs only those.
    let wanted = |part: &str| bench.wanted(part);
    let server = PgServer::start();
    let trials = size("BATON_BENCH_TRIALS", 40, 3);
    if wanted("pickup") {
        println!("== pickup: task ready → agent started (folder) ==");
        let team = pickup(
            "team up --stay --no-sandbox (exec)",
            &[
                "team",
                "up",
                "--stay",
                "--no-worktree",
                "--no-sandbox",
                "--exec",
            ],
            trials,
        );
        let lp = pickup(
            "worker loop --stay (exec)",
            &["worker", "loop", "w1", "--stay", "--quiet", "--exec"],
            trials,
        );
        println!(
            "pickup: the team's p50 is {} the worker loop's",
            if team >= lp {
                format!("{} above", ms(team - lp, 2))
            } else {
                format!("{} below", ms(lp - team, 2))
            }
        );
        // The same team as it runs by default, every attempt in a sandbox (bubblewrap): what
        // the sandbox adds to an attempt's start (target: at most 15 ms at p50).
        let sandboxed = pickup(
            "team up --stay (exec, sandboxed)",
            &["team", "up", "--stay", "--no-worktree", "--exec"],
            trials,
        );
        println!(
            "pickup: in a sandbox, the team's p50 is {} its p50 without one, {} the worker loop's",
            signed(sandboxed, team),
            signed(sandboxed, lp)
        );
    }
    if wanted("download") {
        println!("== a large download, direct and through a sandbox's proxy ==");
        download(
            size("BATON_BENCH_DOWNLOAD_MB", 1024, 8) as u64,
            trials.min(5),
        );
    }
    if wanted("idle") {
        println!("== idle ==");
        idle(size("BATON_BENCH_IDLE_SECS", 60, 1) as u64);
    }
    if wanted("ingestion") {
        println!("== transcript ingestion ==");
        let lines = size("BATON_BENCH_LINES", 60_000, 1_200);
        ingestion(Store::Folder, "folder", lines, trials);
        ingestion(Store::Postgres(&server), "postgres", lines, trials);
    }
    let workers = size("BATON_BENCH_WORKERS", 100, 3);
    let tasks = size("BATON_BENCH_TASKS", 5000, 30);
    if wanted("scale-folder") {
        println!("== scale (folder) ==");
        scale(Store::Folder, "folder", workers, tasks, 1);
    }
    if wanted("scale-postgres") {
        println!("== scale (postgres, two machines) ==");
        // Room for the comparison: each `worker loop` process holds two connections (its
        // store and its listener), 2 × 100 of them more than the default 100.
        let roomy = PgServer::start_allowing(500);
        scale(Store::Postgres(&roomy), "postgres", workers, tasks, 2);
    }
}
