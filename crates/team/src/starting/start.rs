//! Starting a team: the one request (`TeamUp`) that `baton team up`, the MCP tool `team_up` and
//! the desktop's Team view send, and what it does. Checked first (worker count, the profile);
//! then a running supervisor of the same profile is resized, one of another is refused, and
//! otherwise a supervisor is started in a process of its own that outlives the caller
//! ([`start_detached`]), or run in this one by the caller ([`TeamUp::plan`] and
//! [`crate::run_team`]).
//!
//! The detached supervisor is `baton team supervise` given the request as JSON on its stdin:
//! the typed request travels, not a command line to parse again.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use baton_core::{ErrorKind, Layout, StoreError};
use baton_live::WatchMode;
use schemars::JsonSchema;
use serde::Serialize;

use crate::error::{Result, TeamError};
use crate::launch::Setting;
use crate::profile::resolve;
pub use crate::starting::request::TeamUp;
use crate::supervision::supervisor::{
    Request, SupervisorInfo, TeamPlan, running_supervisor, send_request,
};

/// How long a started or resized supervisor has to say it took the request.
const TAKEN_WITHIN: Duration = Duration::from_secs(30);

/// A team started or resized.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct TeamStarted {
    /// The supervisor, as it says after taking the request.
    #[serde(flatten)]
    pub supervisor: SupervisorInfo,
    /// When a running team was resized: how many workers it had before.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional, type = "number"))]
    pub resized_from: Option<usize>,
    /// When a supervisor was started: the file its output goes to.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub log: Option<String>,
}

impl TeamUp {
    /// Why a team would find nothing to do, and what to do about it: no task is left, or
    /// every one left can never start (behind a failed or cancelled one). `None` when there is
    /// work, or the team is to stay for new tasks, or plans its own.
    pub fn nothing_to_do(&self, tasks: &dyn baton_core::TaskStore) -> Result<Option<String>> {
        if self.stay || self.goal.is_some() {
            return Ok(None);
        }
        let (file, now) = tasks.snapshot()?;
        let glance = crate::outcome::board_summary::BoardSummary::of(&file, now, tasks.lease());
        if glance.ready > 0 || glance.running > 0 || glance.waiting.iter().any(|w| !w.out_of_reach)
        {
            return Ok(None);
        }
        Ok(Some(match glance.waiting.first() {
            None => "Nothing to do: no task is waiting to be worked. Add one with `baton leader \
                     add-task \"WHAT TO DO\"` (or plan them on the desktop's board), then `baton \
                     team up` again."
                .to_string(),
            Some(first) => format!(
                "Nothing to do: every task left can never start ({} {}, and {} more). Reset what \
                 failed (`baton leader reset --failed`) or change their dependencies, then \
                 `baton team up` again.",
                first.task,
                first.why,
                glance.waiting.len() - 1
            ),
        }))
    }

