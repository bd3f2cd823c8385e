//! Errors of the task store, on every backend.
//!
//! Every variant names what was wrong and, where there is one, what to do about it: these
//! messages reach people through the CLI, the MCP tools and the desktop app unchanged.

use std::path::PathBuf;

use crate::model::TaskStatus;

pub use crate::kind::ErrorKind;

/// What the store refused or failed to do. Nothing is written when one of these is returned.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(
        "no .coordination/ folder found in {searched} or any parent; run `baton leader init \"GOAL\"` in the project folder first (or `baton connect URL` for a project kept in PostgreSQL)"
    )]
    NotInitialized { searched: PathBuf },

    #[error(
        "{dir} holds no task list (tasks.json) and no pointer to a database (store.json): it was deleted or moved. Restore it (`git checkout -- .coordination/tasks.json` when it is tracked, or from a backup), or remove the folder and run `baton leader init \"GOAL\"` to start again"
    )]
    ProjectFileMissing { dir: PathBuf },

    #[error(
        "{path} already exists; edit master-plan.md there to change the goal, or remove the folder to start over"
    )]
    AlreadyInitialized { path: PathBuf },

    #[error(
        "{path} points to a project kept in PostgreSQL (store.json), which only the `baton` CLI and `baton mcp` open for now; run them in this folder"
    )]
    KeptInDatabase { path: PathBuf },

    #[error("{path} is not valid JSON at line {line}, column {column}: {message}. Baton will not overwrite it; repair it by hand, or restore it from a backup (or with `git checkout -- {file}` when it is tracked in git); `baton leader doctor` lists what else it cannot read", file = path.display())]
    Corrupt {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },

    #[error("invalid {kind} {value:?}: {reason}")]
    InvalidName {
        kind: &'static str,
        value: String,
        reason: String,
    },

    #[error("invalid {field}: {reason}")]
    InvalidInput { field: &'static str, reason: String },

    #[error("no task with id {id:?}; `baton leader status` lists the tasks")]
    UnknownTask { id: String },

    #[error("a task with id {id:?} already exists")]
    DuplicateTask { id: String },

    #[error("task {task} depends on unknown task {dependency:?}")]
    UnknownDependency { task: String, dependency: String },

    /// A task being added names a dependency that does not exist (the task has no id on the
    /// board yet to name).
    #[error(
        "the task being added depends on unknown task {dependency:?}; `baton leader status` lists the tasks"
    )]
    NewTaskUnknownDependency { dependency: String },

    #[error("dependencies would form a cycle: {}", cycle.join(" -> "))]
    DependencyCycle { cycle: Vec<String> },

    #[error(
        "cannot {action} task {task}: it is {status}{}{hint}",
        owner_phrase(owner)
    )]
    IllegalTransition {
        task: String,
        action: &'static str,
        status: TaskStatus,
        owner: Option<String>,
        hint: String,
    },

    #[error("cannot {action} task {task}: it is {status} by {owner}, not by {agent}{hint}")]
    NotOwner {
        task: String,
        action: &'static str,
        status: TaskStatus,
        owner: String,
        agent: String,
        hint: String,
    },

    /// A project kept in a database could not be reached or read; the message names the
    /// store (never its password) and what to do.
    #[error("{message}")]
    Database { message: String },

    #[error(
        "no project {name:?} in the database {store}; create it with `baton leader init GOAL --store URL --project {name}`"
    )]
    UnknownProject { name: String, store: String },

    #[error(
        "the database {store} holds a project {name:?} already; open it with `baton connect URL --project {name}` or choose another name"
    )]
    ProjectExists { name: String, store: String },

    #[error(
        "the database {store} holds Baton's schema version {found}, newer than this baton knows ({known}); upgrade baton"
    )]
    SchemaTooNew {
        store: String,
        found: i32,
        known: i32,
    },

    #[error(
        "{holds}; wait for them, or ask the holder (`baton reservations` lists who holds what)"
    )]
    PathsHeld { holds: String },

    #[error("no run {run}; {}", match latest { Some(n) => format!("the latest is run {n} (`baton run list`)"), None => "start one with `baton run new`".to_string() })]
    UnknownRun { run: u32, latest: Option<u32> },

    #[error(
        "{argument} {path:?} is outside the project: it resolves to {resolved} (symlinks followed), and a path given through a tool call must lie inside {}; the user can allow more with `baton mcp --allow-path DIR`",
        roots.iter().map(|r| r.display().to_string()).collect::<Vec<_>>().join(" or ")
    )]
    OutsideProject {
        argument: String,
        path: String,
        resolved: PathBuf,
        roots: Vec<PathBuf>,
    },

    #[error("invalid {argument} {path:?}: {reason}")]
    PathRefused {
        argument: String,
        path: String,
        reason: String,
    },

    #[error(
        "{path} is not a signal (a signal file holds `done` or Baton's signal JSON), so Baton will not {action} it{hint}"
    )]
    NotASignal {
        path: PathBuf,
        action: &'static str,
        hint: &'static str,
    },

    #[error("no {what} {id:?}; `baton inbox --all` lists them")]
    UnknownInboxItem { what: &'static str, id: String },

    #[error("question {id} is {how}")]
    QuestionSettled { id: String, how: String },

    #[error(
        "agent {agent} has as much in the lead's inbox as an agent may: {what}; {then} (the \
         lead sees that this was refused)"
    )]
    InboxFull {
        agent: String,
        what: String,
        then: String,
    },

    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

