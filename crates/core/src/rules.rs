//! What may happen to one task, decided from that task alone: who may start, complete, fail or
//! release it, when a lease counts as expired, what a reset or a cancel may undo, and what each
//! change records. Every store applies these to the one task an operation changes, the file
//! store inside its read-modify-write of `tasks.json`, so the rules are written once whatever
//! holds the tasks. What needs the other tasks (ids, dependencies, which task a claim picks)
//! is the caller's: [`crate::lifecycle`] for the file.
//!
//! One check needs a little of the others, and is still written here once: a claim of a task
//! named by the caller ([`check_named_claim`]), given the task's unfinished dependencies as
//! the store found them.

use std::time::Duration;

use crate::error::{Result, StoreError};
use crate::model::{Task, TaskResult, TaskStatus};
use crate::names::validate_agent_id;
use crate::requests::{Completion, Reopen};
use crate::text::{MAX_TEXT_BYTES, check_paths, check_text};
use crate::time::Timestamp;

impl Task {
    /// Whether a claim may take this task now, as far as it alone goes: available, or held on
    /// an expired lease (its dependencies are the caller's to check).
    pub fn is_claimable(&self, now: Timestamp, lease: Duration) -> bool {
        self.status == TaskStatus::Available || self.lease_expired(now, lease)
    }

    /// Refuses a claim of this task unless [`Task::is_claimable`], saying why.
    pub fn check_claimable(&self, now: Timestamp, lease: Duration) -> Result<()> {
        if self.is_claimable(now, lease) {
            return Ok(());
        }
        let hint = match self.status {
            TaskStatus::Claimed | TaskStatus::InProgress => "; its holder's lease is still running",
            _ => "; only available tasks can be claimed",
        };
        Err(illegal(self, "claim", hint))
    }

    /// Gives the task to `agent` under a new lease; returns the holder it was taken over from
    /// when that holder's lease had expired.
    pub fn take(&mut self, agent: &str, now: Timestamp, lease: Duration) -> Option<String> {
        let reclaimed_from = if self.status.is_held() {
            self.claimed_by.take().filter(|holder| holder != agent)
        } else {
            None
        };
        self.sent_back = false;
        hold_for(self, agent.to_string(), now, lease);
        self.attempts += 1;
        reclaimed_from
    }

    /// The owner starts work on the claimed task; renews its lease.
    pub fn start(&mut self, agent: &str, now: Timestamp, lease: Duration) -> Result<()> {
        self.check_owner(agent, "start", &[TaskStatus::Claimed])?;
        self.status = TaskStatus::InProgress;
        self.sent_back = false;
        self.started_at = Some(now);
        self.lease_expires_at = Some(now.after(lease));
        Ok(())
    }

    /// The owner completes the task in progress, with its report.
    pub fn complete(&mut self, agent: &str, report: Completion, now: Timestamp) -> Result<()> {
        check_text("summary", &report.output, MAX_TEXT_BYTES, true)?;
        check_paths(&report.files_modified)?;
        check_paths(&report.files_created)?;
        self.check_owner(agent, "complete", &[TaskStatus::InProgress])?;
        self.status = TaskStatus::Done;
        self.completed_at = Some(now);
        self.lease_expires_at = None;
        self.result = Some(Box::new(TaskResult {
            output: Some(report.output),
            files_modified: report.files_modified,
            files_created: report.files_created,
            branch: report.branch,
            ..TaskResult::default()
        }));
        Ok(())
    }

    /// The owner gives up on the claimed or in-progress task, saying why.
    pub fn fail(&mut self, agent: &str, reason: &str, now: Timestamp) -> Result<()> {
        check_text("reason", reason, MAX_TEXT_BYTES, true)?;
        self.check_owner(
            agent,
            "fail",
            &[TaskStatus::Claimed, TaskStatus::InProgress],
        )?;
        self.status = TaskStatus::Failed;
        self.sent_back = false;
        self.completed_at = Some(now);
        self.lease_expires_at = None;
        self.failure_reason = Some(reason.to_string());
        self.result = Some(Box::new(TaskResult {
            error: Some(reason.to_string()),
            ..TaskResult::default()
        }));
        Ok(())
    }