    /// The team this request asks for in the project at `local`: its profile resolved and
    /// overridden by the request's limits, worktrees on where the project is a git
    /// repository (unless the request says).
    pub fn plan(&self, local: &Layout, mode: WatchMode) -> Result<TeamPlan> {
        self.check()?;
        let mut profile = resolve(local, self.profile_name(), self.exec.as_deref())?;
        profile.worktree = if self.no_worktree {
            false
        } else if self.worktree {
            true
        } else {
            profile.worktree && baton_git::Worktrees::open(local).is_ok()
        };
        if let Some(v) = self.max_cost_usd {
            profile.max_cost_usd = Some(v);
        }
        if let Some(v) = self.max_turns {
            profile.max_turns = Some(v);
        }
        if let Some(v) = self.max_minutes {
            profile.max_minutes = Some(v);
        }
        if let Some(v) = self.max_attempts {
            profile.max_attempts = v;
        }
        if self.sandbox || self.no_sandbox {
            profile.sandbox.enabled = self.sandbox;
        }
        if profile.sandbox.enabled {
            // Refused before anything is claimed, saying what to install or enable.
            baton_sandbox::check_available()
                .map_err(|message| TeamError::new(ErrorKind::SandboxUnavailable, message))?;
        }
        let merge = match self.merge {
            Some(merge) => merge,
            None => {
                baton_core::review::ReviewSettings::load(
                    &baton_core::review::review_settings_path(local.root()),
                )?
                .merge
            }
        };
        // Refused here, before anything is said or started (the supervisor refuses it too).
        if merge == baton_core::review::MergeMode::Auto && !profile.worktree {
            return Err(TeamError::new(
                ErrorKind::InvalidArguments,
                "--merge auto lands each task's branch: it needs a worktree per task (a git \
                 repository, without --no-worktree)",
            ));
        }
        let planning = match &self.goal {
            Some(goal) => Some(crate::planning::Planning {
                goal: goal.trim().to_string(),
                approval: self.plan.unwrap_or_default(),
                budget_usd: self.planner_budget_usd,
                answers_questions: self.planner_answers,
                profile: self.planner_profile(local, &profile)?,
            }),
            None => None,
        };
        let judge = self.judge_of(local, merge)?;
        Ok(TeamPlan {
            judge,
            planning,
            merge,
            request: Some(self.clone()),
            profile,
            workers: self.workers,
            prefix: self.prefix.clone(),
            stay: self.stay,
            budget_usd: self.budget_usd,
            mode,
        })
    }
}

impl TeamUp {
    /// The planner's profile: `--planner`, else the project's profile named `planner`, else
    /// the workers' (`workers`); never with a worktree, sandboxed as the workers are.
    fn planner_profile(
        &self,
        local: &Layout,
        workers: &crate::profile::Profile,
    ) -> Result<crate::profile::Profile> {
        let declared = crate::profile::load_profiles(local)?;
        let name = match &self.planner {
            Some(name) => name.clone(),
            None if declared.contains_key("planner") => "planner".to_string(),
            None => workers.name.clone(),
        };
        if name == workers.name && self.exec.is_some() {
            return Err(TeamError::new(
                ErrorKind::InvalidArguments,
                "--exec is the workers' command; a planner needs its own: --planner PROFILE, or \
                 [profiles.planner] in .coordination/team/profiles.toml (kind = \"exec\" and the \
                 command that plans, or an agent such as claude)",
            ));
        }
        let mut profile = match name == workers.name {
            true => workers.clone(),
            false => resolve(local, &name, None)?,
        };
        profile.worktree = false;
        if self.sandbox || self.no_sandbox {
            profile.sandbox.enabled = self.sandbox;
        }
        Ok(profile)
    }

    /// The team's judge: `--judge`, else the project's profile named `judge` when the merge
    /// queue lands the work; none otherwise. A judge judges what the queue lands, so it needs
    /// `--merge auto`; it is a command (an `exec` profile) or an agent, sandboxed as the
    /// workers are unless its profile or the request says otherwise.
    fn judge_of(
        &self,
        local: &Layout,
        merge: baton_core::review::MergeMode,
    ) -> Result<Option<crate::roles::Judge>> {
        use crate::roles::{Judge, JudgeBy};
        use baton_core::review::MergeMode;
        let name = match &self.judge {
            Some(name) => name.clone(),
            None if merge == MergeMode::Auto
                && crate::profile::load_profiles(local)?.contains_key("judge") =>
            {
                "judge".to_string()
            }
            None => return Ok(None),
        };
        if merge != MergeMode::Auto {
            return Err(TeamError::new(
                ErrorKind::InvalidArguments,
                "--judge judges each task before the merge queue lands it: give --merge auto too",
            ));
        }
        let mut profile = resolve(local, &name, None)?;
        let by = match profile.kind.runs_shell_command() {
            true => JudgeBy::Command(profile.command),
            false => {
                if self.sandbox || self.no_sandbox {
                    profile.sandbox.enabled = self.sandbox;
                }
                if profile.sandbox.enabled {
                    baton_sandbox::check_available()
                        .map_err(|m| TeamError::new(ErrorKind::SandboxUnavailable, m))?;
                }
                JudgeBy::Agent(Box::new(profile))
            }
        };
        Ok(Some(Judge {
            name: "judge".to_string(),
            by,
        }))
    }
}

