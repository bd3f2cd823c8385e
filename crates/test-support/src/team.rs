//! A team of real agent CLIs under `baton team up`, driven and checked the same way whichever
//! agent it runs: the [`committer`] model (commit the task's file with the shell, report the
//! task, stop) and [`check_done`], which reads back each task's board entry, branch,
//! transcript, tokens and cost.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::claude::{Host, assignment, tool};
use crate::scripted_api::{INPUT_TOKENS, OUTPUT_TOKENS, Reply, Script, exchanges, tool_names};

/// The model of a team worker: commit the task's file with the shell, report the task with
/// Baton's MCP tool when the agent has it and with the `baton` command when not, stop. The
/// agent's side requests (titles, summaries: no shell offered) get plain text.
pub fn committer() -> Script {
    Arc::new(|request: &Value| {
        let offered = tool_names(request);
        let Some((task, agent)) =
            assignment(request).filter(|_| offered.iter().any(|n| n == "Bash"))
        else {
            return Reply::Text("ok".into());
        };
        let done = exchanges(request);
        let bash = |command: String| Reply::Tool {
            name: "Bash".into(),
            input: json!({"command": command, "description": "the task's work"}),
        };
        match done.as_slice() {
            [] => bash(format!(
                "printf 'work of %s by %s\\n' {task} {agent} > {task}.txt && git add {task}.txt && git commit -qm '{task} by {agent}'"
            )),
            [first] if !first.is_error => {
                if offered.iter().any(|n| n == "mcp__baton__task_complete") {
                    tool(
                        "task_complete",
                        json!({"agent": agent, "task": task,
                               "summary": format!("{task} written by {agent}"),
                               "modified": [format!("{task}.txt")]}),
                    )
                } else {
                    bash(format!(
                        "baton worker complete {agent} {task} '{task} written by {agent}' --modified {task}.txt"
                    ))
                }
            }
            [.., last] if last.is_error => Reply::Text(format!("Stopping: {}", last.result)),
            _ => Reply::Text(format!("Done with {task}.")),
        }
    })
}

/// Whether `request` is of the session resumed after its supervisor was killed (the resume
/// prompt Baton gives).
pub fn restarted(request: &Value) -> bool {
    request["messages"]
        .to_string()
        .contains("Baton restarted you")
}

/// `baton --json team up ARGS` to its end, expected to succeed with no worker in error; its
/// report.
pub fn team_up(host: &Host, args: &[&str]) -> Value {
    let mut all = vec!["--json", "team", "up"];
    all.extend(args);
    let out = host.baton(&all).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert!(report["errors"].as_array().unwrap().is_empty(), "{report}");
    report
}

