//! The team's records: each attempt an agent made at a task (who, where, how it ended, what it
//! cost), and each supervised worker as its supervisor last saw it. `baton-team` writes them;
//! a store keeps them beside the tasks, so `team status` on one machine lists every machine's
//! workers, and spend is summed the same way whichever store holds it ([`Spend`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::documents::DocumentStore;
use crate::error::{Result, StoreError};
use crate::time::Timestamp;

/// Tokens and money an agent reported for an attempt (or a sum of attempts).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Usage {
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub input_tokens: u64,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub output_tokens: u64,
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub cache_read_tokens: u64,
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub cache_creation_tokens: u64,
    /// In US dollars, as the agent computed it (Claude Code's `total_cost_usd`).
    pub cost_usd: f64,
    /// Model turns (requests) taken.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub turns: u64,
}

impl Usage {
    pub fn add(&mut self, other: &Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_creation_tokens += other.cache_creation_tokens;
        self.cost_usd += other.cost_usd;
        self.turns += other.turns;
    }
}

/// How an attempt ended.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AttemptEnd {
    /// Still running.
    Running,
    /// The task was reported done in this attempt (by the agent, or from the exit status).
    Completed,
    /// The task was reported failed in this attempt.
    Failed,
    /// The agent died by a signal; a later attempt may resume the task.
    Crashed,
    /// The agent exited without reporting the task.
    Unreported,
    /// Stopped at a budget's cap.
    Budget,
    /// Stopped by the lead (`team stop --now`) or with its supervisor; the task handed back.
    Stopped,
    /// The task was no longer this worker's (taken over, cancelled) when the agent ended.
    Lost,
    /// The agent could not start: its program is missing or cannot be run (it could not be
    /// spawned, or its shell exited 126 or 127 at once). Not the task's fault: the task was
    /// handed back untouched, and a worker whose agents keep failing so stops.
    NotStarted,
}

/// One attempt at a task by one agent process.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Attempt {
    pub task: String,
    /// 1 for the first attempt at the task, then 2, 3…
    pub attempt: u32,
    pub agent: String,
    /// The machine it ran on.
    pub host: String,
    /// The agent profile it ran with (`claude`, `exec`, …).
    pub profile: String,
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub started_at: Timestamp,
    #[cfg_attr(feature = "ts", ts(type = "string | null"))]
    pub ended_at: Option<Timestamp>,
    pub end: AttemptEnd,
    /// Why it ended that way, in words (the exit status, the budget crossed, …).
    pub reason: Option<String>,
    /// The agent's own session id (Claude Code's), so a later attempt can resume it.
    pub session_id: Option<String>,
    pub usage: Usage,
    /// What the agent last said, for the lead and for the next attempt's prompt.
    pub last_message: Option<String>,
    /// Events in its transcript.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub events: u64,
    /// It ran in a sandbox (the default; `team up --no-sandbox` runs without).
    #[serde(default)]
    pub sandboxed: bool,
    /// What the attempt did at the task: its work, or judging the work (a team's judge).
    #[serde(default, skip_serializing_if = "AttemptRole::is_work")]
    pub role: AttemptRole,
}

/// What an attempt did at its task.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum AttemptRole {
    /// The task's work (or, at a plan task, its planning).
    #[default]
    Work,
    /// A team's judge reading the done work before the merge queue lands it.
    Judging,
}

impl AttemptRole {
    pub fn is_work(&self) -> bool {
        *self == AttemptRole::Work
    }
}

impl Attempt {
    /// It was a worker's (or a planner's), not a judge's.
    pub fn is_work(&self) -> bool {
        self.role.is_work()
    }

    /// The number of the next attempt at a task after `attempts` (all of them: its workers'
    /// and its judge's, which are numbered together). An attempt whose agent could not start
    /// did not happen as far as the task is concerned: the next one is made under its number
    /// (its transcript carried on, its record replaced), so a typo's failed starts do not make
    /// the first real run "attempt 4".
    pub fn next_number(attempts: &[Attempt]) -> u32 {
        match attempts.iter().max_by_key(|a| a.attempt) {
            Some(last) if last.end == AttemptEnd::NotStarted => last.attempt,
            Some(last) => last.attempt + 1,
            None => 1,
        }
    }
}

/// What a supervised worker is doing.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WorkerState {
    /// Waiting for a task to become ready.
    Waiting,
    /// Its agent is working on a task.
    Working,
    /// Waiting before restarting a crashed agent.
    BackingOff,
    /// Finishing its task before it stops (asked to stop gracefully).
    Stopping,
    /// Paused by the lead: it starts nothing new (a worker claims no task, the planner starts
    /// no session) until resumed.
    Paused,
    /// Stopped: drained, asked to stop, or its supervisor ended.
    Stopped,
}

impl WorkerState {
    /// The state as one word, as `team status` shows it and the JSON spells it.
    pub fn word(self) -> &'static str {
        match self {
            WorkerState::Waiting => "waiting",
            WorkerState::Working => "working",
            WorkerState::BackingOff => "backing_off",
            WorkerState::Stopping => "stopping",
            WorkerState::Paused => "paused",
            WorkerState::Stopped => "stopped",
        }
    }
}

