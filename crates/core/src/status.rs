//! A read-only view of the board: every task with what a person or a UI needs to know about it
//! right now (ready or blocked and by what, lease left, stale), and counts by status.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Serialize;

use crate::graph::StatusIndex;
use crate::model::{Reservation, Task, TaskFile, TaskStatus};
use crate::reservations::{Hold, task_conflicts};
use crate::time::Timestamp;

/// The board as of one moment.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct StatusReport {
    pub goal: Option<String>,
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub as_of: Timestamp,
    pub total: usize,
    /// Tasks per status, every status present (zero included), in lifecycle order.
    #[cfg_attr(
        feature = "ts",
        ts(
            type = "{ proposed: number, available: number, claimed: number, in_progress: number, done: number, failed: number, cancelled: number }"
        )
    )]
    pub counts: BTreeMap<&'static str, usize>,
    /// Available tasks whose dependencies are all done, plus stale held tasks.
    pub ready: usize,
    /// Held tasks whose lease has expired.
    pub stale: usize,
    pub tasks: Vec<TaskView>,
    /// What supervised agents cost, in total and per agent (`baton team`; per task:
    /// `team_status`); none until an agent of a team has run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spend: Option<crate::attempts::Spend>,
}

/// One task as the board shows it.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct TaskView {
    #[serde(flatten)]
    pub task: Task,
    /// Claimable now.
    pub ready: bool,
    /// Dependencies not yet done (unknown ids included).
    pub blocked_by: Vec<String>,
    /// Seconds left on the holder's lease (held tasks only).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(as = "Option<u32>", optional))]
    pub lease_remaining_secs: Option<u64>,
    /// Held, but the lease has expired: the holder is presumed gone.
    pub stale: bool,
    /// Ready but for files other agents hold exclusively: who holds which (it is taken once
    /// they are free).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(
        feature = "ts",
        ts(as = "Option<Vec<crate::reservations::Hold>>", optional)
    )]
    pub waits_on_files: Vec<crate::reservations::Hold>,
}

impl TaskView {
    /// `task` as the board shows it at `now`, given the dependencies it still waits for.
    pub fn of(task: Task, blocked_by: Vec<String>, now: Timestamp, lease: Duration) -> Self {
        TaskView {
            ready: Self::is_ready(&task, !blocked_by.is_empty(), now, lease),
            lease_remaining_secs: task
                .lease_end(lease)
                .map(|end| end.remaining(now).as_secs()),
            stale: task.lease_expired(now, lease),
            blocked_by,
            task,
            waits_on_files: Vec::new(),
        }
    }

    /// Whether `task`, `blocked` by a dependency or not, is claimable now (files aside).
    pub(crate) fn is_ready(task: &Task, blocked: bool, now: Timestamp, lease: Duration) -> bool {
        !blocked && task.kind.is_work() && task.is_claimable(now, lease)
    }

    /// The same view, kept back by files others hold (`holds`; none changes nothing).
    pub fn waiting_on_files(mut self, holds: Vec<crate::reservations::Hold>) -> Self {
        if !holds.is_empty() {
            self.ready = false;
        }
        self.waits_on_files = holds;
        self
    }

