//! Where the planner stops to ask the lead: before each session (a pause waited out, the
//! sessions a plan gets), when a session ended at its budget, and the lead's answers about the
//! tasks a plan may have, which the planner hears as news. With `--plan auto` nobody is there
//! to ask, and a limit ends the planning as it did.

use std::sync::atomic::AtomicBool;

use baton_core::inbox::PlanLimit;
use baton_core::{AttemptEnd, LEAD, Task, TaskEdit, WorkerState};

use crate::error::Result;
use crate::planning::approval::{Decision, ask_to_go_on, decision_of};
use crate::planning::news::News;
use crate::planning::planner::{PlanStep, PlannerRun, tell};
use crate::planning::{MAX_SESSIONS, PlanApproval};
use crate::supervision::crew::{Crew, WorkerFlags};

/// The sessions that planned, and how many the lead allows before it is asked for more.
pub(super) struct Sessions {
    pub planned: u32,
    pub allowed: u32,
}

/// Before a session on plan task `plan` (the goal's, or a sub-plan): a pause waited out, and,
/// for a session that plans (`counts`), the lead asked for more once the allowed ones are used;
/// `Some` says why planning ends instead.
pub(super) fn before_session(
    run: &PlannerRun<'_, '_>,
    flags: &WorkerFlags,
    plan: &Task,
    counts: bool,
    sessions: &mut Sessions,
) -> Result<Option<(PlanStep, String)>> {
    if !unless_paused(run, flags) {
        return Ok(Some((PlanStep::Ended, "the team was asked to stop".into())));
    }
    if !counts {
        return Ok(None);
    }
    if sessions.planned == sessions.allowed {
        match more_sessions(run, plan, sessions.planned, &flags.finish)? {
            Ok(()) => sessions.allowed += MAX_SESSIONS,
            Err(why) => return Ok(Some((PlanStep::Ended, why))),
        }
    }
    sessions.planned += 1;
    Ok(None)
}

/// Waits while the lead has paused planning (`baton team pause planner`): the planner starts
/// no session, and news waits for it. Whether planning may go on (not asked to stop).
pub(super) fn unless_paused(run: &PlannerRun<'_, '_>, flags: &WorkerFlags) -> bool {
    if !flags.paused() {
        return true;
    }
    let crew = run.planner;
    let mut record = crew.record(run.name, WorkerState::Paused);
    let go_on = crew.sit_out_pause(run.name, flags, &mut record, "planning paused by the lead");
    if go_on {
        record.state = WorkerState::Waiting;
        record.last_event = Some("planning resumed by the lead".into());
        record.updated_at = baton_core::Timestamp::now();
        crew.save(&record);
    }
    go_on
}

/// The planner has planned `planned` times and must plan again: with `--plan review` the lead
/// is asked whether it may go on ([`MAX_SESSIONS`] more); with `--plan auto` no one is there to
/// ask, and planning ends. `Err` says why it ends.
pub(super) fn more_sessions(
    run: &PlannerRun<'_, '_>,
    plan: &Task,
    planned: u32,
    stop: &AtomicBool,
) -> Result<std::result::Result<(), String>> {
    let limit = format!("{planned} planning sessions and the plan is not settled");
    if run.approval == PlanApproval::Auto {
        return Ok(Err(format!("{limit}: the lead takes it from here")));
    }
    let question = format!(
        "The planner has planned {} {planned} times and the plan is not settled yet. Why it \
         would plan again:\n{}\nMay it plan on ({MAX_SESSIONS} more sessions)?",
        plan.id,
        baton_core::text::prefix(last_reason(&plan.context.hints), 2048),
    );
    let asking = (PlanLimit::Sessions, question.as_str());
    match ask_to_go_on(run.planner, run.name, plan, asking, stop, |id| {
        tell(run, PlanStep::AtLimit, id.to_string())
    })? {
        Decision::Approved { by } => {
            tell(
                run,
                PlanStep::SentBack,
                format!("{by} lets the planner plan on"),
            );
            Ok(Ok(()))
        }
        Decision::Rejected { comment } => Ok(Err(format!("{limit}; the lead said: {comment}"))),
        Decision::Stopped => Ok(Err("the team was asked to stop".into())),
    }
}

/// Whether plan task `plan` failed because its planner's session reached a budget (the
/// plan's cost, turns or time, or the planner's own budget).
pub(super) fn at_budget(crew: &Crew<'_>, plan: &Task) -> Result<bool> {
    let attempts = crew.attempts(&plan.id)?;
    Ok(attempts
        .iter()
        .rfind(|a| a.is_work())
        .is_some_and(|a| a.end == AttemptEnd::Budget))
}

/// The planner's session on `plan` ended at a budget: with `--plan review` the lead is asked
/// whether it may go on with as much again (each of its caps raised), and the plan task is
/// its again, with why in its hints; with `--plan auto` no one is there to ask, and planning
/// ends. `Err` says why it ends.
pub(super) fn more_budget(
    run: &PlannerRun<'_, '_>,
    plan: &Task,
    stop: &AtomicBool,
) -> Result<std::result::Result<(), String>> {
    let crew = run.planner;
    let reason = plan
        .failure_reason
        .clone()
        .unwrap_or_else(|| "budget".into());
    if run.approval == PlanApproval::Auto {
        return Ok(Err(format!(
            "the plan task failed: {reason}: the lead takes it from here"
        )));
    }
    let question = format!(
        "The planner of {} reached its budget ({reason}); its sessions cost ${:.4} so far. May          it plan on, with as much again of each of its caps?",
        plan.id,
        crew.spent_usd()
    );
    let asking = (PlanLimit::Budget, question.as_str());
    match ask_to_go_on(crew, run.name, plan, asking, stop, |id| {
        tell(run, PlanStep::AtLimit, id.to_string())
    })? {
        Decision::Approved { by } => {
            crew.raise_caps();
            crew.tasks.reset(&plan.id, true)?;
            let why = format!(
                "Your last session ended at its budget ({reason}) and the lead lets you plan \
                 on: the board and the master plan hold what you did; finish the plan."
            );
            let hints = format!("{}\n\n{why}", plan.context.hints.trim());
            crew.tasks.edit_task(
                &plan.id,
                TaskEdit {
                    hints: Some(hints.trim().to_string()),
                    ..TaskEdit::default()
                },
            )?;
            tell(
                run,
                PlanStep::SentBack,
                format!("{by} lets the planner go on past its budget"),
            );
            Ok(Ok(()))
        }
        Decision::Rejected { comment } => Ok(Err(format!("{reason}; the lead said: {comment}"))),
        Decision::Stopped => Ok(Err("the team was asked to stop".into())),
    }
}

/// Hears the lead's answers in `news` about goal's plan `plan`'s task limit (`go on` lets it
/// have more): what the plan may have after.
pub(super) fn hear_limits(crew: &Crew<'_>, plan: &str, news: &News) -> Result<usize> {
    let mut allowed = baton_core::plans::allowance(crew.documents, plan)?.tasks;
    for question in &news.limits {
        let said = question.answer().unwrap_or_default();
        let raise = matches!(decision_of(said, LEAD), Decision::Approved { .. });
        allowed = baton_core::plans::hear_answer(crew.documents, plan, &question.id, raise)?.tasks;
    }
    Ok(allowed)
}

/// The last of the reasons a plan task's hints gather (each sending back adds one, after a
/// blank line).
fn last_reason(hints: &str) -> &str {
    hints.trim().rsplit("\n\n").next().unwrap_or_default()
}
