//! One way to learn that files changed: file-system events (`notify`: inotify, FSEvents, …)
//! when the file system delivers them, polling when it does not. Everything in this crate that
//! waits goes through [`Watch`], so the choice and the fallback are made in one place.
//!
//! A watch can also follow a store's own notifications ([`Watch::follow`]: a database's
//! `LISTEN`), so a waiter that needs both (a signal in the database and one at a local path;
//! a feed of the database and of this machine's browsers) sleeps on one thing.
//!
//! Callers treat a wake-up only as a hint that something may have changed and re-read what
//! they care about; they never trust an event's details. That makes both backends equivalent,
//! and it makes "arm the watch, then check, then wait" free of races: a change that lands
//! between the check and the wait still wakes the waiter.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::time::{Duration, Instant};

use baton_core::{Listener, StoreError};
use notify::{Config, EventHandler, PollWatcher, RecommendedWatcher, RecursiveMode, Watcher};

use crate::error::{LiveError, Result};

/// How often the polling backend looks, unless told otherwise.
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_millis(100);

/// Which backend to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatchMode {
    /// Events, unless the folder is on a network file system or events cannot be set up; then
    /// polling at the given interval.
    Auto(Duration),
    /// Events only; an error if they cannot be set up.
    Events,
    /// Polling at this interval, for file systems that deliver no events.
    Poll(Duration),
}

impl WatchMode {
    /// How often a folder is looked at when it is polled: the mode's interval, or the default
    /// for events (which poll only where events cannot be had).
    pub fn poll_interval(self) -> Duration {
        match self {
            WatchMode::Auto(interval) | WatchMode::Poll(interval) => interval,
            WatchMode::Events => DEFAULT_POLL_INTERVAL,
        }
    }
}

impl std::fmt::Display for WatchMode {
    /// As [`FromStr`] reads it (`BATON_WATCH_MODE`), for a process this one starts.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WatchMode::Auto(_) => f.write_str("auto"),
            WatchMode::Events => f.write_str("events"),
            WatchMode::Poll(interval) => write!(f, "poll:{}", interval.as_millis().max(1)),
        }
    }
}

impl Default for WatchMode {
    fn default() -> Self {
        WatchMode::Auto(DEFAULT_POLL_INTERVAL)
    }
}

impl FromStr for WatchMode {
    type Err = String;

    /// `auto`, `events`, `poll` or `poll:INTERVAL_MS`.
    fn from_str(text: &str) -> std::result::Result<Self, String> {
        match text {
            "auto" => Ok(WatchMode::default()),
            "events" => Ok(WatchMode::Events),
            "poll" => Ok(WatchMode::Poll(DEFAULT_POLL_INTERVAL)),
            _ => text
                .strip_prefix("poll:")
                .and_then(|ms| ms.parse::<u64>().ok())
                .filter(|ms| *ms > 0)
                .map(|ms| WatchMode::Poll(Duration::from_millis(ms)))
                .ok_or_else(|| {
                    format!(
                        "unknown watch mode {text:?}: use auto, events, poll or poll:MILLISECONDS"
                    )
                }),
        }
    }
}

/// What a wait ended up sleeping on: a [`Watch`]'s backend, or the store's own notifications
/// (a database's `LISTEN`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "backend", rename_all = "snake_case")]
pub enum Backend {
    Events,
    Notifications,
    Poll {
        #[serde(with = "millis")]
        interval: Duration,
    },
}

impl std::fmt::Display for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Backend::Events => f.write_str("file-system events"),
            Backend::Notifications => f.write_str("the store's notifications"),
            Backend::Poll { interval } => write!(f, "polling every {} ms", interval.as_millis()),
        }
    }
}

/// What [`Watch::wait`] saw.
#[derive(Debug, PartialEq, Eq)]
pub enum Wake {
    /// Something under a watched folder may have changed (these paths, if the backend said).
    Changed(Vec<PathBuf>),
    /// The deadline passed first.
    Deadline,
}

type RawEvent = notify::Result<notify::Event>;

/// What reaches a watch: a file-system event, or word from a store it follows.
enum Raw {
    Files(RawEvent),
    /// The store notified (`Ok`), or its listener broke (`Err`).
    Store(std::result::Result<(), StoreError>),
}

