//! Orchestration history, kept as one document (`orchestration/state.json`) in the project's
//! store: the folder's file, replaced atomically under its lock, or a database row, changed
//! under the row's lock. Either way two processes, on one machine or two, recording
//! invocations or handoffs never lose one another's.
//!
//! One document holds it all (active invocations, the last 50 finished ones, parallel runs,
//! the handoff chain, the conflict log) so an operation that touches several parts, such as
//! completing an invocation that belongs to a parallel run, is one atomic write.

use std::collections::BTreeMap;
use std::path::PathBuf;

use baton_core::{DocumentStore, Layout, StoreError, Timestamp};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How many finished invocations the history keeps.
pub const HISTORY_LIMIT: usize = 50;

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum InvocationStatus {
    Started,
    Completed,
    Failed,
}

/// One invocation of an agent, from `invoke_agent` to `complete_invocation`.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Invocation {
    pub id: String,
    pub agent: String,
    pub model: String,
    /// The task as the caller gave it.
    pub task: String,
    /// The prompt to run: steering, then prior output, then the task.
    pub prompt: String,
    pub status: InvocationStatus,
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub started_at: Timestamp,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(type = "string | null"))]
    pub completed_at: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prior_agent: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steering: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub artifacts: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub artifacts_created: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handoff_context: Option<String>,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    /// One document with a section per agent.
    Merge,
    /// The majority recommendation, with counts.
    Vote,
    /// An invocation of the conflict handler with the summarised results as its prompt.
    Escalate,
}

impl std::str::FromStr for Strategy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "merge" => Ok(Strategy::Merge),
            "vote" => Ok(Strategy::Vote),
            "escalate" => Ok(Strategy::Escalate),
            _ => Err(format!(
                "unknown strategy {s:?}: use merge, vote or escalate"
            )),
        }
    }
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ParallelStatus {
    Running,
    Complete,
    Partial,
    Conflict,
}

/// One agent's part in a parallel run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParallelMember {
    pub agent: String,
    pub invocation_id: String,
    pub status: InvocationStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParallelRun {
    pub id: String,
    pub strategy: Strategy,
    pub conflict_handler: String,
    pub members: Vec<ParallelMember>,
    pub status: ParallelStatus,
    pub started_at: Timestamp,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aggregated_at: Option<Timestamp>,
    /// The conflict handler's invocation, once escalated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub escalation: Option<String>,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Decision {
    /// What was decided.
    pub decision: String,
    /// Why.
    pub rationale: String,
}

/// One link of the handoff chain.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Handoff {
    pub id: String,
    pub from: String,
    pub to: String,
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub at: Timestamp,
    pub summary: String,
    #[serde(default)]
    pub artifacts: Vec<String>,
    #[serde(default)]
    pub decisions: Vec<Decision>,
    #[serde(default)]
    pub open_questions: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel_id: Option<String>,
}

/// A disagreement between parallel agents and how it was handled.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConflictRecord {
    pub parallel_id: String,
    pub at: Timestamp,
    /// Each agent's recommendation.
    pub recommendations: BTreeMap<String, String>,
    pub resolution: String,
}

/// Everything orchestration remembers.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OrchestrationState {
    #[serde(default)]
    pub active: Vec<Invocation>,
    /// Finished invocations, oldest first, at most [`HISTORY_LIMIT`].
    #[serde(default)]
    pub history: Vec<Invocation>,
    #[serde(default)]
    pub parallel_runs: Vec<ParallelRun>,
    #[serde(default)]
    pub handoffs: Vec<Handoff>,
    #[serde(default)]
    pub conflicts: Vec<ConflictRecord>,
}

/// The document that holds it, by its name in the store (its path in the folder).
pub const DOCUMENT: &str = baton_core::documents::ORCHESTRATION;

pub fn dir(layout: &Layout) -> PathBuf {
    layout.root().join("orchestration")
}

/// The consolidated handoff context the orchestrator reads at the start of a session.
pub fn handoff_file(layout: &Layout) -> PathBuf {
    layout.root().join("HANDOFF.md")
}

fn decode(value: Value) -> Result<OrchestrationState, StoreError> {
    serde_json::from_value(value).map_err(|e| StoreError::Corrupt {
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
        path: PathBuf::from(DOCUMENT),
    })
}

/// Reads the state (writes are atomic: a reader never sees half of one).
pub fn load(documents: &dyn DocumentStore) -> Result<OrchestrationState, StoreError> {
    Ok(documents
        .read_document(DOCUMENT)?
        .map(decode)
        .transpose()?
        .unwrap_or_default())
}

/// Holds the state exclusively, applies `op`, and writes it back if `op` succeeded (a refusal
/// changes nothing). `op` may run again if a database connection was lost before commit.
pub fn transact<T, E: From<StoreError>>(
    documents: &dyn DocumentStore,
    mut op: impl FnMut(&mut OrchestrationState, Timestamp) -> Result<T, E>,
) -> Result<T, E> {
    let mut outcome = None;
    documents.change_document(DOCUMENT, &mut |current, now| {
        let mut state = current.map(decode).transpose()?.unwrap_or_default();
        let result = op(&mut state, now);
        let keep = result.is_ok();
        outcome = Some(result);
        Ok(keep.then(|| serde_json::to_value(&state).expect("state serialises")))
    })?;
    outcome.expect("the change ran")
}

impl OrchestrationState {
    /// An id no invocation, parallel run or handoff has used: `PREFIX-TIME[-AGENT][-N]`.
    pub fn fresh_id(&self, prefix: &str, agent: Option<&str>, now: Timestamp) -> String {
        let stamp = now.0.format("%Y%m%dT%H%M%S%3f");
        let base = match agent {
            Some(agent) => format!("{prefix}-{stamp}-{agent}"),
            None => format!("{prefix}-{stamp}"),
        };
        let taken = |id: &str| {
            self.active.iter().any(|i| i.id == id)
                || self.history.iter().any(|i| i.id == id)
                || self.parallel_runs.iter().any(|p| p.id == id)
                || self.handoffs.iter().any(|h| h.id == id)
        };
        if !taken(&base) {
            return base;
        }
        (2..)
            .map(|n| format!("{base}-{n}"))
            .find(|id| !taken(id))
            .expect("some suffix is free")
    }

    pub fn invocation(&self, id: &str) -> Option<&Invocation> {
        self.active
            .iter()
            .chain(self.history.iter())
            .find(|i| i.id == id)
    }

    /// Moves a finished invocation into the history, dropping the oldest beyond the limit.
    pub fn retire(&mut self, invocation: Invocation) {
        self.history.push(invocation);
        let excess = self.history.len().saturating_sub(HISTORY_LIMIT);
        self.history.drain(..excess);
    }
}
