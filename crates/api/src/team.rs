//! The supervised team, as the lead reads and steers it (`baton team`): starting or resizing
//! this machine's team (`team_up`, whose request and logic are `baton-team`'s `start`), every
//! machine's workers with what they do and cost, an attempt's transcript, and stopping,
//! pausing and resuming workers (and the planner). They read what supervisors record in the
//! store, and leave requests for the one on this machine.

use baton_core::Unreadable;
use baton_core::{
    Attempt, ErrorKind, Spend, TeamStore, TranscriptEvent, WorkerRecord, WorkerState,
};
use baton_team::host_name;
use baton_team::{Request, Setting, SupervisorInfo, running_supervisor, send_request};
use baton_team::{TeamStarted, TeamUp, start_detached};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::operation::{Callers, Context, Operation};

impl Operation for TeamUp {
    const NAME: &'static str = "team_up";
    const DESCRIPTION: &'static str = "Start a team of supervised agents on this machine, in the background: each worker claims the next ready task and works it with an agent of the profile (claude, codex, gemini, exec with a command, or the project's own), keeps its lease, records its transcript and cost, and restarts it after a crash. A team of the same profile running already is resized to `workers`. Answers once the supervisor runs.";
    const READ_ONLY: bool = false;
    const CALLERS: Callers = Callers::LEAD;
    type Output = TeamStarted;
    fn run(self, cx: &Context) -> Result<TeamStarted> {
        let setting = Setting::for_project(cx.local, cx.reach);
        Ok(start_detached(cx.local, &self, &setting, cx.watch_mode)?)
    }
}

/// Every machine's workers, and what the team cost.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TeamStatus {}

/// A worker as its supervisor last recorded it, and whether that supervisor still runs.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct WorkerView {
    #[serde(flatten)]
    pub record: WorkerRecord,
    /// Whether its supervisor is running: known for this machine's workers only (null for
    /// another machine's).
    pub supervisor_alive: Option<bool>,
}

/// The team across machines.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct TeamView {
    pub workers: Vec<WorkerView>,
    /// This machine's supervisor, when one runs.
    pub supervisor: Option<SupervisorInfo>,
    /// Tokens and cost per task, per agent and in total, over every recorded attempt.
    pub spend: Spend,
    /// The total spent after each attempt that cost something, in the order they ended: the
    /// team's spend over time.
    pub timeline: Vec<SpendPoint>,
    /// This machine's merge queue (`team up --merge auto`), as its last run left it: each
    /// task in the order it joined, with its place (queued, checking, landed, sent back, not
    /// landed) and why. Empty when none ran.
    pub merge_queue: Vec<baton_team::QueueEntry>,
    /// How the last team run ended, whichever machine ran it; none before the first.
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub last_run: Option<baton_core::team_end::TeamEnded>,
    /// Worker and attempt records that could not be read, named: everything else is shown.
    pub unreadable: Vec<Unreadable>,
}

/// The team's total spend at a moment.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SpendPoint {
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub at: baton_core::Timestamp,
    pub total_usd: f64,
}

/// The running total of `attempts`' cost, by when each ended (a running one counts now).
fn timeline(attempts: &[Attempt], now: baton_core::Timestamp) -> Vec<SpendPoint> {
    let mut costs: Vec<(baton_core::Timestamp, f64)> = attempts
        .iter()
        .filter(|a| a.usage.cost_usd > 0.0)
        .map(|a| (a.ended_at.unwrap_or(now), a.usage.cost_usd))
        .collect();
    costs.sort_by_key(|(at, _)| *at);
    let mut total = 0.0;
    costs
        .into_iter()
        .map(|(at, cost)| {
            total += cost;
            SpendPoint {
                at,
                total_usd: total,
            }
        })
        .collect()
}

