//! The decisions about agents' tool calls, kept with each task (or agent): by the policy, by
//! the lead's answer, or for want of one. What `baton review` and the desktop show beside a
//! task's transcript, so the lead can see what was allowed and why.

use serde::{Deserialize, Serialize};

use super::{document, parse};
use crate::documents::DocumentStore;
use crate::error::Result;
use crate::time::Timestamp;

/// The folder of approval decisions, one document per task (or per agent without a task).
pub const DECISIONS: &str = "inbox/decisions";
/// The most decisions one document keeps (the oldest go first, and the document says so).
pub const MAX_DECISIONS: usize = 1000;

/// One decision about an agent's tool call: by the policy, by the lead, or for want of an
/// answer.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ApprovalDecision {
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub at: Timestamp,
    pub agent: String,
    pub task: Option<String>,
    pub tool: String,
    /// What the call was given, shortened to one line.
    pub call: String,
    pub allowed: bool,
    /// Who decided and why: a policy rule, the lead's answer (and its question), a timeout.
    pub why: String,
}

/// The decisions kept for `task` (or, without one, for `agent`).
fn decisions_document(task: Option<&str>, agent: &str) -> Result<String> {
    let key = match task {
        Some(task) => {
            crate::names::validate_task_id(task)?;
            task.to_string()
        }
        None => {
            crate::names::validate_agent_id(agent)?;
            format!("agent-{agent}")
        }
    };
    Ok(document(DECISIONS, &key))
}

/// Records `decision` with its task (or agent).
pub fn record_decision(docs: &dyn DocumentStore, decision: &ApprovalDecision) -> Result<()> {
    let name = decisions_document(decision.task.as_deref(), &decision.agent)?;
    docs.change_document(&name, &mut |current, _| {
        let mut list: Vec<ApprovalDecision> = match current {
            Some(value) => parse(&name, value)?,
            None => Vec::new(),
        };
        list.push(decision.clone());
        if list.len() > MAX_DECISIONS {
            list.drain(..list.len() - MAX_DECISIONS);
        }
        Ok(Some(
            serde_json::to_value(&list).expect("decisions serialise"),
        ))
    })
}

/// The decisions recorded for `task` (or `agent`), oldest first.
pub fn decisions(
    docs: &dyn DocumentStore,
    task: Option<&str>,
    agent: &str,
) -> Result<Vec<ApprovalDecision>> {
    let name = decisions_document(task, agent)?;
    match docs.read_document(&name)? {
        Some(value) => parse(&name, value),
        None => Ok(Vec::new()),
    }
}
