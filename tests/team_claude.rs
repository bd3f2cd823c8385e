//! A team of real Claude Code workers (npm `@anthropic-ai/claude-code`, pinned in
//! scripts/lib.sh) started by `baton team up --agent claude`, their model replaced by a
//! scripted Messages API on loopback: each agent is told its task in its prompt, commits a
//! file through Claude Code's own Bash tool in the task's worktree, and reports the task with
//! Baton's MCP tool. The tests assert on the board, the branches, the stored transcripts and
//! the cost the scripted usage implies.

use baton_test_support as support;

use std::sync::Arc;

use serde_json::{Value, json};
use support::Project;
use support::claude::{Host, assignment, tool};
use support::scripted_api::{Reply, ScriptedApi, exchanges, tool_names};
use support::team::{check_done, committer, restarted, team_up};

/// What one scripted model request and reply cost at Claude Code's list price for the model
/// the scripted API names (100 input tokens at $5/M, 20 output tokens at $15/M).
const COST_PER_REQUEST: f64 = 0.0008;

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

    let report = team_up(&host, &["--workers", "3", "--agent", "claude"]);

    // The cost is Claude Code's own report, as the scripted usage implies.
    let tasks: Vec<String> = (1..=9).map(|n| format!("task-{n}")).collect();
    let total = check_done(
        &host,
        &p.tasks_json(),
        &api.requests(),
        &tasks,
        &|agent| ["cc1", "cc2", "cc3"].contains(&agent),
        ["Bash", "mcp__baton__task_complete"],
        COST_PER_REQUEST,
    );
    let status = host.baton(&["--json", "team", "status"]).output().unwrap();
    let status: Value = serde_json::from_slice(&status.stdout).unwrap();
    let spent = status["spend"]["total"]["cost_usd"].as_f64().unwrap();
    assert!((spent - total).abs() < 1e-9, "{status}");
    // The lead's board and agents view show the same spend.
    let board = host
        .baton(&["--json", "leader", "status"])
        .output()
        .unwrap();
    let board: Value = serde_json::from_slice(&board.stdout).unwrap();
    assert_eq!(board["spend"]["total"], status["spend"]["total"], "{board}");
    assert_eq!(
        board["spend"]["by_agent"], status["spend"]["by_agent"],
        "{board}"
    );
    let agents = host
        .baton(&["--json", "leader", "agents"])
        .output()
        .unwrap();
    let agents: Value = serde_json::from_slice(&agents.stdout).unwrap();
    let by_agent = agents["spend"]["by_agent"].as_object().unwrap();
    let per_agent: f64 = by_agent
        .values()
        .map(|u| u["cost_usd"].as_f64().unwrap())
        .sum();
    assert!((per_agent - total).abs() < 1e-9, "{agents}");
    let text = host.baton(&["leader", "status"]).output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout).to_string();
    assert!(
        text.contains(&format!("Agents' spend: ${total:.4}")),
        "{text}"
    );
    assert!((report["spent_usd"].as_f64().unwrap() - total).abs() < 1e-6);

    let merged = host.baton(&["leader", "merge", "--all"]).output().unwrap();
    assert!(merged.status.success(), "{merged:?}");
    for n in 1..=9 {
        let text = std::fs::read_to_string(p.path().join(format!("task-{n}.txt"))).unwrap();
        assert!(
            text.starts_with(&format!("work of task-{n} by cc")),
            "{text}"
        );
    }
}

#[test]
fn a_sandboxed_claude_worker_commits_on_its_branch_and_reports_through_baton() {
    let p = Project::init();
    support::repository(p.path());
    for n in 1..=2 {
        p.ok(&["leader", "add-task", &format!("Write task-{n}.txt")]);
    }
    let api = ScriptedApi::start(committer());
    let host = Host::new(p.path(), &api);

    team_up(&host, &["--workers", "1", "--agent", "claude"]);

    let tasks: Vec<String> = (1..=2).map(|n| format!("task-{n}")).collect();
    check_done(
        &host,
        &p.tasks_json(),
        &api.requests(),
        &tasks,
        &|agent| agent == "cc1",
        ["Bash", "mcp__baton__task_complete"],
        COST_PER_REQUEST,
    );
    for id in &tasks {
        let log = host
            .baton(&["--json", "team", "logs", id])
            .output()
            .unwrap();
        let log: Value = serde_json::from_slice(&log.stdout).unwrap();
        assert_eq!(log["attempt"]["sandboxed"], true, "{log}");
    }
    let merged = host.baton(&["leader", "merge", "--all"]).output().unwrap();
    assert!(merged.status.success(), "{merged:?}");
    assert!(p.path().join("task-2.txt").is_file());
}

