//! `baton team`: the supervised team. `up` runs `baton-team`'s supervisor in this process, or
//! with `--detach` is the catalogue's `team_up` (a supervisor in a process of its own, started
//! from the typed request by the hidden `team supervise`); `status`, `logs` and `stop` are catalogue operations
//! (the same for the MCP server and the desktop), `logs --follow` waits on the store's changes.

mod args;
mod render;
mod report;
pub use render::queue_lines;
mod status_line;

use std::io::Read;
use std::time::{Duration, Instant};

use baton_api::team::{TeamTranscript, Transcript, transcript_named};
use baton_api::{Error, OpenProject, Operation, exit};
use baton_core::{AttemptEnd, ErrorKind, StoreError};
use baton_live::WatchMode;
use baton_live::transcript_wait::TranscriptWait;
use baton_team::load_profiles;
use baton_team::resize_if_running;
use baton_team::{Controls, Setting, TeamUp, run_team, wait_stopped};

use crate::context::{as_user, operate};
use crate::output::{emit, emit_line};

pub use args::TeamCommand;
use args::{LogsArgs, StopArgs, UpArgs};

pub fn run(
    project: &OpenProject,
    command: TeamCommand,
    mode: WatchMode,
    json: bool,
) -> Result<u8, Error> {
    match command {
        TeamCommand::Up(UpArgs { request, detach }) => {
            if detach {
                operate(project, mode, json, request, render::started)
            } else {
                up(project, request, mode, json)
            }
        }
        TeamCommand::Supervise => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|e| StoreError::io("stdin", e))?;
            let request: TeamUp = serde_json::from_str(&text).map_err(|e| {
                Error::input("request", format!("the team-up request is not valid: {e}"))
            })?;
            up(project, request, mode, json)
        }
        TeamCommand::Status(op) => operate(project, mode, json, op, render::status),
        TeamCommand::Report(op) => operate(project, mode, json, op, report::coordination),
        TeamCommand::Logs(args) => logs(project, args, mode, json),
        TeamCommand::Stop(args) => stop(project, args, mode, json),
        TeamCommand::Pause(op) => operate(project, mode, json, op, render::pause_asked),
        TeamCommand::Resume(op) => operate(project, mode, json, op, render::pause_asked),
        TeamCommand::Profiles => {
            let profiles = load_profiles(project.local())?;
            let list: Vec<_> = profiles.values().collect();
            emit(json, &list, || render::profiles(&list, project.local()));
            Ok(0)
        }
    }
}

/// Runs the team `request` asks for in this process, until it drains or is stopped (a running
/// team of the same profile is resized instead).
fn up(project: &OpenProject, request: TeamUp, mode: WatchMode, json: bool) -> Result<u8, Error> {
    let local = project.local();
    if let Some(resized) = resize_if_running(local, &request)? {
        emit(json, &resized, || render::started(&resized));
        return Ok(0);
    }
    if let Some(said) = request.nothing_to_do(&*project.tasks)? {
        emit(json, &serde_json::json!({ "nothing_to_do": said }), || {
            said.clone()
        });
        return Ok(0);
    }
    let plan = request.plan(local, mode)?;
    let setting = Setting::for_project(local, project.reach());
    let controls = Controls::default();
    let controller = controls.controller();
    let interrupted = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let seen = interrupted.clone();
    ctrlc::set_handler(move || {
        if seen.swap(true, std::sync::atomic::Ordering::SeqCst) {
            std::process::exit(i32::from(exit::INTERRUPTED.code));
        }
        eprintln!(
            "\nbaton: stopping the agents and handing their tasks back (Ctrl-C again to quit now)"
        );
        controller.stop(true);
    })
    .map_err(|e| Error::new(ErrorKind::Spawn, format!("cannot handle Ctrl-C: {e}")))?;
    if !json {
        let mut seats = String::new();
        if let Some(planning) = &plan.planning {
            seats.push_str(&format!(", planned by profile {}", planning.profile.name));
        }
        if plan.judge.is_some() {
            seats.push_str(", each task judged before it lands");
        }
        eprintln!(
            "baton: a team of {} {} worker(s){}{seats}; Ctrl-C stops it",
            plan.workers,
            plan.profile.name,
            if plan.profile.worktree {
                ", a worktree per task"
            } else {
                ""
            }
        );
    }
    // On a terminal, one live status line under the progress lines; piped, plain lines only.
    let status = status_line::StatusLine::on_terminal(json);
    let progress = |event: baton_team::Progress| {
        if json {
            emit_line(true, &event, String::new);
        } else if let Some(line) = render::progress(&event) {
            match &status {
                Some(status) => status.println(&line),
                None => eprintln!("{line}"),
            }
        }
    };
    let mut ran = None;
    std::thread::scope(|scope| {
        if let Some(status) = &status {
            scope.spawn(|| status.keep_up(&*project.tasks, local));
        }
        ran = Some(run_team(
            project.team_stores(),
            setting,
            plan,
            controls,
            &progress,
        ));
        if let Some(status) = &status {
            status.finish();
        }
    });
    let report = ran.expect("the team ran")?;
    // With --json the progress events came one per line; the report is the last line.
    emit_line(json, &report, || render::report(&report));
    if interrupted.load(std::sync::atomic::Ordering::SeqCst) {
        return Ok(exit::INTERRUPTED.code);
    }
    Ok(exit_by_verdict(&report))
}

