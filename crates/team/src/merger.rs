//! The merge queue's merger: one thread of a team's supervisor that takes the queue's tasks
//! one at a time ([`crate::merge_queue`]): merges the task's branch with the lead's in the
//! queue's scratch checkout, runs the project's check there, and lands it by fast-forward
//! (`baton_git::land`); a failing check or a conflict sends the task back to its worker, at
//! most [`MAX_RETURNS`] times, after which it is left for the lead.

use baton_core::review::{ReviewSettings, record_check, review_settings_path};
use baton_core::{Reopen, TaskStatus};
use baton_git::{Landed, TrialOutcome, Worktrees, merge_message};

use crate::Progress;
use crate::check::run_check_command;
use crate::crew::Crew;
use crate::exec::TaskEnv;
use crate::merge_queue::{MergeQueue, QueueEntry, QueueState};

/// How often a trial is made again when the lead's branch moved under it.
const TRIES: usize = 5;
/// What of a failing check's output the task is sent back with, at most (its end).
const SENT_OUTPUT: usize = 4 * 1024;
/// How many times the queue sends one task back before it leaves it for the lead.
pub const MAX_RETURNS: u32 = 3;

/// The merger: takes the queue's tasks one at a time until it is closed.
pub fn run_merger(crew: &Crew<'_>, queue: &MergeQueue) {
    let Some(worktrees) = &crew.worktrees else {
        return;
    };
    while let Some(entry) = queue.next() {
        let (state, note) = land_one(crew, worktrees, &entry);
        (crew.progress)(Progress::Merge {
            task: entry.task.clone(),
            worker: entry.worker.clone(),
            state,
            note: note.clone(),
        });
        queue.settle(&entry.task, state, note);
    }
}

/// One task's turn: merged with the lead's branch, checked, landed; or sent back, or left.
fn land_one(crew: &Crew<'_>, worktrees: &Worktrees, entry: &QueueEntry) -> (QueueState, String) {
    let id = entry.task.as_str();
    let left = |why: String| (QueueState::NotLanded, why);
    let task = match crew.tasks.task(id) {
        Ok(Some(task)) if task.status == TaskStatus::Done => task,
        Ok(Some(task)) => return left(format!("it is {} now, not done", task.status)),
        Ok(None) => return left("it is not on the board any more".into()),
        Err(e) => return left(format!("it could not be read: {e}")),
    };
    let settings = match ReviewSettings::load(&review_settings_path(crew.local.root())) {
        Ok(settings) => settings,
        Err(e) => return left(e.to_string()),
    };
    let protected = match settings.protected(&crate::agent_cli::project_settings()) {
        Ok(protected) => protected,
        Err(e) => return left(e.to_string()),
    };
    let message = merge_message(&task);
    for _ in 0..TRIES {
        let trial = match worktrees.trial_merge(id, &message, &protected) {
            Ok(TrialOutcome::Ready(trial)) => trial,
            Ok(TrialOutcome::AlreadyMerged) => {
                return (
                    QueueState::Landed,
                    "in the lead's branch already (a dependent brought it)".into(),
                );
            }
            Ok(TrialOutcome::Conflict { files }) => {
                let target = worktrees
                    .repo()
                    .current_branch()
                    .unwrap_or_else(|_| "the lead's branch".into());
                let request = format!(
                    "The merge queue could not land your branch: merging it with {target} \
                     conflicts in {}. Run `git merge {target}` in your worktree, resolve those \
                     files keeping what both sides meant, commit, and report the task done \
                     again.",
                    files.join(", ")
                );
                return send_back(
                    crew,
                    entry,
                    &request,
                    format!("conflicts in {}", files.join(", ")),
                );
            }
            Ok(TrialOutcome::Protected { files }) => {
                let request = format!(
                    "The merge queue refused your branch: it changes {}, which no landing may \
                     add, change or remove (Baton's own folder and the files the project protects \
                     in review.toml). Take those changes out of your branch (`git rm --cached` or \
                     revert them), commit, and report the task done again.",
                    files.join(", ")
                );
                return send_back(
                    crew,
                    entry,
                    &request,
                    format!("it changes protected files: {}", files.join(", ")),
                );
            }
            Err(e) => return left(format!("its branch could not be merged: {e}")),
        };
        if let Some(command) = &settings.check {
            let result_path = match crew.local.result_file(id) {
                Ok(path) => path,
                Err(e) => return left(e.to_string()),
            };
            let env = TaskEnv {
                agent: &entry.worker,
                task: &task,
                project_dir: crew.local.project_dir(),
                result_path: &result_path,
                worktree: Some(&trial.checkout),
            };
            let run = match run_check_command(command, &settings, &env, &trial.commit) {
                Ok(run) => run,
                Err(e) => return left(format!("the check could not run: {e}")),
            };
            let _ = record_check(crew.documents, id, &run);
            if !run.passed {
                let code = run
                    .exit_code
                    .map_or("was stopped".to_string(), |c| format!("exited {c}"));
                let output = baton_core::text::suffix(&run.output, SENT_OUTPUT);
                let request = format!(
                    "The merge queue ran the project's check `{command}` on your branch merged \
                     with {}; it {code}. Fix what it says on your branch, commit, and report the \
                     task done again. The end of its output:\n{output}",
                    trial.target
                );
                return send_back(crew, entry, &request, format!("the check {code}"));
            }
        }
        match worktrees.land(&trial) {
            Ok(Landed::Moved { commit, files }) => {
                let short = commit.get(..12).unwrap_or(&commit);
                let files = match files.len() {
                    1 => "1 file".to_string(),
                    n => format!("{n} files"),
                };
                return (
                    QueueState::Landed,
                    format!("in {} ({short}, {files})", trial.target),
                );
            }
            Ok(Landed::Stale) => continue,
            Ok(Landed::Refused { message }) => {
                return left(format!(
                    "the lead's checkout could not be moved ({message}); commit or stash your \
                     changes, then `baton leader merge {id}`"
                ));
            }
            Err(e) => return left(format!("it could not be landed: {e}")),
        }
    }
    left(format!(
        "the lead's branch moved under every one of {TRIES} tries; `baton leader merge {id}`"
    ))
}

/// Sends the task back to the worker that did it with `request` (its check's output, or the
/// files that conflict), as a review's "request changes" does.
fn send_back(
    crew: &Crew<'_>,
    entry: &QueueEntry,
    request: &str,
    note: String,
) -> (QueueState, String) {
    if entry.returns >= MAX_RETURNS {
        return (
            QueueState::NotLanded,
            format!(
                "{note}, after it was sent back {MAX_RETURNS} times; left for the lead \
                 (`baton review {}`)",
                entry.task
            ),
        );
    }
    match crew.tasks.reopen(&entry.task, request, Reopen::ToItsWorker) {
        Ok(_) => (QueueState::SentBack, note),
        Err(e) => (
            QueueState::NotLanded,
            format!("{note}; it could not be sent back: {e}"),
        ),
    }
}
