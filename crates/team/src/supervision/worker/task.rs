//! One claimed task worked to its end: taken up (started, given its worktree), attempted
//! until it is reported, given up or stopped, each attempt's end decided ([`after`]).

use std::time::Duration;

use baton_core::{Attempt, AttemptEnd, Task, Timestamp, Usage, WorkerState};
use baton_git::Worktree;

use super::{BREAKER, LeftWorktree, WorkerReport, wait_unless_stopped};
use crate::Progress;
use crate::agent_cli::AgentSession;
use crate::error::Result;
use crate::launch::{Attempting, launch};
use crate::prompt::{TaskBrief, task_prompt};
use crate::supervision::attempt::{AttemptPlan, Finished, run_attempt};
use crate::supervision::crew::Crew;
use crate::supervision::store_outage::{change_through_outage, released, reported_by, started};

/// Works one claimed task to its end: attempts until it is reported, given up or stopped.
pub(crate) fn work_task(
    crew: &Crew<'_>,
    name: &str,
    task: Task,
    resumed: bool,
    report: &mut WorkerReport,
) -> Result<()> {
    let id = task.id.clone();
    let flags = crew.flags(name);
    let Some(worktree) = take_up(crew, name, &task, report) else {
        return Ok(());
    };
    // The judge's attempts at the task are numbered among its worker's, and are not its; a
    // start that failed is no earlier attempt (this one takes its number).
    let all = crew.attempts(&id)?;
    let mut next = Attempt::next_number(&all);
    let mut earlier: Vec<Attempt> = all
        .into_iter()
        .filter(|a| a.is_work() && a.end != AttemptEnd::NotStarted)
        .collect();
    let mut resume_session = match resumed {
        true => session_left(crew, &mut earlier)?,
        false => None,
    };
    // The agent CLI's own state for this task: kept past a supervisor that died (its session
    // resumes from it), made afresh otherwise, and removed when the worker is done with it.
    let home = KeptWhileWorked(crate::agent_home::AgentHome::of(crew.local, &id)?);
    if resume_session.is_none() {
        home.0.clear();
    }
    let result_path = crew.local.result_file(&id)?;
    let mut backoff = Duration::from_secs_f64(crew.profile.backoff_secs);
    loop {
        let number = next;
        next += 1;
        let spent = earlier.iter().fold(Usage::default(), |mut sum, a| {
            sum.add(&a.usage);
            sum
        });
        let session = crew.profile.kind.session(resume_session.take());
        let prompt = prompt_for(
            crew,
            &TaskBrief {
                reporting: crew.profile.kind.reporting(),
                agent: name,
                task: &task,
                worktree: worktree.as_ref(),
                earlier: &earlier,
                attempt: number,
            },
            &session,
        );
        let attempting = Attempting {
            agent: name,
            task: &task,
            attempt: number,
            worktree: worktree.as_ref(),
            prompt: &prompt,
            session: &session,
            result_path: &result_path,
            budget_left_usd: crew
                .profile
                .max_cost_usd
                .map(|cap| (cap * crew.caps_factor() - spent.cost_usd).max(0.0)),
            sandboxed: crew.profile.sandbox.enabled,
        };
        let finished = match attempt(crew, &attempting, spent, report) {
            Ok(finished) => finished,
            Err(e) => {
                // Nothing ran: the task goes back rather than stay claimed. The error says why
                // nothing ran, whether or not the hand-back went through.
                let _ = hand_back(crew, name, &id, report);
                return Err(e);
            }
        };
        report.usage.add(&finished.record.usage);
        let end = finished.record.end;
        (crew.progress)(Progress::Ended {
            worker: name.to_string(),
            task: id.clone(),
            attempt: number,
            end,
            reason: finished.record.reason.clone(),
        });
        earlier.push(finished.record.clone());
        if end == AttemptEnd::NotStarted {
            return not_started(crew, name, &id, finished.record.reason, report);
        }
        report.not_started = 0;
        let ended = Ended {
            task: &task,
            worktree: worktree.is_some(),
            finished: &finished,
            earlier: &earlier,
        };
        if let Some(done) = after(crew, name, &ended, report) {
            return done;
        }
        backing_off(crew, name, &id, number, end, backoff, report);
        if wait_unless_stopped(&flags, backoff) {
            return hand_back(crew, name, &id, report);
        }
        backoff = (backoff * 2).min(Duration::from_secs(300));
    }
}

