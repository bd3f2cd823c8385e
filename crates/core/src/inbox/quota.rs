//! How much of the lead's inbox one agent may fill: at most [`MAX_UNREAD_FROM`] of its messages
//! not yet read by their recipient, and at most [`MAX_OPEN_QUESTIONS`] questions (approvals
//! included) waiting for an answer. One more is refused with [`StoreError::InboxFull`], which
//! says what to do, and counted in [`LIMITED`], so the lead sees that an agent hit its limit
//! (`baton inbox`, the desktop) instead of finding the inbox buried. The lead is not limited.
//!
//! The count is read before the record is written, not under one hold with it: two sends at
//! the same moment may both pass at the limit, so the limit is exceeded by at most the number
//! of an agent's concurrent sends.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::LEAD;
use crate::documents::DocumentStore;
use crate::error::{Result, StoreError};
use crate::time::Timestamp;

/// The most messages from one agent its recipients have not read yet.
pub const MAX_UNREAD_FROM: usize = 50;
/// The most questions of one agent waiting for an answer.
pub const MAX_OPEN_QUESTIONS: usize = 20;
/// The document counting what each agent had refused for its limit.
pub const LIMITED: &str = "inbox/limited.json";

/// What one agent had refused for its limit, as the lead sees it.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Limited {
    pub agent: String,
    /// Messages refused while [`MAX_UNREAD_FROM`] of its were unread.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub messages_refused: u64,
    /// Questions refused while [`MAX_OPEN_QUESTIONS`] of its waited.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub questions_refused: u64,
    /// When the last was refused.
    #[cfg_attr(feature = "ts", ts(type = "string | null"))]
    pub last_at: Option<Timestamp>,
}

/// Refuses a message from `from` when its recipients have [`MAX_UNREAD_FROM`] of its unread.
pub(super) fn check_message(docs: &dyn DocumentStore, from: &str) -> Result<()> {
    if from == LEAD {
        return Ok(());
    }
    let unread = super::all_messages(docs)?
        .items
        .iter()
        .filter(|m| m.from == from && m.read_by.is_empty())
        .count();
    within(docs, from, unread, MAX_UNREAD_FROM, Refused::Message)
}

/// Refuses a question from `agent` when [`MAX_OPEN_QUESTIONS`] of its wait for an answer.
pub(super) fn check_question(docs: &dyn DocumentStore, agent: &str) -> Result<()> {
    if agent == LEAD {
        return Ok(());
    }
    let open = super::questions(docs, true)?
        .items
        .iter()
        .filter(|q| q.agent == agent)
        .count();
    within(docs, agent, open, MAX_OPEN_QUESTIONS, Refused::Question)
}

/// What an agent was refused for its limit.
#[derive(Clone, Copy)]
enum Refused {
    Message,
    Question,
}

/// Ok while `agent` has fewer than `limit` waiting; else the refusal, counted for the lead.
fn within(
    docs: &dyn DocumentStore,
    agent: &str,
    waiting: usize,
    limit: usize,
    refused: Refused,
) -> Result<()> {
    if waiting < limit {
        return Ok(());
    }
    count_refusal(docs, agent, refused)?;
    let (what, then) = match refused {
        Refused::Message => (
            format!("{waiting} of its messages are unread"),
            "wait until they are read",
        ),
        Refused::Question => (
            format!("{waiting} of its questions wait for an answer"),
            "wait for an answer",
        ),
    };
    Err(StoreError::InboxFull {
        agent: agent.to_string(),
        what,
        then: then.into(),
    })
}

fn count_refusal(docs: &dyn DocumentStore, agent: &str, refused: Refused) -> Result<()> {
    docs.change_document(LIMITED, &mut |current, now| {
        let mut all: BTreeMap<String, Limited> = current
            .and_then(|v| serde_json::from_value(v).ok())
            .unwrap_or_default();
        let entry = all.entry(agent.to_string()).or_insert_with(|| Limited {
            agent: agent.to_string(),
            ..Limited::default()
        });
        match refused {
            Refused::Message => entry.messages_refused += 1,
            Refused::Question => entry.questions_refused += 1,
        }
        entry.last_at = Some(now);
        Ok(Some(serde_json::to_value(&all).expect("limits serialise")))
    })
}

/// Every agent that had something refused for its limit, by name; none when the document is
/// missing or not Baton's (it is a count for the lead, not a record to lose sleep over).
pub fn limited(docs: &dyn DocumentStore) -> Result<Vec<Limited>> {
    let all: BTreeMap<String, Limited> = docs
        .read_document(LIMITED)?
        .and_then(|v| serde_json::from_value(v).ok())
        .unwrap_or_default();
    Ok(all.into_values().collect())
}
