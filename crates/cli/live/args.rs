//! The command line of live coordination: runs, signals, and the worker loop.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand};

use crate::values::parse_duration;

#[derive(Debug, Subcommand)]
pub enum RunCommand {
    /// Start the next run (numbered) and clear any signals already in its folder.
    New(baton_api::signals::NewRun),
    /// List the runs.
    List,
}

/// Where a signal is: by name in a run (default: the latest), or at an explicit path.
#[derive(Debug, Args)]
pub struct SignalPlace {
    /// The run (default: the latest; run 1 is started if there is none).
    #[arg(long, value_name = "N")]
    pub run: Option<u32>,
    /// An explicit file instead of a name, for agents that already use a path convention
    /// (e.g. .claude/sprint/3/.ui-test-done).
    #[arg(long, value_name = "FILE", conflicts_with = "run")]
    pub path: Option<PathBuf>,
    /// Overwrite or remove the file at --path even when it is not a signal (a file holding
    /// `done` or Baton's signal JSON). Without it, Baton refuses and changes nothing.
    #[arg(long, requires = "path")]
    pub force: bool,
}

impl SignalPlace {
    /// The --path, resolved against `cwd` as the user's own path.
    pub fn path(&self, cwd: &std::path::Path) -> Result<Option<String>, baton_api::Error> {
        self.path
            .as_deref()
            .map(|p| crate::context::user_path(cwd, p))
            .transpose()
    }

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
    Write {
        /// The signal's name, e.g. ui-test-done.
        #[arg(required_unless_present = "path")]
        name: Option<String>,
        #[command(flatten)]
        place: SignalPlace,
        /// A note for the reader.
        #[arg(long)]
        note: Option<String>,
        /// Who writes it (recorded in the signal and in that agent's log).
        #[arg(long, value_name = "AGENT")]
        agent: Option<String>,
    },
    /// Remove a signal, or all signals of the run with --all.
    Clear {
        #[arg(required_unless_present_any = ["path", "all"], conflicts_with = "all")]
        name: Option<String>,
        /// Remove every signal of the run.
        #[arg(long, conflicts_with = "path")]
        all: bool,
        #[command(flatten)]
        place: SignalPlace,
        /// Who clears it (recorded in that agent's log).
        #[arg(long, value_name = "AGENT")]
        agent: Option<String>,
    },
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
