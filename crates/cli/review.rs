//! `baton review`: a done task's diff with the review's comments under the lines they are on,
//! commenting on a line, sending the comments back, running the project's check. Each is one
//! catalogue operation (`task_review`, `review_comment`, `review_request_changes`,
//! `review_check`); this only reads words and prints.

use std::fmt::Write;

use baton_api::check::RunCheck;
use baton_api::review::{CommentOnLine, RequestChanges, Review, TaskReview};
use baton_api::{Error, OpenProject};
use baton_core::review::{CheckRun, ReviewComment, Side};
use baton_live::WatchMode;
use clap::{Args, Subcommand};

use crate::context::{operate, operate_paged};

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct ReviewArgs {
    /// The task whose diff to show (its branch against the lead's, with the comments).
    #[arg(required = true)]
    pub task: Option<String>,
    #[command(subcommand)]
    pub command: Option<ReviewCommand>,
}

#[derive(Debug, Subcommand)]
pub enum ReviewCommand {
    /// Comment on one line of a task's diff: `baton review comment task-3 --file src/a.rs
    /// --line 12 "handle the empty list"`. Sent with the next request-changes.
    Comment(CommentOnLine),
    /// Send a done task back with the open comments (and --summary): it goes back to the worker
    /// that did it (or, with --anyone, to any worker), on the same branch, the comments in
    /// its hints.
    RequestChanges(RequestChanges),
    /// Run the project's check command (.coordination/review.toml) in the task's worktree.
    /// Exit code 9 when it fails.
    Check(RunCheck),
    /// The done tasks whose branch is not in your branch yet, in the order they were done:
    /// what waits for your review (the desktop's Review count).
    Waiting(baton_api::worktrees::ReviewWaiting),
}

pub fn review(
    project: &OpenProject,
    args: ReviewArgs,
    mode: WatchMode,
    json: bool,
) -> Result<u8, Error> {
    match (args.command, args.task) {
        (Some(ReviewCommand::Comment(request)), _) => operate(project, mode, json, request, |c| {
            format!("Comment {} on {}:{}: {}", c.id, c.file, c.line, c.text)
        }),
        (Some(ReviewCommand::RequestChanges(request)), _) => {
            operate(project, mode, json, request, |sent| {
                // Held for the worker that did it (the default), or for anyone.
                let whose = match (&sent.task.claimed_by, sent.task.sent_back) {
                    (Some(worker), true) => format!("goes back to {worker}"),
                    _ => "is available again".to_string(),
                };
                format!(
                    "{} {whose} (round {} sent):\n{}",
                    sent.task.id, sent.round.round, sent.round.text
                )
            })
        }
        (Some(ReviewCommand::Check(request)), _) => {
            let mut passed = true;
            operate(project, mode, json, request, |out| {
                passed = out.check.passed;
                check_text(&out.check, true)
            })?;
            Ok(if passed {
                0
            } else {
                baton_api::exit::CHECK_FAILED.code
            })
        }
        (Some(ReviewCommand::Waiting(request)), _) => {
            operate(project, mode, json, request, |waiting| {
                let waiting = &waiting.tasks;
                if waiting.is_empty() {
                    return "Nothing waits for review: every done task's branch is in yours."
                        .to_string();
                }
                let mut text = format!("{} task(s) wait for review:", waiting.len());
                for w in waiting {
                    let _ = write!(
                        text,
                        "\n  {}  {} ({} commit(s) on {})",
                        w.task,
                        crate::render::line(&w.description, 60),
                        w.commits,
                        w.branch
                    );
                }
                text
            })
        }
        (None, Some(task)) => operate_paged(project, mode, json, TaskReview { task }, render),
        (None, None) => Err(Error::invalid_arguments("name the task to review")),
    }
}

/// One check run, with its output's end when `output`.
fn check_text(run: &CheckRun, output: bool) -> String {
    let short = run.head.get(..12).unwrap_or(&run.head);
    let verdict = match (run.passed, run.exit_code) {
        (true, _) => "passed".to_string(),
        (false, Some(code)) => format!("failed (exit code {code})"),
        (false, None) => "failed (stopped)".to_string(),
    };
    let mut text = format!(
        "Check `{}` on {short}: {verdict} in {:.1} s",
        run.command,
        run.duration_ms as f64 / 1000.0
    );
    if output && !run.output.trim().is_empty() {
        let lines: Vec<&str> = run.output.trim_end().lines().collect();
        let from = lines.len().saturating_sub(20);
        for line in &lines[from..] {
            let _ = write!(text, "\n  | {line}");
        }
    }
    text
}

