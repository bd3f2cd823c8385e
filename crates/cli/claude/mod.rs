//! Claude Code on Baton, the command line's part: `baton setup claude` and `baton claude-hook
//! EVENT` read their input and print; the merging, its undo record and the hooks' answers are
//! `baton-team`'s (`baton_team::claude`).

pub mod hook;
pub mod setup;

use clap::{Args, ValueEnum};

/// `baton setup claude`.
#[derive(Debug, Args)]
#[command(after_help = "\
Writes, merging with what is there and never replacing it:
  .mcp.json              the \"baton\" MCP server (`baton mcp`)
  .claude/settings.json  hooks: SessionStart tells a worker who it is and what it holds;
                         PreToolUse/PostToolUse renew its leases (and keep them renewed while
                         the session lives); Stop asks a worker that still holds an unfinished
                         task to finish, complete, fail or release it first (once per stop)
With --approve, also the server's approval and a permission for Baton's tools, so agents use
them without asking. A worker is a Claude Code session with BATON_AGENT set: see --worker.
What was there before is recorded in .coordination/setup/claude.json; --remove puts each file
back byte for byte when nothing else changed it, else takes out only Baton's entries.")]
pub struct SetupClaude {
    /// Also approve the baton server and allow its tools without a prompt.
    #[arg(long, conflicts_with = "remove")]
    pub approve: bool,
    /// Show what would change, and change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Take Baton's entries out again.
    #[arg(long)]
    pub remove: bool,
    /// Print the command that starts a worker named NAME (changes nothing).
    #[arg(long, value_name = "NAME", conflicts_with_all = ["remove", "approve", "dry_run"])]
    pub worker: Option<String>,
}

/// The Claude Code events Baton's hooks answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HookEvent {
    /// A session starts (or resumes): tell the worker who it is and what it holds.
    SessionStart,
    /// Before and after every tool call: renew the worker's leases.
    ToolUse,
    /// The worker wants to stop: not while it holds an unfinished task.
    Stop,
    /// After a tool call: put the worker's unread messages into its context (the team's
    /// agents run this alone; `tool-use` does it too after a call).
    Messages,
}
