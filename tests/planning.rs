//! A goal in, landed work out, end to end with the real `git`, the sandbox and `exec` agents in
//! every seat: `team up --goal` starts the planner (a command planning through its door with
//! the CLI) before any worker; its tasks wait, proposed, until the lead approves the plan with
//! one answer; the workers do them in their worktrees and the merge queue lands them; the team
//! ends when the plan is carried out (both stores). `--plan auto` needs no answer; the lead's
//! words instead of an approval send the plan back to the planner, which plans again with them.
//! Unsandboxed, a planner still plans as the planner.
//! A hostile planner is refused everything that is not planning its own plan. With a judge, a
//! task it finds wanting goes back to its worker with its line comment, and lands once fixed;
//! a hostile judge changes nothing and lands nothing. Once every task has landed, the judge
//! compares the lead's branch with the goal: what it finds missing goes back to the planner,
//! and the team ends once it finds the goal met.

use baton_test_support as support;

use serde_json::Value;
use support::team::{finished, plan_question, project_planned_by};
use support::{Background, Project};

support::on_both_stores!(
    a_goal_is_planned_approved_with_one_answer_and_landed,
    with_plan_auto_the_team_needs_no_answer,
    the_leads_words_send_the_plan_back_to_the_planner,
    stopping_the_team_while_its_plan_waits_ends_it_and_closes_the_question,
    a_failed_task_goes_back_to_the_planner_once_and_its_follow_up_lands,
    a_hostile_planner_is_refused_all_but_its_own_plan,
    the_judge_sends_a_task_back_once_and_the_plan_lands_after_the_fix,
    a_hostile_judge_changes_nothing_and_lands_nothing,
    the_judge_finds_the_goal_not_met_and_the_planner_plans_what_is_missing,
);

/// The planner: the master plan, then four tasks (b and c after a, d after both) each with its
/// files and acceptance; planning again, it adds what the lead's words asked for (a fifth, e,
/// after d) and nothing else.
const PLANNER: &str = r##"set -e
case "$BATON_TASK_HINTS" in
  *readme*)
    baton leader add-task "Part e: the readme" --id e --depends d --files work/e.txt --acceptance "work/e.txt names e"
    exit 0 ;;
esac
baton leader write-plan "# Plan for: $BATON_TASK_DESCRIPTION

a first; b and c on it; d on both."
baton leader add-task "Part a" --id a --files work/a.txt --acceptance "work/a.txt names a"
baton leader add-task "Part b" --id b --depends a --files work/b.txt --acceptance "work/b.txt names b"
baton leader add-task "Part c" --id c --depends a --files work/c.txt --acceptance "work/c.txt names c"
baton leader add-task "Part d" --id d --depends b,c --files work/d.txt --acceptance "work/d.txt names d"
"##;

/// Each worker fails unless its dependencies' work is in its worktree, then writes its own
/// file and commits it.
const WORKER: &str = "for d in $BATON_TASK_DEPENDENCIES; do \
     test -f \"work/$d.txt\" || { echo \"$d's work is missing\" >&2; exit 1; }; done; \
     mkdir -p work && echo \"$BATON_TASK_ID\" > \"work/$BATON_TASK_ID.txt\" && git add work && \
     git commit -qm \"$BATON_TASK_ID\"";

/// `team up --goal` in the background, `extra` after it.
fn team_up(p: &Project, extra: &[&str]) -> Background {
    team_up_with(p, WORKER, extra)
}

/// [`team_up`] with another `worker` command.
fn team_up_with(p: &Project, worker: &str, extra: &[&str]) -> Background {
    let mut args = vec![
        "--json",
        "team",
        "up",
        "--workers",
        "2",
        "--exec",
        worker,
        "--merge",
        "auto",
        "--goal",
        "Build the parts",
    ];
    args.extend(extra);
    Background::from_command(p.committing(&args))
}

/// The team's exit code and report (the last line of its --json output).
fn status_of(p: &Project, id: &str) -> String {
    p.task(id)["status"].as_str().unwrap().to_string()
}

