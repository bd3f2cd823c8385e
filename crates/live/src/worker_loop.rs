//! `baton worker loop`: a worker that needs no agent in the loop. It claims the next task as
//! soon as one is ready, starts it, runs a command with the task, renews the lease while the
//! command runs, and completes the task with the command's output (exit 0) or fails it with
//! the end of its stderr; then it goes on with the next one.
//!
//! With `worktree`, each task is worked in its own git worktree on the branch `baton/TASK-ID`
//! (see `baton-git`): the command runs there, and the completion records the branch, its
//! commits and the files it changed. Nothing is merged: that is the lead's `leader merge`.
//!
//! It stops cleanly: asked to stop (Ctrl-C), it stops the command's process group and releases
//! the task, so nothing is left claimed; and it stops by itself when no work can ever become
//! ready (unless told to stay for new tasks).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use baton_core::Completion;
use baton_core::{Layout, Result as StoreResult, StoreError, Task, TaskStatus, TaskStore};
use serde::Serialize;

use crate::claim_wait::{ClaimWait, STOP_CHECK_INTERVAL, WaitedClaim, claim_when_ready};
use crate::error::Result;
use crate::task_command::{Finished, RunningCommand, TaskEnv};
use crate::watcher::{Backend, WatchMode};
use baton_git::{Worktree, Worktrees, record_branch_or_say_why};

/// How long a stopped command gets to exit after SIGTERM before SIGKILL.
pub const STOP_GRACE: Duration = Duration::from_secs(5);
/// Lines of stderr a failure reason keeps.
const REASON_LINES: usize = 20;

#[derive(Debug, Clone)]
pub struct LoopOptions {
    pub agent: String,
    /// Run by `sh -c` in the project folder.
    pub command: String,
    /// Keep waiting for new tasks when the queue is drained, instead of stopping.
    pub stay: bool,
    /// Stop after this many tasks.
    pub max_tasks: Option<usize>,
    pub mode: WatchMode,
    /// Pass the command's output through as it runs.
    pub echo: bool,
    /// Work each task in its own git worktree and branch.
    pub worktree: bool,
}

