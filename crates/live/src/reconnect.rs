//! Riding out a store that went away (a database restarting, a network down): the operation
//! is tried again after a pause that grows from 100 ms to 2 s, for as long as the caller
//! allows. One back-off for every waiter and worker, so they all reconnect the same way.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use baton_core::StoreError;

use crate::error::LiveError;

/// The first pause before trying a store that went away again, and the longest.
const FIRST_PAUSE: Duration = Duration::from_millis(100);
const LONGEST_PAUSE: Duration = Duration::from_secs(2);

/// An error that says the store could not be reached (and may be reachable again).
pub trait Unreachable {
    fn unreachable(&self) -> bool;
}

impl Unreachable for StoreError {
    fn unreachable(&self) -> bool {
        matches!(self, StoreError::Database { .. })
    }
}

impl Unreachable for LiveError {
    fn unreachable(&self) -> bool {
        matches!(self, LiveError::Store(e) if e.unreachable())
    }
}

/// Runs `op`, and runs it again after a growing pause while it fails because the store cannot
/// be reached; gives up (returning that failure) when the next pause would end after
/// `give_up`, or once `stop` is set.
pub fn persist<T, E: Unreachable>(
    give_up: Option<Instant>,
    stop: Option<&AtomicBool>,
    mut op: impl FnMut() -> Result<T, E>,
) -> Result<T, E> {
    let mut pause = FIRST_PAUSE;
    loop {
        match op() {
            Err(e)
                if e.unreachable()
                    && give_up.is_none_or(|at| Instant::now() + pause < at)
                    && !stop.is_some_and(|s| s.load(Ordering::Relaxed)) =>
            {
                std::thread::sleep(pause); // back-off while the store is away
                pause = (pause * 2).min(LONGEST_PAUSE);
            }
            outcome => return outcome,
        }
    }
}
