//! A task read only for choosing which task a claim takes ([`crate::TaskFile::choose`]). A
//! claim passes over every task of the board but one; reading each whole (its description,
//! hints, result, …) was most of a claim's cost on a board of thousands. Read this way a task
//! has its id, status, priority, holder, dependencies, files, times and kind, which is all the
//! choice reads (a test checks that it chooses as on the board read whole); everything else is
//! left empty. Such a task is never written back or shown: the store reads the chosen task in
//! full before [`crate::TaskFile::take`] changes it, and copies the others' text unchanged.
//!
//! Adding a task reads the others for less still: their ids (for the new one's, and that it is
//! not taken) and dependencies (that the new one's exist, and no cycle):
//! [`Task::read_for_adding`].

use serde::Deserialize;

use crate::model::{Task, TaskContext, TaskKind, TaskStatus, default_priority, null_as_default};
use crate::time::Timestamp;

/// The fields of a task the choice reads. Those it does not read are skipped, not kept; a
/// field given twice is refused, as in a whole read.
#[derive(Deserialize)]
struct ForChoosing {
    id: String,
    status: TaskStatus,
    #[serde(default = "default_priority")]
    priority: u32,
    #[serde(default)]
    claimed_by: Option<String>,
    #[serde(default, deserialize_with = "null_as_default")]
    dependencies: Vec<String>,
    #[serde(default, deserialize_with = "null_as_default")]
    context: Files,
    #[serde(default)]
    created_at: Option<Timestamp>,
    #[serde(default)]
    claimed_at: Option<Timestamp>,
    #[serde(default)]
    lease_expires_at: Option<Timestamp>,
    #[serde(default)]
    sent_back: bool,
    #[serde(default)]
    kind: TaskKind,
}

/// The fields of a task adding another reads.
#[derive(Deserialize)]
struct ForAdding {
    id: String,
    #[serde(default, deserialize_with = "null_as_default")]
    dependencies: Vec<String>,
}

/// A task's context, its files only.
#[derive(Default, Deserialize)]
struct Files {
    #[serde(default, deserialize_with = "null_as_default")]
    files: Vec<String>,
}

impl Task {
    /// Task `text` (one task's JSON) with only what choosing a claim reads; see the module's
    /// documentation. A task this refuses is refused by a whole read too.
    pub fn read_for_choosing(text: &str) -> serde_json::Result<Task> {
        let read: ForChoosing = serde_json::from_str(text)?;
        Ok(Task {
            status: read.status,
            priority: read.priority,
            claimed_by: read.claimed_by,
            context: TaskContext {
                files: read.context.files,
                ..TaskContext::default()
            },
            created_at: read.created_at,
            claimed_at: read.claimed_at,
            lease_expires_at: read.lease_expires_at,
            sent_back: read.sent_back,
            kind: read.kind,
            ..Task::skimmed(read.id, read.dependencies)
        })
    }

    /// Task `text` with only what adding another task reads: its id and dependencies, the rest
    /// left empty (and its status available). A task this refuses is refused by a whole read
    /// too.
    pub fn read_for_adding(text: &str) -> serde_json::Result<Task> {
        let read: ForAdding = serde_json::from_str(text)?;
        Ok(Task::skimmed(read.id, read.dependencies))
    }

    /// A task with only an id and dependencies, everything else empty.
    fn skimmed(id: String, dependencies: Vec<String>) -> Task {
        Task {
            id,
            description: String::new(),
            status: TaskStatus::Available,
            priority: default_priority(),
            claimed_by: None,
            dependencies,
            context: TaskContext::default(),
            result: None,
            created_at: None,
            claimed_at: None,
            completed_at: None,
            started_at: None,
            lease_expires_at: None,
            attempts: 0,
            failure_reason: None,
            reset_at: None,
            sent_back: false,
            acceptance: None,
            kind: TaskKind::default(),
            plan: None,
            extra: Default::default(),
        }
    }
}

#[cfg(test)]
mod tests;
