//! The command line of `baton team`.

use clap::{Args, Subcommand};

#[derive(Debug, Subcommand)]
pub enum TeamCommand {
    /// Start a team of supervised agents on this machine: each worker claims the next ready
    /// task, works it in its own worktree (in a git repository) with an agent started for that
    /// task, keeps its lease, stores its transcript and cost, and restarts it if it crashes.
    /// Runs until the queue is drained (or, with --stay, until stopped); Ctrl-C stops the
    /// agents and hands their tasks back. A second `team up` changes the running team's size.
    #[command(after_help = "Examples:
  baton team up -w 3 --merge auto        three Claude Code workers, each task landed by the queue
  baton team up --exec 'make test' --stay  a command per task, waiting for new tasks
  baton team up --goal \"Add dark mode\" --merge auto   a planner plans it, you approve the plan")]
    Up(UpArgs),
    /// Every machine's workers: host, profile, state, task, attempt, agent process, cost so
    /// far, last event; and the team's spend.
    Status(baton_api::team::TeamStatus),
    /// A worker's (or a task's) transcript: the agent's text, tool calls, results and errors.
    Logs(LogsArgs),
    /// What coordination cost: per task its attempts, review rounds (the lead's, the judge's),
    /// questions, messages, merge-queue returns, check failures, time waiting and cost; per
    /// role (planning, work, judging) and for the whole run.
    #[command(after_help = "Example: baton team report --plan plan-1")]
    Report(baton_api::coordination::TeamReportRequest),
    /// Stop this machine's team or one worker: after the current task, or --now (the agent is
    /// stopped and its task handed back).
    Stop(StopArgs),
    /// Pause this machine's team, one worker, or the planner (`baton team pause planner`):
    /// what runs goes on, nothing new starts (no task is claimed, no planning session begins;
    /// the plan's news waits) until `baton team resume`.
    #[command(after_help = "Examples:
  baton team pause planner    the planner plans nothing more until resumed
  baton team pause ex2        ex2 finishes its task and claims no other
  baton team resume           everyone goes on")]
    Pause(baton_api::team::TeamPause),
    /// Resume what `baton team pause` paused: the whole team, one worker, or the planner.
    Resume(baton_api::team::TeamResume),
    /// The agent profiles this project has (built in, and from .coordination/team/profiles.toml).
    Profiles,
    /// Run the team a team-up request (JSON on stdin) asks for, in this process: what
    /// `team up --detach`, the MCP tool `team_up` and the desktop start in the background.
    #[command(hide = true)]
    Supervise,
}

#[derive(Debug, Args)]
pub struct UpArgs {
    #[command(flatten)]
    pub request: baton_team::TeamUp,
    /// Leave the supervisor running in the background (its output in
    /// .coordination/team/supervisor.log); `team status` and `team stop` reach it.
    #[arg(short, long)]
    pub detach: bool,
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
    pub request: baton_api::team::TeamStop,
    /// Return at once instead of waiting until the workers have stopped.
    #[arg(long)]
    pub no_wait: bool,
}