fn a_goal_is_planned_approved_with_one_answer_and_landed(p: Project) {
    project_planned_by(&p, PLANNER, "");
    let mut team = team_up(&p, &[]);
    let question = plan_question(&mut team);

    // Nothing is claimed before the lead approves: the plan's tasks wait, proposed, each of
    // the plan, with its acceptance.
    for id in ["a", "b", "c", "d"] {
        let task = p.task(id);
        assert_eq!(task["status"], "proposed", "{task}");
        assert_eq!(task["plan"], "plan-1", "{task}");
        assert!(task["acceptance"].as_str().unwrap().contains(id), "{task}");
    }
    assert_eq!(p.task("plan-1")["kind"], "plan");
    // The lead sees the plan as one question: the tasks and the order they run in.
    let inbox = p.ok(&["inbox"]);
    assert!(
        inbox.contains("may the team work this plan (4 tasks)?"),
        "{inbox}"
    );
    assert!(inbox.contains("d [p5] Part d (after b, c)"), "{inbox}");
    assert!(inbox.contains("Order: a → b, c → d"), "{inbox}");
    assert!(
        inbox.contains(&format!("baton answer {question} approve")),
        "{inbox}"
    );

    p.ok(&["answer", &question, "approve"]);
    let (code, report, stdout) = finished(team);
    assert_eq!(code, Some(0), "{stdout}");
    assert_eq!(report["verdict"]["all_done"], true, "{report}");
    let mut merged: Vec<&str> = report["verdict"]["merged"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    merged.sort();
    assert_eq!(merged, ["a", "b", "c", "d"], "{report}");
    assert_eq!(report["plan"]["carried_out"], true, "{report}");
    assert_eq!(report["plan"]["sessions"], 1, "{report}");
    for id in ["a", "b", "c", "d"] {
        assert!(
            p.path().join(format!("work/{id}.txt")).is_file(),
            "{id} landed"
        );
    }
    assert!(stdout.contains("\"step\":\"carried_out\""), "{stdout}");
    // The planner's master plan, and its answer on the record.
    if !p.on_postgres() {
        let plan = std::fs::read_to_string(p.coordination().join("master-plan.md")).unwrap();
        assert!(plan.starts_with("# Plan for: Build the parts"), "{plan}");
    }
    let answered = p.json(&["--json", "inbox", "--all"]);
    assert_eq!(
        answered["questions"][0]["state"]["answer"], "approve",
        "{answered}"
    );
    let report = p.json(&["team", "report", "--plan", "plan-1"]);
    assert_eq!(report["run"]["tasks"], 5, "the plan and its four: {report}");
    assert_eq!(report["run"]["landed"], 4, "{report}");
    assert_eq!(
        report["run"]["lead_interventions"], 1,
        "the plan's approval: {report}"
    );
    assert_eq!(report["run"]["questions"], 1, "{report}");
}

/// Without a sandbox too: the planner's `baton` knows it by its attempt's marks.
fn with_plan_auto_the_team_needs_no_answer(p: Project) {
    project_planned_by(&p, PLANNER, "");
    let (code, report, stdout) = finished(team_up(&p, &["--plan", "auto", "--no-sandbox"]));
    assert_eq!(code, Some(0), "{stdout}");
    assert_eq!(report["plan"]["carried_out"], true, "{report}");
    assert_eq!(
        report["plan"]["tasks"].as_array().unwrap().len(),
        4,
        "{report}"
    );
    assert_eq!(p.task("d")["plan"], "plan-1");
    assert!(!stdout.contains("\"step\":\"asked\""), "{stdout}");
    let inbox = p.json(&["--json", "inbox", "--all"]);
    assert_eq!(inbox["questions"].as_array().unwrap().len(), 0, "{inbox}");
}

fn the_leads_words_send_the_plan_back_to_the_planner(p: Project) {
    project_planned_by(&p, PLANNER, "");
    let mut team = team_up(&p, &[]);
    let first = plan_question(&mut team);
    p.ok(&["answer", &first, "add a readme part after d"]);
    // The planner plans again with the lead's words, and is asked again.
    let second = plan_question(&mut team);
    assert_ne!(first, second);
    assert_eq!(status_of(&p, "e"), "proposed");
    assert_eq!(p.task("e")["dependencies"][0], "d");
    for id in ["a", "b", "c", "d"] {
        assert_eq!(
            status_of(&p, id),
            "proposed",
            "{id} waits for the approval too"
        );
    }
    p.ok(&["answer", &second, "approve"]);
    let (code, report, stdout) = finished(team);
    assert_eq!(code, Some(0), "{stdout}");
    assert_eq!(report["plan"]["sessions"], 2, "{report}");
    assert_eq!(
        report["plan"]["tasks"].as_array().unwrap().len(),
        5,
        "{report}"
    );
    assert!(p.path().join("work/e.txt").is_file());
}

/// A planner that plans `a`, `b` on it and `slow`; told that `a` failed, it cancels `b` (which
/// can never start) and adds `c` instead.
const REPLANNER: &str = r##"set -e
case "$BATON_TASK_HINTS" in
  *"failed"*)
    case "$BATON_TASK_HINTS" in *"- a: "*) ;; *) exit 1 ;; esac
    baton leader cancel b --reason "a failed"
    baton leader add-task "Part c, instead of a" --id c --files work/c.txt
    exit 0 ;;
