//! Reviewing a task's work with the real `git`, on both stores: a worker's branch is shown as
//! a diff with the lead's line comments under their lines; "request changes" sends the done
//! task back to its worker with them (another worker passes it over), and that worker's next
//! `worker loop --worktree` carries on from its branch, whose new
//! commit the review then shows; the project's check command (`.coordination/review.toml`)
//! runs in the task's worktree and a failing one stops `leader merge`, which a passing one then
//! lets through. Bad input is refused and changes nothing.

use baton_test_support as support;

use serde_json::Value;
use support::{Project, git};

support::on_both_stores!(
    a_review_round_trip_ends_in_a_checked_merge,
    request_changes_says_who_gets_the_task,
);

/// Said as the board has it: held for the worker that did it (it said "available again"), or,
/// with --anyone, available.
fn request_changes_says_who_gets_the_task(p: Project) {
    support::repository(p.path());
    p.ok(&["leader", "add-task", "Greet the user", "--id", "t1"]);
    work(&p);
    let said = p.ok(&["review", "request-changes", "t1", "--summary", "Say bye."]);
    assert!(
        said.starts_with("t1 goes back to w1 (round 1 sent):"),
        "{said}"
    );
    assert_eq!(status(&p, "t1"), "claimed");
    work(&p);
    let said = p.ok(&[
        "review",
        "request-changes",
        "t1",
        "--summary",
        "Once more.",
        "--anyone",
    ]);
    assert!(
        said.starts_with("t1 is available again (round 2 sent):"),
        "{said}"
    );
    assert_eq!(status(&p, "t1"), "available");
}

/// A first attempt writes `greet.txt`; an attempt whose hints ask for changes adds `bye`.
const WORK: &str = "if printf '%s' \"$BATON_TASK_HINTS\" | grep -q 'Changes requested'; then \
     echo bye >> greet.txt && git commit -q -am 'say bye'; \
     else printf 'hello\\nworld\\n' > greet.txt && git add greet.txt && git commit -q -m 'greet'; fi";

fn work(p: &Project) {
    p.work_in_worktrees("w1", WORK);
}

/// Writes the project's `.coordination/review.toml`.
fn review_settings(p: &Project, toml: &str) {
    std::fs::write(p.coordination().join("review.toml"), toml).unwrap();
}

fn status(p: &Project, id: &str) -> String {
    p.task(id)["status"].as_str().unwrap().to_string()
}

