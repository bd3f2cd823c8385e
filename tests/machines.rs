//! Everything besides the tasks, across machines that share only a PostgreSQL server: a
//! diagnostics agent on one machine waits for the signal a UI-test agent writes on another; a
//! writer killed on its machine releases the waiter on the other within its lease; `baton
//! watch` on one machine reports what another changed, and misses nothing across a restart of
//! the server. Machines are simulated as in `tests/stores.rs` (own `HOME` and working folder,
//! own process group, TCP only).

use baton_test_support as support;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::Background;
use support::machine::Machine;
use support::mcp::RawClient;
use support::pg::PgServer;

/// Two machines on one new project of `server`: A made it, B connected.
fn two_machines(server: &PgServer, name: &str) -> (Machine, Machine) {
    let a = Machine::new("a").with_env("PGPASSWORD", &server.password());
    let b = Machine::new("b").with_env("PGPASSWORD", &server.password());
    let url = server.url_without_password();
    let project = format!("{name}-{}", std::process::id());
    a.ok(&[
        "leader",
        "init",
        "Ship it",
        "--store",
        &url,
        "--project",
        &project,
    ]);
    b.ok(&["connect", &url, "--project", &project]);
    (a, b)
}

fn spawn(machine: &Machine, args: &[&str]) -> Background {
    Background::from_command(machine.command(args))
}

#[test]
fn a_diagnostics_agent_on_one_machine_wakes_when_a_ui_test_agent_on_another_signals() {
    let server = PgServer::shared();
    let (a, b) = two_machines(&server, "signals");
    a.ok(&["run", "new", "--note", "sprint 1"]);
    let mut diagnostics = spawn(
        &b,
        &[
            "signal",
            "wait",
            "ui-test-done",
            "--timeout",
            "60s",
            "--json",
        ],
    );
    let armed = diagnostics.wait_stderr("waiting for ui-test-done (run 1)");
    assert!(armed.contains("the store's notifications"), "{armed}");
    a.ok(&[
        "signal",
        "write",
        "ui-test-done",
        "--agent",
        "ui-tester",
        "--note",
        "12 passed",
    ]);
    let (code, stdout, _) = diagnostics.finish();
    assert_eq!(code, Some(0), "{stdout}");
    let outcome: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(outcome["outcome"], "signalled");
    assert_eq!(outcome["signals"][0]["writer"], "ui-tester");
    assert_eq!(outcome["signals"][0]["note"], "12 passed");
    // Nothing of it is a file on either machine.
    for m in [&a, &b] {
        assert!(!m.coordination().join("runs").exists());
    }
    // A new run on B: A's next wait is for the new run, and the old signal does not end it.
    b.ok(&["run", "new"]);
    a.fails(&["signal", "wait", "ui-test-done", "--timeout", "200ms"], 5);
}

#[test]
fn a_writer_killed_on_its_machine_releases_the_waiter_on_another_within_its_lease() {
    let server = PgServer::shared();
    let (a, b) = two_machines(&server, "writer-gone");
    // The UI-test agent on A works on a task; its worker loop keeps its heartbeat fresh.
    a.ok(&["leader", "add-task", "Run the UI tests"]);
    let mut writer = spawn(
        &a,
        &[
            "--lease",
            "2s",
            "worker",
            "loop",
            "ui-tester",
            "--exec",
            "sleep 600",
        ],
    );
    writer.wait_stderr("task-1");
    let mut waiter = spawn(
        &b,
        &[
            "--lease",
            "2s",
            "signal",
            "wait",
            "ui-test-done",
            "--while-agent",
            "ui-tester",
            "--timeout",
            "5m",
            "--json",
        ],
    );
    waiter.wait_stderr("waiting for");
    // Alive for longer than a lease: its heartbeats keep the waiter waiting.
    assert!(
        waiter.quiet_for(Duration::from_secs(3)),
        "the waiter gave up on a live writer: {:?}",
        waiter.stdout_seen
    );
    // Killed, loop and command (its process group), as a crashed machine would leave it.
    let killed = std::process::Command::new("kill")
        .args(["-s", "KILL", "--", &format!("-{}", writer.pid())])
        .status()
        .unwrap();
    assert!(killed.success());
    let killed_at = Instant::now();
    let (code, stdout, _) = waiter.finish();
    assert_eq!(code, Some(6), "{stdout}");
    let outcome: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(outcome["outcome"], "writer_gone");
    assert!(
        outcome["writer"].as_str().unwrap().contains("ui-tester"),
        "{outcome}"
    );
    // Within its lease (2 s) of the last heartbeat, with room for a loaded machine.
    assert!(killed_at.elapsed() < Duration::from_secs(10));
}

