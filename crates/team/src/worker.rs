//! One worker, the one engine for working tasks: a team's supervisor runs one per worker, and
//! `baton worker loop` runs one on its own (the `exec` profile, no records). It takes up the
//! tasks it still holds (its supervisor was killed), then claims the next ready task, works
//! each in its own worktree, and runs attempts at it until the task is reported, the attempts
//! run out, or a budget is reached. What an ended attempt means is decided from the store: the
//! agent reported the task (go on), crashed (start another attempt after a back-off, in the
//! same worktree), exited without reporting (fail the task with its last words, or retry if
//! the profile says so; an `exec` command reports by its exit status), or was stopped (hand
//! the task back, or fail it for its budget). Its changes to the task ride out a store that
//! went away for a while ([`crate::settle`]).

use std::time::Duration;

use baton_core::{Attempt, AttemptEnd, Task, Timestamp, Usage, WorkerState};
use baton_git::Worktree;
use baton_live::claim_wait::{ClaimWait, WaitedClaim, claim_when_ready};

use crate::Progress;
use crate::agent_cli::Session;
use crate::attempt::{AttemptPlan, Interrupted, run_attempt};
use crate::crew::{Crew, WorkerFlags};
use crate::error::Result;
use crate::glance::Glance;
use crate::launch::{Attempting, launch};
use crate::prompt::{TaskBrief, task_prompt};
use crate::settle::{released, reported_by, settle, started};

/// What a worker did before it stopped.
#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct WorkerReport {
    pub name: String,
    pub completed: Vec<String>,
    pub failed: Vec<String>,
    pub released: Vec<String>,
    pub usage: Usage,
    pub end: WorkerEnd,
    /// Why it stopped early ([`WorkerEnd::Tripped`]): its agents' last start failure.
    pub cause: Option<String>,
    /// Attempts in a row whose agent could not start.
    #[serde(skip)]
    not_started: u32,
    /// The finished task whose worktree this worker left: its next task takes it over.
    #[serde(skip)]
    left_worktree: Option<LeftWorktree>,
}

/// The worktree of the finished task a worker left, for its next task to take over.
#[derive(Debug, Clone)]
struct LeftWorktree {
    task: String,
    /// [`baton_git::Reuse::seen_clean`].
    seen_clean: bool,
}

/// Why a worker stopped.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkerEnd {
    /// No work can become ready without new tasks.
    #[default]
    Drained,
    /// Asked to stop.
    Stopped,
    /// It finished the tasks it was allowed ([`Crew::max_tasks`]).
    MaxTasks,
    /// Its agents could not start [`BREAKER`] times in a row (a missing program, a typo in the
    /// command): it stopped rather than burn the queue, the tasks handed back untouched.
    Tripped,
}

/// How many attempts in a row whose agent could not start stop a worker.
pub const BREAKER: u32 = 3;

impl WorkerReport {
    fn finished(&self) -> usize {
        self.completed.len() + self.failed.len()
    }
}

