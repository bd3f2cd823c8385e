//! Landed work leaves the live board. A store that rewrites its board whole for every change
//! (the folder's `tasks.json`) pays for every task the project ever had; most of them landed
//! long ago. Done tasks that have landed, and cancelled ones, move to an archive once nothing
//! live needs them: an append-only file per month, one task per line in the board's own
//! schema plus `archived_at` (so `jq` reads it as it reads `tasks.json`).
//!
//! This module decides what may go ([`archivable`]) and how a task is written and read back
//! ([`ArchivedTask`]); the folder store keeps the files. A task stays on the board while a
//! live task depends on it (the source design's tools, reading `tasks.json`, must see every
//! dependency of what they may claim) or is of its plan, and until it has been quiet for the
//! period asked.

use std::collections::HashSet;
use std::time::Duration;

use serde_json::Value;

use crate::error::{Result, StoreError};
use crate::model::{Task, TaskFile, TaskStatus};
use crate::time::Timestamp;

/// The folder of the archive, in `.coordination/`.
pub const ARCHIVE: &str = "archive";

/// How long a landed task stays on the board before it is archived without being asked
/// (`baton leader archive` archives at once): long enough for the lead to look it over.
pub const QUIET_PERIOD: Duration = Duration::from_secs(60 * 60);

/// The key an archived task's line adds to the board's schema.
const ARCHIVED_AT: &str = "archived_at";

/// What an archive run moved, or would move.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(
    Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct ArchiveReport {
    /// The tasks archived (or, with a dry run, that would be).
    pub archived: Vec<String>,
    /// Tasks still on the board after it.
    pub live: usize,
    /// Where the archive is, or why the store keeps none.
    pub place: String,
}

/// The tasks of `file` that may leave the board at `now`: done (and landed: `landed` says so
/// of a done task, from its branch) or cancelled, quiet for `quiet` since they finished, that
/// no task staying on the board depends on or is of the plan of.
pub fn archivable(
    file: &TaskFile,
    now: Timestamp,
    quiet: Duration,
    landed: &dyn Fn(&Task) -> bool,
) -> Vec<String> {
    let finished = |t: &Task| match t.status {
        TaskStatus::Cancelled => true,
        TaskStatus::Done => landed(t),
        _ => false,
    };
    let quiet_since = |t: &Task| {
        let at = t.completed_at.or(t.claimed_at).or(t.created_at);
        at.is_none_or(|at| at.age(now) >= quiet)
    };
    let mut candidates: HashSet<&str> = file
        .tasks
        .iter()
        .filter(|t| finished(t) && quiet_since(t))
        .map(|t| t.id.as_str())
        .collect();
    // What stays needs its plan on the board, and its dependencies while it may still be
    // worked; and a plan's tasks stay
    // together while the plan does (its planner, its approval and its limit read its whole
    // tree from the board). Each round keeps more, until nothing changes: plans nest two deep
    // and chains are short, so this settles in a few rounds.
    let on_board: HashSet<&str> = file.tasks.iter().map(|t| t.id.as_str()).collect();
    loop {
        let staying = |t: &&Task| !candidates.contains(t.id.as_str());
        // A task that may still be worked needs its dependencies (a done one does not), and
        // every task its plan.
        let needed: HashSet<&str> = file
            .tasks
            .iter()
            .filter(staying)
            .flat_map(|t| {
                let finished = matches!(t.status, TaskStatus::Done | TaskStatus::Cancelled);
                let deps = if finished {
                    &[][..]
                } else {
                    &t.dependencies[..]
                };
                deps.iter().chain(t.plan.iter())
            })
            .map(String::as_str)
            .filter(|id| candidates.contains(id))
            .collect();
        let of_staying_plan: Vec<&str> = file
            .tasks
            .iter()
            .filter(|t| candidates.contains(t.id.as_str()))
            .filter(|t| {
                t.plan
                    .as_deref()
                    .is_some_and(|plan| on_board.contains(plan) && !candidates.contains(plan))
            })
            .map(|t| t.id.as_str())
            .collect();
        if needed.is_empty() && of_staying_plan.is_empty() {
            break;
        }
        for id in needed.into_iter().chain(of_staying_plan) {
            candidates.remove(id);
        }
    }
    file.tasks
        .iter()
        .map(|t| t.id.as_str())
        .filter(|id| candidates.contains(id))
        .map(str::to_string)
        .collect()
}

/// A task as the archive keeps it: the board's task, and when it left the board.
#[derive(Debug, Clone)]
pub struct ArchivedTask {
    pub task: Task,
    pub archived_at: Timestamp,
}

impl ArchivedTask {
    /// The month file it belongs in (`2026-11`): the month it finished.
    pub fn month(&self) -> String {
        let at = self.task.completed_at.unwrap_or(self.archived_at);
        at.to_string().chars().take(7).collect()
    }

    /// Its line in the month's file (no newline).
    pub fn line(&self) -> Result<String> {
        let mut value = serde_json::to_value(&self.task).map_err(|e| invalid(e.to_string()))?;
        if let Value::Object(map) = &mut value {
            map.insert(
                ARCHIVED_AT.into(),
                Value::String(self.archived_at.to_string()),
            );
        }
        serde_json::to_string(&value).map_err(|e| invalid(e.to_string()))
    }

