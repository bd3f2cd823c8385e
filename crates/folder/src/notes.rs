//! The folder's notes as files: `master-plan.md`, `context/discoveries.md`, `summary.md` and
//! `results/<task-id>.md`, holding the text the core formats ([`baton_core::notes`]).

use std::fs::{self, OpenOptions};
use std::io::Write;

use baton_core::Layout;
use baton_core::Task;
use baton_core::notes::{discovery_entry, goal_of, render_result};
use baton_core::{Notes, Result, StoreError, Timestamp};
use baton_fs::write_atomic;

/// The notes' files in `layout` (a missing file reads as empty).
pub fn read(layout: &Layout) -> Result<Notes> {
    let summary = read_text(&layout.unlinked(layout.summary())?)?;
    Ok(Notes {
        master_plan: read_text(&layout.unlinked(layout.master_plan())?)?,
        summary: layout.summary().exists().then_some(summary),
        discoveries: read_text(&layout.unlinked(layout.discoveries())?)?,
    })
}

/// The goal from `master-plan.md` (the text under `## Objective`), if it can be found.
pub fn goal(layout: &Layout) -> Option<String> {
    goal_of(&fs::read_to_string(layout.master_plan()).ok()?)
}

/// Appends a discovery by `agent`, in one write so concurrent appends never interleave.
pub fn add_discovery(layout: &Layout, agent: &str, text: &str, now: Timestamp) -> Result<()> {
    let entry = discovery_entry(agent, text, now)?;
    let path = layout.unlinked(layout.discoveries())?;
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(entry.as_bytes()))
        .map_err(|e| StoreError::io(path, e))
}

/// Writes `results/<task>.md` for a done or failed task, from what `tasks.json` records.
pub fn write_result(layout: &Layout, task: &Task) -> Result<()> {
    Ok(write_atomic(
        &layout.unlinked(layout.result_file(&task.id)?)?,
        render_result(task).as_bytes(),
    )?)
}

/// The text of a note file; empty when it does not exist yet.
pub fn read_text(path: &std::path::Path) -> Result<String> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(e) => Err(StoreError::io(path, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use baton_core::notes::{DISCOVERIES_HEADER, master_plan};

    fn t0() -> Timestamp {
        Timestamp::parse("2026-01-01T00:00:00Z").unwrap()
    }

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
}
