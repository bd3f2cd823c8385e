//! `baton team`: the supervised team. `up` runs `baton-team`'s supervisor in this process (or
//! detached, in a process of its own); `status`, `logs` and `stop` are catalogue operations
//! (the same for the MCP server and the desktop), `logs --follow` waits on the store's changes.

mod args;
mod render;

use std::process::{Command as Process, Stdio};
use std::time::{Duration, Instant};

use baton_api::crew::{TeamTranscript, Transcript};
use baton_api::{Error, OpenProject, Operation, exit};
use baton_core::{AttemptEnd, Changes, ErrorKind, StoreError};
use baton_live::WatchMode;
use baton_live::watcher::Watch;
use baton_team::profile::{load_profiles, resolve};
use baton_team::supervisor::TeamPlan;
use baton_team::{Controls, Request, Setting, run_team, running_supervisor, send_request};

use crate::context::{as_user, operate};
use crate::output::{emit, emit_line};

pub use args::TeamCommand;
use args::{LogsArgs, StopArgs, UpArgs};

/// Set in the environment of the process `team up --detach` leaves running.
const DETACHED: &str = "BATON_TEAM_DETACHED";

/// How the project was reached, passed on to the agents so they reach the same store.
pub struct Reach<'a> {
    pub store: Option<&'a str>,
    pub project: Option<&'a str>,
    pub lease: Duration,
}

pub fn run(
    project: &OpenProject,
    command: TeamCommand,
    reach: &Reach<'_>,
    mode: WatchMode,
    json: bool,
) -> Result<u8, Error> {
    match command {
        TeamCommand::Up(args) => up(project, args, reach, mode, json),
        TeamCommand::Status(op) => operate(project, mode, json, op, render::status),
        TeamCommand::Logs(args) => logs(project, args, mode, json),
        TeamCommand::Stop(args) => stop(project, args, mode, json),
        TeamCommand::Profiles => {
            let profiles = load_profiles(project.local())?;
            let list: Vec<_> = profiles.values().collect();
            emit(json, &list, || render::profiles(&list, project.local()));
            Ok(0)
        }
    }
}

