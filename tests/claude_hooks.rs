//! `baton setup claude` under the real Claude Code CLI (its model a scripted Messages API, as
//! in tests/claude_code.rs): with the hooks, a worker whose lease is 2 seconds works through
//! 10 seconds of tool calls and never loses its task to a second worker's claims; without
//! them, the same run loses it, and the worker is told what happened. A restarted session is
//! told what it holds, and a worker that tries to stop while holding an unfinished task is
//! asked to finish it, and can stop once it has.

use baton_test_support as support;

use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::Project;
use support::claude::{Host, finish, is_worker_turn, tool, worker_turn};
use support::scripted_api::{Reply, Script, ScriptedApi, exchanges};

/// The lease every process of these runs uses.
const LEASE: &str = "2s";
/// Bash calls of `sleep 2` the long task makes: 10 seconds, five leases.
const LONG_STEPS: usize = 5;

/// A worker on a long task: claim, start, `sleep 2` five times through Bash, complete.
fn long_worker() -> Script {
    Arc::new(|request: &Value| {
        let Some((agent, done)) = worker_turn(request) else {
            return Reply::Text("ok".into());
        };
        let Some(last) = done.last() else {
            return tool("task_claim", json!({"agent": agent}));
        };
        let slept = done.iter().filter(|e| e.tool == "Bash").count();
        match last.tool.as_str() {
            "mcp__baton__task_claim" => {
                let claimed: Value = serde_json::from_str(&last.result).unwrap_or(Value::Null);
                match claimed["task"]["id"].as_str() {
                    Some(id) => tool("task_start", json!({"agent": agent, "task": id})),
                    None => Reply::Text("Nothing to do.".into()),
                }
            }
            "mcp__baton__task_start" | "Bash" if slept < LONG_STEPS => Reply::Tool {
                name: "Bash".into(),
                input: json!({"command": "sleep 2", "description": "a long step"}),
            },
            "Bash" => tool(
                "task_complete",
                json!({"agent": agent, "task": "task-1", "summary": "built it"}),
            ),
            _ => Reply::Text(format!("Finished: {}", last.result)),
        }
    })
}

/// A worker session as `agent` with the lease of these runs.
fn session(p: &Project, api: &ScriptedApi, agent: &str) -> Host {
    Host::new(p.path(), api)
        .with_env("BATON_AGENT", agent)
        .with_env("BATON_LEASE", LEASE)
}

