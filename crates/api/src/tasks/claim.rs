//! Claiming a task: the `task_claim` operation (the best ready task, or the one named; its
//! files respected unless told otherwise; its own worktree when asked for) and what it
//! answers, with the reason when nothing was ready.

use baton_core::{ClaimRequest, Files, Task};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::operation::{Callers, Context, Operation};
use crate::worktrees::{WorktreeInfo, give_worktree};

/// An agent, by name, and the task it wants when it wants a particular one.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct Claim {
    /// Your agent name (letters, digits, '.', '_' and '-').
    pub agent: String,
    /// Claim this task (if it is ready) instead of the best ready one; a task that is not
    /// ready is refused with the reason.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub task: Option<String>,
    /// Take the task even when another agent holds its files (by default a task whose files
    /// another agent reserved is passed over, and the next one taken).
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub ignore_reservations: bool,
    /// Give the task its own git worktree on a branch baton/TASK-ID from the lead's branch
    /// (kept when the task is claimed again); work and commit there. Completing it records the
    /// branch and its commits; the lead merges it.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub worktree: bool,
}

/// What a claim got: the task (null when nothing is ready, with the reason), and the worker it
/// was taken over from when that worker's lease had expired.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ClaimOutcome {
    pub task: Option<Task>,
    /// The worker whose expired lease the task was taken over from.
    pub reclaimed_from: Option<String>,
    /// Why nothing was claimed (null when a task was).
    pub reason: Option<String>,
    /// The task's own worktree, when one was asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worktree: Option<WorktreeInfo>,
}

impl ClaimOutcome {
    pub fn claimed(claim: baton_core::Claimed) -> Self {
        ClaimOutcome {
            task: Some(claim.task),
            reclaimed_from: claim.reclaimed_from,
            reason: None,
            worktree: None,
        }
    }

    pub fn nothing(reason: String) -> Self {
        ClaimOutcome {
            task: None,
            reclaimed_from: None,
            reason: Some(reason),
            worktree: None,
        }
    }

    /// Gives the claimed task (if any) its own worktree; see [`give_worktree`].
    pub fn in_worktree(mut self, cx: &Context, agent: &str) -> Result<Self> {
        if let Some(task) = &self.task {
            self.worktree = Some(give_worktree(cx, agent, &task.id)?);
        }
        Ok(self)
    }
}

impl Operation for Claim {
    const NAME: &'static str = "task_claim";
    const DESCRIPTION: &'static str = "Claim the best ready task (priority 1 first, then oldest) whose files no other agent holds, or the task named. Returns task null when nothing is ready, with the reason.";
    const READ_ONLY: bool = false;
    const CALLERS: Callers = Callers::OWN_WORK;
    type Output = ClaimOutcome;
    fn run(self, cx: &Context) -> Result<ClaimOutcome> {
        crate::inbox::as_agent(cx, &self.agent)?;
        if let Some(task) = &cx.attempt {
            // Its supervisor's worker claims for it; a task claimed from inside an attempt
            // would be held by nobody who works it.
            return Err(crate::Error::new(
                baton_core::ErrorKind::NotYou,
                format!(
                    "this agent works {task} in an attempt its supervisor started, and claims no \
                     other task: its worker claims the next one when this attempt ends"
                ),
            ));
        }
        let files = if self.ignore_reservations {
            Files::Ignore
        } else {
            Files::Respect
        };
        let request = ClaimRequest {
            agent: self.agent.clone(),
            task: self.task.clone(),
            files,
        };
        let outcome = match cx.tasks.claim(&request)? {
            Some(claimed) => ClaimOutcome::claimed(claimed),
            None => ClaimOutcome::nothing(nothing_ready_reason(cx)?),
        };
        match self.worktree {
            true => outcome.in_worktree(cx, &self.agent),
            false => Ok(outcome),
        }
    }
}

/// Why a claim got nothing: the tasks kept back by files others hold, when there are any,
/// else what the counts say.
fn nothing_ready_reason(cx: &Context) -> Result<String> {
    let reason = cx.tasks.nothing_ready_reason()?;
    let held: Vec<String> = cx
        .tasks
        .held_back_by_files(3)?
        .iter()
        .filter_map(|t| Some(format!("{} {}", t.task.id, t.files_note()?)))
        .collect();
    Ok(if held.is_empty() {
        reason
    } else {
        format!("{}; {reason}", held.join("; "))
    })
}
