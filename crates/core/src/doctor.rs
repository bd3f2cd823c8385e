//! `leader doctor`: finds what the source design left to manual inspection (stale leases,
//! work that can never finish, a queue that has stalled, debris from crashes) and applies the
//! repairs that cannot lose work.

use std::time::Duration;

use serde::Serialize;

use crate::graph::{Doom, doomed_tasks};
use crate::model::{TaskFile, TaskStatus};
use crate::status::StatusReport;
use crate::time::{Timestamp, short_duration};

/// What kind of problem a finding is.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    /// A held task whose lease expired: its worker is presumed dead. Fix: make it available.
    StaleLease,
    /// Depends, directly or not, on a failed or cancelled task.
    FailedDependency,
    /// Depends on a task id that does not exist.
    UnknownDependency,
    /// Sits on a dependency cycle.
    DependencyCycle,
    /// Tasks are available but none can ever become ready and nobody holds work.
    Stalled,
    /// A temporary file left by an interrupted write. Fix: remove it.
    LeftoverTempFile,
    /// A done or failed task has no `results/<id>.md`. Fix: write it from tasks.json.
    MissingResult,
    /// A finished (or unknown) task's git worktree is still checked out. Fix: remove the
    /// worktree when it has nothing uncommitted (its branch stays, for `leader merge`).
    FinishedWorktree,
    /// The inbox's counter is behind its questions or messages (rewound, deleted or restored
    /// from an old copy). Fix: move it up to the highest number used (a new record never
    /// overwrites an old one either way).
    InboxCounterBehind,
    /// A question or message that cannot be read (corrupt, or not what Baton wrote): views
    /// skip it and name it. Not fixed: look at it, then repair or remove the file.
    UnreadableDocument,
    /// A symbolic link inside `.coordination/` (outside the tasks' worktrees): the folder store
    /// refuses to follow it. Not fixed: look at where it leads, then remove it.
    LinkInFolder,
    /// The board itself (`tasks.json`) cannot be read: nothing that needs it could be checked.
    /// Not fixed: repair it by hand, or restore it from a backup (or git, when it is tracked).
    UnreadableBoard,
}

/// One problem found.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Finding {
    pub kind: FindingKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    pub message: String,
    /// `--fix` repairs it without risk of losing work.
    pub fixable: bool,
}

/// Everything `doctor` found, and what `--fix` changed.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct DoctorReport {
    pub findings: Vec<Finding>,
    pub fixed: Vec<String>,
}

impl DoctorReport {
    pub fn healthy(&self) -> bool {
        self.findings.is_empty()
    }
}

/// The findings that follow from `tasks.json` alone.
pub fn diagnose(file: &TaskFile, now: Timestamp, lease: Duration) -> Vec<Finding> {
    let mut findings = Vec::new();
    for task in &file.tasks {
        if task.lease_expired(now, lease) {
            let ago = task
                .lease_end(lease)
                .map(|end| format!("expired {} ago", short_duration(end.age(now))))
                .unwrap_or_else(|| "has no claim time".into());
            findings.push(Finding {
                kind: FindingKind::StaleLease,
                task: Some(task.id.clone()),
                message: format!(
                    "{} is {} by {} but its lease {ago}; the worker is presumed gone",
                    task.id,
                    task.status,
                    task.claimed_by.as_deref().unwrap_or("nobody")
                ),
                fixable: true,
            });
        }
    }
    for (id, doom) in doomed_tasks(file) {
        let (kind, message) = match doom {
            Doom::FailedDependency { via, status } => (
                FindingKind::FailedDependency,
                format!(
                    "{id} can never start: it depends on {via}, which is {status} or waits on a task that is; reset that task or change {id}'s dependencies"
                ),
            ),
            Doom::UnknownDependency(dep) => (
                FindingKind::UnknownDependency,
                format!(
                    "{id} can never start: it depends on {dep:?}, which does not exist; edit its dependencies"
                ),
            ),
            Doom::Cycle(cycle) => (
                FindingKind::DependencyCycle,
                format!(
                    "{id} can never start: its dependencies form a cycle ({}); edit one of them",
                    cycle.join(" -> ")
                ),
            ),
        };
        findings.push(Finding {
            kind,
            task: Some(id),
            message,
            fixable: false,
        });
    }
    let report = StatusReport::build(file.clone(), None, now, lease);
    let live_holders = report
        .tasks
        .iter()
        .any(|t| t.task.status.is_held() && !t.stale);
    let available = report.count(TaskStatus::Available);
    if available > 0 && report.ready == 0 && !live_holders {
        findings.push(Finding {
            kind: FindingKind::Stalled,
            task: None,
            message: format!(
                "{available} task(s) are available but none can become ready and no worker holds any work; see the findings above"
            ),
            fixable: false,
        });
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{file_with, t0, task};

    #[test]
    fn finds_stale_leases_doomed_tasks_and_a_stalled_queue() {
        let mut stale = task("s", TaskStatus::Claimed, &[]);
        stale.claimed_by = Some("gone".into());
        stale.lease_expires_at = Some(t0());
        let file = file_with(vec![
            stale,
            task("f", TaskStatus::Failed, &[]),
            task("x", TaskStatus::Available, &["f"]),
        ]);
        let later = t0().after(Duration::from_secs(120));
        let findings = diagnose(&file, later, Duration::from_secs(60));
        let kinds: Vec<_> = findings.iter().map(|f| f.kind).collect();
        assert_eq!(
            kinds,
            [FindingKind::StaleLease, FindingKind::FailedDependency]
        );
        assert!(
            findings[0].message.contains("expired 2m 0s ago"),
            "{}",
            findings[0].message
        );
        assert!(findings[0].fixable && !findings[1].fixable);
        // The stale task is claimable, so the queue is not stalled; once it is done, it is.
        let mut file = file;
        file.tasks[0].status = TaskStatus::Done;
        let kinds: Vec<_> = diagnose(&file, later, Duration::from_secs(60))
            .iter()
            .map(|f| f.kind)
            .collect();
        assert_eq!(kinds, [FindingKind::FailedDependency, FindingKind::Stalled]);
    }

    #[test]
    fn a_healthy_board_has_no_findings() {
        let file = file_with(vec![
            task("a", TaskStatus::Done, &[]),
            task("b", TaskStatus::Available, &["a"]),
        ]);
        assert!(diagnose(&file, t0(), Duration::from_secs(60)).is_empty());
    }
}
