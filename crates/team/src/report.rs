//! An `exec` command's report: it says nothing through Baton's tools, so its exit status
//! reports its task (exit 0 completes it with the command's output and, in a worktree, its
//! branch; anything else fails it with how it ended and the end of its stderr). The report is
//! made at once, and the task read only when it is refused (the command reported the task
//! itself, or it was taken over): one request per task, as many as a worker that runs the
//! command by hand.

use baton_core::{Attempt, AttemptEnd, Completion};
use baton_git::record_branch_or_say_why;

use crate::supervision::crew::Crew;
use crate::supervision::store_outage::{change_through_outage, reported_by};

/// The end of what a command printed, for its report.
pub(crate) struct Printed {
    pub stdout: String,
    pub stderr: String,
}

/// Reports task `id` by the exit status of `worker`'s command (`succeeded`: exit 0; `how`: how
/// it ended, in words). The attempt's end and reason when the report landed; `None` when it
/// was refused, for the caller to look at the task.
pub(crate) fn by_exit_status(
    crew: &Crew<'_>,
    worker: &str,
    id: &str,
    succeeded: bool,
    how: &str,
    printed: &Printed,
) -> Option<Reported> {
    let flags = crew.flags(worker);
    let mut seen_clean = false;
    let reason = match succeeded {
        true => command_words(how),
        false => failure(how, &printed.stderr),
    };
    let reported =
        change_through_outage(
            crew.tasks,
            id,
            &flags.now,
            reported_by(worker),
            || match succeeded {
                true => {
                    let (done, clean) = completion(crew, id, &printed.stdout);
                    seen_clean = clean;
                    crew.tasks.complete(worker, id, done)
                }
                false => crew.tasks.fail(worker, id, &reason),
            },
        );
    let end = match succeeded {
        true => AttemptEnd::Completed,
        false => AttemptEnd::Failed,
    };
    reported.ok().map(|_| Reported {
        end,
        reason,
        seen_clean,
    })
}

/// A command's report that landed.
pub(crate) struct Reported {
    pub end: AttemptEnd,
    pub reason: String,
    /// Its worktree held nothing beside its commits when the completion recorded it (after
    /// every process of the command ended): [`baton_git::Reuse::seen_clean`].
    pub seen_clean: bool,
}

/// How an attempt ended in a command's words (an attempt's reason speaks of "the agent").
fn command_words(how: &str) -> String {
    how.replace("the agent", "the command")
}

/// Why a command's task failed: how the command ended, and the end of its stderr.
pub(crate) fn failure(how: &str, stderr: &str) -> String {
    crate::exec::failure_reason(&command_words(how), stderr)
}

/// [`failure`] for an ended attempt.
pub(crate) fn attempt_failure(attempt: &Attempt, stderr: &str) -> String {
    failure(
        attempt.reason.as_deref().unwrap_or("the command failed"),
        stderr,
    )
}

/// The completion of task `id` whose command succeeded: its output, and, when it was worked
/// in a worktree, its branch and the files the branch changed; and whether that worktree held
/// nothing else.
fn completion(crew: &Crew<'_>, id: &str, stdout: &str) -> (Completion, bool) {
    let mut completion = Completion {
        output: match stdout.is_empty() {
            true => "(the command printed nothing)".into(),
            false => stdout.to_string(),
        },
        ..Completion::default()
    };
    let clean = crew.worktrees.is_some()
        && record_branch_or_say_why(crew.local, id, &mut completion).unwrap_or(false);
    (completion, clean)
}
