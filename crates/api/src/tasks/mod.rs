//! The task store's operations: the board, the queue, a worker's lifecycle (claim, start,
//! complete, fail, release, heartbeat) and the leader's (add, edit, reset, cancel, doctor,
//! aggregate), with discoveries and logs.
//!
//! Every operation that changes one task answers [`TaskOutcome`], `{"task": …}`, on every
//! front end: a wrapper, so an answer can grow (a hint, a warning) without breaking readers.

use baton_core::Completion;
use baton_core::DEFAULT_PRIORITY;
use baton_core::{Aggregate, DoctorReport, LogLine, StatusReport, Task, TaskView};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::operation::{Callers, Context, Operation};
use baton_git::record_branch_or_say_why;

mod adding;
mod archive;
mod claim;
mod lead;

pub use adding::{AddTask, EditTask};
pub use archive::{Archive, archive_landed, archive_quiet};
pub use claim::{Claim, ClaimOutcome};
pub use lead::{Approve, Approved, Cancel, MoveTask, Moved, Reset, ResetOutcome};

/// How many log lines `logs` shows unless asked for more or fewer.
pub const DEFAULT_LOG_LINES: usize = 40;

fn default_priority() -> u32 {
    DEFAULT_PRIORITY
}

fn default_log_lines() -> usize {
    DEFAULT_LOG_LINES
}

/// The task an operation changed, as it is now.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct TaskOutcome {
    pub task: Task,
}

impl From<Task> for TaskOutcome {
    fn from(task: Task) -> Self {
        TaskOutcome { task }
    }
}

/// The board.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Status {
    /// With the landed work archived off the board (`leader archive`).
    #[serde(default)]
    pub all: bool,
}

impl Operation for Status {
    const NAME: &'static str = "task_status";
    const DESCRIPTION: &'static str = "The task board: every task with its status, owner, lease and what it waits for, with counts; all=true adds the landed work archived off it.";
    const READ_ONLY: bool = true;
    const CALLERS: Callers = Callers::READERS;
    type Output = StatusReport;
    fn run(self, cx: &Context) -> Result<StatusReport> {
        let mut report = match self.all {
            true => cx.tasks.status_all()?,
            false => cx.status()?,
        };
        report.spend = baton_core::attempts::read_spend(&*cx.documents)?;
        Ok(report)
    }
}

/// Tasks that can be claimed now, or all of them.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct ListTasks {
    /// List every task, not only those that can be claimed now.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub all: bool,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct TaskList {
    /// Best first (the order a claim takes them in), or the board's order with `all`.
    pub tasks: Vec<TaskView>,
}

impl Operation for ListTasks {
    const NAME: &'static str = "task_list";
    const DESCRIPTION: &'static str =
        "Tasks that can be claimed now, best first (or every task with all=true).";
    const READ_ONLY: bool = true;
    const CALLERS: Callers = Callers::READERS;
    type Output = TaskList;
    fn run(self, cx: &Context) -> Result<TaskList> {
        let tasks = if self.all {
            cx.status()?.tasks
        } else {
            cx.tasks.ready_tasks()?
        };
        Ok(TaskList { tasks })
    }
}

macro_rules! agent_task_operation {
    ($(#[$doc:meta])* $name:ident, $tool:literal, $description:literal, $method:ident, $check:expr) => {
        $(#[$doc])*
        #[cfg_attr(feature = "ts", derive(ts_rs::TS))]
        #[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
        #[cfg_attr(feature = "cli", derive(clap::Args))]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            /// Your agent name.
            pub agent: String,
            /// The task's id.
            pub task: String,
        }

        impl Operation for $name {
            const NAME: &'static str = $tool;
            const DESCRIPTION: &'static str = $description;
            const READ_ONLY: bool = false;
            const CALLERS: Callers = Callers::OWN_WORK;
            type Output = TaskOutcome;
            fn run(self, cx: &Context) -> Result<TaskOutcome> {
                let agent = crate::inbox::as_agent(cx, &self.agent)?;
                $check(cx, &self.task)?;
                Ok(cx.tasks.$method(&agent, &self.task)?.into())
            }
        }
    };
}

agent_task_operation!(
    /// A worker starts a task it claimed.
    Start,
    "task_start",
    "Start work on a task you claimed.",
    start,
    |_: &Context, _: &str| Ok::<(), crate::Error>(())
);
agent_task_operation!(
    /// A worker hands a task back.
    Release,
    "task_release",
    "Hand a task you hold back to the queue, untouched.",
    release,
    not_while_attempted
);

/// Refuses to hand back the task the caller's own attempt works: the attempt ends instead
/// (its agent exits, and its supervisor hands the task back), so no second attempt starts in
/// the same worktree while this one still runs.
fn not_while_attempted(cx: &Context, task: &str) -> Result<()> {
    if cx.attempt.as_deref() != Some(task) {
        return Ok(());
    }
    Err(crate::Error::new(
        baton_core::ErrorKind::IllegalTransition,
        format!(
            "{task} is the task this attempt works, and it cannot be handed back from inside the \
             attempt: end the attempt instead (exit; your supervisor hands it back), or report it \
             done or failed"
        ),
    ))
}

/// A worker's report on a task it finished.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct Complete {
    /// Your agent name.
    pub agent: String,
    /// The task's id.
    pub task: String,
    /// What was done, for the leader and the next agents.
    pub summary: String,
    /// Files changed.
    #[serde(default)]
    #[cfg_attr(
        feature = "cli",
        arg(short, long, value_name = "FILE", num_args = 1.., value_delimiter = ',')
    )]
    pub modified: Vec<String>,
    /// Files created.
    #[serde(default)]
    #[cfg_attr(
        feature = "cli",
        arg(short, long, value_name = "FILE", num_args = 1.., value_delimiter = ',')
    )]
    pub created: Vec<String>,
}