fn owner_phrase(owner: &Option<String>) -> String {
    match owner {
        Some(owner) => format!(" (owned by {owner})"),
        None => String::new(),
    }
}

impl From<baton_fs::FileError> for StoreError {
    fn from(e: baton_fs::FileError) -> Self {
        StoreError::Io {
            path: e.path,
            source: e.source,
        }
    }
}

impl StoreError {
    /// `field` of the input is wrong, for `reason`.
    pub fn invalid(field: &'static str, reason: impl Into<String>) -> Self {
        StoreError::InvalidInput {
            field,
            reason: reason.into(),
        }
    }

    /// Wraps an I/O error with the path it concerns.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        StoreError::Io {
            path: path.into(),
            source,
        }
    }

    /// The kind of error, for `--json` output, MCP tool errors, the desktop and scripts.
    pub fn kind(&self) -> ErrorKind {
        match self {
            StoreError::NotInitialized { .. } | StoreError::ProjectFileMissing { .. } => {
                ErrorKind::NotInitialized
            }
            StoreError::AlreadyInitialized { .. } => ErrorKind::AlreadyInitialized,
            StoreError::Corrupt { .. } => ErrorKind::CorruptFile,
            StoreError::InvalidName { .. } => ErrorKind::InvalidName,
            StoreError::InvalidInput { .. } => ErrorKind::InvalidInput,
            StoreError::UnknownTask { .. } => ErrorKind::UnknownTask,
            StoreError::DuplicateTask { .. } => ErrorKind::DuplicateTask,
            StoreError::UnknownDependency { .. } | StoreError::NewTaskUnknownDependency { .. } => {
                ErrorKind::UnknownDependency
            }
            StoreError::DependencyCycle { .. } => ErrorKind::DependencyCycle,
            StoreError::IllegalTransition { .. } => ErrorKind::IllegalTransition,
            StoreError::NotOwner { .. } => ErrorKind::NotOwner,
            StoreError::UnknownRun { .. } => ErrorKind::UnknownRun,
            StoreError::OutsideProject { .. } => ErrorKind::OutsideProject,
            StoreError::PathRefused { .. } => ErrorKind::InvalidPath,
            StoreError::NotASignal { .. } => ErrorKind::NotASignal,
            StoreError::PathsHeld { .. } => ErrorKind::PathsHeld,
            StoreError::Io { .. } => ErrorKind::Io,
            StoreError::UnknownInboxItem { .. } => ErrorKind::UnknownQuestion,
            StoreError::QuestionSettled { .. } => ErrorKind::QuestionSettled,
            StoreError::InboxFull { .. } => ErrorKind::InboxFull,
            StoreError::Database { .. } => ErrorKind::Database,
            StoreError::UnknownProject { .. } | StoreError::KeptInDatabase { .. } => {
                ErrorKind::NotInitialized
            }
            StoreError::ProjectExists { .. } => ErrorKind::AlreadyInitialized,
            StoreError::SchemaTooNew { .. } => ErrorKind::SchemaTooNew,
        }
    }
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;
