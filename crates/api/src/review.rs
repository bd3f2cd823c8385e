//! Reviewing a task's work before it is merged (`baton review`): its branch's diff against the
//! lead's branch with the review's comments and check runs ([`TaskReview`]), a comment on one
//! line ([`CommentOnLine`]), and sending the open comments back ([`RequestChanges`]): the task
//! is reopened with them on the same branch, for the next worker (with a team, the next agent)
//! to carry on from its commits. The record is `baton_core::review`'s; the diff `baton-git`'s.

use baton_core::review::{
    CheckRun, NewComment, ReviewComment, ReviewRecord, ReviewRound, ReviewSettings, Side,
    review_settings_path,
};
use baton_core::{ErrorKind, LEAD, Reopen, Task, TaskStatus};
use baton_git::{BranchDiff, FileChangeKind, Worktrees};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::operation::{Callers, Context, Operation};

/// A task's work, for review.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskReview {
    /// The task's id.
    pub task: String,
}

/// How a file changed.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    Added,
    Modified,
    Deleted,
    Renamed,
}

/// One file of the diff.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ReviewFile {
    pub path: String,
    /// Its path before, when it was renamed.
    pub old_path: Option<String>,
    pub change: ChangeKind,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub additions: u64,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub deletions: u64,
    pub binary: bool,
    /// Its part of the unified diff (from its `diff --git` line).
    pub patch: String,
}

/// A task's branch against the lead's, with what the review has said of it.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Review {
    pub task: Task,
    /// `baton/TASK-ID`.
    pub branch: String,
    /// The lead's branch it is compared with (and merged into).
    pub base: String,
    /// The branch's commit shown.
    pub head: String,
    /// Its commits are in the lead's branch already.
    pub merged: bool,
    pub files: Vec<ReviewFile>,
    /// Files its worktree changed and did not commit (not in the diff); none without a
    /// worktree.
    pub uncommitted: Vec<String>,
    pub comments: Vec<ReviewComment>,
    pub rounds: Vec<ReviewRound>,
    /// The project's check command (`.coordination/review.toml`), if it has one.
    pub check_command: Option<String>,
    /// The latest check run on `head`, if any.
    pub check: Option<CheckRun>,
    /// The merge queue's runs of the check on the branch merged with the lead's, oldest first
    /// (each on its trial merge's commit, not on `head`).
    pub queue_checks: Vec<CheckRun>,
    /// What the team's judge said of its branch, oldest first.
    pub judgements: Vec<baton_core::review::Judgement>,
}

/// The task `id`, or an unknown-task error.
pub(crate) fn task_named(cx: &Context, id: &str) -> Result<Task> {
    baton_core::names::validate_task_id(id)?;
    cx.tasks
        .task(id)?
        .ok_or_else(|| baton_core::StoreError::UnknownTask { id: id.to_string() }.into())
}

pub(crate) fn settings(cx: &Context) -> Result<ReviewSettings> {
    Ok(ReviewSettings::load(&review_settings_path(
        cx.local.root(),
    ))?)
}

fn file_of(file: baton_git::FileDiff) -> ReviewFile {
    ReviewFile {
        path: file.path,
        old_path: file.old_path,
        change: match file.kind {
            FileChangeKind::Added => ChangeKind::Added,
            FileChangeKind::Modified => ChangeKind::Modified,
            FileChangeKind::Deleted => ChangeKind::Deleted,
            FileChangeKind::Renamed => ChangeKind::Renamed,
        },
        additions: file.additions,
        deletions: file.deletions,
        binary: file.binary,
        patch: file.patch,
    }
}

impl Operation for TaskReview {
    const NAME: &'static str = "task_review";
    const DESCRIPTION: &'static str = "A task's work for review (leader): its branch's diff against the lead's branch (files, lines added and removed, each file's patch), what its worktree has not committed, the review's line comments and rounds of requested changes, and the project's check command with its latest run on the branch's commit.";
    const READ_ONLY: bool = true;
    const CALLERS: Callers = Callers::READERS;
    type Output = Review;
    fn run(self, cx: &Context) -> Result<Review> {
        let task = task_named(cx, &self.task)?;
        let worktrees = Worktrees::open(cx.local)?;
        let BranchDiff {
            branch,
            base,
            head,
            merged,
            files,
            ..
        } = worktrees.branch_diff(&task.id)?;
        let uncommitted = worktrees.uncommitted_in(&task.id)?.unwrap_or_default();
        let ReviewRecord {
            comments,
            rounds,
            checks,
            judgements,
        } = baton_core::review::review_of(cx.documents.as_ref(), &task.id)?;
        let check_command = settings(cx)?.check;
        let (queue_checks, own): (Vec<CheckRun>, Vec<CheckRun>) =
            checks.into_iter().partition(|c| c.merged_with.is_some());
        let check = own
            .into_iter()
            .rev()
            .find(|c| c.head == head && Some(&c.command) == check_command.as_ref());
        Ok(Review {
            task,
            branch,
            base,
            merged,
            files: files.into_iter().map(file_of).collect(),
            uncommitted,
            comments,
            rounds,
            check_command,
            check,
            queue_checks,
            head,
            judgements,
        })
    }
}

/// Comment on one line of a task's diff (sent to the task's worker with the next "request
/// changes").
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CommentOnLine {
    /// The task's id.
    pub task: String,
    /// A file of the task's diff, as the review names it.
    #[cfg_attr(feature = "cli", arg(long))]
    pub file: String,
    /// The line's number in the file (the branch's version; with side=old, the base's).
    #[cfg_attr(feature = "cli", arg(long))]
    pub line: u32,
    /// Which version the line number counts in: new (the branch's, default) or old (a
    /// removed line).
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, default_value = "new"))]
    pub side: Side,
    /// What to change there (one line).
    pub text: String,
}

