//! The planner's thread: planning sessions at the plan task, each followed by the plan's
//! approval, then the wait while the workers work it, and a new session when what failed calls
//! for one. When it ends (the plan carried out, failed, out of sessions, or the team stopped)
//! it asks the workers to stop after their tasks: a planned team lasts as long as its plan.

use std::collections::BTreeSet;
use std::sync::atomic::AtomicBool;

use baton_core::{ClaimRequest, Reopen, Task, TaskStatus, WorkerState};

use crate::Progress;
use crate::error::{Result, TeamError};
use crate::planning::approval::{Decision, approve_all, ask_lead};
use crate::planning::goal_check::judge_goal;
use crate::planning::{
    MAX_SESSIONS, PlanApproval, carried_out, proposed, settled, settled_or_failed, tasks_of,
    untold_failure, wait_for_change,
};
use crate::supervision::crew::Crew;
use crate::supervision::worker::{WorkerReport, work_task};

/// How a plan's planning ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanStep {
    /// The planner wrote the plan: its tasks wait for approval.
    Proposed,
    /// The lead was asked to approve it.
    Asked,
    /// Approved: the workers may claim its tasks.
    Approved,
    /// Back to the planner, with the lead's words or what failed.
    SentBack,
    /// Every task of the plan is done (and the judge finds the goal met).
    CarriedOut,
    /// The team's judge compared the lead's branch with the goal: met or not (in the detail).
    GoalJudged,
    /// Planning ended without the plan carried out (why in the detail).
    Ended,
}

/// What the planner thread needs: the planner's crew (its profile, read-only sandbox), the
/// workers' crew (stopped when planning ends), who plans, and for which plan.
pub(crate) struct PlannerRun<'c, 'a> {
    pub planner: &'c Crew<'a>,
    pub team: &'c Crew<'a>,
    pub name: &'c str,
    pub plan: &'c str,
    pub approval: PlanApproval,
}

/// Runs the planner until its plan is carried out or planning ends; the workers are asked to
/// stop after their tasks either way.
pub(crate) fn run_planner(run: &PlannerRun<'_, '_>) -> Result<WorkerReport> {
    let crew = run.planner;
    let mut report = WorkerReport::of(run.name);
    let mut record = crew.record(run.name, WorkerState::Waiting);
    crew.save(&record);
    let (step, why) = match plan_until_done(run, &mut report) {
        Ok(end) => end,
        Err(e) => (PlanStep::Ended, format!("planning stopped: {e}")),
    };
    tell(run, step, why.clone());
    run.team.stop_all(false);
    record.state = WorkerState::Stopped;
    record.last_event = Some(why);
    record.usage = report.usage;
    record.updated_at = baton_core::Timestamp::now();
    crew.save(&record);
    Ok(report)
}

