//! A worker's changes to the task it holds (start, complete, fail, release), made so that a
//! store that went away for a while (a database restarting, a network down) does not cost the
//! task: the change is tried again for up to [`PERSIST_FOR`], and a change whose connection
//! broke while it committed, refused when tried again, is looked up to see if it landed.

use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use baton_core::{Result as StoreResult, StoreError, Task, TaskStatus, TaskStore};
use baton_live::reconnect::persist;

/// How long a worker keeps trying to reach a store that went away before it gives up on a
/// change.
pub const PERSIST_FOR: Duration = Duration::from_secs(60);

/// Runs a change of task `id` (`op`), riding out an unreachable store (not once `stop` is
/// set). When the retry of a change whose connection broke is refused, the task is looked
/// up, and one that `landed` says is as the change left it counts as changed.
pub(crate) fn change_through_outage(
    store: &dyn TaskStore,
    id: &str,
    stop: &AtomicBool,
    landed: impl Fn(&Task) -> bool,
    mut op: impl FnMut() -> StoreResult<Task>,
) -> StoreResult<Task> {
    let mut interrupted = false;
    let outcome = persist(Some(Instant::now() + PERSIST_FOR), Some(stop), || {
        let outcome = op();
        interrupted |= matches!(outcome, Err(StoreError::Database { .. }));
        outcome
    });
    match outcome {
        Err(refused) if interrupted => store
            .task(id)
            .ok()
            .flatten()
            .filter(|t| landed(t))
            .ok_or(refused),
        outcome => outcome,
    }
}

/// A start by `agent` landed: the task is in progress in its name.
pub(crate) fn started(agent: &str) -> impl Fn(&Task) -> bool + '_ {
    move |t| t.status == TaskStatus::InProgress && t.claimed_by.as_deref() == Some(agent)
}

/// A completion or failure by `agent` landed: the task is finished in its name.
pub(crate) fn reported_by(agent: &str) -> impl Fn(&Task) -> bool + '_ {
    move |t| t.status.is_final() && t.claimed_by.as_deref() == Some(agent)
}

/// A release by `agent` landed: it no longer holds the task.
pub(crate) fn released(agent: &str) -> impl Fn(&Task) -> bool + '_ {
    move |t| t.claimed_by.as_deref() != Some(agent)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    use baton_core::{ClaimRequest, Completion};
    use baton_folder::FolderStore;

    fn store_with_a_started_task() -> (tempfile::TempDir, FolderStore, String) {
        let dir = tempfile::tempdir().unwrap();
        let store = FolderStore::init(dir.path(), "settle", None).unwrap();
        let new = baton_core::NewTask {
            description: "a task".into(),
            ..Default::default()
        };
        let id = store.add_task(new).unwrap().id;
        store.claim(&ClaimRequest::next("w1")).unwrap().unwrap();
        store.start("w1", &id).unwrap();
        (dir, store, id)
    }

    fn done() -> Completion {
        Completion {
            output: "it is done".into(),
            ..Completion::default()
        }
    }

    fn gone() -> StoreError {
        StoreError::Database {
            message: "the connection broke".into(),
        }
    }

    #[test]
    fn a_change_whose_connection_broke_but_landed_counts_as_made() {
        let (_dir, store, id) = store_with_a_started_task();
        let tries = Cell::new(0);
        let stop = AtomicBool::new(false);
        let done = change_through_outage(&store, &id, &stop, reported_by("w1"), || {
            tries.set(tries.get() + 1);
            match tries.get() {
                // It landed, and then its connection broke before the answer came.
                1 => {
                    store.complete("w1", &id, done()).unwrap();
                    Err(gone())
                }
                // Tried again, it is refused: the task is done already.
                _ => store.complete("w1", &id, done()),
            }
        })
        .unwrap();
        assert_eq!(done.status, TaskStatus::Done);
        assert_eq!(tries.get(), 2);
    }

    #[test]
    fn a_refusal_without_a_broken_connection_is_kept() {
        let (_dir, store, id) = store_with_a_started_task();
        let stop = AtomicBool::new(false);
        let refused = change_through_outage(&store, &id, &stop, reported_by("w2"), || {
            store.complete("w2", &id, done())
        });
        assert!(refused.is_err());
    }

    #[test]
    fn a_worker_asked_to_stop_does_not_wait_for_the_store() {
        let (_dir, store, id) = store_with_a_started_task();
        let stop = AtomicBool::new(true);
        let tries = Cell::new(0);
        let outcome = change_through_outage(&store, &id, &stop, released("w1"), || {
            tries.set(tries.get() + 1);
            Err(gone())
        });
        assert!(matches!(outcome, Err(StoreError::Database { .. })));
        assert_eq!(tries.get(), 1);
    }
}
