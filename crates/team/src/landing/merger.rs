//! The merge queue's merger: one thread of a team's supervisor that takes the queue's tasks
//! one at a time ([`crate::landing::merge_queue`]): merges the task's branch with the lead's in the
//! queue's scratch checkout, runs the project's check there, and lands it by fast-forward
//! (`baton_git::land`); a failing check, a conflict or the team's judge asking for changes
//! ([`crate::landing::judge`]) sends the task back to its worker, at most [`MAX_RETURNS`]
//! times, after which it is left for the lead.

use baton_core::review::{self, Judgement, ReviewSettings, record_check, review_settings_path};
use baton_core::{Reopen, TaskStatus};
use baton_git::{Landed, TrialOutcome, Worktrees, merge_message};

use crate::Progress;
use crate::exec::TaskEnv;
use crate::landing::check::run_check_command;
use crate::landing::judge::{Judge, JudgeBy, run_judge};
use crate::landing::merge_queue::{MergeQueue, QueueEntry, QueueState};
use crate::supervision::crew::Crew;

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
        queue.record_outcome(&entry.task, state, note);
    }
}

/// What the queue decided of a task: its state, and why, in words.
type Outcome = (QueueState, String);

/// Left for the lead, and why.
fn left(why: String) -> Outcome {
    (QueueState::NotLanded, why)
}

/// One task's turn: merged with the lead's branch, checked, landed; or sent back, or left.
fn land_one(crew: &Crew<'_>, worktrees: &Worktrees, entry: &QueueEntry) -> Outcome {
    match try_landing(crew, worktrees, entry) {
        Ok(outcome) | Err(outcome) => outcome,
    }
}

/// [`land_one`], with what ends the turn early as the error.
fn try_landing(
    crew: &Crew<'_>,
    worktrees: &Worktrees,
    entry: &QueueEntry,
) -> Result<Outcome, Outcome> {
    let id = entry.task.as_str();
    let task = match crew.tasks.task(id) {
        Ok(Some(task)) if task.status == TaskStatus::Done => task,
        Ok(Some(task)) => return Err(left(format!("it is {} now, not done", task.status))),
        Ok(None) => return Err(left("it is not on the board any more".into())),
        Err(e) => return Err(left(format!("it could not be read: {e}"))),
    };
    let settings = ReviewSettings::load(&review_settings_path(crew.local.root()))
        .map_err(|e| left(e.to_string()))?;
    let protected = settings
        .protected(&crate::agent_cli::project_settings())
        .map_err(|e| left(e.to_string()))?;
    let message = merge_message(&task);
    let mut judged = false;
    for _ in 0..TRIES {
        let trial = match worktrees.trial_merge(id, &message, &protected) {
            Ok(TrialOutcome::Ready(trial)) => trial,
            Ok(TrialOutcome::AlreadyMerged) => {
                return Ok((
                    QueueState::Landed,
                    "in the lead's branch already (a dependent brought it)".into(),
                ));
            }
            Ok(TrialOutcome::Conflict { files }) => {
                return Err(conflicts(crew, worktrees, entry, &files));
            }
            Ok(TrialOutcome::Protected { files }) => {
                return Err(protected_files(crew, entry, &files));
            }
            Err(e) => return Err(left(format!("its branch could not be merged: {e}"))),
        };
        // Judged once, on the first trial: a later one only follows the lead's branch.
        if let Some(judge) = crew.judge.as_ref().filter(|_| !judged) {
            judge_trial(crew, worktrees, entry, &task, &settings, judge, &trial)?;
            judged = true;
        }
        if let Some(command) = &settings.check {
            check(crew, entry, &task, &settings, command, &trial)?;
        }
        match worktrees.land(&trial) {
            Ok(Landed::Moved { commit, files }) => return Ok(moved(&trial, &commit, files.len())),
            Ok(Landed::Stale) => continue,
            Ok(Landed::Refused { message }) => {
                return Err(left(format!(
                    "the lead's checkout could not be moved ({message}); commit or stash your \
                     changes, then `baton leader merge {id}`"
                )));
            }
            Err(e) => return Err(left(format!("it could not be landed: {e}"))),
        }
    }
    Err(left(format!(
        "the lead's branch moved under every one of {TRIES} tries; `baton leader merge {id}`"
    )))
}

/// A branch that conflicts with the lead's: sent back with the files, and how to resolve them.
fn conflicts(
    crew: &Crew<'_>,
    worktrees: &Worktrees,
    entry: &QueueEntry,
    files: &[String],
) -> Outcome {
    let target = worktrees
        .repo()
        .current_branch()
        .unwrap_or_else(|_| "the lead's branch".into());
    let request = format!(
        "The merge queue could not land your branch: merging it with {target} conflicts in \
         {}. Run `git merge {target}` in your worktree, resolve those files keeping what both \
         sides meant, commit, and report the task done again.",
        files.join(", ")
    );
    send_back(
        crew,
        entry,
        &request,
        format!("conflicts in {}", files.join(", ")),
    )
}