/// The supervisor that already runs for this project on this machine, if any, after checking
/// that it runs the profile asked for (another is refused: stop it first).
pub fn running_for(local: &Layout, request: &TeamUp) -> Result<Option<SupervisorInfo>> {
    let Some(running) = running_supervisor(local)? else {
        return Ok(None);
    };
    // A request that names no agent (`team up -w 4`) is about the team that runs, whatever
    // its profile: a second `team up` resizes it.
    let names_one = request.profile.is_some() || request.exec.is_some();
    let asked = request.profile_name();
    if names_one && running.profile != asked {
        return Err(TeamError::new(
            ErrorKind::TeamRunning,
            format!(
                "a team of {} workers runs already here (pid {}): stop it first (`baton team stop`), or give --agent {} to change its size",
                running.profile, running.pid, running.profile
            ),
        ));
    }
    if let Some(before) = &running.request {
        let differ = request.differences(before);
        if !differ.is_empty() {
            return Err(TeamError::new(
                ErrorKind::TeamRunning,
                format!(
                    "a team runs already here (pid {}) with another {}: a second `team up` \
                     changes only its size. Stop it first (`baton team stop`) to run it \
                     differently, or give only --workers",
                    running.pid,
                    differ.join(", ")
                ),
            ));
        }
    }
    Ok(Some(running))
}

/// Starts the team `request` asks for in a process of its own, or resizes the one running;
/// returns once its supervisor says it took the request.
pub fn start_detached(
    local: &Layout,
    request: &TeamUp,
    setting: &Setting,
    mode: WatchMode,
) -> Result<TeamStarted> {
    if let Some(resized) = resize_if_running(local, request)? {
        return Ok(resized);
    }
    // Refused here, with the caller, not in a log nobody reads.
    request.plan(local, mode)?;
    let dir = local.team_dir();
    std::fs::create_dir_all(&dir).map_err(|e| StoreError::io(&dir, e))?;
    let log_path = dir.join("supervisor.log");
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log_path)
        .map_err(|e| StoreError::io(&log_path, e))?;
    let err_log = log.try_clone().map_err(|e| StoreError::io(&log_path, e))?;
    let cannot_start = |e: std::io::Error| {
        TeamError::new(
            ErrorKind::Spawn,
            format!(
                "cannot start the supervisor ({}): {e}",
                setting.baton.display()
            ),
        )
    };
    let mut command = Command::new(&setting.baton);
    command
        .args(["team", "supervise"])
        .current_dir(&setting.project_dir)
        .env("BATON_DIR", &setting.project_dir)
        .env("BATON_WATCH_MODE", mode.to_string())
        .envs(setting.store_env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(log)
        .stderr(err_log);
    // Out of the caller's process group: a Ctrl-C in its terminal does not reach it, and it
    // does not die with the caller.
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut child = command.spawn().map_err(cannot_start)?;
    {
        let mut stdin = child.stdin.take().expect("stdin is piped");
        let json = serde_json::to_vec(request).expect("requests serialise");
        stdin.write_all(&json).map_err(cannot_start)?;
    }
    let started = taken_up(local, &mut child, &log_path)?;
    // A long-lived caller (the desktop, an MCP server) reaps it when it ends, so it leaves
    // no zombie; a short one exits first and the supervisor is adopted.
    std::thread::spawn(move || child.wait());
    Ok(TeamStarted {
        supervisor: started,
        resized_from: None,
        log: Some(log_path.display().to_string()),
    })
}

