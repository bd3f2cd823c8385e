//! The task lifecycle as pure operations on a [`TaskFile`]: what may happen to a task, who may
//! do it, and what is recorded. No I/O here; [`crate::project::Project`] runs each operation
//! inside one locked read-modify-write of `tasks.json`.
//!
//! ```text
//! available --claim--> claimed --start--> in_progress --complete--> done
//!     ^                   |                   |--------fail-------> failed
//!     |                   '------fail---------'                       |
//!     '---- release (owner) / reset (leader) / lease expiry ----------'
//! ```

use std::time::Duration;

use serde::Serialize;

use crate::error::{Result, StoreError};
use crate::graph::{StatusIndex, check_dependencies};
use crate::model::{Task, TaskContext, TaskFile, TaskResult, TaskStatus};
use crate::names::{validate_agent_id, validate_task_id};
use crate::text::check_text;
use crate::time::Timestamp;

/// How long a claim lasts without a heartbeat, unless the caller says otherwise.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(15 * 60);

/// The highest priority number accepted (1 is the most urgent).
pub const MAX_PRIORITY: u32 = 1000;

const MAX_DESCRIPTION_BYTES: usize = 64 * 1024;
const MAX_TEXT_BYTES: usize = 1024 * 1024;

/// A task to add. `NewTask::default()` has the default priority (5), like every front end.
#[derive(Debug, Clone)]
pub struct NewTask {
    /// Chosen id; `task-N` with the next free N when absent.
    pub id: Option<String>,
    pub description: String,
    pub priority: u32,
    pub dependencies: Vec<String>,
    pub files: Vec<String>,
    pub hints: String,
}

impl Default for NewTask {
    fn default() -> Self {
        NewTask {
            id: None,
            description: String::new(),
            priority: crate::model::DEFAULT_PRIORITY,
            dependencies: Vec::new(),
            files: Vec::new(),
            hints: String::new(),
        }
    }
}

/// Changes to a task; `None` leaves a field as it is.
#[derive(Debug, Clone, Default)]
pub struct TaskEdit {
    pub description: Option<String>,
    pub priority: Option<u32>,
    pub dependencies: Option<Vec<String>>,
    pub files: Option<Vec<String>>,
    pub hints: Option<String>,
}

/// What a worker reports when it completes a task.
#[derive(Debug, Clone, Default)]
pub struct Completion {
    pub output: String,
    pub files_modified: Vec<String>,
    pub files_created: Vec<String>,
}

/// The outcome of a successful claim.
#[derive(Debug, Clone, Serialize)]
pub struct Claim {
    pub task: Task,
    /// The worker whose lease had expired, when the task was taken over from it.
    pub reclaimed_from: Option<String>,
}

impl TaskFile {
    /// Adds a task after validating its id, text, priority and dependencies.
    pub fn add_task(&mut self, new: NewTask, now: Timestamp) -> Result<&Task> {
        let id = match new.id {
            Some(id) => {
                validate_task_id(&id)?;
                if self.task(&id).is_some() {
                    return Err(StoreError::DuplicateTask { id });
                }
                id
            }
            None => self.next_task_id(),
        };
        check_text("description", &new.description, MAX_DESCRIPTION_BYTES, true)?;
        check_text("hints", &new.hints, MAX_TEXT_BYTES, false)?;
        check_priority(new.priority)?;
        check_paths(&new.files)?;
        let dependencies = dedup(new.dependencies);
        check_dependencies(self, &id, &dependencies)?;
        self.tasks.push(Task {
            id,
            description: new.description.trim().to_string(),
            status: TaskStatus::Available,
            priority: new.priority,
            claimed_by: None,
            dependencies,
            context: TaskContext {
                files: new.files,
                hints: new.hints,
                extra: Default::default(),
            },
            result: None,
            created_at: Some(now),
            claimed_at: None,
            completed_at: None,
            started_at: None,
            lease_expires_at: None,
            attempts: 0,
            failure_reason: None,
            extra: Default::default(),
        });
        Ok(self.tasks.last().expect("just pushed"))
    }

    /// `task-N` with N one past the highest N in use.
    fn next_task_id(&self) -> String {
        let highest = self
            .tasks
            .iter()
            .filter_map(|t| t.id.strip_prefix("task-")?.parse::<u64>().ok())
            .max()
            .unwrap_or(0);
        format!("task-{}", highest + 1)
    }

