//! The outcomes harness (`bench/outcomes/run.py`) smoke-tested end to end: the real Claude Code
//! in every seat, its model a scripted API on loopback that solves the `roman` repository's
//! goal, once as one agent given the whole goal and once as a team (a planner that plans one
//! task, a worker, a judge that approves it and finds the goal met). The harness checks the
//! hidden tests out after each run and prints its figures; this test reads them. The numbers
//! mean something only with real models: here it proves the harness runs and counts.

use baton_test_support as support;

use std::sync::Arc;

use serde_json::{Value, json};
use support::claude::{Host, assignment, tool};
use support::scripted_api::{Reply, Script, ScriptedApi, exchanges, prompt_text};

/// A roman.py that passes the hidden tests.
const ROMAN: &str = r#"VALUES = [(1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
          (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")]


def to_roman(n):
    if not isinstance(n, int) or not 1 <= n <= 3999:
        raise ValueError(f"{n!r} is not from 1 to 3999")
    out = []
    for value, letters in VALUES:
        while n >= value:
            out.append(letters)
            n -= value
    return "".join(out)


def from_roman(text):
    if not isinstance(text, str) or not text:
        raise ValueError("not a Roman numeral")
    n, rest = 0, text
    for value, letters in VALUES:
        while rest.startswith(letters):
            n += value
            rest = rest[len(letters):]
    if rest or not 1 <= n <= 3999 or to_roman(n) != text:
        raise ValueError(f"{text!r} is not a Roman numeral")
    return n
"#;

/// The planner plans one task, and hears its report; the judge approves and finds the goal met; any worker writes
/// [`ROMAN`], commits it and reports its task.
fn solver() -> Script {
    Arc::new(|request: &Value| {
        let prompt = prompt_text(request);
        let done = exchanges(request);
        if let Some(last) = done.last().filter(|e| e.is_error) {
            return Reply::Text(format!("Stopping: {}", last.result));
        }
        if prompt.contains("the planner of a team") {
            let plan = prompt
                .split("Goal (")
                .nth(1)
                .and_then(|rest| rest.split(')').next())
                .unwrap_or("plan-1")
                .to_string();
            // News of the plan (r1's report) changes nothing.
            let news = prompt.contains("News of your plan");
            return match done.len() + usize::from(news) {
                0 => tool(
                    "task_add",
                    json!({"id": "r1", "description": "Write roman.py", "files": ["roman.py"],
                           "acceptance": "to_roman and from_roman, both ways"}),
                ),
                1 => tool(
                    "task_complete",
                    json!({"agent": "planner", "task": plan, "summary": "one task"}),
                ),
                _ => Reply::Text("Planned.".into()),
            };
        }
        if prompt.contains("the judge of a team") {
            return Reply::Text("VERDICT: met\nVERDICT: approve".into());
        }
        let Some((task, agent)) = assignment(request) else {
            return Reply::Text("ok".into());
        };
        match done.len() {
            0 => Reply::Tool {
                name: "Bash".into(),
                input: json!({
                    "command": format!(
                        "cat > roman.py <<'PY'\n{ROMAN}PY\ngit add roman.py && git commit -qm roman"
                    ),
                    "description": "write roman.py",
                }),
            },
            1 => tool(
                "task_complete",
                json!({"agent": agent, "task": task, "summary": "roman.py written",
                       "created": ["roman.py"]}),
            ),
            _ => Reply::Text(format!("Done with {task}.")),
        }
    })
}

#[test]
fn the_harness_runs_one_agent_and_a_team_on_a_goal_and_counts_the_hidden_tests() {
    let folder = tempfile::tempdir().unwrap();
    let api = ScriptedApi::start(solver());
    let host = Host::new(folder.path(), &api);
    let harness = support::source_root().join("bench/outcomes/run.py");
    let mut command = std::process::Command::new("python3");
    host.environment(&mut command);
    command.arg(&harness).args([
        "--repos",
        "roman",
        "--agent",
        "claude",
        "--workers",
        "1",
        "--json",
        "--baton",
    ]);
    command.arg(support::baton_bin());
    let out = command.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{out:?}");
    let results: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{stderr}", String::from_utf8_lossy(&out.stdout)));
    let results = results.as_array().unwrap();
    assert_eq!(results.len(), 2, "{results:?}");
    for (result, mode) in results.iter().zip(["single", "team"]) {
        assert_eq!(
            (&result["repo"], &result["mode"], &result["exit_code"]),
            (&json!("roman"), &json!(mode), &json!(0)),
            "{result}\n{stderr}"
        );
        assert_eq!(
            (&result["hidden_passed"], &result["hidden_total"]),
            (&json!(4), &json!(4)),
            "{result}\n{stderr}"
        );
        assert!(result["wall_secs"].as_f64().unwrap() > 0.0, "{result}");
        assert!(result["cost_usd"].as_f64().unwrap() > 0.0, "{result}");
    }
    // One agent spends nothing on planning and judging; the team does.
    assert_eq!(results[0]["coordination_share"], json!(0.0), "{results:?}");
    let share = results[1]["coordination_share"].as_f64().unwrap();
    assert!(share > 0.0 && share < 1.0, "{share}");
    assert!(
        stderr.contains("roman (team): 4/4 hidden tests passed"),
        "{stderr}"
    );
}
