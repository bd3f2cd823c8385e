//! Runs and signals: how one agent tells another "done" (a UI-test agent to a diagnostics
//! agent), scoped to numbered runs so a stale signal from yesterday never wakes anybody.
//!
//! A signal is named in a run, or given as a `path` (a file convention an agent already uses).
//! A path is resolved through the context's confinement: inside the project for an agent,
//! anywhere for the user.

use baton_core::{Run, Signal, SignalTarget};
use baton_live::wait::{Quorum, SignalWait, WaitOutcome, wait_for_signals};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::operation::{Callers, Context, Operation};

/// How long `signal_wait` waits unless told otherwise.
pub const DEFAULT_WAIT_SECONDS: u64 = 60;

/// Start the next run.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct NewRun {
    /// What this run is for.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub note: Option<String>,
}

/// The run started, and the stale signals cleared from its folder.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RunStarted {
    pub run: Run,
    pub cleared: Vec<String>,
}

impl Operation for NewRun {
    const NAME: &'static str = "run_new";
    const DESCRIPTION: &'static str =
        "Start the next numbered run and clear any signals already in its folder.";
    const READ_ONLY: bool = false;
    const CALLERS: Callers = Callers::SHARED;
    type Output = RunStarted;
    fn run(self, cx: &Context) -> Result<RunStarted> {
        let (run, cleared) = cx.signals.new_run(self.note.as_deref())?;
        Ok(RunStarted { run, cleared })
    }
}

/// Every run.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListRuns {}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Runs {
    pub runs: Vec<Run>,
}

impl Operation for ListRuns {
    const NAME: &'static str = "run_list";
    const DESCRIPTION: &'static str = "The runs, oldest first.";
    const READ_ONLY: bool = true;
    const CALLERS: Callers = Callers::READERS;
    type Output = Runs;
    fn run(self, cx: &Context) -> Result<Runs> {
        Ok(Runs {
            runs: cx.signals.runs()?,
        })
    }
}

/// The signal `name` or `path` names, in `run` (default: the latest).
fn target(
    cx: &Context,
    name: Option<&str>,
    path: Option<&str>,
    run: Option<u32>,
) -> Result<SignalTarget> {
    match (name, path) {
        (None, Some(path)) => Ok(SignalTarget::Path(cx.confinement.place("path", path)?)),
        (Some(name), None) => Ok(SignalTarget::named(cx.signals.resolve_run(run)?, name)?),
        (Some(_), Some(_)) => Err(Error::invalid_arguments(
            "give a signal name or a path, not both",
        )),
        (None, None) => Err(Error::invalid_arguments("give a signal name or a path")),
    }
}

/// Write a signal.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct WriteSignal {
    /// The signal's name, e.g. ui-test-done (or give `path`).
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(required_unless_present = "path"))]
    pub name: Option<String>,
    /// An explicit signal file instead of `name` (relative to the project in a tool call, to
    /// the working folder on the command line), for agents that already use a path convention
    /// (e.g. .claude/sprint/3/.ui-test-done).
    #[serde(default)]
    #[cfg_attr(
        feature = "cli",
        arg(long, value_name = "FILE", conflicts_with = "run")
    )]
    pub path: Option<String>,
    /// The run (default: the latest; run 1 is started if there is none).
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "N"))]
    pub run: Option<u32>,
    /// Who writes it (recorded in the signal and in that agent's log).
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "AGENT"))]
    pub agent: Option<String>,
    /// A note for the reader.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub note: Option<String>,
}

impl Operation for WriteSignal {
    const NAME: &'static str = "signal_write";
    const DESCRIPTION: &'static str =
        "Write a signal (e.g. ui-test-done) so a waiting agent can go on.";
    const READ_ONLY: bool = false;
    const CALLERS: Callers = Callers::SHARED;
    type Output = Signal;
    fn run(self, cx: &Context) -> Result<Signal> {
        let target = target(cx, self.name.as_deref(), self.path.as_deref(), self.run)?;
        let agent = crate::inbox::optional_agent(cx, self.agent.as_deref())?;
        Ok(cx.signals.write_signal(
            &target,
            agent.as_deref(),
            self.note.as_deref(),
            cx.foreign_files,
        )?)
    }
}

/// Remove a signal, or every signal of a run.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct ClearSignal {
    /// The signal's name (or give `path`, or `all`).
    #[serde(default)]
    #[cfg_attr(
        feature = "cli",
        arg(required_unless_present_any = ["path", "all"], conflicts_with = "all")
    )]
    pub name: Option<String>,
    /// An explicit signal file instead of `name` (relative to the project in a tool call, to
    /// the working folder on the command line).
    #[serde(default)]
    #[cfg_attr(
        feature = "cli",
        arg(long, value_name = "FILE", conflicts_with = "run")
    )]
    pub path: Option<String>,
    /// Remove every signal of the run.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, conflicts_with = "path"))]
    pub all: bool,
    /// The run (default: the latest).
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "N"))]
    pub run: Option<u32>,
    /// Who clears it (recorded in that agent's log).
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "AGENT"))]
    pub agent: Option<String>,
}

