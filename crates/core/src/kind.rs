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
    // Serving the UI (`baton serve`).
    /// A browser that is not paired (or whose device was revoked) called the served API.
    NotPaired,
    /// A paired device whose scope does not cover the operation (a responder merging).
    NotAllowed,
    /// A pairing link that is unknown, used already or expired.
    PairingRefused,
    /// Too many attempts (guessed pairing codes) in too short a time.
    TooManyAttempts,
    UnknownDevice,
    /// A bug: a worker thread stopped or a result could not be encoded.
    Internal,
}

impl ErrorKind {
    /// Every kind, in the order they are declared (a test checks none is missing): the guide's
    /// table of errors is made from it.
    pub const ALL: [ErrorKind; 54] = [
        ErrorKind::NotInitialized,
        ErrorKind::AlreadyInitialized,
        ErrorKind::CorruptFile,
        ErrorKind::InvalidName,
        ErrorKind::InvalidInput,
        ErrorKind::UnknownTask,
        ErrorKind::DuplicateTask,
        ErrorKind::UnknownDependency,
        ErrorKind::DependencyCycle,
        ErrorKind::IllegalTransition,
        ErrorKind::NotOwner,
        ErrorKind::UnknownRun,
        ErrorKind::OutsideProject,
        ErrorKind::InvalidPath,
        ErrorKind::NotASignal,
        ErrorKind::PathsHeld,
        ErrorKind::Io,
        ErrorKind::Database,
        ErrorKind::SchemaTooNew,
        ErrorKind::Watch,
        ErrorKind::Spawn,
        ErrorKind::Git,
        ErrorKind::MergeConflict,
        ErrorKind::UnknownAgent,
        ErrorKind::UnknownInvocation,
        ErrorKind::UnknownParallel,
        ErrorKind::Steering,
        ErrorKind::Workflows,
        ErrorKind::BrowserNotRunning,
        ErrorKind::NoPage,
        ErrorKind::Timeout,
        ErrorKind::BrowserError,
        ErrorKind::SessionRunning,
        ErrorKind::NoSession,
        ErrorKind::UnknownProfile,
        ErrorKind::AgentNotInstalled,
        ErrorKind::SandboxUnavailable,
        ErrorKind::NoTeam,
        ErrorKind::TeamRunning,
        ErrorKind::UnknownQuestion,
        ErrorKind::QuestionSettled,
        ErrorKind::UnknownRecipient,
        ErrorKind::NotYou,
        ErrorKind::InboxFull,
        ErrorKind::InvalidArguments,
        ErrorKind::UnknownTool,
        ErrorKind::UnknownResource,
        ErrorKind::NoProject,
        ErrorKind::NotPaired,
        ErrorKind::NotAllowed,
        ErrorKind::PairingRefused,
        ErrorKind::TooManyAttempts,
        ErrorKind::UnknownDevice,
        ErrorKind::Internal,
    ];

