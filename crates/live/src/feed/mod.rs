//! The change feed: typed events for everything that changes in `.coordination/`, for the
//! desktop app, the MCP server's resource notifications and `baton watch`. Nothing else in
//! Baton watches the folder itself.
//!
//! Events are computed by comparing state, not by trusting raw file-system events: a wake-up
//! marks an area of the folder dirty (tasks, logs, signals, …), and after a short quiet period
//! each dirty area is re-read and compared with what was seen before. So a burst of writes
//! (a temp file, a rename, a log line) gives one event per logical change, missed or
//! reordered raw events cannot produce wrong ones, and polling works the same as events.
//!
//! A project kept in a database is followed the same way: its notifications mark the store's
//! areas dirty, and the rows are read and compared as the files are (`store`); what stays on
//! this machine (orchestration records, browsers) is still watched in the folder (`folder`).

mod dirty;
mod folder;
mod inbox;
mod store;
mod team;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use baton_core::inbox::{Message, Question};
use baton_core::{
    Changes, DocumentStore, Layout, SignalRecord, SignalStore, TaskStatus, TaskStore, TeamStore,
    TranscriptEvent, WorkerRecord,
};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::error::Result;
use crate::watcher::{Backend, Wake, Watch, WatchMode};
pub(crate) use dirty::Dirty;
use folder::FolderState;
use inbox::InboxState;
use store::StoreState;
pub use team::MAX_EVENTS_PER_CHANGE;
use team::TeamState;

/// How long the folder must be quiet before a burst of writes is turned into events.
pub const QUIET: Duration = Duration::from_millis(5);
/// The longest a burst is held back, however busy the folder is.
pub const MAX_DELAY: Duration = Duration::from_millis(30);

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

/// A running change feed. Dropping it stops the watching thread.
pub struct ChangeFeed {
    events: Receiver<ChangeEvent>,
    backend: Backend,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// A project kept in a store that notifies by itself (a database): its tasks and signals.
#[derive(Clone)]
pub struct Stores {
    pub tasks: Arc<dyn TaskStore>,
    pub signals: Arc<dyn SignalStore>,
    pub documents: Arc<dyn DocumentStore>,
    /// The team's workers and transcripts (kept where the tasks are).
    pub team: Arc<dyn TeamStore>,
}

impl ChangeFeed {
    /// Starts watching a folder project's folder, `local`. Events describe changes made after
    /// this returns.
    pub fn start(local: &Layout, mode: WatchMode) -> Result<ChangeFeed> {
        ChangeFeed::spawn(local, None, None, mode)
    }

    /// Starts following a project whose tasks and signals are in `stores` (their
    /// notifications), and what stays in `local` on this machine (orchestration, browsers).
    /// A folder store is watched as [`ChangeFeed::start`] watches it. Events describe changes
    /// made after this returns. Nothing here talks to the store on the caller's thread (an
    /// async runtime's, in the MCP server): the feed's own thread does, and this waits for it.
    pub fn start_on(local: &Layout, stores: Stores, mode: WatchMode) -> Result<ChangeFeed> {
        let records = Records {
            team: stores.team.clone(),
            documents: stores.documents.clone(),
        };
        if let Changes::Files(_) = stores.tasks.changes() {
            return ChangeFeed::spawn(local, None, Some(records), mode);
        }
        ChangeFeed::spawn(local, Some(stores), Some(records), mode)
    }

