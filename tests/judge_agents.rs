//! A team's judge that is an agent, for real: the real Claude Code (`--judge claude`) and the
//! real Codex (`--judge codex`), their model replaced by a scripted API on loopback, judging
//! each done task before the merge queue lands it (both stores). The judge is told the task,
//! its acceptance and its diff; it asks for changes on b once, with a comment on its line, and
//! b goes back to its worker on its branch; once fixed, it lands. Its sessions are attempts at
//! the tasks with the role of judging (`team logs`, `team report`). Claude Code's judge, hostile
//! on its first task, writes nothing, merges nothing and claims nothing: the checkout is
//! read-only, and its door lets it only read, each refusal in its transcript.

use baton_test_support as support;

use std::sync::Arc;

use serde_json::{Value, json};
use support::claude::Host;
use support::scripted_api::{Reply, Script, ScriptedApi, exchanges, prompt_text, tool_names};
use support::{Background, Project};

support::on_both_stores!(claude_code_judges_each_task_and_sends_one_back_once);

#[test]
fn codex_judges_each_task_and_sends_one_back_once() {
    judged_by("codex", Project::init());
}

fn claude_code_judges_each_task_and_sends_one_back_once(p: Project) {
    judged_by("claude", p);
}

/// A worker that, sent back with "say fixed", says so in its file.
const FIXING_WORKER: &str = "mkdir -p work && case \"$BATON_TASK_HINTS\" in \
     *'say fixed'*) echo \"$BATON_TASK_ID fixed\";; *) echo \"$BATON_TASK_ID\";; esac \
     > \"work/$BATON_TASK_ID.txt\" && git add work && git commit -qm \"$BATON_TASK_ID\"";

/// What the hostile judge tries on its first task, in one shell command.
const HOSTILE: &str = "echo planted > work/a.txt; git commit --allow-empty -qm judged; \
     baton leader merge b; baton worker claim judge; echo tried";

/// The judge: on a, first the [`HOSTILE`] command (where its shell tool is Claude Code's Bash),
/// then approval; on b, changes asked until its diff says it is fixed. Any other request (an
/// agent's side requests) is answered with plain text.
fn judge_script(shell: Option<&'static str>) -> Script {
    Arc::new(move |request: &Value| {
        let prompt = prompt_text(request);
        if !prompt.contains("the judge of a team") {
            return Reply::Text("ok".into());
        }
        let done = exchanges(request);
        if prompt.contains("Task a:") {
            return match (shell, done.len()) {
                (Some(name), 0) => Reply::Tool {
                    name: name.into(),
                    input: json!({"command": HOSTILE, "description": "try"}),
                },
                _ => Reply::Text("a does what it says.\nVERDICT: approve".into()),
            };
        }
        match prompt.contains("+b fixed") {
            true => Reply::Text("b says fixed now.\n\nVERDICT: approve".into()),
            false => Reply::Text(
                "work/b.txt:1: say fixed\nb is not fixed yet\n**VERDICT: changes**".into(),
            ),
        }
    })
}

