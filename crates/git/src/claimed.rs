//! What a worker's claim and completion do with the task's worktree, written once for every
//! way a task is worked (`task_claim` with `worktree`, `task_complete`, `worker loop
//! --worktree`): a claimed task gets its worktree or is handed back, and a completion records
//! the task's branch or says why it could not.

use baton_core::review::{ReviewSettings, review_settings_path};
use baton_core::{Completion, Layout, StoreError, Task, TaskStore};

use crate::error::{GitError, Result};
use crate::worktree::{Reuse, Worktree, Worktrees, record_branch};

/// Gives task `task`, just claimed by `agent`, its worktree under the project's local folder
/// `local`, with its dependencies' work ([`crate::dependencies`], as the project's
/// `review.toml` says). If that fails, the claim is handed back, so a task is never left
/// claimed with nowhere to work on it; dependencies held for the lead fail it instead, saying
/// which files.
pub fn worktree_for_claim(
    store: &dyn TaskStore,
    local: &Layout,
    agent: &str,
    task: &str,
) -> Result<Worktree> {
    let found = (|| {
        let found = store.task(task)?;
        found.ok_or_else(|| StoreError::UnknownTask {
            id: task.to_string(),
        })
    })();
    match (found, Worktrees::open(local)) {
        (Ok(found), Ok(worktrees)) => worktrees.prepare_claimed(store, agent, &found, None),
        (Err(e), _) => settle_failure(store, agent, task, Err(e.into())),
        (_, Err(e)) => settle_failure(store, agent, task, Err(e)),
    }
}

impl Worktrees {
    /// [`worktree_for_claim`] with the worktrees opened already (a worker opens them once),
    /// taking over the clean checkout of finished task `reuse` ([`Worktrees::prepare_task`]).
    pub fn prepare_claimed(
        &self,
        store: &dyn TaskStore,
        agent: &str,
        task: &Task,
        reuse: Option<Reuse<'_>>,
    ) -> Result<Worktree> {
        let prepared = ReviewSettings::load(&review_settings_path(self.layout().root()))
            .map_err(GitError::from)
            .and_then(|settings| self.prepare_task(task, settings.dependency_conflicts, reuse));
        settle_failure(store, agent, &task.id, prepared)
    }
}

fn settle_failure(
    store: &dyn TaskStore,
    agent: &str,
    task: &str,
    prepared: Result<Worktree>,
) -> Result<Worktree> {
    // Nothing ran there yet; the release or fail failing too changes nothing for the caller.
    match &prepared {
        Err(e @ GitError::DependenciesConflict { .. }) => {
            let _ = store.fail(agent, task, &e.to_string());
        }
        Err(_) => {
            let _ = store.release(agent, task);
        }
        Ok(_) => {}
    }
    prepared
}

/// Adds the task's branch to its completion ([`record_branch`]). A task id that is not a
/// valid name is refused; a branch that cannot be read does not refuse the completion (the
/// work is done; not knowing its commits is no reason to lose it): the completion's output
/// says so instead. True when the worktree was seen clean ([`record_branch`]).
pub fn record_branch_or_say_why(
    local: &Layout,
    task: &str,
    completion: &mut Completion,
) -> Result<bool> {
    local.worktree_dir(task)?;
    match record_branch(local, task, completion) {
        Ok(clean) => Ok(clean),
        Err(e) => {
            completion
                .output
                .push_str(&format!("\n(Baton could not read the task's branch: {e})"));
            Ok(false)
        }
    }
}