    fn spawn(
        local: &Layout,
        stores: Option<Stores>,
        records: Option<Records>,
        mode: WatchMode,
    ) -> Result<ChangeFeed> {
        let layout = local.clone();
        // A database project reached by URL alone may have no folder here: then only the
        // store is followed (nothing is created for it).
        let local = layout.root().is_dir();
        let probe = if local {
            layout.root().to_path_buf()
        } else {
            std::env::temp_dir()
        };
        let mut watch = Watch::new(mode, &probe)?;
        let interval = mode.poll_interval();
        if local {
            watch.add_or_poll(layout.root(), true, interval)?;
        }
        let backend = if stores.is_some() {
            Backend::Notifications
        } else {
            watch.backend()
        };
        let (tx, rx) = channel();
        let (ready_tx, ready_rx) = channel();
        let stop = Arc::new(AtomicBool::new(false));
        let thread_stop = stop.clone();
        let thread = std::thread::Builder::new()
            .name("baton-change-feed".into())
            .spawn(move || {
                // Listening starts before the first look, so nothing in between is missed.
                let started = (|| -> Result<State> {
                    if let Some(stores) = &stores
                        && let Some(listener) = stores.tasks.listen_for_changes()?
                    {
                        watch.follow(listener)?;
                    }
                    State::read(layout, stores, records)
                })();
                let mut state = match started {
                    Ok(state) => {
                        let _ = ready_tx.send(Ok(()));
                        state
                    }
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                };
                run(&mut watch, &mut state, &tx, &thread_stop)
            })
            .map_err(|e| baton_core::StoreError::io("change feed thread", e))?;
        ready_rx
            .recv()
            .unwrap_or(Err(crate::LiveError::WatchStopped))?;
        Ok(ChangeFeed {
            events: rx,
            backend,
            stop,
            thread: Some(thread),
        })
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// The next event, waiting as long as it takes; `None` if the feed stopped.
    pub fn recv(&self) -> Option<ChangeEvent> {
        self.events.recv().ok()
    }

    /// The next event, waiting at most `timeout`.
    pub fn recv_timeout(
        &self,
        timeout: Duration,
    ) -> std::result::Result<ChangeEvent, RecvTimeoutError> {
        self.events.recv_timeout(timeout)
    }
}

impl Drop for ChangeFeed {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// How often the feed thread checks whether its owner dropped it.
const STOP_CHECK: Duration = Duration::from_millis(200);
/// The first pause before following a store that went away again, and the longest.
const FIRST_PAUSE: Duration = Duration::from_millis(100);
const LONGEST_PAUSE: Duration = Duration::from_secs(2);

/// What the feed compares against: the folder's files, and the store's rows when the project
/// is kept in one.
struct State {
    layout: Layout,
    folder: FolderState,
    store: Option<StoreState>,
    team: Option<TeamState>,
    inbox: Option<InboxState>,
}

/// The team's records and the inbox, read through their stores whichever kind they are.
struct Records {
    team: Arc<dyn TeamStore>,
    documents: Arc<dyn DocumentStore>,
}

impl State {
    /// The first look, which sets the baseline silently.
    fn read(layout: Layout, stores: Option<Stores>, records: Option<Records>) -> Result<State> {
        let store = stores.map(StoreState::read).transpose()?;
        let folder = FolderState::read(&layout);
        let (team, inbox) = match records {
            Some(r) => (
                Some(TeamState::read(r.team, &layout)?),
                Some(InboxState::read(r.documents)?),
            ),
            None => (None, None),
        };
        Ok(State {
            layout,
            folder,
            store,
            team,
            inbox,
        })
    }

    /// The events since the last look at the `dirty` areas; `false` when the store could not
    /// be read (those areas are looked at again later).
    fn update(&mut self, dirty: &Dirty) -> (Vec<ChangeEvent>, bool) {
        let (mut events, mut read) = self.update_project(dirty);
        if let Some(team) = &mut self.team {
            read &= team.update(&self.layout, dirty, &mut events).is_ok();
        }
        if let Some(inbox) = &mut self.inbox
            && dirty.inbox
        {
            read &= inbox.update(&mut events).is_ok();
        }
        (events, read)
    }

    /// The events of everything but the team.
    fn update_project(&mut self, dirty: &Dirty) -> (Vec<ChangeEvent>, bool) {
        let Some(store) = &mut self.store else {
            return (self.folder.update(&self.layout, dirty), true);
        };
        let mut events = Vec::new();
        let read = store.update(dirty, &mut events).is_ok();
        // What stays on this machine: orchestration's configuration, HANDOFF.md, browsers.
        let local = Dirty {
            orchestration: dirty.orchestration,
            handoff: dirty.handoff,
            browsers: dirty.browsers,
            ..Dirty::default()
        };
        events.extend(self.folder.update(&self.layout, &local));
        (events, read)
    }