/// The review: a header, each file's patch with its comments under their lines.
pub fn render(review: &Review) -> String {
    let mut out = String::new();
    let short = review.head.get(..12).unwrap_or(&review.head);
    let _ = writeln!(
        out,
        "{} ({}): {} against {} at {short}{}",
        review.task.id,
        review.task.status,
        review.branch,
        review.base,
        if review.merged { ", merged" } else { "" }
    );
    let _ = writeln!(out, "{}", review.task.description.trim());
    if let Some(acceptance) = &review.task.acceptance {
        let _ = writeln!(out, "Done when: {}", acceptance.trim());
    }
    match (&review.check_command, &review.check) {
        (_, Some(run)) => {
            let _ = writeln!(out, "{}", check_text(run, !run.passed));
        }
        (Some(command), None) if review.queue_checks.is_empty() => {
            let _ = writeln!(out, "Check `{command}`: not run on this commit yet");
        }
        (Some(command), None) => {
            let _ = writeln!(
                out,
                "Check `{command}`: not run on the branch itself; the merge queue's runs follow"
            );
        }
        (None, None) => {}
    }
    for run in &review.queue_checks {
        let with = run.merged_with.as_deref().unwrap_or("the lead's branch");
        let _ = writeln!(
            out,
            "Merge queue, merged with {with}: {}",
            check_text(run, false)
        );
    }
    for said in &review.judgements {
        let short = said.head.get(..12).unwrap_or(&said.head);
        let verdict = match said.approved {
            true => "approved",
            false => "asked for changes",
        };
        let _ = writeln!(out, "Judge {} {verdict} at {short}", said.by);
        for line in said.comment.lines().take(10) {
            let _ = writeln!(out, "  {}", crate::render::clean(line));
        }
    }
    if !review.uncommitted.is_empty() {
        let _ = writeln!(
            out,
            "Not committed in its worktree (not shown): {}",
            review.uncommitted.join(", ")
        );
    }
    if review.files.is_empty() {
        let _ = writeln!(out, "\nNo changes against {}.", review.base);
    }
    for file in &review.files {
        let _ = writeln!(
            out,
            "\n{} (+{} -{}{})",
            // A file name is the agent's: whatever it holds is shown, not acted on.
            baton_core::text::inert(&file.path),
            file.additions,
            file.deletions,
            if file.binary { ", binary" } else { "" }
        );
        let comments: Vec<&ReviewComment> = review
            .comments
            .iter()
            .filter(|c| c.file == file.path || file.old_path.as_deref() == Some(&c.file))
            .collect();
        annotate(&mut out, &baton_core::text::inert(&file.patch), &comments);
    }
    let open = review.comments.iter().filter(|c| c.round.is_none()).count();
    if open > 0 {
        let _ = writeln!(
            out,
            "\n{open} open comment{}: `baton review request-changes {}` sends them back",
            if open == 1 { "" } else { "s" },
            review.task.id
        );
    }
    out.trim_end().to_string()
}

/// Copies `patch` to `out`, with each comment after the line it is on.
fn annotate(out: &mut String, patch: &str, comments: &[&ReviewComment]) {
    let (mut old, mut new) = (0u32, 0u32);
    for line in patch.lines() {
        // The agent's text, cleaned (no control codes reach the lead's terminal) and coloured.
        let shown = baton_core::text::printable(line.as_bytes());
        let _ = writeln!(
            out,
            "{}",
            crate::style::paint(crate::style::diff_line(line), &shown)
        );
        let at = if let Some(hunk) = line.strip_prefix("@@ ") {
            (old, new) = hunk_start(hunk);
            None
        } else if line.starts_with('+') && !line.starts_with("+++") {
            new += 1;
            Some((Side::New, new))
        } else if line.starts_with('-') && !line.starts_with("---") {
            old += 1;
            Some((Side::Old, old))
        } else if line.starts_with(' ') {
            old += 1;
            new += 1;
            Some((Side::New, new))
        } else {
            None
        };
        let Some((side, number)) = at else { continue };
        for comment in comments
            .iter()
            .filter(|c| c.side == side && c.line == number)
        {
            let state = match comment.round {
                Some(round) => format!("sent in round {round}"),
                None => "open".to_string(),
            };
            let _ = writeln!(
                out,
                "    >> {} ({state}): {}",
                comment.by,
                baton_core::text::printable(comment.text.as_bytes())
            );
        }
    }
}

/// `-12,5 +14,6 @@ …`: the line before each side's first.
fn hunk_start(hunk: &str) -> (u32, u32) {
    let mut parts = hunk.split_whitespace();
    let start = |part: Option<&str>, sign: char| {
        part.and_then(|p| p.strip_prefix(sign))
            .and_then(|p| p.split(',').next())
            .and_then(|n| n.parse::<u32>().ok())
            .map_or(0, |n| n.saturating_sub(1))
    };
    let old = start(parts.next(), '-');
    let new = start(parts.next(), '+');
    (old, new)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_go_under_the_line_they_are_on() {
        let patch =
            "diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n";
        let at = |line, side, text: &str| ReviewComment {
            id: 1,
            file: "a".into(),
            line,
            side,
            text: text.into(),
            by: baton_core::LEAD.into(),
            at: baton_core::Timestamp::now(),
            head: "h".into(),
            round: None,
        };
        let (new, old) = (at(2, Side::New, "why upper?"), at(2, Side::Old, "was fine"));
        let mut coloured = String::new();
        annotate(&mut coloured, patch, &[&new, &old]);
        assert!(coloured.contains(&crate::style::paint(crate::style::ADDED, "+TWO")));
        let out = anstream::adapter::strip_str(&coloured).to_string();
        let lines: Vec<&str> = out.lines().collect();
        let after = |text: &str| lines[lines.iter().position(|l| *l == text).unwrap() + 1];
        assert_eq!(after("+TWO"), "    >> lead (open): why upper?");
        assert_eq!(after("-two"), "    >> lead (open): was fine");
        assert_eq!(hunk_start("-10,4 +12 @@ fn x"), (9, 11));
    }
}