/// Waits (until [`TAKEN_WITHIN`]) for the supervisor `child` to say it took the request; its
/// end or its silence is an error quoting its log.
fn taken_up(
    local: &Layout,
    child: &mut std::process::Child,
    log_path: &Path,
) -> Result<SupervisorInfo> {
    let pid = child.id();
    let deadline = Instant::now() + TAKEN_WITHIN;
    loop {
        if let Some(info) = running_supervisor(local)?
            && info.pid == pid
        {
            return Ok(info);
        }
        if let Some(status) = child.try_wait().ok().flatten() {
            return Err(TeamError::new(
                ErrorKind::Spawn,
                format!(
                    "the supervisor ended at once ({status}): {}",
                    log_tail(log_path, 5)
                ),
            ));
        }
        if Instant::now() > deadline {
            return Err(TeamError::new(
                ErrorKind::Spawn,
                format!(
                    "the supervisor did not start within {} s; see {}",
                    TAKEN_WITHIN.as_secs(),
                    log_path.display()
                ),
            ));
        }
        std::thread::sleep(Duration::from_millis(50)); // retry until the deadline
    }
}

/// Resizes the team that runs for this project on this machine to the request's size, if one
/// runs (and runs the profile asked for: another is refused); `None` when none runs.
pub fn resize_if_running(local: &Layout, request: &TeamUp) -> Result<Option<TeamStarted>> {
    request.check()?;
    match running_for(local, request)? {
        Some(running) => resize(local, running.pid, request.workers).map(Some),
        None => Ok(None),
    }
}

/// Asks the running supervisor (`pid`) for `workers` workers and waits until it says it has
/// them.
fn resize(local: &Layout, pid: u32, workers: usize) -> Result<TeamStarted> {
    let before = send_request(local, &Request::Workers(workers))?;
    let deadline = Instant::now() + TAKEN_WITHIN;
    loop {
        match running_supervisor(local)? {
            Some(info) if info.workers == workers => {
                return Ok(TeamStarted {
                    supervisor: info,
                    resized_from: Some(before.workers),
                    log: None,
                });
            }
            Some(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(50)),
            _ => {
                return Err(TeamError::new(
                    ErrorKind::NoTeam,
                    format!(
                        "the running team (pid {pid}) did not take the change within {} s",
                        TAKEN_WITHIN.as_secs()
                    ),
                ));
            }
        }
    }
}

