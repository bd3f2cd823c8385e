//! The lead's review of a done task's branch: line comments, rounds of requested changes and
//! the project's check runs, kept as one document per task (`reviews/TASK.json`) beside the
//! tasks ([`DocumentStore`]), changed under its hold, so two leads commenting at once lose
//! neither comment, on one machine or several.
//!
//! A comment is open until a round of "request changes" sends it; the round's text (every open
//! comment, by file and line) is what the task is reopened with, so whoever works it next, an
//! agent under a supervisor or a worker at a terminal, reads it with the task.
//!
//! The check command is the project's (`.coordination/review.toml`, written by the user); it
//! runs in the task's worktree (`baton-api` runs it), and its outcome is recorded here against
//! the branch commit it ran on, so a later commit needs a new run.

use serde::{Deserialize, Serialize};

use crate::documents::DocumentStore;
use crate::error::{Result, StoreError};
use crate::names::validate_task_id;
use crate::time::Timestamp;

/// The folder of review documents.
pub const REVIEWS: &str = "reviews";
/// The longest comment kept (bytes).
pub const MAX_COMMENT: usize = 8 * 1024;
/// How much of a check's output is kept: its last bytes.
pub const MAX_CHECK_OUTPUT: usize = 16 * 1024;

mod settings;
pub use settings::*;

/// Which side of the diff a comment's line number counts on.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// The branch's version of the file (added and unchanged lines).
    #[default]
    New,
    /// The base's version (removed lines).
    Old,
}

impl std::str::FromStr for Side {
    type Err = String;
    fn from_str(text: &str) -> std::result::Result<Side, String> {
        match text {
            "new" => Ok(Side::New),
            "old" => Ok(Side::Old),
            _ => Err(format!("{text:?} is not a side: new or old")),
        }
    }
}

/// A comment on one line of a task's diff.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ReviewComment {
    /// 1, 2, … per task.
    pub id: u32,
    /// The file, as the diff names it.
    pub file: String,
    pub line: u32,
    pub side: Side,
    pub text: String,
    pub by: String,
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub at: Timestamp,
    /// The branch commit it was made on.
    pub head: String,
    /// The round of requested changes that sent it; none while it is open.
    pub round: Option<u32>,
}

/// One "request changes": what was sent back, when, on which commit.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ReviewRound {
    pub round: u32,
    pub by: String,
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub at: Timestamp,
    pub head: String,
    /// The text the task was reopened with.
    pub text: String,
}

/// One run of the project's check command on a task's branch.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CheckRun {
    pub command: String,
    /// The branch commit it ran on.
    pub head: String,
    pub passed: bool,
    /// Its exit code; none when it was killed (a timeout says so in `output`).
    pub exit_code: Option<i32>,
    /// The last bytes of what it printed (stdout and stderr together).
    pub output: String,
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub started_at: Timestamp,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub duration_ms: u64,
    /// The lead's branch the branch was merged with for it, when the merge queue ran it on its
    /// trial merge (`head` is then that merge's commit); none on the branch itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub merged_with: Option<String>,
}

/// A judge's word on one commit of a task's branch, before the merge queue landed it: approved,
/// or changes requested (sent as a round of the review, with its line comments).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Judgement {
    /// The judge (an agent name).
    pub by: String,
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub at: Timestamp,
    /// The branch commit judged.
    pub head: String,
    pub approved: bool,
    /// Why, in the judge's words (the end of what it said).
    pub comment: String,
}

/// A task's review record.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ReviewRecord {
    pub comments: Vec<ReviewComment>,
    pub rounds: Vec<ReviewRound>,
    /// The latest runs, oldest first (at most [`KEPT_CHECKS`]).
    pub checks: Vec<CheckRun>,
    /// What the team's judge said, oldest first (at most [`KEPT_CHECKS`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub judgements: Vec<Judgement>,
}

/// How many check runs a task's record keeps.
pub const KEPT_CHECKS: usize = 10;

impl ReviewRecord {
    /// Comments no round has sent yet.
    pub fn open_comments(&self) -> impl Iterator<Item = &ReviewComment> {
        self.comments.iter().filter(|c| c.round.is_none())
    }

    /// The latest run of check `command` on commit `head`.
    pub fn check_on(&self, head: &str, command: &str) -> Option<&CheckRun> {
        self.checks
            .iter()
            .rev()
            .find(|c| c.head == head && c.command == command)
    }
}

/// A comment to add.
#[derive(Debug, Clone)]
pub struct NewComment {
    pub file: String,
    pub line: u32,
    pub side: Side,
    pub text: String,
    pub by: String,
    pub head: String,
}

fn document(task: &str) -> Result<String> {
    validate_task_id(task)?;
    Ok(format!("{REVIEWS}/{task}.json"))
}

