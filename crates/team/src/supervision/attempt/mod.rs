//! One attempt at a task: the agent started, its output read into the transcript (stored in
//! batches as it comes), its lease kept while it lives, its budget watched, and, when it
//! ends, what became of the task decided from the store (not from what the agent printed):
//! reported by the agent, crashed, exited without reporting, stopped, or lost.

use std::io::Write;
use std::time::{Duration, Instant};

use baton_core::transcript::Stream;
use baton_core::{Attempt, AttemptEnd, AttemptRole, Happened, Task, TaskStatus, Timestamp, Usage};

use crate::agent_cli::{AgentSession, OutputReader, Reading};
use crate::error::Result;
use crate::exec::{MAX_ERROR_BYTES, MAX_OUTPUT_BYTES, Tail};
use crate::process::{AgentProcess, Launch, Output};
use crate::report::{self, Printed};
use crate::supervision::crew::{Crew, working};

mod lingering;
mod transcript;

use lingering::Lingering;
use transcript::Transcript;

/// How often a running attempt looks at its stop flags and its wall-time budget.
const LOOK_EVERY: Duration = Duration::from_millis(100);
/// How long a stopped agent gets to exit before it is killed.
pub const STOP_GRACE: Duration = Duration::from_secs(5);
/// An agent whose shell exits 126 (cannot execute) or 127 (not found) within this long of its
/// start could not start: a typo in the command, or a program missing, not the task's fault.
const START_WINDOW: Duration = Duration::from_secs(5);

/// Why the supervisor stopped an agent before it ended by itself.
#[derive(Debug, Clone, PartialEq)]
pub enum Interrupted {
    Budget(String),
    StopNow,
}

/// What happened, for the worker to act on.
#[derive(Debug)]
pub struct Finished {
    pub record: Attempt,
    /// The end of what an `exec` command wrote to stderr (within [`MAX_ERROR_BYTES`]).
    pub stderr: String,
    /// The task's worktree was seen with nothing beside its commits after the agent's
    /// processes ended ([`baton_git::Reuse::seen_clean`]).
    pub seen_clean: bool,
}

/// What one attempt is given.
pub struct AttemptPlan<'a> {
    pub worker: &'a str,
    pub task: &'a Task,
    pub number: u32,
    pub launch: Launch,
    /// The sandboxed attempt's door to Baton, closed when the agent ends.
    pub door: Option<crate::attempt_sandbox::AttemptDoor>,
    /// The sandboxed attempt's pids cgroup, removed once the agent's processes are gone.
    pub cgroup: Option<baton_sandbox::pids_cgroup::PidsCgroup>,
    pub session: &'a AgentSession,
    /// What earlier attempts at the task cost, counted against its cap.
    pub spent_before: Usage,
    /// What the worker's agents cost before this attempt, for its record.
    pub worker_usage: Usage,
    /// Work at the task (a worker's, a planner's), or judging it (the team's judge: it holds
    /// no task and no worker's record, and ends when its agent ends).
    pub role: AttemptRole,
}

/// Runs one attempt to its end: started (or not), watched while it runs, wound up when its
/// process ends, and its end decided from the store.
pub fn run_attempt(crew: &Crew<'_>, mut plan: AttemptPlan<'_>) -> Result<Finished> {
    let mut record = new_record(crew, &plan);
    let mut transcript = Transcript::new(crew, plan.worker, &plan.task.id, plan.number);
    transcript.push(Happened::Started {
        command: plan.launch.describe(),
        workdir: plan.launch.workdir.display().to_string(),
    });
    if let Some(sandbox) = &plan.launch.sandbox {
        transcript.push(Happened::Supervisor {
            text: sandbox.summary.clone(),
        });
    }
    // What the door refuses the agent goes into its transcript as it happens.
    let refusals = plan.door.as_mut().and_then(|door| door.refusals());
    let mut process = match AgentProcess::start_hearing(&plan.launch, refusals) {
        Ok(process) => process,
        Err(e) => {
            let message = format!("cannot run {}: {e}", plan.launch.program.display());
            return could_not_start(crew, record, transcript, message);
        }
    };
    announce(crew, &plan, &record, &mut transcript, process.pid);
    let watched = watch(crew, &plan, &mut record, &mut transcript, &mut process);
    wind_up(crew, &mut plan, &mut transcript);
    conclude(crew, &plan, record, transcript, watched)
}

