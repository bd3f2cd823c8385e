//! One operation, one answer: every task-store, signal and orchestration operation is run
//! through the CLI (`--json`) on one project and through the MCP server (structured content)
//! on a twin project driven through the same steps, and the two answers are compared field by
//! field. Only what must differ is normalised: times, the project folder, and the ids and
//! texts derived from them.

use baton_test_support as support;

use serde_json::{Value, json};
use support::Project;
use support::mcp::RawClient;

/// Replaces what differs between two projects run the same way: the folder, times, and
/// seconds left on a lease (a second may pass between the two runs).
fn normalise(value: &Value, dir: &str) -> Value {
    match value {
        Value::String(s) => {
            let s = stamps_out(&s.replace(dir, "<project>"));
            if s.len() >= 20 && s.as_bytes()[4] == b'-' && s.contains('T') && s.ends_with('Z') {
                Value::String("<time>".into())
            } else {
                Value::String(s)
            }
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| normalise(v, dir)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let v = match k.as_str() {
                        "lease_remaining_secs" | "lease_left_secs" => json!("<secs>"),
                        // The writer process: the CLI itself, or the MCP server.
                        "pid" | "supervisor_pid" => json!("<pid>"),
                        "duration_ms" => json!("<ms>"),
                        "waited_for_dependencies_secs" | "waited_for_lead_secs" if !v.is_null() => {
                            json!("<secs>")
                        }
                        // A commit's id holds its time.
                        "head" => json!("<commit>"),
                        "commits" => Value::Array(
                            v.as_array()
                                .into_iter()
                                .flatten()
                                .map(|c| json!({"id": "<commit>", "subject": c["subject"]}))
                                .collect(),
                        ),
                        "line" | "last_line" => json!(
                            v.as_str()
                                .map(|l| l.split_once("] ").map_or(l, |x| x.1))
                                .unwrap_or_default()
                        ),
                        _ => normalise(v, dir),
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Ids made from the time (`inv-20261123T120703237-analyst`) with the time taken out.
fn stamps_out(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let digits = |from: usize| {
        chars.get(from..).map_or(0, |rest| {
            rest.iter().take_while(|c| c.is_ascii_digit()).count()
        })
    };
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        if digits(i) == 8 && chars.get(i + 8) == Some(&'T') && digits(i + 9) >= 6 {
            out.push_str("<stamp>");
            i += 9 + digits(i + 9);
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

struct Twins {
    cli: Project,
    mcp_project: Project,
    mcp: RawClient,
    compared: Vec<&'static str>,
}

impl Twins {
    /// The CLI on `cli`, the MCP server on `mcp_project`.
    fn new(cli: Project, mcp_project: Project) -> Twins {
        let mcp = RawClient::start(mcp_project.command(&["mcp", "--quiet"]));
        Twins {
            cli,
            mcp_project,
            mcp,
            compared: Vec::new(),
        }
    }

    /// Runs `args` on the CLI twin and `tool` on the MCP twin, asserts both answered the same,
    /// and returns the CLI's answer.
    fn same(&mut self, tool: &'static str, args: &[&str], arguments: Value, exit: i32) -> Value {
        self.both(tool, args, arguments, exit).0
    }

    /// The same, returning both answers (for ids each twin made itself).
    fn both(
        &mut self,
        tool: &'static str,
        args: &[&str],
        arguments: Value,
        exit: i32,
    ) -> (Value, Value) {
        let mut full = args.to_vec();
        full.push("--json");
        let out = self.cli.run(&full);
        assert_eq!(
            out.status.code(),
            Some(exit),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let from_cli: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{args:?} printed no JSON ({e}): {out:?}"));
        let response = self.mcp.call(tool, arguments);
        let result = &response["result"];
        assert_ne!(result["isError"], true, "{tool}: {response}");
        // A text-only tool (the permission prompt) answers with its JSON as the text alone.
        let from_mcp = match &result["structuredContent"] {
            Value::Null => serde_json::from_str(result["content"][0]["text"].as_str().unwrap())
                .unwrap_or_else(|e| panic!("{tool} answered no JSON text ({e}): {response}")),
            structured => structured.clone(),
        };
        let cli_dir = self.cli.path().display().to_string();
        let mcp_dir = self.mcp_project.path().display().to_string();
        let across = self.cli.on_postgres() != self.mcp_project.on_postgres();
        assert_eq!(
            where_out(normalise(&from_cli, &cli_dir), across),
            where_out(normalise(&from_mcp, &mcp_dir), across),
            "{tool} and `baton {}` answered differently",
            args.join(" ")
        );
        self.compared.push(tool);
        (from_cli, from_mcp)
    }
}

/// Across stores, where a thing is kept differs (a note in `results`' folder or the database;
/// a signal's file or its row): every `path` in an answer is compared as present, not by
/// value.
fn where_out(mut value: Value, across: bool) -> Value {
    fn hide(value: &mut Value) {
        match value {
            Value::Object(map) => {
                for (key, inner) in map.iter_mut() {
                    // Where a project keeps things (and, for the archive, whether it keeps one).
                    if key == "path" || key == "place" {
                        *inner = json!("<where>");
                    } else {
                        hide(inner);
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(hide),
            _ => {}
        }
    }
    if across {
        hide(&mut value);
    }
    value
}

#[test]
fn the_cli_and_mcp_answer_every_operation_the_same() {
    every_operation(Twins::new(Project::init(), Project::init()));
}

/// The folder through the CLI and PostgreSQL through the MCP server: the same answers, so a
/// front end cannot tell the stores apart.
#[test]
fn the_folder_and_postgres_answer_every_operation_the_same() {
    every_operation(Twins::new(Project::init(), Project::init_on_postgres()));
}

fn every_operation(mut t: Twins) {
    // The task store.
    t.same(
        "task_add",
        &[
            "leader", "add-task", "A", "-p", "2", "--files", "a.rs", "--hints", "h",
        ],
        json!({"description": "A", "priority": 2, "files": ["a.rs"], "hints": "h"}),
        0,
    );
    t.same(
        "task_add",
        &["leader", "add-task", "B", "--depends", "task-1"],
        json!({"description": "B", "depends": ["task-1"]}),
        0,
    );
    let c = t.same(
        "task_add",
        &["leader", "add-task", "C"],
        json!({"description": "C"}),
        0,
    );
    assert_eq!(c["task"]["priority"], 5, "the default priority: {c}");
    t.same(
        "task_edit",
        &["leader", "edit", "task-3", "-p", "1"],
        json!({"task": "task-3", "priority": 1}),
        0,
    );
    t.same("task_status", &["leader", "status"], json!({}), 0);
    t.same("task_list", &["worker", "list"], json!({}), 0);
    t.same(
        "task_list",
        &["worker", "list", "--all"],
        json!({"all": true}),
        0,
    );
    let claim = t.same(
        "task_claim",
        &["worker", "claim", "w1"],
        json!({"agent": "w1"}),
        0,
    );
    assert_eq!(claim["task"]["id"], "task-3");
    t.same(
        "task_heartbeat",
        &["worker", "heartbeat", "w1"],
        json!({"agent": "w1"}),
        0,
    );
    t.same(
        "task_start",
        &["worker", "start", "w1", "task-3"],
        json!({"agent": "w1", "task": "task-3"}),
        0,
    );
    t.same(
        "task_complete",
        &[
            "worker",
            "complete",
            "w1",
            "task-3",
            "did C",
            "--modified",
            "c.rs",
        ],
        json!({"agent": "w1", "task": "task-3", "summary": "did C", "modified": ["c.rs"]}),
        0,
    );
    t.same(
        "task_claim",
        &["worker", "claim", "w1"],
        json!({"agent": "w1"}),
        0,
    );
    t.same(
        "task_fail",
        &["worker", "fail", "w1", "task-1", "cannot"],
        json!({"agent": "w1", "task": "task-1", "reason": "cannot"}),
        0,
    );
    t.same(
        "task_reset",
        &["leader", "reset", "task-1"],
        json!({"task": "task-1"}),
        0,
    );
    t.same(
        "task_claim",
        &["worker", "claim", "w2"],
        json!({"agent": "w2"}),
        0,
    );
    t.same(
        "task_release",
        &["worker", "release", "w2", "task-1"],
        json!({"agent": "w2", "task": "task-1"}),
        0,
    );
    t.same(
        "task_cancel",
        &["leader", "cancel", "task-1", "--reason", "not needed"],
        json!({"task": "task-1", "reason": "not needed"}),
        0,
    );
    // Nothing is ready now (task-2 waits on the cancelled task-1): same answer, with why.
    let nothing = t.same(
        "task_claim",
        &["worker", "claim", "w3"],
        json!({"agent": "w3"}),
        3,
    );
    assert!(
        nothing["task"].is_null() && nothing["reason"].is_string(),
        "{nothing}"
    );
    t.same(
        "discover",
        &["discover", "the API needs auth", "--agent", "w1"],
        json!({"agent": "w1", "text": "the API needs auth"}),
        0,
    );
    let doctor = t.same("doctor", &["leader", "doctor"], json!({}), 4);
    assert!(
        doctor["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["kind"] == "failed_dependency" && f["task"] == "task-2"),
        "doctor names the task waiting on a cancelled one: {doctor}"
    );
    // Nothing finished a year ago: neither store moves anything (a database never does).
    let archive = t.same(
        "task_archive",
        &["leader", "archive", "--older-than", "365d", "--dry-run"],
        json!({"older_than_seconds": 365 * 24 * 3600, "dry_run": true}),
        0,
    );
    assert_eq!(archive["archived"], json!([]), "{archive}");
    t.same(
        "task_status",
        &["leader", "status", "--all"],
        json!({"all": true}),
        0,
    );
    let aggregate = t.same("aggregate", &["leader", "aggregate"], json!({}), 0);
    assert_eq!(
        (
            &aggregate["done"],
            &aggregate["failed"],
            &aggregate["cancelled"],
            &aggregate["unfinished"]
        ),
        (&json!(1), &json!(0), &json!(1), &json!(1)),
        "{aggregate}"
    );
    t.same(
        "logs",
        &["logs", "w1", "-n", "5"],
        json!({"agent": "w1", "lines": 5}),
        0,
    );
    // A move as on the board: planned, made, then a named claim and a move in the holder's name.
    let plan = t.same(
        "task_move",
        &["leader", "move", "task-1", "available", "--dry-run"],
        json!({"task": "task-1", "to": "available", "dry_run": true}),
        0,
    );
    assert_eq!(
        (&plan["move"]["op"], &plan["task"]),
        (&json!("reset"), &json!(null)),
        "{plan}"
    );
    t.same(
        "task_move",
        &["leader", "move", "task-1", "available"],
        json!({"task": "task-1", "to": "available"}),
        0,
    );
    let named = t.same(
        "task_claim",
        &["worker", "claim", "w3", "--task", "task-1"],
        json!({"agent": "w3", "task": "task-1"}),
        0,
    );
    assert_eq!(named["task"]["id"], "task-1", "{named}");
    let failed = t.same(
        "task_move",
        &["leader", "move", "task-1", "failed", "--text", "gave up"],
        json!({"task": "task-1", "to": "failed", "text": "gave up"}),
        0,
    );
    assert_eq!(
        (&failed["move"]["agent"], &failed["task"]["status"]),
        (&json!("w3"), &json!("failed")),
        "{failed}"
    );
    // Who is doing what.
    let team = t.same("agents_overview", &["leader", "agents"], json!({}), 0);
    assert!(!team["agents"].as_array().unwrap().is_empty(), "{team}");
    // Merging tasks' branches: in a repository on `main` with nothing to merge yet.
    for dir in [
        t.cli.path().to_path_buf(),
        t.mcp_project.path().to_path_buf(),
    ] {
        support::git(&dir, &["init", "-q", "-b", "main"]);
        support::git(&dir, &["commit", "-q", "--allow-empty", "-m", "start"]);
    }
    let merged = t.same(
        "task_merge",
        &["leader", "merge", "--all"],
        json!({"all": true}),
        0,
    );
    assert_eq!(merged["into"], "main", "{merged}");
    // File reservations.
    let reserved = t.same(
        "paths_reserve",
        &["reserve", "lib/**", "--agent", "w5", "--reason", "refactor"],
        json!({"agent": "w5", "paths": ["lib/**"], "reason": "refactor"}),
        0,
    );
    assert_eq!(reserved["id"], "r-1", "{reserved}");
    t.same("reservations_list", &["reservations"], json!({}), 0);
    let held = t.same(
        "paths_check",
        &["check-paths", "lib/a.rs", "--agent", "w6"],
        json!({"paths": ["lib/a.rs"], "agent": "w6"}),
        7,
    );
    assert_eq!(held["held"][0]["agent"], "w5", "{held}");
    t.same(
        "paths_release",
        &["unreserve", "lib/**", "--agent", "w5"],
        json!({"agent": "w5", "paths": ["lib/**"]}),
        0,
    );
    // Runs and signals.
    t.same(
        "run_new",
        &["run", "new", "--note", "ui"],
        json!({"note": "ui"}),
        0,
    );
    t.same("run_list", &["run", "list"], json!({}), 0);
    t.same(
        "signal_write",
        &[
            "signal", "write", "ui-done", "--agent", "w1", "--note", "ok",
        ],
        json!({"name": "ui-done", "agent": "w1", "note": "ok"}),
        0,
    );
    t.same("signal_list", &["signal", "list"], json!({}), 0);
    t.same(
        "signal_wait",
        &["signal", "wait", "ui-done", "--timeout", "5s"],
        json!({"names": ["ui-done"], "timeout_seconds": 5}),
        0,
    );
    t.same(
        "signal_clear",
        &["signal", "clear", "ui-done"],
        json!({"name": "ui-done"}),
        0,
    );
    t.same(
        "signal_clear",
        &["signal", "clear", "--all"],
        json!({"all": true}),
        0,
    );
    // Orchestration.
    t.same(
        "get_routing_recommendation",
        &["route", "fix the login bug"],
        json!({"task": "fix the login bug"}),
        0,
    );
    let (cli_invocation, mcp_invocation) = t.both(
        "invoke_agent",
        &["invoke", "start", "analyst", "Study the login flow"],
        json!({"agent": "analyst", "prompt": "Study the login flow"}),
        0,
    );
    let id = cli_invocation["id"].as_str().unwrap().to_string();
    t.same(
        "complete_invocation",
        &["invoke", "complete", &id, "--output", "found it"],
        json!({"invocation_id": mcp_invocation["id"], "status": "completed", "output": "found it"}),
        0,
    );
    t.same(
        "track_handoff",
        &["handoff", "track", "analyst", "orchestrator", "--summary", "read the flow"],
        json!({"from_agent": "analyst", "to_agent": "orchestrator", "context": {"summary": "read the flow"}}),
        0,
    );
    let (parallel, mcp_parallel) = t.both(
        "start_parallel_execution",
        &[
            "parallel", "start", "--agent", "analyst=one view", "--agent", "qa=another view",
            "--strategy", "merge",
        ],
        json!({"agents": [{"agent": "analyst", "prompt": "one view"}, {"agent": "qa", "prompt": "another view"}],
               "aggregation_strategy": "merge"}),
        0,
    );
    let parallel_id = parallel["parallel_id"].as_str().unwrap().to_string();
    t.same(
        "aggregate_parallel_results",
        &["parallel", "aggregate", &parallel_id],
        json!({"parallel_id": mcp_parallel["parallel_id"]}),
        0,
    );

    // The supervised team: an exec team drains what is ready on each twin, then its records
    // are read, and a waiting team is stopped.
    let mut added = None;
    for p in [&t.cli, &t.mcp_project] {
        let task = p.json(&["leader", "add-task", "Team work"]);
        added = task["task"]["id"].as_str().map(str::to_string);
        p.ok(&[
            "team",
            "up",
            "--no-worktree",
            "--prefix",
            "tm",
            "--exec",
            "echo team work",
        ]);
    }
    let team = t.same("team_status", &["team", "status"], json!({}), 0);
    assert_eq!(team["workers"][0]["name"], "tm1", "{team}");
    let task = added.unwrap();
    let transcript = t.same(
        "team_transcript",
        &["team", "logs", &task],
        json!({"task": task}),
        0,
    );
    assert_eq!(transcript["attempt"]["end"], "completed", "{transcript}");
    let started = t.same(
        "team_up",
        &[
            "team",
            "up",
            "--detach",
            "--stay",
            "--no-worktree",
            "--prefix",
            "st",
            "--exec",
            "true",
        ],
        json!({"stay": true, "no_worktree": true, "prefix": "st", "exec": "true"}),
        0,
    );
    assert_eq!(started["names"], json!(["st1"]), "{started}");
    assert_eq!(started["profile"], "exec", "{started}");
    let paused = t.same(
        "team_pause",
        &["team", "pause", "st1"],
        json!({"worker": "st1"}),
        0,
    );
    assert_eq!(
        (&paused["workers"], &paused["paused"]),
        (&json!(["st1"]), &json!(true)),
        "{paused}"
    );
    let resumed = t.same("team_resume", &["team", "resume"], json!({}), 0);
    assert_eq!(
        (&resumed["workers"], &resumed["paused"]),
        (&json!(["st1"]), &json!(false)),
        "{resumed}"
    );
    let stopped = t.same(
        "team_stop",
        &["team", "stop", "--now"],
        json!({"now": true}),
        0,
    );
    assert_eq!(stopped["workers"], json!(["st1"]), "{stopped}");
    support::eventually("the MCP twin's team stopped", || {
        t.mcp_project.json(&["team", "status"])["supervisor"].is_null()
    });

    // The lead in the loop: a message, the inbox, an acknowledgement; a question that nobody
    // answers in time; one the lead answers while its agent waits.
    let sent = t.same(
        "message_send",
        &[
            "message",
            "send",
            "lead",
            "Status",
            "half done",
            "--as",
            "cc1",
        ],
        json!({"to": "lead", "subject": "Status", "body": "half done", "from": "cc1"}),
        0,
    );
    assert_eq!(sent["id"], "m-1", "{sent}");
    let inbox = t.same("inbox_read", &["inbox"], json!({}), 0);
    assert_eq!(inbox["messages"][0]["body"], "half done", "{inbox}");
    t.same(
        "message_ack",
        &["message", "ack", "m-1"],
        json!({"ids": ["m-1"]}),
        0,
    );
    let unanswered = t.same(
        "ask_lead",
        &["ask", "Anyone?", "--agent", "cc1", "--timeout", "1"],
        json!({"question": "Anyone?", "agent": "cc1", "timeout_seconds": 1}),
        5,
    );
    assert_eq!(unanswered["answered"], false, "{unanswered}");
    let asking: Vec<support::Background> = [&t.cli, &t.mcp_project]
        .iter()
        .map(|p| p.spawn(&["ask", "Go?", "--agent", "cc1", "--timeout", "60"]))
        .collect();
    for p in [&t.cli, &t.mcp_project] {
        p.json(&["inbox", "--wait", "--timeout", "60"]);
    }
    let answered = t.same(
        "answer_question",
        &["answer", "q-2", "yes"],
        json!({"id": "q-2", "answer": "yes"}),
        0,
    );
    assert_eq!(answered["state"]["answer"], "yes", "{answered}");
    for ask in asking {
        let (code, out, err) = ask.finish();
        assert_eq!((code, out.trim()), (Some(0), "yes"), "{err}");
    }

    // The permission prompt: a file inside the project is allowed by the policy's rule for
    // the project, on each twin the same.
    let verdict = t.same(
        "approve_tool_call",
        &[
            "approve",
            "Read",
            "--input",
            r#"{"file_path":"README.md"}"#,
            "--agent",
            "cc1",
        ],
        json!({"tool_name": "Read", "input": {"file_path": "README.md"}, "agent": "cc1"}),
        0,
    );
    assert_eq!(verdict["behavior"], "allow", "{verdict}");

    // Reviewing: a task worked in its worktree, committed and completed on each twin alike.
    for p in [&t.cli, &t.mcp_project] {
        p.ok(&["leader", "add-task", "Review me", "--id", "rv"]);
        let claimed = p.json(&["worker", "claim", "w9", "--task", "rv", "--worktree"]);
        let tree = std::path::PathBuf::from(claimed["worktree"]["path"].as_str().unwrap());
        std::fs::write(tree.join("rv.txt"), "one\ntwo\n").unwrap();
        support::git(&tree, &["add", "rv.txt"]);
        support::git(&tree, &["commit", "-q", "-m", "rv"]);
        p.ok(&["worker", "start", "w9", "rv"]);
        p.ok(&["worker", "complete", "w9", "rv", "wrote rv.txt"]);
        std::fs::write(
            p.coordination().join("review.toml"),
            "check = \"test -s rv.txt\"\n",
        )
        .unwrap();
    }
    let review = t.same("task_review", &["review", "rv"], json!({"task": "rv"}), 0);
    assert_eq!(review["files"][0]["path"], "rv.txt", "{review}");
    t.same(
        "review_comment",
        &[
            "review", "comment", "rv", "--file", "rv.txt", "--line", "2", "Three?",
        ],
        json!({"task": "rv", "file": "rv.txt", "line": 2, "text": "Three?"}),
        0,
    );
    let checked = t.same(
        "review_check",
        &["review", "check", "rv"],
        json!({"task": "rv"}),
        0,
    );
    assert_eq!(checked["check"]["passed"], true, "{checked}");
    let sent = t.same(
        "review_request_changes",
        &["review", "request-changes", "rv"],
        json!({"task": "rv"}),
        0,
    );
    assert_eq!(
        sent["task"]["status"], "claimed",
        "back to its worker: {sent}"
    );

    // A plan's task, proposed, then approved.
    let proposed = t.same(
        "task_add",
        &[
            "leader",
            "add-task",
            "Planned",
            "--id",
            "planned",
            "--proposed",
        ],
        json!({"description": "Planned", "id": "planned", "proposed": true}),
        0,
    );
    assert_eq!(proposed["task"]["status"], "proposed", "{proposed}");
    let approved = t.same(
        "task_approve",
        &["leader", "approve", "planned"],
        json!({"tasks": ["planned"]}),
        0,
    );
    assert_eq!(approved["tasks"][0]["status"], "available", "{approved}");
    let written = t.same(
        "plan_write",
        &["leader", "write-plan", "# Plan\n\nA, then B."],
        json!({"text": "# Plan\n\nA, then B."}),
        0,
    );
    assert_eq!(written["by"], "lead", "{written}");
    let report = t.same("team_report", &["team", "report"], json!({}), 0);
    assert!(report["run"]["tasks"].as_u64().unwrap() > 0, "{report}");
    let waiting = t.same("review_waiting", &["review", "waiting"], json!({}), 0);
    assert!(waiting["tasks"].is_array(), "{waiting}");

    // Every operation in the catalogue was compared.
    let listed = t.mcp.request("tools/list", json!({}));
    let mut missing: Vec<String> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap().to_string())
        .filter(|name| !name.starts_with("coordinator_") && !t.compared.contains(&name.as_str()))
        .collect();
    missing.sort();
    assert!(missing.is_empty(), "not compared: {missing:?}");
    t.mcp.close();
}
