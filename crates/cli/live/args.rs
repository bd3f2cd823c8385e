//! The command line of live coordination: runs, signals, and the worker loop.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand};

use baton_api::durations::parse_duration;

#[derive(Debug, Subcommand)]
pub enum RunCommand {
    /// Start the next run (numbered) and clear any signals already in its folder.
    New(baton_api::signals::NewRun),
    /// List the runs.
    List,
}

/// A signal write or clear as the user asks for it: the request, its `--path` taken from the
/// working folder, and whether a file there that is not a signal may go.
#[derive(Debug, Args)]
pub struct SignalChange<R: Args> {
    #[command(flatten)]
    pub request: R,
    /// Overwrite or remove the file at --path even when it is not a signal (a file holding
    /// `done` or Baton's signal JSON). Without it, Baton refuses and changes nothing.
    #[arg(long, requires = "path")]
    pub force: bool,
}

impl<R: Args> SignalChange<R> {
    /// What to do with a file at the place that is not a signal.
    pub fn foreign(&self) -> baton_core::ForeignFile {
        if self.force {
            baton_core::ForeignFile::Replace
        } else {
            baton_core::ForeignFile::Keep
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum SignalCommand {
    /// Write a signal (atomically). It holds `done`, or a small JSON with --agent or --note.
    Write(SignalChange<baton_api::signals::WriteSignal>),
    /// Remove a signal, or all signals of the run with --all.
    Clear(SignalChange<baton_api::signals::ClearSignal>),
    /// List the signals present in a run.
    List(baton_api::signals::ListSignals),
    /// Wait until signals are written. Exit 0 when they are, 5 on timeout, 6 when a writer the
    /// wait is tied to is gone.
    Wait {
        /// Signal names in the run.
        names: Vec<String>,
        /// Explicit signal files (repeatable), alone or with names.
        #[arg(long = "path", value_name = "FILE")]
        paths: Vec<PathBuf>,
        #[arg(long, value_name = "N")]
        run: Option<u32>,
        /// Return when any one of the signals is written.
        #[arg(long, conflicts_with = "all")]
        any: bool,
        /// Return when all of them are written (the default).
        #[arg(long)]
        all: bool,
        /// Give up after this long.
        #[arg(long, value_parser = parse_duration, default_value = "1h")]
        timeout: Duration,
        /// Stop waiting when this process (the writer) exits; repeatable.
        #[arg(long, value_name = "PID")]
        while_pid: Vec<u32>,
        /// Stop waiting when this agent shows no sign of life in the task store (heartbeat,
        /// claim, any operation) for longer than --lease; repeatable.
        #[arg(long, value_name = "AGENT")]
        while_agent: Vec<String>,
    },
}

/// `baton worker loop`.
#[derive(Debug, Args)]
#[command(after_help = "\
The command runs through `sh -c` in the project folder, once per task, with:
  BATON_AGENT, BATON_TASK_ID, BATON_TASK_DESCRIPTION, BATON_TASK_PRIORITY,
  BATON_TASK_FILES and BATON_TASK_DEPENDENCIES (one per line), BATON_TASK_HINTS,
  BATON_TASK_ATTEMPT, BATON_RESULT_PATH (where the report is written), BATON_DIR
and the task as one JSON object on stdin. Exit 0 completes the task with the command's
stdout as the result; any other exit fails it with the end of its stderr. The lease is
renewed while the command runs. Ctrl-C stops the command and releases its task.

It is one of a team's workers on its own: `baton team up --exec COMMAND` runs several the same
way under a supervisor, which also keeps each attempt's record and transcript. Started again
under the same name, it first goes on with the tasks it still holds; a store that goes away
for up to a minute (a database restarting) costs it no task.

With --worktree, each task gets its own git worktree (.coordination/worktrees/TASK-ID) on a
branch baton/TASK-ID started from the branch your checkout is on; the command runs there (with
BATON_WORKTREE and BATON_BRANCH set) and should commit its work. The task's result records the
branch and its commits; nothing is merged until `baton leader merge`. A task claimed again goes
on in the worktree (or from the branch) it had.")]
pub struct LoopArgs {
    pub agent: String,
    /// The command to run for each task.
    #[arg(long = "exec", value_name = "COMMAND")]
    pub command: String,
    /// Keep waiting for new tasks when no work can become ready, instead of stopping.
    #[arg(long)]
    pub stay: bool,
    /// Stop after this many tasks.
    #[arg(long, value_name = "N")]
    pub max_tasks: Option<usize>,
    /// Do not pass the command's output through.
    #[arg(short, long)]
    pub quiet: bool,
    /// Work each task in its own git worktree and branch (see below).
    #[arg(long)]
    pub worktree: bool,
}