fn up(
    project: &OpenProject,
    args: UpArgs,
    reach: &Reach<'_>,
    mode: WatchMode,
    json: bool,
) -> Result<u8, Error> {
    let local = project.local();
    // Said here, before anything else, for a new team and a resize alike.
    let most = baton_team::supervisor::MAX_WORKERS;
    if args.workers == 0 || args.workers > most {
        return Err(Error::invalid_arguments(format!(
            "--workers must be 1 to {most} (it is {})",
            args.workers
        )));
    }
    let name = args.agent.clone().unwrap_or_else(|| {
        if args.exec.is_some() {
            "exec"
        } else {
            "claude"
        }
        .to_string()
    });
    if let Some(running) = running_supervisor(local)? {
        if running.profile != name {
            return Err(Error::new(
                ErrorKind::TeamRunning,
                format!(
                    "a team of {} workers runs already here (pid {}): stop it first (`baton team stop`), or give --agent {} to change its size",
                    running.profile, running.pid, running.profile
                ),
            ));
        }
        return resize(local, running.pid, args.workers, json);
    }
    let mut profile = resolve(local, &name, args.exec.as_deref())?;
    let is_repo = baton_git::Worktrees::open(local).is_ok();
    profile.worktree = if args.no_worktree {
        false
    } else if args.worktree {
        true
    } else {
        profile.worktree && is_repo
    };
    if let Some(v) = args.max_cost_usd {
        profile.max_cost_usd = Some(v);
    }
    if let Some(v) = args.max_turns {
        profile.max_turns = Some(v);
    }
    if let Some(v) = args.max_minutes {
        profile.max_minutes = Some(v);
    }
    if let Some(v) = args.max_attempts {
        profile.max_attempts = v;
    }
    let plan = TeamPlan {
        profile,
        workers: args.workers,
        prefix: args.prefix.clone(),
        stay: args.stay,
        budget_usd: args.budget_usd,
        mode,
    };
    if args.detach && std::env::var_os(DETACHED).is_none() {
        return detach(local, json);
    }
    let baton = std::env::current_exe().map_err(|e| StoreError::io("the baton program", e))?;
    let mut store_env = Vec::new();
    if let Some(store) = reach.store {
        store_env.push(("BATON_STORE".to_string(), store.to_string()));
    }
    if let Some(name) = reach.project {
        store_env.push(("BATON_PROJECT".to_string(), name.to_string()));
    }
    store_env.push((
        "BATON_LEASE".to_string(),
        format!("{}ms", reach.lease.as_millis()),
    ));
    let setting = Setting {
        baton,
        project_dir: local.project_dir().to_path_buf(),
        store_env,
    };
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
        eprintln!(
            "baton: a team of {} {} worker(s){}; Ctrl-C stops it",
            plan.workers,
            plan.profile.name,
            if plan.profile.worktree {
                ", a worktree per task"
            } else {
                ""
            }
        );
    }
    let progress = move |event: baton_team::Progress| {
        if json {
            emit_line(true, &event, String::new);
        } else if let Some(line) = render::progress(&event) {
            eprintln!("{line}");
        }
    };
    let stores = baton_team::TeamStores {
        tasks: &*project.tasks,
        team: &*project.team,
        documents: &*project.documents,
        local,
    };
    let report = run_team(stores, setting, plan, controls, &progress)?;
    // With --json the progress events came one per line; the report is the last line.
    emit_line(json, &report, || render::report(&report));
    if interrupted.load(std::sync::atomic::Ordering::SeqCst) {
        return Ok(exit::INTERRUPTED.code);
    }
    Ok(if report.errors.is_empty() {
        0
    } else {
        exit::ERROR.code
    })
}

/// Asks the running supervisor for `workers` workers and waits until it says it has them.
fn resize(local: &baton_core::Layout, pid: u32, workers: usize, json: bool) -> Result<u8, Error> {
    let before = send_request(local, &Request::Workers(workers))?;
    let deadline = Instant::now() + Duration::from_secs(30);
    let info = loop {
        match running_supervisor(local)? {
            Some(info) if info.workers == workers => break info,
            Some(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(50)),
            _ => {
                return Err(Error::new(
                    ErrorKind::NoTeam,
                    format!("the running team (pid {pid}) did not take the change within 30 s"),
                ));
            }
        }
    };
    emit(json, &info, || {
        format!(
            "The running team (pid {}, {}) goes from {} to {} workers: {}",
            info.pid,
            info.profile,
            before.workers,
            info.workers,
            info.names.join(", ")
        )
    });
    Ok(0)
}