fn judged_by(agent: &'static str, p: Project) {
    support::repository(p.path());
    std::fs::create_dir_all(p.coordination().join("team")).unwrap();
    std::fs::write(
        p.coordination().join("team/profiles.toml"),
        format!("[profiles.{agent}.sandbox]\nenv = [\"SCRIPTED_API_KEY\"]\n"),
    )
    .unwrap();
    p.ok(&[
        "leader",
        "add-task",
        "Part a",
        "--id",
        "a",
        "--files",
        "work/a.txt",
        "--acceptance",
        "work/a.txt names a",
    ]);
    p.ok(&[
        "leader",
        "add-task",
        "Part b",
        "--id",
        "b",
        "--depends",
        "a",
        "--files",
        "work/b.txt",
        "--acceptance",
        "work/b.txt says b is fixed",
    ]);
    let shell = (agent == "claude").then_some("Bash");
    let api = ScriptedApi::start(judge_script(shell));
    let host = Host::new(p.path(), &api);
    let mut command = host.baton(&[
        "--json",
        "team",
        "up",
        "--workers",
        "2",
        "--exec",
        FIXING_WORKER,
        "--merge",
        "auto",
        "--judge",
        agent,
    ]);
    command.envs(p.store_env());
    let (code, stdout, stderr) = Background::from_command(command).finish();
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let report: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(
        report["verdict"]["merged"].as_array().unwrap().len(),
        2,
        "{report}"
    );
    // a landed as its worker wrote it; b as fixed, after the judge's one round.
    let landed = |id: &str| std::fs::read_to_string(p.path().join(format!("work/{id}.txt")));
    assert_eq!(landed("a").unwrap(), "a\n");
    assert_eq!(landed("b").unwrap(), "b fixed\n");
    let review = p.json(&["--json", "review", "b"]);
    let verdicts: Vec<(bool, String)> = review["judgements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            (
                j["approved"].as_bool().unwrap(),
                j["by"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        verdicts,
        [(false, "judge".to_string()), (true, "judge".to_string())],
        "{review}"
    );
    assert_eq!(review["rounds"][0]["by"], "judge", "{review}");
    let comment = &review["comments"][0];
    assert_eq!(
        (&comment["file"], &comment["line"], &comment["text"]),
        (&json!("work/b.txt"), &json!(1), &json!("say fixed")),
        "{review}"
    );

    // Its sessions are the tasks' attempts with the role of judging: one at a, two at b.
    let cost = p.json(&["--json", "team", "report"]);
    let row = |id: &str| support::team::report_row(&cost, id);
    assert_eq!(
        (
            row("a")["judge_sessions"].as_u64(),
            row("a")["attempts"].as_u64()
        ),
        (Some(1), Some(1)),
        "{cost}"
    );
    assert_eq!(
        (
            row("b")["judge_sessions"].as_u64(),
            row("b")["attempts"].as_u64()
        ),
        (Some(2), Some(2)),
        "{cost}"
    );
    assert_eq!(row("b")["judge_rounds"], 1, "{cost}");
    let judging = cost["roles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["role"] == "judging")
        .unwrap();
    assert_eq!(judging["attempts"], 3, "{cost}");

    // Its tools were a reader's: Baton's tools that read, none that change anything.
    let judge_requests: Vec<Value> = api
        .requests()
        .into_iter()
        .filter(|r| prompt_text(r).contains("the judge of a team"))
        .collect();
    assert_eq!(
        judge_requests
            .iter()
            .filter(|r| exchanges(r).is_empty())
            .count(),
        3,
        "one session per judgement"
    );
    let offered = tool_names(&judge_requests[0]);
    let baton_tool = |name: &str| offered.iter().any(|n| n.ends_with(&format!("__{name}")));
    assert!(baton_tool("task_status"), "{offered:?}");
    for name in ["task_complete", "task_claim", "task_add", "review_comment"] {
        assert!(!baton_tool(name), "{name} offered to a judge: {offered:?}");
    }

    if shell.is_some() {
        hostile_judge_changed_nothing(&p, &judge_requests);
    }
}

/// Claude Code's judge tried [`HOSTILE`] on a: the checkout it ran in was read-only, and its
/// door refused the merge and the claim, each refusal in its session's transcript.
fn hostile_judge_changed_nothing(p: &Project, requests: &[Value]) {
    let tried = requests
        .iter()
        .flat_map(exchanges)
        .find(|e| e.input["command"] == HOSTILE)
        .expect("the judge's command ran");
    assert!(tried.result.contains("Read-only file system"), "{tried:?}");
    assert!(tried.result.contains("tried"), "{tried:?}");
    let log = p.json(&["--json", "team", "logs", "a", "--attempt", "2"]);
    assert_eq!(log["attempt"]["agent"], "judge", "{log}");
    assert_eq!(log["attempt"]["role"], "judging", "{log}");
    let text = log.to_string();
    for refused in ["leader merge b", "worker claim judge"] {
        assert!(
            text.contains(&format!("the door refused `baton {refused}`")),
            "{refused} refused in its transcript: {text}"
        );
    }
    assert!(text.contains("it only reads"), "{text}");
    // The board is as the team left it: a done and landed by its worker, nothing claimed by
    // the judge, no commit of the judge's on the lead's branch.
    assert_ne!(p.task("a")["claimed_by"], "judge", "{}", p.task("a"));
    let log = std::process::Command::new("git")
        .args(["log", "--format=%s"])
        .current_dir(p.path())
        .output()
        .unwrap();
    let subjects = String::from_utf8_lossy(&log.stdout);
    assert!(!subjects.lines().any(|s| s == "judged"), "{subjects}");
}
