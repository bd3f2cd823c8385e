//! Landed work leaves the board without being asked: a command that opens a project kept in
//! its folder archives what has been quiet for an hour ([`baton_api::tasks::archive_quiet`]),
//! at most once an hour (the archive's `checked` file says when it last looked), and says on
//! standard error what it moved. A project kept in a database keeps its rows, so it is not
//! looked at; nor is anything when an agent's command goes through its door.

use std::time::{Duration, SystemTime};

use baton_api::OpenProject;

/// How often a command looks for work to archive.
const LOOK_EVERY: Duration = Duration::from_secs(60 * 60);

/// Archives `project`'s quiet landed work, if an hour has passed since a command last looked.
pub fn now_and_then(project: &OpenProject) {
    if project.tasks.shared_across_machines() || crate::context::door_guest().is_some() {
        return;
    }
    let layout = project.local();
    let Ok(stamp) = layout.unlinked(
        layout
            .root()
            .join(baton_core::archive::ARCHIVE)
            .join("checked"),
    ) else {
        return;
    };
    let looked = std::fs::metadata(&stamp)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|at| SystemTime::now().duration_since(at).ok());
    if looked.is_some_and(|ago| ago < LOOK_EVERY) || !layout.tasks_file().is_file() {
        return;
    }
    let first = looked.is_none();
    let report = match baton_api::tasks::archive_quiet(project.tasks.as_ref(), layout) {
        Ok(report) => report,
        // The command itself meets the trouble (a board that does not parse) and says so.
        Err(_) => return,
    };
    let marked = stamp
        .parent()
        .map(std::fs::create_dir_all)
        .and_then(|made| made.ok())
        .and_then(|()| baton_fs::write_atomic(&stamp, b"").ok());
    if marked.is_none() {
        return;
    }
    if !report.archived.is_empty() {
        let since = match first {
            true => "landed work archived by this version of Baton for the first time",
            false => "quiet for an hour",
        };
        eprintln!(
            "baton: moved {} landed task(s) off the board to {} ({since}); `baton leader \
             status --all` lists them",
            report.archived.len(),
            report.place
        );
    }
}
