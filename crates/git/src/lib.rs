//! # baton-git
//!
//! Baton's use of git, through the real `git` binary (the user's git, with their config, hooks
//! and identity): a worktree per task on its own branch `baton/TASK-ID`, started from the
//! lead's branch with its dependencies' branches merged in ([`worktree`], [`dependencies`]);
//! what that branch holds when the task ends, for its result
//! ([`worktree::Worktrees::branch_record`]); and merging a finished task's branch into the
//! lead's, all or nothing ([`merge`]), or landed by a team's merge queue after a check on
//! exactly what would land ([`land`]); and what a branch changed, for the lead's review
//! ([`diff`]).
//!
//! It does not decide anything about tasks: the worker loop, the CLI and the API operations
//! say which task and when; this crate only does the git side, under one lock per project
//! (`.coordination/worktrees/.lock`) so that workers creating worktrees at once and a lead
//! merging never run git's own writes over each other.

mod claimed;
pub mod dependencies;
pub mod diff;
pub mod error;
pub mod land;
pub mod merge;
mod pinned;
pub mod repo;
pub mod sandboxed;
pub mod worktree;

pub use claimed::{record_branch_or_say_why, worktree_for_claim};
pub use dependencies::{DependencyConflict, DependencyWork};
pub use diff::{BranchDiff, FileChangeKind, FileDiff};
pub use error::{GitError, Result};
pub use land::{Landed, Trial, TrialOutcome};
pub use merge::{MergeOutcome, merge_message, merge_task_branch};
pub use repo::Repo;
pub use sandboxed::GitAccess;
pub use worktree::{Reuse, TaskWorktree, Worktree, Worktrees, branch_name, record_branch};
