//! The supervisor: one per machine and project. It holds `.coordination/team/supervisor.lock`
//! while it runs (so a second `team up` finds it and changes it instead of starting another),
//! says who it is in `supervisor.json`, runs one thread per worker, and takes requests (more
//! or fewer workers, stop some or all, now or after their task) as files in
//! `team/requests/`, which it watches: nothing polls.
//!
//! On start it clears up after a supervisor of this machine that was killed: agent process
//! groups still running are killed (their tasks are taken up again by the workers of the same
//! names), and its workers' records say they stopped.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};

use baton_core::review::MergeMode;
use baton_core::{Layout, StoreError, TeamStore, Timestamp, WorkerState};
use baton_fs::{FileLock, pid_alive, write_atomic};
use baton_live::WatchMode;
use baton_live::watcher::Watch;
use serde::{Deserialize, Serialize};

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
use crate::supervision::worker::{WorkerReport, run_worker};

/// Most workers one supervisor runs.
pub use crate::starting::request::MAX_WORKERS;

/// Who runs the team on this machine, as `supervisor.json` says.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SupervisorInfo {
    pub pid: u32,
    pub host: String,
    pub profile: String,
    /// How many workers it is asked to run.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub workers: usize,
    /// Its workers' names.
    pub names: Vec<String>,
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub started_at: Timestamp,
    /// The whole team's budget (US dollars), if it has one.
    #[serde(default)]
    pub budget_usd: Option<f64>,
    /// What it was asked to run (its command, limits, merge mode): a second `team up` may
    /// change only its size.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub request: Option<crate::starting::request::TeamUp>,
}

/// A change asked of a running supervisor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Request {
    /// Run this many workers.
    Workers(usize),
    /// Stop these workers (none named: all), now or after their current task.
    Stop { names: Vec<String>, now: bool },
}

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

fn team_file(local: &Layout, name: &str) -> PathBuf {
    local.team_dir().join(name)
}

pub fn requests_dir(local: &Layout) -> PathBuf {
    team_file(local, "requests")
}

/// The supervisor running for this project on this machine, if one is.
pub fn running_supervisor(local: &Layout) -> Result<Option<SupervisorInfo>> {
    let lock = team_file(local, "supervisor.lock");
    if !lock.exists() || FileLock::try_exclusive(&lock)?.is_some() {
        return Ok(None);
    }
    let path = team_file(local, "supervisor.json");
    match std::fs::read(&path) {
        Ok(bytes) => Ok(serde_json::from_slice(&bytes).ok()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(StoreError::io(&path, e).into()),
    }
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

/// Leaves `request` for the running supervisor; refused when none runs.
pub fn send_request(local: &Layout, request: &Request) -> Result<SupervisorInfo> {
    let Some(info) = running_supervisor(local)? else {
        return Err(TeamError::new(
            baton_core::ErrorKind::NoTeam,
            "no team runs for this project on this machine: start one with `baton team up`",
        ));
    };
    let dir = requests_dir(local);
    std::fs::create_dir_all(&dir).map_err(|e| StoreError::io(&dir, e))?;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let path = dir.join(format!("{nanos:032}-{}.json", std::process::id()));
    write_atomic(
        &path,
        &serde_json::to_vec(request).expect("requests serialise"),
    )?;
    Ok(info)
}

/// The names of workers `range` of a team.
fn worker_names(prefix: &str, range: std::ops::RangeInclusive<usize>) -> Vec<String> {
    range.map(|i| format!("{prefix}{i}")).collect()
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
        tasks, team, local, ..
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

/// A running team as a request changes it: its workers, its record, and how it starts one.
struct Running<'t, 'a> {
    crew: &'t Crew<'a>,
    /// The planner's crew, when the team plans itself: stopped with the team, or by its name.
    planner: Option<&'t Crew<'a>>,
    /// The workers whose threads run.
    names: &'t mut BTreeSet<String>,
    info: &'t mut SupervisorInfo,
    prefix: &'t str,
    start: &'t dyn Fn(String),
}

impl Running<'_, '_> {
    /// Does what `request` asks: stop the team or some of its workers, or resize it.
    fn answer(self, request: Request) {
        let crew = self.crew;
        match request {
            Request::Stop { names, now } if names.is_empty() => {
                crew.stop_all(now);
                if let Some(planner) = self.planner {
                    planner.stop_all(now);
                }
            }
            Request::Stop { names, now } => {
                for name in names.iter().filter(|n| self.names.contains(*n)) {
                    // The planner's flags are its crew's; stopping it ends the plan, and the
                    // team with it once the tasks in hand are done.
                    match self.planner.and_then(|planner| planner.flags_of(name)) {
                        Some(flags) => flags.stop(now),
                        None => crew.flags(name).stop(now),
                    }
                }
            }
            Request::Workers(count) => {
                let count = count.clamp(1, MAX_WORKERS);
                let have = self.info.names.len();
                if count > have {
                    for name in worker_names(self.prefix, have + 1..=count) {
                        self.names.insert(name.clone());
                        self.info.names.push(name.clone());
                        (self.start)(name);
                    }
                } else {
                    for name in self.info.names.drain(count..) {
                        crew.flags(&name).stop(false);
                    }
                }
                self.info.workers = count;
                let _ = write_info(crew.local, self.info);
            }
        }
    }
}

fn write_info(local: &Layout, info: &SupervisorInfo) -> Result<()> {
    let mut bytes = serde_json::to_vec_pretty(info).expect("the info serialises");
    bytes.push(b'\n');
    Ok(write_atomic(&team_file(local, "supervisor.json"), &bytes)?)
}

fn request_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

/// The waiting requests, oldest first, each removed once read. A file that is not a request
/// is removed too (nothing else writes there).
fn take_requests(local: &Layout) -> Vec<Request> {
    request_files(&requests_dir(local))
        .into_iter()
        .filter_map(|path| {
            let request = std::fs::read(&path)
                .ok()
                .and_then(|bytes| serde_json::from_slice(&bytes).ok());
            let _ = std::fs::remove_file(&path);
            request
        })
        .collect()
}

fn clear_requests(local: &Layout) {
    for path in request_files(&requests_dir(local)) {
        let _ = std::fs::remove_file(path);
    }
    let _ = std::fs::remove_file(requests_dir(local).join(".done"));
}

#[cfg(test)]
mod tests {
    use super::worker_names;

    #[test]
    fn workers_are_named_by_prefix_and_number() {
        assert_eq!(worker_names("cc", 1..=3), ["cc1", "cc2", "cc3"]);
        assert_eq!(worker_names("a-ex", 4..=4), ["a-ex4"]);
    }
}
