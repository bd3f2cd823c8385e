//! The live commands: runs, signals, `watch`, `worker claim --wait` and `worker loop`. Each
//! calls one `baton-store` or `baton-live` operation and prints the outcome.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use baton_live::claim_wait::{ClaimOutcome, ClaimWait, claim_when_ready};
use baton_live::feed::ChangeFeed;
use baton_live::wait::{Quorum, SignalWait, WaitOutcome, wait_for_signals};
use baton_live::worker_loop::{LoopEnd, LoopEvent, LoopOptions, run_worker_loop};
use baton_live::{LiveError, WatchMode};
use baton_store::{Project, SignalTarget};

use crate::live_args::{LoopArgs, RunCommand, SignalCommand, SignalPlace};
use crate::{emit, render, render_live};

pub const EXIT_TIMED_OUT: u8 = 5;
pub const EXIT_WRITER_GONE: u8 = 6;
pub const EXIT_INTERRUPTED: u8 = 130;

pub fn run_command(project: &Project, command: RunCommand, json: bool) -> Result<u8, LiveError> {
    match command {
        RunCommand::New { note } => {
            let (run, cleared) = project.new_run(note.as_deref())?;
            emit(
                json,
                &serde_json::json!({"run": run, "cleared": cleared}),
                || {
                    let mut text = format!("Started run {}", run.number);
                    if !cleared.is_empty() {
                        text += &format!("; cleared stale signals: {}", cleared.join(", "));
                    }
                    text
                },
            );
        }
        RunCommand::List => {
            let runs = project.runs()?;
            emit(json, &runs, || render_live::runs(&runs));
        }
    }
    Ok(0)
}

fn target(
    project: &Project,
    cwd: &Path,
    name: Option<&str>,
    place: &SignalPlace,
) -> Result<SignalTarget, LiveError> {
    match (&place.path, name) {
        (Some(path), _) => Ok(SignalTarget::Path(absolute(cwd, path))),
        (None, Some(name)) => Ok(SignalTarget::named(project.resolve_run(place.run)?, name)?),
        (None, None) => unreachable!("clap requires a name or --path"),
    }
}

fn absolute(cwd: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    }
}

pub fn signal_command(
    project: &Project,
    cwd: &Path,
    command: SignalCommand,
    mode: WatchMode,
    json: bool,
) -> Result<u8, LiveError> {
    match command {
        SignalCommand::Write {
            name,
            place,
            note,
            agent,
        } => {
            let target = target(project, cwd, name.as_deref(), &place)?;
            let signal = project.write_signal(
                &target,
                agent.as_deref(),
                note.as_deref(),
                place.foreign(),
            )?;
            emit(json, &signal, || format!("Wrote {}", target.label()));
        }
        SignalCommand::Clear {
            name,
            all,
            place,
            agent,
        } => {
            if all {
                let run = project.resolve_run(place.run)?;
                let cleared = project.clear_signals(run)?;
                emit(
                    json,
                    &serde_json::json!({"run": run, "cleared": cleared}),
                    || format!("Cleared {} signal(s) of run {run}", cleared.len()),
                );
            } else {
                let target = target(project, cwd, name.as_deref(), &place)?;
                let removed = project.clear_signal(&target, agent.as_deref(), place.foreign())?;
                emit(
                    json,
                    &serde_json::json!({"signal": target.label(), "removed": removed}),
                    || match removed {
                        true => format!("Cleared {}", target.label()),
                        false => format!("{} was not set", target.label()),
                    },
                );
            }
        }
        SignalCommand::List { run } => {
            let run = project.resolve_run(run)?;
            let signals = project.list_signals(run)?;
            emit(json, &signals, || render_live::signals(run, &signals));
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
            let mut targets = Vec::new();
            if !names.is_empty() {
                let run = project.resolve_run(run)?;
                for name in &names {
                    targets.push(SignalTarget::named(run, name)?);
                }
            }
            targets.extend(paths.iter().map(|p| SignalTarget::Path(absolute(cwd, p))));
            let wait = SignalWait {
                targets,
                quorum: if any { Quorum::Any } else { Quorum::All },
                timeout: Some(timeout),
                while_pids: while_pid,
                while_agents: while_agent,
                mode,
            };
            let labels: Vec<String> = wait.targets.iter().map(|t| t.label()).collect();
            let outcome = wait_for_signals(project, &wait, |backend| {
                eprintln!(
                    "baton: waiting for {} ({backend}; timeout {})",
                    labels.join(if any { " or " } else { " and " }),
                    humantime::format_duration(timeout)
                );
            })?;
            emit(json, &outcome, || render_live::wait_outcome(&outcome));
            return Ok(match outcome {
                WaitOutcome::Signalled { .. } => 0,
                WaitOutcome::TimedOut { .. } => EXIT_TIMED_OUT,
                WaitOutcome::WriterGone { .. } => EXIT_WRITER_GONE,
            });
        }
    }
    Ok(0)
}

