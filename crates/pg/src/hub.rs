//! One listening connection per channel for every waiter of a process. A supervisor runs a
//! hundred workers on one [`PgStore`]; each waiting for a claim used to hold its own `LISTEN`
//! connection, so two supervisors of a hundred workers needed more connections than a
//! PostgreSQL server allows by default (100). A [`Hub`] holds the one connection: a thread
//! reads its notifications and bumps a generation number; each waiter's [`HubListener`] sleeps
//! on a condition variable until the generation passes the one it saw. A waiter that joins is
//! armed at once (the hub listens before its first waiter looks at the queue), so no change
//! between a look and a wait is missed. A lost connection ends the hub: every waiter gets the
//! error, and the next listen starts a new hub. A hub left without waiters closes its
//! connection within [`IDLE_CHECK`].

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::{Duration, Instant};

use baton_core::{Listener, StoreError};

/// How often a hub's thread looks whether anyone still waits on it.
const IDLE_CHECK: Duration = Duration::from_secs(10);

/// The hubs of one store, by channel.
#[derive(Default)]
pub(crate) struct Hubs {
    by_channel: Mutex<HashMap<String, Weak<Hub>>>,
}

struct Hub {
    state: Mutex<HubState>,
    changed: Condvar,
}

#[derive(Default)]
struct HubState {
    /// Notifications for the project so far.
    generation: u64,
    /// The hub ended, and why (its connection lost, or left without waiters).
    ended: Option<String>,
}

impl Hubs {
    /// A listener on `channel`, sharing the hub's connection; `open` makes the connection's
    /// own listener (already listening) when there is no live hub.
    pub(crate) fn listen(
        &self,
        channel: &str,
        open: impl FnOnce() -> baton_core::Result<Box<dyn Listener>>,
    ) -> baton_core::Result<Box<dyn Listener>> {
        let mut hubs = self.by_channel.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(hub) = hubs.get(channel).and_then(Weak::upgrade) {
            let state = hub.state.lock().unwrap_or_else(|e| e.into_inner());
            if state.ended.is_none() {
                let seen = state.generation;
                drop(state);
                return Ok(Box::new(HubListener { hub, seen }));
            }
        }
        let connection = open()?;
        let hub = Arc::new(Hub {
            state: Mutex::new(HubState::default()),
            changed: Condvar::new(),
        });
        hubs.insert(channel.to_string(), Arc::downgrade(&hub));
        let reader = hub.clone();
        std::thread::Builder::new()
            .name(format!("baton-listen-{channel}"))
            .spawn(move || read_notifications(reader, connection))
            .map_err(|e| StoreError::Database {
                message: format!("cannot start the thread that listens for changes: {e}"),
            })?;
        Ok(Box::new(HubListener { hub, seen: 0 }))
    }
}

/// The hub's thread: every notification for the project wakes the waiters; it ends when the
/// connection is lost or nobody waits any more.
fn read_notifications(hub: Arc<Hub>, mut connection: Box<dyn Listener>) {
    loop {
        let outcome = connection.wait(Some(Instant::now() + IDLE_CHECK));
        let mut state = hub.state.lock().unwrap_or_else(|e| e.into_inner());
        match outcome {
            Ok(true) => {
                state.generation += 1;
                hub.changed.notify_all();
            }
            // Only this thread holds the hub: its waiters are gone.
            Ok(false) if Arc::strong_count(&hub) == 1 => {
                state.ended = Some("the listening connection was closed: nobody waited".into());
                return;
            }
            Ok(false) => {}
            Err(e) => {
                state.ended = Some(e.to_string());
                hub.changed.notify_all();
                return;
            }
        }
    }
}

/// One waiter's view of a hub: the generation it has seen.
struct HubListener {
    hub: Arc<Hub>,
    seen: u64,
}

impl Listener for HubListener {
    fn wait(&mut self, until: Option<Instant>) -> baton_core::Result<bool> {
        let mut state = self.hub.state.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if state.generation > self.seen {
                self.seen = state.generation;
                return Ok(true);
            }
            if let Some(why) = &state.ended {
                return Err(StoreError::Database {
                    message: why.clone(),
                });
            }
            state = match until {
                None => self
                    .hub
                    .changed
                    .wait(state)
                    .unwrap_or_else(|e| e.into_inner()),
                Some(at) => {
                    let left = at.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Ok(false);
                    }
                    self.hub
                        .changed
                        .wait_timeout(state, left)
                        .unwrap_or_else(|e| e.into_inner())
                        .0
                }
            };
        }
    }
}