esac
baton leader add-task "Part a" --id a --files work/a.txt
baton leader add-task "Part b" --id b --depends a --files work/b.txt
baton leader add-task "The slow part" --id slow --files work/slow.txt
"##;

/// A worker that cannot do `a`, and does `slow` only once `c` is on the board: the planner
/// hears of a's failure while `slow` is still worked, not once the plan has settled (it would
/// never settle: the worker gives up after a minute).
const FAILING_A: &str = "test \"$BATON_TASK_ID\" != a || { echo 'a cannot be done' >&2; exit 1; }; \
     if [ \"$BATON_TASK_ID\" = slow ]; then i=0; \
       until baton --json leader status | grep -Eq '\"id\": ?\"c\"'; do \
         i=$((i+1)); [ $i -lt 600 ] || { echo 'c never came' >&2; exit 1; }; sleep 0.1; done; fi; \
     mkdir -p work && echo \"$BATON_TASK_ID\" > \"work/$BATON_TASK_ID.txt\" && git add work && \
     git commit -qm \"$BATON_TASK_ID\"";

fn a_failed_task_goes_back_to_the_planner_once_and_its_follow_up_lands(p: Project) {
    project_planned_by(&p, REPLANNER, "");
    let extra = ["--max-attempts", "1", "--plan", "auto"];
    let (code, report, stdout) = finished(team_up_with(&p, FAILING_A, &extra));
    // a failed and stays failed: the plan was worked around, not carried out.
    assert_ne!(code, Some(0), "{stdout}");
    assert_eq!(report["plan"]["sessions"], 2, "told once: {report}");
    assert_eq!(report["plan"]["carried_out"], false, "{report}");
    assert_eq!(status_of(&p, "a"), "failed");
    assert_eq!(status_of(&p, "b"), "cancelled");
    assert_eq!(status_of(&p, "c"), "done");
    assert!(p.path().join("work/c.txt").is_file(), "c landed");
    assert_eq!(
        status_of(&p, "slow"),
        "done",
        "told of a while slow was worked"
    );
    let hints = p.task("plan-1")["context"]["hints"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        hints.contains("- a: ") && hints.contains("a cannot be done"),
        "{hints}"
    );
    assert!(stdout.contains("the plan's failures stand"), "{stdout}");
}

fn stopping_the_team_while_its_plan_waits_ends_it_and_closes_the_question(p: Project) {
    project_planned_by(&p, PLANNER, "");
    let mut team = team_up(&p, &[]);
    let question = plan_question(&mut team);
    p.ok(&["team", "stop"]);
    let (code, report, stdout) = finished(team);
    assert_ne!(code, Some(0), "the plan was not carried out: {stdout}");
    assert_eq!(report["plan"]["carried_out"], false, "{report}");
    for id in ["a", "b", "c", "d"] {
        assert_eq!(status_of(&p, id), "proposed", "{id} was never claimed");
    }
    let inbox = p.json(&["--json", "inbox", "--all"]);
    let asked = &inbox["questions"][0];
    assert_eq!(asked["id"], question.as_str());
    assert_eq!(asked["state"]["state"], "closed", "{inbox}");
    assert_eq!(asked["state"]["reason"], "the team stopped", "{inbox}");
}

