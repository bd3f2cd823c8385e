//! A task read only for choosing which task a claim takes ([`crate::TaskFile::choose`]). A
//! claim passes over every task of the board but one; reading each whole (its description,
//! hints, result, …) was most of a claim's cost on a board of thousands. Read this way a task
//! has its id, status, priority, holder, dependencies, files, times and kind, which is all the
//! choice reads (a test checks that it chooses as on the board read whole); everything else is
//! left empty. Such a task is never written back or shown: the store reads the chosen task in
//! full before [`crate::TaskFile::take`] changes it, and copies the others' text unchanged.

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
            id: read.id,
            description: String::new(),
            status: read.status,
            priority: read.priority,
            claimed_by: read.claimed_by,
            dependencies: read.dependencies,
            context: TaskContext {
                files: read.context.files,
                ..TaskContext::default()
            },
            result: None,
            created_at: read.created_at,
            claimed_at: read.claimed_at,
            completed_at: None,
            started_at: None,
            lease_expires_at: read.lease_expires_at,
            attempts: 0,
            failure_reason: None,
            reset_at: None,
            sent_back: read.sent_back,
            acceptance: None,
            kind: read.kind,
            plan: None,
            extra: Default::default(),
        })
    }
}

#[cfg(test)]
mod tests;