    /// What an error of this kind means to the person who met it, and what to do: the
    /// guide's table of errors (`baton reference`).
    pub fn what_to_do(self) -> &'static str {
        match self {
            ErrorKind::NotInitialized => {
                "No project here: no `.coordination/` folder in this folder or above it (or `--dir`/`BATON_DIR` names none). Run `baton leader init \"GOAL\"`, or pass `--dir` (or `--store` for a project in PostgreSQL)."
            }
            ErrorKind::AlreadyInitialized => {
                "The folder has a project already. Work in it, or remove its `.coordination/` first if you mean to start over."
            }
            ErrorKind::CorruptFile => {
                "A file of `.coordination/` does not parse; the message names it and where. Nothing was changed. Mend or restore the file (git, a backup); `baton leader doctor` lists what it cannot read."
            }
            ErrorKind::InvalidName => {
                "A task id, agent, signal or profile name Baton does not allow (the message says which characters it takes). Use another name."
            }
            ErrorKind::InvalidInput => {
                "A value Baton refused (an empty description, a malformed pattern, duration or policy); the message says which and why. Correct it and run the command again."
            }
            ErrorKind::UnknownTask => "No task has that id. `baton leader status` lists them.",
            ErrorKind::DuplicateTask => {
                "A task with that id exists already. Pick another `--id`, or leave it out for the next free one."
            }
            ErrorKind::UnknownDependency => {
                "A `--depends` names a task that does not exist. Add that task first, or correct the id."
            }
            ErrorKind::DependencyCycle => {
                "The dependencies would make a circle (a task waiting, through others, on itself). The message shows the circle; drop one of its edges."
            }
            ErrorKind::IllegalTransition => {
                "The task is not in a state that allows this (completing a task that is not in progress, resetting one that is done). The message gives its state; `baton leader status` shows them all."
            }
            ErrorKind::NotOwner => {
                "The task is held by another agent, or by none. Only its holder can start, complete, fail or release it; the lead can `leader reset` or `leader cancel` it."
            }
            ErrorKind::UnknownRun => "No run has that number. `baton run list` lists them.",
            ErrorKind::OutsideProject => {
                "A path that resolves (symlinks followed) outside the project. An agent's paths stay inside it; the user can widen that (`baton mcp --allow-path DIR`)."
            }
            ErrorKind::InvalidPath => {
                "A path Baton cannot use as it is given; the message says why. Name a file inside the project."
            }
            ErrorKind::NotASignal => {
                "The file is not a signal Baton wrote, so it was left alone. Pass `--force` to overwrite or clear it anyway."
            }
            ErrorKind::PathsHeld => {
                "Another agent holds files you asked for (a reservation, or files of a task it holds). The message names them and who; wait, work elsewhere, or claim with `--ignore-reservations` when you know better."
            }
            ErrorKind::Io => {
                "Reading or writing a file failed (permissions, a full disk, a missing folder); the message names the file and the system's reason."
            }
            ErrorKind::Database => {
                "The PostgreSQL project could not be reached or read. Check the server runs, the URL (`--store`, `BATON_STORE`, `.coordination/store.json`) and the password (`~/.pgpass`, `PGPASSWORD`)."
            }
            ErrorKind::SchemaTooNew => {
                "The database was set up by a newer Baton. Upgrade this machine's `baton` to at least that version."
            }
            ErrorKind::Watch => {
                "Watching for changes failed (for instance too many inotify watches). Use `--watch-mode poll` or raise `fs.inotify.max_user_watches`."
            }
            ErrorKind::Spawn => {
                "A program Baton runs could not start (not installed, not executable, not on `PATH`). The message names it; install it or correct the command."
            }
            ErrorKind::Git => {
                "A git command Baton ran failed, or the project is not in a git repository (worktrees and merges need one). The message has git's own words."
            }
            ErrorKind::MergeConflict => {
                "A task's branch conflicts with yours. The merge was aborted and your checkout is as it was. Merge it by hand, or `baton review request-changes TASK` so its agent brings the branch up to date."
            }
            ErrorKind::UnknownAgent => {
                "No agent of that name in the registry (`baton agents list`). Correct the name."
            }
            ErrorKind::UnknownInvocation => {
                "No invocation has that id. `baton invoke list` lists them."
            }
            ErrorKind::UnknownParallel => {
                "No parallel run has that id. `baton parallel list` lists them."
            }
            ErrorKind::Steering => "A steering file could not be read; the message names it.",
            ErrorKind::Workflows => {
                "The orchestration's workflows do not parse or name unknown agents; the message says where."
            }
            ErrorKind::BrowserNotRunning => {
                "No browser listens on that port. `baton browser list` shows those running; an MCP server with a browser proxy starts one on first use."
            }
            ErrorKind::NoPage => {
                "The browser has no page to act on. Open one: `baton browser navigate PORT URL`."
            }
            ErrorKind::Timeout => {
                "Waiting ran out (`--timeout`, or a browser that did not answer). Wait longer, or look at why it did not come (`baton inbox`, `baton team status`)."
            }
            ErrorKind::BrowserError => {
                "The browser refused or failed the command; the message has its words."
            }
            ErrorKind::SessionRunning => {
                "A manual test session runs already. `baton browser session finish` ends it."
            }
            ErrorKind::NoSession => {
                "No manual test session runs. Start one: `baton browser session start URL`."
            }
            ErrorKind::UnknownProfile => {
                "No agent profile of that name, built in or in `.coordination/team/profiles.toml`. `baton team profiles` lists them."
            }
            ErrorKind::AgentNotInstalled => {
                "The program the profile runs is not installed; the message says what to install. Or pick another profile."
            }
            ErrorKind::SandboxUnavailable => {
                "Agents are to run sandboxed and no sandbox can be made here (bubblewrap missing, user namespaces off); the message says what to install or enable. `--no-sandbox` runs them unconfined, only where you trust them."
            }
            ErrorKind::NoTeam => {
                "No team supervisor runs for this project on this machine. Start one with `baton team up`."
            }
            ErrorKind::TeamRunning => {
                "A team supervisor runs already for this project on this machine. `baton team status` shows it; `baton team stop` ends it."
            }
            ErrorKind::UnknownQuestion => {
                "No question or message with that id. `baton inbox --all` lists them."
            }
            ErrorKind::QuestionSettled => {
                "That question was answered or closed already. Nothing more to do."
            }
            ErrorKind::UnknownRecipient => {
                "A message to nobody Baton knows. Send it to an agent of the project, `lead` or `all`."
            }
            ErrorKind::NotYou => {
                "An agent acting as someone else, or doing what only the lead may (answering, approving, merging, stopping the team): refused. The lead does it from their own terminal, the desktop, or a `baton mcp` started without an agent."
            }
            ErrorKind::InboxFull => {
                "The agent has as many unread messages or open questions as it may. Answer or acknowledge some (`baton inbox`) before sending more."
            }
            ErrorKind::InvalidArguments => {
                "The command's arguments do not fit it (a missing value, an unknown option, JSON that does not match the tool's schema). `baton COMMAND --help` shows what it takes. Exits 2."
            }
            ErrorKind::UnknownTool => {
                "No MCP tool of that name is offered to this caller. `tools/list` shows what is."
            }
            ErrorKind::UnknownResource => {
                "No MCP resource at that URI. `resources/list` shows them."
            }
            ErrorKind::NoProject => "The desktop has no project open. Open a project folder first.",
            ErrorKind::NotPaired => {
                "This browser is not paired with `baton serve` (or its device was revoked). On the machine that serves, run `baton serve pair` and open the link it prints (or scan its QR code) in this browser."
            }
            ErrorKind::NotAllowed => {
                "This device is paired as a responder: it answers questions, decides approvals, reviews and stops agents, but does not start teams, merge, edit tasks or change budgets and policies. Pair a device as lead (`baton serve pair --as lead`) for those."
            }
            ErrorKind::PairingRefused => {
                "The pairing link is unknown, used already or expired (links last 10 minutes and pair one browser). Run `baton serve pair` for a new one."
            }
            ErrorKind::TooManyAttempts => {
                "Too many wrong pairing codes in a short time: pairing is paused for a minute. Use the link `baton serve pair` prints rather than typing a code."
            }
            ErrorKind::UnknownDevice => {
                "No paired device has that id. `baton serve devices` lists them."
            }
            ErrorKind::Internal => {
                "A bug in Baton: a worker thread stopped or a result could not be encoded. Please report it with the message and what you ran."
            }
        }
    }
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
            ErrorKind::NotPaired => "not_paired",
            ErrorKind::NotAllowed => "not_allowed",
            ErrorKind::PairingRefused => "pairing_refused",
            ErrorKind::TooManyAttempts => "too_many_attempts",
            ErrorKind::UnknownDevice => "unknown_device",
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
        let mut all: Vec<&str> = ErrorKind::ALL.iter().map(|k| k.as_str()).collect();
        let mut sorted: Vec<&str> = names.iter().map(String::as_str).collect();
        all.sort_unstable();
        sorted.sort_unstable();
        assert_eq!(all, sorted, "ErrorKind::ALL lists every kind once");
        for name in names {
            let kind: ErrorKind = serde_json::from_value(serde_json::json!(name)).unwrap();
            assert_eq!(kind.as_str(), name);
            assert_eq!(serde_json::to_value(kind).unwrap(), name.as_str());
        }
    }
}