/// `baton watch`: prints every change as it happens, until interrupted.
pub fn watch(project: &Project, mode: WatchMode, json: bool) -> Result<u8, LiveError> {
    let feed = ChangeFeed::start(project, mode)?;
    eprintln!(
        "baton: watching {} ({}); Ctrl-C to stop",
        project.layout().root().display(),
        feed.backend()
    );
    while let Some(event) = feed.recv() {
        let at = baton_store::Timestamp::now();
        let line = if json {
            let mut value = serde_json::to_value(&event).expect("events serialise");
            value["at"] = serde_json::to_value(at).expect("timestamps serialise");
            value.to_string()
        } else {
            render_live::change(&event, at)
        };
        let mut out = std::io::stdout().lock();
        if writeln!(out, "{line}").and_then(|_| out.flush()).is_err() {
            break; // the reader went away (a closed pipe)
        }
    }
    Ok(0)
}

/// `baton worker claim AGENT --wait`.
pub fn claim_wait(
    project: &Project,
    agent: &str,
    timeout: Option<std::time::Duration>,
    mode: WatchMode,
    json: bool,
) -> Result<u8, LiveError> {
    let wait = ClaimWait {
        timeout,
        stop_when_drained: false,
        mode,
        stop: None,
    };
    let outcome = claim_when_ready(project, agent, wait, |backend| {
        eprintln!("baton: {agent} is waiting for a ready task ({backend})");
    })?;
    match outcome {
        ClaimOutcome::Claimed { claim } => {
            emit(json, &claim, || {
                render::claimed(&claim, agent, project.lease())
            });
            Ok(0)
        }
        _ => {
            if json {
                emit(
                    json,
                    &serde_json::json!({"task": null, "reason": "timed out"}),
                    String::new,
                );
            } else {
                eprintln!("baton: no task became ready before the timeout");
            }
            Ok(EXIT_TIMED_OUT)
        }
    }
}

/// `baton worker loop`.
pub fn worker_loop(
    project: &Project,
    args: LoopArgs,
    mode: WatchMode,
    json: bool,
) -> Result<u8, LiveError> {
    let stop = Arc::new(AtomicBool::new(false));
    let handler_stop = stop.clone();
    ctrlc::set_handler(move || {
        if handler_stop.swap(true, Ordering::Relaxed) {
            // A second Ctrl-C: the user insists.
            std::process::exit(i32::from(EXIT_INTERRUPTED));
        }
        eprintln!(
            "\nbaton: stopping; the running task will be released (Ctrl-C again to quit now)"
        );
    })
    .map_err(|e| LiveError::Spawn {
        command: "Ctrl-C handler".into(),
        message: e.to_string(),
    })?;
    let options = LoopOptions {
        agent: args.agent.clone(),
        command: args.command,
        stay: args.stay,
        max_tasks: args.max_tasks,
        mode,
        echo: !args.quiet && !json,
    };
    let mut announced_wait = false;
    let report = run_worker_loop(project, &options, &stop, |event| {
        if json {
            if let Some(line) = render_live::loop_event_json(&event) {
                println!("{line}");
            }
            return;
        }
        if matches!(event, LoopEvent::Waiting(_)) {
            // Said once: the loop waits again after every task.
            if announced_wait {
                return;
            }
            announced_wait = true;
        }
        eprintln!("{}", render_live::loop_event(&args.agent, &event));
    })?;
    emit(json, &report, || render_live::loop_report(&report));
    Ok(match report.end {
        LoopEnd::Stopped => EXIT_INTERRUPTED,
        LoopEnd::Drained | LoopEnd::MaxTasks => 0,
    })
}
