//! The lead in the loop, whole CLI processes (run with `cargo bench --bench inbox`). A
//! throwaway PostgreSQL server is started for the run. Prints, on the folder and on
//! PostgreSQL with the lead and the agent on two "machines" (folders connected to one
//! project), over `BATON_BENCH_TRIALS` (100) trials:
//!
//! - asked → seen: from starting `baton ask` (the agent, machine B) to the first output of
//!   the lead's `baton inbox --wait` (machine A) that was already waiting;
//! - answered → returned: from starting `baton answer` (A) to the first output of the
//!   waiting `baton ask` (B), the answer;
//! - for scale, a bare `baton message send` process (start to exit): what any write costs;
//! - idle: CPU time of `BATON_BENCH_WAITERS` (100 on the folder; 40 on PostgreSQL, each
//!   holding two of the server's 100 connections) agents each waiting on a question, over
//!   `BATON_BENCH_IDLE_SECS` (30).
//!
//! Targets (issue 26): both latencies p99 ≤ 50 ms on both stores; the waiting agents use no
//! CPU to speak of.

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use baton_test_support::pg::PgServer;
use baton_test_support::stats::{ms, percentile};

#[path = "common/project.rs"]
mod project;
use project::{Project, Store, cpu_of};

fn report(what: &str, mut samples: Vec<Duration>) {
    samples.sort();
    println!(
        "{what}: p50 {}  p99 {}  max {}  ({} trials)",
        ms(percentile(&samples, 0.50), 2),
        ms(percentile(&samples, 0.99), 2),
        ms(*samples.last().unwrap(), 2),
        samples.len()
    );
}

fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A process waiting on the inbox, started and armed (it said so on stderr).
struct Waiter {
    child: Child,
    answered: std::sync::mpsc::Receiver<Instant>,
}

fn armed(p: &Project, args: &[&str], agent: Option<&str>) -> Waiter {
    let mut command = p.command(args);
    if let Some(agent) = agent {
        command.env("BATON_AGENT", agent);
    }
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    loop {
        line.clear();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "waiter exited");
        if line.contains("waiting") {
            break;
        }
    }
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let (tx, answered) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        if stdout.read_line(&mut line).unwrap_or(0) > 0 {
            let _ = tx.send(Instant::now());
        }
        std::io::copy(&mut stdout, &mut std::io::sink())
    });
    Waiter { child, answered }
}

impl Waiter {
    /// When it first printed; waits for it to end well.
    fn finish(mut self) -> Instant {
        assert!(self.child.wait().unwrap().success(), "waiter failed");
        self.answered.recv().expect("waiter printed nothing")
    }
}

/// Asked → seen and answered → returned, `trials` times: the lead on `lead`, the agent on
/// `agent` (the same folder, or another machine of one database project).
fn latencies(label: &str, lead: &Project, agent: &Project, trials: usize) {
    let mut seen = Vec::new();
    let mut returned = Vec::new();
    for i in 1..=trials {
        let inbox = armed(lead, &["inbox", "--wait", "--timeout", "60"], None);
        let asked_at = Instant::now();
        // The ask prints "waiting" once its question is recorded and its wait in place.
        let question = format!("Question {i}?");
        let ask = armed(agent, &["ask", &question, "--timeout", "60"], Some("cc1"));
        seen.push(inbox.finish() - asked_at);
        let answered_at = Instant::now();
        lead.ok(&["answer", &format!("q-{i}"), "yes"]);
        returned.push(ask.finish() - answered_at);
    }
    report(
        &format!("{label}: asked → seen by the lead's inbox --wait"),
        seen,
    );
    report(
        &format!("{label}: answered → the waiting ask returned"),
        returned,
    );
    let sends: Vec<Duration> = (0..trials)
        .map(|i| {
            let started = Instant::now();
            lead.ok(&["message", "send", "all", &format!("Note {i}"), "body"]);
            started.elapsed()
        })
        .collect();
    report(
        &format!("{label}: a bare `message send` (start to exit)"),
        sends,
    );
}

/// CPU time of `waiters` agents each waiting on a question, over `seconds`.
fn idle(label: &str, p: &Project, waiters: usize, seconds: u64) {
    let asking: Vec<Waiter> = (0..waiters)
        .map(|i| {
            let agent = format!("cc{i}");
            armed(p, &["ask", "Anyone?", "--timeout", "600"], Some(&agent))
        })
        .collect();
    let before: Duration = asking.iter().map(|w| cpu_of(w.child.id())).sum();
    std::thread::sleep(Duration::from_secs(seconds)); // the span measured, nothing awaited
    let after: Duration = asking.iter().map(|w| cpu_of(w.child.id())).sum();
    println!(
        "{label}: {waiters} agents waiting on a question for {seconds} s: {} of CPU in all",
        ms(after - before, 0)
    );
    for mut waiter in asking {
        let _ = waiter.child.kill();
        let _ = waiter.child.wait();
    }
}

fn main() {
    let trials = env_number("BATON_BENCH_TRIALS", 100);
    let seconds = env_number("BATON_BENCH_IDLE_SECS", 30) as u64;
    let folder = Project::new(Store::Folder);
    latencies("folder", &folder, &folder, trials);
    idle(
        "folder",
        &Project::new(Store::Folder),
        env_number("BATON_BENCH_WAITERS", 100),
        seconds,
    );

    let server = PgServer::start();
    let a = Project::new(Store::Postgres(&server));
    let b = a.another_machine();
    latencies("postgres, two machines", &a, &b, trials);
    idle(
        "postgres",
        &Project::new(Store::Postgres(&server)),
        env_number("BATON_BENCH_WAITERS", 40).min(40),
        seconds,
    );
}