/// An agent whose program could not be run at all: its attempt recorded as not started.
fn could_not_start(
    crew: &Crew<'_>,
    mut record: Attempt,
    mut transcript: Transcript<'_>,
    message: String,
) -> Result<Finished> {
    transcript.push(Happened::Error {
        message: message.clone(),
    });
    record.end = AttemptEnd::NotStarted;
    record.reason = Some(message);
    record.ended_at = Some(Timestamp::now());
    crew.save_attempt_with(&record, &transcript.take(), None)?;
    Ok(Finished {
        record,
        stderr: String::new(),
        seen_clean: false,
    })
}

/// The attempt, its first events and the worker working on it stored as one change, and the
/// start told to whoever follows the team.
fn announce(
    crew: &Crew<'_>,
    plan: &AttemptPlan<'_>,
    record: &Attempt,
    transcript: &mut Transcript<'_>,
    pid: u32,
) {
    // A judge holds no task and is no worker: it has no worker's record.
    let worker = plan.role.is_work().then(|| {
        working(
            crew,
            plan.worker,
            &plan.task.id,
            plan.number,
            pid,
            plan.worker_usage,
        )
    });
    let first = transcript.take();
    if let Err(e) = crew.save_attempt_with(record, &first, worker.as_ref()) {
        (crew.progress)(crate::Progress::Trouble {
            worker: plan.worker.to_string(),
            message: format!("cannot record the attempt: {e}"),
        });
        transcript.put_back(first);
    }
    (crew.progress)(crate::Progress::Started {
        worker: plan.worker.to_string(),
        task: plan.task.id.clone(),
        attempt: plan.number,
        pid,
    });
}

/// What watching a running agent learned by the time its process ended.
struct Watched {
    status: std::io::Result<std::process::ExitStatus>,
    /// Why the supervisor stopped it, if it did.
    interrupted: Option<Interrupted>,
    /// What its output said: usage, session, last words.
    said: Reading,
    /// What an agent that reports by its exit printed (the end of each stream).
    printed: Printed,
    ran_for: Duration,
}

/// Watches the agent until its process ends: its output read into the transcript, its lease
/// renewed, a reported agent that lingers and one over its budget or told to stop now
/// stopped.
fn watch(
    crew: &Crew<'_>,
    plan: &AttemptPlan<'_>,
    record: &mut Attempt,
    transcript: &mut Transcript<'_>,
    process: &mut AgentProcess,
) -> Watched {
    let profile = &crew.profile;
    let mut reader = OutputReader::new(profile.kind).priced(profile.price);
    let mut stdout = Tail::new(MAX_OUTPUT_BYTES);
    let mut stderr = Tail::new(MAX_ERROR_BYTES);
    let heartbeat_every = (crew.tasks.lease() / 3).max(Duration::from_millis(100));
    let mut next_heartbeat = Instant::now() + heartbeat_every;
    let mut interrupted: Option<Interrupted> = None;
    let mut lingering = Lingering::new(profile.grace_after_report());
    let status = loop {
        let wait = transcript
            .patience()
            .min(next_heartbeat.saturating_duration_since(Instant::now()))
            .min(lingering.next_look());
        match process.next(wait) {
            Some(Output::Line(stream, line)) => {
                if crew.echo {
                    echo(stream, &line);
                }
                if profile.kind.reports_by_exit() {
                    match stream {
                        Stream::Stdout => stdout.push_line(&line),
                        Stream::Stderr => stderr.push_line(&line),
                    }
                }
                for event in reader.line(&line, stream) {
                    transcript.push_output(event);
                }
                // An agent that names its own session (Codex's thread): kept at once, so a
                // team started again after this supervisor is killed can resume it.
                if record.session_id.is_none() && reader.so_far.session_id.is_some() {
                    record.session_id = reader.so_far.session_id.clone();
                    let _ = crew.save_attempt(record);
                }
            }
            Some(Output::Note(text)) => transcript.push(Happened::Supervisor { text }),
            Some(Output::Exited(status)) => break status,
            None => transcript.flush(), // a pause (nothing when nothing waits)
        }
        transcript.flush_if_due();
        if Instant::now() >= next_heartbeat && plan.role.is_work() {
            // A failed renewal is not fatal: the next may work, and the end says if the task
            // was lost meanwhile.
            let _ = crew.tasks.heartbeat(plan.worker);
            next_heartbeat = Instant::now() + heartbeat_every;
        }
        if interrupted.is_none() {
            let usage = &reader.so_far.usage;
            interrupted = stop_if_due(crew, plan, transcript, process, &mut lingering, usage);
        }
    };
    Watched {
        status,
        interrupted,
        said: reader.so_far,
        printed: Printed {
            stdout: stdout.text(),
            stderr: stderr.text(),
        },
        ran_for: process.running_for(),
    }
}