#[test]
fn two_mcp_servers_on_two_machines_record_handoffs_at_once_and_the_chain_holds_both() {
    const EACH: usize = 15;
    let server = PgServer::shared();
    let (a, b) = two_machines(&server, "handoffs");
    // A's MCP server serves the QA agent, B's the security reviewer.
    let record = |machine: Machine, who: &'static str, agent: &'static str| {
        std::thread::spawn(move || {
            let mut mcp = RawClient::start(machine.command(&["mcp", "--quiet"]));
            for i in 1..=EACH {
                let answer = mcp.call(
                    "track_handoff",
                    json!({"from_agent": agent, "to_agent": "orchestrator",
                           "context": {"summary": format!("{who} handoff {i}")}}),
                );
                assert_ne!(answer["result"]["isError"], true, "{answer}");
            }
            mcp.close();
            machine
        })
    };
    let (a, b) = (record(a, "a", "qa"), record(b, "b", "security"));
    let (a, b) = (a.join().unwrap(), b.join().unwrap());
    // Either machine reads the whole chain, in the order the database committed it.
    let graph = b.json(&["handoff", "graph"]);
    let summaries: Vec<&str> = graph["edges"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["handoff"]["summary"].as_str())
        .collect();
    assert_eq!(summaries.len(), 2 * EACH, "{graph}");
    let export = tempfile::tempdir().unwrap();
    a.ok(&["store", "export", "--to", export.path().to_str().unwrap()]);
    let state: Value = serde_json::from_slice(
        &std::fs::read(export.path().join(".coordination/orchestration/state.json")).unwrap(),
    )
    .unwrap();
    let handoffs: Vec<&str> = state["handoffs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["summary"].as_str().unwrap())
        .collect();
    for who in ["a", "b"] {
        let mine: Vec<&str> = handoffs
            .iter()
            .copied()
            .filter(|s| s.starts_with(&format!("{who} ")))
            .collect();
        let expected: Vec<String> = (1..=EACH).map(|i| format!("{who} handoff {i}")).collect();
        assert_eq!(
            mine, expected,
            "each machine's handoffs, all there, in its order"
        );
    }
}

/// The next `baton watch --json` line whose event is `event`, parsed.
fn next_event(watch: &mut Background, event: &str) -> Value {
    let line = watch.wait_stdout(&format!("\"event\":\"{event}\""));
    serde_json::from_str(&line).unwrap()
}

#[test]
fn watch_on_one_machine_reports_another_s_changes_and_misses_none_across_a_server_restart() {
    let server = PgServer::start();
    let (a, b) = two_machines(&server, "feed");
    let mut watch = spawn(&a, &["watch", "--json"]);
    let armed = watch.wait_stderr("watching");
    assert!(armed.contains("in PostgreSQL"), "{armed}");
    b.ok(&["leader", "add-task", "Before the restart", "--id", "before"]);
    let added = next_event(&mut watch, "tasks_changed");
    assert_eq!(added["changes"][0]["id"], "before");

    // The server goes away and comes back; B changes the project before A's feed has
    // listened again: the feed reads the project again once back, and reports the change.
    server.restart();
    b.ok(&[
        "leader",
        "add-task",
        "During the reconnect",
        "--id",
        "after",
    ]);
    let added = next_event(&mut watch, "tasks_changed");
    assert_eq!(added["changes"][0]["id"], "after", "{added}");
    b.ok(&["worker", "claim", "b1", "--task", "after"]);
    let claimed = next_event(&mut watch, "tasks_changed");
    assert_eq!(claimed["changes"][0]["to"], "claimed");
    assert_eq!(claimed["changes"][0]["by"], "b1");
}
