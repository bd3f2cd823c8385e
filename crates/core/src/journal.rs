//! What agents' logs say: one line per operation, in the source design's format
//! `[timestamp] ACTION: details`, and the words for each operation ([`LogEntry`]), written once
//! so that every store (the folder's `logs/<agent>.log`, the database's rows) logs an
//! operation the same. The journal is for people; the tasks are the record.

use serde::Serialize;

use crate::model::{Reservation, Task};
use crate::requests::Claimed;
use crate::signals::SignalTarget;
use crate::time::Timestamp;

/// The log the lead's operations go to (add, edit, reset, cancel, init, …): `logs/leader.log`,
/// as the source design's `leader` commands write it, so its readers keep finding it. The name
/// of a log, not a second name of the lead ([`LEAD`]), which its entries stand for.
pub const LEAD_LOG: &str = "leader";

/// One line of one agent's log.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct LogLine {
    pub agent: String,
    pub line: String,
}

/// One log line, `[now] ACTION: details`, as every store writes it: details folded onto one
/// line (control characters become spaces).
fn format_line(action: &str, details: &str, now: Timestamp) -> String {
    let details: String = details
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if details.is_empty() {
        format!("[{now}] {action}")
    } else {
        format!("[{now}] {action}: {details}")
    }
}

/// The details of an `ADD_TASK` line: id, priority, dependencies, description.
fn added(task: &Task) -> String {
    let deps = if task.dependencies.is_empty() {
        String::new()
    } else {
        format!(" after {}", task.dependencies.join(", "))
    };
    format!(
        "{} (priority {}{deps}): {}",
        task.id, task.priority, task.description
    )
}

/// A reservation's log line details: `r-1: src/api/** (shared, for task-3, until …): reason`.
fn reserved(r: &Reservation) -> String {
    let mut notes = Vec::new();
    if r.shared {
        notes.push("shared".to_string());
    }
    if let Some(task) = &r.task {
        notes.push(format!("for {task}"));
    }
    if let Some(end) = r.expires_at {
        notes.push(format!("until {end}"));
    }
    format!(
        "{}: {}{}{}",
        r.id,
        r.paths.join(", "),
        if notes.is_empty() {
            String::new()
        } else {
            format!(" ({})", notes.join(", "))
        },
        r.reason
            .as_deref()
            .map(|reason| format!(": {reason}"))
            .unwrap_or_default()
    )
}

/// The details of a `CLAIM` line: which task, at what priority, taken over from whom.
fn claimed(claim: &Claimed) -> String {
    format!(
        "{} (priority {}){}: {}",
        claim.task.id,
        claim.task.priority,
        claim
            .reclaimed_from
            .as_deref()
            .map(|from| format!(", taken over from {from} whose lease expired"))
            .unwrap_or_default(),
        claim.task.description
    )
}

/// One operation's line in an agent's log, before its time is stamped: whose log, the
/// action's name, its details. Each store writes it where it keeps logs; the words come from
/// here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogEntry {
    pub agent: String,
    pub action: &'static str,
    pub details: String,
}

/// What was done to one task, as a store journals it: the action whose name its log line bears
/// (the change feed's [`crate::feed::TaskChange`] is what a reader sees change).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskAction {
    Start,
    Complete,
    Fail,
    Release,
    Reset,
    Cancel,
    Reopen,
    Approve,
}

impl TaskAction {
    /// The action's name in the log.
    pub fn action(self) -> &'static str {
        match self {
            TaskAction::Start => "START",
            TaskAction::Complete => "COMPLETE",
            TaskAction::Fail => "FAIL",
            TaskAction::Release => "RELEASE",
            TaskAction::Reset => "RESET",
            TaskAction::Cancel => "CANCEL",
            TaskAction::Reopen => "REOPEN",
            TaskAction::Approve => "APPROVE",
        }
    }
}

impl LogEntry {
    /// A line in `agent`'s log.
    pub fn new(agent: &str, action: &'static str, details: impl Into<String>) -> LogEntry {
        LogEntry {
            agent: agent.to_string(),
            action,
            details: details.into(),
        }
    }

    /// `INIT: Goal: …`, the lead's first line.
    pub fn init(goal: &str) -> LogEntry {
        LogEntry::new(LEAD_LOG, "INIT", format!("Goal: {goal}"))
    }

    /// A task added by the lead.
    pub fn added(task: &Task) -> LogEntry {
        LogEntry::new(LEAD_LOG, "ADD_TASK", added(task))
    }

    /// A task edited by the lead.
    pub fn edited(task: &Task) -> LogEntry {
        LogEntry::new(
            LEAD_LOG,
            "EDIT_TASK",
            format!("{}: {}", task.id, task.description),
        )
    }