/// Checks on `board` (the project's `tasks.json`) that [`committer`] workers did each of
/// `tasks` once: done by a worker `worker`
/// accepts, reported with its summary, one commit on `baton/TASK`, the transcript holding
/// exactly `calls` each with a result, the session named, three requests to the model (the
/// command, the report, the last words) whose scripted usage is the attempt's tokens, and
/// `cost_per_request` for each as its cost. Returns the tasks' cost together.
pub fn check_done(
    host: &Host,
    board: &Value,
    requests: &[Value],
    tasks: &[String],
    worker: &dyn Fn(&str) -> bool,
    calls: [&str; 2],
    cost_per_request: f64,
) -> f64 {
    let mut total = 0.0;
    for id in tasks {
        let t = board["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["id"] == id.as_str())
            .unwrap();
        assert_eq!(t["status"], "done", "{t}");
        assert_eq!(t["attempts"], 1, "claimed once: {t}");
        let agent = t["claimed_by"].as_str().unwrap();
        assert!(worker(agent), "{t}");
        assert_eq!(
            t["result"]["output"],
            format!("{id} written by {agent}"),
            "{t}"
        );
        let branch = &t["result"]["branch"];
        assert_eq!(branch["name"], format!("baton/{id}"), "{t}");
        let commits = branch["commits"].as_array().unwrap();
        assert_eq!(commits.len(), 1, "{t}");
        assert_eq!(commits[0]["subject"], format!("{id} by {agent}"), "{t}");

        // The transcript holds the agent's own tool calls, each with a result.
        let log = host.baton_json(&["--json", "team", "logs", id]);
        let events = log["events"].as_array().unwrap();
        let called: Vec<&str> = events
            .iter()
            .filter(|e| e["kind"] == "tool_call")
            .map(|e| e["name"].as_str().unwrap())
            .collect();
        assert_eq!(called, calls, "{log}");
        let results = events
            .iter()
            .filter(|e| e["kind"] == "tool_result" && e["is_error"] == false)
            .count();
        assert_eq!(results, 2, "{log}");
        assert_eq!(log["attempt"]["end"], "completed", "{log}");
        assert!(log["attempt"]["session_id"].is_string(), "{log}");

        // Tokens as the agent reported them: the scripted usage of each request it made.
        let asked = requests
            .iter()
            .filter(|r| assignment(r).is_some_and(|(task, _)| &task == id))
            .count() as u64;
        assert_eq!(asked, 3, "the command, the report, the last words: {id}");
        let usage = &log["attempt"]["usage"];
        assert_eq!(usage["input_tokens"], INPUT_TOKENS * asked, "{log}");
        assert_eq!(usage["output_tokens"], OUTPUT_TOKENS * asked, "{log}");
        let cost = usage["cost_usd"].as_f64().unwrap();
        let implied = asked as f64 * cost_per_request;
        assert!((cost - implied).abs() < 1e-9, "{id}: {cost} != {implied}");
        total += cost;
    }
    total
}

/// Starts `baton team up --agent AGENT` on `host` and kills its supervisor (SIGKILL) once a
/// process named `marker` runs and the agent has saved the call that started it in its
/// session: the agent's long step, which the killed team leaves behind for a second `team up`
/// to resume past (a kill before the save would resume a session without the call). Panics
/// with the task's transcript when that does not happen within a minute.
pub fn kill_team_during_long_step(host: &Host, agent: &str, marker: &str, options: &[&str]) {
    let mut args = vec!["team", "up", "--agent", agent];
    args.extend(options);
    let first = crate::Background::from_command(host.baton(&args));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !(crate::claude::process_runs(marker) && host.saved_session_holds(marker)) {
        if std::time::Instant::now() > deadline {
            let log = host.baton(&["team", "logs", "task-1"]).output().unwrap();
            panic!(
                "the long step never ran: {}",
                String::from_utf8_lossy(&log.stdout)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(50)); // retry until the deadline
    }
    crate::kill(first.pid(), "KILL");
    drop(first);
}

/// The question a planned team (`team up --json --goal`, its plan reviewed) asks the lead:
/// waits for its plan step "asked" on the team's output and returns the question's id.
pub fn plan_question(team: &mut crate::Background) -> String {
    let line = team.wait_stdout("\"step\":\"asked\"");
    let event: Value = serde_json::from_str(&line).unwrap();
    event["detail"].as_str().unwrap().to_string()
}

/// A `--json team up` waited for to its end: its exit code, the report its last line holds,
/// and everything it printed.
pub fn finished(team: crate::Background) -> (Option<i32>, Value, String) {
    let (code, stdout, stderr) = team.finish();
    let report = serde_json::from_str(stdout.lines().last().unwrap_or("null"))
        .unwrap_or_else(|e| panic!("no report ({e}): {stdout}\n{stderr}"));
    (code, report, stdout)
}

/// Task `id`'s row of a `team report --json` answer.
pub fn report_row(report: &Value, id: &str) -> Value {
    report["tasks"]
        .as_array()
        .unwrap_or_else(|| panic!("no tasks in {report}"))
        .iter()
        .find(|t| t["task"] == id)
        .cloned()
        .unwrap_or_else(|| panic!("no {id} in {report}"))
}

/// A git project whose planner profile is the command `planner` (`extra`: more of the
/// profile's settings, TOML lines).
pub fn project_planned_by(p: &crate::Project, planner: &str, extra: &str) {
    crate::repository(p.path());
    std::fs::create_dir_all(p.coordination().join("team")).unwrap();
    std::fs::write(
        p.coordination().join("team/profiles.toml"),
        format!("[profiles.planner]\nkind = \"exec\"\n{extra}command = '''\n{planner}'''\n"),
    )
    .unwrap();
}

/// What a planner agent's prompt names: its plan task (`Goal (plan-1): …`) and itself (`You
/// are "planner"`, `HOST-planner` on a store shared across machines).
pub fn planner_seat(prompt: &str) -> (String, String) {
    let between = |before: &str, after: char| {
        prompt
            .split(before)
            .nth(1)
            .and_then(|rest| rest.split(after).next())
            .unwrap_or_default()
            .to_string()
    };
    (between("Goal (", ')'), between("You are \"", '"'))
}
