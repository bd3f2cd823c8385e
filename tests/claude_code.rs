//! Baton under the host agents actually use: the real Claude Code CLI (npm
//! `@anthropic-ai/claude-code`, pinned in scripts/lib.sh) with Baton added by
//! `claude mcp add baton -- baton mcp`, its model replaced by a scripted Messages API on
//! loopback (tests/support/scripted_api.rs) that makes the tool calls a worker would make. The
//! tests assert on what Claude Code sent and what Baton answered, and on `.coordination/`.

use baton_test_support as support;

use std::process::Command;
use std::sync::Arc;

use serde_json::{Value, json};
use support::Project;
use support::claude::{Host, agent_of, is_worker_turn, run, tool, worker_turn};
use support::scripted_api::{Reply, Script, ScriptedApi, exchanges, tool_names};

/// The model of a worker: claim, start, complete, and again until nothing is ready. Requests
/// that are not the worker's conversation (Claude Code's own side requests) get plain text.
fn worker() -> Script {
    Arc::new(|request: &Value| {
        let Some((agent, done)) = worker_turn(request) else {
            return Reply::Text("ok".into());
        };
        let Some(last) = done.last() else {
            return tool("task_claim", json!({"agent": agent}));
        };
        if last.is_error {
            return Reply::Text(format!("Stopping: {}", last.result));
        }
        let result: Value = serde_json::from_str(&last.result).unwrap_or(Value::Null);
        match last.tool.trim_start_matches("mcp__baton__") {
            "task_claim" => match result["task"]["id"].as_str() {
                Some(id) => tool("task_start", json!({"agent": agent, "task": id})),
                None => Reply::Text("The queue is empty.".into()),
            },
            "task_start" => tool(
                "task_complete",
                json!({"agent": agent, "task": last.input["task"],
                       "summary": format!("Done by {agent}")}),
            ),
            "task_complete" => tool("task_claim", json!({"agent": agent})),
            other => Reply::Text(format!("unexpected tool {other}")),
        }
    })
}

/// The tools offered in the first request that offered any of Baton's.
fn first_offered(api: &ScriptedApi) -> Vec<String> {
    let requests = api.requests();
    let first = requests
        .iter()
        .find(|r| tool_names(r).iter().any(|n| n.starts_with("mcp__baton__")))
        .expect("Claude Code offered Baton's tools");
    tool_names(first)
}

/// The task ids an agent's conversation completed successfully.
fn completed_by(requests: &[Value], agent: &str) -> Vec<String> {
    let last = requests
        .iter()
        .filter(|r| is_worker_turn(r))
        .rfind(|r| agent_of(r) == agent)
        .unwrap_or_else(|| panic!("no conversation of {agent}"));
    exchanges(last)
        .into_iter()
        .filter(|e| e.tool == "mcp__baton__task_complete" && !e.is_error)
        .map(|e| e.input["task"].as_str().unwrap().to_string())
        .collect()
}