impl Operation for CommentOnLine {
    const NAME: &'static str = "review_comment";
    const DESCRIPTION: &'static str = "Comment on one line of a task's diff (leader). Comments stay open until review_request_changes sends them to the task's worker.";
    const READ_ONLY: bool = false;
    const CALLERS: Callers = Callers::ANSWERS;
    type Output = ReviewComment;
    fn run(self, cx: &Context) -> Result<ReviewComment> {
        let task = task_named(cx, &self.task)?;
        let diff = Worktrees::open(cx.local)?.branch_diff(&task.id)?;
        let in_diff = diff
            .files
            .iter()
            .find(|f| f.path == self.file || f.old_path.as_deref() == Some(self.file.as_str()));
        if let Some(file) = in_diff {
            let old = self.side == baton_core::review::Side::Old;
            // Line 0 is refused with the text checks' own words.
            if self.line > 0 && !file.shows_line(self.line, old) {
                let shown: Vec<String> = file
                    .hunk_lines(old)
                    .iter()
                    .map(|(first, last)| format!("{first}–{last}"))
                    .collect();
                // The request is well formed; the line is not one of the diff's: bad input,
                // as line 0 is.
                return Err(Error::input(
                    "line",
                    format!(
                        "line {} of {} ({} side) is not in {}'s diff; its changes show lines {}",
                        self.line,
                        self.file,
                        if old { "old" } else { "new" },
                        task.id,
                        if shown.is_empty() {
                            "none".to_string()
                        } else {
                            shown.join(", ")
                        }
                    ),
                ));
            }
        } else {
            let files: Vec<&str> = diff.files.iter().map(|f| f.path.as_str()).collect();
            return Err(Error::input(
                "file",
                format!(
                    "{} is not a file of {}'s diff (its files: {})",
                    self.file,
                    task.id,
                    if files.is_empty() {
                        "none".to_string()
                    } else {
                        files.join(", ")
                    }
                ),
            ));
        }
        let new = NewComment {
            file: self.file,
            line: self.line,
            side: self.side,
            text: self.text,
            by: reviewer(cx),
            head: diff.head,
        };
        Ok(baton_core::review::comment(
            cx.documents.as_ref(),
            &task.id,
            new,
        )?)
    }
}

/// Who is reviewing: the agent an MCP server acts as, else the lead.
fn reviewer(cx: &Context) -> String {
    cx.caller.clone().unwrap_or_else(|| LEAD.to_string())
}

/// Send a done task back to its worker with the review's open comments.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RequestChanges {
    /// The task's id; it must be done.
    pub task: String,
    /// What to change overall, besides the line comments.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub summary: Option<String>,
    /// Make the task available to any worker at once, instead of holding it for the worker
    /// that did it (until its lease runs out).
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub anyone: bool,
}

/// The round sent, and the task as reopened.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ChangesRequested {
    pub round: ReviewRound,
    pub task: Task,
}

impl Operation for RequestChanges {
    const NAME: &'static str = "review_request_changes";
    const DESCRIPTION: &'static str = "Send a done task back for changes (leader): the review's open line comments (and a summary) become a round, added to the task's hints, and the task goes back to the worker that did it, on the same branch (its next claim takes it; anyone may once its lease runs out), or with anyone=true to any worker at once.";
    const READ_ONLY: bool = false;
    const CALLERS: Callers = Callers::ANSWERS;
    type Output = ChangesRequested;
    fn run(self, cx: &Context) -> Result<ChangesRequested> {
        let task = task_named(cx, &self.task)?;
        if task.status != TaskStatus::Done {
            return Err(Error::new(
                ErrorKind::IllegalTransition,
                format!(
                    "{} is {}; only a done task is sent back for changes",
                    task.id, task.status
                ),
            ));
        }
        let diff = Worktrees::open(cx.local)?.branch_diff(&task.id)?;
        if diff.merged && !diff.files.is_empty() {
            return Err(Error::new(
                ErrorKind::IllegalTransition,
                format!(
                    "{} is merged into {} already; add a new task for further changes",
                    diff.branch, diff.base
                ),
            ));
        }
        let docs = cx.documents.as_ref();
        let record = baton_core::review::review_of(docs, &task.id)?;
        let draft = baton_core::review::draft_round(&task.id, &record, self.summary.as_deref())?;
        // Reopened first: a task another lead reopened (or that changed) keeps its comments
        // open.
        let to = if self.anyone {
            Reopen::ToAnyone
        } else {
            Reopen::ToItsWorker
        };
        let task = cx.tasks.reopen(&task.id, &draft.text, to)?;
        let round =
            baton_core::review::record_round(docs, &task.id, &draft, &reviewer(cx), &diff.head)?;
        Ok(ChangesRequested { round, task })
    }
}