/// `baton setup claude --approve` as the user runs it, in the home Claude Code uses: the
/// project's folder is trusted there, or Claude Code would leave Baton's server and hooks
/// pending approval in a git repository.
fn set_up_for_claude(host: &Host) {
    let out = host
        .baton(&["setup", "claude", "--approve"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    host.expect_baton_connected();
}

fn run_worker(host: &Host, agent: &str, allowed: &str) -> std::process::Child {
    let prompt = format!("Do the task as agent {agent} now");
    host.command(&[
        "-p",
        &prompt,
        "--allowedTools",
        allowed,
        "--max-turns",
        "30",
    ])
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap()
}

/// Runs the long worker to its end while, from the moment it has started its task, a second
/// worker tries to claim every 200 ms; the claims that got the task.
fn long_run_against_a_thief(p: &Project, host: &Host) -> (std::process::Output, Vec<Value>) {
    let mut child = Some(run_worker(host, "cc1", "mcp__baton Bash"));
    let mut taken = Vec::new();
    let mut started = false;
    let deadline = Instant::now() + support::claude::RUN_LIMIT;
    let output = loop {
        let running = child.as_mut().unwrap();
        if running.try_wait().unwrap().is_some() {
            break finish(child.take().unwrap());
        }
        assert!(Instant::now() < deadline, "claude did not finish");
        started = started || task(p)["status"] == "in_progress";
        // Once it has the task, the thief holds it (it claims no more).
        if started && taken.is_empty() {
            let out = p.run(&["--json", "--lease", LEASE, "worker", "claim", "thief"]);
            if out.status.code() == Some(0) {
                taken.push(serde_json::from_slice(&out.stdout).unwrap());
            }
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(started, "the worker never started its task");
    (output, taken)
}

fn task(p: &Project) -> Value {
    p.tasks_json()["tasks"][0].clone()
}

#[test]
fn with_the_hooks_a_long_tool_run_keeps_its_task_and_without_them_loses_it() {
    // With the hooks: never taken over, completed by its worker.
    let p = Project::init();
    // A git repository, as users' projects are (Claude Code asks for its trust there).
    support::repository(p.path());
    p.ok(&["leader", "add-task", "Build the thing"]);
    let api = ScriptedApi::start(long_worker());
    let host = session(&p, &api, "cc1");
    set_up_for_claude(&host);
    let started = Instant::now();
    let (out, taken) = long_run_against_a_thief(&p, &host);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let calls = exchanges(api.requests().last().unwrap());
    assert!(
        started.elapsed() >= Duration::from_secs(10),
        "the run spans five leases: {calls:?}"
    );
    assert!(taken.is_empty(), "the thief got it: {taken:?}");
    let t = task(&p);
    assert_eq!(t["status"], "done", "{t}");
    assert_eq!(t["claimed_by"], "cc1", "{t}");
    assert_eq!(t["attempts"], 1, "{t}");
    assert_eq!(
        calls.iter().filter(|e| e.tool == "Bash").count(),
        LONG_STEPS
    );
    assert!(calls.iter().all(|e| !e.is_error), "{calls:?}");

    // Without them (Baton added by hand, as before): the thief takes it over, and the worker's
    // completion is refused with what happened and what to do.
    let p = Project::init();
    // A git repository, as users' projects are (Claude Code asks for its trust there).
    support::repository(p.path());
    p.ok(&["leader", "add-task", "Build the thing"]);
    let api = ScriptedApi::start(long_worker());
    let host = session(&p, &api, "cc1");
    host.add_baton(&[]);
    let (out, taken) = long_run_against_a_thief(&p, &host);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(taken.len(), 1, "the thief took it over once: {taken:?}");
    assert_eq!(taken[0]["reclaimed_from"], "cc1", "{taken:?}");
    let calls = exchanges(api.requests().last().unwrap());
    let complete = calls
        .iter()
        .find(|e| e.tool == "mcp__baton__task_complete")
        .expect("the worker tried to complete");
    assert!(complete.is_error, "{complete:?}");
    assert!(
        complete.result.contains("not by cc1"),
        "{}",
        complete.result
    );
    assert!(
        complete.result.contains("taken over"),
        "{}",
        complete.result
    );
    assert!(
        complete.result.contains("baton discover"),
        "{}",
        complete.result
    );
    assert_eq!(task(&p)["claimed_by"], "thief");
}

/// What a worker told it still holds its task does next.
#[derive(Clone, Copy)]
enum Then {
    Complete,
    Release,
    /// Tries to stop again regardless.
    Ignore,
}

/// A worker that first tries to stop; told it still holds task-1, does `then`.
fn stopping_worker(then: Then) -> Script {
    Arc::new(move |request: &Value| {
        let Some((agent, done)) = worker_turn(request) else {
            return Reply::Text("ok".into());
        };
        let text = request.to_string();
        if !done.is_empty() {
            return Reply::Text("All done.".into());
        }
        match then {
            Then::Complete if text.contains("You still hold task-1") => tool(
                "task_complete",
                json!({"agent": agent, "task": "task-1", "summary": "finished after all"}),
            ),
            Then::Release if text.contains("You still hold task-1") => {
                tool("task_release", json!({"agent": agent, "task": "task-1"}))
            }
            _ => Reply::Text("I think I am done here.".into()),
        }
    })
}

/// A project whose task-1 worker cc1 claimed and started in a session that ended, set up for
/// Claude Code; runs a new session of cc1 with `script` to its end.
fn restarted_session(script: Script) -> (Project, ScriptedApi) {
    let p = Project::init();
    // A git repository, as users' projects are (Claude Code asks for its trust there).
    support::repository(p.path());
    p.ok(&[
        "leader",
        "add-task",
        "Write the parser",
        "--files",
        "src/parser.rs",
    ]);
    p.ok(&["worker", "claim", "cc1"]);
    p.ok(&["worker", "start", "cc1", "task-1"]);
    let api = ScriptedApi::start(script);
    let host = session(&p, &api, "cc1");
    set_up_for_claude(&host);
    let out = finish(run_worker(&host, "cc1", "mcp__baton"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (p, api)
}

/// The requests of the worker's conversation (Claude Code makes side requests too).
fn conversation(api: &ScriptedApi) -> Vec<Value> {
    api.requests().into_iter().filter(is_worker_turn).collect()
}

fn stop_hook_spoke(requests: &[Value]) -> usize {
    requests
        .iter()
        .filter(|r| r.to_string().contains("You still hold task-1"))
        .count()
}

#[test]
fn a_restarted_worker_is_told_what_it_holds_and_finishes_before_it_stops() {
    let (p, api) = restarted_session(stopping_worker(Then::Complete));
    let worker = conversation(&api);
    let first = worker
        .first()
        .expect("the worker's conversation")
        .to_string();
    assert!(first.contains("you are worker \\\"cc1\\\""), "{first}");
    assert!(
        first.contains("You hold task-1 (in progress): Write the parser"),
        "{first}"
    );
    assert!(first.contains("src/parser.rs"), "{first}");
    assert!(
        first.contains("baton worker complete cc1 task-1"),
        "{first}"
    );
    // It tried to stop, was asked to finish, completed, and then could stop.
    assert!(stop_hook_spoke(&worker) > 0, "the stop hook spoke");
    let t = task(&p);
    let calls = exchanges(worker.last().unwrap());
    assert_eq!(t["status"], "done", "{t} after {calls:?}");
    assert_eq!(t["result"]["output"], "finished after all");
    assert_eq!(calls.last().unwrap().tool, "mcp__baton__task_complete");
}

#[test]
fn a_worker_may_stop_after_releasing_and_is_asked_only_once_per_stop() {
    let (p, api) = restarted_session(stopping_worker(Then::Release));
    assert!(stop_hook_spoke(&conversation(&api)) > 0);
    let t = task(&p);
    assert_eq!(t["status"], "available", "released: {t}");

    // A worker that ignores the request is asked once, then stops (the hook cannot loop).
    let (p, api) = restarted_session(stopping_worker(Then::Ignore));
    let worker = conversation(&api);
    // The first turn, the one the hook asked for, and no more.
    assert_eq!(worker.len(), 2, "{worker:?}");
    assert_eq!(stop_hook_spoke(&worker), 1);
    assert_eq!(task(&p)["status"], "in_progress", "still held, as it chose");
}
