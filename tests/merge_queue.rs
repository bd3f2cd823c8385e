//! A team you can leave alone, end to end with the real `git` and `exec` agents: a 12-task
//! plan with chains and a diamond, each dependent's agent failing unless its dependencies'
//! work is in its worktree, run by `team up --workers 3 --merge auto` lands every task in the
//! lead's branch in an order that respects the plan, the project's check run once per merge;
//! without `--merge auto` every dependent still sees its dependencies' work and nothing is
//! merged (both stores). A task whose check fails goes back to its worker and lands after the
//! fix; of two tasks editing one line, the second is sent back with the file named and lands
//! after its worker merged.

use baton_test_support as support;

use serde_json::Value;
use support::{Project, git};

support::on_both_stores!(
    a_plan_of_twelve_lands_in_order_through_the_merge_queue,
    without_the_queue_every_dependent_sees_its_dependencies_and_nothing_is_merged,
);

/// The plan: two chains (1→2→3, 4→5), a diamond (6 → 7, 8 → 9), tasks on their own (10, 11),
/// and 12 on the ends of all of them.
const PLAN: [(&str, &str); 12] = [
    ("t1", ""),
    ("t2", "t1"),
    ("t3", "t2"),
    ("t4", ""),
    ("t5", "t4"),
    ("t6", ""),
    ("t7", "t6"),
    ("t8", "t6"),
    ("t9", "t7,t8"),
    ("t10", ""),
    ("t11", ""),
    ("t12", "t3,t5,t9,t10,t11"),
];

/// Each agent fails unless every task its dependencies needed, and they themselves, left
/// their file in its worktree; then writes its own and commits it.
const AGENT: &str = "for d in $BATON_TASK_DEPENDENCIES $(cat work/*.needs 2>/dev/null); do \
     test -f \"work/$d.txt\" || { echo \"$d's work is missing\" >&2; exit 1; }; done; \
     mkdir -p work && echo \"$BATON_TASK_ID\" > \"work/$BATON_TASK_ID.txt\" && \
     echo \"$BATON_TASK_DEPENDENCIES\" > \"work/$BATON_TASK_ID.needs\" && git add work && \
     git commit -qm \"$BATON_TASK_ID\"";

fn plan(p: &Project) {
    support::repository(p.path());
    for (id, deps) in PLAN {
        let mut args = vec!["leader", "add-task", id, "--id", id];
        if !deps.is_empty() {
            args.extend(["--depends", deps]);
        }
        p.ok(&args);
    }
}

/// `team up` with `extra` arguments; its exit code and the report (the last line of --json).
fn team_up(p: &Project, extra: &[&str]) -> (Option<i32>, Value) {
    let mut args = vec!["--json", "team", "up", "--workers", "3", "--exec", AGENT];
    args.extend(extra);
    let out = p.committing(&args).output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let report = serde_json::from_str(stdout.lines().last().unwrap_or("null")).unwrap();
    (out.status.code(), report)
}

