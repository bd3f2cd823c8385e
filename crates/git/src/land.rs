//! Landing a done task's branch without the lead (a team's merge queue): the branch is first
//! merged with the lead's branch in a scratch checkout of the queue's own
//! (`.coordination/worktrees/.merge-queue`, detached, never a branch), where the project's
//! check runs on exactly what would land ([`Worktrees::trial_merge`]); only then does the lead's
//! branch move, by fast-forward to that merge commit ([`Worktrees::land`]), so it is never left
//! half-merged: git moves it whole or refuses, and the lead's uncommitted changes are kept or
//! the landing refused. One merge commit per task (`--no-ff`), in the queue's order.

use std::path::PathBuf;

use baton_core::ProtectedPaths;
use baton_core::StoreError;

use crate::dependencies::DependencyWork;
use crate::error::{GitError, Result};
use crate::repo::{check, conflicted_files, merging, nul_list, output, run};
use crate::worktree::{Worktree, Worktrees, branch_name};

/// The scratch checkout's folder name under the worktrees folder.
const SCRATCH: &str = ".merge-queue";

/// A task's branch merged with the lead's in the scratch checkout, ready to check and land.
#[derive(Debug, Clone)]
pub struct Trial {
    /// The lead's branch.
    pub target: String,
    /// The lead's branch's commit it was merged with.
    pub base: String,
    /// The merge commit (in the scratch checkout, on no branch).
    pub commit: String,
    /// The scratch checkout as the task's worktree would be given to a command: the check
    /// runs there.
    pub checkout: Worktree,
}

/// What merging a task's branch with the lead's found.
#[derive(Debug, Clone)]
pub enum TrialOutcome {
    /// Merged cleanly: check it, then land it.
    Ready(Box<Trial>),
    /// The lead's branch has it already (a dependent that carried it landed first).
    AlreadyMerged,
    /// Both sides changed these files (paths from the repository's top).
    Conflict { files: Vec<String> },
    /// Landing it would change these protected files (project-relative): refused, nothing of
    /// the lead's changed ([`baton_core::protected`]).
    Protected { files: Vec<String> },
}

/// What landing a trial did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Landed {
    /// The lead's branch is at the trial's merge commit; these files changed in the checkout.
    Moved { commit: String, files: Vec<String> },
    /// The lead's branch moved (or the checkout is on another branch) since the trial: merge
    /// again on what is there now.
    Stale,
    /// Git refused to move the lead's checkout (its uncommitted changes would be overwritten):
    /// nothing changed.
    Refused { message: String },
}

impl Worktrees {
    /// Merges `task`'s branch with the branch the lead's checkout is on, in the queue's scratch
    /// checkout (a merge commit with `message`), changing nothing of the lead's. A merge that
    /// would change a `protected` path is [`TrialOutcome::Protected`].
    pub fn trial_merge(
        &self,
        task: &str,
        message: &str,
        protected: &ProtectedPaths,
    ) -> Result<TrialOutcome> {
        let repo = self.repo();
        let branch = branch_name(task);
        let _lock = self.lock()?;
        // What a sandboxed agent committed is on the branch first.
        self.publish_private_branch(task)?;
        let target = repo.current_branch()?;
        if !repo.has_branch(&branch)? {
            return Err(GitError::NoBranch {
                task: task.to_string(),
                branch,
            });
        }
        let base = repo.commit_of(&target)?;
        if check(repo.top(), &["merge-base", "--is-ancestor", &branch, &base])? {
            return Ok(TrialOutcome::AlreadyMerged);
        }
        let scratch = self.scratch(&base)?;
        let args = ["merge", "--no-ff", "--no-edit", "-m", message, &branch];
        let out = output(&scratch, &args)?;
        if !out.status.success() {
            if !merging(&scratch)? {
                return Err(crate::repo::failed(&args, &out));
            }
            let files = conflicted_files(&scratch)?;
            run(&scratch, &["merge", "--abort"])?;
            return Ok(TrialOutcome::Conflict { files });
        }
        let commit = run(&scratch, &["rev-parse", "HEAD"])?;
        let touched = protected.among(&self.changed_between(&base, &commit)?);
        if !touched.is_empty() {
            return Ok(TrialOutcome::Protected { files: touched });
        }
        Ok(TrialOutcome::Ready(Box::new(Trial {
            checkout: Worktree {
                task: task.to_string(),
                branch,
                workdir: scratch.join(repo.prefix()),
                path: scratch,
                base: Some(target.clone()),
                reused: true,
                dependencies: DependencyWork::default(),
            },
            target,
            base,
            commit,
        })))
    }

    /// Moves the lead's branch to `trial`'s merge commit by fast-forward, if it is still where
    /// the trial found it.
    pub fn land(&self, trial: &Trial) -> Result<Landed> {
        let repo = self.repo();
        let _lock = self.lock()?;
        if repo.current_branch()? != trial.target || repo.commit_of("HEAD")? != trial.base {
            return Ok(Landed::Stale);
        }
        let out = output(
            repo.top(),
            &["merge", "--ff-only", "--quiet", &trial.commit],
        )?;
        if !out.status.success() {
            if repo.commit_of("HEAD")? != trial.base {
                // Git never moves a branch part way; a changed HEAD is someone else's commit.
                return Ok(Landed::Stale);
            }
            let said = String::from_utf8_lossy(&out.stderr).trim().to_string();
            return Ok(Landed::Refused { message: said });
        }
        let files = self.changed_between(&trial.base, &trial.commit)?;
        Ok(Landed::Moved {
            commit: trial.commit.clone(),
            files,
        })
    }

    /// The files (project-relative) that differ between two commits or trees: what moving the
    /// lead's checkout from `from` to `to` changes. Renames are a removal and an addition, so
    /// both names are checked.
    pub(crate) fn changed_between(&self, from: &str, to: &str) -> Result<Vec<String>> {
        let repo = self.repo();
        let changed = repo.git(&["diff", "--name-only", "--no-renames", "-z", from, to])?;
        Ok(nul_list(&changed)
            .filter_map(|path| repo.project_path(path))
            .filter(|path| !path.is_empty())
            .map(str::to_string)
            .collect())
    }

    /// The queue's scratch checkout, detached at `commit`, with nothing left of the last
    /// trial, its ignored files included: one task's check ran what its agent wrote, and what
    /// it left (a `target/` with a planted build script's output) must not reach the next
    /// task's check.
    fn scratch(&self, commit: &str) -> Result<PathBuf> {
        let path = self.layout().worktrees_dir().join(SCRATCH);
        let at = path.to_string_lossy().into_owned();
        // One made before Baton remembered its git folder's name is made again.
        let known = crate::pinned::git_dirs(&path).is_ok();
        if path.join(".git").exists() && known {
            // A merge left half-done by a killed supervisor is dropped first.
            let _ = run(&path, &["merge", "--abort"]);
            run(
                &path,
                &["checkout", "--quiet", "--force", "--detach", commit],
            )?;
            run(&path, &["clean", "--quiet", "-ffdx"])?;
        } else {
            if path.exists() {
                std::fs::remove_dir_all(&path).map_err(|e| StoreError::io(&path, e))?;
            }
            self.repo().git(&["worktree", "prune"])?;
            self.repo()
                .git(&["worktree", "add", "--quiet", "--detach", &at, commit])?;
            crate::pinned::remember(&path)?;
        }
        Ok(path)
    }
}