    /// "waits on files held by AGENT (TASK), …", when it does.
    pub fn files_note(&self) -> Option<String> {
        (!self.waits_on_files.is_empty()).then(|| {
            format!(
                "waits on files held by {}",
                self.waits_on_files
                    .iter()
                    .map(crate::reservations::Hold::holder)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
    }
}

/// What a board's tasks wait for at a moment: the dependencies not done yet, and for a task
/// ready but for files, the files others hold. [`StatusReport::build`] and
/// [`crate::SharedBoard::views`] ask it task by task.
pub(crate) struct Waits<'a> {
    index: StatusIndex<'a>,
    /// The reservations in force ([`TaskFile::active_reservations`]).
    active: Vec<Reservation>,
    now: Timestamp,
    lease: Duration,
}

impl<'a> Waits<'a> {
    pub(crate) fn new(
        index: StatusIndex<'a>,
        active: Vec<Reservation>,
        now: Timestamp,
        lease: Duration,
    ) -> Self {
        Waits {
            index,
            active,
            now,
            lease,
        }
    }

    /// The dependencies `task` waits for (unknown ids included), and when it is ready but for
    /// files, those others hold.
    pub(crate) fn of(&self, task: &'a Task) -> (Vec<&'a str>, Vec<Hold>) {
        let blockers = self.index.blockers(task);
        let holds = match TaskView::is_ready(task, !blockers.is_empty(), self.now, self.lease) {
            true => task_conflicts(&self.active, task, None),
            false => Vec::new(),
        };
        (blockers, holds)
    }
}

impl StatusReport {
    /// The board `file` at `now`, its tasks moved into the report (a board of thousands is
    /// not copied).
    pub fn build(file: TaskFile, goal: Option<String>, now: Timestamp, lease: Duration) -> Self {
        // What each task waits for, read from the board before its tasks move.
        let waits: Vec<(Vec<String>, Vec<Hold>)> = {
            let active = file.active_reservations(now, lease);
            let waits = Waits::new(StatusIndex::new(&file), active, now, lease);
            file.tasks
                .iter()
                .map(|task| {
                    let (blockers, holds) = waits.of(task);
                    (blockers.into_iter().map(str::to_string).collect(), holds)
                })
                .collect()
        };
        let tasks: Vec<TaskView> = file
            .tasks
            .into_iter()
            .zip(waits)
            .map(|(task, (blocked_by, holds))| {
                TaskView::of(task, blocked_by, now, lease).waiting_on_files(holds)
            })
            .collect();
        let report = Self::counting(goal, now, tasks.iter());
        StatusReport { tasks, ..report }
    }

    /// The report of a board whose tasks' views are `views`: its counts, with no tasks (a
    /// reader that holds the views has them).
    pub fn counting<'v>(
        goal: Option<String>,
        now: Timestamp,
        views: impl Iterator<Item = &'v TaskView>,
    ) -> Self {
        let mut counts: BTreeMap<&'static str, usize> = TaskStatus::ALL
            .iter()
            .map(|status| (status.as_str(), 0))
            .collect();
        let (mut total, mut ready, mut stale) = (0, 0, 0);
        for view in views {
            *counts.entry(view.task.status.as_str()).or_default() += 1;
            total += 1;
            ready += usize::from(view.ready);
            stale += usize::from(view.stale);
        }
        StatusReport {
            goal,
            as_of: now,
            total,
            ready,
            stale,
            counts,
            tasks: Vec::new(),
            spend: None,
        }
    }

    pub fn count(&self, status: TaskStatus) -> usize {
        self.counts.get(status.as_str()).copied().unwrap_or(0)
    }

    /// How the finished tasks ended, the way every front end says it: "3 done, 1 failed", with
    /// ", 2 cancelled" when any were. Failed and cancelled are counted apart everywhere: a
    /// failure is a worker's, a cancellation the leader's decision.
    pub fn outcome(&self) -> String {
        outcome(|status| self.count(status))
    }

    /// Why a claim would find nothing, in one line (for "nothing to claim" answers).
    pub fn nothing_ready_reason(&self) -> String {
        nothing_ready_reason(|status| self.count(status))
    }

    /// Every task is done, failed or cancelled.
    pub fn all_finished(&self) -> bool {
        self.tasks.iter().all(|t| t.task.status.is_final())
    }
}

/// How the finished tasks ended, from how many tasks are in each status: "3 done, 1 failed",
/// with ", 2 cancelled" when any were ([`StatusReport::outcome`]).
pub fn outcome(count: impl Fn(TaskStatus) -> usize) -> String {
    let mut text = format!(
        "{} done, {} failed",
        count(TaskStatus::Done),
        count(TaskStatus::Failed)
    );
    let cancelled = count(TaskStatus::Cancelled);
    if cancelled > 0 {
        text += &format!(", {cancelled} cancelled");
    }
    text
}

/// Why a claim got nothing, from how many tasks are in each status (what every store can
/// count without reading its tasks).
pub fn nothing_ready_reason(count: impl Fn(TaskStatus) -> usize) -> String {
    let total: usize = TaskStatus::ALL.iter().map(|&status| count(status)).sum();
    let finished: usize = TaskStatus::ALL
        .iter()
        .filter(|status| status.is_final())
        .map(|&status| count(status))
        .sum();
    let available = count(TaskStatus::Available);
    let held = count(TaskStatus::Claimed) + count(TaskStatus::InProgress);
    let proposed = count(TaskStatus::Proposed);
    if total == 0 {
        "there are no tasks yet".into()
    } else if finished == total {
        "every task is finished".into()
    } else if proposed > 0 && available == 0 && held == 0 {
        format!(
            "{proposed} proposed task(s) wait for the lead to approve their plan (`baton leader \
             approve`)"
        )
    } else if available > 0 {
        format!("{available} available task(s) wait on dependencies; {held} held by workers")
    } else {
        format!("all unfinished tasks are held by workers ({held})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{file_with, t0, task};

    #[test]
    fn reports_counts_readiness_blockers_and_stale_leases() {
        let mut stale = task("s", TaskStatus::InProgress, &[]);
        stale.claimed_by = Some("gone".into());
        stale.lease_expires_at = Some(t0());
        let mut live = task("l", TaskStatus::Claimed, &[]);
        live.claimed_by = Some("w".into());
        live.lease_expires_at = Some(t0().after(Duration::from_secs(90)));
        let file = file_with(vec![
            task("d", TaskStatus::Done, &[]),
            task("r", TaskStatus::Available, &["d"]),
            task("b", TaskStatus::Available, &["d", "l"]),
            stale,
            live,
        ]);
        let report = StatusReport::build(file, None, t0(), Duration::from_secs(60));
        assert_eq!(report.total, 5);
        assert_eq!(report.count(TaskStatus::Available), 2);
        assert_eq!(report.count(TaskStatus::Failed), 0);
        assert_eq!((report.ready, report.stale), (2, 1));
        let by_id = |id: &str| report.tasks.iter().find(|t| t.task.id == id).unwrap();
        assert!(by_id("r").ready);
        assert_eq!(by_id("b").blocked_by, ["l"]);
        assert!(by_id("s").stale && by_id("s").ready);
        assert_eq!(by_id("l").lease_remaining_secs, Some(90));
        assert!(!report.all_finished());
    }
}
