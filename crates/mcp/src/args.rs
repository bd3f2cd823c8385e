//! Arguments of Baton's own tools. Each derives `JsonSchema`, so the schema a client sees is the
//! Rust type, and the doc comment on every field is that field's description.

use schemars::JsonSchema;
use serde::Deserialize;

/// No arguments.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskList {
    /// List every task, not only those that can be claimed now.
    #[serde(default)]
    pub all: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskAdd {
    /// What to do, for the worker who claims it.
    pub description: String,
    /// 1 is the most urgent (default 5).
    #[serde(default)]
    pub priority: Option<u32>,
    /// Ids of tasks that must be done first.
    #[serde(default)]
    pub depends: Vec<String>,
    /// Files the worker should look at.
    #[serde(default)]
    pub files: Vec<String>,
    /// Hints for the worker.
    #[serde(default)]
    pub hints: String,
    /// Choose the id instead of the next task-N.
    #[serde(default)]
    pub id: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Agent {
    /// Your agent name (letters, digits, '.', '_' and '-').
    pub agent: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentTask {
    /// Your agent name.
    pub agent: String,
    /// The task's id.
    pub task: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskComplete {
    /// Your agent name.
    pub agent: String,
    /// The task's id.
    pub task: String,
    /// What was done, for the leader and the next agents.
    pub summary: String,
    /// Files changed.
    #[serde(default)]
    pub modified: Vec<String>,
    /// Files created.
    #[serde(default)]
    pub created: Vec<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskFail {
    /// Your agent name.
    pub agent: String,
    /// The task's id.
    pub task: String,
    /// Why it cannot be done, and what would unblock it.
    pub reason: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Discover {
    /// Your agent name.
    pub agent: String,
    /// The finding to share with every agent.
    pub text: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SignalWrite {
    /// The signal's name, e.g. ui-test-done (or give `path`).
    #[serde(default)]
    pub name: Option<String>,
    /// An explicit signal file, relative to the project (instead of `name`).
    #[serde(default)]
    pub path: Option<String>,
    /// The run (default: the latest).
    #[serde(default)]
    pub run: Option<u32>,
    /// Who writes it.
    #[serde(default)]
    pub agent: Option<String>,
    /// A note for the reader.
    #[serde(default)]
    pub note: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SignalClear {
    /// The signal's name (or give `path`, or `all`).
    #[serde(default)]
    pub name: Option<String>,
    /// An explicit signal file, relative to the project.
    #[serde(default)]
    pub path: Option<String>,
    /// Remove every signal of the run.
    #[serde(default)]
    pub all: bool,
    /// The run (default: the latest).
    #[serde(default)]
    pub run: Option<u32>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SignalList {
    /// The run (default: the latest).
    #[serde(default)]
    pub run: Option<u32>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SignalWait {
    /// Signal names in the run.
    #[serde(default)]
    pub names: Vec<String>,
    /// Explicit signal files, relative to the project.
    #[serde(default)]
    pub paths: Vec<String>,
    /// The run (default: the latest).
    #[serde(default)]
    pub run: Option<u32>,
    /// Return when any one signal is written (default: wait for all).
    #[serde(default)]
    pub any: bool,
    /// Give up after this many seconds (default 60, at most 600).
    #[serde(default)]
    pub timeout_seconds: Option<u64>,
    /// Stop waiting when any of these processes (the writers) exits.
    #[serde(default)]
    pub while_pid: Vec<u32>,
    /// Stop waiting when any of these agents shows no sign of life for longer than the lease.
    #[serde(default)]
    pub while_agent: Vec<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct CompleteInvocation {
    /// The invocation's id, from invoke_agent.
    pub invocation_id: String,
    #[serde(flatten)]
    pub report: baton_agents::invoke::CompletionReport,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AggregateParallel {
    /// The run's id, from start_parallel_execution.
    pub parallel_id: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Route {
    /// The task, in words.
    pub task: String,
    /// What has happened so far (not used by the rules; recorded for context).
    #[serde(default)]
    pub current_state: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LaunchBrowser {
    /// Show the browser window instead of running headless.
    #[serde(default)]
    pub headed: bool,
}
