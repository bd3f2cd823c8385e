//! The task lifecycle on a [`TaskFile`]: adding and editing tasks (ids, dependencies, cycles),
//! choosing the task a claim takes, and applying [`crate::rules`] (what may happen to one task,
//! written once for every store) to the task an operation names. No I/O here: the folder
//! store runs each operation inside one locked read-modify-write of `tasks.json`, and the
//! database store applies the same rules to the rows an operation locks.
//!
//! ```text
//! available --claim--> claimed --start--> in_progress --complete--> done
//!     ^                   |                   |--------fail-------> failed
//!     |                   '------fail---------'                       |
//!     '---- release (owner) / reset (leader) / lease expiry ----------'
//! ```

use std::time::Duration;

use crate::error::{Result, StoreError};
use crate::graph::{StatusIndex, check_dependencies};
use crate::model::{Task, TaskContext, TaskFile, TaskStatus};
use crate::names::{validate_agent_id, validate_task_id};
use crate::requests::{
    ClaimRequest, Claimed, Completion, Files, MAX_PRIORITY, NewTask, Reopen, TaskEdit,
};
use crate::rules::illegal;
use crate::text::{MAX_DESCRIPTION_BYTES, MAX_TEXT_BYTES, check_paths, check_text};
use crate::time::Timestamp;

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
        let acceptance = acceptance_of(new.acceptance)?;
        check_priority(new.priority)?;
        check_paths(&new.files)?;
        let dependencies = dedup(new.dependencies);
        check_dependencies(self, &id, &dependencies).map_err(|e| match e {
            StoreError::UnknownDependency { dependency, .. } => {
                StoreError::NewTaskUnknownDependency { dependency }
            }
            other => other,
        })?;
        self.tasks.push(Task {
            id,
            description: new.description.trim().to_string(),
            status: match new.proposed {
                true => TaskStatus::Proposed,
                false => TaskStatus::Available,
            },
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
            reset_at: None,
            sent_back: false,
            acceptance,
            kind: new.kind,
            plan: new.plan,
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

    /// Edits a task. Dependencies may only change while it is available (or proposed).
    pub fn edit_task(&mut self, id: &str, edit: TaskEdit) -> Result<&Task> {
        let task = self.existing(id)?;
        if let Some(description) = &edit.description {
            check_text("description", description, MAX_DESCRIPTION_BYTES, true)?;
        }
        if let Some(hints) = &edit.hints {
            check_text("hints", hints, MAX_TEXT_BYTES, false)?;
        }
        let acceptance = edit
            .acceptance
            .map(|text| acceptance_of(Some(text)))
            .transpose()?;
        if let Some(priority) = edit.priority {
            check_priority(priority)?;
        }
        if let Some(files) = &edit.files {
            check_paths(files)?;
        }
        let dependencies = edit.dependencies.map(dedup);
        if let Some(deps) = &dependencies {
            let open = matches!(task.status, TaskStatus::Available | TaskStatus::Proposed);
            if !open && *deps != task.dependencies {
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
        if let Some(acceptance) = acceptance {
            task.acceptance = acceptance;
        }
        Ok(task)
    }

    /// Claims a task for `request.agent`. Without a named task: one sent back to the agent for
    /// changes ([`Task::is_sent_back_to`]) if there is one, else the best ready one (lowest
    /// priority number, then oldest; a held task whose lease has expired counts as ready and
    /// is taken over), `None` when nothing is ready; a ready task whose files overlap another
    /// agent's exclusive reservation is passed over for the next one (unless the request
    /// ignores reservations), and taken once the files are free. With a named task: that
    /// task if it is ready ([`crate::rules::check_named_claim`]), refused with the reason if not.
    pub fn claim(
        &mut self,
        request: &ClaimRequest,
        now: Timestamp,
        lease: Duration,
    ) -> Result<Option<Claimed>> {
        Ok(self
            .choose(request, now, lease)?
            .map(|i| self.take(i, &request.agent, now, lease)))
    }

    /// The index of the task [`Self::claim`] would take for `request` now, changing nothing.
    /// Of an unnamed claim's candidates it reads only what [`Task::read_for_choosing`] keeps
    /// (a store may choose among tasks read so, and read in full only the one it takes); a
    /// named task is read whole.
    pub fn choose(
        &self,
        request: &ClaimRequest,
        now: Timestamp,
        lease: Duration,
    ) -> Result<Option<usize>> {
        let agent = request.agent.as_str();
        validate_agent_id(agent)?;
        Ok(match &request.task {
            // A task sent back to this agent for changes comes first: it holds it already.
            None => self
                .tasks
                .iter()
                .position(|t| t.is_sent_back_to(agent, now, lease))
                .or_else(|| self.best_claimable(Some(agent), request.files, now, lease)),
            Some(id) => {
                let i = self.named(id).ok_or_else(|| unknown(id))?;
                let task = &self.tasks[i];
                let blockers = StatusIndex::new(self).blockers(task);
                crate::rules::check_named_claim(task, &blockers, now, lease)?;
                if request.files == Files::Respect {
                    let active = self.active_reservations(now, lease);
                    crate::reservations::refuse_held(&crate::reservations::task_conflicts(
                        &active,
                        task,
                        Some(agent),
                    ))?;
                }
                Some(i)
            }
        })
    }

    /// The index of task `id` on the board.
    pub fn named(&self, id: &str) -> Option<usize> {
        self.tasks.iter().position(|t| t.id == id)
    }

    /// Gives task `i` (one [`Self::choose`] chose) to `agent`, taking it over from a holder
    /// whose lease expired.
    ///
    /// # Panics
    /// If `i` is not a task of the board.
    pub fn take(&mut self, i: usize, agent: &str, now: Timestamp, lease: Duration) -> Claimed {
        self.touch_agent(agent, now);
        let task = self.tasks.get_mut(i).expect("a task of the board");
        let reclaimed_from = task.take(agent, now, lease);
        Claimed {
            task: task.clone(),
            reclaimed_from,
        }
    }

    /// The index of the task `claim_next` would take now for `agent` (`None`: for anybody):
    /// available (or held on an expired lease) with every dependency done and, unless `files`
    /// says otherwise, no file another agent holds exclusively; best priority, then oldest,
    /// then first in the file.
    pub(crate) fn best_claimable(
        &self,
        agent: Option<&str>,
        files: Files,
        now: Timestamp,
        lease: Duration,
    ) -> Option<usize> {
        let index = StatusIndex::new(self);
        let mut ready: Vec<(usize, &Task)> = self
            .tasks
            .iter()
            .enumerate()
            .filter(|(_, t)| {
                t.kind.is_work() && t.is_claimable(now, lease) && index.dependencies_done(t)
            })
            .collect();
        let active = match files {
            Files::Respect => self.active_reservations(now, lease),
            Files::Ignore => Vec::new(),
        };
        if active.iter().all(|r| Some(r.agent.as_str()) == agent) {
            return ready
                .into_iter()
                .min_by_key(|(i, t)| (t.priority, t.created_at, *i))
                .map(|(i, _)| i);
        }
        ready.sort_by_key(|(i, t)| (t.priority, t.created_at, *i));
        ready
            .into_iter()
            .find(|(_, t)| crate::reservations::task_conflicts(&active, t, agent).is_empty())
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
        self.change(id, Some((agent, now)), |task| task.start(agent, now, lease))
    }

    /// The owner completes a task in progress.
    pub fn complete(
        &mut self,
        agent: &str,
        id: &str,
        report: Completion,
        now: Timestamp,
    ) -> Result<&Task> {
        self.change(id, Some((agent, now)), |task| {
            task.complete(agent, report, now)
        })
    }

    /// The owner gives up on a claimed or in-progress task, saying why.
    pub fn fail(&mut self, agent: &str, id: &str, reason: &str, now: Timestamp) -> Result<&Task> {
        self.change(id, Some((agent, now)), |task| task.fail(agent, reason, now))
    }

    /// The owner hands a held task back, untouched, for another worker to claim.
    pub fn release(&mut self, agent: &str, id: &str, now: Timestamp) -> Result<&Task> {
        self.change(id, Some((agent, now)), |task| task.release(agent))
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
        // Only the tasks it holds are changed (a store keeping the board's text writes the
        // others back as they were).
        let held: Vec<usize> = (0..self.tasks.len())
            .filter(|&i| self.tasks[i].is_held_by(agent))
            .collect();
        Ok(held
            .into_iter()
            .filter_map(|i| {
                let task = self.tasks.get_mut(i)?;
                task.renew(agent, now, lease).then(|| task.id.clone())
            })
            .collect())
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
        self.change(id, None, |task| task.reset(now, lease, force))
    }

    /// The lead approves proposed task `id`: it becomes available to claim.
    pub fn approve(&mut self, id: &str) -> Result<&Task> {
        self.change(id, None, Task::approve)
    }

    /// The leader sends done task `id` back with `request` (see [`Task::reopen`]).
    pub fn reopen(
        &mut self,
        id: &str,
        request: &str,
        to: Reopen,
        now: Timestamp,
        lease: Duration,
    ) -> Result<&Task> {
        self.change(id, None, |task| task.reopen(request, to, now, lease))
    }

    /// The leader cancels a task that is not finished (available, claimed or in progress):
    /// the work is no longer wanted. Tasks that wait on it can then never become ready
    /// (`doctor` says so).
    pub fn cancel(&mut self, id: &str, reason: Option<&str>, now: Timestamp) -> Result<&Task> {
        self.change(id, None, |task| task.cancel(reason, now))
    }

    /// Applies `rule` to task `id` (left as it was when the rule refuses) and, for a worker's
    /// change, records the worker as alive.
    fn change(
        &mut self,
        id: &str,
        worker: Option<(&str, Timestamp)>,
        rule: impl FnOnce(&mut Task) -> Result<()>,
    ) -> Result<&Task> {
        if let Some((agent, _)) = worker {
            validate_agent_id(agent)?; // a bad name is reported before an unknown task
        }
        let task = self.existing_mut(id)?;
        let mut changed = task.clone();
        rule(&mut changed)?;
        *task = changed;
        if let Some((agent, now)) = worker {
            self.touch_agent(agent, now);
        }
        self.existing(id)
    }

    fn existing(&self, id: &str) -> Result<&Task> {
        self.task(id).ok_or_else(|| unknown(id))
    }

    fn existing_mut(&mut self, id: &str) -> Result<&mut Task> {
        self.task_mut(id).ok_or_else(|| unknown(id))
    }
}

fn unknown(id: &str) -> StoreError {
    StoreError::UnknownTask {
        id: id.chars().take(80).collect(),
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

/// A task's acceptance as written: trimmed, within the hints' bound; an empty text is none.
fn acceptance_of(text: Option<String>) -> Result<Option<String>> {
    let Some(text) = text else { return Ok(None) };
    let text = text.trim();
    check_text("acceptance", text, MAX_TEXT_BYTES, false)?;
    Ok((!text.is_empty()).then(|| text.to_string()))
}

#[cfg(test)]
mod tests;
