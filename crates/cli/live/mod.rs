//! The live commands: runs, signals, `watch`, `worker claim --wait` and `worker loop`. Each
//! calls one `baton-api` or `baton-live` operation and prints the outcome.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use baton_api::signals::{ListRuns, WaitSignals};
use baton_api::tasks::ClaimOutcome;
use baton_api::{Error, OpenProject, Operation, exit};
use baton_core::{ErrorKind, ForeignFile};
use baton_live::claim_wait::claim_within;
use baton_live::wait::{WaitOutcome, wait_for_signals};
use baton_live::{LiveError, WatchMode};
use baton_team::Crew;
use baton_team::{Progress, Setting, WorkerEnd, run_worker};

use crate::context::{as_user, user_path};
pub mod args;
mod render;

use crate::output::emit;
pub use args::{LoopArgs, RunCommand, SignalCommand};

pub fn run_command(project: &OpenProject, command: RunCommand, json: bool) -> Result<u8, Error> {
    let (mode, keep) = (WatchMode::default(), ForeignFile::Keep);
    match command {
        RunCommand::New(op) => {
            let out = as_user(project, mode, keep, |cx| op.run(cx))?;
            emit(json, &out, || {
                let mut text = format!("Started run {}", out.run.number);
                if !out.cleared.is_empty() {
                    text += &format!("; cleared stale signals: {}", out.cleared.join(", "));
                }
                text
            });
        }
        RunCommand::List => {
            let out = as_user(project, mode, keep, |cx| ListRuns {}.run(cx))?;
            emit(json, &out, || render::runs(&out.runs));
        }
    }
    Ok(0)
}

pub fn signal_command(
    project: &OpenProject,
    cwd: &Path,
    command: SignalCommand,
    mode: WatchMode,
    json: bool,
) -> Result<u8, Error> {
    let keep = ForeignFile::Keep;
    match command {
        SignalCommand::Write(change) => {
            let foreign = change.foreign();
            let mut request = change.request;
            request.path = user_path_of(cwd, request.path)?;
            let signal = as_user(project, mode, foreign, |cx| request.run(cx))?;
            emit(json, &signal, || match signal.run {
                Some(run) => format!("Wrote {} (run {run})", signal.name),
                None => format!("Wrote {}", signal.path.display()),
            });
        }
        SignalCommand::Clear(change) => {
            let foreign = change.foreign();
            let mut request = change.request;
            request.path = user_path_of(cwd, request.path)?;
            let out = as_user(project, mode, foreign, |cx| request.run(cx))?;
            emit(json, &out, || match (&out.run, &out.signal) {
                (Some(run), _) => format!("Cleared {} signal(s) of run {run}", out.cleared.len()),
                (None, Some(signal)) if out.cleared.is_empty() => format!("{signal} was not set"),
                (None, Some(signal)) => format!("Cleared {signal}"),
                (None, None) => String::new(),
            });
        }
        SignalCommand::List(op) => {
            let out = as_user(project, mode, keep, |cx| op.run(cx))?;
            emit(json, &out, || render::signals(out.run, &out.signals));
        }
        SignalCommand::Wait {
            names,
            paths,
            run,
            any,
            all: _,
            timeout,
            while_pid,
            while_agent,
        } => {
            let request = WaitSignals {
                names,
                paths: paths
                    .iter()
                    .map(|p| user_path(cwd, p))
                    .collect::<Result<_, _>>()?,
                run,
                any,
                timeout_seconds: Some(timeout.as_secs().max(1)),
                while_pid,
                while_agent,
            };
            let mut wait = as_user(project, mode, keep, |cx| request.plan(cx))?;
            // The CLI's --timeout is exact, not whole seconds.
            wait.timeout = Some(timeout);
            let labels: Vec<String> = wait.targets.iter().map(|t| t.label()).collect();
            let outcome = wait_for_signals(&*project.signals, &*project.tasks, &wait, |backend| {
                eprintln!(
                    "baton: waiting for {} ({backend}; timeout {})",
                    labels.join(if any { " or " } else { " and " }),
                    humantime::format_duration(timeout)
                );
            })?;
            emit(json, &outcome, || render::wait_outcome(&outcome));
            return Ok(match outcome {
                WaitOutcome::Signalled { .. } => 0,
                WaitOutcome::TimedOut { .. } => exit::TIMED_OUT.code,
                WaitOutcome::WriterGone { .. } => exit::WRITER_GONE.code,
            });
        }
    }
    Ok(0)
}