fn parse(name: &str, value: serde_json::Value) -> Result<ReviewRecord> {
    serde_json::from_value(value).map_err(|e| {
        StoreError::invalid(
            "review",
            format!("{name} is not what Baton wrote ({e}); fix or remove it"),
        )
    })
}

/// Task `task`'s review record (empty when nothing was recorded).
pub fn review_of(docs: &dyn DocumentStore, task: &str) -> Result<ReviewRecord> {
    let name = document(task)?;
    match docs.read_document(&name)? {
        Some(value) => parse(&name, value),
        None => Ok(ReviewRecord::default()),
    }
}

/// Changes task `task`'s record under its hold with `change`, which returns what to give back.
fn change<T>(
    docs: &dyn DocumentStore,
    task: &str,
    change: &mut dyn FnMut(&mut ReviewRecord, Timestamp) -> Result<T>,
) -> Result<T> {
    let name = document(task)?;
    let mut out = None;
    docs.change_document(&name, &mut |current, now| {
        let mut record = match current {
            Some(value) => parse(&name, value)?,
            None => ReviewRecord::default(),
        };
        out = Some(change(&mut record, now)?);
        Ok(Some(
            serde_json::to_value(&record).expect("review records serialise"),
        ))
    })?;
    Ok(out.expect("the change ran"))
}

/// Adds a comment to task `task`'s review; returns it.
pub fn comment(docs: &dyn DocumentStore, task: &str, new: NewComment) -> Result<ReviewComment> {
    crate::text::check_text("comment", &new.text, MAX_COMMENT, true)?;
    crate::text::check_paths(std::slice::from_ref(&new.file))?;
    let leaves = new.file.starts_with('/') || new.file.split('/').any(|part| part == "..");
    if leaves {
        return Err(StoreError::invalid(
            "file",
            "a file of the diff, relative to the project",
        ));
    }
    if new.line == 0 {
        return Err(StoreError::invalid("line", "lines are counted from 1"));
    }
    change(docs, task, &mut |record, now| {
        let comment = ReviewComment {
            id: record.comments.iter().map(|c| c.id).max().unwrap_or(0) + 1,
            file: new.file.clone(),
            line: new.line,
            side: new.side,
            text: new.text.trim().to_string(),
            by: new.by.clone(),
            at: now,
            head: new.head.clone(),
            round: None,
        };
        record.comments.push(comment.clone());
        Ok(comment)
    })
}

/// A round of requested changes, before it is sent: its text and the comments it sends.
#[derive(Debug, Clone, PartialEq)]
pub struct Draft {
    pub round: u32,
    pub text: String,
    pub comments: Vec<u32>,
}

/// The round `record`'s open comments (and `summary`, if any) make; refused when there is
/// nothing to send. The caller reopens the task with its text, then [`record_round`]s it, so a
/// task that could not be reopened leaves its comments open.
pub fn draft_round(task: &str, record: &ReviewRecord, summary: Option<&str>) -> Result<Draft> {
    if let Some(summary) = summary {
        crate::text::check_text("summary", summary, MAX_COMMENT, false)?;
    }
    let summary = summary.map(str::trim).filter(|s| !s.is_empty());
    let open: Vec<&ReviewComment> = record.open_comments().collect();
    if open.is_empty() && summary.is_none() {
        return Err(StoreError::invalid(
            "comments",
            format!("{task} has no open comment: comment on a line or say what to change"),
        ));
    }
    let round = record.rounds.len() as u32 + 1;
    Ok(Draft {
        round,
        text: round_text(round, summary, &open),
        comments: open.iter().map(|c| c.id).collect(),
    })
}

/// Records `draft` as sent by `by` on commit `head`: its comments are no longer open.
pub fn record_round(
    docs: &dyn DocumentStore,
    task: &str,
    draft: &Draft,
    by: &str,
    head: &str,
) -> Result<ReviewRound> {
    change(docs, task, &mut |record, now| {
        for comment in &mut record.comments {
            if draft.comments.contains(&comment.id) {
                comment.round = Some(draft.round);
            }
        }
        let sent = ReviewRound {
            round: draft.round,
            by: by.to_string(),
            at: now,
            head: head.to_string(),
            text: draft.text.clone(),
        };
        record.rounds.push(sent.clone());
        Ok(sent)
    })
}

/// What a round asks, as the task is reopened with it.
fn round_text(round: u32, summary: Option<&str>, open: &[&ReviewComment]) -> String {
    let mut text = format!("Changes requested in review (round {round}):");
    if let Some(summary) = summary {
        text.push_str(&format!("\n{summary}"));
    }
    for comment in open {
        let side = match comment.side {
            Side::New => "",
            Side::Old => " (removed line)",
        };
        text.push_str(&format!(
            "\n- {}:{}{side}: {}",
            comment.file, comment.line, comment.text
        ));
    }
    text.push_str("\nWork on the same branch; your earlier commits are there.");
    text
}

