//! Errors of the team: the store's, git's and live coordination's own, plus what only a team
//! can get wrong (a profile, a program that is not installed, no supervisor to talk to), each
//! with its [`ErrorKind`] and a message that says what to do.

use std::path::Path;

use baton_core::{ErrorKind, StoreError};
use baton_live::LiveError;

#[derive(Debug, thiserror::Error)]
pub enum TeamError {
    #[error(transparent)]
    Store(#[from] StoreError),

    #[error(transparent)]
    Live(#[from] LiveError),

    #[error(transparent)]
    Git(Box<baton_git::GitError>),

    #[error("{message}")]
    Other { kind: ErrorKind, message: String },
}

impl TeamError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        TeamError::Other {
            kind,
            message: message.into(),
        }
    }

    /// A profile file that cannot be used, naming the file.
    pub fn profile(path: &Path, message: impl std::fmt::Display) -> Self {
        TeamError::new(
            ErrorKind::InvalidInput,
            format!("bad agent profile in {}: {message}", path.display()),
        )
    }

    pub fn kind(&self) -> ErrorKind {
        match self {
            TeamError::Store(e) => e.kind(),
            TeamError::Live(e) => e.kind(),
            TeamError::Git(e) => e.kind(),
            TeamError::Other { kind, .. } => *kind,
        }
    }
}

impl From<baton_fs::FileError> for TeamError {
    fn from(e: baton_fs::FileError) -> Self {
        TeamError::Store(e.into())
    }
}

impl From<baton_git::GitError> for TeamError {
    fn from(e: baton_git::GitError) -> Self {
        TeamError::Git(Box::new(e))
    }
}

pub type Result<T, E = TeamError> = std::result::Result<T, E>;
