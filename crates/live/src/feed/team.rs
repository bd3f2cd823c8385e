//! The change feed's view of the team: each worker's record as its supervisor saves it, and
//! every transcript's events as they are appended, so a lead (the desktop, `baton watch`, an
//! MCP client) follows what the agents do as they do it, on any machine.
//!
//! A store that numbers every append of the project (a database, [`TeamStore::events_since`])
//! is read from the last place seen, so nothing is missed however short an attempt is. The
//! folder's transcripts are files, read by the folder store itself
//! (`baton_core::feed::FileFeed::transcripts`).

use std::collections::BTreeMap;
use std::sync::Arc;

use baton_core::feed::group_transcript_events;
use baton_core::team_end::{self, TeamEnded};
use baton_core::{DocumentStore, TeamStore, WorkerRecord};

use super::{ChangeEvent, Dirty, MAX_EVENTS_PER_CHANGE};

/// What the feed last saw of the team.
pub(super) struct TeamState {
    store: Arc<dyn TeamStore>,
    documents: Arc<dyn DocumentStore>,
    workers: BTreeMap<String, WorkerRecord>,
    /// How the last run ended ([`team_end::TEAM_ENDED`]).
    ended: Option<TeamEnded>,
    /// The store's place of the last transcript event read; `None` when the store's
    /// transcripts are files (the folder reads those itself).
    place: Option<u64>,
}

impl TeamState {
    /// The first look, which sets the baseline silently.
    pub(super) fn read(
        store: Arc<dyn TeamStore>,
        documents: Arc<dyn DocumentStore>,
    ) -> baton_core::Result<TeamState> {
        let workers = by_name(store.workers()?);
        let place = store.events_since(u64::MAX, 0)?.map(|(_, place)| place);
        let ended = team_end::last(&*documents)?;
        Ok(TeamState {
            store,
            documents,
            workers,
            ended,
            place,
        })
    }

    /// Adds the events for what changed in the `dirty` areas: workers whose record changed,
    /// then the store's new transcript events in the order they were appended. A store that
    /// could not be read keeps its baseline and is compared again next time.
    pub(super) fn update(
        &mut self,
        dirty: &Dirty,
        events: &mut Vec<ChangeEvent>,
    ) -> baton_core::Result<()> {
        if dirty.team {
            let workers = by_name(self.store.workers()?);
            for (name, worker) in &workers {
                if self.workers.get(name) != Some(worker) {
                    events.push(ChangeEvent::WorkerChanged {
                        worker: worker.clone(),
                    });
                }
            }
            self.workers = workers;
            let ended = team_end::last(&*self.documents)?;
            if ended != self.ended {
                if let Some(ended) = &ended {
                    events.push(ChangeEvent::TeamEnded {
                        ended: ended.clone(),
                    });
                }
                self.ended = ended;
            }
        }
        let Some(place) = &mut self.place else {
            return Ok(());
        };
        if !(dirty.team || dirty.transcripts) {
            return Ok(());
        }
        while let Some((appended, last)) = self.store.events_since(*place, MAX_EVENTS_PER_CHANGE)? {
            let full = appended.len() == MAX_EVENTS_PER_CHANGE;
            *place = last;
            group_transcript_events(appended, events);
            if !full {
                break;
            }
        }
        Ok(())
    }
}

fn by_name(workers: Vec<WorkerRecord>) -> BTreeMap<String, WorkerRecord> {
    workers.into_iter().map(|w| (w.name.clone(), w)).collect()
}
