//! The board for a reader that reads it again at every change and keeps its views between
//! reads (a window: `baton_api::board`).
//!
//! Built whole, a board's views cost every task's copy, view and comparison with the view the
//! reader held, at every change to any one of them: on a board of 10,000 tasks most of a
//! window's read. A store that keeps what it read hands out each task shared
//! ([`SharedBoard`]): a task whose text did not change since its last read is the same `Arc`.
//! Such a task's view is the one the reader holds, without being built, when nothing else it
//! shows changed either: it is not held (a held task's lease runs with the clock), it waits
//! for the same dependencies, and for the same files. Every other view is built and, when it
//! equals the one held, the one held is kept, as a whole read keeps it.

use std::sync::Arc;
use std::time::Duration;

use crate::graph::StatusIndex;
use crate::model::{Task, TaskFile};
use crate::status::{StatusReport, TaskView, Waits};
use crate::time::Timestamp;

/// A board read so that a task whose text did not change since the store's last such read is
/// the same `Arc` ([`crate::TaskStore::board_again`]).
#[derive(Debug, Clone)]
pub struct SharedBoard {
    /// Everything on the board but its tasks (the list is empty): the reservations and the
    /// agents' last sightings.
    pub file: TaskFile,
    /// In the board's order.
    pub tasks: Vec<Arc<Task>>,
    /// The goal, for the report.
    pub goal: Option<String>,
    /// The store's time of the read.
    pub now: Timestamp,
}

/// A view a reader holds, and the task it was made of when the store shared it.
pub type HeldView<'a> = (Option<&'a Arc<Task>>, &'a Arc<TaskView>);

impl SharedBoard {
    /// Every task's view, in the board's order, and the report's counts (its tasks left
    /// empty). `held(at, id)` is the view the reader holds of task `id` (looked for at place
    /// `at` first), if any: it is kept, the same `Arc`, where it is what a whole read would
    /// show (see the module's documentation).
    pub fn views<'h>(
        &self,
        lease: Duration,
        held: impl Fn(usize, &str) -> Option<HeldView<'h>>,
    ) -> (Vec<Arc<TaskView>>, StatusReport) {
        let now = self.now;
        let tasks = || self.tasks.iter().map(|task| &**task);
        let index = StatusIndex::of(tasks());
        let active = self
            .file
            .active_reservations_of(tasks(), |id| index.get(id), now, lease);
        let waits = Waits::new(index, active, now, lease);
        let views: Vec<Arc<TaskView>> = self
            .tasks
            .iter()
            .enumerate()
            .map(|(at, task)| {
                let (blockers, holds) = waits.of(task);
                let held = held(at, &task.id);
                if let Some((made_of, view)) = held
                    && made_of.is_some_and(|made_of| Arc::ptr_eq(made_of, task))
                    && !task.status.is_held()
                    && view
                        .blocked_by
                        .iter()
                        .map(String::as_str)
                        .eq(blockers.iter().copied())
                    && view.waits_on_files == holds
                {
                    return view.clone();
                }
                let blocked_by = blockers.into_iter().map(str::to_string).collect();
                let view =
                    TaskView::of((**task).clone(), blocked_by, now, lease).waiting_on_files(holds);
                match held {
                    Some((_, was)) if **was == view => was.clone(),
                    _ => Arc::new(view),
                }
            })
            .collect();
        let report = StatusReport::counting(self.goal.clone(), now, views.iter().map(|v| &**v));
        (views, report)
    }
}

#[cfg(test)]
mod tests;
