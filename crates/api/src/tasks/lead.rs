//! The lead's changes to one task: reset, cancel, and a move to another status as on the board
//! (the lifecycle operation it takes, or the lifecycle's refusal).

use baton_core::{Move, Task, TaskFile, TaskStatus, Timestamp};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::TaskOutcome;
use crate::error::Result;
use crate::operation::{Callers, Context, Operation};

/// The leader puts tasks back to available: all of them, or none.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct Reset {
    /// The tasks' ids (`task`, one id, is taken too). Each is checked before any is reset: if
    /// one cannot be, none is.
    #[serde(default, alias = "task", deserialize_with = "one_or_many")]
    #[cfg_attr(
        feature = "cli",
        arg(value_name = "TASK", required_unless_present = "failed")
    )]
    pub tasks: Vec<String>,
    /// Every failed task too (with the ids named, or alone).
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub failed: bool,
    /// Reset even a task held under a live lease.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub force: bool,
}

/// The tasks a reset made available again, in the order asked.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ResetOutcome {
    pub tasks: Vec<Task>,
}

impl Operation for Reset {
    const NAME: &'static str = "task_reset";
    const DESCRIPTION: &'static str = "Put failed, cancelled or stale tasks back to available (leader): tasks (ids) and/or failed=true for every failed task; all or none. force=true takes a task from a live holder. The count of its failed attempts starts again.";
    const READ_ONLY: bool = false;
    const CALLERS: Callers = Callers::LEAD;
    type Output = ResetOutcome;
    fn run(self, cx: &Context) -> Result<ResetOutcome> {
        let lease = cx.tasks.lease();
        let every = self.failed.then_some(TaskStatus::Failed);
        let tasks = all_or_none(
            cx,
            &self.tasks,
            every,
            |trial, id, now| trial.reset(id, now, lease, self.force).map(drop),
            |id| cx.tasks.reset(id, self.force),
        )?;
        Ok(ResetOutcome { tasks })
    }
}

/// The lead approves proposed tasks (a plan's): all of them, or none.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct Approve {
    /// The proposed tasks' ids. Each is checked before any is approved: if one cannot be,
    /// none is.
    #[serde(default)]
    #[cfg_attr(
        feature = "cli",
        arg(value_name = "TASK", required_unless_present = "all")
    )]
    pub tasks: Vec<String>,
    /// Every proposed task (with the ids named, or alone).
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub all: bool,
}

/// The tasks approved, available now, in the order asked.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Approved {
    pub tasks: Vec<Task>,
}

impl Operation for Approve {
    const NAME: &'static str = "task_approve";
    const DESCRIPTION: &'static str = "Approve proposed tasks, a plan's (leader): tasks (ids) and/or all=true for every proposed task; all or none. Approved tasks are available to claim; until then nobody claims them.";
    const READ_ONLY: bool = false;
    const CALLERS: Callers = Callers::LEAD;
    type Output = Approved;
    fn run(self, cx: &Context) -> Result<Approved> {
        let every = self.all.then_some(TaskStatus::Proposed);
        let tasks = all_or_none(
            cx,
            &self.tasks,
            every,
            |trial, id, _| trial.approve(id).map(drop),
            |id| cx.tasks.approve(id),
        )?;
        Ok(Approved { tasks })
    }
}

/// The lead's change of several tasks, all of them or none: the tasks `named` and, with
/// `every`, each task in that status too, in that order; each change tried on a copy of the
/// board first (`trial`), so one refusal changes nothing, then made in the store (`apply`).
fn all_or_none(
    cx: &Context,
    named: &[String],
    every: Option<TaskStatus>,
    trial: impl Fn(&mut TaskFile, &str, Timestamp) -> baton_core::Result<()>,
    apply: impl Fn(&str) -> baton_core::Result<Task>,
) -> Result<Vec<Task>> {
    let (mut board, now) = cx.snapshot()?;
    let mut ids = named.to_vec();
    if let Some(status) = every {
        for task in board.tasks.iter().filter(|t| t.status == status) {
            if !ids.contains(&task.id) {
                ids.push(task.id.clone());
            }
        }
    }
    for id in &ids {
        trial(&mut board, id, now)?;
    }
    let mut tasks = Vec::with_capacity(ids.len());
    for id in &ids {
        tasks.push(apply(id)?);
    }
    Ok(tasks)
}

/// A list of ids, or one id alone (`"task": "task-1"`, as a single reset was asked before).
fn one_or_many<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> std::result::Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    Ok(match OneOrMany::deserialize(deserializer)? {
        OneOrMany::One(id) => vec![id],
        OneOrMany::Many(ids) => ids,
    })
}

/// The leader cancels a task.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct Cancel {
    /// The task's id.
    pub task: String,
    /// Why it is no longer wanted (recorded in its result).
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub reason: Option<String>,
}

impl Operation for Cancel {
    const NAME: &'static str = "task_cancel";
    const DESCRIPTION: &'static str = "Cancel a task that is not finished (leader): available, claimed or in progress. Its holder loses it; tasks that wait on it cannot start until it is reset. A team's planner cancels its own plan's tasks before anyone works them.";
    const READ_ONLY: bool = false;
    const CALLERS: Callers = Callers::PLANNING;
    type Output = TaskOutcome;
    fn run(self, cx: &Context) -> Result<TaskOutcome> {
        if let Some(plan) = crate::planning::planning_for(cx)? {
            crate::planning::own_unstarted(cx, &plan, &self.task, "cancel")?;
        }
        Ok(cx.tasks.cancel(&self.task, self.reason.as_deref())?.into())
    }
}

/// A task and the status to bring it to, as a lead drags a card on the board.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct MoveTask {
    /// The task's id.
    pub task: String,
    /// The status to bring it to: available, claimed, in_progress, done, failed or cancelled
    /// (cancelled tasks stand with the failed ones).
    pub to: TaskStatus,
    /// The summary when the move completes the task, the reason when it fails or cancels it.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub text: Option<String>,
    /// Only say which operation the move takes (or why it is refused); change nothing.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub dry_run: bool,
}

/// The operation a move took (or would take), and the task after it (null for a dry run or a
/// task that was there already).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Moved {
    #[serde(rename = "move")]
    #[cfg_attr(feature = "ts", ts(rename = "move"))]
    pub step: Move,
    /// The text the move needs before it can be made ("summary" or "reason"), if any.
    pub needs: Option<String>,
    pub task: Option<Task>,
}

impl Operation for MoveTask {
    const NAME: &'static str = "task_move";
    const DESCRIPTION: &'static str = "Bring a task to another status the way the lead does on the board (leader): the lifecycle operation that takes (claim, start, complete, fail, release, reset or cancel, in the holder's name), or the lifecycle's refusal. dry_run only asks.";
    const READ_ONLY: bool = false;
    const CALLERS: Callers = Callers::LEAD;
    type Output = Moved;
    fn run(self, cx: &Context) -> Result<Moved> {
        let (step, task) = if self.dry_run {
            (cx.tasks.plan_move(&self.task, self.to)?, None)
        } else {
            cx.tasks
                .move_task(&self.task, self.to, self.text.as_deref())?
        };
        Ok(Moved {
            needs: step.needs().map(str::to_string),
            step,
            task,
        })
    }
}
