//! A dependent task starts from its dependencies' work. When a task's branch is made, each
//! dependency's branch that exists and is not in it yet is merged into it (in the order the task
//! lists them, each with a merge commit that says so), so its agent sees what they did whether
//! or not the lead has merged them. Merging the dependent later brings their commits into the
//! lead's branch once: git finds them there when the dependencies' own turn comes.
//!
//! A conflict between two dependencies is not Baton's to settle: the merge is left in progress
//! in the task's worktree, its files named, for the task's agent to resolve as its first job
//! ([`DependencyWork::conflict`]), or aborted and the task held for the lead
//! ([`DependencyConflicts::Hold`], the project's `review.toml`).

use std::path::Path;

use baton_core::review::DependencyConflicts;

use crate::error::Result;
use crate::repo::{check, conflicted_files, merging, output, run};

/// What a new task branch took from its dependencies' branches.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DependencyWork {
    /// Dependency branches merged in, in order.
    pub merged: Vec<String>,
    /// A dependency's merge that conflicted.
    pub conflict: Option<DependencyConflict>,
}

/// A dependency branch that did not merge cleanly into a task's branch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DependencyConflict {
    /// The dependency branch whose merge conflicted.
    pub branch: String,
    /// The conflicting files, as paths from the repository's top.
    pub files: Vec<String>,
    /// The merge is still in progress in the worktree (otherwise it was aborted).
    pub in_progress: bool,
    /// Dependency branches after it, not merged yet.
    pub not_merged: Vec<String>,
}

/// Merges the dependencies' `branches` into the branch of `task` checked out at `worktree`,
/// stopping at the first conflict (left in progress or aborted, as `on_conflict` says).
pub(crate) fn bring_in(
    worktree: &Path,
    task: &str,
    branches: &[String],
    on_conflict: DependencyConflicts,
) -> Result<DependencyWork> {
    let mut work = DependencyWork::default();
    for (index, branch) in branches.iter().enumerate() {
        let reference = format!("refs/heads/{branch}");
        if !check(worktree, &["show-ref", "--verify", "--quiet", &reference])?
            || check(worktree, &["merge-base", "--is-ancestor", branch, "HEAD"])?
        {
            // Worked without a branch, or in this one already (through another dependency).
            continue;
        }
        let dependency = branch.strip_prefix("baton/").unwrap_or(branch);
        let message = format!("Baton: bring in {branch} ({task} depends on {dependency})");
        let args = ["merge", "--no-ff", "--no-edit", "-m", &message, branch];
        let out = output(worktree, &args)?;
        if out.status.success() {
            work.merged.push(branch.clone());
            continue;
        }
        if !merging(worktree)? {
            return Err(crate::repo::failed(&args, &out));
        }
        let files = conflicted_files(worktree)?;
        let in_progress = on_conflict == DependencyConflicts::Work;
        if !in_progress {
            run(worktree, &["merge", "--abort"])?;
        }
        work.conflict = Some(DependencyConflict {
            branch: branch.clone(),
            files,
            in_progress,
            not_merged: branches[index + 1..].to_vec(),
        });
        break;
    }
    Ok(work)
}
