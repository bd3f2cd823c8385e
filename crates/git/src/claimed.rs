//! What a worker's claim and completion do with the task's worktree, written once for every
//! way a task is worked (`task_claim` with `worktree`, `task_complete`, `worker loop
//! --worktree`): a claimed task gets its worktree or is handed back, and a completion records
//! the task's branch or says why it could not.

use baton_core::{Completion, Layout, TaskStore};

use crate::error::Result;
use crate::worktree::{Worktree, Worktrees, record_branch};

/// Gives task `task`, just claimed by `agent`, its worktree under the project's local folder
/// `local`. If that fails, the claim is handed back, so a task is never left claimed with
/// nowhere to work on it.
pub fn worktree_for_claim(
    store: &dyn TaskStore,
    local: &Layout,
    agent: &str,
    task: &str,
) -> Result<Worktree> {
    hand_back_on_error(
        store,
        agent,
        task,
        Worktrees::open(local).and_then(|w| w.prepare(task)),
    )
}

impl Worktrees {
    /// [`worktree_for_claim`] with the worktrees opened already (a loop opens them once).
    pub fn prepare_claimed(
        &self,
        store: &dyn TaskStore,
        agent: &str,
        task: &str,
    ) -> Result<Worktree> {
        hand_back_on_error(store, agent, task, self.prepare(task))
    }
}

fn hand_back_on_error(
    store: &dyn TaskStore,
    agent: &str,
    task: &str,
    prepared: Result<Worktree>,
) -> Result<Worktree> {
    if prepared.is_err() {
        // Nothing ran there yet; the release failing too changes nothing for the caller.
        let _ = store.release(agent, task);
    }
    prepared
}

/// Adds the task's branch to its completion ([`record_branch`]). A task id that is not a
/// valid name is refused; a branch that cannot be read does not refuse the completion (the
/// work is done; not knowing its commits is no reason to lose it): the completion's output
/// says so instead.
pub fn record_branch_or_say_why(
    local: &Layout,
    task: &str,
    completion: &mut Completion,
) -> Result<()> {
    local.worktree_dir(task)?;
    if let Err(e) = record_branch(local, task, completion) {
        completion
            .output
            .push_str(&format!("\n(Baton could not read the task's branch: {e})"));
    }
    Ok(())
}