    /// Edits a task. Dependencies may only change while it is available.
    pub fn edit_task(&mut self, id: &str, edit: TaskEdit) -> Result<&Task> {
        let task = self.existing(id)?;
        if let Some(description) = &edit.description {
            check_text("description", description, MAX_DESCRIPTION_BYTES, true)?;
        }
        if let Some(hints) = &edit.hints {
            check_text("hints", hints, MAX_TEXT_BYTES, false)?;
        }
        if let Some(priority) = edit.priority {
            check_priority(priority)?;
        }
        if let Some(files) = &edit.files {
            check_paths(files)?;
        }
        let dependencies = edit.dependencies.map(dedup);
        if let Some(deps) = &dependencies {
            if task.status != TaskStatus::Available && *deps != task.dependencies {
                return Err(illegal(task, "change the dependencies of", ""));
            }
            // Check against the graph without this task's current edges.
            let mut without = self.clone();
            without.existing_mut(id)?.dependencies.clear();
            check_dependencies(&without, id, deps)?;
        }
        let task = self.existing_mut(id)?;
        if let Some(description) = edit.description {
            task.description = description.trim().to_string();
        }
        if let Some(priority) = edit.priority {
            task.priority = priority;
        }
        if let Some(deps) = dependencies {
            task.dependencies = deps;
        }
        if let Some(files) = edit.files {
            task.context.files = files;
        }
        if let Some(hints) = edit.hints {
            task.context.hints = hints;
        }
        Ok(task)
    }

    /// Claims the best ready task for `agent`: lowest priority number, then oldest. A held task
    /// whose lease has expired counts as ready and is taken over. `None` when nothing is ready.
    pub fn claim_next(
        &mut self,
        agent: &str,
        now: Timestamp,
        lease: Duration,
    ) -> Result<Option<Claim>> {
        validate_agent_id(agent)?;
        let Some(i) = self.best_claimable(now, lease) else {
            return Ok(None);
        };
        Ok(Some(self.take(i, agent, now, lease)))
    }

    /// Claims the task `id` for `agent` if it is ready: available (or held on an expired
    /// lease) with every dependency done. Priority order does not apply: the caller chose.
    pub fn claim_task(
        &mut self,
        agent: &str,
        id: &str,
        now: Timestamp,
        lease: Duration,
    ) -> Result<Claim> {
        validate_agent_id(agent)?;
        let i = self
            .tasks
            .iter()
            .position(|t| t.id == id)
            .ok_or_else(|| unknown(id))?;
        let task = &self.tasks[i];
        if task.status != TaskStatus::Available && !task.lease_expired(now, lease) {
            let hint = match task.status {
                TaskStatus::Claimed | TaskStatus::InProgress => {
                    "; its holder's lease is still running"
                }
                _ => "; only available tasks can be claimed",
            };
            return Err(illegal(task, "claim", hint));
        }
        let blockers = StatusIndex::new(self).blockers(task);
        if !blockers.is_empty() {
            let hint = format!("; it waits for {}", blockers.join(", "));
            return Err(illegal(task, "claim", &hint));
        }
        Ok(self.take(i, agent, now, lease))
    }

    /// Gives task `i` to `agent`, taking it over from a holder whose lease expired.
    fn take(&mut self, i: usize, agent: &str, now: Timestamp, lease: Duration) -> Claim {
        self.touch_agent(agent, now);
        let task = &mut self.tasks[i];
        let reclaimed_from = if task.status.is_held() {
            task.claimed_by.take()
        } else {
            None
        };
        task.status = TaskStatus::Claimed;
        task.claimed_by = Some(agent.to_string());
        task.claimed_at = Some(now);
        task.started_at = None;
        task.lease_expires_at = Some(now.after(lease));
        task.attempts += 1;
        Claim {
            task: task.clone(),
            reclaimed_from,
        }
    }

    /// The index of the task `claim_next` would take now: available (or held on an expired
    /// lease) with every dependency done; best priority, then oldest, then first in the file.
    pub(crate) fn best_claimable(&self, now: Timestamp, lease: Duration) -> Option<usize> {
        let index = StatusIndex::new(self);
        self.tasks
            .iter()
            .enumerate()
            .filter(|(_, t)| {
                (t.status == TaskStatus::Available || t.lease_expired(now, lease))
                    && index.dependencies_done(t)
            })
            .min_by_key(|(i, t)| (t.priority, t.created_at, *i))
            .map(|(i, _)| i)
    }

