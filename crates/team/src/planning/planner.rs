//! The planner's thread: planning sessions at the plan task, each followed by the plan's
//! approval, then the wait while the workers work it, and a new session for each piece of news
//! ([`news`](crate::planning::news)), the lead asked once the sessions that plan reach their
//! limit. When it ends (the plan carried out, failed, out of sessions, or the team stopped)
//! it asks the workers to stop after their tasks: a planned team lasts as long as its plan.

use std::sync::atomic::AtomicBool;

use baton_core::{ClaimRequest, Reopen, Task, TaskStatus, WorkerState};

use crate::Progress;
use crate::error::{Result, TeamError};
use crate::planning::approval::{Decision, approve_all, ask_lead};
use crate::planning::goal_check::judge_goal;
use crate::planning::limits::{
    Sessions, at_budget, before_session, hear_limits, more_budget, unless_paused,
};
use crate::planning::news::{News, Told};
use crate::planning::{
    MAX_SESSIONS, PlanApproval, carried_out, proposed, settled, tasks_of, wait_for_change,
    where_it_stands,
};
use crate::supervision::crew::Crew;
use crate::supervision::worker::{WorkerReport, work_task};

/// How a plan's planning ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanStep {
    /// The planner wrote the plan: its tasks wait for approval.
    Proposed,
    /// The lead was asked to approve it (the question's id in the detail).
    Asked,
    /// The planner has had the sessions a plan gets: the lead was asked whether it may go on
    /// (the question's id in the detail).
    AtLimit,
    /// Approved: the workers may claim its tasks.
    Approved,
    /// Back to the planner, with the lead's words or what failed.
    SentBack,
    /// Every task of the plan is done (and the judge finds the goal met).
    CarriedOut,
    /// A slice of the goal is planned apart: a session on a sub-plan (its id in the detail).
    SubPlan,
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
    /// It answers the workers' questions about its plan (`--planner-answers`).
    pub answers: bool,
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
    // The sessions that planned (the first, and those after the lead's words, a failure or the
    // judge's): the lead is asked for more once they reach `allowed`. Sessions for reports and
    // returns alone are not counted: the plan's size bounds them.
    let mut sessions = Sessions {
        planned: 0,
        allowed: MAX_SESSIONS,
    };
    let mut counts = true;
    let mut first = true;
    let heard = baton_core::plans::allowance(crew.documents, run.plan)?.answers;
    let mut told = Told::new(run.plan, run.answers, &heard);
    // A command planner plans by script: it is run again only when the plan must change.
    let hears_news = crew.profile.kind.plans_from_news();
    // The plan's size when the judge last found the goal not met.
    let mut missing_at: Option<usize> = None;
    loop {
        if flags.finishing() {
            return Ok((PlanStep::Ended, "the team was asked to stop".into()));
        }
        let plan = current(crew, run.plan)?;
        if !plan.status.is_final() {
            if let Some(ended) = before_session(run, &flags, &plan, counts, &mut sessions)? {
                return Ok(ended);
            }
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
        counts = true;
        let plan = current(crew, run.plan)?;
        match plan.status {
            TaskStatus::Done => {}
            TaskStatus::Failed if at_budget(crew, &plan)? => {
                match more_budget(run, &plan, &flags.finish)? {
                    // The same planning goes on: not a session of its own, nor a failed task.
                    Ok(()) => {
                        report.failed.retain(|id| *id != plan.id);
                        counts = false;
                        continue;
                    }
                    Err(why) => return Ok((PlanStep::Ended, why)),
                }
            }
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
            send_back(run, run.plan, &words)?;
            continue;
        }
        // A pause ends the wait: the planner says it is paused, and waits for news once resumed.
        let waited = loop {
            match wait_for_news(run, &flags.interrupt, &told, hears_news)? {
                None if !flags.finishing() && unless_paused(run, &flags) => continue,
                waited => break waited,
            }
        };
        let (tasks, stuck) = match waited {
            None => return Ok((PlanStep::Ended, "the team was asked to stop".into())),
            Some(Waited::News { mut news, stuck }) => {
                // A failure or the lead's answer about the task limit makes it plan again;
                // reports and returns only tell it.
                news.allowed = hear_limits(crew, run.plan, &news)?;
                told.hear(&news);
                counts = news.must_plan();
                send_back(run, run.plan, &news.text(&stuck))?;
                continue;
            }
            Some(Waited::SubPlan(sub_plan)) => {
                if let Some(ended) = before_session(run, &flags, &sub_plan, true, &mut sessions)? {
                    return Ok(ended);
                }
                if let Some(ended) = plan_apart(run, *sub_plan, &flags.finish, report)? {
                    return Ok(ended);
                }
                continue;
            }
            Some(Waited::Settled { tasks, stuck }) => (tasks, stuck),
        };
        // Settled, and the planner told of every failure: carried out when none failed or
        // waits.
        if !carried_out(&tasks) {
            return Ok((
                PlanStep::Ended,
                format!(
                    "the plan's failures stand and the planner planned nothing more for them \
                     ({} waiting on them): the lead takes it from here",
                    stuck.len()
                ),
            ));
        }
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
                            "the judge could not judge the goal ({e}): the lead takes it from \
                             here"
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
                        "the judge finds the goal not met and the planner planned nothing more \
                         for it: the lead takes it from here"
                            .into(),
                    ));
                }
                missing_at = Some(tasks.len());
                send_back(
                    run,
                    run.plan,
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
}