/// A planner that tries, through its door, what a planner may not: each refusal is echoed
/// with its exit code, and it ends by failing its plan.
const HOSTILE: &str = r#"
try() { if "$@" >/dev/null 2>&1; then echo "ALLOWED: $*"; else echo "REFUSED($?): $*"; fi; }
baton leader add-task "mine" --id m1
baton leader add-task "mine too" --id m2 --depends m1
try baton leader approve --all
try baton leader approve m1
try baton leader merge
try baton answer q-1 allow
try baton leader edit m1 --depends m2
try baton leader edit lead-task --description changed
try baton leader cancel lead-task
try baton leader reset lead-task
try baton team up --workers 9 --exec true
try sh -c 'echo "[profiles.exec]" >> .coordination/team/profiles.toml'
try sh -c 'echo x > planted.txt'
i=3; while [ $i -le 60 ]; do baton leader add-task "task $i" >/dev/null 2>&1 || break; i=$((i+1)); done
echo "ADDED UP TO $i"
exit 3
"#;

fn a_hostile_planner_is_refused_all_but_its_own_plan(p: Project) {
    project_planned_by(&p, HOSTILE, "max_attempts = 1\n");
    p.ok(&["leader", "add-task", "the lead's own", "--id", "lead-task"]);
    let profiles = std::fs::read_to_string(p.coordination().join("team/profiles.toml")).unwrap();
    // An approval the planner would answer if it could.
    let mut asking = p.ask_as("w9", "may I?", &["allow", "deny"]);
    asking.wait_stderr("waiting");
    let (code, report, stdout) = finished(team_up(&p, &[]));
    assert_ne!(code, Some(0), "the plan failed: {stdout}");
    assert_eq!(report["plan"]["carried_out"], false, "{report}");

    let logs = p.ok(&["team", "logs", "plan-1"]);
    for refused in [
        "approve --all",
        "approve m1",
        "leader merge",
        "answer q-1 allow",
        "edit m1 --depends m2",
        "edit lead-task",
        "cancel lead-task",
        "reset lead-task",
        "team up",
        "profiles.toml",
        "planted.txt",
    ] {
        let line = logs
            .lines()
            .find(|l| l.contains(refused) && (l.contains("REFUSED") || l.contains("ALLOWED")))
            .unwrap_or_else(|| panic!("no outcome for {refused}: {logs}"));
        assert!(line.contains("REFUSED"), "{line}");
    }
    // The door's own word on the lead's commands is in the transcript too.
    assert!(logs.contains("is the lead's to"), "{logs}");
    // It got its plan's 50 tasks and no more; none of them approved, nothing landed.
    assert!(logs.contains("ADDED UP TO 51"), "{logs}");
    let board = p.json(&["--json", "leader", "status"]);
    let tasks = board["tasks"].as_array().unwrap();
    let planned: Vec<&Value> = tasks.iter().filter(|t| t["plan"] == "plan-1").collect();
    assert_eq!(planned.len(), 50, "{board}");
    assert!(planned.iter().all(|t| t["status"] == "proposed"), "{board}");
    assert_eq!(p.task("m1")["dependencies"].as_array().unwrap().len(), 0);
    let lead = p.task("lead-task");
    assert_eq!(lead["description"], "the lead's own");
    assert_eq!(
        lead["status"], "done",
        "the workers' to do, not the planner's to cancel"
    );
    assert!(!p.path().join("planted.txt").exists());
    assert_eq!(
        std::fs::read_to_string(p.coordination().join("team/profiles.toml")).unwrap(),
        profiles,
        "the team's configuration is not the planner's to change"
    );
    // The worker's question is still the lead's to answer.
    let inbox = p.json(&["--json", "inbox"]);
    assert!(
        inbox["questions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|q| q["agent"] == "w9" && q["state"]["state"] == "open"),
        "{inbox}"
    );
    drop(asking);
}

/// A worker that, sent back with "say fixed", says so in its file.
const FIXING_WORKER: &str = "for d in $BATON_TASK_DEPENDENCIES; do \
     test -f \"work/$d.txt\" || { echo \"$d's work is missing\" >&2; exit 1; }; done; \
     mkdir -p work && case \"$BATON_TASK_HINTS\" in *'say fixed'*) echo \"$BATON_TASK_ID fixed\";; \
     *) echo \"$BATON_TASK_ID\";; esac > \"work/$BATON_TASK_ID.txt\" && git add work && \
     git commit -qm \"$BATON_TASK_ID\"";

/// A judge that wants b's file to say it is fixed (a comment on its line), and approves the
/// rest against their acceptance.
const JUDGE: &str = r##"diff=$(cat)
if [ "$BATON_TASK_ID" = b ]; then
  case "$diff" in *"+b fixed"*) echo "b says fixed"; exit 0 ;; esac
  echo "work/b.txt:1: say fixed"
  echo "b is not fixed yet"
  exit 1
