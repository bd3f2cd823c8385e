//! Agents' logs: `logs/<agent>.log`, one line per operation, in the source design's format
//! `[timestamp] ACTION: details`. The journal is for people; `tasks.json` is the record.

use std::fs;

use serde::Serialize;

use crate::durable::append_line;
use crate::error::{Result, StoreError};
use crate::layout::Layout;
use crate::lifecycle::Claim;
use crate::model::Task;
use crate::time::Timestamp;

/// One line of one agent's log.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct LogLine {
    pub agent: String,
    pub line: String,
}

/// Appends `[now] ACTION: details` to `agent`'s log. Details are folded onto one line.
pub fn record(
    layout: &Layout,
    agent: &str,
    action: &str,
    details: &str,
    now: Timestamp,
) -> Result<()> {
    let path = layout.log_file(agent)?;
    append_line(&path, &format_line(action, details, now))
}

/// One log line, `[now] ACTION: details`, as every store writes it: details folded onto one
/// line (control characters become spaces).
pub fn format_line(action: &str, details: &str, now: Timestamp) -> String {
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
pub fn added(task: &Task) -> String {
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

/// The details of a `CLAIM` line: which task, at what priority, taken over from whom.
/// A reservation's log line details: `r-1: src/api/** (shared, for task-3, until …): reason`.
pub fn reserved(r: &crate::reservations::Reservation) -> String {
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

pub fn claimed(claim: &Claim) -> String {
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

/// Agents that have a log, sorted by name.
pub fn agents(layout: &Layout) -> Result<Vec<String>> {
    let dir = layout.logs_dir();
    let entries = match fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(StoreError::io(dir, e)),
    };
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            e.file_name()
                .to_str()?
                .strip_suffix(".log")
                .map(str::to_string)
        })
        .filter(|name| crate::names::validate_agent_id(name).is_ok())
        .collect();
    names.sort();
    Ok(names)
}

/// The last `tail` lines of one agent's log, or of all logs merged in time order.
pub fn read(layout: &Layout, agent: Option<&str>, tail: usize) -> Result<Vec<LogLine>> {
    let agents = match agent {
        Some(agent) => vec![agent.to_string()],
        None => agents(layout)?,
    };
    let mut lines = Vec::new();
    for agent in agents {
        let path = layout.log_file(&agent)?;
        let text = match fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(StoreError::io(path, e)),
        };
        lines.extend(text.lines().map(|line| LogLine {
            agent: agent.clone(),
            line: line.to_string(),
        }));
    }
    // `[RFC 3339 UTC]` prefixes sort in time order; the sort is stable within one log.
    lines.sort_by(|a, b| a.line.get(..28).cmp(&b.line.get(..28)));
    let skip = lines.len().saturating_sub(tail);
    Ok(lines.split_off(skip))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::t0;

    #[test]
    fn records_one_line_per_entry_and_merges_logs_in_time_order() {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::at(dir.path());
        fs::create_dir_all(layout.logs_dir()).unwrap();
        let t1 = t0().after(std::time::Duration::from_secs(1));
        record(&layout, "w2", "CLAIM", "task-1", t1).unwrap();
        record(&layout, "w1", "NOTE", "two\nlines\u{1b}", t0()).unwrap();
        let all = read(&layout, None, 10).unwrap();
        assert_eq!(all.len(), 2);
        assert_eq!(all[0].agent, "w1");
        assert!(
            all[0].line.ends_with("NOTE: two lines "),
            "{:?}",
            all[0].line
        );
        assert_eq!(all[1].line, format!("[{t1}] CLAIM: task-1"));
        assert_eq!(read(&layout, Some("w2"), 10).unwrap().len(), 1);
        assert_eq!(read(&layout, None, 1).unwrap()[0].agent, "w2");
        assert_eq!(agents(&layout).unwrap(), ["w1", "w2"]);
    }
}
