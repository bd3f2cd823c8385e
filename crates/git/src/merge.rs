//! `baton leader merge`: a finished task's branch into the lead's, all or nothing. The merge
//! is refused while the lead has uncommitted changes (git could not always put them back after
//! a conflict), and a conflicting merge is aborted, so the lead's checkout is left exactly as
//! it was, and the conflicting files are named.

use crate::error::{GitError, Result};
use baton_core::ProtectedPaths;

use crate::repo::{changed_files, conflicted_files, merging, output, run};
use crate::worktree::{Worktrees, branch_name};

/// The merge commit's message for `task`'s branch: `Merge baton/ID: ` and its description's
/// first line (cut at 72 characters).
pub fn merge_message(task: &baton_core::Task) -> String {
    let first = task.description.lines().next().unwrap_or_default();
    let mut title: String = first.chars().take(72).collect();
    if title.len() < first.len() {
        title.push('…');
    }
    format!("Merge {}: {title}", branch_name(&task.id))
}

/// A merge done (or found done already).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeOutcome {
    pub branch: String,
    /// The lead's branch it went into.
    pub into: String,
    /// The branch was in the lead's already; nothing was done.
    pub already_merged: bool,
    /// The lead's branch's commit after the merge.
    pub commit: String,
    /// Files the merge changed in the lead's checkout, project-relative.
    pub files: Vec<String>,
}

/// Merges `task`'s branch into the branch the lead's checkout is on (always with a merge
/// commit, `message`), or changes nothing. A merge that would change a `protected` path is
/// refused before it starts ([`GitError::Protected`]).
pub fn merge_task_branch(
    worktrees: &Worktrees,
    task: &str,
    message: &str,
    protected: &ProtectedPaths,
) -> Result<MergeOutcome> {
    let repo = worktrees.repo();
    let branch = branch_name(task);
    let _lock = worktrees.lock()?;
    // What a sandboxed agent committed is on the branch first.
    worktrees.publish_private_branch(task)?;
    let into = repo.current_branch()?;
    if !repo.has_branch(&branch)? {
        return Err(GitError::NoBranch {
            task: task.to_string(),
            branch,
        });
    }
    let before = repo.commit_of("HEAD")?;
    if repo.is_merged(&branch)? {
        return Ok(MergeOutcome {
            branch,
            into,
            already_merged: true,
            commit: before,
            files: Vec::new(),
        });
    }
    let changes = lead_changes(worktrees)?;
    if !changes.is_empty() {
        return Err(GitError::UncommittedChanges { files: changes });
    }
    let touched = protected.among(&would_change(worktrees, &before, &branch)?);
    if !touched.is_empty() {
        return Err(GitError::Protected {
            branch,
            files: touched,
        });
    }
    let args = ["merge", "--no-ff", "--no-edit", "-m", message, &branch];
    let out = output(repo.top(), &args)?;
    if !out.status.success() {
        return Err(undo(worktrees, &branch, &into, &args, &out));
    }
    let commit = repo.commit_of("HEAD")?;
    let files = worktrees.changed_between(&before, &commit)?;
    Ok(MergeOutcome {
        branch,
        into,
        already_merged: false,
        commit,
        files,
    })
}

/// The files merging `branch` into `head` would change, found without touching the lead's
/// checkout: git's own merge of the two, written as a tree only (`merge-tree --write-tree`,
/// the merge `git merge` makes), against `head`. A conflicted merge's tree holds its
/// conflicted files too.
fn would_change(worktrees: &Worktrees, head: &str, branch: &str) -> Result<Vec<String>> {
    let args = ["merge-tree", "--write-tree", "--no-messages", head, branch];
    let out = output(worktrees.repo().top(), &args)?;
    // 0: merged cleanly, 1: with conflicts; both print the tree first.
    let tree = String::from_utf8_lossy(&out.stdout);
    let tree = tree.lines().next().unwrap_or_default().trim();
    if !matches!(out.status.code(), Some(0 | 1)) || tree.is_empty() {
        return Err(crate::repo::failed(&args, &out));
    }
    worktrees.changed_between(head, tree)
}

/// After a failed merge: aborts it if it started (naming the conflicting files), so the
/// checkout is as it was; otherwise git refused before changing anything.
fn undo(
    worktrees: &Worktrees,
    branch: &str,
    into: &str,
    args: &[&str],
    out: &std::process::Output,
) -> GitError {
    let repo = worktrees.repo();
    let top = repo.top();
    if !merging(top).unwrap_or(false) {
        return crate::repo::failed(args, out);
    }
    let files = conflicted_files(top).unwrap_or_default();
    if let Err(e) = run(top, &["merge", "--abort"]) {
        return e;
    }
    GitError::Conflict {
        branch: branch.to_string(),
        into: into.to_string(),
        files,
    }
}

/// Tracked files the lead has changed and not committed, but for the project's own
/// `.coordination/` (which the store writes all the time, and a merge never touches).
fn lead_changes(worktrees: &Worktrees) -> Result<Vec<String>> {
    let repo = worktrees.repo();
    let ours = format!("{}.coordination/", repo.prefix());
    Ok(changed_files(repo.top(), false)?
        .into_iter()
        .filter(|path| !path.starts_with(&ours))
        .collect())
}
