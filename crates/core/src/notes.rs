//! The markdown around the tasks: the master plan, shared discoveries and each task's result
//! report, as text. Their formats follow the source design so existing readers keep working;
//! where the text is kept (files in the folder, rows in a database) is each store's business.

use crate::error::{Result, StoreError};
use crate::model::{Task, TaskStatus};
use crate::time::Timestamp;

const MAX_DISCOVERY_BYTES: usize = 64 * 1024;

/// The notes around the tasks, as a store holds them: what a reader of the project sees
/// besides the board.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Notes {
    /// `master-plan.md`.
    pub master_plan: String,
    /// `summary.md`, once `aggregate` wrote it.
    pub summary: Option<String>,
    /// `context/discoveries.md`.
    pub discoveries: String,
}

/// The master plan `leader init` writes for `goal`.
pub fn master_plan(goal: &str, approach: Option<&str>, now: Timestamp) -> String {
    let approach = approach.unwrap_or("To be determined based on codebase analysis.");
    format!(
        "# Master Plan\n\n## Objective\n{goal}\n\n## Approach\n{approach}\n\n\
         ## Success Criteria\n- [ ] All tasks completed successfully\n- [ ] Code quality maintained\n\
         - [ ] Tests passing\n\n## Task Breakdown\nTasks are tracked in `tasks.json`. This plan \
         provides high-level context.\n\n## Status\n**Phase**: Planning\n**Started**: {now}\n\n\
         ## Notes\nAdd important notes here as the project progresses.\n"
    )
}

/// The most a master plan may hold (bytes).
pub const MAX_MASTER_PLAN_BYTES: usize = 256 * 1024;

/// Refuses a master plan that is empty, over [`MAX_MASTER_PLAN_BYTES`] or holds control
/// characters other than line breaks and tabs.
pub fn check_master_plan(text: &str) -> Result<()> {
    crate::text::check_text("master plan", text, MAX_MASTER_PLAN_BYTES, true)
}

/// A project's goal, trimmed: one line of text without control characters.
pub fn check_goal(goal: &str) -> Result<&str> {
    let goal = goal.trim();
    if goal.is_empty() || goal.chars().any(|c| c.is_control() && c != '\n') {
        return Err(StoreError::InvalidInput {
            field: "goal",
            reason: "give a one-line goal without control characters".into(),
        });
    }
    Ok(goal)
}

/// The heading a new project's discoveries start with.
pub const DISCOVERIES_HEADER: &str = "# Shared Discoveries\n\nImportant findings go here.\n";

/// A discovery's entry in `context/discoveries.md` (`## [time] agent`, then the text), after
/// the checks every store makes: a valid agent name, 1 to 64 KiB of text without control
/// characters other than line breaks and tabs.
pub fn discovery_entry(agent: &str, text: &str, now: Timestamp) -> Result<String> {
    crate::names::validate_agent_id(agent)?;
    let text = text.trim();
    if text.is_empty() || text.len() > MAX_DISCOVERY_BYTES {
        return Err(StoreError::InvalidInput {
            field: "discovery",
            reason: format!("it must be 1 to {MAX_DISCOVERY_BYTES} bytes of text"),
        });
    }
    if let Some(c) = text
        .chars()
        .find(|c| c.is_control() && !matches!(c, '\n' | '\t' | '\r'))
    {
        return Err(StoreError::InvalidInput {
            field: "discovery",
            reason: format!("it contains control character U+{:04X}", c as u32),
        });
    }
    Ok(format!("\n## [{now}] {agent}\n\n{text}\n"))
}

/// The goal of a master plan's text (the text under `## Objective`), if it can be found.
pub fn goal_of(plan: &str) -> Option<String> {
    let after = plan.split("## Objective").nth(1)?;
    let goal = after.split("\n#").next()?.trim();
    (!goal.is_empty()).then(|| goal.to_string())
}

/// A finished task's result report (`results/ID.md`), in the source design's format.
pub fn render_result(task: &Task) -> String {
    let result = task.result.clone().unwrap_or_default();
    let list = |files: &[String]| {
        if files.is_empty() {
            "None\n".to_string()
        } else {
            files.iter().map(|f| format!("- {f}\n")).collect()
        }
    };
    let status = match task.status {
        TaskStatus::Done => "SUCCESS",
        TaskStatus::Failed => "FAILED",
        TaskStatus::Cancelled => "CANCELLED",
        other => other.as_str(),
    };
    let output = match (&result.output, &task.failure_reason) {
        (Some(output), _) => output.clone(),
        (None, Some(reason)) => reason.clone(),
        (None, None) => String::new(),
    };
    let when = task.completed_at.map(|t| t.to_string()).unwrap_or_default();
    let branch = result
        .branch
        .as_ref()
        .map(branch_section)
        .unwrap_or_default();
    format!(
        "# Task: {id}\n\n## Description\n{description}\n\n## Completed By\n{by}\n\n\
         ## Completed At\n{when}\n\n## Output\n{output}\n\n## Files Modified\n{modified}\n\
         ## Files Created\n{created}\n{branch}## Status\n{status}\n",
        id = task.id,
        description = task.description,
        by = task.claimed_by.as_deref().unwrap_or("unknown"),
        modified = list(&result.files_modified),
        created = list(&result.files_created),
    )
}

/// The "Branch" section of a result report: the task's branch, its base, its commits, and
/// what was left uncommitted.
fn branch_section(branch: &crate::model::BranchRecord) -> String {
    use std::fmt::Write as _;

    let mut out = format!("## Branch\n{}", branch.name);
    if let Some(base) = &branch.base {
        let _ = write!(out, " (from {base})");
    }
    out.push('\n');
    if branch.commits.is_empty() {
        out.push_str("No commits.\n");
    }
    for commit in &branch.commits {
        let short = commit.id.get(..12).unwrap_or(&commit.id);
        let _ = writeln!(out, "- {short} {}", commit.subject);
    }
    if !branch.uncommitted.is_empty() {
        let _ = writeln!(
            out,
            "Left uncommitted in the worktree: {}",
            branch.uncommitted.join(", ")
        );
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::task;

    #[test]
    fn result_report_follows_the_source_format() {
        let mut t = task("task-1", TaskStatus::Done, &[]);
        t.claimed_by = Some("w1".into());
        t.result = Some(Box::new(crate::model::TaskResult {
            output: Some("did it".into()),
            files_created: vec!["src/a.rs".into()],
            ..Default::default()
        }));
        let text = render_result(&t);
        assert!(text.starts_with("# Task: task-1\n\n## Description\ndo task-1\n"));
        assert!(text.contains("## Output\ndid it\n"));
        assert!(text.contains("## Files Modified\nNone\n"));
        assert!(text.contains("## Files Created\n- src/a.rs\n"));
        assert!(text.ends_with("## Status\nSUCCESS\n"));
    }
}
