//! What every worker of a team shares ([`Crew`]): the stores, the profile, how agents reach
//! Baton, the team's spend and budget, each worker's stop flags, and the workers' records.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use baton_core::{
    DocumentStore, Layout, Task, TaskStore, TeamStore, Timestamp, Usage, WorkerRecord, WorkerState,
};
use baton_git::Worktrees;
use baton_live::WatchMode;

use crate::Progress;
use crate::error::Result;
use crate::landing::merge_queue::MergeQueue;
use crate::launch::Setting;
use crate::profile::Profile;

/// How a worker is asked to stop, or to pause.
#[derive(Debug, Default)]
pub struct WorkerFlags {
    /// Finish the current task, then stop (also ends a wait for work).
    pub(crate) finish: AtomicBool,
    /// Stop the agent now and hand its task back.
    pub(crate) now: AtomicBool,
    /// Start nothing new until resumed: a worker claims no task, the planner starts no session.
    paused: Mutex<bool>,
    /// Told of each change of `paused` and of each stop.
    changed: Condvar,
    /// Ends a worker's wait for work: set when it is asked to stop or to pause.
    pub(crate) interrupt: AtomicBool,
}

impl WorkerFlags {
    pub fn stop(&self, now: bool) {
        if now {
            self.now.store(true, Ordering::SeqCst);
        }
        self.finish.store(true, Ordering::SeqCst);
        self.interrupt.store(true, Ordering::SeqCst);
        let _held = self.paused.lock().expect("the pause's lock");
        self.changed.notify_all();
    }

    /// Pauses (`true`) or resumes (`false`): what is running goes on; nothing new starts while
    /// paused.
    pub fn pause(&self, paused: bool) {
        let mut held = self.paused.lock().expect("the pause's lock");
        *held = paused;
        self.interrupt
            .store(paused || self.finishing(), Ordering::SeqCst);
        self.changed.notify_all();
    }

    pub fn paused(&self) -> bool {
        *self.paused.lock().expect("the pause's lock")
    }

    /// Waits while paused; whether it may go on (not asked to stop meanwhile).
    pub(crate) fn wait_while_paused(&self) -> bool {
        let mut held = self.paused.lock().expect("the pause's lock");
        while *held && !self.finishing() {
            held = self.changed.wait(held).expect("the pause's lock");
        }
        !self.finishing()
    }

    pub fn stop_now(&self) -> bool {
        self.now.load(Ordering::SeqCst)
    }

    pub(crate) fn finishing(&self) -> bool {
        self.finish.load(Ordering::SeqCst)
    }
}

/// Where a team's project is: its stores, and this machine's folder.
#[derive(Clone, Copy)]
pub struct TeamStores<'a> {
    pub tasks: &'a dyn TaskStore,
    pub team: &'a dyn TeamStore,
    /// Where the project's spend is summed ([`baton_core::attempts::SPEND_DOCUMENT`]).
    pub documents: &'a dyn DocumentStore,
    /// This machine's `.coordination/` (worktrees, result reports, the supervisor's files).
    pub local: &'a Layout,
}

/// What every worker of a team shares, grouped by what uses it.
pub struct Crew<'a> {
    // Where the project is: its stores, and this machine's `.coordination/` (worktrees, result
    // reports).
    pub(crate) tasks: &'a dyn TaskStore,
    pub(crate) team: &'a dyn TeamStore,
    pub(crate) documents: &'a dyn DocumentStore,
    pub(crate) local: &'a Layout,
    // What each attempt runs, and how its agent reaches Baton: the launch and the sandbox.
    pub(crate) profile: Profile,
    pub(crate) setting: Setting,
    /// How long each worker goes on: the workers' claims.
    pub pace: Pace,
    /// What the team's attempts may cost, and have: the attempts' budget checks.
    pub(crate) spend: TeamSpend,
    /// Each worker's stop flags: the supervisor sets them, the workers and attempts read them.
    flags: Mutex<HashMap<String, Arc<WorkerFlags>>>,
    // What it records and tells: the workers' and attempts' records (whose host and supervisor
    // they name), and the progress of a `team up` or `worker loop`.
    pub(crate) host: String,
    pub(crate) supervisor_pid: u32,
    /// Keep the team's records: each worker's, each attempt with its transcript, the
    /// project's spend. A `worker loop` keeps none (it is one command's worker, which the
    /// board shows by its claims).
    pub(crate) keep_records: bool,
    /// Pass what the agents print on to this process's stdout and stderr as it comes.
    pub echo: bool,
    pub(crate) progress: &'a (dyn Fn(Progress) + Sync),
    // Landing: a worktree per task, and the queue done tasks go to be landed (`--merge
    // auto`; none: the lead merges them).
    pub(crate) worktrees: Option<Worktrees>,
    pub(crate) merge_queue: Option<MergeQueue>,
    /// Whoever judges each done task before the merge queue lands it (`--judge`).
    pub(crate) judge: Option<crate::roles::Judge>,
    /// Its agents read the project and write nothing there (a planner's): in a sandbox, the
    /// project is read-only.
    pub(crate) reads_only: bool,
}

