//! Errors of orchestration. Like the task store's, every message says what was wrong and what
//! to do; nothing is written when one is returned.

use std::path::PathBuf;

use baton_core::{ErrorKind, StoreError};

#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error(transparent)]
    Store(#[from] StoreError),

    #[error("unknown agent {name:?}; known agents: {}", known.join(", "))]
    UnknownAgent { name: String, known: Vec<String> },

    #[error("no invocation {id:?}; `baton invoke list` shows the active and recent ones")]
    UnknownInvocation { id: String },

    #[error("invocation {id} is already {status}; only started invocations can be completed")]
    AlreadyFinished { id: String, status: String },

    #[error("no parallel run {id:?}; `baton parallel list` shows them")]
    UnknownParallel { id: String },

    #[error("invalid {field}: {reason}")]
    InvalidInput { field: &'static str, reason: String },

    #[error("cannot read steering file {path}: {message}")]
    Steering { path: PathBuf, message: String },

    #[error("{path}: {message}")]
    Workflows { path: PathBuf, message: String },
}

impl From<baton_fs::FileError> for AgentError {
    fn from(e: baton_fs::FileError) -> Self {
        AgentError::Store(e.into())
    }
}

impl AgentError {
    /// A short, stable name for the kind of error, for `--json` output and scripts.
    pub fn kind(&self) -> ErrorKind {
        match self {
            AgentError::Store(e) => e.kind(),
            AgentError::UnknownAgent { .. } => ErrorKind::UnknownAgent,
            AgentError::UnknownInvocation { .. } => ErrorKind::UnknownInvocation,
            AgentError::AlreadyFinished { .. } => ErrorKind::IllegalTransition,
            AgentError::UnknownParallel { .. } => ErrorKind::UnknownParallel,
            AgentError::InvalidInput { .. } => ErrorKind::InvalidInput,
            AgentError::Steering { .. } => ErrorKind::Steering,
            AgentError::Workflows { .. } => ErrorKind::Workflows,
        }
    }
}

pub type Result<T, E = AgentError> = std::result::Result<T, E>;

/// Refuses empty text, control characters and text over `max` bytes (the store's rule).
pub(crate) fn check_text(
    field: &'static str,
    text: &str,
    max: usize,
    required: bool,
) -> Result<()> {
    Ok(baton_core::text::check_text(field, text, max, required)?)
}
