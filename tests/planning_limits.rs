//! A planner at a limit of its plan is not cut off but stopped at the lead, who may raise it:
//! the sessions a plan gets, the tasks it may have (asked when the planner is refused one
//! more, the answer heard as news), and the planner's budget (its session ended at its cap).
//! Each question is the lead's alone: the planner, even told to answer the workers'
//! questions, cannot answer its own.

use baton_test_support as support;

use serde_json::{Value, json};
use support::team::{finished, plan_question, project_planned_by};
use support::{Background, Project};

support::on_both_stores!(
    a_planner_at_its_limit_asks_the_lead_who_lets_it_plan_on,
    a_planner_at_its_task_limit_asks_the_lead_who_lets_the_plan_grow,
    a_planner_at_its_budget_asks_the_lead_who_lets_it_go_on,
);

/// The lead's question with id `id`, from the inbox.
fn inbox_question(p: &Project, id: &str) -> Value {
    let inbox = p.json(&["--json", "inbox", "--all"]);
    inbox["questions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["id"] == id)
        .cloned()
        .unwrap_or_else(|| panic!("no {id}: {inbox}"))
}

/// The question a team's `at_limit` progress line names.
fn limit_question(team: &mut Background) -> String {
    let line = team.wait_stdout("\"step\":\"at_limit\"");
    serde_json::from_str::<Value>(&line).unwrap()["detail"]
        .as_str()
        .unwrap()
        .to_string()
}

/// A planner that plans one failing part after another (`f1`, then `f2` once told that `f1`
/// failed, …) and, told that `f6` failed, a part that works.
const ONE_MORE_EACH_TIME: &str = r##"set -e
last=0
for i in 1 2 3 4 5 6 7; do case "$BATON_TASK_HINTS" in *"- f$i: "*) last=$i ;; esac; done
if [ "$last" -ge 6 ]; then
  baton leader add-task "The part that works" --id ok --files ok.txt
else
  n=$((last + 1))
  baton leader add-task "Failing part $n" --id "f$n" --files "f$n.txt"
fi
"##;

const FAILING_F: &str = "case \"$BATON_TASK_ID\" in f*) echo \"$BATON_TASK_ID cannot be done\" >&2; exit 1 ;; esac; \
     echo ok > ok.txt && git add ok.txt && git commit -qm ok";

fn a_planner_at_its_limit_asks_the_lead_who_lets_it_plan_on(p: Project) {
    project_planned_by(&p, ONE_MORE_EACH_TIME, "");
    let mut team = Background::from_command(p.committing(&[
        "--json",
        "team",
        "up",
        "--workers",
        "1",
        "--exec",
        FAILING_F,
        "--goal",
        "Build what can be built",
    ]));
    // Six sessions, each plan approved; each failure sends it back.
    for n in 1..=6 {
        let question = plan_question(&mut team);
        assert_eq!(p.task(&format!("f{n}"))["status"], "proposed");
        p.ok(&["answer", &question, "approve"]);
    }
    // f6 failed: a seventh session is one more than a plan gets, so the lead is asked.
    let question = limit_question(&mut team);
    let asked = inbox_question(&p, &question);
    let text = asked["text"].as_str().unwrap();
    assert!(
        text.contains("has planned plan-1 6 times"),
        "the limit, in words: {text}"
    );
    assert!(text.contains("- f6: "), "why it would plan again: {text}");
    assert_eq!(asked["choices"], json!(["go on", "stop"]), "{asked}");
    assert_eq!(
        asked["about"],
        json!({"kind": "limit", "plan": "plan-1", "limit": "sessions"}),
        "only the lead answers it: {asked}"
    );
    assert_eq!(
        p.task("plan-1")["status"],
        "claimed",
        "it waits for the lead"
    );
    p.ok(&["answer", &question, "go on"]);
    // The seventh session plans the part that works; it lands, and the failures stand.
    let question = plan_question(&mut team);
    assert_eq!(p.task("ok")["status"], "proposed");
    p.ok(&["answer", &question, "approve"]);
    let (code, report, stdout) = finished(team);
    assert_eq!(code, Some(10), "not carried out: {stdout}");
    assert_eq!(
        (&report["plan"]["sessions"], &report["plan"]["carried_out"]),
        (&json!(7), &json!(false)),
        "{report}"
    );
    assert_eq!(p.task("ok")["status"], "done");
}

/// A planner that adds fifty parts and then one more, which is refused: the lead is asked;
/// it tries to answer that question itself. Told that the lead lets the plan grow, it adds
/// the fifty-first.
const FIFTY_AND_ONE: &str = r##"set -e
case "$BATON_TASK_HINTS" in
  *"lets your plan have more tasks"*)
    baton leader add-task "Part 51" --id t51
    exit 0 ;;
esac
i=1
while [ $i -le 50 ]; do baton leader add-task "Part $i" --id "t$i"; i=$((i+1)); done
if out=$(baton leader add-task "Part 51" --id t51 2>&1); then echo "ADDED t51"; exit 1; fi
echo "REFUSED: $out"
q=$(echo "$out" | grep -o 'q-[0-9]*' | head -n 1)
if baton answer "$q" "go on"; then echo "ANSWERED $q"; else echo "NOT MINE $q"; fi
"##;

