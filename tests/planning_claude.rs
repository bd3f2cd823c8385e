//! A team that plans itself with the real Claude Code in the planner's seat and the workers',
//! its model replaced by a scripted Messages API on loopback: `team up --agent claude --goal`
//! starts the planner in its sandbox (the project read-only, no worktree); through Baton's MCP
//! tools it writes the master plan, adds five tasks with dependencies and acceptance, and
//! reports its plan task; the plan waits for the lead, who approves it with one command; Claude
//! Code workers do the tasks in their worktrees and the merge queue lands each; `team up` exits
//! 0 once the plan is carried out.

use baton_test_support as support;

use std::sync::Arc;

use serde_json::{Value, json};
use support::claude::{Host, tool};
use support::scripted_api::{Reply, Script, ScriptedApi, exchanges, prompt_text};
use support::team::committer;
use support::{Background, Project};

/// The plan: (id, dependencies).
const PLAN: [(&str, &[&str]); 5] = [
    ("t1", &[]),
    ("t2", &["t1"]),
    ("t3", &["t1"]),
    ("t4", &["t2", "t3"]),
    ("t5", &["t4"]),
];

/// The planner's turns, then each worker's as [`committer`] plays them.
fn planner_then_workers() -> Script {
    let workers = committer();
    Arc::new(move |request: &Value| {
        let prompt = prompt_text(request);
        if !prompt.contains("the planner of a team") {
            return workers(request);
        }
        let plan = prompt
            .split("Goal (")
            .nth(1)
            .and_then(|rest| rest.split(')').next())
            .unwrap_or("plan-1")
            .to_string();
        let done = exchanges(request);
        if let Some(last) = done.last().filter(|e| e.is_error) {
            return Reply::Text(format!("Stopping: {}", last.result));
        }
        match done.len() {
            0 => tool(
                "plan_write",
                json!({"text": "# Plan\n\nt1 first; t2 and t3 on it; t4 on both; t5 last."}),
            ),
            n @ 1..=5 => {
                let (id, deps) = PLAN[n - 1];
                tool(
                    "task_add",
                    json!({
                        "id": id,
                        "description": format!("Write {id}.txt"),
                        "files": [format!("{id}.txt")],
                        "depends": deps,
                        "acceptance": format!("{id}.txt exists on the branch"),
                    }),
                )
            }
            6 => tool(
                "task_complete",
                json!({"agent": "planner", "task": plan, "summary": "five tasks, t1 to t5"}),
            ),
            _ => Reply::Text("Planned.".into()),
        }
    })
}

#[test]
fn claude_code_plans_the_goal_the_lead_approves_and_claude_code_workers_land_it() {
    let p = Project::init();
    support::repository(p.path());
    let api = ScriptedApi::start(planner_then_workers());
    let host = Host::new(p.path(), &api);
    let mut team = Background::from_command(host.baton(&[
        "--json",
        "team",
        "up",
        "--workers",
        "2",
        "--agent",
        "claude",
        "--merge",
        "auto",
        "--goal",
        "Write five files",
    ]));
    let question = support::team::plan_question(&mut team);
    // The planner's plan, on the board as it wrote it: proposed, of its plan, with acceptance.
    let board = host.baton_json(&["--json", "leader", "status"]);
    for (id, deps) in PLAN {
        let task = board["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["id"] == id)
            .unwrap_or_else(|| panic!("no {id}: {board}"));
        assert_eq!(task["status"], "proposed", "{task}");
        assert_eq!(task["plan"], "plan-1", "{task}");
        assert_eq!(task["dependencies"], json!(deps), "{task}");
        assert!(task["acceptance"].as_str().unwrap().contains(id), "{task}");
    }
    // Its tools were the planner's: plan_write and task_add were listed to it.
    let planner_requests: Vec<Value> = api
        .requests()
        .into_iter()
        .filter(|r| prompt_text(r).contains("the planner of a team"))
        .collect();
    let offered = support::scripted_api::tool_names(&planner_requests[0]);
    for name in ["mcp__baton__plan_write", "mcp__baton__task_add"] {
        assert!(offered.iter().any(|n| n == name), "{name} in {offered:?}");
    }
    assert!(
        !offered.iter().any(|n| n == "mcp__baton__task_approve"),
        "{offered:?}"
    );

    host.baton_json(&["--json", "answer", &question, "approve"]);
    let (code, stdout, stderr) = team.finish();
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let report: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(report["plan"]["carried_out"], true, "{report}");
    assert_eq!(
        report["verdict"]["merged"].as_array().unwrap().len(),
        5,
        "{report}"
    );
    for (id, _) in PLAN {
        assert!(p.path().join(format!("{id}.txt")).is_file(), "{id} landed");
    }
    // The master plan is the planner's.
    let plan = std::fs::read_to_string(p.coordination().join("master-plan.md")).unwrap();
    assert!(plan.starts_with("# Plan\n\nt1 first"), "{plan}");
}
