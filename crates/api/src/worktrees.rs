//! A worktree per task, as operations: a claim that gives the task its own git worktree
//! ([`give_worktree`], used by `task_claim` with `worktree`), merging finished tasks' branches
//! into the lead's ([`Merge`]), and the worktrees `leader doctor` reports ([`worktree_findings`]).
//! The git side is `baton-git`'s; this module decides which tasks, and in what order.

use std::path::PathBuf;

use baton_core::review::ReviewSettings;
use baton_core::{Finding, FindingKind, StoreError, Task, TaskStatus};
use baton_git::{
    GitError, Worktrees, branch_name, merge_message, merge_task_branch, worktree_for_claim,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::operation::{Callers, Context, Operation};

/// The worktree a claim gave its task.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct WorktreeInfo {
    /// Where to work on the task (the project folder inside the task's checkout).
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub path: PathBuf,
    /// The task's branch, `baton/TASK-ID`.
    pub branch: String,
    /// The lead's branch it started from.
    pub base: Option<String>,
    /// It was there already: the task was worked on before, and its commits are kept.
    pub reused: bool,
}

/// Gives the claimed `task` its own worktree (handed back if that fails; see
/// [`worktree_for_claim`]).
pub fn give_worktree(cx: &Context, agent: &str, task: &str) -> Result<WorktreeInfo> {
    let worktree = worktree_for_claim(cx.tasks, cx.local, agent, task)?;
    Ok(WorktreeInfo {
        path: worktree.workdir,
        branch: worktree.branch,
        base: worktree.base,
        reused: worktree.reused,
    })
}

/// Merge done tasks' branches into the lead's branch.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct Merge {
    /// The tasks whose branches to merge, in this order; each must be done.
    #[serde(default)]
    #[cfg_attr(
        feature = "cli",
        arg(required_unless_present = "all", conflicts_with = "all")
    )]
    pub tasks: Vec<String>,
    /// Merge every done task's branch not merged yet, in the order they were completed.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub all: bool,
    /// Merge without running the project's check command (.coordination/review.toml).
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub no_check: bool,
}

/// One branch merged (or found merged already).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct MergedBranch {
    pub task: String,
    pub branch: String,
    /// The lead's commit after it.
    pub commit: String,
    /// It was merged before; nothing was done.
    pub already_merged: bool,
    /// Files it changed in the lead's checkout.
    pub files: Vec<String>,
}

/// The merge that conflicted; it was aborted, so it changed nothing.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct MergeConflict {
    pub task: String,
    pub branch: String,
    /// The files both sides changed.
    pub files: Vec<String>,
    pub message: String,
    /// A task to add that resolves it (the lead decides).
    pub follow_up: FollowUp,
}

/// A task whose check failed; it was not merged.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CheckFailed {
    pub task: String,
    pub check: baton_core::review::CheckRun,
}

/// The done tasks whose branch is not in the lead's branch yet, in the order they were done:
/// what waits for review and merging (two git runs, however many there are; none when no
/// task is done). `worktrees`: the project's; none outside a git repository, where no
/// branch waits.
fn unmerged_done<'t>(
    tasks: impl IntoIterator<Item = &'t Task>,
    worktrees: impl FnOnce() -> Option<Worktrees>,
) -> Result<Vec<&'t Task>> {
    let mut done: Vec<&Task> = tasks
        .into_iter()
        .filter(|t| t.status == TaskStatus::Done)
        .collect();
    if done.is_empty() {
        return Ok(done);
    }
    done.sort_by_key(|t| t.completed_at);
    let Some(worktrees) = worktrees() else {
        return Ok(Vec::new());
    };
    let (branches, merged) = worktrees.repo().branches(&branch_name("*"))?;
    done.retain(|t| {
        let branch = branch_name(&t.id);
        branches.contains(&branch) && !merged.contains(&branch)
    });
    Ok(done)
}

/// `review_waiting`: the done tasks whose work waits for review (`baton review waiting`).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReviewWaiting {}

/// A done task whose branch is not in the lead's branch yet.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct WaitingReview {
    pub task: String,
    pub description: String,
    /// Its branch, `baton/TASK-ID`.
    pub branch: String,
    /// Commits on it that the lead's branch lacks, as the task's record counted them.
    pub commits: usize,
}

/// What waits for review.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct WaitingReviews {
    pub tasks: Vec<WaitingReview>,
}