/// A branch that changes files no landing may: sent back to take those changes out.
fn protected_files(crew: &Crew<'_>, entry: &QueueEntry, files: &[String]) -> Outcome {
    let request = format!(
        "The merge queue refused your branch: it changes {}, which no landing may add, change \
         or remove (Baton's own folder and the files the project protects in review.toml). \
         Take those changes out of your branch (`git rm --cached` or revert them), commit, and \
         report the task done again.",
        files.join(", ")
    );
    send_back(
        crew,
        entry,
        &request,
        format!("it changes protected files: {}", files.join(", ")),
    )
}

/// The project's check run on the trial merge and recorded with the task; a failing check
/// sends the task back with the end of its output.
fn check(
    crew: &Crew<'_>,
    entry: &QueueEntry,
    task: &baton_core::Task,
    settings: &ReviewSettings,
    command: &str,
    trial: &baton_git::Trial,
) -> Result<(), Outcome> {
    let result_path = crew
        .local
        .result_file(&task.id)
        .map_err(|e| left(e.to_string()))?;
    let env = TaskEnv {
        agent: &entry.worker,
        task,
        project_dir: crew.local.project_dir(),
        result_path: &result_path,
        worktree: Some(&trial.checkout),
    };
    let mut run = run_check_command(command, settings, &env, &trial.commit)
        .map_err(|e| left(format!("the check could not run: {e}")))?;
    run.merged_with = Some(trial.target.clone());
    let _ = record_check(crew.documents, &task.id, &run);
    if run.passed {
        return Ok(());
    }
    let code = run
        .exit_code
        .map_or("was stopped".to_string(), |c| format!("exited {c}"));
    let output = baton_core::text::suffix(&run.output, SENT_OUTPUT);
    let request = format!(
        "The merge queue ran the project's check `{command}` on your branch merged with {}; it \
         {code}. Fix what it says on your branch, commit, and report the task done again. The \
         end of its output:\n{output}",
        trial.target
    );
    Err(send_back(
        crew,
        entry,
        &request,
        format!("the check {code}"),
    ))
}

/// The judge's word on the task's branch, on the trial merge's checkout: approved, or changes
/// asked for, sent back as a round of its review (its line comments and summary). Recorded with
/// the task either way.
fn judge_trial(
    crew: &Crew<'_>,
    worktrees: &Worktrees,
    entry: &QueueEntry,
    task: &baton_core::Task,
    settings: &ReviewSettings,
    judge: &Judge,
    trial: &baton_git::Trial,
) -> Result<(), Outcome> {
    let id = task.id.as_str();
    let diff = worktrees
        .branch_diff(id)
        .map_err(|e| left(format!("its diff could not be read for the judge: {e}")))?;
    let result_path = crew
        .local
        .result_file(id)
        .map_err(|e| left(e.to_string()))?;
    let env = TaskEnv {
        agent: &judge.name,
        task,
        project_dir: crew.local.project_dir(),
        result_path: &result_path,
        worktree: Some(&trial.checkout),
    };
    let word = match &judge.by {
        JudgeBy::Command(command) => run_judge(command, settings, &env, &diff),
        JudgeBy::Agent(profile) => crate::landing::judge_agent::judge_by_agent(
            crew,
            &judge.name,
            profile,
            task,
            trial,
            &diff,
        ),
    }
    .map_err(|e| left(format!("the judge could not judge it: {e}")))?;
    let said = Judgement {
        by: judge.name.clone(),
        at: baton_core::Timestamp::now(),
        head: diff.head.clone(),
        approved: word.approved,
        comment: word.said.clone(),
    };
    let _ = review::record_judgement(crew.documents, id, &said);
    (crew.progress)(Progress::Judged {
        task: id.to_string(),
        judge: judge.name.clone(),
        approved: word.approved,
        comment: word.said.clone(),
    });
    if word.approved {
        return Ok(());
    }
    for (file, line, text) in &word.comments {
        let _ = review::comment(
            crew.documents,
            id,
            review::NewComment {
                file: file.clone(),
                line: *line,
                side: review::Side::New,
                text: text.clone(),
                by: judge.name.clone(),
                head: diff.head.clone(),
            },
        );
    }
    let summary = match word.summary.trim() {
        "" => format!("{} asked for changes", judge.name),
        said => baton_core::text::suffix(said, review::MAX_COMMENT).to_string(),
    };
    let draft = review::review_of(crew.documents, id)
        .and_then(|record| review::draft_round(id, &record, Some(&summary)))
        .map_err(|e| left(format!("the judge's round could not be drafted: {e}")))?;
    let outcome = send_back(
        crew,
        entry,
        &draft.text,
        format!("{} asked for changes", judge.name),
    );
    if outcome.0 == QueueState::SentBack {
        let _ = review::record_round(crew.documents, id, &draft, &judge.name, &diff.head);
    }
    Err(outcome)
}

/// Landed: where, at which commit, how many files.
fn moved(trial: &baton_git::Trial, commit: &str, files: usize) -> Outcome {
    let short = commit.get(..12).unwrap_or(commit);
    let files = match files {
        1 => "1 file".to_string(),
        n => format!("{n} files"),
    };
    (
        QueueState::Landed,
        format!("in {} ({short}, {files})", trial.target),
    )
}