/// How long a team's workers go on.
#[derive(Debug, Clone, Copy)]
pub struct Pace {
    /// How a waiting worker learns of a ready task.
    pub mode: WatchMode,
    /// Keep waiting for new tasks when the queue is drained.
    pub stay: bool,
    /// Stop each worker after it finished this many tasks.
    pub max_tasks: Option<usize>,
}

/// What a team's attempts may cost together, and have cost so far.
#[derive(Debug, Default)]
pub(crate) struct TeamSpend {
    pub(crate) cap_usd: Option<f64>,
    /// In millionths of a dollar.
    spent_micro: AtomicU64,
    /// How often the lead gave as much again (a planner at its budget): each cap is
    /// `1 + raised` times the profile's.
    raised: AtomicU32,
}

impl<'a> Crew<'a> {
    pub fn new(
        stores: TeamStores<'a>,
        setting: Setting,
        profile: Profile,
        host: String,
        mode: WatchMode,
        progress: &'a (dyn Fn(Progress) + Sync),
    ) -> Result<Crew<'a>> {
        // Refused before any claim when there is no repository to branch from.
        let worktrees = match profile.worktree {
            true => Some(Worktrees::open(stores.local)?),
            false => None,
        };
        Ok(Crew {
            tasks: stores.tasks,
            team: stores.team,
            documents: stores.documents,
            local: stores.local,
            setting,
            profile,
            host,
            supervisor_pid: std::process::id(),
            pace: Pace {
                mode,
                stay: false,
                max_tasks: None,
            },
            keep_records: true,
            echo: false,
            spend: TeamSpend::default(),
            progress,
            flags: Mutex::new(HashMap::new()),
            worktrees,
            merge_queue: None,
            judge: None,
            reads_only: false,
        })
    }

    /// The crew of one worker on its own (`baton worker loop`): `command` run for each task
    /// it claims (in a worktree per task with `worktree`), no supervisor, no records.
    pub fn alone(
        stores: TeamStores<'a>,
        setting: Setting,
        command: &str,
        worktree: bool,
        mode: WatchMode,
        progress: &'a (dyn Fn(Progress) + Sync),
    ) -> Result<Crew<'a>> {
        let profile = Profile::for_command(command, worktree);
        let mut crew = Crew::new(stores, setting, profile, String::new(), mode, progress)?;
        crew.keep_records = false;
        Ok(crew)
    }

    /// The crew of this team's agent judge `name` running `profile`: the same stores, setting,
    /// host and progress; its agent reads the project and writes nothing, in no worktree; the
    /// team's cap with what the team has spent so far; and this crew's stop flags for `name`,
    /// so that stopping the team stops the judge too.
    pub(crate) fn for_judge(&self, name: &str, mut profile: Profile) -> Result<Crew<'a>> {
        profile.worktree = false;
        let stores = TeamStores {
            tasks: self.tasks,
            team: self.team,
            documents: self.documents,
            local: self.local,
        };
        let mut crew = Crew::new(
            stores,
            self.setting.clone(),
            profile,
            self.host.clone(),
            self.pace.mode,
            self.progress,
        )?;
        crew.reads_only = true;
        crew.echo = self.echo;
        crew.keep_records = self.keep_records;
        crew.spend.cap_usd = self.spend.cap_usd;
        crew.spend.spent_micro.store(
            self.spend.spent_micro.load(Ordering::SeqCst),
            Ordering::SeqCst,
        );
        let flags = self.flags(name);
        crew.flags
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(name.to_string(), flags);
        Ok(crew)
    }

    /// The flags of worker `name`, made on first use.
    pub fn flags(&self, name: &str) -> Arc<WorkerFlags> {
        let mut flags = self.flags.lock().unwrap_or_else(|e| e.into_inner());
        flags.entry(name.to_string()).or_default().clone()
    }

    pub(crate) fn flags_of(&self, name: &str) -> Option<Arc<WorkerFlags>> {
        let flags = self.flags.lock().unwrap_or_else(|e| e.into_inner());
        flags.get(name).cloned()
    }

    /// Member `name` paused by the lead (`flags`) between tasks or sessions: its `record` says
    /// so (`why` as its last event) and the pause is said, then it waits until resumed (said
    /// too) or stopped; whether it may go on.
    pub(crate) fn sit_out_pause(
        &self,
        name: &str,
        flags: &WorkerFlags,
        record: &mut WorkerRecord,
        why: &str,
    ) -> bool {
        let said = |paused: bool| {
            (self.progress)(Progress::Paused {
                worker: name.to_string(),
                paused,
            })
        };
        record.state = WorkerState::Paused;
        record.task = None;
        record.pid = None;
        record.attempt = None;
        record.last_event = Some(why.to_string());
        record.updated_at = Timestamp::now();
        self.save(record);
        said(true);
        let go_on = flags.wait_while_paused();
        if go_on {
            said(false);
        }
        go_on
    }

    /// Asks every worker to stop.
    pub fn stop_all(&self, now: bool) {
        let flags = self.flags.lock().unwrap_or_else(|e| e.into_inner());
        for f in flags.values() {
            f.stop(now);
        }
    }

    pub(crate) fn add_spend(&self, usage: &Usage) {
        let micro = (usage.cost_usd.max(0.0) * 1e6).round() as u64;
        self.spend.spent_micro.fetch_add(micro, Ordering::SeqCst);
    }

    /// Gives the crew as much again of each of its caps: the team's cost, a task's cost and
    /// turns, an attempt's time (the lead let a planner at its budget go on).
    pub(crate) fn raise_caps(&self) {
        self.spend.raised.fetch_add(1, Ordering::SeqCst);
    }

    /// How many times the profile's caps the crew's caps are (1 until the lead raised them).
    pub(crate) fn caps_factor(&self) -> f64 {
        1.0 + self.spend.raised.load(Ordering::SeqCst) as f64
    }

    /// What the team's attempts cost so far.
    pub fn spent_usd(&self) -> f64 {
        self.spend.spent_micro.load(Ordering::SeqCst) as f64 / 1e6
    }

    /// The budget a running attempt crossed, in words: the task's cost, turns or time (over
    /// all its attempts: `task_spent`), or the team's cost (`running` is this attempt's part
    /// not yet added to the team's). `running_for`: how long the attempt runs, or `None` once
    /// it has ended.
    pub(crate) fn over_budget(
        &self,
        task_spent: &Usage,
        running: &Usage,
        running_for: Option<Duration>,
    ) -> Option<String> {
        let profile = &self.profile;
        // An agent given its caps (Claude Code's --max-turns, --max-budget-usd) stops itself
        // at them with its own report of the cost; it is stopped from outside only if it
        // overruns them.
        let (turn_slack, cost_slack) = match profile.kind.caps_itself() && running_for.is_some() {
            true => (2, 1.5),
            false => (0, 1.0),
        };
        let factor = self.caps_factor();
        if let Some(cap) = profile.max_cost_usd.map(|c| c * factor)
            && task_spent.cost_usd >= cap * cost_slack
        {
            return Some(format!(
                "budget: the task cost ${:.4}, its cap is ${cap:.4}",
                task_spent.cost_usd
            ));
        }
        if let Some(cap) = profile.max_turns.map(|t| (t as f64 * factor) as u64)
            && task_spent.turns >= cap + turn_slack
        {
            return Some(format!(
                "budget: the task took {} turns, its cap is {cap}",
                task_spent.turns
            ));
        }
        if let Some(cap) = profile.max_wall().map(|w| w.mul_f64(factor))
            && let Some(running_for) = running_for
            && running_for >= cap
        {
            return Some(format!(
                "budget: the attempt ran {}, its cap is {}",
                baton_core::time::short_duration(running_for),
                baton_core::time::short_duration(cap)
            ));
        }
        if let Some(cap) = self.spend.cap_usd.map(|c| c * factor) {
            let team = self.spent_usd() + running.cost_usd;
            if team >= cap {
                return Some(format!(
                    "budget: the team cost ${team:.4}, its cap is ${cap:.4}"
                ));
            }
        }
        None
    }

    /// Adds an ended attempt's cost to the project's spend.
    pub(crate) fn record_spend(&self, attempt: &baton_core::Attempt) {
        if !self.keep_records {
            return;
        }
        let spent = baton_core::attempts::add_to_spend(self.documents, attempt);
        if let Err(e) = spent {
            (self.progress)(Progress::Trouble {
                worker: attempt.agent.clone(),
                message: format!("cannot add to the project's spend: {e}"),
            });
        }
    }

    /// Stores `attempt` (nothing when the crew keeps no records).
    pub(crate) fn save_attempt(&self, attempt: &baton_core::Attempt) -> Result<()> {
        if self.keep_records {
            self.team.save_attempt(attempt)?;
        }
        Ok(())
    }

    /// Stores `attempt` with the transcript's `events` and, when given, the worker's record,
    /// as one change where the store can (nothing when the crew keeps no records).
    pub(crate) fn save_attempt_with(
        &self,
        attempt: &baton_core::Attempt,
        events: &[baton_core::TranscriptEvent],
        worker: Option<&WorkerRecord>,
    ) -> Result<()> {
        if self.keep_records {
            self.team.save_attempt_with(attempt, events, worker)?;
        }
        Ok(())
    }

    /// Appends `events` to the transcript of `task`'s attempt `attempt` (nothing when the crew
    /// keeps no records).
    pub(crate) fn append_events(
        &self,
        task: &str,
        attempt: u32,
        events: &[baton_core::TranscriptEvent],
    ) -> Result<()> {
        if self.keep_records {
            self.team.append_events(task, attempt, events)?;
        }
        Ok(())
    }

    /// Closes the questions `attempt`'s agent asked and still waited on: nobody waits for
    /// their answers once it ended (nothing when the crew keeps no records).
    pub(crate) fn close_questions(&self, attempt: &baton_core::Attempt) {
        if !self.keep_records {
            return;
        }
        let why = format!("attempt {} of {} ended", attempt.attempt, attempt.task);
        let closed =
            baton_core::inbox::close_open_of(self.documents, &attempt.agent, &attempt.task, &why);
        if let Err(e) = closed {
            eprintln!(
                "baton: {}'s open questions could not be closed: {e}",
                attempt.agent
            );
        }
    }

    /// The attempts at task `id` so far (none when the crew keeps no records).
    pub(crate) fn attempts(&self, id: &str) -> Result<Vec<baton_core::Attempt>> {
        match self.keep_records {
            true => Ok(self.team.attempts(Some(id))?),
            false => Ok(Vec::new()),
        }
    }

    /// The number of the last event stored in the transcript of `task`'s attempt `attempt`;
    /// 0 when there is none, the crew keeps no records or the store cannot be read.
    pub(crate) fn last_event(&self, task: &str, attempt: u32) -> u64 {
        if !self.keep_records {
            return 0;
        }
        let mut last = 0;
        // In pages: only the transcript of a start that failed is ever there, a few events.
        while let Ok(events) = self.team.events(task, attempt, last, 1024) {
            match events.last() {
                Some(event) if event.seq > last => last = event.seq,
                _ => break,
            }
        }
        last
    }

    /// Task `id` as the store has it now.
    pub(crate) fn task(&self, id: &str) -> Option<Task> {
        self.tasks.task(id).ok().flatten()
    }

    pub(crate) fn save(&self, record: &WorkerRecord) {
        if !self.keep_records {
            return;
        }
        if let Err(e) = self.team.save_worker(record) {
            (self.progress)(Progress::Trouble {
                worker: record.name.clone(),
                message: format!("cannot record the worker: {e}"),
            });
        }
    }

    pub(crate) fn record(&self, name: &str, state: WorkerState) -> WorkerRecord {
        WorkerRecord {
            name: name.to_string(),
            host: self.host.clone(),
            supervisor_pid: self.supervisor_pid,
            profile: self.profile.name.clone(),
            state,
            task: None,
            pid: None,
            attempt: None,
            usage: Usage::default(),
            last_event: None,
            sandboxed: self.profile.sandbox.enabled,
            updated_at: Timestamp::now(),
        }
    }
}

/// The record of worker `name` running attempt `attempt` at `task` in process `pid`.
/// `usage` is what the worker's agents cost before this attempt.
pub(crate) fn working(
    crew: &Crew<'_>,
    name: &str,
    task: &str,
    attempt: u32,
    pid: u32,
    usage: Usage,
) -> WorkerRecord {
    let mut record = crew.record(name, WorkerState::Working);
    record.usage = usage;
    record.task = Some(task.to_string());
    record.attempt = Some(attempt);
    record.pid = Some(pid);
    record.last_event = Some(format!("started attempt {attempt} at {task}"));
    record
}