/// Hands the file watcher's events to the watch's channel.
struct Forward(Sender<Raw>);

impl EventHandler for Forward {
    fn handle_event(&mut self, event: RawEvent) {
        if let Ok(event) = &event
            && (only_read(event) || temp_file_written(event))
        {
            return;
        }
        let _ = self.0.send(Raw::Files(event));
    }
}

/// Whether `event` is a file or folder being opened or read. That changes nothing; passed on,
/// it would wake a waiter that then reads the folder, which is another such event, and so on
/// forever.
fn only_read(event: &notify::Event) -> bool {
    use notify::EventKind;
    use notify::event::{AccessKind, AccessMode};
    matches!(
        event.kind,
        EventKind::Access(
            AccessKind::Open(_)
                | AccessKind::Read
                | AccessKind::Close(AccessMode::Read | AccessMode::Execute)
        )
    )
}

/// Whether `event` is a temporary file of an atomic write ([`baton_fs::write_atomic`]) being
/// made or written. Nobody reads such a file: what changes is the file it is renamed over, and
/// the rename wakes the waiter. Woken by the writing instead, a waiter read the old file while
/// the writer was still at it (on a board of thousands of tasks, a read as long as the write),
/// and then read again at the rename.
fn temp_file_written(event: &notify::Event) -> bool {
    use notify::EventKind;
    use notify::event::{AccessKind, AccessMode, ModifyKind};
    let writing = matches!(
        event.kind,
        EventKind::Create(_)
            | EventKind::Modify(ModifyKind::Data(_) | ModifyKind::Metadata(_) | ModifyKind::Any)
            | EventKind::Access(AccessKind::Close(AccessMode::Write))
    );
    writing
        && !event.paths.is_empty()
        && event.paths.iter().all(|path| {
            path.file_name()
                .is_some_and(|name| name.to_string_lossy().ends_with(baton_fs::TEMP_SUFFIX))
        })
}

/// How often a thread following a store checks whether its watch is gone.
const FOLLOW_STOP_CHECK: Duration = Duration::from_millis(200);

/// Watches folders and wakes a waiter when something in them changes.
pub struct Watch {
    watcher: Box<dyn Watcher + Send>,
    sender: Sender<Raw>,
    events: Receiver<Raw>,
    backend: Backend,
    watched: BTreeSet<PathBuf>,
    /// Set when the watch is dropped, for the threads following stores.
    dropped: Arc<AtomicBool>,
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.dropped.store(true, Ordering::Relaxed);
    }
}

impl Watch {
    /// A watch with no folders yet; add them with [`Watch::add`]. `probe` is a folder that
    /// will be watched, used to pick the backend (network file systems get polling).
    pub fn new(mode: WatchMode, probe: &Path) -> Result<Watch> {
        let (tx, rx) = channel();
        let (watcher, backend) = file_watcher(mode, probe, &tx)?;
        Ok(Watch {
            watcher,
            sender: tx,
            events: rx,
            backend,
            watched: BTreeSet::new(),
            dropped: Arc::new(AtomicBool::new(false)),
        })
    }

