//! [`Error`]: the one error type that crosses every boundary (CLI, MCP, desktop IPC), and
//! [`ErrorBody`], its one wire form. Whatever library refused, the caller gets that library's
//! message unchanged, and its [`ErrorKind`].

use baton_agents::AgentError;
use baton_browser::session::SessionError;
use baton_browser::{BrowserControlError, BrowserError};
use baton_core::{ErrorKind, StoreError};
use baton_git::GitError;
use baton_live::LiveError;
use serde::{Deserialize, Serialize};

/// An operation's failure: the refusing library's kind and message, nothing else (front ends
/// need no more, and a small error keeps every `Result` cheap). Nothing was changed when one
/// is returned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Error {
    kind: ErrorKind,
    message: String,
}

/// `?` on any library's error gives an [`Error`] (or, for a front end holding only bodies,
/// such as the desktop's commands, an [`ErrorBody`]) with that library's kind and message.
macro_rules! error_from {
    ($($error:ty),*) => {$(
        impl From<$error> for Error {
            fn from(e: $error) -> Self {
                Error { kind: e.kind(), message: e.to_string() }
            }
        }

        impl From<$error> for ErrorBody {
            fn from(e: $error) -> Self {
                Error::from(e).body()
            }
        }
    )*};
}

error_from!(
    StoreError,
    GitError,
    LiveError,
    AgentError,
    BrowserControlError,
    BrowserError,
    SessionError,
    baton_team::TeamError
);

impl From<baton_fs::FileError> for Error {
    fn from(e: baton_fs::FileError) -> Self {
        StoreError::from(e).into()
    }
}

/// How an error travels: its kind for programs, its message for people. The CLI prints
/// `{"error": ErrorBody}` on stderr with `--json`, an MCP tool error carries the same object
/// as structured content, and a desktop command rejects with the body.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ErrorBody {
    pub kind: ErrorKind,
    pub message: String,
}

impl Error {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error {
            kind,
            message: message.into(),
        }
    }

    /// Arguments that do not fit the operation (a usage error: exit code 2 on the CLI, a
    /// protocol error over MCP).
    pub fn invalid_arguments(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::InvalidArguments, message)
    }

    /// An input problem found by a front end, reported like the store's own.
    pub fn input(field: &'static str, reason: impl Into<String>) -> Self {
        StoreError::InvalidInput {
            field,
            reason: reason.into(),
        }
        .into()
    }

    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    pub fn body(&self) -> ErrorBody {
        ErrorBody {
            kind: self.kind,
            message: self.message.clone(),
        }
    }

    /// `{"error": {"kind": …, "message": …}}`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({ "error": self.body() })
    }
}

impl From<Error> for ErrorBody {
    fn from(e: Error) -> Self {
        e.body()
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
