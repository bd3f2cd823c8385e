//! How the last team run ended, kept as a document ([`TEAM_ENDED`]) beside the team's other
//! records. `team up` prints its verdict to the terminal it ran in; a lead who walked away
//! hears of it from the change feed instead ([`crate::ChangeEvent::TeamEnded`]): a push to the
//! paired phone, a webhook, the desktop. Written by the supervisor alone, through the store:
//! an agent in its sandbox cannot reach it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::documents::DocumentStore;
use crate::error::Result;
use crate::time::Timestamp;

/// The document's name: the last run's end, whichever machine ran it.
pub const TEAM_ENDED: &str = "team/ended.json";

/// How a team's run ended, in counts and one line.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TeamEnded {
    /// The machine whose supervisor ran it, and the supervisor's process.
    pub host: String,
    pub pid: u32,
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub started_at: Timestamp,
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub ended_at: Timestamp,
    /// Every task the run could reach is done (and, with a goal, its plan carried out).
    pub all_done: bool,
    /// Tasks its workers finished, failed, and left not done.
    pub done: u32,
    pub failed: u32,
    pub not_done: u32,
    /// With a merge queue: the tasks it landed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub merged: Option<u32>,
    /// With a goal and a judge: whether the judge found the goal met.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub goal_met: Option<bool>,
    /// The verdict in one line, as `team up` printed it.
    pub headline: String,
}

/// Records `ended` as the last run's end.
pub fn record(store: &dyn DocumentStore, ended: &TeamEnded) -> Result<()> {
    let body = serde_json::to_value(ended).expect("the end serialises");
    store.change_document(TEAM_ENDED, &mut |_, _| Ok(Some(body.clone())))
}

/// The last run's end, if one was recorded and reads as one (a document that does not is
/// no end: nothing is told of it).
pub fn last(store: &dyn DocumentStore) -> Result<Option<TeamEnded>> {
    Ok(store.read_document(TEAM_ENDED)?.and_then(of_value))
}

/// The end a document's body holds, if it is one.
pub fn of_value(body: Value) -> Option<TeamEnded> {
    serde_json::from_value(body).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::MemoryDocuments;

    fn ended(done: u32) -> TeamEnded {
        TeamEnded {
            host: "desk".into(),
            pid: 7,
            started_at: Timestamp::now(),
            ended_at: Timestamp::now(),
            all_done: true,
            done,
            failed: 0,
            not_done: 0,
            merged: Some(done),
            goal_met: None,
            headline: format!("Every task it could reach is done: {done} done."),
        }
    }

    #[test]
    fn the_last_end_recorded_is_read_back_and_a_stranger_document_is_none() {
        let store = MemoryDocuments::default();
        assert_eq!(last(&store).unwrap(), None);
        record(&store, &ended(3)).unwrap();
        record(&store, &ended(5)).unwrap();
        let read = last(&store).unwrap().expect("recorded");
        assert_eq!(
            (read.done, read.merged, read.host.as_str()),
            (5, Some(5), "desk")
        );
        store
            .change_document(TEAM_ENDED, &mut |_, _| {
                Ok(Some(serde_json::json!({"done": "many"})))
            })
            .unwrap();
        assert_eq!(last(&store).unwrap(), None);
    }
}