/// In its sandbox, Claude Code's state is its task's own copy of the user's: what the agent
/// writes there (settings, instructions, the main file) reaches neither the user's `~/.claude`
/// (which the user's own Claude Code runs outside any sandbox) nor the next task's agent, and
/// the copy is gone when the worker is done with the task.
#[test]
fn a_sandboxed_claude_agent_changes_only_its_tasks_own_copy_of_its_state() {
    let p = Project::init();
    support::repository(p.path());
    for n in 1..=2 {
        p.ok(&["leader", "add-task", &format!("Write task-{n}.txt")]);
    }
    let api = ScriptedApi::start(Arc::new(|request: &Value| {
        let Some((task, agent)) = assignment(request) else {
            return Reply::Text("ok".into());
        };
        if !tool_names(request).iter().any(|n| n == "Bash") {
            return Reply::Text("ok".into());
        }
        match exchanges(request).len() {
            0 => Reply::Tool {
                name: "Bash".into(),
                input: json!({
                    "command": format!(
                        "cat ~/.claude/settings.json; echo \"config in $CLAUDE_CONFIG_DIR\"; \
                         echo '{{\"env\": {{\"PLANTED\": \"{task}\"}}}}' > ~/.claude/settings.json && \
                         echo planted-{task} > ~/.claude/CLAUDE.md && \
                         echo planted-{task} > \"$CLAUDE_CONFIG_DIR/.claude.json\" && echo planted"
                    ),
                    "description": "change the agent's own state"
                }),
            },
            1 => tool(
                "task_complete",
                json!({"agent": agent, "task": task, "summary": "planted"}),
            ),
            _ => Reply::Text("Done.".into()),
        }
    }));
    let host = Host::new(p.path(), &api);
    let user = host.home().join(".claude");
    std::fs::create_dir_all(&user).unwrap();
    std::fs::write(
        user.join("settings.json"),
        "{\"env\": {\"USER\": \"mine\"}}\n",
    )
    .unwrap();

    team_up(&host, &["--workers", "1", "--agent", "claude"]);

    let first_result = |task: &str| {
        api.requests()
            .iter()
            .filter(|r| assignment(r).is_some_and(|(t, _)| t == task))
            .find_map(|r| exchanges(r).into_iter().next())
            .unwrap_or_else(|| panic!("{task} ran no command"))
    };
    for task in ["task-1", "task-2"] {
        let ran = first_result(task);
        assert!(!ran.is_error, "{task}: {}", ran.result);
        // Each task's agent starts from the user's settings, not from what another planted.
        assert!(
            ran.result.contains("\"USER\": \"mine\""),
            "{task}: {}",
            ran.result
        );
        assert!(!ran.result.contains("PLANTED"), "{task}: {}", ran.result);
        assert!(ran.result.contains("planted"), "{task}: {}", ran.result);
    }
    assert_eq!(
        std::fs::read_to_string(user.join("settings.json")).unwrap(),
        "{\"env\": {\"USER\": \"mine\"}}\n"
    );
    assert!(!user.join("CLAUDE.md").exists());
    assert!(
        !user.join("projects").exists(),
        "sessions saved in the user's folder"
    );
    assert!(
        std::fs::read_to_string(host.home().join(".claude.json"))
            .map_or(true, |s| !s.contains("planted")),
        "the user's main file was changed"
    );
    for n in 1..=2 {
        assert_eq!(p.tasks_json()["tasks"][n - 1]["status"], "done");
        assert!(
            !p.path()
                .join(format!(".coordination/team/homes/task-{n}"))
                .exists()
        );
    }
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
    let out = host
        .baton(&[
            "--json",
            "team",
            "up",
            "--agent",
            "claude",
            "--max-turns",
            "3",
        ])
        .output()
        .unwrap();
    // Its task failed: the run's verdict says so, and so does its exit status.
    assert_eq!(out.status.code(), Some(10), "{out:?}");
    let t = p.tasks_json()["tasks"][0].clone();
    assert_eq!(t["status"], "failed", "{t}");
    let reason = t["result"]["error"].as_str().unwrap().to_string();
    // Claude Code stopped itself at the cap it was given (its count of turns may run one
    // past it), and reported what it cost.
    assert!(reason.starts_with("budget: the task took "), "{reason}");
    assert!(reason.ends_with("turns, its cap is 3"), "{reason}");
    let log = host
        .baton(&["--json", "team", "logs", "task-1"])
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

/// In its sandbox (the default): the session Claude Code saved in its own state folder
/// (writable in the sandbox) is still there for the next team.
#[test]
fn team_up_again_resumes_the_claude_session_a_killed_supervisor_left() {
    resumes_after_the_supervisor_is_killed(&[]);
}

#[test]
fn without_a_sandbox_a_claude_session_resumes_after_its_supervisor_is_killed() {
    resumes_after_the_supervisor_is_killed(&["--no-sandbox"]);
}

fn resumes_after_the_supervisor_is_killed(options: &[&str]) {
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
    support::team::kill_team_during_long_step(&host, "claude", "long-step-615", options);
    let long_step_runs = || support::claude::process_runs("long-step-615");

    let mut args = vec!["--json", "team", "up", "--agent", "claude"];
    args.extend(options);
    let again = host.baton(&args).output().unwrap();
    assert!(again.status.success(), "{again:?}");
    let t = p.tasks_json()["tasks"][0].clone();
    assert_eq!(t["status"], "done", "{t}");
    assert_eq!(t["attempts"], 1, "claimed once: {t}");
    let attempt = |n: &str| {
        let out = host
            .baton(&["--json", "team", "logs", "task-1", "--attempt", n])
            .output()
            .unwrap();
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    let (one, two) = (attempt("1"), attempt("2"));
    assert_eq!(one["attempt"]["end"], "stopped", "{one}");
    assert_eq!(two["attempt"]["end"], "completed", "{two}");
    let sandboxed = !options.contains(&"--no-sandbox");
    assert_eq!(two["attempt"]["sandboxed"], sandboxed, "{two}");
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
    let out = host
        .baton(&["--json", "team", "up", "--agent", "claude"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(10), "{out:?}");
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
    let log = host
        .baton(&["--json", "team", "logs", "task-1"])
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

/// A UI tester in a team: a Claude Code worker whose profile has `browser = true` browses the
/// app under test with Playwright MCP's tools, offered on its first turn by its `baton mcp
/// --proxy`, which runs in the worker's sandbox with the browser it launches on that first
/// call; the app is a loopback port the profile's allow-list names. It then reports the task
/// with Baton's tool from the same server, through the attempt's door.
#[test]
fn a_sandboxed_claude_ui_tester_browses_the_app_with_a_browser_of_its_own() {
    let p = Project::init();
    support::repository(p.path());
    let url = support::serve_page(
        "<html><head><title>App under test</title></head><body>Ready</body></html>",
    );
    let port = url.trim_end_matches('/').rsplit(':').next().unwrap();
    std::fs::create_dir_all(p.path().join(".coordination/team")).unwrap();
    std::fs::write(
        p.path().join(".coordination/team/profiles.toml"),
        format!("[profiles.claude]\nbrowser = true\n\n[profiles.claude.sandbox]\nallow = [\"127.0.0.1:{port}\"]\n"),
    )
    .unwrap();
    p.ok(&[
        "leader",
        "add-task",
        "Check the app's title",
        "--id",
        "ui-1",
    ]);
    let page = url.clone();
    let api = ScriptedApi::start(Arc::new(move |request: &Value| {
        let Some((task, agent)) = assignment(request) else {
            return Reply::Text("ok".into());
        };
        let offered = tool_names(request);
        if !offered.iter().any(|n| n == "Bash") {
            return Reply::Text("ok".into());
        }
        match exchanges(request).as_slice() {
            [] if offered.iter().any(|n| n == "mcp__baton__browser_navigate") => {
                tool("browser_navigate", json!({"url": page}))
            }
            [] => Reply::Text(format!("No browser offered: {offered:?}")),
            [browsed] if !browsed.is_error => tool(
                "task_complete",
                json!({"agent": agent, "task": task, "summary": browsed.result}),
            ),
            _ => Reply::Text("Done.".into()),
        }
    }));
    let host = Host::new(p.path(), &api);

    team_up(&host, &["--workers", "1", "--agent", "claude"]);

    let board = p.tasks_json();
    let task = &board["tasks"][0];
    assert_eq!(task["status"], "done", "{board}");
    let summary = task["result"]["output"].as_str().unwrap_or_default();
    assert!(summary.contains("Page Title: App under test"), "{task}");
    let log = host
        .baton(&["--json", "team", "logs", "ui-1"])
        .output()
        .unwrap();
    let log: Value = serde_json::from_slice(&log.stdout).unwrap();
    assert_eq!(log["attempt"]["sandboxed"], true, "{log}");
    // The browser ran in the sandbox: none was registered in the project.
    let registered = host.baton_json(&["--json", "browser", "list"]);
    assert_eq!(registered, json!([]), "{registered}");
}