/// The plan's approval once its session ended: `None` when approved (or nothing waits for
/// it), the lead's words when not.
fn approve(run: &PlannerRun<'_, '_>, plan: &Task, stop: &AtomicBool) -> Result<Option<String>> {
    let crew = run.planner;
    let tasks = tasks_of(crew.tasks, &plan.id)?;
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
            let approved = approve_all(crew, &plan.id)?;
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

/// Plan task `plan` (the goal's, or a sub-plan of it) back to its planner, with `why` in its
/// hints for the next session.
fn send_back(run: &PlannerRun<'_, '_>, plan: &str, why: &str) -> Result<()> {
    run.planner.tasks.reopen(plan, why, Reopen::ToItsWorker)?;
    let said = match plan == run.plan {
        true => why.to_string(),
        false => format!("{plan}: {why}"),
    };
    tell(run, PlanStep::SentBack, said);
    Ok(())
}

/// A session of the planner's on sub-plan `sub_plan` (a slice of the goal planned apart),
/// then its tasks' approval as a plan's; what ends the planning, if it does (the planner's
/// agent could not start, the team stopped). A sub-plan the planner failed is news for its
/// next session on the goal.
fn plan_apart(
    run: &PlannerRun<'_, '_>,
    sub_plan: Task,
    stop: &AtomicBool,
    report: &mut WorkerReport,
) -> Result<Option<(PlanStep, String)>> {
    let crew = run.planner;
    let id = sub_plan.id.clone();
    // Its planner reads the project: what its dependencies did must have landed there first.
    if let Some(queue) = &run.team.merge_queue {
        let mut work = Vec::new();
        for dependency in &sub_plan.dependencies {
            if crew
                .tasks
                .task(dependency)?
                .is_some_and(|t| t.kind.is_work())
            {
                work.push(dependency.clone());
            }
        }
        let stopped = || stop.load(std::sync::atomic::Ordering::SeqCst);
        if !queue.wait_decided(&work, &stopped) {
            return Ok(Some((PlanStep::Ended, "the team was asked to stop".into())));
        }
        if !queue.settled(&work) {
            // One was sent back: the sub-plan waits for it again.
            return Ok(None);
        }
    }
    tell(
        run,
        PlanStep::SubPlan,
        format!("{id}: {}", sub_plan.description),
    );
    let Some(held) = take(crew, run.name, sub_plan)? else {
        return Ok(None);
    };
    work_task(crew, run.name, held, false, report)?;
    if report.cause.is_some() {
        let why = "the planner's agent could not start".to_string();
        return Ok(Some((PlanStep::Ended, why)));
    }
    let now = current(crew, &id)?;
    if now.status != TaskStatus::Done {
        return Ok(None);
    }
    match approve(run, &now, stop) {
        Ok(None) => Ok(None),
        Ok(Some(words)) => send_back(run, &id, &words).map(|()| None),
        Err(_) if stop.load(std::sync::atomic::Ordering::SeqCst) => {
            Ok(Some((PlanStep::Ended, "the team was asked to stop".into())))
        }
        Err(e) => Err(e),
    }
}

/// Why the planner's wait ended.
enum Waited {
    /// Something the planner was not told yet (for a command planner, only a failure), with
    /// the tasks that can never start as they are.
    News { news: News, stuck: Vec<String> },
    /// A sub-plan of the plan to plan: approved and its dependencies done, or sent back.
    SubPlan(Box<Task>),
    /// No task of the plan can move any more, the merge queue has landed or left each done
    /// one, and the planner was told of everything.
    Settled {
        tasks: Vec<Task>,
        stuck: Vec<String>,
    },
}

/// Waits for news of the plan the planner was not `told` of (`everything`: reports and the
/// queue's returns too, else failures only), or until no task of the plan can move any more
/// and the merge queue has had its turn at each done one (the judge or the check may send it
/// back, unfinished again); `None` when asked to stop.
fn wait_for_news(
    run: &PlannerRun<'_, '_>,
    stop: &AtomicBool,
    told: &Told,
    everything: bool,
) -> Result<Option<Waited>> {
    let crew = run.planner;
    let stopped = || stop.load(std::sync::atomic::Ordering::SeqCst);
    let queued = || {
        run.team
            .merge_queue
            .as_ref()
            .map(|q| q.entries())
            .unwrap_or_default()
    };
    // The lead's answers about the plan's limits, and the workers' open questions for a
    // planner that answers them: watched beside the board.
    let asked = || -> baton_core::Result<Vec<baton_core::inbox::Question>> {
        Ok(baton_core::inbox::questions(crew.documents, false)?.items)
    };
    let folders: &[&str] = &[baton_core::inbox::QUESTIONS];
    loop {
        let look = || -> baton_core::Result<Option<Waited>> {
            let now = where_it_stands(crew.tasks, run.plan, Some(run.name))?;
            let news = told.news(&now.tasks, &queued(), &asked()?, everything);
            if !news.is_empty() {
                let stuck = now.stuck;
                return Ok(Some(Waited::News { news, stuck }));
            }
            if let Some(sub_plan) = now.sub_plan {
                return Ok(Some(Waited::SubPlan(Box::new(sub_plan))));
            }
            Ok((!now.moving).then_some(Waited::Settled {
                tasks: now.tasks,
                stuck: now.stuck,
            }))
        };
        let Some(waited) = wait_for_change(crew, folders, stop, look)? else {
            return Ok(None);
        };
        let (Waited::Settled { tasks, .. }, Some(queue)) = (&waited, &run.team.merge_queue) else {
            return Ok(Some(waited));
        };
        if !queue.wait_decided(&done_of(tasks), &stopped) {
            return Ok(None);
        }
        // Landed or left for the lead, each: settled. One sent back is worked again, and is
        // news for an agent planner.
        if let Some((now, stuck)) = settled(crew.tasks, run.plan)?
            && queue.settled(&done_of(&now))
            && told
                .news(&now, &queue.entries(), &asked()?, everything)
                .is_empty()
        {
            return Ok(Some(Waited::Settled { tasks: now, stuck }));
        }
    }
}

/// The ids of the done ones of `tasks` that the merge queue lands (not the sub-plans).
fn done_of(tasks: &[Task]) -> Vec<String> {
    tasks
        .iter()
        .filter(|t| t.status == TaskStatus::Done && t.kind.is_work())
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

pub(super) fn tell(run: &PlannerRun<'_, '_>, step: PlanStep, detail: String) {
    (run.planner.progress)(Progress::Plan {
        planner: run.name.to_string(),
        plan: run.plan.to_string(),
        step,
        detail,
    });
}