/// `team up`'s exit status: an error first, then agents that could not start, then tasks
/// failed or not done (or a plan not carried out); 0 only when every task the run could reach
/// is done.
fn exit_by_verdict(report: &baton_team::TeamReport) -> u8 {
    if !report.errors.is_empty() {
        exit::ERROR.code
    } else if !report.verdict.cannot_start.is_empty() {
        exit::AGENTS_CANNOT_START.code
    } else if !report.succeeded() {
        exit::TASKS_LEFT.code
    } else {
        0
    }
}

fn logs(project: &OpenProject, args: LogsArgs, mode: WatchMode, json: bool) -> Result<u8, Error> {
    let (task, attempt) = transcript_named(&*project.team, &args.name, args.attempt)?;
    let read = |after: u64, attempt: Option<u32>| -> Result<Transcript, Error> {
        as_user(project, mode, baton_core::ForeignFile::Keep, |cx| {
            TeamTranscript {
                task: task.clone(),
                attempt,
                after,
                limit: args.limit,
            }
            .run(cx)
        })
    };
    let first = read(args.after, attempt)?;
    let number = first.attempt.attempt;
    if !args.follow {
        crate::output::emit_paged(json, &first, || render::transcript(&first, args.full));
        return Ok(0);
    }
    // Following: events as JSON lines, or as text lines, until the attempt ends.
    let print = |t: &Transcript| {
        for event in &t.events {
            emit_line(json, event, || render::event(event, args.full));
        }
    };
    if !json {
        println!("{}", render::header(&first.attempt));
    }
    print(&first);
    let mut last = first.events.last().map_or(0, |e| e.seq);
    let mut waiter = TranscriptWait::start(&*project.tasks, project.local(), &task, mode)?;
    loop {
        // A wake is a hint; the attempt's end is read from the store either way.
        waiter.wait(Some(Instant::now() + Duration::from_secs(1)))?;
        let next = read(last, Some(number))?;
        print(&next);
        last = next.events.last().map_or(last, |e| e.seq);
        if next.attempt.end != AttemptEnd::Running && next.events.is_empty() {
            if !json {
                println!("{}", render::header(&next.attempt));
            }
            return Ok(0);
        }
    }
}

fn stop(project: &OpenProject, args: StopArgs, mode: WatchMode, json: bool) -> Result<u8, Error> {
    let StopArgs { request, no_wait } = args;
    let now = request.now;
    let asked = as_user(project, mode, baton_core::ForeignFile::Keep, |cx| {
        request.run(cx)
    })?;
    let all = asked.workers.len() == asked.supervisor.names.len();
    if now && !no_wait {
        // Stopping now is bounded: the agents get a few seconds, then are killed.
        let deadline = Instant::now() + baton_team::STOP_GRACE + Duration::from_secs(10);
        wait_stopped(
            project.local(),
            &*project.team,
            &asked.workers,
            all,
            deadline,
        )?;
    }
    emit(json, &asked, || render::stop_asked(&asked));
    Ok(0)
}