/// Another attempt at task `id` comes after `backoff`: said, and the worker recorded as
/// backing off (attempt `number` ended as `end`).
fn backing_off(
    crew: &Crew<'_>,
    name: &str,
    id: &str,
    number: u32,
    end: AttemptEnd,
    backoff: Duration,
    report: &WorkerReport,
) {
    (crew.progress)(Progress::Restarting {
        worker: name.to_string(),
        task: id.to_string(),
        after: backoff,
    });
    let mut record = crew.record(name, WorkerState::BackingOff);
    record.task = Some(id.to_string());
    record.attempt = Some(number);
    record.usage = report.usage;
    let ended = match end {
        AttemptEnd::Crashed => "crashed",
        _ => "ended unreported",
    };
    record.last_event = Some(format!(
        "attempt {number} at {id} {ended}; restarting in {:.1} s",
        backoff.as_secs_f64()
    ));
    crew.save(&record);
}

/// Takes up a claimed task: started (a claim becomes work) and given its worktree when the
/// crew has them. `None` when the worker is done with it already (it could not be started, or
/// its worktree could not be made: failed or handed back, as the error says).
fn take_up(
    crew: &Crew<'_>,
    name: &str,
    task: &Task,
    report: &mut WorkerReport,
) -> Option<Option<Worktree>> {
    let id = &task.id;
    let flags = crew.flags(name);
    if task.status == baton_core::TaskStatus::Claimed
        && let Err(e) = change_through_outage(crew.tasks, id, &flags.now, started(name), || {
            crew.tasks.start(name, id)
        })
    {
        (crew.progress)(Progress::Trouble {
            worker: name.to_string(),
            message: format!("cannot start {id}: {e}"),
        });
        return None;
    }
    let left = report.left_worktree.take();
    let reuse = left.as_ref().map(|left| baton_git::Reuse {
        task: &left.task,
        seen_clean: left.seen_clean,
    });
    let Some(worktrees) = &crew.worktrees else {
        return Some(None);
    };
    match worktrees.prepare_claimed(crew.tasks, name, task, reuse) {
        Ok(w) => {
            (crew.progress)(Progress::InWorktree {
                worker: name.to_string(),
                task: id.clone(),
                path: w.workdir.clone(),
                branch: w.branch.clone(),
                reused: w.reused,
            });
            Some(Some(w))
        }
        Err(e @ baton_git::GitError::DependenciesConflict { .. }) => {
            // Failed already, held for the lead to merge its dependencies.
            (crew.progress)(Progress::GaveUp {
                worker: name.to_string(),
                task: id.clone(),
                reason: e.to_string(),
            });
            report.failed.push(id.clone());
            None
        }
        Err(e) => {
            // Handed back already; the lead sees why.
            (crew.progress)(Progress::Trouble {
                worker: name.to_string(),
                message: format!("no worktree for {id}, handed it back: {e}"),
            });
            report.released.push(id.clone());
            None
        }
    }
}

/// After a supervisor that died with its attempt running: that attempt ended then (recorded
/// so), and its session, when the agent's CLI can go on with one, is the one to resume.
fn session_left(crew: &Crew<'_>, earlier: &mut [Attempt]) -> Result<Option<String>> {
    let Some(last) = earlier.last_mut().filter(|a| a.end == AttemptEnd::Running) else {
        return Ok(None);
    };
    last.end = AttemptEnd::Stopped;
    last.reason = Some("its supervisor stopped".into());
    last.ended_at.get_or_insert_with(Timestamp::now);
    crew.save_attempt(last)?;
    Ok(last
        .session_id
        .clone()
        .filter(|_| crew.profile.kind.resumes()))
}

/// What the agent is told: its task (`brief`), or, going on with its session, to go on.
fn prompt_for(crew: &Crew<'_>, brief: &TaskBrief<'_>, session: &AgentSession) -> String {
    let (id, name) = (&brief.task.id, brief.agent);
    if brief.task.kind == baton_core::TaskKind::Plan && !matches!(session, AgentSession::Resume(_))
    {
        return crate::plan_prompt::plan_prompt(
            (crew.tasks, crew.documents),
            brief.reporting,
            name,
            brief.task,
        );
    }
    match session {
        AgentSession::Resume(_) => format!(
            "Baton restarted you after your supervisor stopped. Go on with task {id} as agent \
             {name} from where you were, and report it with task_complete or task_fail when done."
        ),
        _ => task_prompt(crew.tasks, brief),
    }
}

