//! What callers ask of a store, and what a claim gives back: the request types every store
//! takes (a new task, an edit, a completion, a claim) and the limits that go with them. They
//! are plain data; [`crate::lifecycle`] and [`crate::rules`] decide what each does to the
//! board, and every store (the folder, PostgreSQL) runs them through the same
//! [`crate::TaskStore`] calls.

use std::time::Duration;

use serde::Serialize;

use crate::model::{BranchRecord, DEFAULT_PRIORITY, Task, TaskKind};

/// How long a claim lasts without a heartbeat, unless the caller says otherwise.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(15 * 60);

/// The highest priority number accepted (1 is the most urgent).
pub const MAX_PRIORITY: u32 = 1000;

/// A task to add. `NewTask::default()` has the default priority (5), like every front end.
#[derive(Debug, Clone)]
pub struct NewTask {
    /// Chosen id; `task-N` with the next free N when absent.
    pub id: Option<String>,
    pub description: String,
    pub priority: u32,
    pub dependencies: Vec<String>,
    pub files: Vec<String>,
    pub hints: String,
    /// How the work will be judged done ([`crate::Task::acceptance`]).
    pub acceptance: Option<String>,
    /// Added as proposed: part of a plan the lead approves before anyone may claim it.
    pub proposed: bool,
    /// Work, or a plan for a planner ([`crate::Task::kind`]).
    pub kind: TaskKind,
    /// The plan task whose planner adds it ([`crate::Task::plan`]).
    pub plan: Option<String>,
}

impl Default for NewTask {
    fn default() -> Self {
        NewTask {
            id: None,
            description: String::new(),
            priority: DEFAULT_PRIORITY,
            dependencies: Vec::new(),
            files: Vec::new(),
            hints: String::new(),
            acceptance: None,
            proposed: false,
            kind: TaskKind::Work,
            plan: None,
        }
    }
}

/// The most tasks one plan's planner may add ([`NewTask::plan`]).
pub const MAX_PLAN_TASKS: usize = 50;

/// Changes to a task; `None` leaves a field as it is.
#[derive(Debug, Clone, Default)]
pub struct TaskEdit {
    pub description: Option<String>,
    pub priority: Option<u32>,
    pub dependencies: Option<Vec<String>>,
    pub files: Option<Vec<String>>,
    pub hints: Option<String>,
    /// The new acceptance; an empty text removes it.
    pub acceptance: Option<String>,
}

/// What a worker reports when it completes a task.
#[derive(Debug, Clone, Default)]
pub struct Completion {
    pub output: String,
    pub files_modified: Vec<String>,
    pub files_created: Vec<String>,
    /// The task's own branch, when it was worked in a worktree.
    pub branch: Option<BranchRecord>,
}

/// Where a done task sent back for changes goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Reopen {
    /// Held for the worker that did it (the default): its next claim takes it, on the same
    /// branch; if that worker does not come back before the lease runs out, anyone may.
    #[default]
    ToItsWorker,
    /// Available to any worker at once.
    ToAnyone,
}

/// Whether a claim passes over tasks whose files other agents hold exclusively.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Files {
    /// Pass them over (the default everywhere).
    #[default]
    Respect,
    /// Take the best ready task regardless (`--ignore-reservations`).
    Ignore,
}

/// A claim, as every front end asks a store for one: who claims, which task (the best ready
/// one when none is named), and whether other agents' file reservations count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimRequest {
    pub agent: String,
    /// The task the caller chose (the lead picking a card, a worker told which task to take):
    /// claimed if it is ready, refused with the reason otherwise; priority order does not
    /// apply. `None`: the best ready task, or nothing.
    pub task: Option<String>,
    pub files: Files,
}

impl ClaimRequest {
    /// The best ready task for `agent`, respecting reservations.
    pub fn next(agent: impl Into<String>) -> Self {
        ClaimRequest {
            agent: agent.into(),
            task: None,
            files: Files::Respect,
        }
    }

    /// Task `id` for `agent`, respecting reservations.
    pub fn task(agent: impl Into<String>, id: impl Into<String>) -> Self {
        ClaimRequest {
            task: Some(id.into()),
            ..ClaimRequest::next(agent)
        }
    }

    /// The same claim, with `files` saying whether reservations count.
    pub fn files(self, files: Files) -> Self {
        ClaimRequest { files, ..self }
    }
}

/// A task a claim took. A claim that named its task gets one or an error; one that did not
/// may get nothing (`None`) when nothing is ready.
#[derive(Debug, Clone, Serialize)]
pub struct Claimed {
    pub task: Task,
    /// The worker whose lease had expired, when the task was taken over from it.
    pub reclaimed_from: Option<String>,
}
