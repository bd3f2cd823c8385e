//! Planning goes on while the team works: an agent planner (Claude Code, its model a scripted
//! API on loopback) hears each task's report as it comes, while the rest of its plan is still
//! worked, and plans the follow-up a report calls for; the lead pauses planning, and the news waits for the planner until it is resumed; told to, the planner
//! answers a worker's question about its plan, and no other.

use baton_test_support as support;

use std::sync::Arc;

use serde_json::{Value, json};
use support::claude::{Host, tool};
use support::scripted_api::{Reply, Script, ScriptedApi, exchanges, prompt_text};
use support::team::{planner_seat, project_planned_by};
use support::{Background, Project};

support::on_both_stores!(
    the_planner_hears_a_report_as_it_comes_and_plans_its_follow_up,
    the_lead_pauses_planning_and_the_news_waits_until_resumed,
    the_planner_answers_a_worker_s_question_when_told_to,
    a_planner_answers_no_question_outside_its_plan,
);

/// What `a`'s worker reports: the planner's follow-up comes of it.
const A_REPORTS: &str = "a is written; the project also needs a readme";

/// The workers: `a` reports that a readme is needed; `slow` finishes only once the readme's
/// task is on the board (so the planner must hear a's report while slow is still worked: told
/// only once everything settled, it would never come, and slow gives up after a minute).
const WORKERS: &str = "if [ \"$BATON_TASK_ID\" = slow ]; then i=0; \
       until baton --json leader status | grep -Eq '\"id\": ?\"readme\"'; do \
         i=$((i+1)); [ $i -lt 600 ] || { echo 'the readme never came' >&2; exit 1; }; sleep 0.1; done; fi; \
     echo \"$BATON_TASK_ID\" > \"$BATON_TASK_ID.txt\" && git add . && git commit -qm \"$BATON_TASK_ID\" && \
     if [ \"$BATON_TASK_ID\" = a ]; then echo 'a is written; the project also needs a readme'; fi";

/// A planner's model: `session` says, from its prompt, the tool calls of its session in order
/// (the last reporting its plan task `done`); an error ends the session.
fn planner_model(session: impl Fn(&str, Reply) -> Vec<Reply> + Send + Sync + 'static) -> Script {
    Arc::new(move |request: &Value| {
        let prompt = prompt_text(request);
        let (plan, name) = planner_seat(&prompt);
        let done = exchanges(request);
        if let Some(last) = done.last().filter(|e| e.is_error) {
            return Reply::Text(format!("Stopping: {}", last.result));
        }
        let complete = tool(
            "task_complete",
            json!({"agent": name, "task": plan, "summary": "planned"}),
        );
        session(&prompt, complete)
            .into_iter()
            .nth(done.len())
            .unwrap_or_else(|| Reply::Text("Planned.".into()))
    })
}

/// The planner's model: the first session plans `a` and `slow`; a session with news of a's
/// report adds the readme it asks for; any other news changes nothing.
fn planner() -> Script {
    planner_model(|prompt, complete| {
        let news = prompt.contains("News of your plan");
        let follow_up = news && prompt.contains(A_REPORTS) && !prompt.contains("- readme (");
        match (news, follow_up) {
            (false, _) => vec![
                tool(
                    "task_add",
                    json!({"id": "a", "description": "Write a.txt", "files": ["a.txt"]}),
                ),
                tool(
                    "task_add",
                    json!({"id": "slow", "description": "Write slow.txt", "files": ["slow.txt"]}),
                ),
                complete,
            ],
            (true, true) => vec![
                tool(
                    "task_add",
                    json!({"id": "readme", "description": "Write the readme a asked for",
                           "files": ["readme.txt"]}),
                ),
                complete,
            ],
            (true, false) => vec![complete],
        }
    })
}

