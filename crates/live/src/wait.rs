//! Waiting for signals: the reader's side of the source design's signal files, without its
//! two problems. A waiter wakes within milliseconds of the write (file-system events, not a
//! polling loop), and a waiter tied to its writer's liveness returns when the writer is gone
//! instead of waiting forever.
//!
//! The order of operations makes the wait race-free: watch the folders (or listen to the
//! database) first, then look at the signals, then sleep until the watch fires; a write that
//! lands in between still wakes it. Named signals in a database wake the waiter through its
//! notifications; signals at a path are files on this machine on every store.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use baton_core::{Changes, Signal, SignalStore, SignalTarget, StoreError, TaskStore, Timestamp};
use serde::Serialize;

use crate::error::Result;
use crate::liveness::{agent_deadline, pid_alive};
use crate::reconnect::persist;
use crate::watcher::{Backend, Watch, WatchMode};

/// How often a writer's process is checked when the wait is tied to it: processes send no
/// file-system events when they die.
pub const PID_CHECK_INTERVAL: Duration = Duration::from_millis(50);

/// Whether one signal is enough or all are needed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Quorum {
    Any,
    All,
}

/// What to wait for, and for how long.
#[derive(Debug, Clone)]
pub struct SignalWait {
    pub targets: Vec<SignalTarget>,
    pub quorum: Quorum,
    /// `None`: no time limit (only a signal or a writer's death ends the wait).
    pub timeout: Option<Duration>,
    /// The wait ends when any of these processes is gone.
    pub while_pids: Vec<u32>,
    /// The wait ends when any of these agents has shown no sign of life in the task store for
    /// longer than the project's lease.
    pub while_agents: Vec<String>,
    pub mode: WatchMode,
}

/// How a wait ended. Signals present at the end are listed in every case.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum WaitOutcome {
    /// Enough signals are present.
    Signalled {
        signals: Vec<Signal>,
        missing: Vec<String>,
    },
    /// The time limit passed first.
    TimedOut {
        signals: Vec<Signal>,
        missing: Vec<String>,
    },
    /// A writer the wait was tied to is gone, and the signals are not all there.
    WriterGone {
        writer: String,
        signals: Vec<Signal>,
        missing: Vec<String>,
    },
}

/// Waits as `wait` says, on the project's `signals` (and its `tasks`, for the heartbeats of
/// agents the wait is tied to). `armed` is called once the wait is in place (and before the
/// first look), with what it sleeps on, so callers can tell a writer it may go ahead.
///
/// A store that goes away while the wait sleeps (a database restarting) is waited for with
/// back-off; the wait then listens again and looks again, so a signal written meanwhile is
/// not missed.
pub fn wait_for_signals(
    signals: &dyn SignalStore,
    tasks: &dyn TaskStore,
    wait: &SignalWait,
    armed: impl FnOnce(Backend),
) -> Result<WaitOutcome> {
    if wait.targets.is_empty() {
        return Err(StoreError::InvalidInput {
            field: "signals",
            reason: "name at least one signal (or --path)".into(),
        }
        .into());
    }
    if tasks.shared_across_machines()
        && let Some(pid) = wait.while_pids.iter().find(|pid| !pid_alive(**pid))
    {
        return Err(StoreError::InvalidInput {
            field: "while_pid",
            reason: format!(
                "process {pid} is not running on this machine, and on a project kept in a \
                 database its writer may be on another machine, where this waiter cannot see \
                 it; tie the wait to the writer agent's heartbeat instead (--while-agent NAME)"
            ),
        }
        .into());
    }
    let deadline = wait.timeout.map(|t| Instant::now() + t);
    let mut armed = Some(armed);
    let mut since = None;
    persist(deadline, None, || {
        wait_once(signals, tasks, wait, deadline, &mut since, &mut armed)
    })
}