/// Stops the agent when it is due to stop, saying why in its transcript: reported and still
/// running past its grace (its worker is not held by it), or over a budget or asked to stop
/// now (the interruption, returned).
fn stop_if_due(
    crew: &Crew<'_>,
    plan: &AttemptPlan<'_>,
    transcript: &mut Transcript<'_>,
    process: &AgentProcess,
    lingering: &mut Lingering,
    usage: &Usage,
) -> Option<Interrupted> {
    // A judge holds no task: it ends when its agent does.
    let reported = || {
        plan.role.is_work()
            && crew.task(&plan.task.id).is_some_and(|t| {
                !(t.claimed_by.as_deref() == Some(plan.worker) && t.status.is_held())
            })
    };
    if let Some(text) = lingering.look(reported) {
        transcript.push(Happened::Supervisor { text });
        process.stop(STOP_GRACE);
    }
    let interrupted = interruption(crew, plan, usage, process.running_for())?;
    let text = match &interrupted {
        Interrupted::Budget(reason) => format!("stopping the agent: {reason}"),
        Interrupted::StopNow => "stopping the agent: asked to stop now".to_string(),
    };
    transcript.push(Happened::Supervisor { text });
    process.stop(STOP_GRACE);
    Some(interrupted)
}

/// What ends with the agent's process: its door, its reservations, its cgroup; and a sandboxed
/// agent's commits, taken from its private copy of the branch onto the branch before anything
/// reads it.
fn wind_up(crew: &Crew<'_>, plan: &mut AttemptPlan<'_>, transcript: &mut Transcript<'_>) {
    if let Some(door) = plan.door.take() {
        door.close();
    }
    if let Some(text) = end_reservations(crew, plan.worker) {
        transcript.push(Happened::Supervisor { text });
    }
    drop(plan.cgroup.take());
    if crew.profile.sandbox.enabled
        && let Some(worktrees) = &crew.worktrees
        && let Err(e) = worktrees.publish_private_branch(&plan.task.id)
    {
        transcript.push(Happened::Supervisor {
            text: format!("the agent's commits were not taken onto its branch: {e}"),
        });
    }
}

