//! The markdown files around the tasks: the master plan, shared discoveries and each task's
//! result report. Their formats follow the source design so existing readers keep working.

use std::fs::{self, OpenOptions};
use std::io::Write;

use crate::durable::write_atomic;
use crate::error::{Result, StoreError};
use crate::layout::Layout;
use crate::model::{Task, TaskStatus};
use crate::time::Timestamp;

const MAX_DISCOVERY_BYTES: usize = 64 * 1024;

/// The notes around the tasks, as their files hold them: what a reader of the project sees
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

impl Notes {
    /// The notes' files in `layout` (a missing file reads as empty).
    pub fn read(layout: &Layout) -> Result<Notes> {
        let summary = read_text(&layout.summary())?;
        Ok(Notes {
            master_plan: read_text(&layout.master_plan())?,
            summary: layout.summary().exists().then_some(summary),
            discoveries: read_text(&layout.discoveries())?,
        })
    }
}

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

pub const DISCOVERIES_HEADER: &str = "# Shared Discoveries\n\nImportant findings go here.\n";

/// The goal from `master-plan.md` (the text under `## Objective`), if it can be found.
pub fn goal(layout: &Layout) -> Option<String> {
    goal_of(&fs::read_to_string(layout.master_plan()).ok()?)
}

/// Appends a discovery by `agent`, in one write so concurrent appends never interleave.
pub fn add_discovery(layout: &Layout, agent: &str, text: &str, now: Timestamp) -> Result<()> {
    let entry = discovery_entry(agent, text, now)?;
    let path = layout.discoveries();
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(entry.as_bytes()))
        .map_err(|e| StoreError::io(path, e))
}

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

/// Writes `results/<task>.md` for a done or failed task, from what `tasks.json` records.
pub fn write_result(layout: &Layout, task: &Task) -> Result<()> {
    write_atomic(
        &layout.result_file(&task.id)?,
        render_result(task).as_bytes(),
    )
}

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

/// The text of a note file; empty when it does not exist yet.
pub fn read_text(path: &std::path::Path) -> Result<String> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(e) => Err(crate::error::StoreError::io(path, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{t0, task};

    #[test]
    fn goal_is_read_back_from_the_master_plan() {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::at(dir.path());
        fs::write(
            layout.master_plan(),
            master_plan("Build a REST API", None, t0()),
        )
        .unwrap();
        assert_eq!(goal(&layout).as_deref(), Some("Build a REST API"));
    }

    #[test]
    fn discoveries_are_appended_under_a_heading_and_bad_text_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::at(dir.path());
        fs::create_dir_all(layout.context_dir()).unwrap();
        fs::write(layout.discoveries(), DISCOVERIES_HEADER).unwrap();
        add_discovery(&layout, "w1", "the API uses JWT", t0()).unwrap();
        let text = fs::read_to_string(layout.discoveries()).unwrap();
        assert!(text.starts_with(DISCOVERIES_HEADER));
        assert!(text.contains(&format!("## [{}] w1\n\nthe API uses JWT\n", t0())));
        assert!(add_discovery(&layout, "w1", "  ", t0()).is_err());
        assert!(add_discovery(&layout, "w1", "bell\u{7}", t0()).is_err());
        assert!(add_discovery(&layout, "../x", "t", t0()).is_err());
    }

    #[test]
    fn result_report_follows_the_source_format() {
        let mut t = task("task-1", TaskStatus::Done, &[]);
        t.claimed_by = Some("w1".into());
        t.result = Some(crate::model::TaskResult {
            output: Some("did it".into()),
            files_created: vec!["src/a.rs".into()],
            ..Default::default()
        });
        let text = render_result(&t);
        assert!(text.starts_with("# Task: task-1\n\n## Description\ndo task-1\n"));
        assert!(text.contains("## Output\ndid it\n"));
        assert!(text.contains("## Files Modified\nNone\n"));
        assert!(text.contains("## Files Created\n- src/a.rs\n"));
        assert!(text.ends_with("## Status\nSUCCESS\n"));
    }
}
