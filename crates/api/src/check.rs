//! The project's check before a merge: the command `.coordination/review.toml` names (say
//! `cargo test`), run in the task's worktree on its branch's commit, its outcome kept in the
//! task's review record. `task_merge` runs it for each task unless a run on the same commit
//! passed already, and a failing check stops the merge of that task; `review_check` runs it on
//! demand (the Review view's "Run check").
//!
//! The command is the user's own file's, never a request's: an agent may ask for the check,
//! not choose what runs.

use baton_core::review::{CheckRun, ReviewSettings, record_check};
use baton_core::{ErrorKind, LEAD};
use baton_git::Worktrees;
use baton_team::TaskEnv;
use baton_team::run_check_command;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::operation::{Callers, Context, Operation};
use crate::review::{settings, task_named};

/// Run the project's check on a task's branch.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunCheck {
    /// The task's id.
    pub task: String,
}

/// A check's outcome.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CheckOutcome {
    pub task: String,
    pub check: CheckRun,
}

impl Operation for RunCheck {
    const NAME: &'static str = "review_check";
    const DESCRIPTION: &'static str = "Run the project's check command (.coordination/review.toml, such as `cargo test`) in a task's worktree, on its branch's latest commit, and record the outcome (exit code, the end of its output, how long it took) in the task's review; task_merge needs it to pass.";
    const READ_ONLY: bool = false;
    const CALLERS: Callers = Callers::LEAD;
    type Output = CheckOutcome;
    fn run(self, cx: &Context) -> Result<CheckOutcome> {
        let task = task_named(cx, &self.task)?;
        let Some(check) = run_check(cx, &task, &settings(cx)?)? else {
            return Err(Error::new(
                ErrorKind::InvalidArguments,
                format!(
                    "the project has no check command: put `check = \"cargo test\"` (or yours) \
                     in {}",
                    baton_core::review::review_settings_path(cx.local.root()).display()
                ),
            ));
        };
        Ok(CheckOutcome {
            task: task.id,
            check,
        })
    }
}

/// Runs the project's check (`settings`) on `task`'s branch in its worktree (made again from
/// its branch if it was removed) and records it; `None` when the project has no check command.
pub fn run_check(
    cx: &Context,
    task: &baton_core::Task,
    settings: &ReviewSettings,
) -> Result<Option<CheckRun>> {
    let Some(command) = settings.check.clone() else {
        return Ok(None);
    };
    let worktrees = Worktrees::open(cx.local)?;
    let (_, head) = worktrees.branch_head(&task.id)?;
    let worktree = worktrees.prepare(&task.id)?;
    let result_path = cx.local.result_file(&task.id)?;
    let env = TaskEnv {
        agent: LEAD,
        task,
        project_dir: cx.local.project_dir(),
        result_path: &result_path,
        worktree: Some(&worktree),
    };
    let run = run_check_command(&command, settings, &env, &head)?;
    record_check(cx.documents.as_ref(), &task.id, &run)?;
    Ok(Some(run))
}