/// The attempt's end, decided and stored: not started (a shell that could not find the
/// program), reported by its exit status (a command), or read from the task in the store.
fn conclude(
    crew: &Crew<'_>,
    plan: &AttemptPlan<'_>,
    mut record: Attempt,
    mut transcript: Transcript<'_>,
    watched: Watched,
) -> Result<Finished> {
    let id = plan.task.id.as_str();
    let (exit_code, signal) = exit_of(&watched.status, plan.launch.sandbox.is_some());
    transcript.push(Happened::Exited {
        code: exit_code,
        signal,
    });
    let said = watched.said;
    crew.add_spend(&said.usage);
    record.usage = said.usage;
    record.session_id = said.session_id.clone().or(record.session_id);
    record.last_message = said.last_said.clone();
    record.events = transcript.seq;
    record.ended_at = Some(Timestamp::now());
    let how = match (exit_code, signal) {
        (Some(code), _) => format!("the agent exited with status {code}"),
        (None, Some(signal)) => format!("the agent was killed by signal {signal}"),
        _ => "the agent's exit status is unknown".to_string(),
    };
    let printed = watched.printed;
    let interrupted = watched.interrupted;
    let mut spent = plan.spent_before;
    spent.add(&said.usage);
    // A shell that could not find or run the agent's program says so by 126 or 127, at once.
    let not_started = interrupted.is_none()
        && matches!(exit_code, Some(126 | 127))
        && watched.ran_for < START_WINDOW;
    // A command that ended by itself reports its task by its exit status.
    let by_exit = crew.profile.kind.reports_by_exit()
        && !not_started
        && interrupted.is_none()
        && exit_code.is_some()
        && crew.over_budget(&spent, &Usage::default(), None).is_none();
    let reported = match plan.role {
        AttemptRole::Judging if !not_started => Some(judged(exit_code, interrupted.as_ref(), &how)),
        AttemptRole::Judging => None,
        AttemptRole::Work => by_exit
            .then(|| {
                let succeeded = exit_code == Some(0);
                report::by_exit_status(crew, plan.worker, id, succeeded, &how, &printed)
            })
            .flatten(),
    };
    let seen_clean = reported.as_ref().is_some_and(|r| r.seen_clean);
    (record.end, record.reason) = match reported {
        Some(reported) => (reported.end, Some(reported.reason)),
        None if not_started => (
            AttemptEnd::NotStarted,
            Some(report::failure(&how, &printed.stderr)),
        ),
        None => end_from_store(
            crew,
            plan.worker,
            id,
            interrupted.as_ref(),
            &spent,
            signal,
            how,
        ),
    };
    // The transcript's last events and the attempt's end: one change.
    crew.save_attempt_with(&record, &transcript.take(), None)?;
    crew.record_spend(&record);
    crew.close_questions(&record);
    Ok(Finished {
        record,
        stderr: printed.stderr,
        seen_clean,
    })
}

/// How a judge's attempt ended: its agent ended by itself (what it said is its word, which the
/// merge queue reads), was stopped, or crashed. It holds no task, so the store has no say.
fn judged(
    exit_code: Option<i32>,
    interrupted: Option<&Interrupted>,
    how: &str,
) -> report::Reported {
    let (end, reason) = match (interrupted, exit_code) {
        (Some(Interrupted::Budget(reason)), _) => (AttemptEnd::Budget, reason.clone()),
        (Some(Interrupted::StopNow), _) => (AttemptEnd::Stopped, "asked to stop now".into()),
        (None, Some(0)) => (AttemptEnd::Completed, how.to_string()),
        (None, _) => (AttemptEnd::Crashed, how.to_string()),
    };
    report::Reported {
        end,
        reason,
        seen_clean: false,
    }
}

/// The exit code and the signal of an agent's process. Bubblewrap reports an agent killed by a
/// signal as 128 + the signal: a crash, restarted as one, not an agent that ended without
/// reporting.
fn exit_of(
    status: &std::io::Result<std::process::ExitStatus>,
    sandboxed: bool,
) -> (Option<i32>, Option<i32>) {
    use std::os::unix::process::ExitStatusExt;
    match status {
        Ok(status) => match (status.code(), status.signal()) {
            (Some(code), None) if sandboxed && (129..=192).contains(&code) => {
                (None, Some(code - 128))
            }
            other => other,
        },
        Err(_) => (None, None),
    }
}

/// The record of the attempt `plan` starts.
fn new_record(crew: &Crew<'_>, plan: &AttemptPlan<'_>) -> Attempt {
    Attempt {
        task: plan.task.id.clone(),
        attempt: plan.number,
        agent: plan.worker.to_string(),
        host: crew.host.clone(),
        profile: crew.profile.name.clone(),
        started_at: Timestamp::now(),
        ended_at: None,
        end: AttemptEnd::Running,
        reason: None,
        session_id: match plan.session {
            AgentSession::New(id) | AgentSession::Resume(id) => Some(id.clone()),
            AgentSession::Unnamed => None,
        },
        usage: Usage::default(),
        last_message: None,
        events: 0,
        sandboxed: plan.launch.sandbox.is_some(),
        role: plan.role,
    }
}

