//! Is the writer still there? A reader waiting for a signal can tie its wait to the writer's
//! process (`--while-pid`) or to the writer agent's heartbeat in the task store
//! (`--while-agent`), so that a writer that crashed ends the wait instead of leaving the reader
//! waiting forever, the source design's open problem.

use baton_core::{TaskStore, Timestamp};

pub use baton_fs::pid_alive;

/// When agent `agent` counts as gone, with the store's time now: its last sign of life in the
/// task store (or `since`, when the wait began, if later or if it never showed one) plus the
/// lease, all by the store's clock. `since` is set from the store's time on the first call.
pub fn agent_deadline(
    tasks: &dyn TaskStore,
    agent: &str,
    since: &mut Option<Timestamp>,
) -> baton_core::Result<(Timestamp, Timestamp)> {
    let (seen, now) = tasks.last_seen(agent)?;
    let since = *since.get_or_insert(now);
    let last_seen = seen.map_or(since, |seen| seen.max(since));
    Ok((last_seen.after(tasks.lease()), now))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn this_process_is_alive_and_a_reaped_child_is_not() {
        assert!(pid_alive(std::process::id()));
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert!(!pid_alive(pid));
        assert!(!pid_alive(0));
        assert!(!pid_alive(u32::MAX));
    }

    #[test]
    fn an_exited_but_unreaped_child_counts_as_gone() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        // Wait for it to exit without reaping it: retry until /proc shows the zombie.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while pid_alive(pid) {
            assert!(std::time::Instant::now() < deadline, "child never exited");
            std::thread::yield_now();
        }
        child.wait().unwrap();
    }
}
