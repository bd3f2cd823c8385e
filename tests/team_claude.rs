//! A team of real Claude Code workers (npm `@anthropic-ai/claude-code`, pinned in
//! scripts/lib.sh) started by `baton team up --agent claude`, their model replaced by a
//! scripted Messages API on loopback: each agent is told its task in its prompt, commits a
//! file through Claude Code's own Bash tool in the task's worktree, and reports the task with
//! Baton's MCP tool. The tests assert on the board, the branches, the stored transcripts and
//! the cost the scripted usage implies.

use baton_test_support as support;

use std::process::Command;
use std::sync::Arc;

use serde_json::{Value, json};
use support::Project;
use support::claude::{Host, assignment, tool};
use support::scripted_api::{Reply, ScriptedApi, exchanges, tool_names};

/// What one scripted model request and reply cost at Claude Code's list price for the model
/// the scripted API names (100 input tokens at $5/M, 20 output tokens at $15/M).
const COST_PER_REQUEST: f64 = 0.0008;

/// The model of a team worker: commit the task's file with Bash, report the task, stop.
fn committer() -> support::scripted_api::Script {
    Arc::new(|request: &Value| {
        let offered = tool_names(request);
        if !offered.iter().any(|n| n == "mcp__baton__task_complete") {
            return Reply::Text("ok".into());
        }
        let Some((task, agent)) = assignment(request) else {
            return Reply::Text("No task named.".into());
        };
        let done = exchanges(request);
        let Some(last) = done.last() else {
            let command = format!(
                "printf 'work of %s by %s\\n' {task} {agent} > {task}.txt && git add {task}.txt && git commit -qm '{task} by {agent}'"
            );
            return Reply::Tool {
                name: "Bash".into(),
                input: json!({"command": command, "description": "commit the work"}),
            };
        };
        if last.is_error {
            return Reply::Text(format!("Stopping: {}", last.result));
        }
        match last.tool.as_str() {
            "Bash" => tool(
                "task_complete",
                json!({"agent": agent, "task": task,
                       "summary": format!("{task} written by {agent}"),
                       "modified": [format!("{task}.txt")]}),
            ),
            _ => Reply::Text(format!("Done with {task}.")),
        }
    })
}

/// `baton ARGS` in the host's clean environment (Claude Code's, the scripted API's).
fn baton(host: &Host, args: &[&str]) -> Command {
    let mut command = Command::new(support::baton_bin());
    command.args(args);
    host.environment(&mut command);
    command.envs(support::GIT_IDENTITY);
    command
}

