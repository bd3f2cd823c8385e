//! An attempt's transcript as it is written: events numbered, bounded in count and bytes, and
//! stored in batches (at once when the agent pauses, so a lead following live is not kept
//! waiting for a batch that is not coming).

use std::time::{Duration, Instant};

use baton_core::{Happened, Timestamp, TranscriptEvent};

use super::LOOK_EVERY;

use crate::supervision::crew::Crew;

/// Events stored in one write, at most.
const BATCH: usize = 256;
/// How long events wait to be stored, at most, while the agent keeps printing.
const FLUSH_EVERY: Duration = Duration::from_millis(100);
/// A pause this long in the agent's output stores what it printed at once: an event the lead
/// follows live is not held back for a batch that is not coming, and a busy agent's events are
/// still stored in batches.
const QUIET: Duration = Duration::from_millis(2);
/// Events one attempt's transcript keeps; later ones are counted, not stored.
pub const MAX_EVENTS: u64 = 100_000;

/// How many bytes `what` takes as JSON, counted as it is written (nothing kept).
fn json_size(what: &Happened) -> u64 {
    struct Count(u64);
    impl std::io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len() as u64;
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    let _ = serde_json::to_writer(&mut count, what);
    count.0
}

/// Numbers events and stores them in batches.
pub(super) struct Transcript<'a> {
    pub(super) crew: &'a Crew<'a>,
    /// The worker whose agent it is, for a report of trouble storing it.
    pub(super) worker: &'a str,
    pub(super) task: &'a str,
    pub(super) attempt: u32,
    pub(super) seq: u64,
    pub(super) pending: Vec<TranscriptEvent>,
    pub(super) due: Option<Instant>,
    /// Some of `pending` is the agent's own output (stored after a pause of [`QUIET`]; the
    /// supervisor's own events wait for [`FLUSH_EVERY`], or go with the agent's).
    pub(super) output_pending: bool,
    pub(super) cut_said: bool,
    /// What the kept events hold (as JSON), and the most they may.
    pub(super) bytes: u64,
    pub(super) max_bytes: u64,
}

impl<'a> Transcript<'a> {
    /// The transcript of one attempt, bounded by the profile's byte limit: empty, or carried
    /// on after the events of a start that failed under the same number
    /// ([`baton_core::Attempt::next_number`]).
    pub(super) fn new(crew: &'a Crew<'a>, worker: &'a str, task: &'a str, attempt: u32) -> Self {
        Transcript {
            crew,
            worker,
            task,
            attempt,
            seq: crew.last_event(task, attempt),
            pending: Vec::new(),
            due: None,
            output_pending: false,
            cut_said: false,
            bytes: 0,
            max_bytes: crew.profile.max_transcript_bytes(),
        }
    }
}

impl Transcript<'_> {
    pub(super) fn push(&mut self, what: Happened) {
        self.seq += 1;
        let size = json_size(&what);
        let cut = match (self.seq > MAX_EVENTS, self.bytes + size > self.max_bytes) {
            (true, _) => Some(format!("{MAX_EVENTS} events")),
            (_, true) => Some(format!(
                "{:.0} MiB (the profile's max_transcript_mb)",
                self.max_bytes as f64 / (1024.0 * 1024.0)
            )),
            _ => None,
        };
        if let Some(kept) = cut {
            if !self.cut_said {
                self.cut_said = true;
                let text =
                    format!("the transcript keeps {kept}; later events are counted, not kept");
                self.pending.push(TranscriptEvent {
                    seq: self.seq,
                    at: Timestamp::now(),
                    what: Happened::Supervisor { text },
                });
            }
            return;
        }
        self.bytes += size;
        self.pending.push(TranscriptEvent {
            seq: self.seq,
            at: Timestamp::now(),
            what,
        });
        self.due.get_or_insert_with(|| Instant::now() + FLUSH_EVERY);
        if self.pending.len() >= BATCH {
            self.flush();
        }
    }

    /// An event of the agent's output.
    pub(super) fn push_output(&mut self, what: Happened) {
        self.output_pending = true;
        self.push(what);
    }

    /// How long to wait for the agent's next output before storing what is pending.
    pub(super) fn patience(&self) -> Duration {
        match (self.output_pending, self.due) {
            (true, _) => QUIET,
            (false, Some(due)) => due
                .saturating_duration_since(Instant::now())
                .min(LOOK_EVERY),
            (false, None) => LOOK_EVERY,
        }
    }

    pub(super) fn flush(&mut self) {
        self.output_pending = false;
        if self.pending.is_empty() {
            return;
        }
        // A transcript that cannot be stored must not stop the agent: the events are kept
        // for the next flush, up to a bound, and the failure reported.
        match self
            .crew
            .append_events(self.task, self.attempt, &self.pending)
        {
            Ok(()) => self.pending.clear(),
            Err(e) => {
                (self.crew.progress)(crate::Progress::Trouble {
                    worker: self.worker.to_string(),
                    message: format!("cannot store the transcript: {e}"),
                });
                if self.pending.len() > 10 * BATCH {
                    self.pending.drain(..BATCH);
                }
            }
        }
        self.due = None;
    }

    /// The events not stored yet, for the caller to store with the attempt's record.
    pub(super) fn take(&mut self) -> Vec<TranscriptEvent> {
        self.output_pending = false;
        self.due = None;
        std::mem::take(&mut self.pending)
    }

    /// Events [`Self::take`] took that could not be stored: stored with the next batch.
    pub(super) fn put_back(&mut self, mut events: Vec<TranscriptEvent>) {
        events.append(&mut self.pending);
        self.pending = events;
        self.due.get_or_insert_with(|| Instant::now() + FLUSH_EVERY);
    }

    pub(super) fn flush_if_due(&mut self) {
        if self.due.is_some_and(|due| Instant::now() >= due) {
            self.flush();
        }
    }
}
