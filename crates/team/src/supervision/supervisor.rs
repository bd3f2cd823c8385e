//! The supervisor: one per machine and project. It holds `.coordination/team/supervisor.lock`
//! while it runs (so a second `team up` finds it and changes it instead of starting another),
//! says who it is in `supervisor.json` ([`info`](super::info)), runs one thread per worker, and
//! takes requests (more or fewer workers; stop, pause or resume some or all) as files in
//! `team/requests/` ([`requests`](super::requests)), which it watches: nothing polls.
//!
//! On start it clears up after a supervisor of this machine that was killed: agent process
//! groups still running are killed (their tasks are taken up again by the workers of the same
//! names), and its workers' records say they stopped.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};

use baton_core::review::MergeMode;
use baton_core::{Layout, StoreError, TeamStore, Timestamp, WorkerState};
use baton_fs::{FileLock, pid_alive, write_atomic};
use baton_live::WatchMode;
use baton_live::watcher::Watch;
use serde::Serialize;

use crate::Progress;
use crate::error::{Result, TeamError};
use crate::landing::merge_queue::MergeQueue;
use crate::landing::merger::run_merger;
use crate::launch::Setting;
use crate::launch::attempt_marks;
use crate::outcome::verdict::Verdict;
use crate::planning::seat::PlannerSeat;
use crate::process::kill_marked;
use crate::profile::Profile;
use crate::supervision::crew::{Crew, TeamStores};
pub use crate::supervision::host::host_name;
pub use crate::supervision::info::{SupervisorInfo, running_supervisor};
use crate::supervision::info::{team_file, write_info};
pub use crate::supervision::requests::{Request, requests_dir, send_request};
use crate::supervision::requests::{Running, clear_requests, take_requests, worker_names};
use crate::supervision::worker::{WorkerReport, run_worker};

/// Most workers one supervisor runs.
pub use crate::starting::request::MAX_WORKERS;

/// What the supervisor reacts to.
#[derive(Debug)]
pub enum Control {
    /// Requests may be waiting in `team/requests/`.
    Requests,
    /// A worker's thread ended.
    WorkerEnded(String, Box<Result<WorkerReport>>),
    /// Stop everything (Ctrl-C), now or after the current tasks.
    Stop { now: bool },
}

/// How to reach a running supervisor from this process (a Ctrl-C handler).
#[derive(Clone)]
pub struct Controller(Sender<Control>);

impl Controller {
    pub fn stop(&self, now: bool) {
        let _ = self.0.send(Control::Stop { now });
    }
}

/// The supervisor's inbox.
pub struct Controls {
    tx: Sender<Control>,
    rx: Receiver<Control>,
}

impl Default for Controls {
    fn default() -> Self {
        let (tx, rx) = channel();
        Controls { tx, rx }
    }
}

impl Controls {
    pub fn controller(&self) -> Controller {
        Controller(self.tx.clone())
    }
}

/// What a team is asked to be.
#[derive(Debug, Clone)]
pub struct TeamPlan {
    pub profile: Profile,
    pub workers: usize,
    /// Worker names are this and a number (default: the profile's prefix, with the host on a
    /// store shared across machines).
    pub prefix: Option<String>,
    pub stay: bool,
    pub budget_usd: Option<f64>,
    pub mode: WatchMode,
    /// How done tasks reach the lead's branch: the lead merges them, or the team's merge queue
    /// lands them ([`crate::landing::merge_queue`]).
    pub merge: MergeMode,
    /// The request it came from, kept in the supervisor's record.
    pub request: Option<crate::starting::request::TeamUp>,
    /// A goal the team plans itself (`--goal`): its planner runs beside the workers, who
    /// stay until the plan is carried out.
    pub planning: Option<crate::planning::Planning>,
    /// Whoever judges each done task before the merge queue lands it (`--judge`).
    pub judge: Option<crate::roles::Judge>,
}

/// How a team ended.
#[derive(Debug, Clone, Serialize)]
pub struct TeamReport {
    pub workers: Vec<WorkerReport>,
    pub spent_usd: f64,
    /// Workers whose thread ended in an error, with it.
    pub errors: Vec<(String, String)>,
    /// How the run ended, task by task.
    pub verdict: Verdict,
    /// With a goal: the plan task, and whether its plan was carried out.
    pub plan: Option<crate::planning::PlanOutcome>,
}