fn a_review_round_trip_ends_in_a_checked_merge(p: Project) {
    support::repository(p.path());
    p.ok(&[
        "leader",
        "add-task",
        "Greet the user",
        "--id",
        "t1",
        "--acceptance",
        "greet.txt greets the user",
    ]);
    work(&p);

    let review = p.json(&["review", "t1"]);
    assert_eq!(review["branch"], "baton/t1", "{review}");
    assert_eq!(review["base"], "main");
    assert_eq!(review["merged"], false);
    let files = review["files"].as_array().unwrap();
    assert_eq!(files.len(), 1, "{review}");
    assert_eq!(files[0]["path"], "greet.txt");
    assert_eq!(files[0]["change"], "added");
    assert_eq!(
        (
            files[0]["additions"].as_u64(),
            files[0]["deletions"].as_u64()
        ),
        (Some(2), Some(0))
    );
    assert!(
        files[0]["patch"].as_str().unwrap().contains("\n+world"),
        "{review}"
    );
    let first_head = review["head"].as_str().unwrap().to_string();

    // Comments: on a line of the diff, and refusals that change nothing.
    let comment = p.json(&[
        "review",
        "comment",
        "t1",
        "--file",
        "greet.txt",
        "--line",
        "2",
        "say goodbye too",
    ]);
    assert_eq!(comment["id"], 1);
    assert_eq!(comment["head"], first_head.as_str());
    let refused = p.fails(
        &[
            "review",
            "comment",
            "t1",
            "--file",
            "other.txt",
            "--line",
            "1",
            "x",
        ],
        1,
    );
    assert!(
        refused.contains("not a file of t1's diff (its files: greet.txt)"),
        "{refused}"
    );
    let zero = p.fails(
        &[
            "review",
            "comment",
            "t1",
            "--file",
            "greet.txt",
            "--line",
            "0",
            "x",
        ],
        1,
    );
    assert!(zero.contains("lines are counted from 1"), "{zero}");
    let outside = p.fails(
        &[
            "review",
            "comment",
            "t1",
            "--file",
            "greet.txt",
            "--line",
            "40",
            "x",
        ],
        1,
    );
    assert!(
        outside.contains(
            "line 40 of greet.txt (new side) is not in t1's diff; its changes show lines 1–2"
        ),
        "{outside}"
    );
    p.fails(
        &[
            "review",
            "comment",
            "t9",
            "--file",
            "greet.txt",
            "--line",
            "1",
            "x",
        ],
        1,
    );
    let shown = p.ok(&["review", "t1"]);
    assert!(
        shown.contains("\nDone when: greet.txt greets the user\n"),
        "{shown}"
    );
    let after_world = shown.lines().skip_while(|l| *l != "+world").nth(1);
    assert_eq!(
        after_world,
        Some("    >> lead (open): say goodbye too"),
        "{shown}"
    );
    assert!(shown.contains("1 open comment"), "{shown}");

    // Requesting changes sends the task back to its worker with the comment: another worker
    // passes it over; its worker's next loop carries on.
    let sent = p.json(&["review", "request-changes", "t1", "--summary", "Nearly."]);
    assert_eq!(sent["round"]["round"], 1);
    assert_eq!(sent["task"]["status"], "claimed", "{sent}");
    assert_eq!(sent["task"]["claimed_by"], "w1", "{sent}");
    let (other, _) = support::expect_code(
        "another worker's claim",
        p.run(&["--json", "worker", "claim", "w2"]),
        3,
    );
    assert_eq!(
        serde_json::from_str::<Value>(&other).unwrap()["task"],
        Value::Null,
        "{other}"
    );
    let hints = sent["task"]["context"]["hints"].as_str().unwrap();
    assert!(hints.contains("- greet.txt:2: say goodbye too"), "{hints}");
    assert!(hints.contains("Nearly."), "{hints}");
    let again = p.fails(&["review", "request-changes", "t1", "--summary", "More"], 1);
    assert!(again.contains("only a done task"), "{again}");
    work(&p);
    assert_eq!(status(&p, "t1"), "done");
    let review = p.json(&["review", "t1"]);
    assert_ne!(
        review["head"],
        first_head.as_str(),
        "a new commit on the same branch"
    );
    assert!(
        review["files"][0]["patch"]
            .as_str()
            .unwrap()
            .contains("\n+bye"),
        "{review}"
    );
    assert_eq!(review["comments"][0]["round"], 1);
    assert_eq!(review["rounds"].as_array().unwrap().len(), 1);
    let log = git(p.path(), &["log", "--format=%s", "baton/t1"]);
    assert!(log.starts_with("say bye\ngreet\n"), "{log}");

    // A failing check stops the merge; the lead's branch does not move.
    let lead_head = git(p.path(), &["rev-parse", "HEAD"]);
    review_settings(&p, "check = \"grep -q forbidden greet.txt\"\n");
    let out = p.run(&["--json", "leader", "merge", "t1"]);
    assert_eq!(out.status.code(), Some(9), "{out:?}");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["check_failed"]["task"], "t1", "{report}");
    assert_eq!(report["check_failed"]["check"]["exit_code"], 1, "{report}");
    assert!(report["merged"].as_array().unwrap().is_empty());
    assert_eq!(git(p.path(), &["rev-parse", "HEAD"]), lead_head);
    let review = p.json(&["review", "t1"]);
    assert_eq!(review["check"]["passed"], false, "{review}");
    assert_eq!(review["check_command"], "grep -q forbidden greet.txt");
    let (said, _) = support::expect_code("review check", p.run(&["review", "check", "t1"]), 9);
    assert!(said.contains("failed (exit code 1)"), "{said}");
    // Said as it is without --json too, not "nothing to merge".
    let (said, _) = support::expect_code("leader merge", p.run(&["leader", "merge", "t1"]), 9);
    assert!(said.starts_with("Check failed: t1 not merged"), "{said}");

    // A failure whose cause was outside the branch (here: a file the check reads) is not
    // reused once the cause is fixed: the same check on the same commit runs again. The check
    // runs sandboxed: a folder outside the project is the check's to read when review.toml
    // says so.
    let outside = p.path().with_file_name(format!(
        "{}-check-reads",
        p.path().file_name().unwrap().to_string_lossy()
    ));
    std::fs::create_dir_all(&outside).unwrap();
    let marker = outside.join("check-may-pass");
    let check = format!(
        "check = \"test -e '{}' && grep -q bye greet.txt && echo checked\"\ncheck_read = [\"{}\"]\n",
        marker.display(),
        outside.display()
    );
    review_settings(&p, &check);
    support::expect_code("leader merge", p.run(&["leader", "merge", "t1"]), 9);
    std::fs::write(&marker, "").unwrap();

    // A check that passes lets it through; the branch's commits reach the lead.
    let merged = p.json(&["leader", "merge", "t1"]);
    assert!(merged["check_failed"].is_null(), "{merged}");
    assert_eq!(merged["merged"][0]["task"], "t1", "{merged}");
    assert_eq!(
        std::fs::read_to_string(p.path().join("greet.txt")).unwrap(),
        "hello\nworld\nbye\n"
    );
    let review = p.json(&["review", "t1"]);
    assert_eq!(review["merged"], true);
    assert_eq!(
        review["files"][0]["additions"], 3,
        "what the merge brought: {review}"
    );
    assert_eq!(review["check"]["output"], "checked", "{review}");
    let _ = std::fs::remove_dir_all(&outside);
}

#[test]
fn bad_settings_and_unknown_tasks_are_refused() {
    let p = Project::init();
    support::repository(p.path());
    p.ok(&["leader", "add-task", "Nothing yet", "--id", "t1"]);
    let no_branch = p.fails(&["review", "t1"], 1);
    assert!(no_branch.contains("has no branch baton/t1"), "{no_branch}");
    let hostile = p.fails(&["review", "../../etc"], 1);
    assert!(hostile.contains("task id"), "{hostile}");
    review_settings(&p, "chek = 'x'\n");
    let bad = p.fails(&["review", "check", "t1"], 1);
    assert!(bad.contains("chek"), "{bad}");
    std::fs::remove_file(p.coordination().join("review.toml")).unwrap();
    let none = p.fails(&["review", "check", "t1"], 2);
    assert!(none.contains("no check command"), "{none}");
}