fn the_planner_hears_a_report_as_it_comes_and_plans_its_follow_up(p: Project) {
    support::repository(p.path());
    let api = ScriptedApi::start(planner());
    let host = Host::new(p.path(), &api);
    let mut command = host.baton(&[
        "--json",
        "team",
        "up",
        "--workers",
        "2",
        "--exec",
        WORKERS,
        "--planner",
        "claude",
        "--plan",
        "auto",
        "--goal",
        "Write a and slow",
    ]);
    command.envs(p.store_env());
    let (code, stdout, stderr) = Background::from_command(command).finish();
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let report: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(report["plan"]["carried_out"], true, "{report}");
    assert_eq!(
        report["plan"]["tasks"],
        json!(["a", "slow", "readme"]),
        "{report}"
    );
    for id in ["a", "slow", "readme"] {
        assert_eq!(p.task(id)["status"], "done", "{id}");
    }
    // The session that planned the readme was told a's report as news, while slow was
    // still worked.
    let mut sessions: Vec<String> = Vec::new();
    for prompt in api
        .requests()
        .iter()
        .filter(|r| exchanges(r).is_empty())
        .map(prompt_text)
        .filter(|prompt| prompt.contains("the planner of a team"))
    {
        // A request the CLI sent again is the same session.
        if !sessions.contains(&prompt) {
            sessions.push(prompt);
        }
    }
    let told = sessions
        .iter()
        .find(|prompt| prompt.contains(A_REPORTS))
        .unwrap_or_else(|| panic!("no session was told a's report: {sessions:#?}"));
    assert!(
        told.contains("Done and reported since your last session: a"),
        "{told}"
    );
    // slow is still worked (held by its worker: claimed, or started already).
    assert!(
        told.contains("- slow (in_progress)") || told.contains("- slow (claimed)"),
        "{told}"
    );
    // Every report was news once: the readme's and slow's came after, in one session or two,
    // and no session was told the same report twice.
    let heard = |id: &str| {
        sessions
            .iter()
            .filter(|s| {
                s.split("Done and reported since your last session: ")
                    .nth(1)
                    .and_then(|rest| rest.split(" (what").next())
                    .is_some_and(|ids| ids.split(", ").any(|i| i == id))
            })
            .count()
    };
    assert_eq!(
        (heard("a"), heard("slow"), heard("readme")),
        (1, 1, 1),
        "{sessions:#?}"
    );
}

/// A planner that plans `a` and `slow`; told that `a` failed, it adds `c` instead.
const REPLANNER: &str = r##"set -e
case "$BATON_TASK_HINTS" in
  *"- a: "*)
    baton leader add-task "Part c, instead of a" --id c --files c.txt
    exit 0 ;;
esac
baton leader add-task "Part a" --id a --files a.txt
baton leader add-task "The slow part" --id slow --files slow.txt
"##;

/// `a` fails once the planner is paused (its record says so); `slow` finishes once `c` is on the board.
const FAILS_WHEN_PAUSED: &str = "wait_for() { i=0; until baton --json $1 | grep -Eq \"$2\"; do \
       i=$((i+1)); [ $i -lt 600 ] || { echo \"$2 never came\" >&2; exit 1; }; sleep 0.1; done; }; \
     case \"$BATON_TASK_ID\" in \
       a) wait_for 'team status' '\"state\": ?\"paused\"'; echo 'a cannot be done' >&2; exit 1 ;; \
       slow) wait_for 'leader status' '\"id\": ?\"c\"' ;; \
     esac; \
     echo \"$BATON_TASK_ID\" > \"$BATON_TASK_ID.txt\" && git add . && git commit -qm \"$BATON_TASK_ID\"";