/// One listener's share of [`wait_for_signals`]: returns how the wait ended, or the error
/// that broke the listener. `since` is when the wait began, by the store's clock.
fn wait_once(
    signals: &dyn SignalStore,
    tasks: &dyn TaskStore,
    wait: &SignalWait,
    deadline: Option<Instant>,
    since: &mut Option<Timestamp>,
    armed: &mut Option<impl FnOnce(Backend)>,
) -> Result<WaitOutcome> {
    let files: Vec<PathBuf> = wait
        .targets
        .iter()
        .filter_map(|target| {
            let file = signals.signal_file(target)?;
            // A named signal's run folder is made now, so the watch is on it and not on all
            // of `runs/`.
            if let (true, Some(dir)) = (target.is_named(), file.parent()) {
                let _ = std::fs::create_dir_all(dir);
            }
            Some(file)
        })
        .collect();
    let probe = files
        .first()
        .map(|f| nearest_existing_parent(f))
        .or_else(|| match tasks.changes() {
            Changes::Files(root) => Some(root),
            Changes::Notifications => None,
        })
        .unwrap_or_else(std::env::temp_dir);
    let mut watch = Watch::new(wait.mode, &probe)?;
    let interval = wait.mode.poll_interval();
    let listener = signals.listen_for_signals()?;
    let notified = listener.is_some();
    if let Some(listener) = listener {
        watch.follow(listener)?;
    }
    if let (false, Changes::Files(root)) = (wait.while_agents.is_empty(), tasks.changes()) {
        // Heartbeats land in the store's files; watching them lets a renewed lease push the
        // deadline on. (A store that notifies sends nothing for heartbeats: the deadline is
        // looked at again when it comes.)
        watch.add_or_poll(&root, false, interval)?;
    }
    watch_deepest_folders(&mut watch, &files, interval)?;
    if let Some(armed) = armed.take() {
        armed(if notified {
            Backend::Notifications
        } else {
            watch.backend()
        });
    }

    loop {
        // Folders created since the last look (a --path whose parents did not exist yet).
        watch_deepest_folders(&mut watch, &files, interval)?;
        let (found, missing) = look(signals, wait)?;
        let enough = match wait.quorum {
            Quorum::Any => !found.is_empty(),
            Quorum::All => missing.is_empty(),
        };
        if enough {
            watch.unwatch_all();
            return Ok(WaitOutcome::Signalled {
                signals: found,
                missing,
            });
        }
        if let Some(pid) = wait.while_pids.iter().find(|pid| !pid_alive(**pid)) {
            return Ok(WaitOutcome::WriterGone {
                writer: format!("process {pid}"),
                signals: found,
                missing,
            });
        }
        let mut wake_at = deadline;
        for agent in &wait.while_agents {
            let (gone_at, now) = agent_deadline(tasks, agent, since)?;
            if gone_at <= now {
                return Ok(WaitOutcome::WriterGone {
                    writer: format!("agent {agent} (no sign of life in the task store)"),
                    signals: found,
                    missing,
                });
            }
            wake_at = earliest(wake_at, Some(Instant::now() + gone_at.remaining(now)));
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return Ok(WaitOutcome::TimedOut {
                signals: found,
                missing,
            });
        }
        if !wait.while_pids.is_empty() {
            wake_at = earliest(wake_at, Some(Instant::now() + PID_CHECK_INTERVAL));
        }
        watch.wait(wake_at)?;
    }
}

/// The signals present and the labels of those missing, in the order asked.
fn look(signals: &dyn SignalStore, wait: &SignalWait) -> Result<(Vec<Signal>, Vec<String>)> {
    let mut found = Vec::new();
    let mut missing = Vec::new();
    for target in &wait.targets {
        match signals.signal(target)? {
            Some(signal) => found.push(signal),
            None => missing.push(target.label()),
        }
    }
    Ok((found, missing))
}

fn earliest(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Watches, for each signal, its folder or the nearest folder above it that exists, until
/// that folder stays the same after its watch is in place. A folder created between finding
/// the nearest one and watching it sends no event to anyone; looking again closes that gap.
fn watch_deepest_folders(watch: &mut Watch, paths: &[PathBuf], interval: Duration) -> Result<()> {
    for path in paths {
        let mut dir = nearest_existing_parent(path);
        loop {
            watch.add_or_poll(&dir, false, interval)?;
            let deeper = nearest_existing_parent(path);
            if deeper == dir {
                break;
            }
            dir = deeper;
        }
    }
    Ok(())
}

/// The signal's folder, or the nearest folder above it that exists.
fn nearest_existing_parent(path: &Path) -> PathBuf {
    path.ancestors()
        .skip(1)
        .find(|dir| dir.is_dir())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("/"))
}