/// One attempt: launched in its sandbox, run to its end.
fn attempt(
    crew: &Crew<'_>,
    attempting: &Attempting<'_>,
    spent_before: Usage,
    report: &WorkerReport,
) -> Result<Finished> {
    let planned = launch(&crew.profile, &crew.setting, attempting);
    let seat = crate::attempt_sandbox::Seat {
        agent: attempting.agent,
        task: &attempting.task.id,
        worktree: attempting.worktree,
        judging: false,
        shown: None,
    };
    let planned = crate::attempt_sandbox::sandboxed(crew, &seat, planned)?;
    run_attempt(
        crew,
        AttemptPlan {
            worker: attempting.agent,
            task: attempting.task,
            number: attempting.attempt,
            launch: planned.launch,
            door: planned.door,
            cgroup: planned.cgroup,
            session: attempting.session,
            spent_before,
            worker_usage: report.usage,
            role: baton_core::AttemptRole::Work,
        },
    )
}

/// How an attempt that started ended, as [`after`] reads it.
struct Ended<'a> {
    task: &'a Task,
    /// The task has a worktree.
    worktree: bool,
    finished: &'a Finished,
    /// Every attempt at the task, this one last.
    earlier: &'a [Attempt],
}

/// What the worker does with the task after an attempt: `Some` when it is done with it (done,
/// failed, handed back, or the store says it is over), `None` for another attempt.
fn after(
    crew: &Crew<'_>,
    name: &str,
    ended: &Ended<'_>,
    report: &mut WorkerReport,
) -> Option<Result<()>> {
    let id = &ended.task.id;
    let record = &ended.finished.record;
    let end = record.end;
    let leave_worktree = |report: &mut WorkerReport, seen_clean: bool| {
        if ended.worktree {
            report.left_worktree = Some(LeftWorktree {
                task: id.clone(),
                seen_clean,
            });
        }
    };
    match end {
        AttemptEnd::Completed => {
            if let Some(queue) = &crew.merge_queue
                && ended.worktree
            {
                queue.push(id, name);
            }
            leave_worktree(report, ended.finished.seen_clean);
            report.completed.push(id.clone());
            Some(Ok(()))
        }
        AttemptEnd::Failed => {
            leave_worktree(report, false);
            report.failed.push(id.clone());
            Some(Ok(()))
        }
        AttemptEnd::Lost | AttemptEnd::Running | AttemptEnd::NotStarted => Some(Ok(())),
        AttemptEnd::Stopped => Some(hand_back(crew, name, id, report)),
        AttemptEnd::Budget => {
            let reason = record.reason.clone().unwrap_or_else(|| "budget".into());
            fail(crew, name, id, &reason, report);
            Some(Ok(()))
        }
        AttemptEnd::Crashed | AttemptEnd::Unreported => {
            let counted = counted_failures(ended.earlier, ended.task.reset_at);
            let attempts_left = counted.len() < crew.profile.max_attempts as usize;
            let retry = attempts_left
                && (end == AttemptEnd::Crashed || crew.profile.retry_unreported)
                && !crew.flags(name).finishing();
            if retry {
                return None;
            }
            // A command's only attempt fails the task as the command said.
            let reason = match crew.profile.kind.reports_by_exit() && counted.len() == 1 {
                true => crate::report::attempt_failure(record, &ended.finished.stderr),
                false => give_up_reason(&counted),
            };
            fail(crew, name, id, &reason, report);
            Some(Ok(()))
        }
    }
}

/// A task's agent home, removed when the worker is done with the task however that ends (a
/// supervisor killed outright leaves it, for its attempt to resume from).
struct KeptWhileWorked(crate::agent_home::AgentHome);

impl Drop for KeptWhileWorked {
    fn drop(&mut self) {
        self.0.clear();
    }
}

/// The attempts that count against the profile's `max_attempts`: those that failed (crashed,
/// or ended without reporting) since the lead last reset the task or sent it back. A hand-back,
/// a stop, a budget's end or a supervisor that died is not a failed attempt.
fn counted_failures(attempts: &[Attempt], since: Option<Timestamp>) -> Vec<&Attempt> {
    attempts
        .iter()
        .filter(|a| matches!(a.end, AttemptEnd::Crashed | AttemptEnd::Unreported))
        .filter(|a| since.is_none_or(|since| a.started_at >= since))
        .collect()
}