fn the_lead_pauses_planning_and_the_news_waits_until_resumed(p: Project) {
    project_planned_by(&p, REPLANNER, "");
    let mut team = Background::from_command(p.committing(&[
        "--json",
        "team",
        "up",
        "--workers",
        "2",
        "--exec",
        FAILS_WHEN_PAUSED,
        "--plan",
        "auto",
        "--goal",
        "Build the parts",
    ]));
    let approved: Value = serde_json::from_str(&team.wait_stdout("\"step\":\"approved\"")).unwrap();
    let planner = approved["planner"].as_str().unwrap().to_string();
    let asked = p.json(&["--json", "team", "pause", &planner]);
    assert_eq!(
        (&asked["workers"], &asked["paused"]),
        (&json!([planner]), &json!(true)),
        "{asked}"
    );
    team.wait_stdout("\"event\":\"paused\"");
    // a fails once the planner is paused: the news waits for the planner, which starts no
    // session (the plan task stays done); slow still waits for c.
    support::eventually("a failed", || p.task("a")["status"] == "failed");
    let status = p.json(&["--json", "team", "status"]);
    let record = status["workers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["name"] == planner.as_str())
        .cloned()
        .unwrap_or_else(|| panic!("no {planner}: {status}"));
    assert_eq!(record["state"], "paused", "{record}");
    assert_eq!(p.task("plan-1")["status"], "done");
    let slow = p.task("slow");
    assert!(
        slow["status"] == "in_progress" || slow["status"] == "claimed",
        "slow is still worked: {slow}"
    );
    let sessions = p.json(&["--json", "team", "report"]);
    assert_eq!(
        support::team::report_row(&sessions, "plan-1")["attempts"],
        1,
        "{sessions}"
    );
    p.json(&["--json", "team", "resume", &planner]);
    // Resumed, it plans c; slow finishes; a's failure stands.
    let (code, stdout, stderr) = team.finish();
    assert_eq!(code, Some(10), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("\"event\":\"paused\",\"worker\":") && stdout.contains("\"paused\":false"),
        "{stdout}"
    );
    for (id, status) in [("a", "failed"), ("c", "done"), ("slow", "done")] {
        assert_eq!(p.task(id)["status"], status, "{id}");
    }
}

/// The planner's model when told to answer: it plans `port`; told of a worker's question
/// about it, it answers from the plan (8080); any other news changes nothing.
fn answering_planner() -> Script {
    planner_model(|prompt, complete| {
        let asked = prompt
            .split("\n- ")
            .find(|line| line.contains("Which port"))
            .and_then(|line| line.split(' ').next())
            .map(str::to_string);
        match (prompt.contains("News of your plan"), asked) {
            (false, _) => vec![
                tool(
                    "task_add",
                    json!({"id": "port", "description": "Write the server's port to port.txt",
                           "files": ["port.txt"]}),
                ),
                complete,
            ],
            (true, Some(id)) => vec![
                tool("answer_question", json!({"id": id, "answer": "8080"})),
                complete,
            ],
            (true, None) => vec![complete],
        }
    })
}

/// The worker asks which port, and writes the answer it gets.
const ASKS_THE_PORT: &str = "port=$(baton ask 'Which port should the server listen on?' --timeout 60) && \
     echo \"$port\" > port.txt && git add . && git commit -qm port";

fn the_planner_answers_a_worker_s_question_when_told_to(p: Project) {
    support::repository(p.path());
    let api = ScriptedApi::start(answering_planner());
    let host = Host::new(p.path(), &api);
    let mut command = host.baton(&[
        "--json",
        "team",
        "up",
        "--workers",
        "1",
        "--exec",
        ASKS_THE_PORT,
        "--planner",
        "claude",
        "--plan",
        "auto",
        "--planner-answers",
        "--merge",
        "auto",
        "--goal",
        "Serve on the right port",
    ]);
    command.envs(p.store_env());
    let (code, stdout, stderr) = Background::from_command(command).finish();
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert_eq!(
        std::fs::read_to_string(p.path().join("port.txt")).unwrap(),
        "8080\n",
        "the planner's answer, landed"
    );
    let inbox = p.json(&["--json", "inbox", "--all"]);
    let question = &inbox["questions"][0];
    assert_eq!(question["task"], "port", "{inbox}");
    assert!(
        question["state"]["by"]
            .as_str()
            .unwrap()
            .ends_with("planner"),
        "answered by the planner: {question}"
    );
}

/// A planner told to answer questions that tries one not about its plan's tasks.
const ANSWERS_ANOTHER_S: &str = r#"
baton leader add-task "Part a" --id a --files a.txt
if baton answer q-1 yes; then echo "ANSWERED q-1"; else echo "REFUSED q-1"; fi
"#;

fn a_planner_answers_no_question_outside_its_plan(p: Project) {
    project_planned_by(&p, ANSWERS_ANOTHER_S, "");
    // Another agent's question, about no task of the plan.
    let mut asking = p.ask_as("w9", "Which port?", &[]);
    asking.wait_stderr("waiting");
    let team = Background::from_command(p.committing(&[
        "--json",
        "team",
        "up",
        "--workers",
        "1",
        "--exec",
        WRITES_ITS_FILE,
        "--plan",
        "auto",
        "--planner-answers",
        "--goal",
        "Build a",
    ]));
    let (code, stdout, stderr) = team.finish();
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let logs = p.ok(&["team", "logs", "plan-1", "--full"]);
    assert!(logs.contains("REFUSED q-1"), "{logs}");
    assert!(logs.contains("not about a task of your plan"), "{logs}");
    let inbox = p.json(&["--json", "inbox"]);
    assert_eq!(inbox["questions"][0]["state"]["state"], "open", "{inbox}");
    drop(asking);
}

const WRITES_ITS_FILE: &str = "echo \"$BATON_TASK_ID\" > \"$BATON_TASK_ID.txt\" && git add . && \
     git commit -qm \"$BATON_TASK_ID\"";
