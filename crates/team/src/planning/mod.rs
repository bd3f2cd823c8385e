//! A team that plans itself (`team up --goal`): the goal becomes a plan task, which the
//! team's planner (an agent of its own profile, sandboxed with the project read-only and no
//! worktree) holds while the team runs. Each planning session is an attempt at the plan task:
//! the planner reads the project, rewrites the master plan and adds tasks through its door,
//! each proposed and marked as of its plan (`baton-api`'s `planning` says what a planner may
//! do); its session ends when it reports the plan task (an `exec` planner by exiting 0).
//!
//! Then the plan is approved ([`approval`]): by the lead as one question in the inbox, or at
//! once with `--plan auto`. The lead's words instead of an approval send the plan task back
//! to the planner with them, for another session. Nothing of a plan is claimed before its
//! approval: proposed tasks are not claimable.
//!
//! While the workers work the plan, the planner hears of it ([`news`]): each report, failure
//! and return of the merge queue, each once, in a session of its own; once every task of the
//! plan is finished (and the merge queue has landed what it will), a plan whose tasks all
//! succeeded is carried out and the team stops. Sessions that plan are limited to
//! [`MAX_SESSIONS`] at a time; then the lead is asked whether the planner may go on.

pub(crate) mod approval;
pub(crate) mod goal_check;
mod limits;
pub(crate) mod news;
pub(crate) mod planner;
pub(crate) mod seat;

use baton_core::{NewTask, Task, TaskKind, TaskStatus, TaskStore};
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::profile::Profile;
pub use crate::starting::request::PlanApproval;
use crate::supervision::crew::Crew;
use baton_live::inbox_wait::wait_for_inbox;
use std::sync::atomic::AtomicBool;

/// The planning sessions one plan gets (the first, and those after the lead's words, a failure
/// or the judge's) before the lead is asked whether the planner may go on; as many again each
/// time the lead says so.
pub const MAX_SESSIONS: u32 = 6;

/// A team's planning, as its request settles it.
#[derive(Debug, Clone)]
pub struct Planning {
    pub goal: String,
    pub approval: PlanApproval,
    /// The planner's profile: no worktree, the project read-only in its sandbox.
    pub profile: Profile,
    /// What its sessions may cost together (US dollars); none: the team's budget.
    pub budget_usd: Option<f64>,
    /// It answers the workers' questions about its plan's tasks (`--planner-answers`).
    pub answers_questions: bool,
}

/// What a plan came to, for the team's report.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanOutcome {
    /// The plan task.
    pub plan: String,
    /// Its tasks, in the order they were added.
    pub tasks: Vec<String>,
    /// Planning sessions run.
    pub sessions: u32,
    /// Every task of the plan is done (or cancelled), and the team's judge, when it has one,
    /// found the goal met.
    pub carried_out: bool,
    /// The team's judge's last word on the goal, once every task had landed: met or not; none
    /// without a judge, or before it was asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal_met: Option<bool>,
}

/// The planner's name on this machine: `planner`, with the host in front on a store shared
/// across machines.
pub fn planner_name(tasks: &dyn TaskStore, host: &str) -> String {
    match tasks.shared_across_machines() {
        true => format!("{host}-planner"),
        false => "planner".to_string(),
    }
}

/// The plan task for `goal`: one not finished already (a team restarted on the same goal
/// takes its plan up again), else a new one, `plan-N`.
pub fn plan_task(tasks: &dyn TaskStore, goal: &str) -> Result<Task> {
    let (file, _) = tasks.snapshot()?;
    let goal = goal.trim();
    if let Some(open) = file
        .tasks
        .iter()
        .find(|t| t.kind == TaskKind::Plan && !t.status.is_final() && t.description == goal)
    {
        return Ok(open.clone());
    }
    let highest = file
        .tasks
        .iter()
        .filter_map(|t| t.id.strip_prefix("plan-")?.parse::<u64>().ok())
        .max()
        .unwrap_or(0);
    Ok(tasks.add_task(NewTask {
        id: Some(format!("plan-{}", highest + 1)),
        description: goal.to_string(),
        kind: TaskKind::Plan,
        acceptance: Some(
            "the master plan says how the goal is reached, and every task it needs is on the \
             board with its files, dependencies and acceptance"
                .into(),
        ),
        ..NewTask::default()
    })?)
}

/// The tasks of plan `plan`'s tree on the board, in board order: its own, and its
/// sub-plans' ([`baton_core::plans`]).
pub(crate) fn tasks_of(tasks: &dyn TaskStore, plan: &str) -> baton_core::Result<Vec<Task>> {
    let (file, _) = tasks.snapshot()?;
    Ok(file.plan_tree(plan).into_iter().cloned().collect())
}