/// The last `lines` lines of the file at `path`.
fn log_tail(path: &Path, lines: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let tail: Vec<&str> = text.lines().rev().take(lines).collect();
    tail.into_iter().rev().collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::starting::request::MAX_WORKERS;

    fn request(json: serde_json::Value) -> TeamUp {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn the_profile_is_the_one_named_else_exec_with_a_command_else_claude() {
        assert_eq!(request(serde_json::json!({})).profile_name(), "claude");
        assert_eq!(
            request(serde_json::json!({"exec": "make"})).profile_name(),
            "exec"
        );
        assert_eq!(
            request(serde_json::json!({"exec": "make", "profile": "mine"})).profile_name(),
            "mine"
        );
    }

    #[test]
    fn a_request_defaults_to_one_worker_and_refuses_none_or_too_many() {
        assert_eq!(request(serde_json::json!({})).workers, 1);
        for workers in [0, MAX_WORKERS + 1] {
            let err = request(serde_json::json!({"workers": workers}))
                .check()
                .unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidArguments, "{err}");
            assert!(err.to_string().contains("1 to 256"), "{err}");
        }
        for prefix in ["../", "a b", "-x"] {
            let bad = request(serde_json::json!({"exec": "true", "prefix": prefix}));
            let err = bad.check().unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidArguments, "{prefix:?}: {err}");
            assert!(err.to_string().contains("--prefix"), "{err}");
        }
        request(serde_json::json!({"exec": "true", "prefix": "night-"}))
            .check()
            .unwrap();
        let unknown = serde_json::from_value::<TeamUp>(serde_json::json!({"wokers": 2}));
        assert!(unknown.is_err(), "an unknown field is refused");
    }

    #[test]
    fn the_plan_takes_the_requests_limits_over_the_profiles() {
        let dir = tempfile::tempdir().unwrap();
        let project = baton_folder::FolderStore::init(dir.path(), "plan", None).unwrap();
        let plan = request(serde_json::json!({
            "exec": "true", "workers": 3, "max_attempts": 7, "max_turns": 9,
            "max_minutes": 1.5, "max_cost_usd": 0.25, "budget_usd": 2.0, "stay": true,
        }))
        .plan(project.layout(), WatchMode::Events)
        .unwrap();
        assert_eq!(plan.profile.name, "exec");
        assert_eq!(plan.workers, 3);
        assert_eq!(plan.profile.max_attempts, 7);
        assert_eq!(plan.profile.max_turns, Some(9));
        assert_eq!(plan.profile.max_minutes, Some(1.5));
        assert_eq!(plan.profile.max_cost_usd, Some(0.25));
        assert_eq!(plan.budget_usd, Some(2.0));
        assert!(plan.stay);
        assert!(!plan.profile.worktree, "not a git repository");
        let unknown = request(serde_json::json!({"profile": "nobody"}))
            .plan(project.layout(), WatchMode::Events)
            .unwrap_err();
        assert_eq!(unknown.kind(), ErrorKind::UnknownProfile, "{unknown}");
    }
}

#[cfg(test)]
mod planning_tests {
    use super::*;

    fn request(json: serde_json::Value) -> TeamUp {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn a_goal_takes_its_planner_and_budget_and_refuses_what_cannot_plan() {
        let dir = tempfile::tempdir().unwrap();
        let project = baton_folder::FolderStore::init(dir.path(), "goal", None).unwrap();
        let local = project.layout();
        // Planning options without a goal are refused, as is an empty goal.
        for bad in [
            serde_json::json!({"exec": "true", "plan": "auto"}),
            serde_json::json!({"exec": "true", "planner": "p"}),
            serde_json::json!({"exec": "true", "planner_budget_usd": 1.0}),
            serde_json::json!({"exec": "true", "goal": "  "}),
        ] {
            let err = request(bad.clone()).check().unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidArguments, "{bad}: {err}");
        }
        // An exec team's command is the workers'; its planner needs its own.
        let err = request(serde_json::json!({"exec": "true", "goal": "Ship"}))
            .plan(local, WatchMode::Events)
            .unwrap_err();
        assert!(err.to_string().contains("[profiles.planner]"), "{err}");
        std::fs::create_dir_all(local.team_dir()).unwrap();
        std::fs::write(
            crate::profile::profiles_file(local),
            "[profiles.planner]\nkind = \"exec\"\ncommand = \"plan.sh\"\n",
        )
        .unwrap();
        let plan = request(serde_json::json!({
            "exec": "true", "goal": " Ship ", "planner_budget_usd": 0.5, "budget_usd": 3.0,
        }))
        .plan(local, WatchMode::Events)
        .unwrap();
        let planning = plan.planning.unwrap();
        assert_eq!(planning.goal, "Ship");
        assert_eq!(planning.profile.name, "planner");
        assert_eq!(planning.profile.command, "plan.sh");
        assert!(!planning.profile.worktree, "a planner has no worktree");
        assert_eq!(planning.budget_usd, Some(0.5));
        assert_eq!(planning.approval, crate::PlanApproval::Review);
        // A judge judges what the queue lands.
        let err = request(serde_json::json!({"exec": "true", "judge": "planner"}))
            .plan(local, WatchMode::Events)
            .unwrap_err();
        assert!(err.to_string().contains("--merge auto"), "{err}");
    }
}
