//! Keeping an agent's leases while its process lives. A lease is renewed by heartbeats; an
//! agent busy in one long step (a twenty-minute build, a slow test run) sends none, and loses
//! its task to the next claimer while it is still working on it. The Claude Code hooks start
//! this for a worker: it renews the agent's leases every third of a lease for as long as the
//! agent's process is alive, and ends when that process has gone, so a dead agent's leases
//! lapse exactly as before.
//!
//! One keeper per agent and project: it holds `.coordination/keepalive/AGENT.lock` while it
//! runs, so starting another (every hook may try) ends at once.

use std::fs;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use baton_core::names::validate_agent_id;
use baton_core::{Layout, StoreError, TaskStore};
use baton_fs::FileLock;
use baton_fs::pid_alive;

use crate::error::Result;

/// How often the keeper looks whether the agent's process is still there.
const LOOK_EVERY: Duration = Duration::from_millis(100);

/// The lock file a keeper of `agent` holds while it runs.
pub fn keeper_lock(layout: &Layout, agent: &str) -> Result<PathBuf> {
    validate_agent_id(agent)?;
    Ok(layout
        .root()
        .join("keepalive")
        .join(format!("{agent}.lock")))
}

/// Whether a keeper of `agent` is running (its lock is held).
pub fn keeper_running(layout: &Layout, agent: &str) -> Result<bool> {
    let path = keeper_lock(layout, agent)?;
    Ok(path.exists() && FileLock::try_exclusive(&path)?.is_none())
}

/// Why a keeper ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeeperEnd {
    /// The agent's process is gone.
    AgentGone,
    /// Another keeper of this agent runs already.
    AlreadyKept,
    /// Asked to stop.
    Stopped,
}

/// Renews `agent`'s leases in `store` every third of a lease while process `pid` is alive.
/// A failed renewal is tried again at the next tick (a database restarting must not end it).
pub fn keep_alive(
    store: &dyn TaskStore,
    layout: &Layout,
    agent: &str,
    pid: u32,
    stop: &AtomicBool,
) -> Result<KeeperEnd> {
    let path = keeper_lock(layout, agent)?;
    let dir = path.parent().expect("a lock file has a folder");
    fs::create_dir_all(dir).map_err(|e| StoreError::io(dir, e))?;
    let Some(_held) = FileLock::try_exclusive(&path)? else {
        return Ok(KeeperEnd::AlreadyKept);
    };
    let every = (store.lease() / 3).clamp(Duration::from_millis(100), Duration::from_secs(60));
    let mut next = Instant::now();
    loop {
        if stop.load(Ordering::Relaxed) {
            return Ok(KeeperEnd::Stopped);
        }
        if !pid_alive(pid) {
            return Ok(KeeperEnd::AgentGone);
        }
        if Instant::now() >= next {
            let _ = store.heartbeat(agent);
            next = Instant::now() + every;
        }
        std::thread::sleep(LOOK_EVERY.min(next.saturating_duration_since(Instant::now())));
    }
}