/// Whether a running attempt is to be stopped: its worker was asked to stop now, or its task
/// (what earlier attempts spent, and `running`'s usage so far, after `running_for`) crossed a
/// cap.
fn interruption(
    crew: &Crew<'_>,
    plan: &AttemptPlan<'_>,
    running: &Usage,
    running_for: Duration,
) -> Option<Interrupted> {
    if crew.flags_of(plan.worker).is_some_and(|f| f.stop_now()) {
        return Some(Interrupted::StopNow);
    }
    let mut spent = plan.spent_before;
    spent.add(running);
    crew.over_budget(&spent, running, Some(running_for))
        .map(Interrupted::Budget)
}

/// Ends what the attempt's agent reserved: its worker lives on (and keeps its lease), so a
/// reservation left behind would keep the tasks that need those files waiting on an agent
/// that has gone. What it ended, or why it could not, in words.
fn end_reservations(crew: &Crew<'_>, worker: &str) -> Option<String> {
    match crew.tasks.unreserve(worker, &[]) {
        Ok(gone) if !gone.is_empty() => {
            let paths: Vec<&str> = gone
                .iter()
                .flat_map(|r| r.paths.iter())
                .map(String::as_str)
                .collect();
            Some(format!(
                "its reservations ended with the attempt: {}",
                paths.join(", ")
            ))
        }
        Ok(_) => None,
        Err(e) => Some(format!("its reservations could not be ended: {e}")),
    }
}

/// Passes a line the agent printed on to this process's own stream of the same name.
fn echo(stream: Stream, line: &str) {
    let _ = match stream {
        Stream::Stdout => writeln!(std::io::stdout().lock(), "{line}"),
        Stream::Stderr => writeln!(std::io::stderr().lock(), "{line}"),
    };
}

/// How an attempt ended, from the task as the store has it now: reported by the agent, crashed,
/// ended without reporting, or lost to another worker; or stopped by the supervisor
/// (`interrupted`). An agent that stopped itself at a cap it was given (Claude Code's
/// --max-turns and --max-budget-usd) without reporting the task ended at its budget too.
fn end_from_store(
    crew: &Crew<'_>,
    worker: &str,
    id: &str,
    interrupted: Option<&Interrupted>,
    spent: &Usage,
    signal: Option<i32>,
    how: String,
) -> (AttemptEnd, Option<String>) {
    let task = crew.task(id);
    let held = |t: &Task| t.claimed_by.as_deref() == Some(worker);
    let at_cap = || {
        task.as_ref()
            .filter(|t| held(t) && t.status.is_held())
            .and_then(|_| crew.over_budget(spent, &Usage::default(), None))
    };
    match (interrupted, &task) {
        (Some(Interrupted::Budget(reason)), _) => (AttemptEnd::Budget, Some(reason.clone())),
        (Some(Interrupted::StopNow), _) => (AttemptEnd::Stopped, Some("asked to stop now".into())),
        (None, _) if let Some(reason) = at_cap() => (AttemptEnd::Budget, Some(reason)),
        (None, Some(t)) if held(t) && t.status == TaskStatus::Done => (AttemptEnd::Completed, None),
        (None, Some(t)) if held(t) && t.status == TaskStatus::Failed => (AttemptEnd::Failed, None),
        (None, Some(t)) if held(t) && t.status.is_held() => match signal {
            Some(_) => (AttemptEnd::Crashed, Some(how)),
            None => (AttemptEnd::Unreported, Some(how)),
        },
        (None, Some(t)) => (
            AttemptEnd::Lost,
            Some(format!(
                "the task was {} ({}) when the agent ended",
                t.status.as_str(),
                t.claimed_by.as_deref().unwrap_or("nobody")
            )),
        ),
        (None, None) => (AttemptEnd::Lost, Some("the task could not be read".into())),
    }
}
