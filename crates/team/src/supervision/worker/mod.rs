//! One worker, the one engine for working tasks: a team's supervisor runs one per worker, and
//! `baton worker loop` runs one on its own (the `exec` profile, no records). It takes up the
//! tasks it still holds (its supervisor was killed), then claims the next ready task, works
//! each in its own worktree, and runs attempts at it until the task is reported, the attempts
//! run out, or a budget is reached. What an ended attempt means is decided from the store: the
//! agent reported the task (go on), crashed (start another attempt after a back-off, in the
//! same worktree), exited without reporting (fail the task with its last words, or retry if
//! the profile says so; an `exec` command reports by its exit status), or was stopped (hand
//! the task back, or fail it for its budget). Its changes to the task ride out a store that
//! went away for a while ([`crate::supervision::store_outage`]).

use std::time::Duration;

use baton_core::{Timestamp, Usage, WorkerState};
use baton_live::claim_wait::{ClaimWait, WaitedClaim, claim_when_ready};

use crate::Progress;
use crate::error::Result;
use crate::outcome::board_summary::BoardSummary;
use crate::supervision::attempt::Interrupted;
use crate::supervision::crew::{Crew, WorkerFlags};
mod task;

use task::hand_back;
pub(crate) use task::work_task;

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
    /// The report of worker `name`, before it did anything.
    pub(crate) fn of(name: &str) -> WorkerReport {
        WorkerReport {
            name: name.to_string(),
            ..WorkerReport::default()
        }
    }

    fn finished(&self) -> usize {
        self.completed.len() + self.failed.len()
    }
}

/// Runs worker `name` until it drains the queue or is asked to stop: the tasks it still holds
/// first, then each task it claims, one at a time.
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
    take_up_held(crew, name, &flags, &mut report)?;
    let already_tripped = report.cause.is_some();
    loop {
        if let Some(end) = reason_to_stop(crew, &flags, &report, already_tripped) {
            report.end = end;
            break;
        }
        if flags.paused() {
            crew.sit_out_pause(name, &flags, &mut record, "paused by the lead");
            continue;
        }
        let claim = match next_claim(crew, name, &flags, &mut record, &report)? {
            Next::Task(claim) => claim,
            Next::LookAgain => continue,
            Next::Drained => break,
            Next::Stop => {
                report.end = WorkerEnd::Stopped;
                break;
            }
        };
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
    stopped(crew, &mut record, &report);
    Ok(report)
}

/// Takes up the tasks worker `name` holds from before (its supervisor was killed), if each
/// lease is still its own.
fn take_up_held(
    crew: &Crew<'_>,
    name: &str,
    flags: &WorkerFlags,
    report: &mut WorkerReport,
) -> Result<()> {
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
            work_task(crew, name, task, true, report)?;
        }
    }
    Ok(())
}

/// Why the worker stops before it claims again, if it does: its agents could not start, it
/// was asked to, or it finished the tasks it was allowed.
fn reason_to_stop(
    crew: &Crew<'_>,
    flags: &WorkerFlags,
    report: &WorkerReport,
    tripped: bool,
) -> Option<WorkerEnd> {
    if tripped {
        Some(WorkerEnd::Tripped)
    } else if flags.finishing() {
        Some(WorkerEnd::Stopped)
    } else if crew
        .pace
        .max_tasks
        .is_some_and(|max| report.finished() >= max)
    {
        Some(WorkerEnd::MaxTasks)
    } else {
        None
    }
}

/// What a worker's wait for its next task came to.
enum Next {
    Task(Box<baton_core::Claimed>),
    /// The merge queue may still send a task back: the queue decided, so look again.
    LookAgain,
    /// Nothing can become ready without new tasks.
    Drained,
    Stop,
}

/// Waits for worker `name`'s next task and claims it, recorded as waiting only while it waits
/// (a worker that finds its next task at once goes from one task's record to the next's).
fn next_claim(
    crew: &Crew<'_>,
    name: &str,
    flags: &WorkerFlags,
    record: &mut baton_core::WorkerRecord,
    report: &WorkerReport,
) -> Result<Next> {
    let wait = ClaimWait {
        timeout: None,
        stop_when_drained: !crew.pace.stay,
        mode: crew.pace.mode,
        stop: Some(&flags.interrupt),
    };
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
            Ok((file, now)) => BoardSummary::of(&file, now, crew.tasks.lease()).waits_for(),
            Err(_) => "waiting for a ready task".to_string(),
        };
        record.last_event = Some(waits_for);
        crew.save(record);
        (crew.progress)(Progress::Waiting {
            worker: name.to_string(),
            how: backend.to_string(),
        })
    })?;
    Ok(match claimed {
        WaitedClaim::Claimed { claim } => {
            if let Some(from) = &claim.reclaimed_from {
                (crew.progress)(Progress::TookOver {
                    worker: name.to_string(),
                    task: claim.task.id.clone(),
                    from: from.clone(),
                });
            }
            Next::Task(claim)
        }
        // A task the merge queue sends back is this worker's to take up: drained only once
        // the queue has nothing left to decide.
        WaitedClaim::Drained if crew.merge_queue.as_ref().is_some_and(|queue| !queue.idle()) => {
            if let Some(queue) = &crew.merge_queue {
                queue.wait_idle(&|| flags.finishing());
            }
            Next::LookAgain
        }
        WaitedClaim::Drained | WaitedClaim::TimedOut => Next::Drained,
        // Paused while it waited: it claims nothing until resumed.
        WaitedClaim::Stopped if !flags.finishing() => Next::LookAgain,
        WaitedClaim::Stopped => Next::Stop,
    })
}

/// The worker's record once it stopped, saying what it did (or why its agents could not
/// start), and its stop told.
fn stopped(crew: &Crew<'_>, record: &mut baton_core::WorkerRecord, report: &WorkerReport) {
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
    crew.save(record);
    (crew.progress)(Progress::Stopped {
        worker: report.name.clone(),
    });
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

/// Marks how an interrupted attempt ended, for progress output.
impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Interrupted::Budget(reason) => f.write_str(reason),
            Interrupted::StopNow => f.write_str("asked to stop now"),
        }
    }
}
