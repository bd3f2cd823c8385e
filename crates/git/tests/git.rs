//! baton-git against the real `git`: worktrees per task, what a branch records, and merges
//! that happen whole or not at all.

use std::path::Path;

use baton_core::{Completion, Layout};
use baton_git::{GitError, Worktrees, merge_task_branch, record_branch};
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
    let merged = merge_task_branch(&worktrees, "task-3", "Merge baton/task-3: c").unwrap();
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

    let again = merge_task_branch(&worktrees, "task-3", "again").unwrap();
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

    let err = merge_task_branch(&worktrees, "t4", "Merge").unwrap_err();
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

    let err = merge_task_branch(&worktrees, "t5", "Merge").unwrap_err();
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
    let merged = merge_task_branch(&worktrees, "t5", "Merge").unwrap();
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
    let err = merge_task_branch(&worktrees, "never", "Merge").unwrap_err();
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