/// What was cleared: the signals removed, and the run or the one signal asked for.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Cleared {
    /// The run, when every signal of it was cleared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub run: Option<u32>,
    /// The signal asked for, when one was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub signal: Option<String>,
    /// The signals removed (empty when the one asked for was not set).
    pub cleared: Vec<String>,
}

impl Operation for ClearSignal {
    const NAME: &'static str = "signal_clear";
    const DESCRIPTION: &'static str = "Remove a signal, or every signal of the run.";
    const READ_ONLY: bool = false;
    const CALLERS: Callers = Callers::SHARED;
    type Output = Cleared;
    fn run(self, cx: &Context) -> Result<Cleared> {
        if self.all {
            if self.name.is_some() || self.path.is_some() {
                return Err(Error::invalid_arguments(
                    "all clears every signal of the run: give it without name or path",
                ));
            }
            let run = cx.signals.resolve_run(self.run)?;
            return Ok(Cleared {
                run: Some(run),
                signal: None,
                cleared: cx.signals.clear_signals(run)?,
            });
        }
        let target = target(cx, self.name.as_deref(), self.path.as_deref(), self.run)?;
        let agent = crate::inbox::optional_agent(cx, self.agent.as_deref())?;
        let removed = cx
            .signals
            .clear_signal(&target, agent.as_deref(), cx.foreign_files)?;
        let label = target.label();
        Ok(Cleared {
            run: None,
            cleared: if removed {
                vec![label.clone()]
            } else {
                Vec::new()
            },
            signal: Some(label),
        })
    }
}

/// The signals present in a run.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct ListSignals {
    /// The run (default: the latest).
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "N"))]
    pub run: Option<u32>,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SignalList {
    pub run: u32,
    pub signals: Vec<Signal>,
}

impl Operation for ListSignals {
    const NAME: &'static str = "signal_list";
    const DESCRIPTION: &'static str = "The signals present in a run.";
    const READ_ONLY: bool = true;
    const CALLERS: Callers = Callers::READERS;
    type Output = SignalList;
    fn run(self, cx: &Context) -> Result<SignalList> {
        let run = cx.signals.resolve_run(self.run)?;
        Ok(SignalList {
            run,
            signals: cx.signals.list_signals(run)?,
        })
    }
}

/// Wait until signals are written.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitSignals {
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
    /// Give up after this many seconds (default 60; over MCP at most 600).
    #[serde(default)]
    pub timeout_seconds: Option<u64>,
    /// Stop waiting when any of these processes (the writers) exits.
    #[serde(default)]
    pub while_pid: Vec<u32>,
    /// Stop waiting when any of these agents shows no sign of life for longer than the lease.
    #[serde(default)]
    pub while_agent: Vec<String>,
}

impl WaitSignals {
    /// The wait this request describes, with every name and path checked.
    pub fn plan(&self, cx: &Context) -> Result<SignalWait> {
        let timeout = self.timeout_seconds.unwrap_or(DEFAULT_WAIT_SECONDS);
        if timeout == 0 {
            return Err(Error::invalid_arguments(
                "the timeout must be at least 1 second (--timeout; timeout_seconds over MCP)",
            ));
        }
        let mut targets = Vec::new();
        if !self.names.is_empty() {
            let run = cx.signals.resolve_run(self.run)?;
            for name in &self.names {
                targets.push(SignalTarget::named(run, name)?);
            }
        }
        for path in &self.paths {
            targets.push(SignalTarget::Path(cx.confinement.place("paths", path)?));
        }
        Ok(SignalWait {
            targets,
            quorum: if self.any { Quorum::Any } else { Quorum::All },
            timeout: Some(std::time::Duration::from_secs(timeout)),
            while_pids: self.while_pid.clone(),
            while_agents: self.while_agent.clone(),
            mode: cx.watch_mode,
        })
    }
}

impl Operation for WaitSignals {
    const NAME: &'static str = "signal_wait";
    const DESCRIPTION: &'static str = "Wait until signals are written, with progress notifications while waiting. Ends early when a writer it is tied to is gone. Bounded by timeout_seconds (at most 600).";
    const READ_ONLY: bool = true;
    const CALLERS: Callers = Callers::READERS;
    type Output = WaitOutcome;
    fn run(self, cx: &Context) -> Result<WaitOutcome> {
        let wait = self.plan(cx)?;
        Ok(wait_for_signals(cx.signals, cx.tasks, &wait, |_| {})?)
    }
}
