//! [`TeamStore`]: where the team's records are kept, beside the tasks. A supervisor appends its
//! agents' transcripts and records their attempts and its workers; a lead anywhere reads them.
//! The folder keeps them as files under `.coordination/` (a transcript is one JSON line per
//! event, appended), a database as rows; either way each transcript has one writer (the worker
//! running the attempt), which numbers its events.

use crate::attempts::{Attempt, WorkerRecord};
use crate::error::Result;
use crate::listing::Listing;
use crate::transcript::{AttemptEvent, TranscriptEvent};

/// The team's records, wherever they are kept.
pub trait TeamStore: Send + Sync {
    /// Appends `events` (numbered by the caller, in order) to the transcript of `task`'s
    /// attempt `attempt`.
    fn append_events(&self, task: &str, attempt: u32, events: &[TranscriptEvent]) -> Result<()>;

    /// The events of `task`'s attempt `attempt` numbered after `after`, at most `limit`, in
    /// order; none for a transcript never written. A line (or row) that is not an event does
    /// not end the read: it is given in its place as an [`crate::Happened::Error`] that names
    /// it (file and line), numbered as the event before it.
    fn events(
        &self,
        task: &str,
        attempt: u32,
        after: u64,
        limit: usize,
    ) -> Result<Vec<TranscriptEvent>>;

    /// Every transcript's events appended after position `after` (any task, any attempt),
    /// oldest first, at most `limit`, with the position of the last one there is (`u64::MAX`
    /// asks for that position alone); `None` when the store's transcripts are files, which a
    /// reader follows by watching them. Events copied in by an import have no position.
    fn events_since(&self, after: u64, limit: usize) -> Result<Option<(Vec<AttemptEvent>, u64)>> {
        let _ = (after, limit);
        Ok(None)
    }

    /// Records an attempt (replacing what was recorded for the same task and number).
    fn save_attempt(&self, attempt: &Attempt) -> Result<()>;

    /// The attempts at `task`, or at every task, ordered by task and number.
    fn attempts(&self, task: Option<&str>) -> Result<Vec<Attempt>>;

    /// [`Self::attempts`] for a view: a record that cannot be read is named and left out
    /// instead of failing the read. By default, every record as `attempts` reads them.
    fn attempts_listed(&self, task: Option<&str>) -> Result<Listing<Attempt>> {
        Ok(Listing::all(self.attempts(task)?))
    }

    /// Records a worker (replacing its earlier record).
    fn save_worker(&self, worker: &WorkerRecord) -> Result<()>;

    /// An attempt's records written together, as a worker has them at its start (the attempt
    /// and the worker working on it) and at its end (the last of its transcript and the
    /// attempt): `events` appended to the attempt's transcript, the attempt recorded, and
    /// `worker` when given. A store that can writes them as one change (a database: one
    /// transaction, one commit); by default, one after the other in that order.
    fn save_attempt_with(
        &self,
        attempt: &Attempt,
        events: &[TranscriptEvent],
        worker: Option<&WorkerRecord>,
    ) -> Result<()> {
        // Refused before anything is written, as a store writing them together would.
        crate::names::validate_task_id(&attempt.task)?;
        if let Some(worker) = worker {
            crate::names::validate_agent_id(&worker.name)?;
        }
        self.append_events(&attempt.task, attempt.attempt, events)?;
        self.save_attempt(attempt)?;
        match worker {
            Some(worker) => self.save_worker(worker),
            None => Ok(()),
        }
    }

    /// Every worker any supervisor recorded, by name.
    fn workers(&self) -> Result<Vec<WorkerRecord>>;

    /// [`Self::workers`] for a view: a record that cannot be read is named and left out.
    fn workers_listed(&self) -> Result<Listing<WorkerRecord>> {
        Ok(Listing::all(self.workers()?))
    }
}