    fn stores(&self) -> Option<&Stores> {
        self.store.as_ref().map(|s| &s.stores)
    }
}

fn run(watch: &mut Watch, state: &mut State, tx: &Sender<ChangeEvent>, stop: &AtomicBool) {
    // Whether the store's notifications reach the watch, and whether the last look at the
    // store read it; either failing is retried with a growing pause, and once the store is
    // back everything is read again and compared, so nothing is missed across a reconnect.
    let mut listening = true;
    let mut caught_up = true;
    let mut pause = FIRST_PAUSE;
    while !stop.load(Ordering::Relaxed) {
        let behind = !listening || !caught_up;
        let wake_at = Instant::now() + if behind { pause } else { STOP_CHECK };
        let mut dirty = Dirty::default();
        match watch.wait(Some(wake_at)) {
            Ok(Wake::Deadline) if !behind => continue,
            Ok(Wake::Deadline) => {
                pause = (pause * 2).min(LONGEST_PAUSE);
                if !listening {
                    let Some(stores) = state.stores() else { return };
                    let followed = match stores.tasks.listen_for_changes() {
                        Ok(Some(listener)) => watch.follow(listener).is_ok(),
                        _ => false,
                    };
                    if !followed {
                        continue;
                    }
                    listening = true;
                }
                dirty = Dirty::all();
            }
            Ok(Wake::Changed(paths)) => dirty.mark(&state.layout, &paths),
            Err(_) if state.store.is_some() => {
                listening = false;
                continue;
            }
            Err(_) => return,
        }
        // Debounce: gather the rest of the burst.
        let burst_end = Instant::now() + MAX_DELAY;
        loop {
            let quiet_end = (Instant::now() + QUIET).min(burst_end);
            match watch.wait(Some(quiet_end)) {
                Ok(Wake::Changed(paths)) if Instant::now() < burst_end => {
                    dirty.mark(&state.layout, &paths)
                }
                Ok(Wake::Changed(paths)) => {
                    dirty.mark(&state.layout, &paths);
                    break;
                }
                Ok(Wake::Deadline) => break,
                Err(_) if state.store.is_some() => {
                    listening = false;
                    break;
                }
                Err(_) => return,
            }
        }
        let (events, read) = state.update(&dirty);
        caught_up = read;
        if listening && caught_up {
            pause = FIRST_PAUSE;
        }
        for event in events {
            if tx.send(event).is_err() {
                return; // the feed was dropped
            }
        }
    }
}

pub(crate) fn tasks_by_id(file: &Value) -> BTreeMap<String, Map<String, Value>> {
    file["tasks"]
        .as_array()
        .map(|tasks| {
            tasks
                .iter()
                .filter_map(|t| {
                    let object = t.as_object()?.clone();
                    Some((object.get("id")?.as_str()?.to_string(), object))
                })
                .collect()
        })
        .unwrap_or_default()
}

fn status_of(task: &Map<String, Value>) -> Option<TaskStatus> {
    task.get("status")
        .and_then(|s| serde_json::from_value(s.clone()).ok())
}

fn owner_of(task: &Map<String, Value>) -> Option<String> {
    task.get("claimed_by")
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// Task-by-task differences, in the order of the new file (removals last).
pub(crate) fn diff_tasks(
    before: &BTreeMap<String, Map<String, Value>>,
    after: &BTreeMap<String, Map<String, Value>>,
) -> Vec<TaskChange> {
    let mut changes = Vec::new();
    for (id, new) in after {
        let Some(old) = before.get(id) else {
            changes.push(TaskChange {
                id: id.clone(),
                kind: TaskChangeKind::Added {
                    status: status_of(new).unwrap_or(TaskStatus::Available),
                    description: new
                        .get("description")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                },
            });
            continue;
        };
        let (from, to) = (status_of(old), status_of(new));
        if from != to
            && let (Some(from), Some(to)) = (from, to)
        {
            changes.push(TaskChange {
                id: id.clone(),
                kind: TaskChangeKind::Status {
                    from,
                    to,
                    by: owner_of(new).or_else(|| owner_of(old)),
                },
            });
            continue;
        }
        let fields: Vec<String> = new
            .iter()
            .filter(|(key, value)| old.get(*key) != Some(value))
            .map(|(key, _)| key.clone())
            .chain(old.keys().filter(|k| !new.contains_key(*k)).cloned())
            .collect();
        if !fields.is_empty() {
            changes.push(TaskChange {
                id: id.clone(),
                kind: TaskChangeKind::Edited { fields },
            });
        }
    }
    for id in before.keys().filter(|id| !after.contains_key(*id)) {
        changes.push(TaskChange {
            id: id.clone(),
            kind: TaskChangeKind::Removed,
        });
    }
    changes
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tasks(list: Value) -> BTreeMap<String, Map<String, Value>> {
        tasks_by_id(&json!({ "tasks": list }))
    }

    #[test]
    fn diff_reports_additions_moves_edits_and_removals() {
        let before = tasks(json!([
            {"id": "a", "status": "available", "description": "A"},
            {"id": "b", "status": "claimed", "claimed_by": "w1", "lease_expires_at": "1"},
            {"id": "c", "status": "done"},
        ]));
        let after = tasks(json!([
            {"id": "a", "status": "claimed", "claimed_by": "w2", "description": "A"},
            {"id": "b", "status": "claimed", "claimed_by": "w1", "lease_expires_at": "2"},
            {"id": "d", "status": "available", "description": "D"},
        ]));
        let changes = diff_tasks(&before, &after);
        assert_eq!(
            changes,
            vec![
                TaskChange {
                    id: "a".into(),
                    kind: TaskChangeKind::Status {
                        from: TaskStatus::Available,
                        to: TaskStatus::Claimed,
                        by: Some("w2".into())
                    }
                },
                TaskChange {
                    id: "b".into(),
                    kind: TaskChangeKind::Edited {
                        fields: vec!["lease_expires_at".into()]
                    }
                },
                TaskChange {
                    id: "d".into(),
                    kind: TaskChangeKind::Added {
                        status: TaskStatus::Available,
                        description: "D".into()
                    }
                },
                TaskChange {
                    id: "c".into(),
                    kind: TaskChangeKind::Removed
                },
            ]
        );
    }

    #[test]
    fn events_serialise_with_a_tag() {
        let event = ChangeEvent::TasksChanged {
            changes: vec![TaskChange {
                id: "task-1".into(),
                kind: TaskChangeKind::Removed,
            }],
        };
        assert_eq!(
            serde_json::to_value(&event).unwrap(),
            json!({"event": "tasks_changed", "changes": [{"id": "task-1", "change": "removed"}]})
        );
    }
}