fn statuses(project: &Project) -> Vec<(String, String)> {
    project.tasks_json()["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["id"].as_str().unwrap().to_string(),
                t["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn a_scripted_worker_in_claude_code_claims_starts_and_completes_through_baton() {
    let p = Project::init();
    // A git repository, as users' projects are (Claude Code asks for its trust there).
    support::repository(p.path());
    p.ok(&["leader", "add-task", "Write the parser"]);
    let api = ScriptedApi::start(worker());
    let host = Host::new(p.path(), &api);
    host.add_baton(&[]);

    run(host.work("cc1"));

    assert_eq!(statuses(&p), [("task-1".to_string(), "done".to_string())]);
    let task = &p.tasks_json()["tasks"][0];
    assert_eq!(task["claimed_by"], "cc1", "{task}");
    let requests = api.requests();
    let offered = first_offered(&api);
    for name in ["task_claim", "task_start", "task_complete", "signal_write"] {
        assert!(
            offered.contains(&format!("mcp__baton__{name}")),
            "{name} not offered: {offered:?}"
        );
    }
    // What Baton answered, as Claude Code passed it back to the model.
    let last = requests.last().unwrap();
    let calls: Vec<(String, bool)> = exchanges(last)
        .into_iter()
        .map(|e| {
            (
                e.tool.trim_start_matches("mcp__baton__").to_string(),
                e.is_error,
            )
        })
        .collect();
    assert_eq!(
        calls,
        [
            ("task_claim".to_string(), false),
            ("task_start".to_string(), false),
            ("task_complete".to_string(), false),
            ("task_claim".to_string(), false),
        ]
    );
    let final_claim = exchanges(last).pop().unwrap();
    let answer: Value = serde_json::from_str(&final_claim.result).unwrap();
    assert_eq!(answer["task"], Value::Null, "{answer}");
    assert!(answer["reason"].is_string(), "{answer}");
    assert_eq!(completed_by(&requests, "cc1"), ["task-1"]);
    assert!(p.coordination().join("results/task-1.md").is_file());
}

#[test]
fn a_hostile_call_from_the_model_comes_back_as_a_tool_error_and_touches_nothing() {
    let p = Project::init();
    // A git repository, as users' projects are (Claude Code asks for its trust there).
    support::repository(p.path());
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join(".ui-test-done");
    std::fs::write(&target, "done\n").unwrap();
    let path = target.display().to_string();
    let api = ScriptedApi::start(Arc::new(move |request: &Value| {
        if !tool_names(request)
            .iter()
            .any(|n| n == "mcp__baton__signal_clear")
        {
            return Reply::Text("ok".into());
        }
        match exchanges(request).last() {
            None => tool("signal_clear", json!({"path": path})),
            Some(e) if e.is_error => Reply::Text("Baton refused.".into()),
            Some(_) => Reply::Text("Baton obeyed.".into()),
        }
    }));
    let host = Host::new(p.path(), &api);
    host.add_baton(&[]);

    let out = run(host.work("intruder"));

    assert!(out.contains("Baton refused."), "{out}");
    let requests = api.requests();
    let exchange = exchanges(requests.last().unwrap()).pop().unwrap();
    assert_eq!(exchange.tool, "mcp__baton__signal_clear");
    assert!(exchange.is_error, "{exchange:?}");
    assert!(
        exchange.result.contains("outside the project"),
        "{}",
        exchange.result
    );
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "done\n");
}

#[test]
fn two_claude_code_workers_on_one_queue_finish_every_task_exactly_once() {
    let p = Project::init();
    // A git repository, as users' projects are (Claude Code asks for its trust there).
    support::repository(p.path());
    let tasks = 8;
    for i in 1..=tasks {
        p.ok(&["leader", "add-task", &format!("Task number {i}")]);
    }
    let api = ScriptedApi::start(worker());
    let first = Host::new(p.path(), &api);
    let second = Host::new(p.path(), &api);
    first.add_baton(&[]);
    second.add_baton(&[]);

    let a = first.work("cc1");
    let b = second.work("cc2");
    run(a);
    run(b);

    let all = statuses(&p);
    assert_eq!(all.len(), tasks);
    assert!(all.iter().all(|(_, s)| s == "done"), "{all:?}");
    let requests = api.requests();
    let mut completed = completed_by(&requests, "cc1");
    completed.extend(completed_by(&requests, "cc2"));
    completed.sort();
    let mut expected: Vec<String> = (1..=tasks).map(|i| format!("task-{i}")).collect();
    expected.sort();
    assert_eq!(completed, expected, "every task completed exactly once");
}

#[test]
fn the_proxied_browser_tools_are_offered_on_the_first_turn() {
    let p = Project::init();
    // A git repository, as users' projects are (Claude Code asks for its trust there).
    support::repository(p.path());
    let api = ScriptedApi::start(Arc::new(|_: &Value| Reply::Text("Nothing to do.".into())));
    let host = Host::new(p.path(), &api);
    // Playwright MCP as installed by scripts/test.sh is on the host's PATH.
    host.add_baton(&["--proxy"]);

    run(host.work("ui1"));

    let offered = first_offered(&api);
    for name in ["mcp__baton__browser_navigate", "mcp__baton__task_claim"] {
        assert!(
            offered.iter().any(|n| n == name),
            "{name} not offered on the first turn: {offered:?}"
        );
    }
    assert!(
        !offered.iter().any(|n| n.ends_with("_unsafe")),
        "{offered:?}"
    );
}

#[test]
fn a_child_slow_to_start_still_leaves_baton_s_own_tools_on_the_first_turn() {
    let p = Project::init();
    // A git repository, as users' projects are (Claude Code asks for its trust there).
    support::repository(p.path());
    // A child that never gets going: it waits on a FIFO nobody opens.
    let gate = p.path().join("gate");
    let made = Command::new("mkfifo").arg(&gate).status().unwrap();
    assert!(made.success());
    let api = ScriptedApi::start(Arc::new(|_: &Value| Reply::Text("Nothing to do.".into())));
    let host = Host::new(p.path(), &api);
    let child = format!("slow=sh -c 'read go < {}; exec baton mcp'", gate.display());
    let mut args = vec!["mcp", "add", "baton", "--", "baton", "mcp", "--no-browser"];
    args.extend(["--child", &child]);
    host.ok(&args);

    run(host.work("w1"));

    // Baton's own tools are offered although its child never started.
    assert!(first_offered(&api).contains(&"mcp__baton__task_claim".to_string()));
}
