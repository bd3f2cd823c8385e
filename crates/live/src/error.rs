//! Errors of live coordination: the store's own errors, plus watching.

use std::path::PathBuf;

use baton_core::{ErrorKind, StoreError};

#[derive(Debug, thiserror::Error)]
pub enum LiveError {
    #[error(transparent)]
    Store(#[from] StoreError),

    #[error(
        "cannot watch {path}: {message}. Use `--watch poll` on file systems without change events"
    )]
    Watch { path: PathBuf, message: String },

    #[error("the file watcher stopped unexpectedly")]
    WatchStopped,
}

impl From<baton_fs::FileError> for LiveError {
    fn from(e: baton_fs::FileError) -> Self {
        LiveError::Store(e.into())
    }
}

impl LiveError {
    pub fn watch(path: &std::path::Path, error: notify::Error) -> Self {
        LiveError::Watch {
            path: path.to_path_buf(),
            message: error.to_string(),
        }
    }

    /// A short, stable name for the kind of error, for `--json` output and scripts.
    pub fn kind(&self) -> ErrorKind {
        match self {
            LiveError::Store(e) => e.kind(),
            LiveError::Watch { .. } | LiveError::WatchStopped => ErrorKind::Watch,
        }
    }
}

pub type Result<T, E = LiveError> = std::result::Result<T, E>;