impl Operation for ReviewWaiting {
    const NAME: &'static str = "review_waiting";
    const DESCRIPTION: &'static str = "The done tasks whose branch (baton/TASK-ID) is not in the lead's branch yet, in the order they were done: what waits for review and merging (none outside a git repository).";
    const READ_ONLY: bool = true;
    const CALLERS: Callers = Callers::READERS;
    type Output = WaitingReviews;
    fn run(self, cx: &Context) -> Result<WaitingReviews> {
        // Read at every change by a window: each task shared, none copied, and git asked only
        // when a task is done.
        let tasks = cx.shared_tasks()?;
        let worktrees = || Worktrees::open(cx.local).ok();
        let tasks = unmerged_done(tasks.iter().map(|task| &**task), worktrees)?
            .into_iter()
            .map(|task| WaitingReview {
                task: task.id.clone(),
                description: task.description.clone(),
                branch: branch_name(&task.id),
                commits: task
                    .result
                    .as_ref()
                    .and_then(|r| r.branch.as_ref())
                    .map_or(0, |b| b.commits.len()),
            })
            .collect();
        Ok(WaitingReviews { tasks })
    }
}

/// A task that would resolve a conflict: the description and files to add it with.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct FollowUp {
    pub description: String,
    pub files: Vec<String>,
}

/// What a merge did: the branches merged, in order, and the first that conflicted or failed
/// its check (the ones after it were not tried).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct MergeReport {
    /// The lead's branch.
    pub into: Option<String>,
    pub merged: Vec<MergedBranch>,
    pub conflict: Option<MergeConflict>,
    pub check_failed: Option<CheckFailed>,
    pub not_tried: Vec<String>,
}

impl Operation for Merge {
    const NAME: &'static str = "task_merge";
    const DESCRIPTION: &'static str = "Merge done tasks' branches (baton/TASK-ID, from worktrees) into the branch the lead's checkout is on, each with a merge commit, after the project's check command (.coordination/review.toml) passes on the branch; a failing check stops there, and a conflicting merge is aborted, changing nothing, and reported with its files and a follow-up task to resolve it; later ones are not tried (leader).";
    const READ_ONLY: bool = false;
    const CALLERS: Callers = Callers::LEAD;
    type Output = MergeReport;
    fn run(self, cx: &Context) -> Result<MergeReport> {
        if self.all != self.tasks.is_empty() {
            return Err(crate::Error::invalid_arguments(
                "name the tasks to merge, or ask for all of them (not both)",
            ));
        }
        let (file, _) = cx.snapshot()?;
        let worktrees = Worktrees::open(cx.local)?;
        let tasks: Vec<&Task> = if self.all {
            unmerged_done(file.tasks.iter(), || Some(worktrees.clone()))?
        } else {
            self.tasks
                .iter()
                .map(|id| mergeable(&file.tasks, id))
                .collect::<Result<_>>()?
        };
        // Read once: each task is checked by the same command, and every landing, checked or
        // not, is refused where it would change a protected path.
        let settings = match tasks.is_empty() {
            true => ReviewSettings::default(),
            false => crate::review::settings(cx)?,
        };
        let protected = settings.protected(&baton_team::agent_project_settings())?;
        let mut report = MergeReport {
            into: worktrees.repo().current_branch().ok(),
            merged: Vec::new(),
            conflict: None,
            check_failed: None,
            not_tried: Vec::new(),
        };
        for task in tasks {
            if report.conflict.is_some() || report.check_failed.is_some() {
                report.not_tried.push(task.id.clone());
                continue;
            }
            if !self.no_check
                && let Some(check) = check_before_merge(cx, &worktrees, task, &settings)?
                && !check.passed
            {
                report.check_failed = Some(CheckFailed {
                    task: task.id.clone(),
                    check,
                });
                continue;
            }
            match merge_task_branch(&worktrees, &task.id, &merge_message(task), &protected) {
                Ok(merged) => report.merged.push(MergedBranch {
                    task: task.id.clone(),
                    branch: merged.branch,
                    commit: merged.commit,
                    already_merged: merged.already_merged,
                    files: merged.files,
                }),
                Err(e) => match &e {
                    GitError::Conflict { branch, files, .. } => {
                        report.conflict = Some(MergeConflict {
                            task: task.id.clone(),
                            branch: branch.clone(),
                            files: files.clone(),
                            message: e.to_string(),
                            follow_up: follow_up(task, branch, report.into.as_deref(), files),
                        });
                    }
                    _ if report.merged.is_empty() => return Err(e.into()),
                    _ => {
                        // Say what was merged before it failed, not only the failure.
                        let done: Vec<&str> =
                            report.merged.iter().map(|m| m.task.as_str()).collect();
                        return Err(crate::Error::new(
                            e.kind(),
                            format!("{e} (merged before it: {})", done.join(", ")),
                        ));
                    }
                },
            }
        }
        Ok(report)
    }
}

