//! [`TaskStore`]: the task operations every store offers, with the same rules, results and
//! refusals: the folder ([`crate::Project`]) and a database (`baton-pg`). Front ends reach a
//! project's tasks through this seam without knowing which store holds them; one conformance
//! suite (`crates/pg/tests/conformance.rs`) runs the same scenarios on both and compares.
//!
//! What is decided from the whole board (a move's legality, the doctor's findings, a waiting
//! worker's outlook) is written once here, over [`TaskStore::snapshot`]; a store may answer
//! faster from an index (the database's outlook) as long as it answers the same.

use std::time::{Duration, Instant};

use crate::doctor::{DoctorReport, FindingKind};
use crate::error::{Result, StoreError};
use crate::journal::LogLine;
use crate::lifecycle::{Claim, Completion, Files, NewTask, TaskEdit};
use crate::model::{Task, TaskFile, TaskStatus};
use crate::moves::Move;
use crate::notes::Notes;
use crate::outlook::Outlook;
use crate::project::Aggregate;
use crate::reservations::{Hold, NewReservation, Reservation};
use crate::status::{StatusReport, TaskView};
use crate::time::Timestamp;

/// A project's tasks, wherever they are kept. Each call is one atomic change (or one
/// consistent read); a refusal changes nothing.
pub trait TaskStore: Send + Sync {
    /// Where the tasks are, for people: the folder, or the database and project name (never a
    /// password).
    fn describe(&self) -> String;
    /// How long claims, starts and heartbeats hold a task.
    fn lease(&self) -> Duration;
    /// Adds a task (unknown dependencies and duplicate ids refused).
    fn add_task(&self, new: NewTask) -> Result<Task>;
    /// Edits a task (dependencies only while it is available; cycles refused).
    fn edit_task(&self, id: &str, edit: TaskEdit) -> Result<Task>;
    /// Claims the best ready task whose files no other agent holds exclusively (unless
    /// `files` says to ignore reservations); `None` when nothing is ready.
    fn claim_with(&self, agent: &str, files: Files) -> Result<Option<Claim>>;
    /// Claims the task `id` if it is ready (and, unless ignored, its files are free).
    fn claim_task_with(&self, agent: &str, id: &str, files: Files) -> Result<Claim>;
    /// Claims the best ready task, respecting reservations.
    fn claim(&self, agent: &str) -> Result<Option<Claim>> {
        self.claim_with(agent, Files::Respect)
    }
    /// Claims the task `id`, respecting reservations.
    fn claim_task(&self, agent: &str, id: &str) -> Result<Claim> {
        self.claim_task_with(agent, id, Files::Respect)
    }
    /// Reserves paths for an agent; refused, changing nothing, when another agent holds any.
    fn reserve(&self, new: NewReservation) -> Result<Reservation>;
    /// Gives back `agent`'s reservations of `paths` (all of them when empty); those removed.
    fn unreserve(&self, agent: &str, paths: &[String]) -> Result<Vec<Reservation>>;
    /// The reservations in force: held tasks' files and explicit ones.
    fn reservations(&self) -> Result<Vec<Reservation>> {
        let (file, now) = self.snapshot()?;
        Ok(file.active_reservations(now, self.lease()))
    }
    /// Which of `paths` other agents (other than `agent`) hold exclusively now.
    fn check_paths(&self, paths: &[String], agent: Option<&str>) -> Result<Vec<Hold>> {
        if let Some(agent) = agent {
            crate::names::validate_agent_id(agent)?;
        }
        let paths = crate::reservations::normalise_all(paths)?;
        let (file, now) = self.snapshot()?;
        Ok(file.holds(&paths, agent, true, now, self.lease()))
    }
    fn start(&self, agent: &str, id: &str) -> Result<Task>;
    fn complete(&self, agent: &str, id: &str, report: Completion) -> Result<Task>;
    fn fail(&self, agent: &str, id: &str, reason: &str) -> Result<Task>;
    fn release(&self, agent: &str, id: &str) -> Result<Task>;
    /// Renews `agent`'s leases; the ids of the tasks it holds.
    fn heartbeat(&self, agent: &str) -> Result<Vec<String>>;
    fn reset(&self, id: &str, force: bool) -> Result<Task>;
    fn cancel(&self, id: &str, reason: Option<&str>) -> Result<Task>;
    /// The board now.
    fn status(&self) -> Result<StatusReport>;
    /// Every task as `tasks.json` would hold it, with the store's time now.
    fn snapshot(&self) -> Result<(TaskFile, Timestamp)>;
    /// Shares a finding with every agent; says where it was recorded.
    fn discover(&self, agent: &str, text: &str) -> Result<String>;
    /// The last `tail` log lines of one agent, or of every agent merged in time order.
    fn logs(&self, agent: Option<&str>, tail: usize) -> Result<Vec<LogLine>>;
    /// Writes the summary of every task's result.
    fn aggregate(&self) -> Result<Aggregate>;
    /// Finds problems; with `fix`, applies the safe repairs and says what changed.
    fn doctor(&self, fix: bool) -> Result<DoctorReport>;
    /// The master plan, the summary and the discoveries.
    fn notes(&self) -> Result<Notes>;