fi
echo "$BATON_TASK_ID meets: $BATON_TASK_ACCEPTANCE"
"##;

/// `team up --goal … --plan auto` with a judge profile running `judge`.
fn judged_team(p: &Project, judge: &str) -> (Option<i32>, Value, String) {
    project_planned_by(p, PLANNER, "");
    let profiles = p.coordination().join("team/profiles.toml");
    let mut text = std::fs::read_to_string(&profiles).unwrap();
    text.push_str(&format!(
        "[profiles.judge]\nkind = \"exec\"\ncommand = '''\n{judge}'''\n"
    ));
    std::fs::write(&profiles, text).unwrap();
    finished(team_up_with(p, FIXING_WORKER, &["--plan", "auto"]))
}

fn the_judge_sends_a_task_back_once_and_the_plan_lands_after_the_fix(p: Project) {
    let (code, report, stdout) = judged_team(&p, JUDGE);
    assert_eq!(code, Some(0), "{stdout}");
    assert_eq!(report["plan"]["carried_out"], true, "{report}");
    assert_eq!(
        report["verdict"]["merged"].as_array().unwrap().len(),
        4,
        "{report}"
    );
    // b landed as fixed, after one round the judge sent with its line comment.
    assert_eq!(
        std::fs::read_to_string(p.path().join("work/b.txt")).unwrap(),
        "b fixed\n"
    );
    let review = p.json(&["review", "b"]);
    let judged: Vec<bool> = review["judgements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["approved"].as_bool().unwrap())
        .collect();
    assert_eq!(judged, [false, true], "{review}");
    assert_eq!(
        review["judgements"][0]["comment"], "work/b.txt:1: say fixed\nb is not fixed yet",
        "{review}"
    );
    assert_eq!(review["rounds"].as_array().unwrap().len(), 1, "{review}");
    assert_eq!(review["rounds"][0]["by"], "judge", "{review}");
    let comment = &review["comments"][0];
    assert_eq!(
        (comment["file"].as_str(), comment["line"].as_u64()),
        (Some("work/b.txt"), Some(1))
    );
    assert_eq!(comment["by"], "judge");
    // The others were approved at once, each against its acceptance.
    // The report counts what the records hold.
    let report = p.json(&["team", "report"]);
    let row = |id: &str| support::team::report_row(&report, id);
    let b = row("b");
    assert_eq!(
        (
            &b["attempts"],
            &b["judge_rounds"],
            &b["lead_rounds"],
            &b["judgements"]
        ),
        (
            &Value::from(2),
            &Value::from(1),
            &Value::from(0),
            &Value::from(2)
        ),
        "{b}"
    );
    assert_eq!(
        (&b["queue_returns"], &b["landed"]),
        (&Value::from(1), &Value::from(true)),
        "{b}"
    );
    assert_eq!(row("a")["judgements"], 1);
    assert_eq!(row("plan-1")["kind"], "plan");
    let roles = &report["roles"];
    assert_eq!(roles[0]["role"], "planning");
    assert_eq!(roles[0]["attempts"], 1, "{roles}");
    assert_eq!(roles[1]["attempts"], 5, "four tasks and b again: {roles}");
    assert_eq!(report["run"]["landed"], 4, "{report}");
    assert_eq!(report["run"]["lead_interventions"], 0, "{report}");
    let a = p.json(&["review", "a"]);
    assert_eq!(a["judgements"].as_array().unwrap().len(), 1, "{a}");
    assert_eq!(
        a["judgements"][0]["comment"], "a meets: work/a.txt names a",
        "{a}"
    );
    assert!(stdout.contains("\"event\":\"judged\""), "{stdout}");
}

/// A judge that tries to change the work and land it itself, then approves.
const HOSTILE_JUDGE: &str = r##"
try() { if "$@" >/dev/null 2>&1; then echo "ALLOWED: $*"; else echo "REFUSED($?): $*"; fi; }
try sh -c 'echo planted > planted.txt'
try sh -c 'echo changed >> "work/$BATON_TASK_ID.txt"'
try git commit --allow-empty -qm "the judge was here"
try git -C "$BATON_DIR" merge --ff-only HEAD
try baton leader merge "$BATON_TASK_ID"
try sh -c 'echo x > "$BATON_DIR/planted.txt"'
exit 0
"##;

fn a_hostile_judge_changes_nothing_and_lands_nothing(p: Project) {
    let (code, report, stdout) = judged_team(&p, HOSTILE_JUDGE);
    assert_eq!(
        code,
        Some(0),
        "the queue landed the work as it was: {stdout}"
    );
    assert_eq!(
        report["verdict"]["merged"].as_array().unwrap().len(),
        4,
        "{report}"
    );
    let review = p.json(&["review", "a"]);
    let said = review["judgements"][0]["comment"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(said.matches("REFUSED").count(), 6, "{said}");
    assert!(!said.contains("ALLOWED"), "{said}");
    assert!(!p.path().join("planted.txt").exists());
    for id in ["a", "b", "c", "d"] {
        assert_eq!(
            std::fs::read_to_string(p.path().join(format!("work/{id}.txt"))).unwrap(),
            format!("{id}\n"),
            "{id} landed as its worker left it"
        );
    }
    let log = support::git(p.path(), &["log", "--format=%s", "main"]);
    assert!(!log.contains("the judge was here"), "{log}");
}

/// A judge that approves each task, and finds the goal met only once the readme (work/e.txt)
/// is in the lead's branch; given the plan's brief on its stdin.
const GOAL_JUDGE: &str = r##"brief=$(cat)
if [ "$BATON_TASK_KIND" = plan ]; then
  case "$brief" in *"Goal ($BATON_TASK_ID): Build the parts"*"- d (done)"*) ;; *) echo "no brief: $brief"; exit 2 ;; esac
  if [ -f work/e.txt ]; then echo "every part and the readme are in"; exit 0; fi
  echo "the readme is missing: work/e.txt"
  exit 1
