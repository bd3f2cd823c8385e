//! The project's check (the command `.coordination/review.toml` names, say `cargo test`) run
//! on one commit of a task's branch: in the task's worktree before the lead merges it
//! (`baton-api`'s `review_check` and `task_merge`), or in the merge queue's checkout on the
//! branch merged with the lead's ([`crate::merge_queue`]). It runs to its end or its time
//! limit, and its outcome is a [`CheckRun`] for the task's review record.

use std::time::{Duration, Instant};

use baton_core::review::{CheckRun, MAX_CHECK_OUTPUT, ReviewSettings};
use baton_core::{ErrorKind, Timestamp};

use crate::error::{Result, TeamError};
use crate::exec::{RunningCommand, TaskEnv};

/// Runs `command` (the project's check, under `settings`' time limit) for the task and
/// worktree `env` gives, on commit `head`.
pub fn run_check_command(
    command: &str,
    settings: &ReviewSettings,
    env: &TaskEnv<'_>,
    head: &str,
) -> Result<CheckRun> {
    let started_at = Timestamp::now();
    let clock = Instant::now();
    let running = RunningCommand::start(command, env)?;
    let limit = Duration::from_secs_f64(settings.check_timeout_minutes * 60.0);
    let (status, timed_out) = match running.wait_timeout(limit) {
        Some(status) => (status, false),
        None => (
            running
                .stop(Duration::from_secs(5))
                .unwrap_or_else(|| Err(std::io::Error::other("it could not be stopped"))),
            true,
        ),
    };
    let status = status.map_err(|e| {
        TeamError::new(
            ErrorKind::Io,
            format!("the check `{command}` could not be waited for: {e}"),
        )
    })?;
    let finished = running.finish(status);
    let mut output = format!("{}{}", finished.stdout, finished.stderr);
    if timed_out {
        output.push_str(&format!(
            "\n[stopped after {} minutes: check_timeout_minutes in review.toml]",
            settings.check_timeout_minutes
        ));
    }
    Ok(CheckRun {
        command: command.to_string(),
        head: head.to_string(),
        passed: status.success() && !timed_out,
        exit_code: status.code(),
        output: baton_core::text::suffix(&output, MAX_CHECK_OUTPUT).to_string(),
        started_at,
        duration_ms: u64::try_from(clock.elapsed().as_millis()).unwrap_or(u64::MAX),
    })
}