/// Waits until what was asked to stop has: the whole team (its supervisor gone) or the named
/// `workers` (one of them recorded as stopped), looking every 50 ms until `deadline`; whether
/// it did.
pub fn wait_stopped(
    local: &Layout,
    team: &dyn TeamStore,
    workers: &[String],
    whole_team: bool,
    deadline: std::time::Instant,
) -> Result<bool> {
    loop {
        let stopped = if whole_team {
            running_supervisor(local)?.is_none()
        } else {
            team.workers()?
                .iter()
                .any(|w| workers.contains(&w.name) && w.state == WorkerState::Stopped)
        };
        if stopped || std::time::Instant::now() >= deadline {
            return Ok(stopped);
        }
        std::thread::sleep(std::time::Duration::from_millis(50)); // the next look
    }
}

/// Kills what a killed supervisor of this machine left running, and says its workers stopped.
fn clear_up_after_a_killed_supervisor(
    team: &dyn TeamStore,
    host: &str,
    project_dir: &Path,
) -> Result<()> {
    let me = std::process::id();
    for mut worker in team.workers()? {
        if worker.host != host || worker.supervisor_pid == me || pid_alive(worker.supervisor_pid) {
            continue;
        }
        if let Some(pid) = worker.pid {
            baton_fs::ProcessGroup::led_by(pid).kill();
        }
        if let (Some(task), Some(attempt)) = (&worker.task, worker.attempt) {
            kill_marked(&attempt_marks(project_dir, &worker.name, task, attempt));
        }
        if worker.state != WorkerState::Stopped {
            worker.state = WorkerState::Stopped;
            worker.pid = None;
            worker.last_event = Some("its supervisor was killed".into());
            worker.updated_at = Timestamp::now();
            team.save_worker(&worker)?;
        }
    }
    Ok(())
}

/// Runs a team until its workers drain the queue or it is asked to stop. Refused when a
/// supervisor runs already for this project on this machine ([`send_request`] changes it).
pub fn run_team(
    stores: TeamStores<'_>,
    setting: Setting,
    plan: TeamPlan,
    controls: Controls,
    progress: &(dyn Fn(Progress) + Sync),
) -> Result<TeamReport> {
    let TeamStores {
        tasks,
        team,
        local,
        documents,
    } = stores;
    if plan.workers == 0 || plan.workers > MAX_WORKERS {
        return Err(TeamError::new(
            baton_core::ErrorKind::InvalidArguments,
            format!(
                "a team runs 1 to {MAX_WORKERS} workers (asked for {})",
                plan.workers
            ),
        ));
    }
    let dir = local.team_dir();
    std::fs::create_dir_all(requests_dir(local)).map_err(|e| StoreError::io(&dir, e))?;
    let Some(_held) = FileLock::try_exclusive(&team_file(local, "supervisor.lock"))? else {
        return Err(TeamError::new(
            baton_core::ErrorKind::TeamRunning,
            "a team runs already for this project on this machine: `baton team up` changes it",
        ));
    };
    // Requests left for a supervisor that is gone are not this one's.
    clear_requests(local);
    let host = host_name();
    clear_up_after_a_killed_supervisor(team, &host, local.project_dir())?;
    let prefix = plan.prefix.clone().unwrap_or_else(|| {
        if tasks.shared_across_machines() {
            format!("{host}-{}", plan.profile.name_prefix)
        } else {
            plan.profile.name_prefix.clone()
        }
    });
    let planner = match &plan.planning {
        Some(planning) => Some(PlannerSeat::new(
            stores,
            &setting,
            planning,
            plan.mode,
            plan.budget_usd,
            &host,
            progress,
        )?),
        None => None,
    };
    let mut crew = crew_of(stores, setting, &plan, host.clone(), progress)?;
    // A planned team lasts as long as its plan: its planner stops it.
    crew.pace.stay |= planner.is_some();
    let mut info = SupervisorInfo {
        pid: std::process::id(),
        host,
        profile: plan.profile.name.clone(),
        workers: plan.workers,
        names: worker_names(&prefix, 1..=plan.workers),
        planner: planner.as_ref().map(|seat| seat.name.clone()),
        started_at: Timestamp::now(),
        budget_usd: plan.budget_usd,
        request: plan.request.clone(),
    };
    for name in &info.names {
        baton_core::names::validate_agent_id(name)?;
    }
    write_info(local, &info)?;
    // Started here, not from the first worker's thread, whose pids cgroup it would keep.
    baton_fs::warden::ready();
    let report = supervise(
        &crew,
        planner.as_ref(),
        &mut info,
        &prefix,
        plan.mode,
        controls,
    )?;
    // The lead hears of the end wherever they are (the served UI's push, a webhook).
    if let Err(e) = baton_core::team_end::record(documents, &report.ended(&info)) {
        eprintln!("baton: the team's end could not be recorded: {e}");
    }
    let _ = std::fs::remove_file(team_file(local, "supervisor.json"));
    clear_requests(local);
    Ok(report)
}