/// The sessions, approvals and waits of one plan, until it is carried out or cannot go on.
fn plan_until_done(
    run: &PlannerRun<'_, '_>,
    report: &mut WorkerReport,
) -> Result<(PlanStep, String)> {
    let crew = run.planner;
    let flags = crew.flags(run.name);
    let mut sessions = 0;
    let mut first = true;
    // The failures the planner was told of: each once.
    let mut told = BTreeSet::new();
    // The plan's size when the judge last found the goal not met.
    let mut missing_at: Option<usize> = None;
    loop {
        if flags.finishing() {
            return Ok((PlanStep::Ended, "the team was asked to stop".into()));
        }
        let plan = current(crew, run.plan)?;
        if !plan.status.is_final() {
            if sessions == MAX_SESSIONS {
                return Ok((
                    PlanStep::Ended,
                    format!(
                        "{MAX_SESSIONS} planning sessions and the plan is not settled: the lead takes it from here"
                    ),
                ));
            }
            sessions += 1;
            let resumed = first && plan.is_held_by(run.name) && !plan.sent_back;
            let Some(plan) = take(crew, run.name, plan)? else {
                return Ok((PlanStep::Ended, "the plan task cannot be claimed".into()));
            };
            work_task(crew, run.name, plan, resumed, report)?;
            if report.cause.is_some() {
                return Ok((
                    PlanStep::Ended,
                    "the planner's agent could not start".into(),
                ));
            }
        }
        first = false;
        let plan = current(crew, run.plan)?;
        match plan.status {
            TaskStatus::Done => {}
            TaskStatus::Failed | TaskStatus::Cancelled => {
                let why = plan.failure_reason.clone().unwrap_or_default();
                return Ok((
                    PlanStep::Ended,
                    format!("the plan task {}: {why}", plan.status),
                ));
            }
            _ => return Ok((PlanStep::Ended, "the planner was stopped".into())),
        }
        if let Some(words) = approve(run, &plan, &flags.finish)? {
            send_back(run, &words)?;
            continue;
        }
        let Some((tasks, stuck)) = wait_until_settled(run, &flags.finish, &told)? else {
            return Ok((PlanStep::Ended, "the team was asked to stop".into()));
        };
        // Settled (each task finished or stranded), or a failure came: carried out when none
        // failed or waits.
        if carried_out(&tasks) {
            let done = tasks
                .iter()
                .filter(|t| t.status == TaskStatus::Done)
                .count();
            if let Some(judge) = &run.team.judge {
                let plan = current(crew, run.plan)?;
                let (met, said) = match judge_goal(run.team, judge, &plan) {
                    Ok(word) => word,
                    Err(e) => {
                        return Ok((
                            PlanStep::Ended,
                            format!(
                                "the judge could not judge the goal ({e}): the lead takes it \
                                 from here"
                            ),
                        ));
                    }
                };
                let verdict = if met { "met" } else { "not met" };
                tell(run, PlanStep::GoalJudged, format!("{verdict}: {said}"));
                if !met {
                    if missing_at == Some(tasks.len()) {
                        return Ok((
                            PlanStep::Ended,
                            "the judge finds the goal not met and the planner planned nothing \
                             more for it: the lead takes it from here"
                                .into(),
                        ));
                    }
                    missing_at = Some(tasks.len());
                    send_back(
                        run,
                        &format!(
                            "The judge compared the lead's branch with the goal and the master \
                             plan, and finds the goal not met: {said}\nPlan the work that is \
                             missing."
                        ),
                    )?;
                    continue;
                }
            }
            return Ok((
                PlanStep::CarriedOut,
                format!("{done} of {} task(s) done", tasks.len()),
            ));
        }
        // What the planner has not been told yet; the same failures again end the planning.
        let news: Vec<&Task> = tasks
            .iter()
            .filter(|t| t.status == TaskStatus::Failed)
            .filter(|t| told.insert(t.id.clone()))
            .collect();
        if news.is_empty() {
            return Ok((
                PlanStep::Ended,
                format!(
                    "the plan's failures stand and the planner planned nothing more for them \
                     ({} waiting on them): the lead takes it from here",
                    stuck.len()
                ),
            ));
        }
        send_back(run, &failures(&news, &stuck))?;
    }
}

/// The plan's approval once its session ended: `None` when approved (or nothing waits for
/// it), the lead's words when not.
fn approve(run: &PlannerRun<'_, '_>, plan: &Task, stop: &AtomicBool) -> Result<Option<String>> {
    let crew = run.planner;
    let tasks = tasks_of(crew.tasks, run.plan)?;
    let waiting: Vec<String> = proposed(&tasks).iter().map(|t| t.id.clone()).collect();
    if waiting.is_empty() {
        return Ok(None);
    }
    tell(run, PlanStep::Proposed, waiting.join(", "));
    let decision = match run.approval {
        PlanApproval::Auto => Decision::Approved {
            by: run.name.to_string(),
        },
        PlanApproval::Review => ask_lead(crew, run.name, plan, stop, |question| {
            tell(run, PlanStep::Asked, question.to_string())
        })?,
    };
    match decision {
        Decision::Approved { by } => {
            let approved = approve_all(crew, run.plan)?;
            tell(
                run,
                PlanStep::Approved,
                format!("by {by}: {}", approved.join(", ")),
            );
            Ok(None)
        }
        Decision::Rejected { comment } => Ok(Some(format!(
            "The lead did not approve the plan and said: {comment}"
        ))),
        Decision::Stopped => Err(TeamError::new(
            baton_core::ErrorKind::Steering,
            "the team stopped before the plan was approved",
        )),
    }
}