    /// The owner hands the held task back, untouched, for another worker to claim.
    pub fn release(&mut self, agent: &str) -> Result<()> {
        self.check_owner(
            agent,
            "release",
            &[TaskStatus::Claimed, TaskStatus::InProgress],
        )?;
        make_available(self);
        Ok(())
    }

    /// Renews the lease when `agent` holds the task; whether it did.
    pub fn renew(&mut self, agent: &str, now: Timestamp, lease: Duration) -> bool {
        let held = self.is_held_by(agent);
        if held {
            self.lease_expires_at = Some(now.after(lease));
        }
        held
    }

    /// The lead approves a proposed task (one of a plan): it becomes available to claim.
    pub fn approve(&mut self) -> Result<()> {
        if self.status != TaskStatus::Proposed {
            return Err(illegal(
                self,
                "approve",
                "; only a proposed task (one of a plan the lead has not approved) is approved",
            ));
        }
        self.status = TaskStatus::Available;
        Ok(())
    }

    /// The leader puts a failed, cancelled or stale task back to available. A task held under
    /// a live lease needs `force`; a done task stays done.
    pub fn reset(&mut self, now: Timestamp, lease: Duration, force: bool) -> Result<()> {
        match self.status {
            TaskStatus::Proposed => {
                return Err(illegal(
                    self,
                    "reset",
                    "; it is proposed: approve it (`baton leader approve`) to make it available",
                ));
            }
            TaskStatus::Failed | TaskStatus::Cancelled => {}
            TaskStatus::Claimed | TaskStatus::InProgress
                if force || self.lease_expired(now, lease) => {}
            TaskStatus::Claimed | TaskStatus::InProgress => {
                let left = self
                    .lease_end(lease)
                    .map(|end| crate::time::short_duration(end.remaining(now)))
                    .unwrap_or_default();
                return Err(illegal(
                    self,
                    "reset",
                    &format!(
                        " with {left} left on its lease; wait for it to expire or pass --force"
                    ),
                ));
            }
            TaskStatus::Available => {
                return Err(illegal(self, "reset", "; it can be claimed already"));
            }
            TaskStatus::Done => {
                return Err(illegal(
                    self,
                    "reset",
                    "; done tasks stay done, add a new task to redo the work",
                ));
            }
        }
        make_available(self);
        self.completed_at = None;
        self.result = None;
        self.failure_reason = None;
        self.reset_at = Some(now);
        Ok(())
    }

    /// Whether this task was sent back for changes to `agent` and waits for its claim (within
    /// the lease: after it, the task is claimable by anyone, `agent` too).
    pub fn is_sent_back_to(&self, agent: &str, now: Timestamp, lease: Duration) -> bool {
        self.sent_back
            && self.status == TaskStatus::Claimed
            && self.claimed_by.as_deref() == Some(agent)
            && !self.lease_expired(now, lease)
    }

    /// The leader sends a done task back for more work (a review's requested changes): its
    /// result set aside, `request` added to its hints so whoever works it next reads what to
    /// change, and, `to` its worker, held for the worker that did it (claimed for it with a
    /// new lease, [`Task::sent_back`]); to anyone, available. Only a done task is reopened.
    pub fn reopen(
        &mut self,
        request: &str,
        to: Reopen,
        now: Timestamp,
        lease: Duration,
    ) -> Result<()> {
        if self.status != TaskStatus::Done {
            return Err(illegal(
                self,
                "reopen",
                "; only a done task is sent back for changes",
            ));
        }
        let hints = match self.context.hints.trim() {
            "" => request.trim().to_string(),
            before => format!("{before}\n\n{}", request.trim()),
        };
        check_text("hints", &hints, MAX_TEXT_BYTES, false)?;
        let worker = self
            .claimed_by
            .clone()
            .filter(|_| to == Reopen::ToItsWorker);
        make_available(self);
        self.context.hints = hints;
        self.completed_at = None;
        self.result = None;
        self.reset_at = Some(now);
        if let Some(worker) = worker {
            hold_for(self, worker, now, lease);
            self.sent_back = true;
        }
        Ok(())
    }

