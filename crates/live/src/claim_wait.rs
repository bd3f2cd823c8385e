//! Claiming the next task as soon as one becomes ready, instead of the source design's 1–2 s
//! polling loop. A task becomes ready when `tasks.json` changes (a task added, a dependency
//! done, a task released or reset) or when a held task's lease runs out; the waiter sleeps on
//! exactly those two things: the watch on the folder, and the earliest lease expiry.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use baton_store::{Claim, Outlook, Project, Timestamp};
use serde::Serialize;

use crate::error::Result;
use crate::watcher::{Backend, Watch, WatchMode};

/// How often a wait checks whether it was asked to stop (Ctrl-C), at most.
pub const STOP_CHECK_INTERVAL: Duration = Duration::from_millis(100);

/// How a waiting claim ended.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum ClaimOutcome {
    Claimed {
        claim: Box<Claim>,
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
    /// Return [`ClaimOutcome::Drained`] when no work can become ready, rather than waiting
    /// for the leader to add some.
    pub stop_when_drained: bool,
    pub mode: WatchMode,
    /// Set from another thread (a Ctrl-C handler) to end the wait.
    pub stop: Option<&'a AtomicBool>,
}

/// Claims the best ready task for `agent`, waiting until one is ready. `armed` is called once
/// the watch is in place, with the backend in use.
pub fn claim_when_ready(
    project: &Project,
    agent: &str,
    wait: ClaimWait<'_>,
    armed: impl FnOnce(Backend),
) -> Result<ClaimOutcome> {
    baton_store::names::validate_agent_id(agent)?;
    let deadline = wait.timeout.map(|t| Instant::now() + t);
    let root = project.layout().root();
    let mut watch = Watch::new(wait.mode, root)?;
    let interval = match wait.mode {
        WatchMode::Auto(i) | WatchMode::Poll(i) => i,
        WatchMode::Events => crate::watcher::DEFAULT_POLL_INTERVAL,
    };
    watch.add_or_poll(root, false, interval)?;
    armed(watch.backend());

    loop {
        if wait.stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
            return Ok(ClaimOutcome::Stopped);
        }
        // Look without the lock first: claiming writes a log line, and a waiter that claimed
        // on every wake-up would fill its log with "nothing ready".
        let now = Timestamp::now();
        let next_expiry = match project.load()?.outlook(now, project.lease()) {
            Outlook::Claimable => {
                // Retire the watch before the claim's write (see `Watch::unwatch_all`).
                watch.unwatch_all();
                if let Some(claim) = project.claim(agent)? {
                    return Ok(ClaimOutcome::Claimed {
                        claim: Box::new(claim),
                    });
                }
                // Another worker was faster: watch again, then look again (in that order,
                // so nothing written in between is missed).
                watch.add_or_poll(root, false, interval)?;
                continue;
            }
            Outlook::Drained if wait.stop_when_drained => return Ok(ClaimOutcome::Drained),
            Outlook::Drained => None,
            Outlook::Waiting { next_lease_expiry } => next_lease_expiry,
        };
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return Ok(ClaimOutcome::TimedOut);
        }
        let mut wake_at = deadline;
        if let Some(expiry) = next_expiry {
            // A millisecond late, so the lease has surely passed when we look.
            let at = Instant::now() + expiry.remaining(now) + Duration::from_millis(1);
            wake_at = Some(wake_at.map_or(at, |d| d.min(at)));
        }
        if wait.stop.is_some() {
            let at = Instant::now() + STOP_CHECK_INTERVAL;
            wake_at = Some(wake_at.map_or(at, |d| d.min(at)));
        }
        watch.wait(wake_at)?;
    }
}