impl Operation for TeamStatus {
    const NAME: &'static str = "team_status";
    const DESCRIPTION: &'static str = "The supervised team on every machine: each worker's host, agent profile, state, task, attempt, agent process, cost so far and last event; this machine's supervisor; tokens and cost per task, per agent and in total.";
    const READ_ONLY: bool = true;
    const CALLERS: Callers = Callers::READERS;
    type Output = TeamView;
    fn run(self, cx: &Context) -> Result<TeamView> {
        let host = host_name();
        let listed = cx.team.workers_listed()?;
        let mut unreadable = listed.unreadable;
        let workers = listed
            .items
            .into_iter()
            .map(|record| {
                let supervisor_alive =
                    (record.host == host).then(|| baton_fs::pid_alive(record.supervisor_pid));
                let mut record = record;
                if supervisor_alive == Some(false) && record.state != WorkerState::Stopped {
                    record.state = WorkerState::Stopped;
                    record.pid = None;
                }
                WorkerView {
                    record,
                    supervisor_alive,
                }
            })
            .collect();
        let listed = cx.team.attempts_listed(None)?;
        unreadable.extend(listed.unreadable);
        let attempts = listed.items;
        let last_run = baton_core::team_end::last(&*cx.documents).unwrap_or_else(|e| {
            unreadable.push(Unreadable {
                document: baton_core::team_end::TEAM_ENDED.to_string(),
                problem: e.to_string(),
            });
            None
        });
        Ok(TeamView {
            workers,
            supervisor: running_supervisor(cx.local)?,
            spend: Spend::of(&attempts),
            timeline: timeline(&attempts, baton_core::Timestamp::now()),
            merge_queue: baton_team::read_queue(cx.local),
            last_run,
            unreadable,
        })
    }
}

/// One attempt's transcript: what the agent said, the tools it called with their input and
/// results, errors, and the final result.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TeamTranscript {
    /// The task's id.
    pub task: String,
    /// Which attempt (1, 2, …); the latest when not given.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub attempt: Option<u32>,
    /// Only events numbered after this one (to follow a transcript as it grows).
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 0))]
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub after: u64,
    /// At most this many events.
    #[serde(default = "default_limit")]
    #[cfg_attr(feature = "cli", arg(long, default_value_t = default_limit()))]
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub limit: u64,
}

/// The task and attempt `name` means (`team logs NAME`): a worker's current attempt, else its
/// last one (or its attempt numbered `attempt`); any other name is a task's.
pub fn transcript_named(
    team: &dyn TeamStore,
    name: &str,
    attempt: Option<u32>,
) -> Result<(String, Option<u32>)> {
    baton_core::names::validate_agent_id(name)?;
    let workers = team.workers_listed()?.items;
    let worker = workers.iter().find(|w| w.name == name);
    if let Some(worker) = worker
        && let (Some(task), None) = (&worker.task, attempt)
    {
        return Ok((task.clone(), worker.attempt));
    }
    let attempts = team.attempts_listed(None)?.items;
    // A worker's name, though its team is gone (its last attempt), unless a task has it.
    let is_task = attempts.iter().any(|a| a.task == name);
    let last = attempts
        .into_iter()
        .filter(|a| a.agent == name)
        .max_by_key(|a| a.started_at);
    match (last, worker.is_some(), is_task) {
        (Some(a), _, false) | (Some(a), true, _) => Ok((a.task, attempt.or(Some(a.attempt)))),
        (None, true, _) => Err(Error::new(
            ErrorKind::UnknownTask,
            format!("worker {name} has not worked on a task yet"),
        )),
        // A task whose attempts cannot be read: the transcript says which and why.
        (None, false, false) if !team.attempts_listed(Some(name))?.unreadable.is_empty() => {
            Ok((name.to_string(), attempt))
        }
        (None, false, false) => Err(Error::new(
            ErrorKind::UnknownTask,
            format!(
                "no task or worker named {name} has a transcript (a task gets one when a \
                 team's agent works on it; `baton worker loop` and agents in a terminal keep \
                 none: `baton logs {name}` shows what an agent logged): `baton team status` \
                 lists the workers, `baton leader status` the tasks"
            ),
        )),
        _ => Ok((name.to_string(), attempt)),
    }
}

