//! The team's judge: before the merge queue lands a done task, the judge reads its branch's
//! diff against the task's description and acceptance, and approves it or asks for changes.
//! Changes asked for are a round of the task's review (its line comments and a summary), which
//! sends the task back to its worker on its branch, as the lead's "request changes" does; the
//! merge queue's bound on returns leaves it for the lead after that. The judge never changes
//! the work and never merges: it runs on the trial merge's checkout, read-only, without a
//! network, and the queue and the project's check still decide the landing.
//!
//! An agent judge (Claude Code, Codex, …) is [`crate::landing::judge_agent`]'s. An `exec` judge
//! is a command given the task in `BATON_TASK_*` variables (its acceptance in
//! `BATON_TASK_ACCEPTANCE`) and the diff on its stdin: exit 0 approves, anything else asks for
//! changes, and what it printed is its word: a line `FILE:LINE: TEXT` on a line the diff shows
//! is a comment on that line, the other lines the round's summary.

use std::time::Duration;

use baton_core::ErrorKind;
use baton_core::review::ReviewSettings;
use baton_git::BranchDiff;

use crate::error::{Result, TeamError};
use crate::exec::TaskEnv;
use crate::landing::check::{Writes, start_on_checkout};

/// The most of a diff a judge is given (its start).
const MAX_DIFF: usize = 1024 * 1024;

pub use crate::roles::{Judge, JudgeBy};

/// What a judge said of one commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Word {
    pub approved: bool,
    /// Comments on lines the diff shows: (file, line, text).
    pub comments: Vec<(String, u32, String)>,
    /// The rest of what it said.
    pub summary: String,
    /// All it said, for the record.
    pub said: String,
}

/// The diff as one patch, cut to [`MAX_DIFF`].
pub(crate) fn patch_of(diff: &BranchDiff) -> String {
    let mut patch = String::new();
    for file in &diff.files {
        patch.push_str(&file.patch);
        if !patch.ends_with('\n') {
            patch.push('\n');
        }
    }
    baton_core::text::prefix(&patch, MAX_DIFF).to_string()
}

/// Runs the judge's `command` on the task `env` names (in the checkout it gives), `diff` on its
/// stdin, within the check's time limit; its word.
pub(crate) fn run_judge(
    command: &str,
    settings: &ReviewSettings,
    env: &TaskEnv<'_>,
    diff: &BranchDiff,
) -> Result<Word> {
    let (approved, said) = run_judge_command(command, settings, env, patch_of(diff).into_bytes())?;
    Ok(word_of(approved, &said, diff))
}

/// Runs the judge's `command` on what `env` names, read-only and without a network, `input` on
/// its stdin, within the check's time limit: whether it exited 0, and what it printed.
pub(crate) fn run_judge_command(
    command: &str,
    settings: &ReviewSettings,
    env: &TaskEnv<'_>,
    input: Vec<u8>,
) -> Result<(bool, String)> {
    // The sandbox lives until the judge has ended.
    let (running, _sandbox) = start_on_checkout(command, settings, env, Writes::Nothing, input)?;
    let limit = Duration::from_secs_f64(settings.check_timeout_minutes * 60.0);
    let status = match running.wait_timeout(limit) {
        Some(status) => status,
        None => {
            let _ = running.stop(Duration::from_secs(5));
            return Err(TeamError::new(
                ErrorKind::Timeout,
                format!(
                    "the judge `{command}` did not finish within {} minutes \
                     (check_timeout_minutes in review.toml)",
                    settings.check_timeout_minutes
                ),
            ));
        }
    };
    let status = status.map_err(|e| {
        TeamError::new(
            ErrorKind::Io,
            format!("the judge could not be waited for: {e}"),
        )
    })?;
    let ended = running.finish();
    Ok((
        status.success(),
        format!("{}{}", ended.stdout, ended.stderr),
    ))
}

/// A judge's output read as its word: line comments where the diff shows the line, the rest
/// its summary.
pub(crate) fn word_of(approved: bool, said: &str, diff: &BranchDiff) -> Word {
    let mut comments = Vec::new();
    let mut summary = Vec::new();
    for line in said.lines() {
        match line_comment(line, diff) {
            Some(comment) if !approved => comments.push(comment),
            _ if !line.trim().is_empty() => summary.push(line.trim_end()),
            _ => {}
        }
    }
    Word {
        approved,
        comments,
        summary: summary.join("\n"),
        said: said.trim().to_string(),
    }
}

/// `FILE:LINE: TEXT` on a line of the diff's new side.
fn line_comment(line: &str, diff: &BranchDiff) -> Option<(String, u32, String)> {
    let (file, rest) = line.split_once(':')?;
    let (number, text) = rest.split_once(':')?;
    let number: u32 = number.trim().parse().ok()?;
    let text = text.trim();
    let shown = diff
        .files
        .iter()
        .any(|f| f.path == file.trim() && f.shows_line(number, false));
    (shown && !text.is_empty()).then(|| (file.trim().to_string(), number, text.to_string()))
}

/// A branch's diff of one file, `patch` (for tests of what reads a diff).
#[cfg(test)]
pub(crate) fn diff_of_one_file(patch: &str) -> BranchDiff {
    use baton_git::{FileChangeKind, FileDiff};
    BranchDiff {
        branch: "baton/t1".into(),
        base: "main".into(),
        head: "abc".into(),
        merge_base: "def".into(),
        merged: false,
        files: vec![FileDiff {
            path: "src/lib.rs".into(),
            old_path: None,
            kind: FileChangeKind::Modified,
            additions: patch
                .lines()
                .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
                .count() as u64,
            deletions: 0,
            binary: false,
            patch: patch.into(),
        }],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diff() -> BranchDiff {
        diff_of_one_file(
            "diff --git a/src/lib.rs b/src/lib.rs\n--- a/src/lib.rs\n+++ b/src/lib.rs\n\
                        @@ -10,2 +10,4 @@\n fn a() {}\n+fn b() {}\n+fn c() {}\n fn d() {}\n",
        )
    }

    /// What a judge printed: a comment on a line the diff shows is that line's; one on a
    /// line it does not show, or in another shape, stays in the summary.
    #[test]
    fn a_judges_line_comments_are_kept_on_the_lines_the_diff_shows() {
        let said = "src/lib.rs:11: b needs a test\nsrc/lib.rs:99: not in the diff\n\n\
                    Overall: close, but untested.\nsrc/lib.rs:x: not a line";
        let word = word_of(false, said, &diff());
        assert!(!word.approved);
        assert_eq!(
            word.comments,
            [("src/lib.rs".to_string(), 11, "b needs a test".to_string())]
        );
        assert_eq!(
            word.summary,
            "src/lib.rs:99: not in the diff\nOverall: close, but untested.\nsrc/lib.rs:x: not a line"
        );
        assert_eq!(word.said, said.trim());
    }

    #[test]
    fn an_approval_makes_no_comments() {
        let word = word_of(true, "src/lib.rs:11: fine", &diff());
        assert!(word.approved && word.comments.is_empty());
        assert_eq!(word.summary, "src/lib.rs:11: fine");
    }

    #[test]
    fn the_judge_is_given_every_files_patch() {
        let patch = patch_of(&diff());
        assert!(patch.starts_with("diff --git a/src/lib.rs"), "{patch}");
        assert!(patch.ends_with("fn d() {}\n"), "{patch}");
    }
}