/// Runs worker `name` until it drains the queue or is asked to stop.
pub fn run_worker(crew: &Crew<'_>, name: &str) -> Result<WorkerReport> {
    let flags = crew.flags(name);
    // Its agents are born in its pids cgroup (where the machine has cgroup v1 and Baton may
    // write it), rather than moved into one of their own at each start.
    let sandbox = &crew.profile.sandbox;
    let _cgroup = sandbox
        .enabled
        .then(|| baton_sandbox::pids_cgroup::ThreadCgroup::enter(sandbox.max_processes))
        .flatten();
    let mut report = WorkerReport {
        name: name.to_string(),
        ..WorkerReport::default()
    };
    let mut record = crew.record(name, WorkerState::Waiting);
    crew.save(&record);
    // Tasks it holds from before (its supervisor was killed): taken up first, if the lease
    // is still its own.
    let renewed = crew.tasks.heartbeat(name).unwrap_or_default();
    for id in renewed {
        if flags.finishing() {
            report.end = WorkerEnd::Stopped;
            break;
        }
        if let Some(task) = crew.task(&id) {
            (crew.progress)(Progress::Resumed {
                worker: name.to_string(),
                task: id.clone(),
            });
            work_task(crew, name, task, true, &mut report)?;
        }
    }
    let already_tripped = report.cause.is_some();
    loop {
        if already_tripped {
            report.end = WorkerEnd::Tripped;
            break;
        }
        if flags.finishing() {
            report.end = WorkerEnd::Stopped;
            break;
        }
        if crew.max_tasks.is_some_and(|max| report.finished() >= max) {
            report.end = WorkerEnd::MaxTasks;
            break;
        }
        let wait = ClaimWait {
            timeout: None,
            stop_when_drained: !crew.stay,
            mode: crew.mode,
            stop: Some(&flags.finish),
        };
        // Recorded as waiting only when it waits: a worker that finds its next task at once
        // goes from one task's record to the next's.
        let claimed = claim_when_ready(crew.tasks, name, wait, |backend| {
            record.state = WorkerState::Waiting;
            record.task = None;
            record.pid = None;
            record.attempt = None;
            record.usage = report.usage;
            record.updated_at = Timestamp::now();
            // Said out loud: what it waits for (a lease held by another worker until when,
            // dependencies), as the board is when the wait begins.
            let waits_for = match crew.tasks.snapshot() {
                Ok((file, now)) => Glance::of(&file, now, crew.tasks.lease()).waits_for(),
                Err(_) => "waiting for a ready task".to_string(),
            };
            record.last_event = Some(waits_for);
            crew.save(&record);
            (crew.progress)(Progress::Waiting {
                worker: name.to_string(),
                how: backend.to_string(),
            })
        })?;
        let claim = match claimed {
            WaitedClaim::Claimed { claim } => *claim,
            // A task the merge queue sends back is this worker's to take up: drained only
            // once the queue has nothing left to decide.
            WaitedClaim::Drained
                if crew.merge_queue.as_ref().is_some_and(|queue| !queue.idle()) =>
            {
                if let Some(queue) = &crew.merge_queue {
                    queue.wait_idle(&|| flags.finishing());
                }
                continue;
            }
            WaitedClaim::Drained | WaitedClaim::TimedOut => break,
            WaitedClaim::Stopped => {
                report.end = WorkerEnd::Stopped;
                break;
            }
        };
        if let Some(from) = &claim.reclaimed_from {
            (crew.progress)(Progress::TookOver {
                worker: name.to_string(),
                task: claim.task.id.clone(),
                from: from.clone(),
            });
        }
        if flags.stop_now() {
            // Stopped as the claim landed: handed back untouched.
            hand_back(crew, name, &claim.task.id, &mut report)?;
            report.end = WorkerEnd::Stopped;
            break;
        }
        work_task(crew, name, claim.task, false, &mut report)?;
        if report.cause.is_some() {
            report.end = WorkerEnd::Tripped;
            break;
        }
    }
    record.state = WorkerState::Stopped;
    record.task = None;
    record.pid = None;
    record.usage = report.usage;
    record.updated_at = Timestamp::now();
    record.last_event = Some(match &report.cause {
        Some(cause) => format!("stopped: its agents could not start ({cause})"),
        None => format!(
            "stopped: {} done, {} failed, {} handed back",
            report.completed.len(),
            report.failed.len(),
            report.released.len()
        ),
    });
    crew.save(&record);
    (crew.progress)(Progress::Stopped {
        worker: name.to_string(),
    });
    Ok(report)
}