/// What the loop is doing, for progress output.
#[derive(Debug)]
pub enum LoopEvent<'a> {
    Waiting(Backend),
    Started(&'a Task),
    /// The task's command runs in this worktree.
    InWorktree(&'a Worktree),
    Completed(&'a Task),
    Failed(&'a Task),
    /// Handed back untouched because the loop was stopped.
    Released(&'a Task),
    /// The task could not be reported (another worker took it over, say).
    Lost {
        task: &'a str,
        error: String,
    },
}

/// Why the loop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LoopEnd {
    /// No work can become ready without new tasks.
    Drained,
    /// Asked to stop.
    Stopped,
    /// Reached `max_tasks`.
    MaxTasks,
}

#[derive(Debug, Clone, Serialize)]
pub struct LoopReport {
    pub completed: Vec<String>,
    pub failed: Vec<String>,
    pub released: Vec<String>,
    pub end: LoopEnd,
}

/// Runs the loop until it drains, is stopped through `stop`, or reaches `max_tasks`.
/// `store` holds the tasks; `workdir` is the folder the command runs in, and where
/// `BATON_RESULT_PATH` points (under its `.coordination/results/`).
pub fn run_worker_loop(
    store: &dyn TaskStore,
    workdir: &Layout,
    options: &LoopOptions,
    stop: &AtomicBool,
    mut on_event: impl FnMut(LoopEvent<'_>),
) -> Result<LoopReport> {
    let mut report = LoopReport {
        completed: Vec::new(),
        failed: Vec::new(),
        released: Vec::new(),
        end: LoopEnd::Drained,
    };
    // Refuse at once, not after the first claim, when there is no repository to branch from.
    let worktrees = match options.worktree {
        true => Some(Worktrees::open(workdir)?),
        false => None,
    };
    loop {
        let done = report.completed.len() + report.failed.len();
        if options.max_tasks.is_some_and(|max| done >= max) {
            report.end = LoopEnd::MaxTasks;
            return Ok(report);
        }
        let wait = ClaimWait {
            timeout: None,
            stop_when_drained: !options.stay,
            mode: options.mode,
            stop: Some(stop),
        };
        let claim = match claim_when_ready(store, &options.agent, wait, |backend| {
            on_event(LoopEvent::Waiting(backend))
        })? {
            WaitedClaim::Claimed { claim } => *claim,
            WaitedClaim::Drained | WaitedClaim::TimedOut => {
                report.end = LoopEnd::Drained;
                return Ok(report);
            }
            WaitedClaim::Stopped => {
                report.end = LoopEnd::Stopped;
                return Ok(report);
            }
        };
        let id = claim.task.id.clone();
        let agent = options.agent.as_str();
        if stop.load(Ordering::Relaxed) {
            let task = settle(store, &id, stop, released(agent), || {
                store.release(agent, &id)
            })?;
            on_event(LoopEvent::Released(&task));
            report.released.push(id);
            report.end = LoopEnd::Stopped;
            return Ok(report);
        }
        let task = settle(store, &id, stop, started(agent), || store.start(agent, &id))?;
        on_event(LoopEvent::Started(&task));
        let worktree = worktrees
            .as_ref()
            .map(|w| w.prepare_claimed(store, agent, &id))
            .transpose()?;
        if let Some(worktree) = &worktree {
            on_event(LoopEvent::InWorktree(worktree));
        }
        match run_one(store, workdir, options, &task, worktree.as_ref(), stop)? {
            Outcome::Finished(finished) => {
                let success = finished.status.success();
                let completed = success.then(|| completion(&finished, workdir, &id));
                let reported = settle(store, &id, stop, reported_by(agent), || {
                    if let Some(report) = &completed {
                        store.complete(agent, &id, report.clone())
                    } else {
                        store.fail(agent, &id, &failure_reason(&finished))
                    }
                })
                .map(|t| (t, success));
                match reported {
                    Ok((task, true)) => {
                        on_event(LoopEvent::Completed(&task));
                        report.completed.push(id);
                    }
                    Ok((task, false)) => {
                        on_event(LoopEvent::Failed(&task));
                        report.failed.push(id);
                    }
                    Err(e) => on_event(LoopEvent::Lost {
                        task: &id,
                        error: e.to_string(),
                    }),
                }
            }
            Outcome::Stopped => {
                let task = settle(store, &id, stop, released(agent), || {
                    store.release(agent, &id)
                })?;
                on_event(LoopEvent::Released(&task));
                report.released.push(id);
                report.end = LoopEnd::Stopped;
                return Ok(report);
            }
        }
    }
}

/// How long the loop keeps trying to reach a store that went away (a database restarting, a
/// network down) before it gives up on an operation.
const PERSIST_FOR: Duration = Duration::from_secs(60);

/// Runs a lifecycle operation, riding out a store that went away (for at most
/// [`PERSIST_FOR`], and not once asked to stop): the loop rides out a database restart instead
/// of dropping the task it holds.
fn persist<T>(stop: &AtomicBool, op: impl FnMut() -> StoreResult<T>) -> StoreResult<T> {
    crate::reconnect::persist(Some(Instant::now() + PERSIST_FOR), Some(stop), op)
}

/// Runs a change of task `id` (`op`: start, complete, fail or release), riding out an
/// unreachable store. A change whose connection broke while committing may have landed: when
/// its retry is refused, the task is looked up, and one that `landed` says is as the change
/// left it counts as changed.
fn settle(
    store: &dyn TaskStore,
    id: &str,
    stop: &AtomicBool,
    landed: impl Fn(&Task) -> bool,
    mut op: impl FnMut() -> StoreResult<Task>,
) -> StoreResult<Task> {
    let mut interrupted = false;
    let outcome = persist(stop, || {
        let outcome = op();
        interrupted |= matches!(outcome, Err(StoreError::Database { .. }));
        outcome
    });
    match outcome {
        Err(refused) if interrupted => {
            let found = store.status().ok().and_then(|report| {
                report
                    .tasks
                    .into_iter()
                    .map(|view| view.task)
                    .find(|t| t.id == id && landed(t))
            });
            found.ok_or(refused)
        }
        outcome => outcome,
    }
}

/// A start by `agent` landed: the task is in progress in its name.
fn started(agent: &str) -> impl Fn(&Task) -> bool + '_ {
    move |t| t.status == TaskStatus::InProgress && t.claimed_by.as_deref() == Some(agent)
}

/// A completion or failure by `agent` landed: the task is finished in its name.
fn reported_by(agent: &str) -> impl Fn(&Task) -> bool + '_ {
    move |t| t.status.is_final() && t.claimed_by.as_deref() == Some(agent)
}

/// A release by `agent` landed: it no longer holds the task.
fn released(agent: &str) -> impl Fn(&Task) -> bool + '_ {
    move |t| t.claimed_by.as_deref() != Some(agent)
}

enum Outcome {
    Finished(Finished),
    Stopped,
}

/// Runs the task's command, renewing the lease while it runs.
fn run_one(
    store: &dyn TaskStore,
    workdir: &Layout,
    options: &LoopOptions,
    task: &Task,
    worktree: Option<&Worktree>,
    stop: &AtomicBool,
) -> Result<Outcome> {
    let result_path = workdir.result_file(&task.id)?;
    let env = TaskEnv {
        agent: &options.agent,
        task,
        project_dir: workdir.project_dir(),
        result_path: &result_path,
        worktree,
    };
    let command = match RunningCommand::start(&options.command, &env, options.echo) {
        Ok(command) => command,
        Err(e) => {
            // Nothing ran: give the task back rather than leave it claimed.
            let _ = store.release(&options.agent, &task.id);
            return Err(e);
        }
    };
    // Renew well before the lease can run out, however short it is.
    let heartbeat_every = (store.lease() / 3).max(Duration::from_millis(100));
    let mut next_heartbeat = Instant::now() + heartbeat_every;
    loop {
        if stop.load(Ordering::Relaxed) {
            command.stop(STOP_GRACE);
            return Ok(Outcome::Stopped);
        }
        let until = next_heartbeat
            .saturating_duration_since(Instant::now())
            .min(STOP_CHECK_INTERVAL);
        match command.wait_timeout(until) {
            Some(Ok(status)) => return Ok(Outcome::Finished(command.finish(status))),
            Some(Err(e)) => {
                let _ = store.release(&options.agent, &task.id);
                return Err(crate::error::LiveError::Spawn {
                    command: options.command.clone(),
                    message: e.to_string(),
                });
            }
            None => {}
        }
        if Instant::now() >= next_heartbeat {
            // A failed renewal is not fatal: the next one may work, and the report at the end
            // says if the task was lost meanwhile.
            let _ = store.heartbeat(&options.agent);
            next_heartbeat = Instant::now() + heartbeat_every;
        }
    }
}

/// The completion of task `id` whose command succeeded: its output, and, when it was worked
/// in a worktree, its branch and the files the branch changed.
fn completion(finished: &Finished, workdir: &Layout, id: &str) -> Completion {
    let output = if finished.stdout.is_empty() {
        "(the command printed nothing)".to_string()
    } else {
        finished.stdout.clone()
    };
    let mut completion = Completion {
        output,
        ..Completion::default()
    };
    // The id was claimed, so it is a valid name: nothing here can refuse.
    let _ = record_branch_or_say_why(workdir, id, &mut completion);
    completion
}

fn failure_reason(finished: &Finished) -> String {
    use std::os::unix::process::ExitStatusExt;

    let how = match (finished.status.code(), finished.status.signal()) {
        (Some(code), _) => format!("the command exited with status {code}"),
        (None, Some(signal)) => format!("the command was killed by signal {signal}"),
        (None, None) => "the command failed".to_string(),
    };
    let lines: Vec<&str> = finished.stderr.lines().collect();
    let tail = &lines[lines.len().saturating_sub(REASON_LINES)..];
    if tail.is_empty() {
        how
    } else {
        format!("{how}; stderr ends with:\n{}", tail.join("\n"))
    }
}
