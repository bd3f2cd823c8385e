//! The folder's logs: `logs/<agent>.log`, one line per operation as the core words it
//! ([`baton_core::LogEntry`]), appended in one write so concurrent writers never interleave.

use std::fs;

use baton_core::Layout;
use baton_core::{LogEntry, LogLine, Result, StoreError, Timestamp};
use baton_fs::append_line;

/// Appends `entry`'s line at `now` to its agent's log. Details are folded onto one line.
pub fn record(layout: &Layout, entry: &LogEntry, now: Timestamp) -> Result<()> {
    let path = layout.unlinked(layout.log_file(&entry.agent)?)?;
    Ok(append_line(&path, &entry.line(now))?)
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
        .filter(|name| baton_core::names::validate_agent_id(name).is_ok())
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
        let path = layout.unlinked(layout.log_file(&agent)?)?;
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

    fn t0() -> Timestamp {
        Timestamp::parse("2026-01-01T00:00:00Z").unwrap()
    }

    #[test]
    fn records_one_line_per_entry_and_merges_logs_in_time_order() {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::at(dir.path());
        fs::create_dir_all(layout.logs_dir()).unwrap();
        let t1 = t0().after(std::time::Duration::from_secs(1));
        record(&layout, &LogEntry::new("w2", "CLAIM", "task-1"), t1).unwrap();
        record(
            &layout,
            &LogEntry::new("w1", "NOTE", "two\nlines\u{1b}"),
            t0(),
        )
        .unwrap();
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