    /// A claim by `agent`: what it took, or that nothing was ready.
    pub fn claim(agent: &str, claimed: Option<&Claimed>) -> LogEntry {
        let details = match claimed {
            Some(claimed) => self::claimed(claimed),
            None => "nothing ready".to_string(),
        };
        LogEntry::new(agent, "CLAIM", details)
    }

    /// A reservation made.
    pub fn reserve(reservation: &Reservation) -> LogEntry {
        LogEntry::new(&reservation.agent, "RESERVE", reserved(reservation))
    }

    /// Reservations `agent` gave back; nothing to log when none were.
    pub fn unreserve(agent: &str, gone: &[Reservation]) -> Option<LogEntry> {
        let ids: Vec<&str> = gone.iter().map(|r| r.id.as_str()).collect();
        (!ids.is_empty()).then(|| LogEntry::new(agent, "UNRESERVE", ids.join(", ")))
    }

    /// `change` of `task` as it is now, by its holder `agent` (the lead's changes, reset
    /// and cancel, by nobody): the task's id, and the reason for a failure or a cancellation.
    pub fn task(change: TaskAction, agent: Option<&str>, task: &Task) -> LogEntry {
        let details = match change {
            TaskAction::Fail | TaskAction::Cancel => format!(
                "{}: {}",
                task.id,
                task.failure_reason.as_deref().unwrap_or_default()
            ),
            _ => task.id.clone(),
        };
        LogEntry::new(agent.unwrap_or(LEAD_LOG), change.action(), details)
    }

    /// `agent`'s leases renewed: the tasks it holds.
    pub fn heartbeat(agent: &str, renewed: &[String]) -> LogEntry {
        LogEntry::new(agent, "HEARTBEAT", renewed.join(", "))
    }

    /// A finding shared by `agent`.
    pub fn discovery(agent: &str, text: &str) -> LogEntry {
        LogEntry::new(agent, "DISCOVERY", text.trim())
    }

    /// The master plan rewritten by `by` (the lead, or a team's planner).
    pub fn master_plan(by: &str, bytes: usize) -> LogEntry {
        LogEntry::new(by, "PLAN", format!("master plan rewritten ({bytes} bytes)"))
    }

    /// The summary written: `done of total` as the report's outcome says.
    pub fn aggregate(outcome: &str, total: usize) -> LogEntry {
        LogEntry::new(LEAD_LOG, "AGGREGATE", format!("{outcome} of {total}"))
    }

    /// Run `number` started, with the stale signals it cleared.
    pub fn run_new(number: u32, cleared: &[String]) -> LogEntry {
        let details = match cleared.len() {
            0 => format!("run {number}"),
            n => format!(
                "run {number}; cleared {n} stale signal(s): {}",
                cleared.join(", ")
            ),
        };
        LogEntry::new(LEAD_LOG, "RUN_NEW", details)
    }

    /// A signal written by `writer`.
    pub fn signal(writer: &str, target: &SignalTarget) -> LogEntry {
        LogEntry::new(writer, "SIGNAL", target.label())
    }

    /// A signal cleared by `by`.
    pub fn signal_clear(by: &str, target: &SignalTarget) -> LogEntry {
        LogEntry::new(by, "SIGNAL_CLEAR", target.label())
    }

    /// One repair the doctor made.
    pub fn doctor_fix(line: &str) -> LogEntry {
        LogEntry::new(LEAD_LOG, "DOCTOR_FIX", line)
    }

    /// This entry as its log line at `now`.
    pub fn line(&self, now: Timestamp) -> String {
        format_line(self.action, &self.details, now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{t0, task};

    #[test]
    fn a_failure_is_logged_with_its_reason_and_a_start_with_the_id_alone() {
        let mut failed = task("task-1", crate::TaskStatus::Failed, &[]);
        failed.failure_reason = Some("tests fail".into());
        let fail = LogEntry::task(TaskAction::Fail, Some("w1"), &failed);
        assert_eq!(
            fail.line(t0()),
            format!("[{}] FAIL: task-1: tests fail", t0())
        );
        let start = LogEntry::task(TaskAction::Start, Some("w1"), &failed);
        assert_eq!(
            (start.agent.as_str(), start.details.as_str()),
            ("w1", "task-1")
        );
        assert_eq!(
            LogEntry::task(TaskAction::Reset, None, &failed).agent,
            LEAD_LOG
        );
        assert_eq!(LogEntry::claim("w1", None).details, "nothing ready");
        assert_eq!(LogEntry::unreserve("w1", &[]), None);
    }
}