/// Starts this same command again in a process of its own, which keeps running after this
/// one returns, and waits until its supervisor runs.
fn detach(local: &baton_core::Layout, json: bool) -> Result<u8, Error> {
    use std::os::unix::process::CommandExt;
    let dir = local.team_dir();
    std::fs::create_dir_all(&dir).map_err(|e| StoreError::io(&dir, e))?;
    let log_path = dir.join("supervisor.log");
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log_path)
        .map_err(|e| StoreError::io(&log_path, e))?;
    let err_log = log.try_clone().map_err(|e| StoreError::io(&log_path, e))?;
    let exe = std::env::current_exe().map_err(|e| StoreError::io("the baton program", e))?;
    let mut child = Process::new(exe)
        .args(std::env::args_os().skip(1))
        .env(DETACHED, "1")
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(err_log)
        // Out of the terminal's process group: Ctrl-C there does not reach it.
        .process_group(0)
        .spawn()
        .map_err(|e| {
            Error::new(
                ErrorKind::Spawn,
                format!("cannot start the supervisor: {e}"),
            )
        })?;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(info) = running_supervisor(local)?
            && info.pid == child.id()
        {
            emit(json, &info, || {
                format!(
                    "The team runs in the background (pid {}): {} ({}). Its output: {}\n\
                     `baton team status` shows it, `baton team stop` stops it.",
                    info.pid,
                    info.names.join(", "),
                    info.profile,
                    log_path.display()
                )
            });
            return Ok(0);
        }
        if let Some(status) = child.try_wait().ok().flatten() {
            let text = std::fs::read_to_string(&log_path).unwrap_or_default();
            let tail: Vec<&str> = text.lines().rev().take(5).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            return Err(Error::new(
                ErrorKind::Spawn,
                format!(
                    "the supervisor ended at once ({status}): {}",
                    tail.join("\n")
                ),
            ));
        }
        if Instant::now() > deadline {
            return Err(Error::new(
                ErrorKind::Spawn,
                format!(
                    "the supervisor did not start within 30 s; see {}",
                    log_path.display()
                ),
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The task and attempt `name` (a worker or a task) means.
fn which_transcript(
    project: &OpenProject,
    name: &str,
    attempt: Option<u32>,
) -> Result<(String, Option<u32>), Error> {
    baton_core::names::validate_agent_id(name)?;
    let workers = project.team.workers()?;
    if let Some(worker) = workers.iter().find(|w| w.name == name) {
        if let (Some(task), None) = (&worker.task, attempt) {
            return Ok((task.clone(), worker.attempt));
        }
        let last = project
            .team
            .attempts(None)?
            .into_iter()
            .filter(|a| a.agent == name)
            .max_by_key(|a| a.started_at);
        return match last {
            Some(a) => Ok((a.task, attempt.or(Some(a.attempt)))),
            None => Err(Error::new(
                ErrorKind::UnknownTask,
                format!("worker {name} has not worked on a task yet"),
            )),
        };
    }
    Ok((name.to_string(), attempt))
}

fn logs(project: &OpenProject, args: LogsArgs, mode: WatchMode, json: bool) -> Result<u8, Error> {
    let (task, attempt) = which_transcript(project, &args.name, args.attempt)?;
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
        emit(json, &first, || render::transcript(&first, args.full));
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
    let mut waiter = ChangeWaiter::start(project, &task, mode)?;
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

/// Wakes when the store may have changed: the folder's transcripts of one task, watched, or
/// the database's notifications.
enum ChangeWaiter {
    Files(Watch),
    Store(Box<dyn baton_core::Listener>),
}

impl ChangeWaiter {
    fn start(project: &OpenProject, task: &str, mode: WatchMode) -> Result<ChangeWaiter, Error> {
        match project.tasks.changes() {
            Changes::Files(_) => {
                let dir = project.local().task_transcripts_dir(task)?;
                std::fs::create_dir_all(&dir).map_err(|e| StoreError::io(&dir, e))?;
                let mut watch = Watch::new(mode, &dir)?;
                watch.add(&dir, false)?;
                Ok(ChangeWaiter::Files(watch))
            }
            Changes::Notifications => match project.tasks.listen_for_changes()? {
                Some(listener) => Ok(ChangeWaiter::Store(listener)),
                None => Err(Error::new(
                    ErrorKind::Watch,
                    "the store offers no notifications",
                )),
            },
        }
    }

    fn wait(&mut self, until: Option<Instant>) -> Result<bool, Error> {
        match self {
            ChangeWaiter::Files(watch) => Ok(!matches!(
                watch.wait(until)?,
                baton_live::watcher::Wake::Deadline
            )),
            ChangeWaiter::Store(listener) => Ok(listener.wait(until)?),
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
        while Instant::now() < deadline {
            let gone = if all {
                running_supervisor(project.local())?.is_none()
            } else {
                project.team.workers()?.iter().any(|w| {
                    asked.workers.contains(&w.name) && w.state == baton_core::WorkerState::Stopped
                })
            };
            if gone {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    emit(json, &asked, || render::stop_asked(&asked));
    Ok(0)
}
