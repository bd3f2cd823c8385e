//! Claiming the next task as soon as one becomes ready, instead of the source design's 1–2 s
//! polling loop. A task becomes ready when the store changes (a task added, a dependency done,
//! a task released or reset) or when a held task's lease runs out; the waiter sleeps on exactly
//! those two things: the store's change signal (the watch on the folder, or a database's
//! notifications) and the earliest lease expiry.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use std::path::PathBuf;

use baton_core::{Changes, ClaimRequest, Claimed, Listener, Outlook, StoreError, TaskStore};
use serde::Serialize;

use crate::error::Result;
use crate::reconnect::persist;
use crate::watcher::{Backend, Watch, WatchMode};

/// How often a wait checks whether it was asked to stop (Ctrl-C), at most.
pub const STOP_CHECK_INTERVAL: Duration = Duration::from_millis(100);

/// How a waiting claim ended (the catalogue's answer to a claim is `baton_api`'s `ClaimOutcome`).
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum WaitedClaim {
    Claimed {
        claim: Box<Claimed>,
    },
    /// The time limit passed with nothing ready.
    TimedOut,
    /// Nothing can become ready without new tasks (only when asked to stop on that).
    Drained,
    /// The caller asked to stop.
    Stopped,
}

/// Options of a waiting claim.
#[derive(Debug, Clone, Copy)]
pub struct ClaimWait<'a> {
    pub timeout: Option<Duration>,
    /// Return [`WaitedClaim::Drained`] when no work can become ready, rather than waiting
    /// for the leader to add some.
    pub stop_when_drained: bool,
    pub mode: WatchMode,
    /// Set from another thread (a Ctrl-C handler) to end the wait.
    pub stop: Option<&'a AtomicBool>,
}

/// Claims the best ready task for `agent` in `store`, waiting until one is ready. `armed` is
/// called once the wait is in place and nothing was ready, with what it waits on.
///
/// The waiter sleeps on what can make a task ready: a change to the store (the folder's
/// files, watched; a database's notifications) and the earliest lease expiry, by the store's
/// clock. A store whose connection drops (a database restarting) is waited for with back-off,
/// and the wait carries on.
pub fn claim_when_ready(
    store: &dyn TaskStore,
    agent: &str,
    wait: ClaimWait<'_>,
    armed: impl FnOnce(Backend),
) -> Result<WaitedClaim> {
    baton_core::names::validate_agent_id(agent)?;
    let deadline = wait.timeout.map(|t| Instant::now() + t);
    let mut armed = Some(armed);
    // The store going away (a restart, a dropped network) does not end the wait: listen and
    // look again once it is back.
    persist(deadline, wait.stop, || {
        wait_once(store, agent, &wait, deadline, &mut armed)
    })
}

/// Claims the best ready task for `agent`, waiting at most `timeout` (forever without one) for
/// one to be ready: `claim --wait`. `None` when the time ran out.
pub fn claim_within(
    store: &dyn TaskStore,
    agent: &str,
    timeout: Option<Duration>,
    mode: WatchMode,
    armed: impl FnOnce(Backend),
) -> Result<Option<Claimed>> {
    let wait = ClaimWait {
        timeout,
        stop_when_drained: false,
        mode,
        stop: None,
    };
    Ok(match claim_when_ready(store, agent, wait, armed)? {
        WaitedClaim::Claimed { claim } => Some(*claim),
        _ => None,
    })
}

/// What a waiting claim sleeps on.
enum Waker {
    /// The folder's files, watched.
    Files {
        watch: Watch,
        root: PathBuf,
        interval: Duration,
    },
    /// The store's own notifications.
    Store(Box<dyn Listener>),
}

impl Waker {
    fn new(store: &dyn TaskStore, mode: WatchMode) -> Result<Waker> {
        if let Some(listener) = store.listen()? {
            return Ok(Waker::Store(listener));
        }
        let Changes::Files(root) = store.changes() else {
            return Err(StoreError::InvalidInput {
                field: "store",
                reason: "it says it notifies, but gave no listener".into(),
            }
            .into());
        };
        let mut watch = Watch::new(mode, &root)?;
        let interval = mode.poll_interval();
        watch.add_or_poll(&root, false, interval)?;
        Ok(Waker::Files {
            watch,
            root,
            interval,
        })
    }

    fn backend(&self) -> Backend {
        match self {
            Waker::Files { watch, .. } => watch.backend(),
            Waker::Store(_) => Backend::Notifications,
        }
    }

    /// Before a claim's write: retire the folder's watch (see `Watch::unwatch_all`).
    fn pause(&mut self) {
        if let Waker::Files { watch, .. } = self {
            watch.unwatch_all();
        }
    }

    /// After a claim that got nothing: watch again, before looking again, so nothing written
    /// in between is missed.
    fn resume(&mut self) -> Result<()> {
        if let Waker::Files {
            watch,
            root,
            interval,
        } = self
        {
            watch.add_or_poll(root, false, *interval)?;
        }
        Ok(())
    }

    fn wait(&mut self, until: Option<Instant>) -> Result<()> {
        match self {
            Waker::Files { watch, .. } => watch.wait(until).map(drop),
            Waker::Store(listener) => Ok(listener.wait(until).map(drop)?),
        }
    }
}

/// One waker's share of [`claim_when_ready`]: returns when a task was claimed or the wait
/// ended, or with the error that broke the waker.
fn wait_once(
    store: &dyn TaskStore,
    agent: &str,
    wait: &ClaimWait<'_>,
    deadline: Option<Instant>,
    armed: &mut Option<impl FnOnce(Backend)>,
) -> Result<WaitedClaim> {
    // The waker is set up only when there is something to wait for (a worker that finds work
    // at once costs the store no listening connection), and then the queue is looked at once
    // more before sleeping: a task made ready in between is either seen then or wakes it.
    let mut waker: Option<Waker> = None;
    loop {
        if wait.stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
            return Ok(WaitedClaim::Stopped);
        }
        // Look before claiming: a claim is journaled, and a waiter that claimed on every
        // wake-up would fill its log with "nothing ready".
        let (outlook, now) = store.outlook(agent)?;
        let next_expiry = match outlook {
            Outlook::Claimable => {
                if let Some(waker) = &mut waker {
                    waker.pause();
                }
                if let Some(claim) = store.claim(&ClaimRequest::next(agent))? {
                    return Ok(WaitedClaim::Claimed {
                        claim: Box::new(claim),
                    });
                }
                // Another worker was faster.
                if let Some(waker) = &mut waker {
                    waker.resume()?;
                }
                continue;
            }
            Outlook::Drained if wait.stop_when_drained => return Ok(WaitedClaim::Drained),
            Outlook::Drained => None,
            Outlook::Waiting { next_lease_expiry } => next_lease_expiry,
        };
        let Some(waker) = &mut waker else {
            waker = Some(Waker::new(store, wait.mode)?);
            continue;
        };
        if let Some(armed) = armed.take() {
            armed(waker.backend());
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return Ok(WaitedClaim::TimedOut);
        }
        let mut wake_at = deadline;
        if let Some(expiry) = next_expiry {
            // A millisecond late, so the lease has surely passed when we look; measured on
            // the store's clock (`now` is its time), so a skewed local clock does not matter.
            let at = Instant::now() + expiry.remaining(now) + Duration::from_millis(1);
            wake_at = Some(wake_at.map_or(at, |d| d.min(at)));
        }
        if wait.stop.is_some() {
            let at = Instant::now() + STOP_CHECK_INTERVAL;
            wake_at = Some(wake_at.map_or(at, |d| d.min(at)));
        }
        waker.wait(wake_at)?;
    }
}
