//! A worktree per task, end to end with the real `git`: three `worker loop --worktree` workers
//! finish ten tasks that each commit a file, every result records its branch and commit, and
//! `leader merge --all` gives the expected tree; a conflicting merge is reported and changes
//! nothing; `worker claim --worktree` then `worker complete` records the branch; a task
//! claimed again goes on from its branch; dependencies whose branches conflict are the
//! dependent's agent's to resolve, or hold it for the lead; `leader doctor` reports and `--fix` removes the
//! worktrees of finished tasks; and bad input is refused, changing nothing.

use baton_test_support as support;

use std::path::Path;
use std::process::Output;

use serde_json::Value;
use support::{Project, git};

support::on_both_stores!(
    three_worktree_workers_finish_ten_tasks_and_the_lead_merges_them_all,
    a_claimed_worktree_is_recorded_when_the_task_is_completed,
);

fn head(p: &Project) -> String {
    git(p.path(), &["rev-parse", "HEAD"]).trim().to_string()
}

/// One `worker loop AGENT --worktree` over every ready task, running `command`.
fn worktree_loop(p: &Project, agent: &str, command: &str) -> Output {
    let args = [
        "worker",
        "loop",
        agent,
        "--worktree",
        "--quiet",
        "--exec",
        command,
    ];
    p.committing(&args).output().unwrap()
}

fn task<'a>(board: &'a Value, id: &str) -> &'a Value {
    board["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == id)
        .unwrap_or_else(|| panic!("no {id} in {board}"))
}

/// Each task writes `out/ID.txt` and commits it, in its own worktree.
const WRITE_AND_COMMIT: &str = "mkdir -p out && printf '%s\\n' \"$BATON_TASK_ID\" > \"out/$BATON_TASK_ID.txt\" \
     && git add out && git commit -q -m \"$BATON_TASK_ID: write its file\" && echo \"wrote $BATON_TASK_ID on $BATON_BRANCH\"";