    /// The owner starts work on a claimed task; renews its lease.
    pub fn start(
        &mut self,
        agent: &str,
        id: &str,
        now: Timestamp,
        lease: Duration,
    ) -> Result<&Task> {
        let task = self.owned(agent, id, "start", &[TaskStatus::Claimed])?;
        task.status = TaskStatus::InProgress;
        task.started_at = Some(now);
        task.lease_expires_at = Some(now.after(lease));
        self.touch_agent(agent, now);
        self.existing(id)
    }

    /// The owner completes a task in progress.
    pub fn complete(
        &mut self,
        agent: &str,
        id: &str,
        report: Completion,
        now: Timestamp,
    ) -> Result<&Task> {
        check_text("summary", &report.output, MAX_TEXT_BYTES, true)?;
        check_paths(&report.files_modified)?;
        check_paths(&report.files_created)?;
        let task = self.owned(agent, id, "complete", &[TaskStatus::InProgress])?;
        task.status = TaskStatus::Done;
        task.completed_at = Some(now);
        task.lease_expires_at = None;
        task.result = Some(TaskResult {
            output: Some(report.output),
            files_modified: report.files_modified,
            files_created: report.files_created,
            ..TaskResult::default()
        });
        self.touch_agent(agent, now);
        self.existing(id)
    }

    /// The owner gives up on a claimed or in-progress task, saying why.
    pub fn fail(&mut self, agent: &str, id: &str, reason: &str, now: Timestamp) -> Result<&Task> {
        check_text("reason", reason, MAX_TEXT_BYTES, true)?;
        let task = self.owned(
            agent,
            id,
            "fail",
            &[TaskStatus::Claimed, TaskStatus::InProgress],
        )?;
        task.status = TaskStatus::Failed;
        task.completed_at = Some(now);
        task.lease_expires_at = None;
        task.failure_reason = Some(reason.to_string());
        task.result = Some(TaskResult {
            error: Some(reason.to_string()),
            ..TaskResult::default()
        });
        self.touch_agent(agent, now);
        self.existing(id)
    }

    /// The owner hands a held task back, untouched, for another worker to claim.
    pub fn release(&mut self, agent: &str, id: &str, now: Timestamp) -> Result<&Task> {
        let task = self.owned(
            agent,
            id,
            "release",
            &[TaskStatus::Claimed, TaskStatus::InProgress],
        )?;
        make_available(task);
        self.touch_agent(agent, now);
        self.existing(id)
    }

    /// Renews the lease on every task `agent` holds and records it as alive. Returns the ids.
    pub fn heartbeat(
        &mut self,
        agent: &str,
        now: Timestamp,
        lease: Duration,
    ) -> Result<Vec<String>> {
        validate_agent_id(agent)?;
        self.touch_agent(agent, now);
        let mut renewed = Vec::new();
        for task in &mut self.tasks {
            if task.status.is_held() && task.claimed_by.as_deref() == Some(agent) {
                task.lease_expires_at = Some(now.after(lease));
                renewed.push(task.id.clone());
            }
        }
        Ok(renewed)
    }

    /// The leader puts a failed, cancelled or stale task back to available. A task held under a
    /// live lease needs `force`; a done task stays done.
    pub fn reset(
        &mut self,
        id: &str,
        now: Timestamp,
        lease: Duration,
        force: bool,
    ) -> Result<&Task> {
        let task = self.existing(id)?;
        match task.status {
            TaskStatus::Failed | TaskStatus::Cancelled => {}
            TaskStatus::Claimed | TaskStatus::InProgress
                if force || task.lease_expired(now, lease) => {}
            TaskStatus::Claimed | TaskStatus::InProgress => {
                let left = task
                    .lease_end(lease)
                    .map(|end| crate::time::short_duration(end.remaining(now)))
                    .unwrap_or_default();
                return Err(illegal(
                    task,
                    "reset",
                    &format!(
                        " with {left} left on its lease; wait for it to expire or pass --force"
                    ),
                ));
            }
            TaskStatus::Available => {
                return Err(illegal(task, "reset", "; it can be claimed already"));
            }
            TaskStatus::Done => {
                return Err(illegal(
                    task,
                    "reset",
                    "; done tasks stay done, add a new task to redo the work",
                ));
            }
        }
        let task = self.existing_mut(id)?;
        make_available(task);
        task.completed_at = None;
        task.result = None;
        task.failure_reason = None;
        Ok(task)
    }

