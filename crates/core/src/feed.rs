//! The change feed's events: what a front end (the desktop, `baton watch`, the MCP server's
//! resource notifications) is told changed in a project, whichever store keeps it, and the
//! seam through which a store whose state is files on this machine reads them itself.
//!
//! Events are computed by comparing state, not by trusting raw file-system events: a wake-up
//! marks areas of the project dirty ([`Dirty`]), and each dirty area is read again and
//! compared with what was seen before. `baton-live` runs the feed; a database's rows are
//! compared there through the store traits, and the folder's files by the folder store's own
//! [`FileFeed`] (`baton-folder`), as PostgreSQL's notifications are listened to by `baton-pg`.

mod dirty;
mod tasks;
mod visible;

use std::path::PathBuf;

use serde::Serialize;

use crate::attempts::WorkerRecord;
use crate::inbox::{Message, Question};
use crate::model::TaskStatus;
use crate::signals::SignalRecord;
use crate::transcript::{AttemptEvent, TranscriptEvent};

pub use dirty::Dirty;
pub use tasks::{diff_tasks, tasks_by_id};

/// The most events one `TranscriptAppended` carries (a longer run is sent as several).
pub const MAX_EVENTS_PER_CHANGE: usize = 256;

/// A store's own reading of its files, for a store whose state is files on this machine (the
/// folder, [`crate::TaskStore::file_feed`]). Made when the feed starts, which sets the baseline
/// silently; each call reads the `dirty` areas again and adds the events for what changed.
pub trait FileFeed: Send {
    /// The project's areas: tasks, the plan, the summary, discoveries, logs, results, runs
    /// and their signals, in that order. A file that cannot be read is passed over (a broken
    /// `tasks.json` is reported once, as [`ChangeEvent::TasksUnreadable`]).
    fn project(&mut self, dirty: &Dirty, events: &mut Vec<ChangeEvent>);

    /// The events appended to the team's transcripts, in the order they were appended.
    fn transcripts(&mut self, dirty: &Dirty, events: &mut Vec<ChangeEvent>);
}

/// One logical change in `.coordination/`. The desktop's UI receives these as they are
/// (`ui/src/bindings/ChangeEvent.ts` is generated from this type).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum ChangeEvent {
    /// `tasks.json` changed; what changed, task by task.
    TasksChanged {
        changes: Vec<TaskChange>,
    },
    /// `tasks.json` cannot be read (hand-broken); reported once until it is repaired.
    TasksUnreadable {
        message: String,
    },
    SignalWritten {
        name: String,
        run: u32,
        path: PathBuf,
        #[serde(flatten)]
        record: SignalRecord,
    },
    SignalCleared {
        name: String,
        run: u32,
        path: PathBuf,
    },
    RunStarted {
        run: u32,
    },
    /// Text appended to `context/discoveries.md`.
    DiscoveryAdded {
        text: String,
    },
    ResultWritten {
        task: String,
        path: PathBuf,
    },
    /// Whole lines appended to an agent's log.
    LogAppended {
        agent: String,
        lines: Vec<String>,
    },
    MasterPlanChanged,
    SummaryWritten,
    /// A file of `orchestration/` changed: `state.json` (invocations, parallel runs,
    /// handoffs, conflicts), `workflows.json` or `config.json`.
    OrchestrationChanged {
        file: String,
    },
    /// `HANDOFF.md` was rewritten with the consolidated handoff context.
    HandoffWritten,
    /// A browser was recorded in `browsers/` (launched for a UI-test agent or a session).
    BrowserAdded {
        port: u16,
        owner: String,
        headless: bool,
    },
    /// A browser left the registry (stopped, or its window closed).
    BrowserRemoved {
        port: u16,
    },
    /// A supervised worker's record changed (its state, task, agent process, cost).
    WorkerChanged {
        worker: WorkerRecord,
    },
    /// Events appended to the transcript of `task`'s attempt `attempt`, in order (a long run
    /// comes as several of these, [`MAX_EVENTS_PER_CHANGE`] at most each).
    TranscriptAppended {
        task: String,
        attempt: u32,
        events: Vec<TranscriptEvent>,
    },
    /// An agent asked the lead a question (or for an approval).
    QuestionAsked {
        question: Question,
    },
    /// A question was answered, or closed unanswered.
    QuestionSettled {
        question: Question,
    },
    /// A message was sent.
    MessageSent {
        message: Message,
    },
    /// A team's run ended ([`crate::team_end`]): what it did, for a lead who walked away.
    TeamEnded {
        ended: crate::team_end::TeamEnded,
    },
}

/// What happened to one task.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskChange {
    pub id: String,
    #[serde(flatten)]
    pub kind: TaskChangeKind,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "change", rename_all = "snake_case")]
pub enum TaskChangeKind {
    Added {
        status: TaskStatus,
        description: String,
    },
    Removed,
    /// The status moved; `by` is the owner after the move (or before, when released).
    Status {
        from: TaskStatus,
        to: TaskStatus,
        by: Option<String>,
    },
    /// Other fields changed (a heartbeat shows as `lease_expires_at`).
    Edited {
        fields: Vec<String>,
    },
}

/// One `TranscriptAppended` per run of events of one attempt, at most
/// [`MAX_EVENTS_PER_CHANGE`] each.
pub fn group_transcript_events(appended: Vec<AttemptEvent>, events: &mut Vec<ChangeEvent>) {
    for AttemptEvent {
        task,
        attempt,
        event,
    } in appended
    {
        match events.last_mut() {
            Some(ChangeEvent::TranscriptAppended {
                task: t,
                attempt: a,
                events,
            }) if *t == task && *a == attempt && events.len() < MAX_EVENTS_PER_CHANGE => {
                events.push(event)
            }
            _ => events.push(ChangeEvent::TranscriptAppended {
                task,
                attempt,
                events: vec![event],
            }),
        }
    }
}
