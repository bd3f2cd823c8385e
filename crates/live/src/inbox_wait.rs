//! Waiting on the inbox: an agent's question until the lead answers it, the lead until a
//! question or a message arrives. Nothing polls: the waiter watches the inbox's folder on a
//! folder project, or listens to the database's notifications, and looks again only when
//! something changed. As with signals, the watch is in place before the first look, so a
//! change that lands in between still wakes it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use baton_core::{Changes, TaskStore};

use crate::error::Result;
use crate::reconnect::persist;
use crate::watcher::{Backend, Watch, WatchMode};

/// How often a wait that may be stopped from outside looks at its stop flag.
const STOP_CHECK: Duration = Duration::from_millis(200);

/// Waits until `look` finds something (`Some`), until `deadline` (`None`), or until `stop` is
/// set (`None`). `folders` are the inbox folders (`inbox/questions`, …) whose documents `look`
/// reads; a project that notifies by itself wakes the waiter through its notifications
/// instead. A store that goes away meanwhile is waited for, and looked at again once back.
/// `armed` is called once, when the watch is in place (before the first look), with what it
/// sleeps on.
pub fn wait_for_inbox<T>(
    tasks: &dyn TaskStore,
    folders: &[&str],
    deadline: Option<Instant>,
    mode: WatchMode,
    stop: Option<&AtomicBool>,
    armed: impl FnOnce(Backend),
    mut look: impl FnMut() -> baton_core::Result<Option<T>>,
) -> Result<Option<T>> {
    let mut armed = Some(armed);
    persist(deadline, stop, || {
        let watch = match tasks.changes() {
            Changes::Files(root) => {
                let interval = mode.poll_interval();
                let mut watch = Watch::new(mode, &root)?;
                for folder in folders {
                    let dir = root.join(folder);
                    std::fs::create_dir_all(&dir)
                        .map_err(|e| baton_core::StoreError::io(&dir, e))?;
                    watch.add_or_poll(&dir, false, interval)?;
                }
                watch
            }
            Changes::Notifications => {
                let watch = Watch::new(mode, &std::env::temp_dir())?;
                if let Some(listener) = tasks.listen_for_changes()? {
                    watch.follow(listener)?;
                }
                watch
            }
        };
        if let Some(armed) = armed.take() {
            armed(match tasks.changes() {
                Changes::Files(_) => watch.backend(),
                Changes::Notifications => Backend::Notifications,
            });
        }
        loop {
            if let Some(found) = look()? {
                return Ok(Some(found));
            }
            let now = Instant::now();
            if deadline.is_some_and(|d| now >= d) || stop.is_some_and(|s| s.load(Ordering::Relaxed))
            {
                return Ok(None);
            }
            let wake_at = match (deadline, stop) {
                (d, Some(_)) => Some(d.map_or(now + STOP_CHECK, |d| d.min(now + STOP_CHECK))),
                (d, None) => d,
            };
            watch.wait(wake_at)?;
        }
    })
}