#[test]
fn a_team_of_three_claude_workers_does_nine_tasks_once_each_in_its_worktree() {
    let p = Project::init();
    support::repository(p.path());
    let deps: [&[&str]; 9] = [
        &[],
        &[],
        &[],
        &["task-1"],
        &["task-2"],
        &["task-3"],
        &["task-4", "task-5"],
        &["task-6"],
        &["task-7", "task-8"],
    ];
    for (i, deps) in deps.iter().enumerate() {
        let n = i + 1;
        let mut args = vec![
            "leader".to_string(),
            "add-task".into(),
            format!("Write task-{n}.txt"),
            "--files".into(),
            format!("task-{n}.txt"),
        ];
        if !deps.is_empty() {
            args.extend(["--depends".into(), deps.join(",")]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        p.ok(&args);
    }
    let api = ScriptedApi::start(committer());
    let host = Host::new(p.path(), &api);

    let out = baton(
        &host,
        &[
            "--json",
            "team",
            "up",
            "--workers",
            "3",
            "--agent",
            "claude",
        ],
    )
    .output()
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert!(report["errors"].as_array().unwrap().is_empty(), "{report}");

    let board = p.tasks_json();
    let requests = api.requests();
    let mut total = 0.0;
    for n in 1..=9 {
        let id = format!("task-{n}");
        let t = board["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["id"] == id.as_str())
            .unwrap();
        assert_eq!(t["status"], "done", "{t}");
        assert_eq!(t["attempts"], 1, "claimed once: {t}");
        let agent = t["claimed_by"].as_str().unwrap();
        assert!(["cc1", "cc2", "cc3"].contains(&agent), "{t}");
        let branch = &t["result"]["branch"];
        assert_eq!(branch["name"], format!("baton/{id}"), "{t}");
        let commits = branch["commits"].as_array().unwrap();
        assert_eq!(commits.len(), 1, "{t}");
        assert_eq!(commits[0]["subject"], format!("{id} by {agent}"), "{t}");

        // The transcript holds Claude Code's own tool calls and their results.
        let log = baton(&host, &["--json", "team", "logs", &id])
            .output()
            .unwrap();
        assert!(log.status.success(), "{log:?}");
        let log: Value = serde_json::from_slice(&log.stdout).unwrap();
        let calls: Vec<&str> = log["events"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["kind"] == "tool_call")
            .map(|e| e["name"].as_str().unwrap())
            .collect();
        assert_eq!(calls, ["Bash", "mcp__baton__task_complete"], "{log}");
        let results = log["events"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["kind"] == "tool_result" && e["is_error"] == false)
            .count();
        assert_eq!(results, 2, "{log}");
        assert_eq!(log["attempt"]["end"], "completed", "{log}");
        assert!(log["attempt"]["session_id"].is_string(), "{log}");

        // The cost is Claude Code's own report, as the scripted usage implies.
        let asked = requests
            .iter()
            .filter(|r| assignment(r).is_some_and(|(task, _)| task == id))
            .count();
        assert_eq!(asked, 3, "Bash, task_complete, the last words: {id}");
        let cost = log["attempt"]["usage"]["cost_usd"].as_f64().unwrap();
        let implied = asked as f64 * COST_PER_REQUEST;
        assert!((cost - implied).abs() < 1e-9, "{id}: {cost} != {implied}");
        assert_eq!(log["attempt"]["usage"]["input_tokens"], 100 * asked as u64);
        total += cost;
    }
    let status = baton(&host, &["--json", "team", "status"])
        .output()
        .unwrap();
    let status: Value = serde_json::from_slice(&status.stdout).unwrap();
    let spent = status["spend"]["total"]["cost_usd"].as_f64().unwrap();
    assert!((spent - total).abs() < 1e-9, "{status}");
    // The lead's board and agents view show the same spend.
    let board = baton(&host, &["--json", "leader", "status"])
        .output()
        .unwrap();
    let board: Value = serde_json::from_slice(&board.stdout).unwrap();
    assert_eq!(board["spend"]["total"], status["spend"]["total"], "{board}");
    assert_eq!(
        board["spend"]["by_agent"], status["spend"]["by_agent"],
        "{board}"
    );
    let agents = baton(&host, &["--json", "leader", "agents"])
        .output()
        .unwrap();
    let agents: Value = serde_json::from_slice(&agents.stdout).unwrap();
    let by_agent = agents["spend"]["by_agent"].as_object().unwrap();
    let per_agent: f64 = by_agent
        .values()
        .map(|u| u["cost_usd"].as_f64().unwrap())
        .sum();
    assert!((per_agent - total).abs() < 1e-9, "{agents}");
    let text = baton(&host, &["leader", "status"]).output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout).to_string();
    assert!(
        text.contains(&format!("Agents' spend: ${total:.4}")),
        "{text}"
    );
    assert!((report["spent_usd"].as_f64().unwrap() - total).abs() < 1e-6);

    let merged = baton(&host, &["leader", "merge", "--all"])
        .output()
        .unwrap();
    assert!(merged.status.success(), "{merged:?}");
    for n in 1..=9 {
        let text = std::fs::read_to_string(p.path().join(format!("task-{n}.txt"))).unwrap();
        assert!(
            text.starts_with(&format!("work of task-{n} by cc")),
            "{text}"
        );
    }
}

/// Whether `request` is of the session resumed after its supervisor was killed.
fn restarted(request: &Value) -> bool {
    request["messages"]
        .to_string()
        .contains("Baton restarted you")
}

#[test]
fn a_claude_worker_that_never_reports_is_stopped_at_its_turn_cap_and_the_task_failed() {
    let p = Project::init();
    p.ok(&["leader", "add-task", "Loop forever"]);
    let api = ScriptedApi::start(Arc::new(|request: &Value| {
        if !tool_names(request).iter().any(|n| n == "Bash") || assignment(request).is_none() {
            return Reply::Text("ok".into());
        }
        Reply::Tool {
            name: "Bash".into(),
            input: json!({"command": "echo again", "description": "again"}),
        }
    }));
    let host = Host::new(p.path(), &api);
    let out = baton(
        &host,
        &[
            "--json",
            "team",
            "up",
            "--agent",
            "claude",
            "--max-turns",
            "3",
        ],
    )
    .output()
    .unwrap();
    assert!(out.status.success(), "{out:?}");
    let t = p.tasks_json()["tasks"][0].clone();
    assert_eq!(t["status"], "failed", "{t}");
    let reason = t["result"]["error"].as_str().unwrap().to_string();
    // Claude Code stopped itself at the cap it was given (its count of turns may run one
    // past it), and reported what it cost.
    assert!(reason.starts_with("budget: the task took "), "{reason}");
    assert!(reason.ends_with("turns, its cap is 3"), "{reason}");
    let log = baton(&host, &["--json", "team", "logs", "task-1"])
        .output()
        .unwrap();
    let log: Value = serde_json::from_slice(&log.stdout).unwrap();
    assert_eq!(log["attempt"]["end"], "budget", "{log}");
    let asked = api
        .requests()
        .iter()
        .filter(|r| assignment(r).is_some())
        .count();
    let cost = log["attempt"]["usage"]["cost_usd"].as_f64().unwrap();
    assert!(asked >= 3, "{asked}");
    assert!(
        (cost - asked as f64 * COST_PER_REQUEST).abs() < 1e-9,
        "{cost} for {asked}"
    );
}

#[test]
fn team_up_again_resumes_the_claude_session_a_killed_supervisor_left() {
    let p = Project::init();
    support::repository(p.path());
    p.ok(&["leader", "add-task", "Survive a crash"]);
    let api = ScriptedApi::start(Arc::new(|request: &Value| {
        let Some((task, agent)) = assignment(request) else {
            return Reply::Text("ok".into());
        };
        if !tool_names(request)
            .iter()
            .any(|n| n == "mcp__baton__task_complete")
        {
            return Reply::Text("ok".into());
        }
        if restarted(request) {
            return match exchanges(request).last() {
                Some(e) if e.tool == "mcp__baton__task_complete" => {
                    Reply::Text("Finished after the restart.".into())
                }
                _ => tool(
                    "task_complete",
                    json!({"agent": agent, "task": task, "summary": "done after a restart"}),
                ),
            };
        }
        // The first session: a long step, during which its supervisor is killed.
        Reply::Tool {
            name: "Bash".into(),
            input: json!({"command": "exec -a long-step-615 tail -f /dev/null",
                          "description": "a long build"}),
        }
    }));
    let host = Host::new(p.path(), &api);
    let first =
        support::Background::from_command(baton(&host, &["team", "up", "--agent", "claude"]));
    let long_step_runs = || support::claude::process_runs("long-step-615");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !long_step_runs() {
        if std::time::Instant::now() > deadline {
            let log = baton(&host, &["team", "logs", "task-1"]).output().unwrap();
            panic!(
                "the long step never ran: {}",
                String::from_utf8_lossy(&log.stdout)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    support::kill(first.pid(), "KILL");
    drop(first);

    let again = baton(&host, &["--json", "team", "up", "--agent", "claude"])
        .output()
        .unwrap();
    assert!(again.status.success(), "{again:?}");
    let t = p.tasks_json()["tasks"][0].clone();
    assert_eq!(t["status"], "done", "{t}");
    assert_eq!(t["attempts"], 1, "claimed once: {t}");
    let attempt = |n: &str| {
        let out = baton(&host, &["--json", "team", "logs", "task-1", "--attempt", n])
            .output()
            .unwrap();
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    let (one, two) = (attempt("1"), attempt("2"));
    assert_eq!(one["attempt"]["end"], "stopped", "{one}");
    assert_eq!(two["attempt"]["end"], "completed", "{two}");
    assert_eq!(
        one["attempt"]["session_id"], two["attempt"]["session_id"],
        "the same Claude Code session, resumed"
    );
    // The resumed session carried the first one's conversation to the model.
    let resumed = api
        .requests()
        .into_iter()
        .find(restarted)
        .expect("a request of the resumed session");
    let earlier: Vec<String> = exchanges(&resumed).into_iter().map(|e| e.tool).collect();
    let calls = resumed["messages"].to_string();
    assert!(calls.contains("long-step-615"), "{earlier:?}");
    assert!(!long_step_runs(), "the killed team's long step is gone");
}

#[test]
fn a_claude_worker_that_exits_without_reporting_fails_the_task_with_its_last_words() {
    let p = Project::init();
    p.ok(&["leader", "add-task", "Say something and leave"]);
    let api = ScriptedApi::start(Arc::new(|request: &Value| match assignment(request) {
        Some(_) => Reply::Text("I looked at it and decided to stop here.".into()),
        None => Reply::Text("ok".into()),
    }));
    let host = Host::new(p.path(), &api);
    let out = baton(&host, &["--json", "team", "up", "--agent", "claude"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let t = p.tasks_json()["tasks"][0].clone();
    assert_eq!(t["status"], "failed", "{t}");
    let reason = t["result"]["error"].as_str().unwrap();
    assert!(
        reason.contains("the agent exited with status 0"),
        "{reason}"
    );
    assert!(
        reason.contains("it last said: I looked at it and decided to stop here."),
        "{reason}"
    );
    let log = baton(&host, &["--json", "team", "logs", "task-1"])
        .output()
        .unwrap();
    let log: Value = serde_json::from_slice(&log.stdout).unwrap();
    assert_eq!(log["attempt"]["end"], "unreported", "{log}");
    assert_eq!(
        log["attempts"],
        json!([1]),
        "no retry unless the profile asks: {log}"
    );
}