    /// A line of a month's file back; `where_` names it in the error.
    pub fn parse(line: &str, where_: &str) -> Result<ArchivedTask> {
        let corrupt =
            |reason: String| StoreError::invalid("archive", format!("{where_}: {reason}"));
        let mut task: Task = serde_json::from_str(line).map_err(|e| corrupt(e.to_string()))?;
        let archived_at = task
            .extra
            .remove(ARCHIVED_AT)
            .and_then(|v| v.as_str().and_then(Timestamp::parse))
            .ok_or_else(|| corrupt(format!("no {ARCHIVED_AT}")))?;
        Ok(ArchivedTask { task, archived_at })
    }
}

fn invalid(reason: String) -> StoreError {
    StoreError::invalid("archive", reason)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::task;

    fn at(text: &str) -> Option<Timestamp> {
        Timestamp::parse(text)
    }

    fn board() -> TaskFile {
        let mut tasks = vec![
            task("old", TaskStatus::Done, &[]),
            task("needed", TaskStatus::Done, &[]),
            task("live", TaskStatus::Available, &["needed"]),
            task("gone", TaskStatus::Cancelled, &[]),
            task("recent", TaskStatus::Done, &[]),
            task("unlanded", TaskStatus::Done, &[]),
            task("failed", TaskStatus::Failed, &[]),
            task("chain", TaskStatus::Done, &["old"]),
        ];
        for t in &mut tasks {
            t.completed_at = at("2026-11-01T10:00:00Z");
        }
        tasks[4].completed_at = at("2026-11-28T09:30:00Z");
        crate::testing::file_with(tasks)
    }

    #[test]
    fn landed_quiet_work_goes_unless_something_live_needs_it() {
        let file = board();
        let now = Timestamp::parse("2026-11-28T10:00:00Z").unwrap();
        let landed = |t: &Task| t.id != "unlanded";
        let gone = archivable(&file, now, QUIET_PERIOD, &landed);
        // needed: a live task depends on it; recent: done half an hour ago; unlanded: its
        // branch is not in; failed: the lead's to decide. old goes with chain, done too.
        assert_eq!(gone, ["old", "gone", "chain"]);
        let at_once = archivable(&file, now, Duration::ZERO, &landed);
        assert_eq!(at_once, ["old", "gone", "recent", "chain"]);
    }

    #[test]
    fn a_plans_done_tasks_stay_while_the_plan_does_and_go_with_it() {
        let mut plan = task("plan-1", TaskStatus::Claimed, &[]);
        plan.kind = crate::model::TaskKind::Plan;
        let mut part = task("a", TaskStatus::Done, &[]);
        part.plan = Some("plan-1".into());
        let file = crate::testing::file_with(vec![plan.clone(), part.clone()]);
        let all = |_: &Task| true;
        assert!(archivable(&file, Timestamp::now(), Duration::ZERO, &all).is_empty());
        // The plan task is done after each planning session while its tasks are worked: a
        // task still worked keeps the plan, and so its done siblings, on the board.
        plan.status = TaskStatus::Done;
        let mut worked = task("b", TaskStatus::InProgress, &[]);
        worked.plan = Some("plan-1".into());
        let file = crate::testing::file_with(vec![plan.clone(), part.clone(), worked]);
        assert!(archivable(&file, Timestamp::now(), Duration::ZERO, &all).is_empty());
        let file = crate::testing::file_with(vec![plan, part]);
        assert_eq!(
            archivable(&file, Timestamp::now(), Duration::ZERO, &all),
            ["plan-1", "a"]
        );
    }

    #[test]
    fn a_plan_stays_while_a_task_of_it_does() {
        let mut plan = task("plan-1", TaskStatus::Done, &[]);
        plan.kind = crate::model::TaskKind::Plan;
        let mut part = task("a", TaskStatus::InProgress, &[]);
        part.plan = Some("plan-1".into());
        let file = crate::testing::file_with(vec![plan, part]);
        assert!(archivable(&file, Timestamp::now(), Duration::ZERO, &|_| true).is_empty());
    }

    #[test]
    fn a_line_is_the_boards_task_with_when_it_left() {
        let mut done = task("a", TaskStatus::Done, &[]);
        done.completed_at = at("2026-10-31T23:00:00Z");
        let archived = ArchivedTask {
            task: done,
            archived_at: Timestamp::parse("2026-11-28T10:00:00Z").unwrap(),
        };
        assert_eq!(archived.month(), "2026-10");
        let line = archived.line().unwrap();
        assert!(!line.contains('\n'), "{line}");
        assert!(
            line.contains("\"archived_at\":\"2026-11-28T10:00:00"),
            "{line}"
        );
        let back = ArchivedTask::parse(&line, "x").unwrap();
        assert_eq!(back.archived_at, archived.archived_at);
        assert_eq!(
            serde_json::to_value(&back.task).unwrap(),
            serde_json::to_value(&archived.task).unwrap()
        );
        let err = ArchivedTask::parse("{\"id\": \"a\"", "2026-10.jsonl line 3").unwrap_err();
        assert!(err.to_string().contains("2026-10.jsonl line 3"), "{err}");
    }
}
