//! `summary.md`: one document with the goal, progress, every result and every failure, so the
//! lead (or the next agent) can read the outcome of a whole run in one place.

use std::fmt::Write;

use crate::model::TaskStatus;
use crate::status::StatusReport;

/// What `aggregate` wrote.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct Aggregate {
    /// Where the summary was written: `summary.md`'s path, or the database and project.
    pub path: String,
    pub total: usize,
    pub done: usize,
    pub failed: usize,
    pub cancelled: usize,
    pub unfinished: usize,
}

impl Aggregate {
    /// What was written at `path` for the board `report`.
    pub fn of(report: &StatusReport, path: String) -> Aggregate {
        let done = report.count(TaskStatus::Done);
        let failed = report.count(TaskStatus::Failed);
        let cancelled = report.count(TaskStatus::Cancelled);
        Aggregate {
            path,
            total: report.total,
            done,
            failed,
            cancelled,
            unfinished: report.total - done - failed - cancelled,
        }
    }
}

pub fn render(report: &StatusReport) -> String {
    let mut out = String::from("# Summary\n\n");
    if let Some(goal) = &report.goal {
        let _ = write!(out, "## Objective\n{goal}\n\n");
    }
    let _ = writeln!(
        out,
        "Generated {} from tasks.json ({} tasks).\n",
        report.as_of, report.total
    );
    out.push_str("## Progress\n\n| status | tasks |\n| --- | --- |\n");
    for (status, count) in &report.counts {
        let _ = writeln!(out, "| {status} | {count} |");
    }

    let done: Vec<_> = report
        .tasks
        .iter()
        .filter(|t| t.task.status == TaskStatus::Done)
        .collect();
    if !done.is_empty() {
        out.push_str("\n## Completed\n");
        for view in done {
            let task = &view.task;
            let result = task.result.clone().unwrap_or_default();
            let _ = write!(out, "\n### {}: {}\n\n", task.id, task.description);
            let _ = writeln!(
                out,
                "- Completed by {} at {}",
                task.claimed_by.as_deref().unwrap_or("unknown"),
                task.completed_at
                    .map(|t| t.to_string())
                    .unwrap_or_else(|| "unknown time".into())
            );
            if !result.files_modified.is_empty() {
                let _ = writeln!(
                    out,
                    "- Files modified: {}",
                    result.files_modified.join(", ")
                );
            }
            if !result.files_created.is_empty() {
                let _ = writeln!(out, "- Files created: {}", result.files_created.join(", "));
            }
            if let Some(output) = result.output.filter(|o| !o.trim().is_empty()) {
                let _ = writeln!(out, "\n{}", output.trim_end());
            }
        }
    }

    for (status, heading) in [
        (TaskStatus::Failed, "Failed"),
        (TaskStatus::Cancelled, "Cancelled"),
    ] {
        let ended: Vec<_> = report
            .tasks
            .iter()
            .filter(|t| t.task.status == status)
            .collect();
        if ended.is_empty() {
            continue;
        }
        let _ = write!(out, "\n## {heading}\n\n");
        for view in ended {
            let task = &view.task;
            let _ = writeln!(
                out,
                "- {} ({}{}): {} — {}",
                task.id,
                task.status,
                task.claimed_by
                    .as_deref()
                    .map(|a| format!(", {a}"))
                    .unwrap_or_default(),
                task.description,
                task.failure_reason.as_deref().unwrap_or("no reason given")
            );
        }
    }

    let open: Vec<_> = report
        .tasks
        .iter()
        .filter(|t| !t.task.status.is_final())
        .collect();
    if !open.is_empty() {
        out.push_str("\n## Not finished\n\n");
        for view in open {
            let task = &view.task;
            let mut state = task.status.to_string();
            if let Some(owner) = &task.claimed_by {
                let _ = write!(state, " by {owner}");
            }
            if !view.blocked_by.is_empty() {
                let _ = write!(state, ", blocked by {}", view.blocked_by.join(", "));
            }
            let _ = writeln!(out, "- {} ({state}): {}", task.id, task.description);
        }
    }
    out
}
