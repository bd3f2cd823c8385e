//! A team that plans, works and judges itself with real agent CLIs in every seat, their model
//! replaced by a scripted API on loopback: `team up --agent claude --goal … --judge claude`
//! starts Claude Code as the planner in its sandbox (the project read-only, no worktree);
//! through Baton's MCP tools it writes the master plan, adds five tasks with dependencies and
//! acceptance, and reports its plan task; the plan waits for the lead, who approves it with one
//! command (or, with `--plan auto`, no one). Claude Code workers do the tasks in their worktrees;
//! the judge (Claude Code, or Codex) reads each before the merge queue lands it and asks for
//! changes on t3 once, which its worker makes on its branch; once every task has landed the
//! judge finds the goal met, and `team up` exits 0. No other lead command.

use baton_test_support as support;

use std::sync::Arc;

use serde_json::{Value, json};
use support::claude::{Host, tool};
use support::scripted_api::{Reply, Script, ScriptedApi, exchanges, prompt_text};
use support::team::committer;
use support::{Background, Project};

support::on_both_stores!(claude_code_plans_works_and_judges_and_the_lead_approves_once);

#[test]
fn with_plan_auto_and_codex_as_the_judge_no_one_steps_in() {
    planned_worked_and_judged(Project::init(), "codex", true);
}

fn claude_code_plans_works_and_judges_and_the_lead_approves_once(p: Project) {
    planned_worked_and_judged(p, "claude", false);
}

/// The plan: (id, dependencies).
const PLAN: [(&str, &[&str]); 5] = [
    ("t1", &[]),
    ("t2", &["t1"]),
    ("t3", &["t1"]),
    ("t4", &["t2", "t3"]),
    ("t5", &["t4"]),
];

/// What the judge asks of t3 (a comment on its line), which its worker then does.
const ASKED: &str = "add a line that says fixed";

/// The planner's turns, the judge's, then each worker's as [`committer`] plays them (a worker
/// sent back with the judge's comment adds the line it asks for).
fn the_team() -> Script {
    let workers = committer();
    Arc::new(move |request: &Value| {
        let prompt = prompt_text(request);
        if prompt.contains("the planner of a team") {
            return planner(request, &prompt);
        }
        if prompt.contains("the judge of a team") {
            return judge(&prompt);
        }
        if prompt.contains(ASKED) && prompt.contains("claimed task t3") {
            return fixer(request);
        }
        workers(request)
    })
}

fn planner(request: &Value, prompt: &str) -> Reply {
    let (plan, name) = support::team::planner_seat(prompt);
    let done = exchanges(request);
    if let Some(last) = done.last().filter(|e| e.is_error) {
        return Reply::Text(format!("Stopping: {}", last.result));
    }
    // News of the plan (reports, the judge's return of t3) changes nothing.
    if prompt.contains("News of your plan") {
        return match done.len() {
            0 => tool(
                "task_complete",
                json!({"agent": name, "task": plan, "summary": "the plan holds"}),
            ),
            _ => Reply::Text("The plan holds.".into()),
        };
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
            json!({"agent": name, "task": plan, "summary": "five tasks, t1 to t5"}),
        ),
        _ => Reply::Text("Planned.".into()),
    }
}

/// The judge: the goal met; t3 sent back once, until its diff has the line asked for; the rest
/// approved.
fn judge(prompt: &str) -> Reply {
    if prompt.contains("Decide whether the goal is met") {
        return Reply::Text("All five files are in the lead's branch.\nVERDICT: met".into());
    }
    if prompt.contains("Task t3:") && !prompt.contains("+fixed") {
        return Reply::Text(format!(
            "t3.txt:1: {ASKED}\nt3 is not done yet.\nVERDICT: changes"
        ));
    }
    Reply::Text("It does what the task asks.\nVERDICT: approve".into())
}

/// t3's worker, sent back by the judge: adds the line, commits, reports.
fn fixer(request: &Value) -> Reply {
    match exchanges(request).as_slice() {
        [] => Reply::Tool {
            name: "Bash".into(),
            input: json!({
                "command": "echo fixed >> t3.txt && git commit -qam 'fix t3'",
                "description": "the judge's change",
            }),
        },
        [first] if !first.is_error => {
            let (_, agent) = support::claude::assignment(request).expect("a worker's prompt");
            tool(
                "task_complete",
                json!({"agent": agent, "task": "t3", "summary": "t3 says fixed",
                       "modified": ["t3.txt"]}),
            )
        }
        [.., last] if last.is_error => Reply::Text(format!("Stopping: {}", last.result)),
        _ => Reply::Text("Done with t3.".into()),
    }
}

