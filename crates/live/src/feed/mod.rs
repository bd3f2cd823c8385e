//! The change feed: typed events ([`ChangeEvent`], `baton_core::feed`) for everything that
//! changes in a project, for the desktop app, the MCP server's resource notifications and
//! `baton watch`. It runs the watching thread; what each store's areas are is the store's.
//!
//! Events are computed by comparing state, not by trusting raw file-system events: a wake-up
//! marks an area of the folder dirty (tasks, logs, signals, …), and after a short quiet period
//! each dirty area is re-read and compared with what was seen before. So a burst of writes
//! (a temp file, a rename, a log line) gives one event per logical change, missed or
//! reordered raw events cannot produce wrong ones, and polling works the same as events.
//!
//! A folder project's files are read by the folder store itself (`baton_core::feed::FileFeed`).
//! A project kept in a database is followed the same way: its notifications mark the store's
//! areas dirty, and the rows are read and compared as the files are (`store`). What stays on
//! this machine whichever store it is (orchestration's files, browsers) is `local`'s.

mod inbox;
mod local;
mod store;
mod team;

use std::cell::RefCell;
use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use baton_core::feed::{Dirty, FileFeed};
use baton_core::{Changes, DocumentStore, Layout, SignalStore, TaskStore, TeamStore};

use crate::error::Result;
use crate::watcher::{Backend, Wake, Watch, WatchMode};
pub use baton_core::feed::{ChangeEvent, MAX_EVENTS_PER_CHANGE, TaskChange, TaskChangeKind};
use inbox::InboxState;
use local::LocalState;
use store::StoreState;
use team::TeamState;

/// How long the folder must be quiet before a burst of writes is turned into events.
pub const QUIET: Duration = Duration::from_millis(5);
/// The longest a burst is held back, however busy the folder is.
pub const MAX_DELAY: Duration = Duration::from_millis(30);

