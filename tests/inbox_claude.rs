//! The lead in the loop with the real Claude Code (npm `@anthropic-ai/claude-code`, pinned in
//! scripts/lib.sh) started by `baton team up --agent claude`, its model replaced by a scripted
//! Messages API on loopback. One agent's session, step by step: a question nobody answers
//! times out with the clear message; a question the lead answers from another process comes
//! back as the tool's result; a message sent to the agent meanwhile reaches its context after
//! that tool call (the PostToolUse hook); a Bash command the policy denies is refused without
//! asking; one the policy does not know is put to the lead, approved, and runs; the task is
//! completed with what the agent learnt, and every decision is recorded with the task.

use baton_test_support as support;

use std::process::Command;
use std::sync::Arc;

use serde_json::{Value, json};
use support::Project;
use support::claude::{Host, tool};
use support::scripted_api::{Reply, ScriptedApi, exchanges, tool_names};

/// The model: each step decided by what the conversation holds so far.
fn asker() -> support::scripted_api::Script {
    Arc::new(|request: &Value| {
        if !tool_names(request)
            .iter()
            .any(|n| n == "mcp__baton__ask_lead")
        {
            return Reply::Text("ok".into());
        }
        let done = exchanges(request);
        let bash = |command: &str| Reply::Tool {
            name: "Bash".into(),
            input: json!({"command": command, "description": "step"}),
        };
        match done.len() {
            0 => tool(
                "ask_lead",
                json!({"question": "Anyone there?", "timeout_seconds": 2, "task": "task-1"}),
            ),
            1 => tool(
                "ask_lead",
                json!({"question": "Which port shall the server use?", "task": "task-1",
                       "choices": ["8080", "9090"]}),
            ),
            2 => bash("rm -rf build"),
            3 => bash("touch approved-by-lead.txt"),
            4 => {
                let outcome: Value = serde_json::from_str(&done[1].result).unwrap_or_default();
                let port = outcome["message"]
                    .as_str()
                    .unwrap_or("no message")
                    .to_string();
                tool(
                    "task_complete",
                    json!({"agent": "cc1", "task": "task-1", "summary": format!("told: {port}")}),
                )
            }
            _ => Reply::Text("Done.".into()),
        }
    })
}

fn baton(host: &Host, args: &[&str]) -> Command {
    let mut command = Command::new(support::baton_bin());
    command.args(args);
    host.environment(&mut command);
    command
}

fn json_of(host: &Host, args: &[&str]) -> Value {
    let out = baton(host, args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_claude_agent_asks_is_answered_gets_a_message_and_is_approved_by_the_lead() {
    let p = Project::init();
    // A git repository, as users' projects are (Claude Code asks for its trust there).
    support::repository(p.path());
    p.ok(&["leader", "add-task", "Pick the server's port"]);
    std::fs::write(
        p.coordination().join("policy.toml"),
        "deny = [\"Bash(rm:*)\"]\nask_timeout_seconds = 120\n",
    )
    .unwrap();
    let api = ScriptedApi::start(asker());
    let host = Host::new(p.path(), &api);
    let team = support::Background::from_command(baton(
        &host,
        &["--json", "team", "up", "--agent", "claude", "--no-worktree"],
    ));

    // The second question (the first timed out unanswered): a message first, then the answer.
    let waiting = |id: &str| {
        support::eventually(&format!("{id} is asked"), || {
            json_of(&host, &["--json", "inbox"])["questions"]
                .as_array()
                .unwrap()
                .iter()
                .any(|q| q["id"] == id)
        })
    };
    waiting("q-2");
    let first = json_of(&host, &["--json", "inbox", "--all"]);
    assert_eq!(first["questions"][0]["state"]["state"], "closed", "{first}");
    baton(
        &host,
        &[
            "message",
            "send",
            "cc1",
            "Heads up",
            "main is red; do not merge",
            "--as",
            "lead",
        ],
    )
    .output()
    .unwrap();
    let answered = json_of(&host, &["--json", "answer", "q-2", "2"]);
    assert_eq!(answered["state"]["answer"], "9090");

    // The approval: the denied rm never reached the lead; the touch did.
    waiting("q-3");
    let inbox = json_of(&host, &["--json", "inbox"]);
    let approval = &inbox["questions"][0];
    assert_eq!(approval["about"]["kind"], "approval", "{inbox}");
    assert_eq!(approval["about"]["tool"], "Bash");
    assert_eq!(
        approval["about"]["input"]["command"],
        "touch approved-by-lead.txt"
    );
    json_of(&host, &["--json", "answer", "q-3", "allow"]);

    let (code, out, err) = team.finish();
    assert_eq!(code, Some(0), "{out}\n{err}");
    let seen: Vec<String> = api
        .requests()
        .iter()
        .map(|r| {
            let steps = exchanges(r);
            format!(
                "{:?}",
                steps
                    .iter()
                    .map(|e| (&e.tool, e.is_error, &e.result))
                    .collect::<Vec<_>>()
            )
        })
        .collect();
    assert!(
        p.path().join("approved-by-lead.txt").is_file(),
        "the approved command ran: {}",
        seen.last().unwrap()
    );
    let board = p.tasks_json();
    assert_eq!(board["tasks"][0]["status"], "done", "{board}");
    assert_eq!(
        board["tasks"][0]["result"]["output"],
        "told: The lead answered: 9090"
    );

    // What the model was sent, step by step.
    let turns: Vec<Value> = api
        .requests()
        .into_iter()
        .filter(|r| tool_names(r).iter().any(|n| n == "mcp__baton__ask_lead"))
        .collect();
    let last = turns.last().unwrap();
    let steps = exchanges(last);
    assert!(
        steps[0]
            .result
            .contains("no answer within 2s; go on with your best judgement"),
        "{:?}",
        steps[0]
    );
    assert!(
        steps[1].result.contains("The lead answered: 9090"),
        "{:?}",
        steps[1]
    );
    assert!(steps[2].is_error, "rm was refused: {:?}", steps[2]);
    assert!(
        steps[2].result.contains("policy denies Bash(rm:*)"),
        "{:?}",
        steps[2]
    );
    assert!(!steps[3].is_error, "{:?}", steps[3]);
    let after_answer = turns
        .iter()
        .find(|r| exchanges(r).len() == 2)
        .expect("a turn after the answer");
    assert!(
        after_answer
            .to_string()
            .contains("main is red; do not merge"),
        "the message reached the agent's context after its tool call"
    );
    let read = json_of(&host, &["--json", "inbox", "--agent", "cc1"]);
    assert_eq!(read["messages"], json!([]), "delivered, so read: {read}");

    let decisions =
        json_of(&host, &["--json", "inbox", "--all", "--task", "task-1"])["decisions"].clone();
    let said: Vec<(bool, String)> = decisions
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["allowed"].as_bool().unwrap(),
                d["call"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        said,
        [
            (false, "Bash: rm -rf build".to_string()),
            (true, "Bash: touch approved-by-lead.txt".to_string())
        ],
        "{decisions}"
    );
    assert!(
        decisions[1]["why"]
            .as_str()
            .unwrap()
            .contains("lead allowed it (q-3)")
    );
}