fn default_limit() -> u64 {
    10_000
}

/// An attempt and its events.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Transcript {
    pub attempt: Attempt,
    /// Every attempt at the task, by number.
    pub attempts: Vec<u32>,
    pub events: Vec<TranscriptEvent>,
    /// Events left out after `events` (the limit was reached): `after` set to the last one
    /// shown reads on.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub more: u64,
    /// When events were left out: the attempt's last ones, so its end (how the agent exited,
    /// its result) is always shown.
    pub tail: Vec<TranscriptEvent>,
    /// The task's attempt records that could not be read, named (a bad line of the transcript
    /// is an error event in its place).
    pub unreadable: Vec<Unreadable>,
}

/// How many of an attempt's last events are shown when the limit left some out.
const TAIL: u64 = 20;

impl Operation for TeamTranscript {
    const NAME: &'static str = "team_transcript";
    const DESCRIPTION: &'static str = "The transcript of an agent's attempt at a task (the latest unless one is named): its text, tool calls with input, tool results, errors and final result, with who ran it, how it ended and what it cost. `after` gives only newer events.";
    const READ_ONLY: bool = true;
    const CALLERS: Callers = Callers::OWN_WORK_AND_RESPONDER;
    type Output = Transcript;
    fn run(self, cx: &Context) -> Result<Transcript> {
        baton_core::names::validate_task_id(&self.task)?;
        let listed = cx.team.attempts_listed(Some(&self.task))?;
        let (attempts, unreadable) = (listed.items, listed.unreadable);
        let chosen = match self.attempt {
            Some(n) => attempts.iter().find(|a| a.attempt == n),
            None => attempts.last(),
        };
        let Some(attempt) = chosen.cloned() else {
            let which = self
                .attempt
                .map_or(String::new(), |n| format!(" numbered {n}"));
            return Err(Error::new(
                baton_core::ErrorKind::UnknownTask,
                format!(
                    "task {} has no attempt{which} by a supervised agent (attempts: {}){}",
                    self.task,
                    if attempts.is_empty() {
                        "none".to_string()
                    } else {
                        attempts
                            .iter()
                            .map(|a| a.attempt.to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    },
                    unreadable
                        .iter()
                        .map(|u| format!("; {} cannot be read: {}", u.document, u.problem))
                        .collect::<String>()
                ),
            ));
        };
        // An agent reads its own transcripts: another's is that agent's record.
        if let Some(me) = &cx.caller
            && attempt.agent != *me
        {
            return Err(Error::new(
                baton_core::ErrorKind::NotOwner,
                format!(
                    "the transcript of {}'s attempt at {} is {}'s; an agent reads its own ({me})",
                    attempt.agent, self.task, attempt.agent
                ),
            ));
        }
        let limit = usize::try_from(self.limit.clamp(1, 100_000)).unwrap_or(100_000);
        let events = cx
            .team
            .events(&self.task, attempt.attempt, self.after, limit)?;
        let shown_to = events.last().map_or(self.after, |e| e.seq);
        let more = attempt.events.saturating_sub(shown_to);
        let tail = match more {
            0 => Vec::new(),
            _ => {
                let from = attempt.events.saturating_sub(TAIL).max(shown_to);
                cx.team
                    .events(&self.task, attempt.attempt, from, TAIL as usize)?
            }
        };
        Ok(Transcript {
            attempts: attempts.iter().map(|a| a.attempt).collect(),
            attempt,
            events,
            more,
            tail,
            unreadable,
        })
    }
}

/// Stop this machine's team, or one of its workers: after the current task, or now (the
/// agent stopped and its task handed back).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TeamStop {
    /// The worker to stop (all of this machine's when not given).
    #[serde(default)]
    pub worker: Option<String>,
    /// Stop the agent now and hand its task back, instead of letting it finish the task.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub now: bool,
}

/// What was asked of the supervisor.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct StopAsked {
    pub supervisor: SupervisorInfo,
    /// The workers asked to stop.
    pub workers: Vec<String>,
    pub now: bool,
}