impl Operation for Complete {
    const NAME: &'static str = "task_complete";
    const DESCRIPTION: &'static str = "Complete a task you started; writes its result report.";
    const READ_ONLY: bool = false;
    const CALLERS: Callers = Callers::OWN_WORK;
    type Output = TaskOutcome;
    fn run(self, cx: &Context) -> Result<TaskOutcome> {
        let agent = crate::inbox::as_agent(cx, &self.agent)?;
        let mut completion = Completion {
            output: self.summary,
            files_modified: self.modified,
            files_created: self.created,
            branch: None,
        };
        record_branch_or_say_why(cx.local, &self.task, &mut completion)?;
        let task = cx.tasks.complete(&agent, &self.task, completion)?;
        Ok(task.into())
    }
}

/// A worker gives up on a task.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct Fail {
    /// Your agent name.
    pub agent: String,
    /// The task's id.
    pub task: String,
    /// Why it cannot be done, and what would unblock it.
    pub reason: String,
}

impl Operation for Fail {
    const NAME: &'static str = "task_fail";
    const DESCRIPTION: &'static str = "Give up on a task you hold, saying why.";
    const READ_ONLY: bool = false;
    const CALLERS: Callers = Callers::OWN_WORK;
    type Output = TaskOutcome;
    fn run(self, cx: &Context) -> Result<TaskOutcome> {
        let agent = crate::inbox::as_agent(cx, &self.agent)?;
        Ok(cx.tasks.fail(&agent, &self.task, &self.reason)?.into())
    }
}

/// A worker renews its leases.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct Heartbeat {
    /// Your agent name.
    pub agent: String,
}

/// What a heartbeat renewed.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Renewed {
    pub agent: String,
    /// The tasks whose lease was renewed (empty: the agent holds none, and is recorded alive).
    pub renewed: Vec<String>,
    /// How long each renewed lease now lasts, e.g. "15m".
    pub lease: String,
    /// When nothing was renewed: what that means for an agent that thought it held a task.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Operation for Heartbeat {
    const NAME: &'static str = "task_heartbeat";
    const DESCRIPTION: &'static str =
        "Renew the lease on every task you hold; call it every few minutes while working.";
    const READ_ONLY: bool = false;
    const CALLERS: Callers = Callers::OWN_WORK;
    type Output = Renewed;
    fn run(self, cx: &Context) -> Result<Renewed> {
        crate::inbox::as_agent(cx, &self.agent)?;
        let renewed = cx.tasks.heartbeat(&self.agent)?;
        let note = renewed.is_empty().then(|| {
            format!(
                "{agent} holds no tasks (recorded as alive). If you were working on one, your \
                 lease expired and it was taken over or released: record your partial work with \
                 `baton discover \"…\" --agent {agent}`, tell the lead, and claim again",
                agent = self.agent
            )
        });
        Ok(Renewed {
            agent: self.agent,
            renewed,
            lease: humantime::format_duration(cx.tasks.lease()).to_string(),
            note,
        })
    }
}

/// A finding to share.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct Discover {
    /// Your agent name.
    #[cfg_attr(feature = "cli", arg(long, value_name = "AGENT"))]
    pub agent: String,
    /// The finding to share with every agent.
    pub text: String,
}

/// Where a discovery was recorded.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Discovered {
    pub agent: String,
    /// Where it was recorded: the discoveries file, or the database and project.
    pub path: String,
}

impl Operation for Discover {
    const NAME: &'static str = "discover";
    const DESCRIPTION: &'static str =
        "Share a finding with every agent (appended to context/discoveries.md).";
    const READ_ONLY: bool = false;
    const CALLERS: Callers = Callers::SHARED;
    type Output = Discovered;
    fn run(self, cx: &Context) -> Result<Discovered> {
        crate::inbox::as_agent(cx, &self.agent)?;
        let path = cx.tasks.discover(&self.agent, &self.text)?;
        Ok(Discovered {
            agent: self.agent,
            path,
        })
    }
}