/// A running change feed. Dropping it stops the watching thread.
pub struct ChangeFeed {
    /// One batch per look at the project: the events of one burst of writes (one command's).
    batches: Receiver<Vec<ChangeEvent>>,
    /// What is left of the last batch for [`ChangeFeed::recv`], which hands out one at a time.
    pending: RefCell<VecDeque<ChangeEvent>>,
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
    /// Starts following the project whose tasks, signals, documents and team are in
    /// `stores`: a folder's files as they change (read by the folder store itself), or a
    /// database's notifications, and what stays in `local` on this machine (orchestration,
    /// browsers). Events describe changes made after this returns. Nothing here talks to the
    /// store on the caller's thread (an async runtime's, in the MCP server): the feed's own
    /// thread does, and this waits for it.
    pub fn start_on(local: &Layout, stores: Stores, mode: WatchMode) -> Result<ChangeFeed> {
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
        let files = matches!(stores.tasks.changes(), Changes::Files(_));
        let backend = if files {
            watch.backend()
        } else {
            Backend::Notifications
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
                    if !files && let Some(listener) = stores.tasks.listen_for_changes()? {
                        watch.follow(listener)?;
                    }
                    State::read(layout, stores)
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
            batches: rx,
            pending: RefCell::default(),
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
        if let Some(event) = self.pending.borrow_mut().pop_front() {
            return Some(event);
        }
        let batch = self.batches.recv().ok()?;
        self.one_of(batch)
    }

    /// The next event, waiting at most `timeout`.
    pub fn recv_timeout(
        &self,
        timeout: Duration,
    ) -> std::result::Result<ChangeEvent, RecvTimeoutError> {
        if let Some(event) = self.pending.borrow_mut().pop_front() {
            return Ok(event);
        }
        let batch = self.batches.recv_timeout(timeout)?;
        self.one_of(batch).ok_or(RecvTimeoutError::Timeout)
    }

    /// The next batch: the events of one look at the project (what one command changed, read
    /// once), so a front end that reads the board again on a change reads it once for all of
    /// them. Waits as long as it takes; `None` if the feed stopped.
    pub fn recv_batch(&self) -> Option<Vec<ChangeEvent>> {
        self.pending_batch().or_else(|| self.batches.recv().ok())
    }

    /// The next batch, waiting at most `timeout`.
    pub fn recv_batch_timeout(
        &self,
        timeout: Duration,
    ) -> std::result::Result<Vec<ChangeEvent>, RecvTimeoutError> {
        match self.pending_batch() {
            Some(pending) => Ok(pending),
            None => self.batches.recv_timeout(timeout),
        }
    }

    /// What is left of the last batch [`ChangeFeed::recv`] took from, if anything.
    fn pending_batch(&self) -> Option<Vec<ChangeEvent>> {
        let pending: Vec<ChangeEvent> = self.pending.borrow_mut().drain(..).collect();
        (!pending.is_empty()).then_some(pending)
    }

    /// The first of `batch`, keeping the rest for the next calls (a batch is never empty).
    fn one_of(&self, batch: Vec<ChangeEvent>) -> Option<ChangeEvent> {
        let mut pending = self.pending.borrow_mut();
        pending.extend(batch);
        pending.pop_front()
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

/// What the feed compares against: the project's areas (the folder's files, read by the
/// folder store, or a database's rows), what stays on this machine, the team and the inbox.
struct State {
    layout: Layout,
    project: Project,
    local: LocalState,
    team: TeamState,
    inbox: InboxState,
}

/// Who reads the project's own areas.
enum Project {
    /// A store whose state is files here reads them itself.
    Files(Box<dyn FileFeed>),
    /// A database's rows, read through the traits.
    Store(Box<StoreState>),
}

impl State {
    /// The first look, which sets the baseline silently.
    fn read(layout: Layout, stores: Stores) -> Result<State> {
        let team = TeamState::read(stores.team.clone(), stores.documents.clone())?;
        let inbox = InboxState::read(stores.documents.clone())?;
        let project = match stores.tasks.file_feed() {
            Some(files) => Project::Files(files),
            None => Project::Store(Box::new(StoreState::read(stores)?)),
        };
        Ok(State {
            local: LocalState::read(&layout),
            layout,
            project,
            team,
            inbox,
        })
    }

    /// The events since the last look at the `dirty` areas, in the order: the project's
    /// areas, this machine's, the team's workers and transcripts, the inbox; `false` when the
    /// store could not be read (those areas are looked at again later).
    fn update(&mut self, dirty: &Dirty) -> (Vec<ChangeEvent>, bool) {
        let mut events = Vec::new();
        let mut read = match &mut self.project {
            Project::Files(files) => {
                files.project(dirty, &mut events);
                true
            }
            Project::Store(store) => store.update(dirty, &mut events).is_ok(),
        };
        events.extend(self.local.update(&self.layout, dirty));
        read &= self.team.update(dirty, &mut events).is_ok();
        if let Project::Files(files) = &mut self.project {
            files.transcripts(dirty, &mut events);
        }
        if dirty.inbox {
            read &= self.inbox.update(&mut events).is_ok();
        }
        (events, read)
    }

    /// The stores of a project whose store notifies (its listener is made again after it
    /// broke).
    fn stores(&self) -> Option<&Stores> {
        match &self.project {
            Project::Store(store) => Some(&store.stores),
            Project::Files(_) => None,
        }
    }

    fn notifies(&self) -> bool {
        matches!(self.project, Project::Store(_))
    }
}

fn run(watch: &mut Watch, state: &mut State, tx: &Sender<Vec<ChangeEvent>>, stop: &AtomicBool) {
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
            Err(_) if state.notifies() => {
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
                Err(_) if state.notifies() => {
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
        if !events.is_empty() && tx.send(events).is_err() {
            return; // the feed was dropped
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A feed whose thread has sent `batches`, and the thread's end of it (dropped: stopped).
    fn feed_of(batches: Vec<Vec<ChangeEvent>>) -> (ChangeFeed, Sender<Vec<ChangeEvent>>) {
        let (tx, rx) = channel();
        for batch in batches {
            tx.send(batch).unwrap();
        }
        let feed = ChangeFeed {
            batches: rx,
            pending: RefCell::default(),
            backend: Backend::Notifications,
            stop: Arc::new(AtomicBool::new(false)),
            thread: None,
        };
        (feed, tx)
    }

    fn run(n: u32) -> ChangeEvent {
        ChangeEvent::RunStarted { run: n }
    }

    #[test]
    fn a_look_at_the_project_is_one_batch_and_recv_hands_its_events_out_in_order() {
        let (feed, _running) = feed_of(vec![vec![run(1), run(2), run(3)], vec![run(4)]]);
        assert_eq!(feed.recv(), Some(run(1)));
        // What is left of the first batch comes before the next, as a batch of its own.
        assert_eq!(feed.recv_batch(), Some(vec![run(2), run(3)]));
        assert_eq!(
            feed.recv_batch_timeout(Duration::from_millis(1)),
            Ok(vec![run(4)])
        );
        assert_eq!(
            feed.recv_timeout(Duration::from_millis(1)),
            Err(RecvTimeoutError::Timeout)
        );
    }

    #[test]
    fn a_stopped_feed_ends_both_ways_of_reading_it() {
        let (feed, thread) = feed_of(vec![vec![run(1), run(2)]]);
        drop(thread);
        assert_eq!(feed.recv_timeout(Duration::from_millis(1)), Ok(run(1)));
        assert_eq!(feed.recv(), Some(run(2)));
        // The feed's thread is gone: nothing more comes.
        assert_eq!(feed.recv(), None);
        assert_eq!(feed.recv_batch(), None);
        assert_eq!(
            feed.recv_batch_timeout(Duration::from_millis(1)),
            Err(RecvTimeoutError::Disconnected)
        );
    }
}