/// The project's check on `task`'s branch before it is merged: the latest run on the
/// branch's commit if it passed, else a new run; `None` when the project has none, or the
/// branch is merged already (nothing would be merged).
fn check_before_merge(
    cx: &Context,
    worktrees: &Worktrees,
    task: &Task,
    settings: &ReviewSettings,
) -> Result<Option<baton_core::review::CheckRun>> {
    let Some(command) = &settings.check else {
        return Ok(None);
    };
    let (branch, head) = worktrees.branch_head(&task.id)?;
    if worktrees.repo().is_merged(&branch)? {
        return Ok(None);
    }
    // A pass on this commit holds; a failure is run again, as its cause may have been outside
    // the branch (a tool missing, a flaky test) and fixed since.
    let record = baton_core::review::review_of(cx.documents.as_ref(), &task.id)?;
    if let Some(run) = record.check_on(&head, command).filter(|run| run.passed) {
        return Ok(Some(run.clone()));
    }
    crate::check::run_check(cx, task, settings)
}

/// The task that resolves `task`'s conflict: merge its branch into the new task's own (which
/// starts from the lead's), resolve, commit; merging that then brings both in.
fn follow_up(task: &Task, branch: &str, into: Option<&str>, files: &[String]) -> FollowUp {
    let into = into.unwrap_or("the lead's branch");
    FollowUp {
        description: format!(
            "Resolve the conflict of {branch} with {into}: run `git merge {branch}` on this \
             task's branch, resolve the conflicts in {} keeping what both sides meant, and \
             commit. ({} could not be merged: {})",
            files.join(", "),
            task.id,
            task.description.lines().next().unwrap_or_default()
        ),
        files: files.to_vec(),
    }
}

/// The task `id`, if it is done (only a done task's branch is merged).
fn mergeable<'t>(tasks: &'t [Task], id: &str) -> Result<&'t Task> {
    let task = tasks
        .iter()
        .find(|t| t.id == id)
        .ok_or_else(|| StoreError::UnknownTask { id: id.to_string() })?;
    if task.status != TaskStatus::Done {
        return Err(StoreError::IllegalTransition {
            task: id.to_string(),
            action: "merge",
            status: task.status,
            owner: task.claimed_by.clone(),
            hint: "; only a done task's branch is merged".into(),
        }
        .into());
    }
    Ok(task)
}

/// `leader doctor`'s findings about worktrees: a task that is finished (or unknown) and still
/// has a worktree checked out. With `fix`, those with nothing uncommitted are removed (their
/// branches stay). Nothing is looked at (and no git run) in a project without worktrees.
pub fn worktree_findings(cx: &Context, fix: bool) -> Result<(Vec<Finding>, Vec<String>)> {
    let layout = cx.local;
    if !layout.worktrees_dir().is_dir() {
        return Ok((Vec::new(), Vec::new()));
    }
    let worktrees = Worktrees::open(layout)?;
    let (file, _) = cx.snapshot()?;
    let (mut findings, mut fixed) = (Vec::new(), Vec::new());
    for found in worktrees.list()? {
        let status = file.task(&found.task).map(|t| t.status);
        if status.is_some_and(|s| !s.is_final()) {
            continue;
        }
        let what = match status {
            Some(status) => format!("{} is {status}", found.task),
            None => format!("there is no task {}", found.task),
        };
        let place = format!(
            "its worktree {} (branch {})",
            found.path.display(),
            branch_name(&found.task)
        );
        let clean = found.uncommitted.is_empty();
        let message = if clean {
            format!("{what}; {place} is no longer needed (the branch stays)")
        } else {
            format!(
                "{what}; {place} has uncommitted changes ({}): commit or discard them, then \
                 `git worktree remove` it",
                found.uncommitted.join(", ")
            )
        };
        if fix && clean {
            worktrees.remove(&found.task)?;
            fixed.push(format!("removed the worktree of {}", found.task));
        }
        findings.push(Finding {
            kind: FindingKind::FinishedWorktree,
            task: Some(found.task),
            message,
            fixable: clean,
        });
    }
    Ok((findings, fixed))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(id: &str, status: &str) -> Task {
        let task = serde_json::json!({"id": id, "description": id, "status": status});
        serde_json::from_value(task).unwrap()
    }

    #[test]
    fn git_is_asked_only_when_a_task_is_done() {
        let live = [task("task-1", "available"), task("task-2", "claimed")];
        let asked = || panic!("git asked with no task done");
        assert!(unmerged_done(&live, asked).unwrap().is_empty());
        let done = [task("task-3", "done")];
        let outside = unmerged_done(&done, || None).unwrap();
        assert!(
            outside.is_empty(),
            "outside a git repository no branch waits"
        );
    }
}