/// Records a check run on task `task`.
pub fn record_check(docs: &dyn DocumentStore, task: &str, run: &CheckRun) -> Result<()> {
    change(docs, task, &mut |record, _| {
        record.checks.push(run.clone());
        let extra = record.checks.len().saturating_sub(KEPT_CHECKS);
        record.checks.drain(..extra);
        Ok(())
    })
}

/// Records a judge's word on task `task` (its time is the store's).
pub fn record_judgement(docs: &dyn DocumentStore, task: &str, said: &Judgement) -> Result<()> {
    change(docs, task, &mut |record, now| {
        let mut said = said.clone();
        said.at = now;
        said.comment = crate::text::suffix(said.comment.trim(), MAX_COMMENT).to_string();
        record.judgements.push(said);
        let extra = record.judgements.len().saturating_sub(KEPT_CHECKS);
        record.judgements.drain(..extra);
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::MemoryDocuments;

    fn note(text: &str, line: u32) -> NewComment {
        NewComment {
            file: "src/lib.rs".into(),
            line,
            side: Side::New,
            text: text.into(),
            by: "lead".into(),
            head: "abc".into(),
        }
    }

    /// What a lead does: draft from the record, then record the round.
    fn send(docs: &MemoryDocuments, summary: Option<&str>, head: &str) -> Result<ReviewRound> {
        let record = review_of(docs, "task-1")?;
        let draft = draft_round("task-1", &record, summary)?;
        record_round(docs, "task-1", &draft, "lead", head)
    }

    #[test]
    fn a_round_sends_the_open_comments_once_and_numbers_itself() {
        let docs = MemoryDocuments::default();
        comment(&docs, "task-1", note("Handle the empty case", 12)).unwrap();
        comment(&docs, "task-1", note("Name this better", 3)).unwrap();
        let round = send(&docs, Some("Close."), "abc").unwrap();
        assert_eq!(round.round, 1);
        assert!(
            round
                .text
                .contains("- src/lib.rs:12: Handle the empty case")
        );
        assert!(round.text.contains("Close."));
        let err = send(&docs, None, "abc").unwrap_err();
        assert!(err.to_string().contains("no open comment"), "{err}");
        comment(&docs, "task-1", note("And this", 4)).unwrap();
        let second = send(&docs, None, "def").unwrap();
        assert_eq!(second.round, 2);
        assert!(!second.text.contains("Handle the empty case"));
        let record = review_of(&docs, "task-1").unwrap();
        assert_eq!(record.comments.len(), 3);
        assert_eq!(record.comments[2].id, 3);
        assert!(record.open_comments().next().is_none());
    }

    #[test]
    fn a_comment_made_after_the_draft_stays_open() {
        let docs = MemoryDocuments::default();
        comment(&docs, "task-1", note("First", 1)).unwrap();
        let draft = draft_round("task-1", &review_of(&docs, "task-1").unwrap(), None).unwrap();
        comment(&docs, "task-1", note("Late", 2)).unwrap();
        record_round(&docs, "task-1", &draft, "lead", "abc").unwrap();
        let open: Vec<u32> = review_of(&docs, "task-1")
            .unwrap()
            .open_comments()
            .map(|c| c.id)
            .collect();
        assert_eq!(open, [2]);
    }

    #[test]
    fn bad_comments_and_hostile_names_are_refused() {
        let docs = MemoryDocuments::default();
        assert!(comment(&docs, "task-1", note("", 1)).is_err());
        assert!(comment(&docs, "task-1", note("x", 0)).is_err());
        let mut escape = note("x", 1);
        escape.file = "../etc/passwd".into();
        assert!(comment(&docs, "task-1", escape).is_err());
        assert!(review_of(&docs, "../x").is_err());
        assert_eq!(review_of(&docs, "task-9").unwrap(), ReviewRecord::default());
    }

    #[test]
    fn only_the_latest_checks_are_kept_and_found_by_commit() {
        let docs = MemoryDocuments::default();
        for i in 0..12 {
            let run = CheckRun {
                command: "true".into(),
                head: format!("c{i}"),
                passed: i % 2 == 0,
                exit_code: Some(0),
                output: String::new(),
                started_at: Timestamp::now(),
                duration_ms: 1,
                merged_with: None,
            };
            record_check(&docs, "task-1", &run).unwrap();
        }
        let record = review_of(&docs, "task-1").unwrap();
        assert_eq!(record.checks.len(), KEPT_CHECKS);
        assert_eq!(
            record.check_on("c11", "true").map(|c| c.passed),
            Some(false)
        );
        assert!(record.check_on("c11", "false").is_none());
        assert!(record.check_on("c0", "true").is_none());
    }
}