/// Runs the crew's workers (and its merger, and its planner) until every one has ended,
/// answering the requests sent meanwhile (resize, stop) as they come; the team's report and
/// verdict.
fn supervise(
    crew: &Crew<'_>,
    planner: Option<&PlannerSeat<'_>>,
    info: &mut SupervisorInfo,
    prefix: &str,
    mode: WatchMode,
    controls: Controls,
) -> Result<TeamReport> {
    let local = crew.local;
    let Controls { tx, rx } = controls;
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| -> Result<TeamReport> {
        let done = &done;
        let mut watch = Watch::new(mode, &requests_dir(local))?;
        watch.add(&requests_dir(local), false)?;
        let watch_tx = tx.clone();
        scope.spawn(move || watch_requests(watch, &watch_tx, done));
        let start = |name: String| {
            let tx = tx.clone();
            crew.flags(&name);
            scope.spawn(move || {
                let result = run_worker(crew, &name);
                let _ = tx.send(Control::WorkerEnded(name, Box::new(result)));
            });
        };
        let merger = crew
            .merge_queue
            .as_ref()
            .map(|queue| scope.spawn(move || run_merger(crew, queue)));
        let mut running: BTreeSet<String> = info.names.iter().cloned().collect();
        if let Some(seat) = planner {
            running.insert(seat.name.clone());
            seat.crew.flags(&seat.name);
            let tx = tx.clone();
            scope.spawn(move || {
                let result = seat.run(crew);
                let _ = tx.send(Control::WorkerEnded(seat.name.clone(), Box::new(result)));
            });
        }
        for name in &info.names {
            start(name.clone());
        }
        let mut report = TeamReport {
            workers: Vec::new(),
            spent_usd: 0.0,
            errors: Vec::new(),
            verdict: Verdict::default(),
            plan: None,
        };
        // Requests sent before the watch was in place.
        let _ = tx.send(Control::Requests);
        while !running.is_empty() {
            let Ok(control) = rx.recv() else { break };
            match control {
                Control::WorkerEnded(name, result) => {
                    running.remove(&name);
                    match *result {
                        Ok(worker) => report.workers.push(worker),
                        Err(e) => report.errors.push((name, e.to_string())),
                    }
                }
                Control::Stop { now } => {
                    crew.stop_all(now);
                    if let Some(seat) = planner {
                        seat.crew.stop_all(now);
                    }
                }
                Control::Requests => {
                    for request in take_requests(local) {
                        let team = Running {
                            crew,
                            planner: planner.map(|seat| &seat.crew),
                            names: &mut running,
                            info,
                            prefix,
                            start: &start,
                        };
                        team.answer(request);
                    }
                }
            }
        }
        if let Some(queue) = &crew.merge_queue {
            queue.close();
        }
        if let Some(merger) = merger {
            let _ = merger.join();
        }
        done.store(true, Ordering::SeqCst);
        // Wakes the request watcher so it sees it is done.
        let _ = write_atomic(&requests_dir(local).join(".done"), b"");
        report.spent_usd = crew.spent_usd() + planner.map_or(0.0, |seat| seat.crew.spent_usd());
        let merged = crew.merge_queue.as_ref().map(MergeQueue::summary);
        report.verdict = Verdict::of(&report.workers, crew.tasks, merged);
        report.plan = planner.map(|seat| seat.outcome());
        Ok(report)
    })
}

/// Tells the supervisor of each change in the requests' folder until `done`.
fn watch_requests(watch: Watch, tx: &Sender<Control>, done: &AtomicBool) {
    while !done.load(Ordering::SeqCst) {
        if watch.wait(None).is_err() || tx.send(Control::Requests).is_err() {
            return;
        }
    }
}

/// The crew of a team run as `plan` says: its limits, and its merge queue (`--merge auto`,
/// which needs a worktree per task).
fn crew_of<'a>(
    stores: TeamStores<'a>,
    setting: Setting,
    plan: &TeamPlan,
    host: String,
    progress: &'a (dyn Fn(Progress) + Sync),
) -> Result<Crew<'a>> {
    let local = stores.local;
    let mut crew = Crew::new(
        stores,
        setting,
        plan.profile.clone(),
        host,
        plan.mode,
        progress,
    )?;
    crew.pace.stay = plan.stay;
    crew.spend.cap_usd = plan.budget_usd;
    if plan.merge == MergeMode::Auto {
        if crew.worktrees.is_none() {
            return Err(TeamError::new(
                baton_core::ErrorKind::InvalidArguments,
                "--merge auto lands each task's branch: it needs a worktree per task (a git \
                 repository, without --no-worktree)",
            ));
        }
        crew.merge_queue = Some(MergeQueue::new(local));
    }
    crew.judge = plan.judge.clone();
    Ok(crew)
}