/// A plan's tasks once none can move any more: each finished (done, failed or cancelled) or
/// doomed (waiting on a failed or cancelled one); `None` while any can. The doomed ones are
/// listed beside.
pub(crate) fn settled(
    tasks: &dyn TaskStore,
    plan: &str,
) -> baton_core::Result<Option<(Vec<Task>, Vec<String>)>> {
    let now = where_it_stands(tasks, plan, None)?;
    Ok((!now.moving).then_some((now.tasks, now.stuck)))
}

/// Where a plan stands: the tasks of its tree, the doomed ones among them (waiting on a failed
/// or cancelled one), whether any can still move, and a sub-plan of it ready to be planned
/// (approved and its dependencies done, or sent back to `planner` for another session).
pub(crate) struct Standing {
    pub tasks: Vec<Task>,
    pub stuck: Vec<String>,
    pub moving: bool,
    pub sub_plan: Option<Task>,
}

/// Where plan `plan` stands; its sub-plan to plan only for its `planner`, when named.
pub(crate) fn where_it_stands(
    tasks: &dyn TaskStore,
    plan: &str,
    planner: Option<&str>,
) -> baton_core::Result<Standing> {
    let (file, _) = tasks.snapshot()?;
    let doomed: Vec<String> = baton_core::doomed_tasks(&file)
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    let done = |id: &String| file.task(id).is_some_and(|t| t.status == TaskStatus::Done);
    let planned: Vec<Task> = file.plan_tree(plan).into_iter().cloned().collect();
    let sub_plan = planner.and_then(|planner| {
        planned
            .iter()
            .filter(|t| t.kind == TaskKind::Plan)
            .find(|t| {
                (t.status == TaskStatus::Available && t.dependencies.iter().all(done))
                    || (t.is_held_by(planner) && !t.status.is_final())
            })
            .cloned()
    });
    let stuck: Vec<String> = planned
        .iter()
        .filter(|t| doomed.contains(&t.id))
        .map(|t| t.id.clone())
        .collect();
    let moving = planned
        .iter()
        .any(|t| !t.status.is_final() && !stuck.contains(&t.id));
    Ok(Standing {
        tasks: planned,
        stuck,
        moving,
        sub_plan,
    })
}

/// Waits until `look` finds something (`Some`), looking again at each change of the board
/// (`tasks.json`'s folder, or the database's notifications) and of the inbox's `folders`;
/// `None` once `stop` is set.
pub(crate) fn wait_for_change<T>(
    crew: &Crew<'_>,
    folders: &[&str],
    stop: &AtomicBool,
    look: impl FnMut() -> baton_core::Result<Option<T>>,
) -> Result<Option<T>> {
    let mut watched = vec![""];
    watched.extend(folders);
    Ok(wait_for_inbox(
        crew.tasks,
        &watched,
        None,
        crew.pace.mode,
        Some(stop),
        |_| {},
        look,
    )?)
}

/// Whether a plan's tasks carry it out: each done, or cancelled by whoever planned or leads
/// (none failed, none waiting); a plan of no task is carried out too.
pub(crate) fn carried_out(tasks: &[Task]) -> bool {
    tasks
        .iter()
        .all(|t| matches!(t.status, TaskStatus::Done | TaskStatus::Cancelled))
}

/// The tasks of a plan still waiting for its approval.
pub(crate) fn proposed(tasks: &[Task]) -> Vec<&Task> {
    tasks
        .iter()
        .filter(|t| t.status == TaskStatus::Proposed)
        .collect()
}

#[cfg(test)]
mod tests {
    use baton_core::{NewTask, TaskFile, Timestamp};

    use super::*;

    /// Done or cancelled (the lead or the planner took it off), every task: carried out; one
    /// failed or still to do: not.
    #[test]
    fn a_plan_is_carried_out_when_each_task_is_done_or_cancelled() {
        let mut file = TaskFile::new(Timestamp::now());
        for id in ["a", "b"] {
            let new = NewTask {
                id: Some(id.into()),
                description: id.into(),
                ..NewTask::default()
            };
            file.add_task(new, Timestamp::now()).unwrap();
        }
        let mut tasks = file.tasks.clone();
        assert!(carried_out(&[]), "a plan of no task");
        assert!(!carried_out(&tasks), "both still to do");
        tasks[0].status = TaskStatus::Done;
        tasks[1].status = TaskStatus::Cancelled;
        assert!(carried_out(&tasks));
        tasks[1].status = TaskStatus::Failed;
        assert!(!carried_out(&tasks));
    }
}
