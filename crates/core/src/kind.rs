//! [`ErrorKind`]: the one list of error kinds every part of Baton reports. A kind is the stable,
//! machine-readable half of an error (the message is the human half): the CLI prints it with
//! `--json`, MCP tool errors carry it, the desktop's UI switches on it, and `baton-api` maps it
//! to an exit code. The core owns the list because every crate depends on the core; each
//! crate's error type says which of these kinds each of its variants is.

use std::fmt;

use serde::{Deserialize, Serialize};

/// What kind of thing went wrong. Serialised in snake_case (`unknown_task`).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    // The task store.
    NotInitialized,
    AlreadyInitialized,
    CorruptFile,
    InvalidName,
    InvalidInput,
    UnknownTask,
    DuplicateTask,
    UnknownDependency,
    DependencyCycle,
    IllegalTransition,
    NotOwner,
    UnknownRun,
    OutsideProject,
    InvalidPath,
    NotASignal,
    /// Another agent holds files asked for (a reservation, or a task's files).
    PathsHeld,
    Io,
    /// A project kept in PostgreSQL could not be reached or read.
    Database,
    /// The database's Baton schema is newer than this baton.
    SchemaTooNew,
    // Watching and running commands.
    Watch,
    Spawn,
    /// A git command Baton ran for a worktree or a merge failed, or the project is not in a
    /// git repository.
    Git,
    /// Merging a task's branch conflicts; the merge was aborted and nothing changed.
    MergeConflict,
    // Orchestration.
    UnknownAgent,
    UnknownInvocation,
    UnknownParallel,
    Steering,
    Workflows,
    // Browsers.
    BrowserNotRunning,
    NoPage,
    Timeout,
    BrowserError,
    /// A manual test session is running already.
    SessionRunning,
    /// No manual test session is running.
    NoSession,
    // The front ends.
    /// Arguments that do not fit the operation's schema (a usage error).
    InvalidArguments,
    UnknownTool,
    UnknownResource,
    /// The desktop has no project open.
    NoProject,
    /// A bug: a worker thread stopped or a result could not be encoded.
    Internal,
}

impl ErrorKind {
    /// The kind as it is written in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::NotInitialized => "not_initialized",
            ErrorKind::AlreadyInitialized => "already_initialized",
            ErrorKind::CorruptFile => "corrupt_file",
            ErrorKind::InvalidName => "invalid_name",
            ErrorKind::InvalidInput => "invalid_input",
            ErrorKind::UnknownTask => "unknown_task",
            ErrorKind::DuplicateTask => "duplicate_task",
            ErrorKind::UnknownDependency => "unknown_dependency",
            ErrorKind::DependencyCycle => "dependency_cycle",
            ErrorKind::IllegalTransition => "illegal_transition",
            ErrorKind::NotOwner => "not_owner",
            ErrorKind::UnknownRun => "unknown_run",
            ErrorKind::OutsideProject => "outside_project",
            ErrorKind::InvalidPath => "invalid_path",
            ErrorKind::NotASignal => "not_a_signal",
            ErrorKind::PathsHeld => "paths_held",
            ErrorKind::Io => "io",
            ErrorKind::Database => "database",
            ErrorKind::SchemaTooNew => "schema_too_new",
            ErrorKind::Watch => "watch",
            ErrorKind::Spawn => "spawn",
            ErrorKind::Git => "git",
            ErrorKind::MergeConflict => "merge_conflict",
            ErrorKind::UnknownAgent => "unknown_agent",
            ErrorKind::UnknownInvocation => "unknown_invocation",
            ErrorKind::UnknownParallel => "unknown_parallel",
            ErrorKind::Steering => "steering",
            ErrorKind::Workflows => "workflows",
            ErrorKind::BrowserNotRunning => "browser_not_running",
            ErrorKind::NoPage => "no_page",
            ErrorKind::Timeout => "timeout",
            ErrorKind::BrowserError => "browser_error",
            ErrorKind::SessionRunning => "session_running",
            ErrorKind::NoSession => "no_session",
            ErrorKind::InvalidArguments => "invalid_arguments",
            ErrorKind::UnknownTool => "unknown_tool",
            ErrorKind::UnknownResource => "unknown_resource",
            ErrorKind::NoProject => "no_project",
            ErrorKind::Internal => "internal",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<&str> for ErrorKind {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn as_str_is_the_serialised_name() {
        let every: Vec<ErrorKind> = serde_json::from_value(serde_json::json!([
            "not_initialized",
            "already_initialized",
            "corrupt_file",
            "invalid_name",
            "invalid_input",
            "unknown_task",
            "duplicate_task",
            "unknown_dependency",
            "dependency_cycle",
            "illegal_transition",
            "not_owner",
            "unknown_run",
            "outside_project",
            "invalid_path",
            "not_a_signal",
            "io",
            "database",
            "schema_too_new",
            "watch",
            "spawn",
            "git",
            "merge_conflict",
            "unknown_agent",
            "unknown_invocation",
            "unknown_parallel",
            "steering",
            "workflows",
            "browser_not_running",
            "no_page",
            "timeout",
            "browser_error",
            "session_running",
            "no_session",
            "invalid_arguments",
            "unknown_tool",
            "unknown_resource",
            "no_project",
            "internal"
        ]))
        .unwrap();
        for kind in every {
            assert_eq!(serde_json::to_value(kind).unwrap(), kind.as_str());
        }
    }
}
