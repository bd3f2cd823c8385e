//! The board at a glance, as a team's worker or lead watching it wants it: how many tasks are
//! done, running and ready, and what every other one waits for (another worker's lease and
//! for how long, dependencies, or nothing ever: a failed one). A waiting worker records it,
//! `team up`'s live status line draws it, and a run's verdict lists what is left with it.

use baton_core::{Doom, doomed_tasks};
use baton_core::{TaskFile, TaskStatus, Timestamp};
use serde::Serialize;

/// A task and why it is where it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TaskWhy {
    pub task: String,
    pub why: String,
    /// It can never start (a dependency failed, was cancelled or is missing): out of the
    /// run's reach, so it does not make the run's verdict a failure by itself.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub out_of_reach: bool,
}

/// The board at a glance, for a live status line and a waiting worker's record: how many
/// tasks are done, held (running), ready, and what each of the others waits for.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct BoardSummary {
    pub done: usize,
    pub running: usize,
    pub ready: usize,
    /// Tasks not finished, not held and not ready, with what each waits for.
    pub waiting: Vec<TaskWhy>,
    /// Held tasks, with their holder and lease.
    pub held: Vec<TaskWhy>,
}

impl BoardSummary {
    pub fn of(file: &TaskFile, now: Timestamp, lease: std::time::Duration) -> BoardSummary {
        let mut glance = BoardSummary {
            done: file
                .tasks
                .iter()
                .filter(|t| t.status == TaskStatus::Done)
                .count(),
            ..BoardSummary::default()
        };
        for why in waiting(file, now, lease) {
            let status = file
                .tasks
                .iter()
                .find(|t| t.id == why.task)
                .map(|t| t.status);
            match status {
                Some(TaskStatus::Claimed | TaskStatus::InProgress) => {
                    glance.running += 1;
                    glance.held.push(why);
                }
                _ if why.why == READY => glance.ready += 1,
                _ => glance.waiting.push(why),
            }
        }
        glance
    }

    /// What a worker that finds nothing to claim waits for, in a few words: the first tasks
    /// held by others (until when) and those that wait on dependencies.
    pub fn waits_for(&self) -> String {
        let reasons: Vec<String> = self
            .held
            .iter()
            .chain(&self.waiting)
            .filter(|w| !w.out_of_reach)
            .take(3)
            .map(|w| format!("{} {}", w.task, w.why))
            .collect();
        match reasons.is_empty() {
            true => "waiting for a ready task".to_string(),
            false => format!("waiting: {}", reasons.join("; ")),
        }
    }
}

/// What a task that could be claimed now waits for: nothing.
const READY: &str = "ready, not started";

/// Every unfinished task on the board, with what it waits for.
pub(crate) fn waiting(file: &TaskFile, now: Timestamp, lease: std::time::Duration) -> Vec<TaskWhy> {
    let doomed: std::collections::HashMap<String, Doom> = doomed_tasks(file).into_iter().collect();
    let status_of = |id: &str| file.tasks.iter().find(|t| t.id == id).map(|t| t.status);
    file.tasks
        .iter()
        .filter(|t| !t.status.is_final())
        .map(|t| {
            let why = match (t.status, doomed.get(&t.id)) {
                (_, Some(Doom::FailedDependency { via, status })) => {
                    format!("can never start: it depends on {via}, which is {status}")
                }
                (_, Some(Doom::UnknownDependency(dep))) => {
                    format!("can never start: its dependency {dep} does not exist")
                }
                (_, Some(Doom::Cycle(cycle))) => {
                    format!(
                        "can never start: a dependency cycle ({})",
                        cycle.join(" → ")
                    )
                }
                (TaskStatus::Claimed | TaskStatus::InProgress, None) => {
                    let holder = t.claimed_by.as_deref().unwrap_or("nobody");
                    match t.lease_end(lease) {
                        Some(end) if end > now => format!(
                            "held by {holder}, lease for {} more",
                            baton_core::time::short_duration(end.remaining(now))
                        ),
                        _ => format!("held by {holder}, whose lease expired"),
                    }
                }
                (TaskStatus::Proposed, None) => {
                    "proposed: waits for the lead to approve its plan".to_string()
                }
                (_, None) => {
                    let open: Vec<&str> = t
                        .dependencies
                        .iter()
                        .filter(|d| status_of(d) != Some(TaskStatus::Done))
                        .map(String::as_str)
                        .collect();
                    match open.is_empty() {
                        true => READY.to_string(),
                        false => format!("waits for {}", open.join(", ")),
                    }
                }
            };
            TaskWhy {
                task: t.id.clone(),
                why,
                out_of_reach: doomed.contains_key(&t.id),
            }
        })
        .collect()
}