/// The plan task back to its planner, with `why` in its hints for the next session.
fn send_back(run: &PlannerRun<'_, '_>, why: &str) -> Result<()> {
    run.planner
        .tasks
        .reopen(run.plan, why, Reopen::ToItsWorker)?;
    tell(run, PlanStep::SentBack, why.to_string());
    Ok(())
}

/// What failed, for the planner: each failed task and why, cut short, and the tasks that can
/// never start because of them.
fn failures(failed: &[&Task], stuck: &[String]) -> String {
    let mut text = format!(
        "{} task(s) of the plan failed; plan what the goal still needs (follow-ups, a split, \
         another order; cancel what can no longer start), or add nothing if it is met:",
        failed.len()
    );
    for task in failed {
        let why: String = task
            .failure_reason
            .as_deref()
            .unwrap_or("no reason recorded")
            .chars()
            .take(300)
            .collect();
        text.push_str(&format!("\n- {}: {why}", task.id));
    }
    if !stuck.is_empty() {
        text.push_str(&format!(
            "\nWaiting on them, never to start as they are: {}",
            stuck.join(", ")
        ));
    }
    text
}

/// The plan's tasks and the doomed ones among them.
type Settled = (Vec<Task>, Vec<String>);

/// Waits until no task of the plan can move any more ([`settled`]) and the merge queue has had
/// its turn at each done one (the judge or the check may send it back, unfinished again), or
/// until a task of it fails that the planner was not `told` of (it hears of each as it comes);
/// the plan's tasks then, or `None` when asked to stop.
fn wait_until_settled(
    run: &PlannerRun<'_, '_>,
    stop: &AtomicBool,
    told: &BTreeSet<String>,
) -> Result<Option<Settled>> {
    let crew = run.planner;
    let stopped = || stop.load(std::sync::atomic::Ordering::SeqCst);
    loop {
        let look = || settled_or_failed(crew.tasks, run.plan, Some(told));
        let Some((tasks, stuck)) = wait_for_change(crew, &[], stop, look)? else {
            return Ok(None);
        };
        let Some(queue) = &run.team.merge_queue else {
            return Ok(Some((tasks, stuck)));
        };
        if untold_failure(&tasks, told) {
            return Ok(Some((tasks, stuck)));
        }
        if !queue.wait_decided(&done_of(&tasks), &stopped) {
            return Ok(None);
        }
        // Landed or left for the lead, each: settled. One sent back is worked again.
        if let Some((now, stuck)) = settled(crew.tasks, run.plan)?
            && queue.settled(&done_of(&now))
        {
            return Ok(Some((now, stuck)));
        }
    }
}

/// The ids of the done ones of `tasks`.
fn done_of(tasks: &[Task]) -> Vec<String> {
    tasks
        .iter()
        .filter(|t| t.status == TaskStatus::Done)
        .map(|t| t.id.clone())
        .collect()
}

/// The plan task, as the store has it now.
fn current(crew: &Crew<'_>, plan: &str) -> Result<Task> {
    crew.tasks.task(plan)?.ok_or_else(|| {
        TeamError::new(
            baton_core::ErrorKind::UnknownTask,
            format!("the plan task {plan} is no longer on the board"),
        )
    })
}

/// The plan task held by the planner: as it is when it holds it (from before, or sent back to
/// it), else claimed by name. `None` when someone else holds it.
fn take(crew: &Crew<'_>, name: &str, plan: Task) -> Result<Option<Task>> {
    if plan.is_held_by(name) {
        return Ok(Some(plan));
    }
    match crew.tasks.claim(&ClaimRequest::task(name, &plan.id)) {
        Ok(claimed) => Ok(claimed.map(|c| c.task)),
        Err(baton_core::StoreError::IllegalTransition { .. }) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

fn tell(run: &PlannerRun<'_, '_>, step: PlanStep, detail: String) {
    (run.planner.progress)(Progress::Plan {
        planner: run.name.to_string(),
        plan: run.plan.to_string(),
        step,
        detail,
    });
}