fn three_worktree_workers_finish_ten_tasks_and_the_lead_merges_them_all(p: Project) {
    support::repository(p.path());
    let ids: Vec<String> = (0..10).map(|i| format!("t{i}")).collect();
    for id in &ids {
        p.ok(&["leader", "add-task", &format!("write {id}"), "--id", id]);
    }
    let said = support::run_together((0..3).map(|w| {
        p.committing(&[
            "worker",
            "loop",
            &format!("w{w}"),
            "--exec",
            WRITE_AND_COMMIT,
            "--worktree",
            "--quiet",
        ])
    }));
    assert!(
        said.contains("on baton/t"),
        "the loop says where it works: {said}"
    );

    // Each task is done, and its result holds its branch, its one commit and its file.
    let board = p.tasks_json();
    for id in &ids {
        let t = task(&board, id);
        assert_eq!(t["status"], "done", "{t}");
        let result = &t["result"];
        assert_eq!(result["output"], format!("wrote {id} on baton/{id}"), "{t}");
        assert_eq!(result["branch"]["name"], format!("baton/{id}"), "{t}");
        assert_eq!(result["branch"]["base"], "main", "{t}");
        let commits = result["branch"]["commits"].as_array().unwrap();
        assert_eq!(commits.len(), 1, "{t}");
        assert_eq!(commits[0]["subject"], format!("{id}: write its file"));
        let on_branch = git(p.path(), &["rev-parse", &format!("baton/{id}")]);
        assert_eq!(commits[0]["id"], on_branch.trim());
        assert_eq!(result["files_created"][0], format!("out/{id}.txt"), "{t}");
    }
    let report = std::fs::read_to_string(p.files().join("results/t3.md")).unwrap();
    assert!(
        report.contains("## Branch\nbaton/t3 (from main)"),
        "{report}"
    );
    assert!(report.contains("t3: write its file"), "{report}");
    // Nothing reached the lead's branch behind its back.
    assert!(!p.path().join("out").exists());
    assert_eq!(git(p.path(), &["rev-list", "--count", "HEAD"]).trim(), "1");

    let merged = p.json(&["leader", "merge", "--all"]);
    assert_eq!(merged["into"], "main");
    assert!(merged["conflict"].is_null(), "{merged}");
    assert_eq!(merged["merged"].as_array().unwrap().len(), 10, "{merged}");
    let mut tree: Vec<String> = git(p.path(), &["ls-tree", "-r", "--name-only", "HEAD"])
        .lines()
        .map(str::to_string)
        .collect();
    tree.sort();
    let mut expected: Vec<String> = ids.iter().map(|id| format!("out/{id}.txt")).collect();
    expected.push("README.md".into());
    expected.sort();
    assert_eq!(tree, expected);
    for id in &ids {
        let text = std::fs::read_to_string(p.path().join(format!("out/{id}.txt"))).unwrap();
        assert_eq!(text, format!("{id}\n"));
    }
    let merges = git(p.path(), &["log", "--merges", "--format=%s"]);
    assert_eq!(merges.lines().count(), 10, "{merges}");
    assert!(merges.contains("Merge baton/t0: write t0"), "{merges}");
    assert_eq!(
        p.ok(&["leader", "merge", "--all"]).trim(),
        "Nothing to merge: no done task has a branch that is not merged yet."
    );

    // Each worker took its last task's clean checkout for its next task: one worktree per
    // worker is left (its last task's), reported, then removed; every branch stays.
    let out = p.run(&["--json", "leader", "doctor"]);
    assert_eq!(out.status.code(), Some(4));
    let doctor: Value = serde_json::from_slice(&out.stdout).unwrap();
    let worktrees: Vec<&Value> = doctor["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "finished_worktree")
        .collect();
    let board = p.tasks_json();
    let workers: std::collections::BTreeSet<&str> = board["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["claimed_by"].as_str().unwrap())
        .collect();
    assert_eq!(worktrees.len(), workers.len(), "{doctor}");
    assert!(worktrees.iter().all(|f| f["fixable"] == true), "{doctor}");
    p.ok(&["leader", "doctor", "--fix"]);
    assert_eq!(git(p.path(), &["worktree", "list"]).lines().count(), 1);
    assert_eq!(p.ok(&["leader", "doctor"]).trim(), "No problems found.");
    let branches = git(p.path(), &["branch", "--list", "baton/*"]);
    assert_eq!(branches.lines().count(), 10, "{branches}");
}

fn a_claimed_worktree_is_recorded_when_the_task_is_completed(p: Project) {
    support::repository(p.path());
    p.ok(&[
        "leader",
        "add-task",
        "Add the users endpoint",
        "--id",
        "users",
    ]);
    let claimed = p.json(&["worker", "claim", "cc1", "--worktree"]);
    assert_eq!(claimed["task"]["id"], "users");
    let worktree = &claimed["worktree"];
    assert_eq!(worktree["branch"], "baton/users");
    assert_eq!(worktree["base"], "main");
    assert_eq!(worktree["reused"], false);
    let path = Path::new(worktree["path"].as_str().unwrap()).to_path_buf();
    assert!(
        path.starts_with(p.coordination().join("worktrees")),
        "{path:?}"
    );

    std::fs::write(path.join("users.ts"), "export const users = [];\n").unwrap();
    git(&path, &["add", "users.ts"]);
    git(&path, &["commit", "-q", "-m", "Add users"]);
    std::fs::write(path.join("scratch.txt"), "left over\n").unwrap();
    p.ok(&["worker", "start", "cc1", "users"]);
    let done = p.json(&["worker", "complete", "cc1", "users", "Added the endpoint"]);
    let result = &done["task"]["result"];
    assert_eq!(result["branch"]["name"], "baton/users", "{done}");
    assert_eq!(result["branch"]["commits"][0]["subject"], "Add users");
    assert_eq!(result["branch"]["uncommitted"][0], "scratch.txt", "{done}");
    assert_eq!(result["files_created"][0], "users.ts", "{done}");

    let merged = p.json(&["leader", "merge", "users"]);
    assert_eq!(merged["merged"][0]["files"][0], "users.ts", "{merged}");
    assert!(p.path().join("users.ts").is_file());
    assert!(
        !p.path().join("scratch.txt").exists(),
        "only commits are merged"
    );
    let again = p.ok(&["leader", "merge", "users"]);
    assert!(again.contains("baton/users is in main already"), "{again}");
}

#[test]
fn a_conflicting_merge_is_reported_and_changes_nothing() {
    let p = Project::init();
    support::repository(p.path());
    p.ok(&["leader", "add-task", "First words", "--id", "a", "-p", "1"]);
    p.ok(&["leader", "add-task", "Other words", "--id", "b", "-p", "2"]);
    let out = worktree_loop(
        &p,
        "w1",
        "echo \"$BATON_TASK_ID was here\" > shared.txt && git add shared.txt \
         && git commit -q -m \"$BATON_TASK_ID\"",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    p.ok(&["leader", "merge", "a"]);
    let before = head(&p);
    // An untracked file of the lead's, which the abort must leave alone.
    std::fs::write(p.path().join("notes.txt"), "mine\n").unwrap();
    let out = p.run(&["--json", "leader", "merge", "b"]);
    assert_eq!(out.status.code(), Some(8), "{out:?}");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["conflict"]["task"], "b", "{report}");
    assert_eq!(report["conflict"]["files"][0], "shared.txt", "{report}");
    assert!(report["merged"].as_array().unwrap().is_empty());
    let (_, stderr) = support::expect_code("merge b", p.run(&["leader", "merge", "b"]), 8);
    assert!(stderr.contains("conflicts in shared.txt"), "{stderr}");
    assert!(stderr.contains("nothing changed"), "{stderr}");

    assert_eq!(head(&p), before, "the lead's branch did not move");
    assert_eq!(
        git(p.path(), &["status", "--porcelain", "--untracked-files=no"]),
        ""
    );
    assert!(!p.path().join(".git/MERGE_HEAD").exists());
    assert_eq!(
        std::fs::read_to_string(p.path().join("shared.txt")).unwrap(),
        "a was here\n"
    );
    assert_eq!(
        std::fs::read_to_string(p.path().join("notes.txt")).unwrap(),
        "mine\n"
    );
}

#[test]
fn a_task_claimed_again_goes_on_from_its_branch() {
    let p = Project::init();
    support::repository(p.path());
    p.ok(&["leader", "add-task", "Two steps", "--id", "steps"]);
    // The first attempt commits its first step and fails; the second sees it and finishes.
    let command = "if [ -f one.txt ]; then echo two > two.txt && git add two.txt && \
                   git commit -q -m second; else echo one > one.txt && git add one.txt && \
                   git commit -q -m first && exit 1; fi";
    let run = || worktree_loop(&p, "w1", command);
    let first = run();
    assert!(first.status.success(), "{first:?}");
    assert_eq!(task(&p.tasks_json(), "steps")["status"], "failed");
    p.ok(&["leader", "reset", "steps"]);
    let second = run();
    let said = String::from_utf8_lossy(&second.stderr);
    assert!(said.contains("(as it was left)"), "{said}");
    let board = p.tasks_json();
    let t = task(&board, "steps");
    assert_eq!(t["status"], "done", "{t}");
    let subjects: Vec<&str> = t["result"]["branch"]["commits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["subject"].as_str().unwrap())
        .collect();
    assert_eq!(subjects, ["first", "second"]);
}

/// Two tasks that write `same.txt` differently, and `both` depending on them, done in
/// worktrees; returns what `both`'s agent saw.
fn conflicting_dependencies(p: &Project) {
    support::repository(p.path());
    p.ok(&["leader", "add-task", "One", "--id", "one"]);
    p.ok(&["leader", "add-task", "Two", "--id", "two"]);
    p.ok(&[
        "leader",
        "add-task",
        "Both",
        "--id",
        "both",
        "--depends",
        "one,two",
    ]);
    let write = "[ \"$BATON_TASK_ID\" = both ] && exit 0; echo \"$BATON_TASK_ID\" > same.txt \
                 && git add same.txt && git commit -q -m \"$BATON_TASK_ID\"";
    // One worker does one and two; `both` is left for the test's own loop.
    let out = p
        .committing(&[
            "worker",
            "loop",
            "w1",
            "--worktree",
            "--quiet",
            "--max-tasks",
            "2",
            "--exec",
            write,
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
}

#[test]
fn conflicting_dependencies_are_resolved_by_the_dependents_agent() {
    let p = Project::init();
    conflicting_dependencies(&p);
    // The agent finds the merge in progress, resolves it with both lines and commits.
    let resolve = "git rev-parse -q --verify MERGE_HEAD >/dev/null || exit 3; \
                   printf 'one\\ntwo\\n' > same.txt && git add same.txt && git commit -q --no-edit";
    let out = worktree_loop(&p, "w2", resolve);
    assert!(out.status.success(), "{out:?}");
    let board = p.tasks_json();
    assert_eq!(task(&board, "both")["status"], "done", "{board}");
    p.ok(&["leader", "merge", "both"]);
    assert_eq!(
        std::fs::read_to_string(p.path().join("same.txt")).unwrap(),
        "one\ntwo\n"
    );
}

#[test]
fn conflicting_dependencies_held_fail_the_dependent_naming_the_files() {
    let p = Project::init();
    conflicting_dependencies(&p);
    std::fs::write(
        p.path().join(".coordination/review.toml"),
        "dependency_conflicts = \"hold\"\n",
    )
    .unwrap();
    let out = worktree_loop(&p, "w2", "echo ran > ran.txt");
    assert!(out.status.success(), "{out:?}");
    let board = p.tasks_json();
    let both = task(&board, "both");
    assert_eq!(both["status"], "failed", "{both}");
    let reason = both["result"]["error"].as_str().unwrap_or_default();
    assert!(
        reason.contains("same.txt") && reason.contains("leader reset both"),
        "{both}"
    );
    // Nothing ran and nothing was left: no branch, no worktree.
    assert!(!p.path().join(".coordination/worktrees/both").exists());
    assert_eq!(git(p.path(), &["branch", "--list", "baton/both"]), "");
}

#[test]
fn bad_input_is_refused_and_changes_nothing() {
    // Not a git repository: the claim is refused and handed back; the loop does not start.
    let p = Project::init();
    p.ok(&["leader", "add-task", "Anything", "--id", "t1"]);
    let out = p.run(&["--json", "worker", "claim", "w1", "--worktree"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let error: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(error["error"]["kind"], "git", "{error}");
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("git init"),
        "{error}"
    );
    assert_eq!(task(&p.tasks_json(), "t1")["status"], "available");
    let stderr = p.fails(&["worker", "loop", "w1", "--worktree", "--exec", "true"], 1);
    assert!(stderr.contains("not in a git repository"), "{stderr}");
    assert_eq!(task(&p.tasks_json(), "t1")["status"], "available");
    assert!(!p.coordination().join("worktrees").exists());

    support::repository(p.path());
    // Unknown, unfinished, and neither or both of tasks and --all.
    let stderr = p.fails(&["leader", "merge", "nope"], 1);
    assert!(stderr.contains("no task with id \"nope\""), "{stderr}");
    let stderr = p.fails(&["leader", "merge", "t1"], 1);
    assert!(
        stderr.contains("only a done task's branch is merged"),
        "{stderr}"
    );
    p.fails(&["leader", "merge"], 2);
    p.fails(&["leader", "merge", "t1", "--all"], 2);

    // A done task without a branch, and a lead with uncommitted changes.
    p.ok(&["worker", "claim", "w1"]);
    p.ok(&["worker", "start", "w1", "t1"]);
    p.ok(&["worker", "complete", "w1", "t1", "done without a worktree"]);
    let stderr = p.fails(&["leader", "merge", "t1"], 1);
    assert!(stderr.contains("has no branch baton/t1"), "{stderr}");
    p.ok(&["leader", "add-task", "Edit", "--id", "t2"]);
    let out = worktree_loop(
        &p,
        "w1",
        "echo x > x.txt && git add x.txt && git commit -q -m x",
    );
    assert!(out.status.success(), "{out:?}");
    std::fs::write(p.path().join("README.md"), "edited\n").unwrap();
    let before = head(&p);
    let stderr = p.fails(&["leader", "merge", "t2"], 1);
    assert!(
        stderr.contains("uncommitted changes (README.md)"),
        "{stderr}"
    );
    assert_eq!(head(&p), before);
    assert_eq!(
        std::fs::read_to_string(p.path().join("README.md")).unwrap(),
        "edited\n"
    );
}