/// Works one claimed task to its end: attempts until it is reported, given up or stopped.
fn work_task(
    crew: &Crew<'_>,
    name: &str,
    task: Task,
    resumed: bool,
    report: &mut WorkerReport,
) -> Result<()> {
    let id = task.id.clone();
    let flags = crew.flags(name);
    if task.status == baton_core::TaskStatus::Claimed
        && let Err(e) = settle(crew.tasks, &id, &flags.now, started(name), || {
            crew.tasks.start(name, &id)
        })
    {
        (crew.progress)(Progress::Trouble {
            worker: name.to_string(),
            message: format!("cannot start {id}: {e}"),
        });
        return Ok(());
    }
    let left = report.left_worktree.take();
    let reuse = left.as_ref().map(|left| baton_git::Reuse {
        task: &left.task,
        seen_clean: left.seen_clean,
    });
    let worktree: Option<Worktree> = match &crew.worktrees {
        Some(worktrees) => match worktrees.prepare_claimed(crew.tasks, name, &task, reuse) {
            Ok(w) => {
                (crew.progress)(Progress::InWorktree {
                    worker: name.to_string(),
                    task: id.clone(),
                    path: w.workdir.clone(),
                    branch: w.branch.clone(),
                    reused: w.reused,
                });
                Some(w)
            }
            Err(e @ baton_git::GitError::DependenciesConflict { .. }) => {
                // Failed already, held for the lead to merge its dependencies.
                (crew.progress)(Progress::GaveUp {
                    worker: name.to_string(),
                    task: id.clone(),
                    reason: e.to_string(),
                });
                report.failed.push(id);
                return Ok(());
            }
            Err(e) => {
                // Handed back already; the lead sees why.
                (crew.progress)(Progress::Trouble {
                    worker: name.to_string(),
                    message: format!("no worktree for {id}, handed it back: {e}"),
                });
                report.released.push(id);
                return Ok(());
            }
        },
        None => None,
    };
    let mut earlier = crew.attempts(&id)?;
    let mut resume_session = None;
    if resumed
        && let Some(last) = earlier.last_mut()
        && last.end == AttemptEnd::Running
    {
        // Its supervisor died with it: that attempt ended then.
        last.end = AttemptEnd::Stopped;
        last.reason = Some("its supervisor stopped".into());
        last.ended_at.get_or_insert_with(Timestamp::now);
        crew.save_attempt(last)?;
        resume_session = last
            .session_id
            .clone()
            .filter(|_| crew.profile.kind.resumes());
    }
    // The agent CLI's own state for this task: kept past a supervisor that died (its session
    // resumes from it), made afresh otherwise, and removed when the worker is done with it.
    let home = KeptWhileWorked(crate::agent_home::AgentHome::of(crew.local, &id)?);
    if resume_session.is_none() {
        home.0.clear();
    }
    let result_path = crew.local.result_file(&id)?;
    let mut backoff = Duration::from_secs_f64(crew.profile.backoff_secs);
    loop {
        let number = earlier.last().map_or(1, |a| a.attempt + 1);
        let mut spent = Usage::default();
        for a in &earlier {
            spent.add(&a.usage);
        }
        let session = crew.profile.kind.session(resume_session.take());
        let prompt = match &session {
            Session::Resume(_) => format!(
                "Baton restarted you after your supervisor stopped. Go on with task {id} as agent \
                 {name} from where you were, and report it with task_complete or task_fail when done."
            ),
            _ => task_prompt(
                crew.tasks,
                &TaskBrief {
                    reporting: crew.profile.kind.reporting(),
                    agent: name,
                    task: &task,
                    worktree: worktree.as_ref(),
                    earlier: &earlier,
                },
            ),
        };
        let budget_left_usd = crew
            .profile
            .max_cost_usd
            .map(|cap| (cap - spent.cost_usd).max(0.0));
        let planned = launch(
            &crew.profile,
            &crew.setting,
            &Attempting {
                agent: name,
                task: &task,
                attempt: number,
                worktree: worktree.as_ref(),
                prompt: &prompt,
                session: &session,
                result_path: &result_path,
                budget_left_usd,
                sandboxed: crew.profile.sandbox.enabled,
            },
        );
        let planned = match crate::contain::contain(crew, name, &id, worktree.as_ref(), planned) {
            Ok(planned) => planned,
            Err(e) => {
                // Nothing ran: the task goes back, and the error says why.
                let _ = hand_back(crew, name, &id, report);
                return Err(e);
            }
        };
        let finished = match run_attempt(
            crew,
            AttemptPlan {
                worker: name,
                task: &task,
                number,
                launch: planned.launch,
                door: planned.door,
                cgroup: planned.cgroup,
                session: &session,
                spent_before: spent,
                worker_usage: report.usage,
            },
        ) {
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
        let counted = counted_failures(&earlier, task.reset_at);
        let attempts_left = counted.len() < crew.profile.max_attempts as usize;
        match end {
            AttemptEnd::Completed => {
                if let Some(queue) = &crew.merge_queue
                    && worktree.is_some()
                {
                    queue.push(&id, name);
                }
                if worktree.is_some() {
                    report.left_worktree = Some(LeftWorktree {
                        task: id.clone(),
                        seen_clean: finished.seen_clean,
                    });
                }
                report.completed.push(id);
                return Ok(());
            }
            AttemptEnd::Failed => {
                if worktree.is_some() {
                    report.left_worktree = Some(LeftWorktree {
                        task: id.clone(),
                        seen_clean: false,
                    });
                }
                report.failed.push(id);
                return Ok(());
            }
            AttemptEnd::Lost | AttemptEnd::Running | AttemptEnd::NotStarted => return Ok(()),
            AttemptEnd::Stopped => return hand_back(crew, name, &id, report),
            AttemptEnd::Budget => {
                let reason = finished
                    .record
                    .reason
                    .clone()
                    .unwrap_or_else(|| "budget".into());
                fail(crew, name, &id, &reason, report);
                return Ok(());
            }
            AttemptEnd::Crashed | AttemptEnd::Unreported => {
                let retry = attempts_left
                    && (end == AttemptEnd::Crashed || crew.profile.retry_unreported)
                    && !flags.finishing();
                if !retry {
                    // A command's only attempt fails the task as the command said.
                    let reason = match crew.profile.kind.reports_by_exit() && counted.len() == 1 {
                        true => crate::report::attempt_failure(&finished.record, &finished.stderr),
                        false => give_up_reason(&counted),
                    };
                    fail(crew, name, &id, &reason, report);
                    return Ok(());
                }
                (crew.progress)(Progress::Restarting {
                    worker: name.to_string(),
                    task: id.clone(),
                    after: backoff,
                });
                let mut record = crew.record(name, WorkerState::BackingOff);
                record.task = Some(id.clone());
                record.attempt = Some(number);
                record.usage = report.usage;
                record.last_event = Some(format!(
                    "attempt {number} at {id} {}; restarting in {:.1} s",
                    if end == AttemptEnd::Crashed {
                        "crashed"
                    } else {
                        "ended unreported"
                    },
                    backoff.as_secs_f64()
                ));
                crew.save(&record);
                if wait_unless_stopped(&flags, backoff) {
                    return hand_back(crew, name, &id, report);
                }
                backoff = (backoff * 2).min(Duration::from_secs(300));
            }
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

/// Waits `how_long`, ending early when the worker is asked to stop now; true if it was.
fn wait_unless_stopped(flags: &WorkerFlags, how_long: Duration) -> bool {
    let until = std::time::Instant::now() + how_long;
    while std::time::Instant::now() < until {
        if flags.stop_now() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50).min(until - std::time::Instant::now()));
    }
    flags.stop_now()
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
    let failed = settle(crew.tasks, id, &flags.now, reported_by(name), || {
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
fn hand_back(crew: &Crew<'_>, name: &str, id: &str, report: &mut WorkerReport) -> Result<()> {
    let flags = crew.flags(name);
    settle(crew.tasks, id, &flags.now, released(name), || {
        crew.tasks.release(name, id)
    })?;
    (crew.progress)(Progress::Released {
        worker: name.to_string(),
        task: id.to_string(),
    });
    report.released.push(id.to_string());
    Ok(())
}

/// Marks how an interrupted attempt ended, for progress output.
impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Interrupted::Budget(reason) => f.write_str(reason),
            Interrupted::StopNow => f.write_str("asked to stop now"),
        }
    }
}