/// A `--path` the user typed, taken from the working folder `cwd`.
fn user_path_of(cwd: &Path, path: Option<String>) -> Result<Option<String>, Error> {
    path.map(|p| user_path(cwd, Path::new(&p))).transpose()
}

/// `baton watch`: prints every change as it happens, until interrupted.
pub fn watch(project: &OpenProject, mode: WatchMode, json: bool) -> Result<u8, LiveError> {
    let feed = project.feed(mode)?;
    eprintln!(
        "baton: watching {} ({}); Ctrl-C to stop",
        project.tasks.describe(),
        feed.backend()
    );
    // Behind an attempt's door: the agent's own records and the project's shared state only.
    let guest = crate::context::door_guest().map(|agent| (agent, crate::context::door_task()));
    while let Some(event) = feed.recv() {
        if let Some((agent, task)) = &guest
            && !event.visible_to(agent, task.as_deref())
        {
            continue;
        }
        let at = baton_core::Timestamp::now();
        let line = if json {
            let mut value = serde_json::to_value(&event).expect("events serialise");
            value["at"] = serde_json::to_value(at).expect("timestamps serialise");
            value.to_string()
        } else {
            render::change(&event, at)
        };
        let mut out = std::io::stdout().lock();
        if writeln!(out, "{line}").and_then(|_| out.flush()).is_err() {
            break; // the reader went away (a closed pipe)
        }
    }
    Ok(0)
}

/// `baton worker claim AGENT --wait`: the claim, in the claim operation's result shape.
pub fn claim_wait(
    project: &OpenProject,
    agent: &str,
    timeout: Option<std::time::Duration>,
    mode: WatchMode,
) -> Result<ClaimOutcome, LiveError> {
    let claim = claim_within(&*project.tasks, agent, timeout, mode, |backend| {
        eprintln!("baton: {agent} is waiting for a ready task ({backend})");
    })?;
    Ok(match claim {
        Some(claim) => ClaimOutcome::claimed(claim),
        None => ClaimOutcome::nothing("no task became ready before the timeout".into()),
    })
}

/// `baton worker loop`: one worker of the team's engine on its own (`baton_team::Crew::alone`).
pub fn worker_loop(
    project: &OpenProject,
    args: LoopArgs,
    mode: WatchMode,
    json: bool,
) -> Result<u8, Error> {
    let setting = Setting::for_project(project.local(), project.reach());
    let announced_wait = AtomicBool::new(false);
    let progress = |event: Progress| {
        if json {
            if let Some(line) = render::loop_event_json(&event) {
                println!("{line}");
            }
            return;
        }
        // The wait is said once: the worker waits again after every task.
        if matches!(event, Progress::Waiting { .. }) && announced_wait.swap(true, Ordering::Relaxed)
        {
            return;
        }
        if let Some(line) = render::loop_event(&event) {
            eprintln!("{line}");
        }
    };
    let mut crew = Crew::alone(
        project.team_stores(),
        setting,
        &args.command,
        args.worktree,
        mode,
        &progress,
    )?;
    crew.pace.stay = args.stay;
    crew.pace.max_tasks = args.max_tasks;
    crew.echo = !args.quiet && !json;
    let flags = crew.flags(&args.agent);
    let interrupted = Arc::new(AtomicBool::new(false));
    let seen = interrupted.clone();
    ctrlc::set_handler(move || {
        if seen.swap(true, Ordering::Relaxed) {
            // A second Ctrl-C: the user insists.
            std::process::exit(i32::from(exit::INTERRUPTED.code));
        }
        eprintln!(
            "\nbaton: stopping; the running task will be released (Ctrl-C again to quit now)"
        );
        flags.stop(true);
    })
    .map_err(|e| Error::new(ErrorKind::Spawn, format!("cannot handle Ctrl-C: {e}")))?;
    let report = run_worker(&crew, &args.agent)?;
    emit(json, &report, || render::loop_report(&report));
    Ok(match report.end {
        WorkerEnd::Stopped => exit::INTERRUPTED.code,
        WorkerEnd::Tripped => exit::AGENTS_CANNOT_START.code,
        WorkerEnd::Drained | WorkerEnd::MaxTasks => 0,
    })
}