fn a_plan_of_twelve_lands_in_order_through_the_merge_queue(p: Project) {
    plan(&p);
    // The check runs sandboxed: it keeps its log in a folder review.toml lets it write.
    let log_dir = p.path().with_file_name(format!(
        "{}-check-log",
        p.path().file_name().unwrap().to_string_lossy()
    ));
    std::fs::create_dir_all(&log_dir).unwrap();
    let checks = log_dir.join("checks.log");
    std::fs::write(
        p.path().join(".coordination/review.toml"),
        format!(
            "check = \"test -f work/$BATON_TASK_ID.txt && echo $BATON_TASK_ID >> '{}'\"\n\
             check_write = [\"{}\"]\n",
            checks.display(),
            log_dir.display()
        ),
    )
    .unwrap();
    let (code, report) = team_up(&p, &["--merge", "auto"]);
    assert_eq!(code, Some(0), "{report}");
    let verdict = &report["verdict"];
    assert_eq!(verdict["all_done"], true, "{verdict}");
    assert_eq!(verdict["merged"].as_array().unwrap().len(), 12, "{verdict}");

    // Every task's file is in the lead's checkout, each landed by its own merge commit, after
    // the merge commits of everything it depends on.
    for (id, _) in PLAN {
        assert!(p.path().join(format!("work/{id}.txt")).is_file(), "{id}");
    }
    let log = git(
        p.path(),
        &["log", "--first-parent", "--reverse", "--format=%s", "main"],
    );
    let landed: Vec<&str> = log
        .lines()
        .filter_map(|s| s.strip_prefix("Merge baton/"))
        .map(|s| s.split(':').next().unwrap())
        .collect();
    assert_eq!(landed.len(), 12, "{log}");
    let place = |id: &str| landed.iter().position(|l| *l == id).unwrap();
    for (id, deps) in PLAN {
        for dep in deps.split(',').filter(|d| !d.is_empty()) {
            assert!(
                place(dep) < place(id),
                "{dep} landed after {id}: {landed:?}"
            );
        }
    }
    // The check ran once per merge, on what landed.
    let mut checked: Vec<String> = std::fs::read_to_string(&checks)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    checked.sort();
    let mut ids: Vec<String> = PLAN.iter().map(|(id, _)| id.to_string()).collect();
    ids.sort();
    assert_eq!(checked, ids);
    let _ = std::fs::remove_dir_all(&log_dir);
    // The lead's checkout is clean and on its branch.
    assert_eq!(
        git(p.path(), &["status", "--porcelain", "--untracked-files=no"]),
        ""
    );
    let queue = p.json(&["team", "status"]);
    let entries = queue["merge_queue"].as_array().unwrap();
    assert!(entries.iter().all(|e| e["state"] == "landed"), "{queue}");
    // The lead's board says where each task went too.
    let board = p.ok(&["leader", "status"]);
    assert!(
        board.contains("Merge queue (in the order tasks joined it):\n  t"),
        "{board}"
    );
    assert_eq!(board.matches(": landed — in main (").count(), 12, "{board}");
    // Nothing waits for review: every done task's branch is in the lead's.
    let waiting = p.json(&["review", "waiting"]);
    assert_eq!(waiting["tasks"], serde_json::json!([]), "{waiting}");
}

fn without_the_queue_every_dependent_sees_its_dependencies_and_nothing_is_merged(p: Project) {
    plan(&p);
    let before = git(p.path(), &["rev-parse", "HEAD"]);
    let (code, report) = team_up(&p, &[]);
    // Each dependent's agent would have failed without its dependencies' work.
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(
        report["verdict"]["done"].as_array().unwrap().len(),
        12,
        "{report}"
    );
    assert!(report["verdict"].get("merged").is_none(), "{report}");
    assert_eq!(git(p.path(), &["rev-parse", "HEAD"]), before);
    assert!(!p.path().join("work").exists());
    // Each waits for review until the lead merges it.
    let waiting = |p: &Project| -> Vec<Value> {
        p.json(&["review", "waiting"])["tasks"]
            .as_array()
            .unwrap()
            .clone()
    };
    let before = waiting(&p);
    assert_eq!(before.len(), 12, "{before:?}");
    let t1 = before.iter().find(|w| w["task"] == "t1").unwrap();
    assert_eq!(
        (&t1["branch"], t1["commits"].as_u64()),
        (&Value::from("baton/t1"), Some(1)),
        "{t1}"
    );
    let merged = p.committing(&["leader", "merge", "t1"]).output().unwrap();
    assert!(merged.status.success(), "{merged:?}");
    let after = waiting(&p);
    assert_eq!(after.len(), 11, "{after:?}");
    assert!(after.iter().all(|w| w["task"] != "t1"), "{after:?}");
}

/// Writes `script` as the agent (a file: the test's shell logic stays readable), where a
/// sandboxed agent reads it: in the repository's `.git/` (not in `.coordination/`, which it
/// does not see, nor in the checkout, whose untracked files the merge would meet).
fn agent_script(p: &Project, script: &str) -> String {
    let path = p.path().join(".git/agent.sh");
    std::fs::write(&path, script).unwrap();
    format!("sh '{}'", path.display())
}