fn a_planner_at_its_task_limit_asks_the_lead_who_lets_the_plan_grow(p: Project) {
    project_planned_by(&p, FIFTY_AND_ONE, "");
    let mut team = Background::from_command(p.committing(&[
        "--json",
        "team",
        "up",
        "--workers",
        "2",
        "--exec",
        "true",
        "--planner-answers",
        "--goal",
        "Build fifty-one parts",
    ]));
    let plan = plan_question(&mut team);
    assert_eq!(
        inbox_question(&p, &plan)["about"]["tasks"]
            .as_array()
            .map(Vec::len),
        Some(50)
    );
    let inbox = p.json(&["--json", "inbox"]);
    let limit = inbox["questions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["about"]["kind"] == "limit")
        .cloned()
        .unwrap_or_else(|| {
            panic!(
                "the lead is asked about the limit: {inbox}\n{}",
                p.ok(&["team", "logs", "plan-1", "--full"])
            )
        });
    assert_eq!(
        limit["about"],
        json!({"kind": "limit", "plan": "plan-1", "limit": "tasks"}),
        "{limit}"
    );
    assert_eq!(limit["choices"], json!(["go on", "keep the limit"]));
    let text = limit["text"].as_str().unwrap();
    assert!(text.contains("plan-1 has 50 tasks"), "{text}");
    let id = limit["id"].as_str().unwrap();
    // The refusal told the planner it is asked, and its own answer was refused.
    let logs = p.ok(&["team", "logs", "plan-1", "--full"]);
    assert!(
        logs.contains(&format!(
            "the lead is asked whether it may have more ({id})"
        )),
        "{logs}"
    );
    assert!(logs.contains(&format!("NOT MINE {id}")), "{logs}");
    assert!(logs.contains("only the lead answers it"), "{logs}");
    let board = p.json(&["leader", "status"]);
    assert!(
        !board["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["id"] == "t51"),
        "not before the lead lets it: {board}"
    );
    p.ok(&["answer", id, "go on"]);
    p.ok(&["answer", &plan, "approve"]);
    // Heard as news: a session of its own adds the fifty-first, approved as a plan's.
    let second = plan_question(&mut team);
    assert_eq!(
        inbox_question(&p, &second)["about"]["tasks"],
        json!(["t51"])
    );
    p.ok(&["answer", &second, "approve"]);
    let (code, report, stdout) = finished(team);
    assert_eq!(code, Some(0), "{stdout}");
    assert_eq!(report["plan"]["tasks"].as_array().map(Vec::len), Some(51));
    assert_eq!(report["plan"]["sessions"], 2, "{report}");
    assert_eq!(p.task("t51")["status"], "done");
}

/// A planner whose first session outlasts its profile's time cap; told that the lead lets
/// it plan on, it plans a part at once.
const OUTLASTS_ITS_CAP: &str = r##"set -e
case "$BATON_TASK_HINTS" in
  *"the lead lets you plan on"*)
    baton leader add-task "Part a" --id a --files a.txt
    exit 0 ;;
esac
echo "thinking at length"
sleep 120
"##;

const WRITES_ITS_FILE: &str = "echo \"$BATON_TASK_ID\" > \"$BATON_TASK_ID.txt\" && git add . && \
     git commit -qm \"$BATON_TASK_ID\"";

fn a_planner_at_its_budget_asks_the_lead_who_lets_it_go_on(p: Project) {
    project_planned_by(&p, OUTLASTS_ITS_CAP, "max_minutes = 0.1\n");
    let mut team = Background::from_command(p.committing(&[
        "--json",
        "team",
        "up",
        "--workers",
        "1",
        "--exec",
        WRITES_ITS_FILE,
        "--goal",
        "Build a",
    ]));
    let id = limit_question(&mut team);
    let asked = inbox_question(&p, &id);
    assert_eq!(
        asked["about"],
        json!({"kind": "limit", "plan": "plan-1", "limit": "budget"}),
        "{asked}"
    );
    assert_eq!(asked["choices"], json!(["go on", "stop"]), "{asked}");
    let text = asked["text"].as_str().unwrap();
    assert!(
        text.contains("reached its budget (budget: the attempt ran"),
        "{text}"
    );
    assert_eq!(
        p.task("plan-1")["status"],
        "failed",
        "while the lead decides"
    );
    p.ok(&["answer", &id, "go on"]);
    let plan = plan_question(&mut team);
    assert_eq!(inbox_question(&p, &plan)["about"]["tasks"], json!(["a"]));
    p.ok(&["answer", &plan, "approve"]);
    let (code, report, stdout) = finished(team);
    assert_eq!(code, Some(0), "{stdout}");
    assert!(
        stdout.contains("lets the planner go on past its budget"),
        "{stdout}"
    );
    assert_eq!(report["plan"]["carried_out"], true, "{report}");
    assert_eq!(p.task("a")["status"], "done");
}
