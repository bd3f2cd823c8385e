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

use std::time::{Duration, Instant};

use baton_test_support::pg::PgServer;
use baton_test_support::stats::{env_number, ms, report};

#[path = "common/project.rs"]
mod project;
use project::{Project, Store, cpu_of};
#[path = "common/waiter.rs"]
mod waiter;
use waiter::Waiter;

/// `baton ARGS` on `p` (as `agent`, when given), waiting and armed.
fn armed(p: &Project, args: &[&str], agent: Option<&str>) -> Waiter {
    let mut command = p.command(args);
    if let Some(agent) = agent {
        command.env("BATON_AGENT", agent);
    }
    waiter::armed(command)
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
        seen.push(inbox.finish().0 - asked_at);
        let answered_at = Instant::now();
        lead.ok(&["answer", &format!("q-{i}"), "yes"]);
        returned.push(ask.finish().0 - answered_at);
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