/// Sends the task back to the worker that did it with `request` (its check's output, or the
/// files that conflict), as a review's "request changes" does.
fn send_back(crew: &Crew<'_>, entry: &QueueEntry, request: &str, note: String) -> Outcome {
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use baton_core::{ClaimRequest, Completion, NewTask, Task, TaskStore};
    use baton_folder::FolderStore;
    use baton_live::WatchMode;

    use super::*;
    use crate::launch::Setting;
    use crate::supervision::crew::TeamStores;

    /// A project whose task `t1` worker `w1` reported done.
    fn project_with_a_done_task() -> (tempfile::TempDir, FolderStore, Task) {
        let dir = tempfile::tempdir().unwrap();
        let store = FolderStore::init(dir.path(), "merger", None).unwrap();
        let task = store
            .add_task(NewTask {
                description: "landed by the queue".into(),
                ..NewTask::default()
            })
            .unwrap();
        store
            .claim(&ClaimRequest::task("w1", &task.id))
            .unwrap()
            .expect("claimed");
        store.start("w1", &task.id).unwrap();
        let done = store
            .complete(
                "w1",
                &task.id,
                Completion {
                    output: "done".into(),
                    ..Completion::default()
                },
            )
            .unwrap();
        (dir, store, done)
    }

    fn decide(store: &FolderStore, what: &dyn Fn(&Crew<'_>) -> Outcome) -> Outcome {
        let stores = TeamStores {
            tasks: store,
            team: store,
            documents: store,
            local: store.layout(),
        };
        let setting = Setting {
            baton: "baton".into(),
            project_dir: store.layout().project_dir().to_path_buf(),
            store_env: Vec::new(),
        };
        let quiet = |_| {};
        let mode = WatchMode::Poll(Duration::from_millis(50));
        let crew = Crew::alone(stores, setting, "true", false, mode, &quiet).unwrap();
        what(&crew)
    }

    fn entry(task: &Task, returns: u32) -> QueueEntry {
        QueueEntry {
            task: task.id.clone(),
            worker: "w1".into(),
            state: QueueState::Checking,
            note: None,
            returns,
        }
    }

    #[test]
    fn a_task_sent_back_goes_to_its_worker_with_the_request_in_its_hints() {
        let (_dir, store, task) = project_with_a_done_task();
        let (state, note) = decide(&store, &|crew| {
            send_back(
                crew,
                &entry(&task, 0),
                "fix the check",
                "the check exited 1".into(),
            )
        });
        assert_eq!(state, QueueState::SentBack);
        assert_eq!(note, "the check exited 1");
        let now = store.task(&task.id).unwrap().unwrap();
        assert_eq!(now.status, baton_core::TaskStatus::Claimed, "{now:?}");
        assert_eq!(now.claimed_by.as_deref(), Some("w1"));
        let hints = serde_json::to_string(&now.context).unwrap();
        assert!(hints.contains("fix the check"), "{hints}");
    }

    #[test]
    fn after_its_last_return_a_task_is_left_for_the_lead_untouched() {
        let (_dir, store, task) = project_with_a_done_task();
        let last = entry(&task, MAX_RETURNS);
        let (state, note) = decide(&store, &|crew| {
            send_back(crew, &last, "fix it again", "conflicts in a.txt".into())
        });
        assert_eq!(state, QueueState::NotLanded);
        assert!(
            note.starts_with("conflicts in a.txt, after it was sent back 3 times"),
            "{note}"
        );
        assert!(
            note.contains(&format!("baton review {}", task.id)),
            "{note}"
        );
        let now = store.task(&task.id).unwrap().unwrap();
        assert_eq!(now.status, baton_core::TaskStatus::Done, "not reopened");
    }

    #[test]
    fn a_task_that_is_no_longer_done_or_on_the_board_is_not_landed() {
        let (dir, store, task) = project_with_a_done_task();
        for git in [
            &["init", "-q"][..],
            &["commit", "-q", "--allow-empty", "-m", "start"],
        ] {
            let ran = std::process::Command::new("git")
                .args(["-c", "user.name=t", "-c", "user.email=t@t"])
                .args(git)
                .current_dir(dir.path())
                .status()
                .unwrap();
            assert!(ran.success());
        }
        let worktrees = Worktrees::open(store.layout()).unwrap();
        store
            .reopen(&task.id, "more", baton_core::Reopen::ToAnyone)
            .unwrap();
        let reset = entry(&task, 0);
        let outcome = decide(&store, &|crew| land_one(crew, &worktrees, &reset));
        assert_eq!(outcome, left("it is available now, not done".into()));
        let gone = QueueEntry {
            task: "no-such-task".into(),
            ..entry(&task, 0)
        };
        let outcome = decide(&store, &|crew| land_one(crew, &worktrees, &gone));
        assert_eq!(outcome, left("it is not on the board any more".into()));
    }
}
