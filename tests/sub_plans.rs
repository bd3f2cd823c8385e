//! Plans within plans: a planner hands a large slice of the goal to a sub-plan (a task of kind
//! `plan` in its plan); once the sub-plan's dependencies are done the team's planner plans the
//! slice in a session of its own, its tasks approved by the lead like the plan's, and the plan
//! is carried out once every task of its tree has landed. A plan deeper than the limit is
//! refused, and the refusal is in the planner's transcript.

use baton_test_support as support;

use serde_json::{Value, json};
use support::team::{finished, plan_question, project_planned_by};
use support::{Background, Project};

support::on_both_stores!(a_slice_of_the_goal_is_planned_apart_once_its_dependencies_are_done);

/// The goal's planner: the API, then the UI planned apart after it. The UI's: two parts, and
/// its theme planned apart again. The theme's: its colours, and a plan one deeper, refused.
const PLANNER: &str = r##"set -e
case "$BATON_TASK_ID" in
  plan-1)
    baton leader add-task "The API" --id api --files api.txt
    baton leader add-task "The UI, planned once the API is there" --id ui --sub-plan --depends api ;;
  ui)
    test -f api.txt || { echo "the API is not in the project yet" >&2; exit 1; }
    baton leader add-task "UI part a" --id ui-a --files ui-a.txt
    baton leader add-task "UI part b" --id ui-b --files ui-b.txt --depends ui-a
    baton leader add-task "The UI's theme, planned apart" --id theme --sub-plan ;;
  theme)
    baton leader add-task "The theme's colours" --id colours --files colours.txt
    if baton leader add-task "Deeper still" --id deeper --sub-plan; then exit 3; fi ;;
esac
"##;

const WRITER: &str = "echo \"$BATON_TASK_ID\" > \"$BATON_TASK_ID.txt\" && git add . && \
     git commit -qm \"$BATON_TASK_ID\"";

fn a_slice_of_the_goal_is_planned_apart_once_its_dependencies_are_done(p: Project) {
    project_planned_by(&p, PLANNER, "");
    // A sub-plan is a team planner's: the lead adding one is refused, and nothing is added.
    let refused = p.run(&[
        "leader",
        "add-task",
        "A slice",
        "--id",
        "slice",
        "--sub-plan",
    ]);
    assert!(!refused.status.success(), "{refused:?}");
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("a sub-plan is a slice of a team's plan"),
        "{refused:?}"
    );
    let mut team = Background::from_command(p.committing(&[
        "--json",
        "team",
        "up",
        "--workers",
        "2",
        "--exec",
        WRITER,
        "--merge",
        "auto",
        "--goal",
        "An app with an API and a UI",
    ]));
    // The goal's plan: the API and the UI's sub-plan, proposed; nobody claims them before the
    // lead approves.
    let question = plan_question(&mut team);
    let ui = p.task("ui");
    assert_eq!(
        (&ui["kind"], &ui["plan"], &ui["status"]),
        (&json!("plan"), &json!("plan-1"), &json!("proposed")),
        "{ui}"
    );
    p.ok(&["answer", &question, "approve"]);
    // The UI is planned once the API has landed (its planner reads api.txt in the project:
    // a sub-plan waits for the merge queue to land its dependencies), and is asked for as a
    // plan of its own.
    let question = plan_question(&mut team);
    assert_eq!(p.task("api")["status"], "done");
    for id in ["ui-a", "ui-b", "theme"] {
        let task = p.task(id);
        assert_eq!(
            (&task["plan"], &task["status"]),
            (&json!("ui"), &json!("proposed")),
            "{task}"
        );
    }
    let inbox = p.ok(&["inbox"]);
    assert!(
        inbox.contains("The plan for \"The UI, planned once"),
        "{inbox}"
    );
    p.ok(&["answer", &question, "approve"]);
    let question = plan_question(&mut team);
    assert_eq!(p.task("colours")["plan"], "theme");
    p.ok(&["answer", &question, "approve"]);

    let (code, report, stdout) = finished(team);
    assert_eq!(code, Some(0), "{stdout}");
    assert_eq!(report["plan"]["carried_out"], true, "{report}");
    assert_eq!(
        report["plan"]["tasks"],
        json!(["api", "ui", "ui-a", "ui-b", "theme", "colours"]),
        "{report}"
    );
    // Every work task landed; the sub-plans are planning, not work: nothing of theirs to land.
    for id in ["api", "ui-a", "ui-b", "colours"] {
        assert!(p.path().join(format!("{id}.txt")).is_file(), "{id} landed");
    }
    assert_eq!(
        report["verdict"]["merged"].as_array().unwrap().len(),
        4,
        "{report}"
    );
    let board = p.json(&["leader", "status"]);
    assert!(
        !board["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["id"] == "deeper"),
        "{board}"
    );
    // The planner's try at a plan three deep was refused, in its transcript.
    let logs = p.ok(&["team", "logs", "theme", "--full"]);
    assert!(logs.contains("the deepest plans go (2)"), "{logs}");
    // The report of the plan counts its whole tree, sub-plans and theirs.
    let cost = p.json(&["--json", "team", "report", "--plan", "plan-1"]);
    for id in ["plan-1", "api", "ui", "ui-a", "ui-b", "theme", "colours"] {
        support::team::report_row(&cost, id);
    }
    let steps: Vec<Value> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["step"] == "sub_plan")
        .collect();
    assert_eq!(steps.len(), 2, "the UI's and the theme's: {steps:?}");
}