    /// The leader cancels the task while it is not finished (available, claimed or in
    /// progress): the work is no longer wanted. Cancelled is final, like failed; a reset makes
    /// it available again.
    pub fn cancel(&mut self, reason: Option<&str>, now: Timestamp) -> Result<()> {
        if let Some(reason) = reason {
            check_text("reason", reason, MAX_TEXT_BYTES, false)?;
        }
        if self.status.is_final() {
            let hint = match self.status {
                TaskStatus::Cancelled => "; it is cancelled already",
                _ => "; only unfinished tasks can be cancelled",
            };
            return Err(illegal(self, "cancel", hint));
        }
        let reason = reason
            .map(str::trim)
            .filter(|r| !r.is_empty())
            .unwrap_or("cancelled by the leader")
            .to_string();
        self.status = TaskStatus::Cancelled;
        drop_holder(self);
        self.completed_at = Some(now);
        self.failure_reason = Some(reason.clone());
        self.result = Some(Box::new(TaskResult {
            error: Some(reason),
            ..TaskResult::default()
        }));
        Ok(())
    }

    /// Refuses `action` unless `agent` holds the task and it is in one of `allowed`.
    fn check_owner(&self, agent: &str, action: &'static str, allowed: &[TaskStatus]) -> Result<()> {
        validate_agent_id(agent)?;
        let owner = self.claimed_by.as_deref();
        // Held by another agent: whatever the action, the news is that the task is not this
        // agent's any more (advice about its state would be advice for the new holder).
        if owner != Some(agent) && (self.status.is_held() || allowed.contains(&self.status)) {
            return Err(StoreError::NotOwner {
                task: self.id.clone(),
                action,
                status: self.status,
                owner: owner.unwrap_or("nobody").to_string(),
                agent: agent.to_string(),
                hint: taken_over(agent),
            });
        }
        if !allowed.contains(&self.status) {
            let hint = match (action, self.status) {
                ("start", TaskStatus::InProgress) => "; it is started already".to_string(),
                (_, TaskStatus::Available) => format!(
                    "; claim it first with `baton worker claim {agent} --task {}` (if you were \
                     working on it, your lease expired and it was released: claiming it again \
                     goes on with it)",
                    self.id
                ),
                ("complete", TaskStatus::Claimed) => {
                    format!(
                        "; start it first with `baton worker start {agent} {}`",
                        self.id
                    )
                }
                (_, status) if status.is_final() && owner != Some(agent) => taken_over(agent),
                _ => String::new(),
            };
            return Err(illegal(self, action, &hint));
        }
        Ok(())
    }
}

/// What a worker that lost its task reads: why, and what to do with its partial work.
fn taken_over(agent: &str) -> String {
    format!(
        "; if it was yours, your lease expired (no heartbeat in time) and it was taken over: \
         record your partial work with `baton discover \"…\" --agent {agent}`, tell the lead, \
         and claim other work"
    )
}

/// Claimed for `agent` from `now`, under a new lease, not started.
fn hold_for(task: &mut Task, agent: String, now: Timestamp, lease: Duration) {
    task.status = TaskStatus::Claimed;
    task.claimed_by = Some(agent);
    task.claimed_at = Some(now);
    task.started_at = None;
    task.lease_expires_at = Some(now.after(lease));
}

fn make_available(task: &mut Task) {
    task.status = TaskStatus::Available;
    drop_holder(task);
}

/// Forgets who held the task and since when.
fn drop_holder(task: &mut Task) {
    task.sent_back = false;
    task.claimed_by = None;
    task.claimed_at = None;
    task.started_at = None;
    task.lease_expires_at = None;
}

/// The refusal of `action` on `task` in its present state, with a hint of what to do.
pub fn illegal(task: &Task, action: &'static str, hint: &str) -> StoreError {
    StoreError::IllegalTransition {
        task: task.id.clone(),
        action,
        status: task.status,
        owner: task.claimed_by.clone(),
        hint: hint.to_string(),
    }
}

/// Refuses a claim of `task` chosen by name unless it is ready: claimable now (available, or
/// held on an expired lease) and waiting for none of `blockers` (its dependencies that are not
/// done, in its order, as the store found them). Whether its files are free is
/// [`crate::reservations::refuse_held`]'s, checked after this.
pub fn check_named_claim(
    task: &Task,
    blockers: &[&str],
    now: Timestamp,
    lease: Duration,
) -> Result<()> {
    task.check_claimable(now, lease)?;
    if blockers.is_empty() {
        return Ok(());
    }
    let hint = format!("; it waits for {}", blockers.join(", "));
    Err(illegal(task, "claim", &hint))
}