    /// Wakes this watch's waiter whenever `listener` says its store changed, from a thread
    /// of its own that ends soon after the watch is dropped. When the listener breaks (its
    /// connection lost), the next [`Watch::wait`] returns that error, and the caller makes a
    /// new listener and follows it.
    pub fn follow(&self, mut listener: Box<dyn Listener>) -> Result<()> {
        let sender = self.sender.clone();
        let dropped = self.dropped.clone();
        std::thread::Builder::new()
            .name("baton-follow-store".into())
            .spawn(move || {
                while !dropped.load(Ordering::Relaxed) {
                    let word = match listener.wait(Some(Instant::now() + FOLLOW_STOP_CHECK)) {
                        Ok(false) => continue,
                        Ok(true) => Ok(()),
                        Err(e) => Err(e),
                    };
                    let broken = word.is_err();
                    if sender.send(Raw::Store(word)).is_err() || broken {
                        return;
                    }
                }
            })
            .map_err(|e| StoreError::io("store follower thread", e))?;
        Ok(())
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Starts watching `dir` (once; later calls are no-ops). In `Auto` mode an event backend
    /// that refuses the folder (inotify limits, say) is replaced by polling.
    pub fn add(&mut self, dir: &Path, recursive: bool) -> Result<()> {
        if self.watched.contains(dir) {
            return Ok(());
        }
        let mode = if recursive {
            RecursiveMode::Recursive
        } else {
            RecursiveMode::NonRecursive
        };
        self.watcher
            .watch(dir, mode)
            .map_err(|e| LiveError::watch(dir, e))?;
        self.watched.insert(dir.to_path_buf());
        Ok(())
    }

    /// Like [`Watch::add`], but falls back to polling everything watched so far (and `dir`)
    /// when events cannot be set up for `dir`. Used in `Auto` mode.
    pub fn add_or_poll(&mut self, dir: &Path, recursive: bool, interval: Duration) -> Result<()> {
        match self.add(dir, recursive) {
            Ok(()) => Ok(()),
            Err(_) if self.backend == Backend::Events => {
                // The same channel, so stores this watch follows still reach it.
                let (watcher, backend) =
                    file_watcher(WatchMode::Poll(interval), dir, &self.sender)?;
                self.watcher = watcher;
                self.backend = backend;
                for watched in std::mem::take(&mut self.watched) {
                    self.add(&watched, recursive)?;
                }
                self.add(dir, recursive)
            }
            Err(e) => Err(e),
        }
    }

    /// Stops watching every folder (the watch can be given folders again). A waiter that got
    /// what it waited for calls this first: the kernel then retires its inotify watches while
    /// the waiter finishes its work, instead of making the process's exit wait for that.
    pub fn unwatch_all(&mut self) {
        for dir in std::mem::take(&mut self.watched) {
            let _ = self.watcher.unwatch(&dir);
        }
    }

    /// Waits until something changes or `deadline` passes (`None`: no deadline). Events that
    /// arrive together are returned together; a store's notification names no path (look at
    /// everything). A broken store listener is returned as its error.
    pub fn wait(&self, deadline: Option<Instant>) -> Result<Wake> {
        let first = match deadline {
            None => self.events.recv().map_err(|_| LiveError::WatchStopped)?,
            Some(deadline) => {
                let left = deadline.saturating_duration_since(Instant::now());
                match self.events.recv_timeout(left) {
                    Ok(event) => event,
                    Err(RecvTimeoutError::Timeout) => return Ok(Wake::Deadline),
                    Err(RecvTimeoutError::Disconnected) => return Err(LiveError::WatchStopped),
                }
            }
        };
        let mut paths = Vec::new();
        let mut everything = false;
        let mut take = |raw: Raw| -> Result<()> {
            match raw {
                Raw::Files(Ok(event)) if !event.paths.is_empty() => paths.extend(event.paths),
                // An error from the backend (a lost event queue, say) still means "look again".
                Raw::Files(_) | Raw::Store(Ok(())) => everything = true,
                Raw::Store(Err(e)) => return Err(e.into()),
            }
            Ok(())
        };
        take(first)?;
        while let Ok(more) = self.events.try_recv() {
            take(more)?;
        }
        if everything {
            paths.clear();
        }
        Ok(Wake::Changed(paths))
    }
}

/// The file watcher `mode` asks for, sending into `tx`, and its backend.
fn file_watcher(
    mode: WatchMode,
    probe: &Path,
    tx: &Sender<Raw>,
) -> Result<(Box<dyn Watcher + Send>, Backend)> {
    let events = || {
        RecommendedWatcher::new(Forward(tx.clone()), Config::default())
            .map_err(|e| LiveError::watch(probe, e))
    };
    Ok(match mode {
        WatchMode::Poll(interval) => (
            poll_watcher(tx, interval, probe)?,
            Backend::Poll { interval },
        ),
        WatchMode::Events => (Box::new(events()?), Backend::Events),
        WatchMode::Auto(interval) => {
            let watcher = if crate::fs_kind::delivers_no_events(probe) {
                None
            } else {
                events().ok()
            };
            match watcher {
                Some(watcher) => (Box::new(watcher), Backend::Events),
                None => (
                    poll_watcher(tx, interval, probe)?,
                    Backend::Poll { interval },
                ),
            }
        }
    })
}

fn poll_watcher(
    tx: &Sender<Raw>,
    interval: Duration,
    probe: &Path,
) -> Result<Box<dyn Watcher + Send>> {
    let config = Config::default()
        .with_poll_interval(interval)
        .with_compare_contents(false);
    let watcher =
        PollWatcher::new(Forward(tx.clone()), config).map_err(|e| LiveError::watch(probe, e))?;
    Ok(Box::new(watcher))
}

mod millis {
    use std::time::Duration;