/// Why a task is given up, from its failed attempts.
fn give_up_reason(attempts: &[&Attempt]) -> String {
    let mut reason = format!("gave up after {} attempt(s):", attempts.len());
    for a in attempts {
        reason.push_str(&format!(
            "\n- attempt {} ({}): {}",
            a.attempt,
            a.agent,
            a.reason.as_deref().unwrap_or("no reason recorded")
        ));
        if let Some(said) = &a.last_message {
            let said: String = said.chars().take(300).collect();
            reason.push_str(&format!("; it last said: {said}"));
        }
    }
    reason
}

fn fail(crew: &Crew<'_>, name: &str, id: &str, reason: &str, report: &mut WorkerReport) {
    let flags = crew.flags(name);
    let failed = change_through_outage(crew.tasks, id, &flags.now, reported_by(name), || {
        crew.tasks.fail(name, id, reason)
    });
    match failed {
        Ok(_) => {
            (crew.progress)(Progress::GaveUp {
                worker: name.to_string(),
                task: id.to_string(),
                reason: reason.to_string(),
            });
            report.failed.push(id.to_string());
        }
        Err(e) => (crew.progress)(Progress::Trouble {
            worker: name.to_string(),
            message: format!("cannot fail {id}: {e}"),
        }),
    }
}

/// After an attempt whose agent could not start: the task goes back untouched (it is not the
/// task's fault), and the [`BREAKER`]th such attempt in a row stops the worker with its cause.
fn not_started(
    crew: &Crew<'_>,
    name: &str,
    id: &str,
    reason: Option<String>,
    report: &mut WorkerReport,
) -> Result<()> {
    report.not_started += 1;
    let reason = reason.unwrap_or_else(|| "its agent could not start".into());
    hand_back(crew, name, id, report)?;
    if report.not_started >= BREAKER {
        (crew.progress)(Progress::Tripped {
            worker: name.to_string(),
            attempts: report.not_started,
            cause: reason.clone(),
        });
        report.cause = Some(reason);
    }
    Ok(())
}

/// Hands task `id` back to the queue untouched (the worker was stopped, or nothing could run).
pub(super) fn hand_back(
    crew: &Crew<'_>,
    name: &str,
    id: &str,
    report: &mut WorkerReport,
) -> Result<()> {
    let flags = crew.flags(name);
    change_through_outage(crew.tasks, id, &flags.now, released(name), || {
        crew.tasks.release(name, id)
    })?;
    (crew.progress)(Progress::Released {
        worker: name.to_string(),
        task: id.to_string(),
    });
    report.released.push(id.to_string());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attempt(number: u32, end: AttemptEnd, started_at: Timestamp) -> Attempt {
        Attempt {
            task: "t1".into(),
            attempt: number,
            agent: format!("w{number}"),
            host: "h".into(),
            profile: "exec".into(),
            started_at,
            ended_at: None,
            end,
            reason: Some(format!("reason {number}")),
            session_id: None,
            usage: Usage::default(),
            last_message: (number == 2).then(|| "x".repeat(400)),
            events: 0,
            sandboxed: false,
            role: baton_core::AttemptRole::Work,
        }
    }

    /// Only crashes and unreported ends count against a task's attempts, and only since the
    /// lead last reset it.
    #[test]
    fn failures_since_the_last_reset_count_and_other_ends_do_not() {
        let reset = Timestamp::now();
        let before = reset.before(Duration::from_secs(60));
        let after = reset.after(Duration::from_secs(1));
        let attempts = [
            attempt(1, AttemptEnd::Crashed, before),
            attempt(2, AttemptEnd::Unreported, after),
            attempt(3, AttemptEnd::Stopped, after),
            attempt(4, AttemptEnd::Crashed, after),
        ];
        let numbers = |since| -> Vec<u32> {
            counted_failures(&attempts, since)
                .iter()
                .map(|a| a.attempt)
                .collect()
        };
        assert_eq!(numbers(None), [1, 2, 4]);
        assert_eq!(numbers(Some(reset)), [2, 4]);
    }

    #[test]
    fn a_given_up_task_says_each_attempt_why_and_its_last_words_cut() {
        let now = Timestamp::now();
        let (one, two) = (
            attempt(1, AttemptEnd::Crashed, now),
            attempt(2, AttemptEnd::Unreported, now),
        );
        let reason = give_up_reason(&[&one, &two]);
        assert!(
            reason.starts_with("gave up after 2 attempt(s):"),
            "{reason}"
        );
        assert!(reason.contains("\n- attempt 1 (w1): reason 1"), "{reason}");
        assert!(
            reason.contains("\n- attempt 2 (w2): reason 2; it last said: "),
            "{reason}"
        );
        assert!(!reason.contains(&"x".repeat(301)), "cut at 300 characters");
    }
}
