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
    // The team (`baton team`).
    /// No agent profile of that name, built in or in `team/profiles.toml`.
    UnknownProfile,
    /// The program a profile runs is not installed (the message says what to install).
    AgentNotInstalled,
    /// Agents are to run in a sandbox, and none can be made here (the message says what to
    /// install or enable).
    SandboxUnavailable,
    /// No team supervisor runs for this project on this machine.
    NoTeam,
    /// A team supervisor runs already for this project on this machine.
    TeamRunning,
    // The lead in the loop (`baton inbox`).
    /// No question or message with that id.
    UnknownQuestion,
    /// The question was answered or closed already.
    QuestionSettled,
    /// A message to nobody Baton knows: not an agent of the project, `lead` or `all`.
    UnknownRecipient,
    /// A caller acting as another agent than the one it is.
    NotYou,
    /// An agent has as many unread messages or open questions in the inbox as it may.
    InboxFull,
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
            ErrorKind::UnknownProfile => "unknown_profile",
            ErrorKind::AgentNotInstalled => "agent_not_installed",
            ErrorKind::SandboxUnavailable => "sandbox_unavailable",
            ErrorKind::NoTeam => "no_team",
            ErrorKind::TeamRunning => "team_running",
            ErrorKind::UnknownQuestion => "unknown_question",
            ErrorKind::QuestionSettled => "question_settled",
            ErrorKind::UnknownRecipient => "unknown_recipient",
            ErrorKind::NotYou => "not_you",
            ErrorKind::InboxFull => "inbox_full",
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

    /// Every variant's serialised name, read from the JSON Schema derived from the enum
    /// itself (so a new variant is checked without anyone listing it here).
    fn every_name() -> Vec<String> {
        fn collect(value: &serde_json::Value, names: &mut Vec<String>) {
            match value {
                serde_json::Value::Object(map) => {
                    for (key, item) in map {
                        match (key.as_str(), item) {
                            ("enum", serde_json::Value::Array(values)) => names.extend(
                                values.iter().filter_map(|v| v.as_str().map(str::to_string)),
                            ),
                            ("const", serde_json::Value::String(name)) => names.push(name.clone()),
                            _ => collect(item, names),
                        }
                    }
                }
                serde_json::Value::Array(items) => items.iter().for_each(|i| collect(i, names)),
                _ => {}
            }
        }
        let schema = serde_json::to_value(schemars::schema_for!(ErrorKind)).unwrap();
        let mut names = Vec::new();
        collect(&schema, &mut names);
        names
    }

    #[test]
    fn as_str_is_the_serialised_name_of_every_kind() {
        let names = every_name();
        assert!(names.len() >= 39, "the schema lists {names:?}");
        assert!(names.iter().any(|n| n == "paths_held"), "{names:?}");
        for name in names {
            let kind: ErrorKind = serde_json::from_value(serde_json::json!(name)).unwrap();
            assert_eq!(kind.as_str(), name);
            assert_eq!(serde_json::to_value(kind).unwrap(), name.as_str());
        }
    }
}