#[test]
fn a_task_whose_check_fails_goes_back_to_its_worker_and_lands_after_the_fix() {
    let p = Project::init();
    support::repository(p.path());
    p.ok(&["leader", "add-task", "Fragile", "--id", "fragile"]);
    std::fs::write(
        p.path().join(".coordination/review.toml"),
        "check = \"test ! -e broken.txt\"\n",
    )
    .unwrap();
    // The first time it leaves a broken file; sent back with the check's word, it removes it.
    let agent = agent_script(
        &p,
        r#"case "$BATON_TASK_HINTS" in
  *"test ! -e broken.txt"*) git rm -q broken.txt && git commit -qm "fix: no broken file" ;;
  *) echo done > fragile.txt && echo oops > broken.txt && git add . && git commit -qm fragile ;;
esac"#,
    );
    let out = p
        .committing(&["team", "up", "--merge", "auto", "--exec", &agent])
        .output()
        .unwrap();
    let (stdout, stderr) = support::expect_code("team up", out, 0);
    assert!(
        stderr.contains("merge queue: fragile sent back to ex1: the check exited 1"),
        "{stderr}"
    );
    assert!(
        stdout.contains("merged into the lead's branch: fragile"),
        "{stdout}"
    );
    assert!(p.path().join("fragile.txt").is_file());
    assert!(!p.path().join("broken.txt").exists());
    let review = p.json(&["review", "fragile"]);
    assert_eq!(review["merged"], true, "{review}");
    // The queue's two runs of the check, each on the branch merged with main, are the review's.
    let runs: Vec<(bool, &str)> = review["queue_checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["passed"].as_bool().unwrap(),
                c["merged_with"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(runs, [(false, "main"), (true, "main")], "{review}");
    let shown = p.ok(&["review", "fragile"]);
    assert!(
        shown.contains("the merge queue's runs follow")
            && shown.contains("Merge queue, merged with main: Check `test ! -e broken.txt` on ")
            && shown.contains(": failed (exit code 1)")
            && shown.contains(": passed in "),
        "{shown}"
    );
    let board = p.tasks_json();
    assert_eq!(board["tasks"][0]["status"], "done", "{board}");
}

#[test]
fn of_two_tasks_editing_one_line_the_second_is_sent_back_and_lands_after_its_merge() {
    let p = Project::init();
    support::repository(p.path());
    std::fs::write(p.path().join("line.txt"), "start\n").unwrap();
    git(p.path(), &["add", "line.txt"]);
    git(p.path(), &["commit", "-qm", "a line"]);
    p.ok(&["leader", "add-task", "Say a", "--id", "a"]);
    p.ok(&["leader", "add-task", "Say b", "--id", "b"]);
    // Both start from the same commit (each waits, asking Baton through its door, until no
    // task is left to claim: the other has been claimed too; it cannot see the other's
    // worktree from its sandbox), and both rewrite the one line; sent back, an agent merges
    // the lead's branch and keeps both lines.
    let agent = agent_script(
        &p,
        r#"case "$BATON_TASK_HINTS" in
  *"conflicts in line.txt"*)
    git merge -q main >/dev/null 2>&1
    printf 'a\nb\n' > line.txt && git add line.txt && git commit -qm "$BATON_TASK_ID: both lines" ;;
  *)
    until baton worker list | grep -q 'No task is ready'; do sleep 0.05; done
    echo "$BATON_TASK_ID" > line.txt && git commit -qam "$BATON_TASK_ID" ;;
esac"#,
    );
    let out = p
        .committing(&[
            "team",
            "up",
            "--workers",
            "2",
            "--merge",
            "auto",
            "--exec",
            &agent,
        ])
        .output()
        .unwrap();
    let (stdout, stderr) = support::expect_code("team up", out, 0);
    assert!(stderr.contains("conflicts in line.txt"), "{stderr}");
    assert!(
        stdout.contains("merged into the lead's branch: "),
        "{stdout}"
    );
    assert_eq!(
        std::fs::read_to_string(p.path().join("line.txt")).unwrap(),
        "a\nb\n"
    );
    let log = git(p.path(), &["log", "--first-parent", "--format=%s", "main"]);
    assert_eq!(
        log.lines()
            .filter(|s| s.starts_with("Merge baton/"))
            .count(),
        2,
        "{log}"
    );
}