    /// The leader cancels a task that is not finished (available, claimed or in progress):
    /// the work is no longer wanted. Cancelled is final, like failed; `reset` makes it
    /// available again. Tasks that wait on it can then never become ready (`doctor` says so).
    pub fn cancel(&mut self, id: &str, reason: Option<&str>, now: Timestamp) -> Result<&Task> {
        if let Some(reason) = reason {
            check_text("reason", reason, MAX_TEXT_BYTES, false)?;
        }
        let task = self.existing_mut(id)?;
        if task.status.is_final() {
            let hint = match task.status {
                TaskStatus::Cancelled => "; it is cancelled already",
                _ => "; only unfinished tasks can be cancelled",
            };
            return Err(illegal(task, "cancel", hint));
        }
        let reason = reason
            .map(str::trim)
            .filter(|r| !r.is_empty())
            .unwrap_or("cancelled by the leader")
            .to_string();
        task.status = TaskStatus::Cancelled;
        drop_holder(task);
        task.completed_at = Some(now);
        task.failure_reason = Some(reason.clone());
        task.result = Some(TaskResult {
            error: Some(reason),
            ..TaskResult::default()
        });
        Ok(task)
    }

    fn existing(&self, id: &str) -> Result<&Task> {
        self.task(id).ok_or_else(|| unknown(id))
    }

    fn existing_mut(&mut self, id: &str) -> Result<&mut Task> {
        self.task_mut(id).ok_or_else(|| unknown(id))
    }

    /// The task `id`, if `agent` holds it and it is in one of `allowed`.
    fn owned(
        &mut self,
        agent: &str,
        id: &str,
        action: &'static str,
        allowed: &[TaskStatus],
    ) -> Result<&mut Task> {
        validate_agent_id(agent)?;
        let task = self.existing_mut(id)?;
        if !allowed.contains(&task.status) {
            let hint = match (action, task.status) {
                ("start", TaskStatus::InProgress) => "; it is started already".to_string(),
                (_, TaskStatus::Available) => {
                    format!("; claim it first with `baton worker claim {agent}`")
                }
                ("complete", TaskStatus::Claimed) => {
                    format!("; start it first with `baton worker start {agent} {id}`")
                }
                _ => String::new(),
            };
            return Err(illegal(task, action, &hint));
        }
        if task.claimed_by.as_deref() != Some(agent) {
            return Err(StoreError::NotOwner {
                task: task.id.clone(),
                action,
                status: task.status,
                owner: task.claimed_by.clone().unwrap_or_else(|| "nobody".into()),
                agent: agent.to_string(),
                hint: "; if it was yours, your lease expired and another worker took it over"
                    .to_string(),
            });
        }
        Ok(task)
    }
}

fn make_available(task: &mut Task) {
    task.status = TaskStatus::Available;
    drop_holder(task);
}

/// Forgets who held the task and since when.
fn drop_holder(task: &mut Task) {
    task.claimed_by = None;
    task.claimed_at = None;
    task.started_at = None;
    task.lease_expires_at = None;
}

fn unknown(id: &str) -> StoreError {
    StoreError::UnknownTask {
        id: id.chars().take(80).collect(),
    }
}

fn illegal(task: &Task, action: &'static str, hint: &str) -> StoreError {
    StoreError::IllegalTransition {
        task: task.id.clone(),
        action,
        status: task.status,
        owner: task.claimed_by.clone(),
        hint: hint.to_string(),
    }
}

fn dedup(mut ids: Vec<String>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    ids.retain(|id| seen.insert(id.clone()));
    ids
}

fn check_priority(priority: u32) -> Result<()> {
    if (1..=MAX_PRIORITY).contains(&priority) {
        Ok(())
    } else {
        Err(StoreError::InvalidInput {
            field: "priority",
            reason: format!("{priority} is outside 1..={MAX_PRIORITY} (1 is the most urgent)"),
        })
    }
}

/// File names listed in a task's context or result: one line each, no control characters.
fn check_paths(paths: &[String]) -> Result<()> {
    for path in paths {
        if path.is_empty() || path.len() > 4096 || path.chars().any(char::is_control) {
            return Err(StoreError::InvalidInput {
                field: "file",
                reason: format!(
                    "{:?} is not a usable file name",
                    path.chars().take(80).collect::<String>()
                ),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
