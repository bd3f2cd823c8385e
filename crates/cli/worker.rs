//! `baton worker …`: a worker's commands. Each is a `baton-api` operation whose arguments are
//! its request type (flags, defaults and help declared once, there), a renderer for people,
//! and an exit rule. `loop` is `live/`'s, `keepalive` `baton-live`'s.

use std::time::Duration;

use baton_api::tasks::{self, ClaimOutcome};
use baton_api::{Error, OpenProject, Operation, exit};
use baton_live::WatchMode;
use baton_live::keepalive::keep_alive;
use clap::{Args, Subcommand};

use crate::context::{as_user, operate};
use crate::output::emit;
use crate::render;
use baton_api::durations::parse_duration;

#[derive(Debug, Subcommand)]
pub enum WorkerCommand {
    /// List the tasks that can be claimed now, best first.
    List(tasks::ListTasks),
    /// Claim the best ready task (lowest priority number, then oldest). Exit code 3 if none;
    /// with --wait, block until one is ready instead. A task named with --task is refused
    /// (exit code 1) with the reason when it is not ready (exit code 7 when another agent
    /// holds its files).
    Claim(ClaimArgs),
    /// Claim, start and run a command for each task, over and over; see --help.
    Loop(crate::live::LoopArgs),
    /// Start work on a task you claimed.
    Start(tasks::Start),
    /// Complete a task you started; writes results/TASK.md.
    Complete(tasks::Complete),
    /// Give up on a task, saying why; writes results/TASK.md.
    Fail(tasks::Fail),
    /// Hand a task you hold back to the queue, untouched.
    Release(tasks::Release),
    /// Renew the lease on every task you hold (run it every few minutes while working).
    Heartbeat(tasks::Heartbeat),
    /// Renew AGENT's leases every third of a lease for as long as process PID lives (what the
    /// Claude Code hooks start for a worker's session); one per agent, a second exits at once.
    Keepalive {
        agent: String,
        /// The agent's process (its Claude Code session).
        #[arg(long, value_name = "PID")]
        while_pid: u32,
    },
}

/// `worker claim`: the `task_claim` request, and waiting, which only the command line offers.
#[derive(Debug, Args)]
pub struct ClaimArgs {
    #[command(flatten)]
    pub request: tasks::Claim,
    /// Wait until a task is ready (added, unblocked, or its lease expired) and claim it.
    #[arg(long, conflicts_with_all = ["task", "ignore_reservations"])]
    pub wait: bool,
    /// Give up waiting after this long (exit code 5).
    #[arg(long, requires = "wait", value_parser = parse_duration)]
    pub timeout: Option<Duration>,
}

/// Runs a worker command on `project`; the exit code.
pub fn run(
    project: &OpenProject,
    command: WorkerCommand,
    mode: WatchMode,
    json: bool,
) -> Result<u8, Error> {
    match command {
        WorkerCommand::List(op) => {
            let all = op.all;
            operate(project, mode, json, op, |out| {
                render::task_list(&out.tasks, all)
            })
        }
        WorkerCommand::Claim(args) => claim(project, args, mode, json),
        WorkerCommand::Loop(args) => crate::live::worker_loop(project, args, mode, json),
        WorkerCommand::Start(op) => {
            let agent = op.agent.clone();
            operate(project, mode, json, op, |out| {
                format!(
                    "Started {}. When done: baton worker complete {agent} {} \"SUMMARY\" --modified FILE…",
                    out.task.id, out.task.id
                )
            })
        }
        WorkerCommand::Complete(op) => operate(project, mode, json, op, |out| {
            format!(
                "Completed {}; report in results/{}.md",
                out.task.id, out.task.id
            )
        }),
        WorkerCommand::Fail(op) => operate(project, mode, json, op, |out| {
            format!(
                "Marked {} failed; the leader can `baton leader reset {}` to retry it",
                out.task.id, out.task.id
            )
        }),
        WorkerCommand::Release(op) => operate(project, mode, json, op, |out| {
            format!("Released {}; it is available again", out.task.id)
        }),
        WorkerCommand::Heartbeat(op) => operate(project, mode, json, op, |out| match &out.note {
            Some(note) => note.clone(),
            None => format!("Renewed {} lease on {}", out.lease, out.renewed.join(", ")),
        }),
        WorkerCommand::Keepalive { agent, while_pid } => {
            let stop = std::sync::atomic::AtomicBool::new(false);
            keep_alive(&*project.tasks, project.local(), &agent, while_pid, &stop)?;
            Ok(0)
        }
    }
}

/// `worker claim`: the claim (waiting for a ready task with --wait), printed; exit code 3
/// when nothing was ready, 5 when the wait timed out.
fn claim(project: &OpenProject, args: ClaimArgs, mode: WatchMode, json: bool) -> Result<u8, Error> {
    let ClaimArgs {
        request,
        wait,
        timeout,
    } = args;
    let keep = baton_core::ForeignFile::Keep;
    let outcome: ClaimOutcome = if wait {
        let claimed = crate::live::claim_wait(project, &request.agent, timeout, mode)?;
        match request.worktree {
            true => as_user(project, mode, keep, |cx| {
                claimed.in_worktree(cx, &request.agent)
            })?,
            false => claimed,
        }
    } else {
        as_user(project, mode, keep, |cx| request.clone().run(cx))?
    };
    let Some(task) = &outcome.task else {
        let reason = outcome.reason.clone().unwrap_or_default();
        if json {
            emit(json, &outcome, String::new);
        } else {
            eprintln!("baton: nothing to claim: {reason}");
        }
        return Ok(if wait {
            exit::TIMED_OUT.code
        } else {
            exit::NOTHING_TO_CLAIM.code
        });
    };
    emit(json, &outcome, || {
        render::claimed(
            task,
            outcome.reclaimed_from.as_deref(),
            outcome.worktree.as_ref(),
            &request.agent,
            project.lease(),
        )
    });
    Ok(0)
}
