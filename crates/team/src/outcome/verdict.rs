//! How a team's run ended, as the lead who walked away wants it at the end: which tasks its
//! workers finished, which failed and why, which went back untouched, why its workers stopped
//! early, and every task not done yet with what it waits for. The board is read once, after the
//! last worker stopped; `team up` prints the verdict and exits by it.

use std::collections::BTreeSet;

use baton_core::TaskStore;
use serde::Serialize;

pub use crate::outcome::board_summary::TaskWhy;
use crate::outcome::board_summary::waiting;

use crate::landing::merge_queue::{QueueEntry, QueueState};
use crate::supervision::worker::{WorkerEnd, WorkerReport};

/// The end of a team's run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Verdict {
    /// Tasks this run's workers completed.
    pub done: Vec<String>,
    /// Tasks this run's workers failed (or gave up), with the reason the board keeps.
    pub failed: Vec<TaskWhy>,
    /// Tasks this run's workers handed back untouched, not done since.
    pub handed_back: Vec<String>,
    /// With a merge queue: the tasks it landed in the lead's branch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub merged: Option<Vec<String>>,
    /// With a merge queue: done tasks it did not land, with why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_merged: Vec<TaskWhy>,
    /// Why workers stopped early (their agents could not start), each cause once.
    pub cannot_start: Vec<String>,
    /// Every task on the board not finished, with what it waits for.
    pub waiting: Vec<TaskWhy>,
    /// Every task the run could reach is done: nothing failed, nothing waits but what can
    /// never start, no worker stopped early.
    pub all_done: bool,
}

impl Verdict {
    /// The verdict on `workers`' run, from the board as `store` has it now (`None`: the board
    /// could not be read; the workers' own reports are all there is).
    /// `merged`: what the run's merge queue landed and did not, when it had one.
    pub fn of(
        workers: &[WorkerReport],
        store: &dyn TaskStore,
        merged: Option<(Vec<String>, Vec<QueueEntry>)>,
    ) -> Verdict {
        let board = store.snapshot().ok();
        let mut verdict = Verdict::default();
        let mut causes = BTreeSet::new();
        for w in workers {
            verdict.done.extend(w.completed.iter().cloned());
            for task in &w.failed {
                let why = board
                    .as_ref()
                    .and_then(|(file, _)| file.tasks.iter().find(|t| &t.id == task))
                    .and_then(|t| t.failure_reason.clone())
                    .unwrap_or_else(|| "no reason recorded".into());
                verdict.failed.push(TaskWhy {
                    task: task.clone(),
                    why,
                    out_of_reach: false,
                });
            }
            verdict.handed_back.extend(w.released.iter().cloned());
            if w.end == WorkerEnd::Tripped
                && let Some(cause) = &w.cause
                && causes.insert(cause.clone())
            {
                verdict.cannot_start.push(cause.clone());
            }
        }
        if let Some((file, now)) = &board {
            verdict.waiting = waiting(file, *now, store.lease());
            let not_done: BTreeSet<&str> =
                verdict.waiting.iter().map(|w| w.task.as_str()).collect();
            verdict
                .handed_back
                .retain(|t| not_done.contains(t.as_str()));
        }
        verdict.handed_back.sort();
        verdict.handed_back.dedup();
        // A task sent back and done again is in a worker's done list twice.
        verdict.done.sort();
        verdict.done.dedup();
        if let Some((landed, not_landed)) = merged {
            verdict.merged = Some(landed);
            verdict.not_merged = not_landed
                .into_iter()
                .map(|entry| TaskWhy {
                    why: match entry.state {
                        QueueState::Queued | QueueState::Checking => {
                            "its turn had not come when the team stopped".to_string()
                        }
                        _ => entry.note.unwrap_or_default(),
                    },
                    task: entry.task,
                    out_of_reach: false,
                })
                .collect();
        }
        verdict.all_done = verdict.failed.is_empty()
            && verdict.not_merged.is_empty()
            && verdict.cannot_start.is_empty()
            && verdict.waiting.iter().all(|w| w.out_of_reach);
        verdict
    }
}