    /// Task `id`'s result report, as `results/ID.md` holds it; empty until it is finished.
    fn result_report(&self, id: &str) -> Result<String> {
        crate::names::validate_task_id(id)?;
        let (file, _) = self.snapshot()?;
        Ok(file
            .task(id)
            .filter(|task| task.status.is_final())
            .map(crate::notes::render_result)
            .unwrap_or_default())
    }

    /// What worker `agent` waiting for work can expect now, with the store's time now (a
    /// lease expiry is waited for by the store's clock, not the waiter's).
    fn outlook(&self, agent: &str) -> Result<(Outlook, Timestamp)> {
        let (file, now) = self.snapshot()?;
        Ok((file.outlook(Some(agent), now, self.lease()), now))
    }

    /// What wakes a waiting worker on this store, if the store notifies by itself (a
    /// database's notifications); `None` when the waiter watches the store's files instead
    /// (the folder: `baton-live` does that).
    fn listen(&self) -> Result<Option<Box<dyn Listener>>> {
        Ok(None)
    }

    /// What wakes a view that redraws on any change of the project (tasks, logs, notes), if
    /// the store notifies by itself; `None` when the view watches the folder instead.
    fn listen_for_changes(&self) -> Result<Option<Box<dyn Listener>>> {
        Ok(None)
    }

    /// Every agent's log lines written after line number `after` (0: the start), oldest
    /// first, with the number of the last line there is; `None` when the store's log is files
    /// (followed by watching them).
    fn log_since(&self, after: u64) -> Result<Option<(Vec<LogLine>, u64)>> {
        let _ = after;
        Ok(None)
    }

    /// The folder whose files hold the tasks, when they are files: a waiting worker watches
    /// it for changes (see [`TaskStore::listen`]).
    fn folder(&self) -> Option<&crate::Layout> {
        None
    }

    /// When `agent` last showed a sign of life here (a claim, a start, a heartbeat, a
    /// report), if ever, with the store's time now: a waiter tied to that agent counts it gone
    /// a lease after that, by the store's clock.
    fn last_seen(&self, agent: &str) -> Result<(Option<Timestamp>, Timestamp)> {
        crate::names::validate_agent_id(agent)?;
        let (file, now) = self.snapshot()?;
        Ok((file.agents.get(agent).and_then(|a| a.last_seen), now))
    }

    /// Why a claim got nothing now, for the worker.
    fn nothing_ready_reason(&self) -> Result<String> {
        Ok(self.status()?.nothing_ready_reason())
    }

    /// Tasks a worker could claim now, best first (the order `claim` takes them in).
    fn ready_tasks(&self) -> Result<Vec<TaskView>> {
        let mut ready: Vec<TaskView> = self
            .status()?
            .tasks
            .into_iter()
            .filter(|t| t.ready)
            .collect();
        ready.sort_by_key(|t| (t.task.priority, t.task.created_at));
        Ok(ready)
    }

    /// The move that brings task `id` to `to` now, or the lifecycle's refusal. Changes nothing.
    fn plan_move(&self, id: &str, to: TaskStatus) -> Result<Move> {
        let (file, now) = self.snapshot()?;
        file.plan_move(id, to, now, self.lease())
    }

    /// Brings task `id` to `to` through the planned operation, run as its own transaction (a
    /// change between plan and run is refused by the lifecycle, not overwritten). `text` is
    /// the summary of a completion, the reason of a failure or cancellation. `None` for the
    /// task when it was there already.
    fn move_task(
        &self,
        id: &str,
        to: TaskStatus,
        text: Option<&str>,
    ) -> Result<(Move, Option<Task>)> {
        let step = self.plan_move(id, to)?;
        let text = text.map(str::trim).filter(|t| !t.is_empty());
        if let (Some(needs), None) = (step.needs(), text) {
            return Err(StoreError::InvalidInput {
                field: needs,
                reason: format!("moving {id} to {to} needs a {needs}"),
            });
        }
        let task = match &step {
            Move::Stay => None,
            Move::Claim { agent } => Some(self.claim_task(agent, id)?.task),
            Move::Start { agent } => Some(self.start(agent, id)?),
            Move::Complete { agent } => {
                let report = Completion {
                    output: text.unwrap_or_default().to_string(),
                    ..Completion::default()
                };
                Some(self.complete(agent, id, report)?)
            }
            Move::Fail { agent } => Some(self.fail(agent, id, text.unwrap_or_default())?),
            Move::Release { agent } => Some(self.release(agent, id)?),
            Move::Reset => Some(self.reset(id, false)?),
            Move::Cancel => Some(self.cancel(id, text)?),
        };
        Ok((step, task))
    }
}

