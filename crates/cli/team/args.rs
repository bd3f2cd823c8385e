//! The command line of `baton team`.

use clap::{Args, Subcommand};

#[derive(Debug, Subcommand)]
pub enum TeamCommand {
    /// Start a team of supervised agents on this machine: each worker claims the next ready
    /// task, works it in its own worktree (in a git repository) with an agent started for that
    /// task, keeps its lease, stores its transcript and cost, and restarts it if it crashes.
    /// Runs until the queue is drained (or, with --stay, until stopped); Ctrl-C stops the
    /// agents and hands their tasks back. A second `team up` changes the running team's size.
    Up(UpArgs),
    /// Every machine's workers: host, profile, state, task, attempt, agent process, cost so
    /// far, last event; and the team's spend.
    Status(baton_api::crew::TeamStatus),
    /// A worker's (or a task's) transcript: the agent's text, tool calls, results and errors.
    Logs(LogsArgs),
    /// Stop this machine's team or one worker: after the current task, or --now (the agent is
    /// stopped and its task handed back).
    Stop(StopArgs),
    /// The agent profiles this project has (built in, and from .coordination/team/profiles.toml).
    Profiles,
}

#[derive(Debug, Args)]
pub struct UpArgs {
    /// How many workers.
    #[arg(short, long, default_value_t = 1, value_name = "N")]
    pub workers: usize,
    /// The agent profile each worker runs: claude, codex, gemini, exec, or one of
    /// .coordination/team/profiles.toml. Default: claude, or exec with --exec.
    #[arg(short, long, value_name = "PROFILE")]
    pub agent: Option<String>,
    /// Run this shell command for each task (the exec profile): the task in BATON_TASK_*
    /// variables and as JSON on stdin; exit 0 completes the task, anything else fails it.
    #[arg(long, value_name = "COMMAND")]
    pub exec: Option<String>,
    /// Leave the supervisor running in the background (its output in
    /// .coordination/team/supervisor.log); `team status` and `team stop` reach it.
    #[arg(short, long)]
    pub detach: bool,
    /// Keep waiting for new tasks when the queue is drained.
    #[arg(long)]
    pub stay: bool,
    /// Work each task in its own git worktree and branch (the default in a git repository;
    /// refused outside one).
    #[arg(long, conflicts_with = "no_worktree")]
    pub worktree: bool,
    /// Work in the project folder, not in a worktree per task.
    #[arg(long)]
    pub no_worktree: bool,
    /// Worker names are this and a number (default: the profile's, such as cc for claude;
    /// with the host in front on a database project).
    #[arg(long, value_name = "NAME")]
    pub prefix: Option<String>,
    /// Stop the whole team when its agents together have cost this much (US dollars).
    #[arg(long, value_name = "USD")]
    pub budget_usd: Option<f64>,
    /// Per task: stop the agent and fail the task at this cost (US dollars).
    #[arg(long, value_name = "USD")]
    pub max_cost_usd: Option<f64>,
    /// Per task: stop the agent and fail the task after this many model turns.
    #[arg(long, value_name = "N")]
    pub max_turns: Option<u64>,
    /// Per attempt: stop the agent and fail the task after this many minutes.
    #[arg(long, value_name = "MINUTES")]
    pub max_minutes: Option<f64>,
    /// Attempts at one task before it is failed (a crashed agent is restarted).
    #[arg(long, value_name = "N")]
    pub max_attempts: Option<u32>,
}

#[derive(Debug, Args)]
pub struct LogsArgs {
    /// A worker (its current or last task) or a task id.
    pub name: String,
    /// Which attempt at the task (default: the latest).
    #[arg(long, value_name = "N")]
    pub attempt: Option<u32>,
    /// Keep printing events as the agent goes on, until its attempt ends.
    #[arg(short, long)]
    pub follow: bool,
    /// Print each event whole, not cut to a line.
    #[arg(long)]
    pub full: bool,
    /// Only events numbered after this one.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub after: u64,
    /// At most this many events (the first ones after --after).
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    pub limit: u64,
}

#[derive(Debug, Args)]
pub struct StopArgs {
    #[command(flatten)]
    pub request: baton_api::crew::TeamStop,
    /// Return at once instead of waiting until the workers have stopped.
    #[arg(long)]
    pub no_wait: bool,
}
