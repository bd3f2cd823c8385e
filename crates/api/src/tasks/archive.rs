//! Landed work off the live board ([`baton_core::archive`]): which done tasks have landed is
//! git's to say (a task's branch merged into the lead's checkout, or gone), so the choice is
//! made here, where the repository is known, and the store moves what is chosen. The lead asks
//! for it (`baton leader archive`); [`archive_quiet`] does it without being asked, for what
//! has been quiet for [`QUIET_PERIOD`].

use std::collections::BTreeSet;
use std::time::Duration;

use baton_core::archive::{ArchiveReport, QUIET_PERIOD, archivable};
use baton_core::{Layout, Task, TaskStore};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::operation::{Callers, Context, Operation};

/// Move landed work off the live board.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct Archive {
    /// Only what finished at least this long ago: seconds in a tool call, a duration such as
    /// 7d on the command line. Default: everything that has landed.
    #[serde(default)]
    #[cfg_attr(
        feature = "cli",
        arg(long = "older-than", value_name = "DURATION", value_parser = crate::durations::parse_seconds)
    )]
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub older_than_seconds: Option<u64>,
    /// Say what would move, and move nothing.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub dry_run: bool,
}

impl Operation for Archive {
    const NAME: &'static str = "task_archive";
    const DESCRIPTION: &'static str = "Move landed work off the live board: done tasks whose branch is in the lead's checkout (or that had none) and cancelled ones, that no live task depends on, to .coordination/archive/ (a database keeps its rows). Listed again with task_status all=true; dry_run=true says what would move (leader).";
    const READ_ONLY: bool = false;
    const CALLERS: Callers = Callers::LEAD;
    type Output = ArchiveReport;
    fn run(self, cx: &Context) -> Result<ArchiveReport> {
        let quiet = Duration::from_secs(self.older_than_seconds.unwrap_or(0));
        archive_landed(cx.tasks, cx.local, quiet, self.dry_run)
    }
}

/// Moves the landed work of `tasks` quiet for `quiet` to the archive (or, `dry_run`, says
/// what would move).
pub fn archive_landed(
    tasks: &dyn TaskStore,
    local: &Layout,
    quiet: Duration,
    dry_run: bool,
) -> Result<ArchiveReport> {
    let unlanded = unlanded_branches(local);
    let landed = |task: &Task| match task.result.as_ref().and_then(|r| r.branch.as_ref()) {
        Some(branch) if !branch.commits.is_empty() => match &unlanded {
            Some(unlanded) => !unlanded.contains(&branch.name),
            // No repository to ask: its work is not known to have landed.
            None => false,
        },
        _ => true,
    };
    Ok(tasks.archive(&|file, now| archivable(file, now, quiet, &landed), dry_run)?)
}

/// Archives what has been quiet for [`QUIET_PERIOD`], as Baton does without being asked.
pub fn archive_quiet(tasks: &dyn TaskStore, local: &Layout) -> Result<ArchiveReport> {
    archive_landed(tasks, local, QUIET_PERIOD, false)
}

/// The task branches (`baton/*`) not in the lead's checkout yet; `None` without a repository.
fn unlanded_branches(local: &Layout) -> Option<BTreeSet<String>> {
    let repo = baton_git::repo::Repo::discover(local.project_dir()).ok()?;
    let (all, merged) = repo.branches("baton/*").ok()?;
    Some(all.difference(&merged).cloned().collect())
}