    pub fn serialize<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(d.as_millis() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn watch_modes_parse_from_text() {
        assert_eq!("auto".parse(), Ok(WatchMode::default()));
        assert_eq!("events".parse(), Ok(WatchMode::Events));
        assert_eq!(
            "poll:25".parse(),
            Ok(WatchMode::Poll(Duration::from_millis(25)))
        );
        assert!("poll:0".parse::<WatchMode>().is_err());
        assert!("sometimes".parse::<WatchMode>().is_err());
    }

    fn wakes_on_a_new_file(mode: WatchMode) {
        let dir = tempfile::tempdir().unwrap();
        let mut watch = Watch::new(mode, dir.path()).unwrap();
        watch.add(dir.path(), false).unwrap();
        std::fs::write(dir.path().join("signal"), "done").unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        assert!(matches!(
            watch.wait(Some(deadline)).unwrap(),
            Wake::Changed(_)
        ));
    }

    #[test]
    fn the_event_backend_wakes_on_a_new_file() {
        wakes_on_a_new_file(WatchMode::Events);
    }

    #[test]
    fn the_poll_backend_wakes_on_a_new_file() {
        wakes_on_a_new_file(WatchMode::Poll(Duration::from_millis(20)));
    }

    /// A temporary file made and written wakes nobody; the file it is renamed over does.
    fn wakes_on_a_temp_file_only_at_its_rename(mode: WatchMode) {
        let dir = tempfile::tempdir().unwrap();
        let mut watch = Watch::new(mode, dir.path()).unwrap();
        watch.add(dir.path(), false).unwrap();
        let temp = dir
            .path()
            .join(format!(".tasks.json.1.0{}", baton_fs::TEMP_SUFFIX));
        let (board, after) = (dir.path().join("tasks.json"), dir.path().join("after"));
        std::fs::write(&temp, "{}").unwrap();
        std::fs::write(&after, "written after the temporary file").unwrap();
        // Events reach the watch in order: every one of the temporary file's comes before the
        // other file's.
        let seen = wait_for(&watch, &after);
        assert!(!seen.contains(&temp), "{seen:?}");
        std::fs::rename(&temp, &board).unwrap();
        wait_for(&watch, &board);
    }

    /// The paths of every wake until one names `path`.
    fn wait_for(watch: &Watch, path: &Path) -> Vec<PathBuf> {
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut seen = Vec::new();
        while !seen
            .iter()
            .any(|p: &PathBuf| p.ends_with(path.file_name().unwrap()))
        {
            match watch.wait(Some(deadline)).unwrap() {
                Wake::Changed(paths) => {
                    assert!(!paths.is_empty(), "a wake that names no path");
                    seen.extend(paths);
                }
                Wake::Deadline => panic!("no wake for {} (saw {seen:?})", path.display()),
            }
        }
        seen
    }

    #[test]
    fn the_event_backend_wakes_on_a_temp_file_only_at_its_rename() {
        wakes_on_a_temp_file_only_at_its_rename(WatchMode::Events);
    }

    #[test]
    fn the_poll_backend_wakes_on_a_temp_file_only_at_its_rename() {
        wakes_on_a_temp_file_only_at_its_rename(WatchMode::Poll(Duration::from_millis(20)));
    }

    #[test]
    fn a_quiet_folder_reaches_the_deadline() {
        let dir = tempfile::tempdir().unwrap();
        let mut watch = Watch::new(WatchMode::Events, dir.path()).unwrap();
        watch.add(dir.path(), false).unwrap();
        let deadline = Instant::now() + Duration::from_millis(30);
        assert_eq!(watch.wait(Some(deadline)).unwrap(), Wake::Deadline);
    }
}