/// Write `summary.md`.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AggregateResults {}

impl Operation for AggregateResults {
    const NAME: &'static str = "aggregate";
    const DESCRIPTION: &'static str = "Write summary.md from every task's result (leader).";
    const READ_ONLY: bool = false;
    const CALLERS: Callers = Callers::LEAD;
    type Output = Aggregate;
    fn run(self, cx: &Context) -> Result<Aggregate> {
        Ok(cx.tasks.aggregate()?)
    }
}

/// Look for problems, and repair the safe ones.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct Doctor {
    /// Apply the safe repairs (release stale leases, rewrite missing results, remove debris)
    /// and say what changed.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub fix: bool,
}

impl Operation for Doctor {
    const NAME: &'static str = "doctor";
    const DESCRIPTION: &'static str = "Find stale leases, tasks that can never finish (waiting on a failed, cancelled or unknown task, or a cycle), a stalled queue and crash debris; fix=true repairs what is safe (leader).";
    const READ_ONLY: bool = false;
    const CALLERS: Callers = Callers::LEAD;
    type Output = DoctorReport;
    fn run(self, cx: &Context) -> Result<DoctorReport> {
        let mut report = match cx.tasks.doctor(self.fix) {
            Ok(report) => report,
            // A board that does not parse is a finding: the rest is still checked.
            Err(e) if e.kind() == baton_core::ErrorKind::CorruptFile => DoctorReport {
                findings: vec![baton_core::Finding {
                    kind: baton_core::FindingKind::UnreadableBoard,
                    task: None,
                    message: e.to_string(),
                    fixable: false,
                }],
                fixed: Vec::new(),
            },
            Err(e) => return Err(e.into()),
        };
        let board_read = report
            .findings
            .iter()
            .all(|f| f.kind != baton_core::FindingKind::UnreadableBoard);
        if board_read {
            let (findings, fixed) = crate::worktrees::worktree_findings(cx, self.fix)?;
            report.findings.extend(findings);
            report.fixed.extend(fixed);
        }
        let (findings, fixed) = baton_core::inbox::inbox_findings(&*cx.documents, self.fix)?;
        report.findings.extend(findings);
        report.fixed.extend(fixed);
        // The team's records a view would skip: named here too.
        let workers = cx.team.workers_listed()?.unreadable;
        for unreadable in workers
            .into_iter()
            .chain(cx.team.attempts_listed(None)?.unreadable)
        {
            report.findings.push(baton_core::Finding {
                kind: baton_core::FindingKind::UnreadableDocument,
                task: None,
                message: format!(
                    "{} cannot be read: {}",
                    unreadable.document, unreadable.problem
                ),
                fixable: false,
            });
        }
        Ok(report)
    }
}

/// Agents' log lines.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "cli", derive(clap::Args), group(id = "task_logs"))]
#[serde(deny_unknown_fields)]
pub struct Logs {
    /// Only this agent's log (default: every agent's, merged in time order).
    #[serde(default)]
    pub agent: Option<String>,
    /// How many of the last lines (default 40).
    #[serde(default = "default_log_lines")]
    #[cfg_attr(feature = "cli", arg(short = 'n', long, default_value_t = DEFAULT_LOG_LINES))]
    pub lines: usize,
}

impl Default for Logs {
    fn default() -> Self {
        Logs {
            agent: None,
            lines: DEFAULT_LOG_LINES,
        }
    }
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct LogLines {
    /// Oldest first.
    pub lines: Vec<LogLine>,
}

/// Whose log `caller` reads when it names `named` (none: every agent's): an agent reads its
/// own, another's being that agent's record, not shared state; the lead reads whichever it
/// names. The name is checked first.
pub fn whose_log(caller: Option<&str>, named: Option<String>) -> Result<Option<String>> {
    if let Some(agent) = &named {
        baton_core::names::validate_agent_id(agent)?;
    }
    match (caller, named) {
        (Some(me), Some(named)) if me != named => Err(crate::Error::new(
            baton_core::ErrorKind::NotOwner,
            format!("{named}'s log is {named}'s; an agent reads its own ({me})"),
        )),
        (Some(me), _) => Ok(Some(me.to_string())),
        (None, named) => Ok(named),
    }
}

impl Operation for Logs {
    const NAME: &'static str = "logs";
    const DESCRIPTION: &'static str =
        "The last lines of one agent's log, or of every agent's merged in time order.";
    const READ_ONLY: bool = true;
    const CALLERS: Callers = Callers::OWN_WORK_AND_RESPONDER;
    type Output = LogLines;
    fn run(self, cx: &Context) -> Result<LogLines> {
        let agent = whose_log(cx.caller.as_deref(), self.agent)?;
        Ok(LogLines {
            lines: cx.tasks.logs(agent.as_deref(), self.lines)?,
        })
    }
}
