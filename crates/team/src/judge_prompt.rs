//! What an agent judge is told: the task (its description, acceptance and files), what its
//! worker reported, where the work is (a read-only checkout of the trial merge), its diff, and
//! how to give its verdict so that the merge queue can read it ([`verdict_of`]).

use baton_core::Task;
use baton_git::BranchDiff;

use crate::landing::judge::{Word, word_of};

/// The most of the diff the prompt carries (an agent's prompt is one argument, of at most
/// 128 KiB on Linux); the judge reads the rest in its checkout.
const DIFF_SHOWN: usize = 64 * 1024;
/// The most of the worker's report shown.
const REPORT_SHOWN: usize = 4 * 1024;
/// How a verdict's line starts.
const VERDICT: &str = "VERDICT:";

/// The prompt for judge `agent` of `task`, whose branch's diff against the lead's branch
/// `target` is `diff`, and whose trial merge is checked out (read-only) where the judge runs.
pub(crate) fn judge_prompt(agent: &str, task: &Task, target: &str, diff: &BranchDiff) -> String {
    let id = &task.id;
    let mut prompt = format!(
        "You are \"{agent}\", the judge of a team of coding agents coordinated by Baton. Task \
         {id} is done on branch {}; before the merge queue lands it in {target}, decide whether \
         it does what the task asks. You read the work; you never change it.\n\n\
         Task {id}: {}\n",
        diff.branch, task.description,
    );
    if let Some(acceptance) = task.acceptance.as_deref().filter(|a| !a.trim().is_empty()) {
        prompt.push_str(&format!(
            "Acceptance (how to know it is done): {}\n",
            acceptance.trim()
        ));
    }
    if !task.context.files.is_empty() {
        prompt.push_str(&format!("Files: {}\n", task.context.files.join(", ")));
    }
    if let Some(output) = task
        .result
        .as_ref()
        .and_then(|r| r.output.as_deref())
        .filter(|o| !o.trim().is_empty())
    {
        prompt.push_str(&format!(
            "Its worker reported: {}\n",
            baton_core::text::prefix(output.trim(), REPORT_SHOWN)
        ));
    }
    let patch = crate::landing::judge::patch_of(diff);
    let shown = baton_core::text::prefix(&patch, DIFF_SHOWN);
    prompt.push_str(&format!(
        "\nYour working folder is a read-only checkout of {target} with the branch merged in: \
         read the code and run what only reads it (you can write nothing there, and reach no \
         network but your model's). The branch's diff against {target}{}:\n\n```diff\n{shown}\
         {}```\n",
        match shown.len() < patch.len() {
            true => format!(
                ", its first {} KiB (`git diff {} HEAD` in your folder shows it whole)",
                DIFF_SHOWN / 1024,
                diff.merge_base
            ),
            false => String::new(),
        },
        if shown.ends_with('\n') { "" } else { "\n" },
    ));
    prompt.push_str(&format!(
        "\nEnd your answer with your verdict, on a line of its own:\n\
         {VERDICT} approve\n\
         or\n\
         {VERDICT} changes\n\
         Approve when the work does what the description and the acceptance ask. When you ask \
         for changes, put each remark on a line of its own as `FILE:LINE: what to change` (LINE \
         as the new side of the diff numbers it) and say in a few lines what the work lacks: \
         its worker is given your words and goes on on its branch. Do not edit files, commit, \
         or report any task: your answer is your whole part.\n"
    ));
    prompt
}

/// An agent judge's last words read as its word: the last line that starts with `VERDICT:`
/// (`approve`, or `changes`), with what it said besides it as the comments and summary. `None`
/// when it gave no verdict.
pub(crate) fn verdict_of(said: &str, diff: &BranchDiff) -> Option<Word> {
    let (approved, rest) = split_verdict(said)?;
    let mut word = word_of(approved, &rest, diff);
    word.said = said.trim().to_string();
    Some(word)
}

/// An agent judge's last words as its verdict (approved, or met) and the rest of what it
/// said; `None` when it gave no verdict.
pub(crate) fn split_verdict(said: &str) -> Option<(bool, String)> {
    let mut lines: Vec<&str> = said.lines().collect();
    let at = lines
        .iter()
        .rposition(|line| verdict_line(line).is_some())?;
    let approved = verdict_line(lines[at])?;
    lines.remove(at);
    Some((approved, lines.join("\n").trim().to_string()))
}

/// `Some(approved)` for a verdict's line (`VERDICT: approve`, in any case, bold or quoted as
/// Markdown may have it).
fn verdict_line(line: &str) -> Option<bool> {
    let bare: String = line
        .chars()
        .filter(|c| !matches!(c, '*' | '`' | '_' | '>' | '#'))
        .collect();
    let bare = bare.trim();
    let rest = bare
        .get(..VERDICT.len())
        .filter(|head| head.eq_ignore_ascii_case(VERDICT))
        .map(|_| bare[VERDICT.len()..].trim().to_ascii_lowercase())?;
    match rest.as_str() {
        "approve" | "approved" | "met" => Some(true),
        "changes" | "request changes" | "changes requested" | "missing" | "not met" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diff(patch: &str) -> BranchDiff {
        crate::landing::judge::diff_of_one_file(patch)
    }

    const PATCH: &str = "diff --git a/src/lib.rs b/src/lib.rs\n--- a/src/lib.rs\n+++ \
                         b/src/lib.rs\n@@ -1,1 +1,2 @@\n fn a() {}\n+fn b() {}\n";

    #[test]
    fn the_last_verdict_decides_and_the_rest_is_the_word() {
        let said = "I read it.\nVERDICT: approve was my first thought, but\n\
                    src/lib.rs:2: b needs a test\nNo test.\n**Verdict: changes**";
        let word = verdict_of(said, &diff(PATCH)).unwrap();
        assert!(!word.approved);
        assert_eq!(
            word.comments,
            [("src/lib.rs".to_string(), 2, "b needs a test".to_string())]
        );
        assert!(word.summary.contains("No test."), "{}", word.summary);
        assert!(!word.summary.contains("changes**"), "{}", word.summary);
        assert_eq!(word.said, said);
        assert!(
            verdict_of("Looks good.\n`VERDICT: Approved`", &diff(PATCH))
                .unwrap()
                .approved
        );
    }

    #[test]
    fn no_verdict_is_none() {
        assert!(verdict_of("It looks fine to me.", &diff(PATCH)).is_none());
        assert!(verdict_of("VERDICT: maybe", &diff(PATCH)).is_none());
        assert!(verdict_of("", &diff(PATCH)).is_none());
    }

    #[test]
    fn the_prompt_has_the_task_its_acceptance_and_a_long_diff_cut_with_how_to_see_it_whole() {
        let task: Task = serde_json::from_value(serde_json::json!({
            "id": "t1",
            "description": "Write b",
            "acceptance": "b is tested",
            "status": "done",
            "created_at": "2026-01-01T00:00:00Z",
        }))
        .unwrap();
        let short = judge_prompt("judge", &task, "main", &diff(PATCH));
        assert!(short.contains("Task t1: Write b"), "{short}");
        assert!(short.contains("Acceptance (how to know it is done): b is tested"));
        assert!(short.contains("+fn b() {}\n```"), "{short}");
        assert!(!short.contains("shows it whole"), "{short}");
        let long = format!("{PATCH}{}", "+x\n".repeat(40_000));
        let cut = judge_prompt("judge", &task, "main", &diff(&long));
        assert!(cut.contains("`git diff def HEAD` in your folder shows it whole"));
        assert!(cut.len() < DIFF_SHOWN + 4096, "{}", cut.len());
    }
}