fn planned_worked_and_judged(p: Project, judge_agent: &str, auto: bool) {
    support::repository(p.path());
    std::fs::create_dir_all(p.coordination().join("team")).unwrap();
    std::fs::write(
        p.coordination().join("team/profiles.toml"),
        "[profiles.codex.sandbox]\nenv = [\"SCRIPTED_API_KEY\"]\n",
    )
    .unwrap();
    let api = ScriptedApi::start(the_team());
    let host = Host::new(p.path(), &api);
    let baton = |args: &[&str]| {
        let mut command = host.baton(args);
        command.envs(p.store_env());
        command
    };
    let mut args = vec![
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
        "--judge",
        judge_agent,
    ];
    if auto {
        args.extend(["--plan", "auto"]);
    }
    let mut team = Background::from_command(baton(&args));
    if !auto {
        let question = support::team::plan_question(&mut team);
        // The planner's plan, on the board as it wrote it: proposed, of its plan, with
        // acceptance.
        let board = p.json(&["--json", "leader", "status"]);
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
        p.json(&["--json", "answer", &question, "approve"]);
    }
    let (code, stdout, stderr) = team.finish();
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let report: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(
        (&report["plan"]["carried_out"], &report["plan"]["goal_met"]),
        (&json!(true), &json!(true)),
        "{report}"
    );
    assert_eq!(
        report["verdict"]["merged"].as_array().unwrap().len(),
        5,
        "{report}"
    );
    for (id, _) in PLAN {
        assert!(p.path().join(format!("{id}.txt")).is_file(), "{id} landed");
    }
    assert!(
        std::fs::read_to_string(p.path().join("t3.txt"))
            .unwrap()
            .ends_with("fixed\n"),
        "t3 landed with the judge's change"
    );
    // The planner's tools were the planner's; the master plan is its.
    let planner_requests: Vec<Value> = api
        .requests()
        .into_iter()
        .filter(|r| prompt_text(r).contains("the planner of a team"))
        .collect();
    let offered = support::scripted_api::tool_names(&planner_requests[0]);
    // It heard of the judge's return of t3 as it came, and of every report.
    let prompts: Vec<String> = planner_requests.iter().map(prompt_text).collect();
    assert!(
        prompts.iter().any(|p| p.contains("\n- t3 (return 1): ")),
        "{prompts:#?}"
    );
    for (id, _) in PLAN {
        assert!(
            prompts.iter().any(|p| p
                .split("Done and reported since your last session: ")
                .nth(1)
                .is_some_and(|rest| rest.contains(id))),
            "{id}'s report: {prompts:#?}"
        );
    }
    for name in ["mcp__baton__plan_write", "mcp__baton__task_add"] {
        assert!(offered.iter().any(|n| n == name), "{name} in {offered:?}");
    }
    assert!(
        !offered.iter().any(|n| n == "mcp__baton__task_approve"),
        "{offered:?}"
    );
    if !p.on_postgres() {
        let plan = std::fs::read_to_string(p.coordination().join("master-plan.md")).unwrap();
        assert!(plan.starts_with("# Plan\n\nt1 first"), "{plan}");
    }
    // What it cost, as the records hold it: one round of the judge's, on t3; a session of
    // the judge's for each judgement (six tasks' and the goal's); no lead intervention but
    // the one approval.
    let cost = p.json(&["--json", "team", "report"]);
    let row = |id: &str| support::team::report_row(&cost, id);
    assert_eq!(
        (&row("t3")["judge_rounds"], &row("t3")["judge_sessions"]),
        (&json!(1), &json!(2)),
        "{cost}"
    );
    assert_eq!(row("plan-1")["judge_sessions"], 1, "{cost}");
    let judging = &cost["roles"][2];
    assert_eq!(
        (&judging["role"], &judging["attempts"]),
        (&json!("judging"), &json!(7)),
        "{cost}"
    );
    assert_eq!(
        cost["run"]["lead_interventions"],
        if auto { 0 } else { 1 },
        "{cost}"
    );
}
