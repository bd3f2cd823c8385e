//! What can go wrong with git, each said so the reader knows what to do next.

use std::path::PathBuf;

use baton_core::{ErrorKind, StoreError};

#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error(transparent)]
    Store(#[from] StoreError),

    #[error("git is not installed or cannot be run ({0}); worktrees and merges need it")]
    NotInstalled(String),

    #[error(
        "{} is not in a git repository; worktrees and merges need one (run `git init` and commit first)",
        dir.display()
    )]
    NotARepository { dir: PathBuf },

    #[error(
        "the lead's checkout at {} is not on a branch (detached HEAD); check out the branch \
         tasks should start from and be merged into",
        dir.display()
    )]
    DetachedHead { dir: PathBuf },

    #[error(
        "the lead's checkout has uncommitted changes ({}); commit or stash them before merging, \
         so a conflict can be undone without touching them",
        files.join(", ")
    )]
    UncommittedChanges { files: Vec<String> },

    #[error(
        "{task} has no branch {branch}: it was not worked in a worktree (`worker loop --worktree`, \
         `worker claim --worktree`)"
    )]
    NoBranch { task: String, branch: String },

    #[error(
        "merging {branch} into {into} conflicts in {}; the merge was aborted and nothing changed. \
         Merge it by hand (`git merge {branch}`) or reset the task to have it redone",
        files.join(", ")
    )]
    Conflict {
        branch: String,
        into: String,
        files: Vec<String>,
    },

    #[error(
        "{task}'s dependencies conflict: merging {branch} into its branch conflicts in {}; it is \
         held (review.toml's dependency_conflicts = \"hold\"). Merge its dependencies into the \
         lead's branch by hand, then `baton leader reset {task}`",
        files.join(", ")
    )]
    DependenciesConflict {
        task: String,
        branch: String,
        files: Vec<String>,
    },

    #[error(
        "{branch} changes protected files ({}): no landing adds, changes or removes them, since \
         Baton and the lead's tools read them as configuration. Have the task redone without \
         them (`baton review` requests changes), or copy what you want by hand; the list is \
         review.toml's `protect`, `.coordination/` always in it",
        files.join(", ")
    )]
    Protected { branch: String, files: Vec<String> },

    #[error("`git {command}` failed: {message}")]
    Failed { command: String, message: String },
}

impl From<baton_fs::FileError> for GitError {
    fn from(e: baton_fs::FileError) -> Self {
        GitError::Store(e.into())
    }
}

impl GitError {
    pub fn kind(&self) -> ErrorKind {
        match self {
            GitError::Store(e) => e.kind(),
            GitError::NotInstalled(_) => ErrorKind::Spawn,
            GitError::UncommittedChanges { .. } | GitError::Protected { .. } => {
                ErrorKind::IllegalTransition
            }
            GitError::Conflict { .. } | GitError::DependenciesConflict { .. } => {
                ErrorKind::MergeConflict
            }
            GitError::NotARepository { .. }
            | GitError::DetachedHead { .. }
            | GitError::NoBranch { .. }
            | GitError::Failed { .. } => ErrorKind::Git,
        }
    }
}

pub type Result<T, E = GitError> = std::result::Result<T, E>;