/// One worker as its supervisor last recorded it.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WorkerRecord {
    /// The agent name it claims under (`cc1`).
    pub name: String,
    pub host: String,
    /// Its supervisor's process id on that host.
    pub supervisor_pid: u32,
    pub profile: String,
    pub state: WorkerState,
    pub task: Option<String>,
    /// The agent process (its process group) while one runs.
    pub pid: Option<u32>,
    pub attempt: Option<u32>,
    /// What this worker's agents cost so far under this supervisor.
    pub usage: Usage,
    /// The last thing that happened, in words.
    pub last_event: Option<String>,
    /// Its attempts run in a sandbox ([`crate`]'s team supervisor: bubblewrap), the default.
    #[serde(default)]
    pub sandboxed: bool,
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub updated_at: Timestamp,
}

/// The document the project's spend is kept in, summed as each attempt ends (so a board
/// shows it without reading every attempt): in total and per agent; per task is summed from
/// the attempts when asked for (`team status`), so the document does not grow with the
/// project.
pub const SPEND_DOCUMENT: &str = "team/spend.json";

/// Spend summed per task, per agent and for the project.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Spend {
    pub total: Usage,
    pub by_task: BTreeMap<String, Usage>,
    pub by_agent: BTreeMap<String, Usage>,
}

impl Spend {
    pub fn of(attempts: &[Attempt]) -> Spend {
        let mut spend = Spend::default();
        for a in attempts {
            spend.add(a);
        }
        spend
    }

    /// Counts what `attempt` cost.
    pub fn add(&mut self, attempt: &Attempt) {
        self.total.add(&attempt.usage);
        self.by_task
            .entry(attempt.task.clone())
            .or_default()
            .add(&attempt.usage);
        self.by_agent
            .entry(attempt.agent.clone())
            .or_default()
            .add(&attempt.usage);
    }
}

/// What the project's supervised agents cost so far, summed as each attempt ended; `None`
/// before the first. [`SPEND_DOCUMENT`] is read and written here only.
pub fn read_spend(documents: &dyn DocumentStore) -> Result<Option<Spend>> {
    let Some(document) = documents.read_document(SPEND_DOCUMENT)? else {
        return Ok(None);
    };
    // A document that parsed as JSON but is not a spend: its words, at no position.
    serde_json::from_value(document)
        .map(Some)
        .map_err(|e| StoreError::Corrupt {
            path: SPEND_DOCUMENT.into(),
            line: e.line(),
            column: e.column(),
            message: format!("the project's spend is not what Baton wrote: {e}"),
        })
}

/// Adds an ended attempt's cost to the project's spend, in one change of the document (none
/// for an attempt that used nothing). Per
/// task is read from the attempts themselves: kept in the document it would make it grow with
/// the project, and every attempt rewrite it whole.
pub fn add_to_spend(documents: &dyn DocumentStore, attempt: &Attempt) -> Result<()> {
    if attempt.usage == Usage::default() {
        // Nothing to add (an `exec` command's attempt): no change, so a team of such agents
        // does not take the one document's lock for every task.
        return Ok(());
    }
    documents.change_document(SPEND_DOCUMENT, &mut |document, _| {
        let mut spend: Spend = document
            .and_then(|d| serde_json::from_value(d).ok())
            .unwrap_or_default();
        spend.add(attempt);
        spend.by_task.clear();
        Ok(Some(serde_json::to_value(spend).expect("spend serialises")))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attempt(task: &str, n: u32, agent: &str, cost: f64) -> Attempt {
        Attempt {
            task: task.into(),
            attempt: n,
            agent: agent.into(),
            host: "h".into(),
            profile: "claude".into(),
            started_at: Timestamp::now(),
            ended_at: None,
            end: AttemptEnd::Completed,
            reason: None,
            session_id: None,
            usage: Usage {
                input_tokens: 100,
                output_tokens: 20,
                cost_usd: cost,
                turns: 1,
                ..Usage::default()
            },
            last_message: None,
            events: 0,
            sandboxed: false,
            role: AttemptRole::Work,
        }
    }

    #[test]
    fn a_start_that_failed_gives_its_number_to_the_next_attempt() {
        assert_eq!(Attempt::next_number(&[]), 1);
        let mut first = attempt("task-1", 1, "ex1", 0.0);
        first.end = AttemptEnd::NotStarted;
        assert_eq!(Attempt::next_number(&[first.clone()]), 1);
        let second = attempt("task-1", 2, "ex1", 0.0);
        // Numbered after the highest, in whatever order they are given.
        assert_eq!(Attempt::next_number(&[second.clone(), first.clone()]), 3);
        let mut third = attempt("task-1", 3, "ex1", 0.0);
        third.end = AttemptEnd::NotStarted;
        assert_eq!(Attempt::next_number(&[first, third, second]), 3);
    }

    #[test]
    fn a_worker_state_word_is_its_json() {
        for state in [
            WorkerState::Waiting,
            WorkerState::Working,
            WorkerState::BackingOff,
            WorkerState::Stopping,
            WorkerState::Paused,
            WorkerState::Stopped,
        ] {
            assert_eq!(serde_json::to_value(state).unwrap(), state.word());
        }
    }

    #[test]
    fn spend_sums_attempts_per_task_agent_and_project() {
        let spend = Spend::of(&[
            attempt("task-1", 1, "cc1", 0.5),
            attempt("task-1", 2, "cc2", 0.25),
            attempt("task-2", 1, "cc1", 1.0),
        ]);
        assert_eq!(spend.total.cost_usd, 1.75);
        assert_eq!(spend.total.input_tokens, 300);
        assert_eq!(spend.by_task["task-1"].cost_usd, 0.75);
        assert_eq!(spend.by_task["task-1"].turns, 2);
        assert_eq!(spend.by_agent["cc1"].cost_usd, 1.5);
        assert_eq!(spend.by_agent["cc2"].output_tokens, 20);
    }
}