fi
echo "$BATON_TASK_ID meets: $BATON_TASK_ACCEPTANCE"
"##;

fn the_judge_finds_the_goal_not_met_and_the_planner_plans_what_is_missing(p: Project) {
    let (code, report, stdout) = judged_team(&p, GOAL_JUDGE);
    assert_eq!(code, Some(0), "{stdout}");
    let plan = &report["plan"];
    assert_eq!(
        (&plan["carried_out"], &plan["goal_met"], &plan["sessions"]),
        (&Value::from(true), &Value::from(true), &Value::from(2)),
        "{report}"
    );
    assert_eq!(
        report["verdict"]["merged"].as_array().unwrap().len(),
        5,
        "the four parts and the readme the judge found missing: {report}"
    );
    assert_eq!(
        std::fs::read_to_string(p.path().join("work/e.txt")).unwrap(),
        "e\n"
    );
    // The judge's words on the goal are the plan's judgements (counted by the report), told
    // as they came; the planner was given them.
    let cost = p.json(&["team", "report"]);
    let plan_row = cost["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["task"] == "plan-1")
        .cloned()
        .unwrap();
    assert_eq!(plan_row["judgements"], 2, "{plan_row}");
    for said in [
        "not met: the readme is missing: work/e.txt",
        "met: every part and the readme are in",
    ] {
        assert!(stdout.contains(said), "{said}: {stdout}");
    }
    assert!(
        p.task("plan-1")["context"]["hints"]
            .as_str()
            .unwrap()
            .contains("finds the goal not met: the readme is missing"),
        "{}",
        p.task("plan-1")
    );
    assert!(stdout.contains("\"step\":\"goal_judged\""), "{stdout}");
}