/// Wakes a waiting worker when its store changes in a way that may make a task ready.
pub trait Listener: Send {
    /// Blocks until such a change (`true`), or until `until` (`false`). A spurious `true` is
    /// allowed: the waiter looks again. An error means the listener is broken; the waiter
    /// makes a new one.
    fn wait(&mut self, until: Option<Instant>) -> Result<bool>;
}

/// Releases the tasks whose lease ran out (the doctor's fixable stale-lease findings on
/// `file`), one operation each, so a worker that renewed in the meantime keeps its task (the
/// reset is refused and said so). For stores whose doctor does not hold the whole board under
/// one lock; each task is one line of `report.fixed`, worded as the folder's doctor words it.
pub fn release_stale_leases(store: &dyn TaskStore, file: &TaskFile, report: &mut DoctorReport) {
    let stale: Vec<String> = report
        .findings
        .iter()
        .filter(|f| f.fixable && f.kind == FindingKind::StaleLease)
        .filter_map(|f| f.task.clone())
        .collect();
    for id in stale {
        let owner = file
            .task(&id)
            .and_then(|t| t.claimed_by.clone())
            .unwrap_or_default();
        report.fixed.push(match store.reset(&id, false) {
            Ok(_) => format!("{id}: released from {owner} (lease expired); it is available again"),
            Err(err) => format!("{id}: left as it is: {err}"),
        });
    }
}

impl TaskStore for crate::Project {
    fn describe(&self) -> String {
        self.layout().root().display().to_string()
    }
    fn lease(&self) -> Duration {
        crate::Project::lease(self)
    }
    fn add_task(&self, new: NewTask) -> Result<Task> {
        crate::Project::add_task(self, new)
    }
    fn edit_task(&self, id: &str, edit: TaskEdit) -> Result<Task> {
        crate::Project::edit_task(self, id, edit)
    }
    fn claim_with(&self, agent: &str, files: Files) -> Result<Option<Claim>> {
        crate::Project::claim_with(self, agent, files)
    }
    fn claim_task_with(&self, agent: &str, id: &str, files: Files) -> Result<Claim> {
        crate::Project::claim_task_with(self, agent, id, files)
    }
    fn reserve(&self, new: NewReservation) -> Result<Reservation> {
        crate::Project::reserve(self, new)
    }
    fn unreserve(&self, agent: &str, paths: &[String]) -> Result<Vec<Reservation>> {
        crate::Project::unreserve(self, agent, paths)
    }
    fn start(&self, agent: &str, id: &str) -> Result<Task> {
        crate::Project::start(self, agent, id)
    }
    fn complete(&self, agent: &str, id: &str, report: Completion) -> Result<Task> {
        crate::Project::complete(self, agent, id, report)
    }
    fn fail(&self, agent: &str, id: &str, reason: &str) -> Result<Task> {
        crate::Project::fail(self, agent, id, reason)
    }
    fn release(&self, agent: &str, id: &str) -> Result<Task> {
        crate::Project::release(self, agent, id)
    }
    fn heartbeat(&self, agent: &str) -> Result<Vec<String>> {
        crate::Project::heartbeat(self, agent)
    }
    fn reset(&self, id: &str, force: bool) -> Result<Task> {
        crate::Project::reset(self, id, force)
    }
    fn cancel(&self, id: &str, reason: Option<&str>) -> Result<Task> {
        crate::Project::cancel(self, id, reason)
    }
    fn status(&self) -> Result<StatusReport> {
        crate::Project::status(self)
    }
    fn snapshot(&self) -> Result<(TaskFile, Timestamp)> {
        Ok((self.load()?, Timestamp::now()))
    }
    fn discover(&self, agent: &str, text: &str) -> Result<String> {
        crate::Project::discover(self, agent, text)?;
        Ok(self.layout().discoveries().display().to_string())
    }
    fn logs(&self, agent: Option<&str>, tail: usize) -> Result<Vec<LogLine>> {
        crate::Project::logs(self, agent, tail)
    }
    fn aggregate(&self) -> Result<Aggregate> {
        crate::Project::aggregate(self)
    }
    fn doctor(&self, fix: bool) -> Result<DoctorReport> {
        crate::Project::doctor(self, fix)
    }
    fn notes(&self) -> Result<Notes> {
        Notes::read(self.layout())
    }
    fn result_report(&self, id: &str) -> Result<String> {
        crate::notes::read_text(&self.layout().result_file(id)?)
    }
    fn folder(&self) -> Option<&crate::Layout> {
        Some(self.layout())
    }
}