impl Operation for TeamStop {
    const NAME: &'static str = "team_stop";
    const DESCRIPTION: &'static str = "Stop this machine's supervised team, or one worker: after its current task, or now (the agent is stopped and its task handed back).";
    const READ_ONLY: bool = false;
    const CALLERS: Callers = Callers::ANSWERS;
    type Output = StopAsked;
    fn run(self, cx: &Context) -> Result<StopAsked> {
        if let Some(name) = &self.worker {
            member_named(cx, name)?;
        }
        let names: Vec<String> = self.worker.iter().cloned().collect();
        let request = Request::Stop {
            names: names.clone(),
            now: self.now,
        };
        let supervisor = send_request(cx.local, &request)?;
        let workers = match names.is_empty() {
            true => supervisor.members(),
            false => names,
        };
        Ok(StopAsked {
            supervisor,
            workers,
            now: self.now,
        })
    }
}

/// Refuses `name` unless it is a worker of this machine's team or its planner (none running
/// is refused by `send_request`, in its own words).
fn member_named(cx: &Context, name: &str) -> Result<()> {
    baton_core::names::validate_agent_id(name)?;
    match running_supervisor(cx.local)?.filter(|t| !t.has_member(name)) {
        Some(team) => Err(Error::new(
            baton_core::ErrorKind::UnknownAgent,
            format!(
                "{name} is not a worker of this machine's team (its workers: {})",
                team.members().join(", ")
            ),
        )),
        None => Ok(()),
    }
}

/// Pause this machine's team, one of its workers, or its planner: what runs goes on, nothing
/// new starts until it is resumed (a worker claims no task, the planner starts no planning
/// session and the news of its plan waits for it).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TeamPause {
    /// The worker to pause, or the planner by its name (all of this machine's, the planner
    /// too, when not given).
    #[serde(default)]
    pub worker: Option<String>,
}

/// Resume what `team_pause` paused: the whole team, one worker, or the planner.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TeamResume {
    /// The worker to resume, or the planner by its name (all of this machine's, the planner
    /// too, when not given).
    #[serde(default)]
    pub worker: Option<String>,
}

/// What was asked of the supervisor: to pause these, or to resume them.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PauseAsked {
    pub supervisor: SupervisorInfo,
    /// The workers (and the planner) asked.
    pub workers: Vec<String>,
    /// Paused; false: resumed.
    pub paused: bool,
}

impl Operation for TeamPause {
    const NAME: &'static str = "team_pause";
    const DESCRIPTION: &'static str = "Pause this machine's supervised team, one worker, or its planner (by its name): what runs goes on, nothing new starts (no task is claimed, no planning session begins) until team_resume.";
    const READ_ONLY: bool = false;
    const CALLERS: Callers = Callers::ANSWERS;
    type Output = PauseAsked;
    fn run(self, cx: &Context) -> Result<PauseAsked> {
        pause(cx, self.worker, true)
    }
}

impl Operation for TeamResume {
    const NAME: &'static str = "team_resume";
    const DESCRIPTION: &'static str = "Resume what team_pause paused on this machine: the whole team, one worker, or its planner (by its name).";
    const READ_ONLY: bool = false;
    const CALLERS: Callers = Callers::ANSWERS;
    type Output = PauseAsked;
    fn run(self, cx: &Context) -> Result<PauseAsked> {
        pause(cx, self.worker, false)
    }
}

/// Asks the supervisor to pause (or resume) `worker`, or everyone.
fn pause(cx: &Context, worker: Option<String>, paused: bool) -> Result<PauseAsked> {
    if let Some(name) = &worker {
        member_named(cx, name)?;
    }
    let names: Vec<String> = worker.into_iter().collect();
    let request = Request::Pause {
        names: names.clone(),
        paused,
    };
    let supervisor = send_request(cx.local, &request)?;
    let workers = match names.is_empty() {
        true => supervisor.members(),
        false => names,
    };
    Ok(PauseAsked {
        supervisor,
        workers,
        paused,
    })
}
