//! [`TaskStore`]: the task operations every store offers, with the same rules, results and
//! refusals: the folder (`baton-folder`) and a database (`baton-pg`). Front ends reach a
//! project's tasks through this seam without knowing which store holds them; one store suite
//! (`baton-store-suite`) runs the same asserting scenarios over every trait on each: the folder,
//! PostgreSQL directly and through PgBouncer.
//!
//! What is decided from the whole board (a move's legality, the doctor's findings, a waiting
//! worker's outlook) is written once here, over [`TaskStore::snapshot`]; a store may answer
//! faster from an index (the database's outlook) as long as it answers the same.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::doctor::{DoctorReport, FindingKind};
use crate::error::{Result, StoreError};
use crate::journal::LogLine;
use crate::model::Reservation;
use crate::model::{Task, TaskFile, TaskStatus};
use crate::moves::Move;
use crate::notes::Notes;
use crate::outlook::Outlook;
use crate::requests::{ClaimRequest, Claimed, Completion, NewTask, Reopen, TaskEdit};
use crate::reservations::{Hold, NewReservation};
use crate::status::{StatusReport, TaskView};
use crate::summary::Aggregate;
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
    /// Claims a task as `request` asks (see [`ClaimRequest`]): the best ready task whose
    /// files no other agent holds exclusively (unless the request ignores reservations), or
    /// the task it names if that is ready. `None` only when no task was named and nothing is
    /// ready; a named task that is not ready is refused with the reason.
    fn claim(&self, request: &ClaimRequest) -> Result<Option<Claimed>>;
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
    /// The lead approves proposed task `id` (one of a plan): it becomes available to claim.
    fn approve(&self, id: &str) -> Result<Task>;
    /// The leader sends done task `id` back for more work, with `request` added to its hints
    /// (a review's requested changes), held for its worker or available to anyone (`to`).
    fn reopen(&self, id: &str, request: &str, to: Reopen) -> Result<Task>;
    /// The board now.
    fn status(&self) -> Result<StatusReport>;
    /// [`Self::status`] for a reader that reads the board again on every change (a window):
    /// a store may keep what it read, to read again only what changed.
    fn status_again(&self) -> Result<StatusReport> {
        self.status()
    }
    /// Every task as `tasks.json` would hold it, with the store's time now.
    fn snapshot(&self) -> Result<(TaskFile, Timestamp)>;
    /// [`Self::snapshot`] for a reader that reads it again on every change, as
    /// [`Self::status_again`].
    fn snapshot_again(&self) -> Result<(TaskFile, Timestamp)> {
        self.snapshot()
    }
    /// The board for a reader that reads it on every change and keeps its views between reads
    /// (a window): each task shared, the same `Arc` as at the store's last such read while its
    /// text did not change ([`crate::SharedBoard`]). `None`: this store keeps nothing between
    /// reads; read [`Self::status_again`] instead.
    fn board_again(&self) -> Result<Option<crate::SharedBoard>> {
        Ok(None)
    }
    /// The tasks `agent` holds now (claimed or in progress), in the board's order: what a
    /// hook tells an agent it holds, and the task an approval is asked for.
    fn held_by(&self, agent: &str) -> Result<Vec<Task>> {
        let (file, _) = self.snapshot()?;
        Ok(file
            .tasks
            .into_iter()
            .filter(|t| t.is_held_by(agent))
            .collect())
    }
    /// Task `id` as the store holds it now; `None` when there is no such task. A store that
    /// can read one task without the others (a database row) says so by overriding this.
    fn task(&self, id: &str) -> Result<Option<Task>> {
        let (file, _) = self.snapshot()?;
        Ok(file.tasks.into_iter().find(|t| t.id == id))
    }
    /// Moves the tasks `choose` picks from the board (read under the store's hold, at the
    /// store's time) to the archive ([`crate::archive`]); with `dry_run` says which it would
    /// move. A store whose cost does not grow with its board (a database) keeps every task
    /// where it is, and says so.
    fn archive(
        &self,
        choose: &dyn Fn(&TaskFile, Timestamp) -> Vec<String>,
        dry_run: bool,
    ) -> Result<crate::archive::ArchiveReport> {
        let _ = (choose, dry_run);
        Ok(crate::archive::ArchiveReport {
            archived: Vec::new(),
            live: self.snapshot()?.0.tasks.len(),
            place: format!(
                "{}: kept on the board, whose cost does not grow with it",
                self.describe()
            ),
        })
    }
    /// The tasks archived off the board (none in a store that keeps every task on it).
    fn archived(&self) -> Result<Vec<Task>> {
        Ok(Vec::new())
    }
    /// The board with the archived tasks, as [`TaskStore::status`] reports it.
    fn status_all(&self) -> Result<StatusReport> {
        self.status()
    }
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
    /// Rewrites the master plan (`master-plan.md`) as `by` (checked:
    /// [`crate::notes::check_master_plan`]).
    fn write_master_plan(&self, by: &str, text: &str) -> Result<()>;

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

    /// How a waiter notices that this store changed: by watching its files, or through the
    /// store's own notifications ([`TaskStore::listen`] and its neighbours).
    fn changes(&self) -> Changes;

    /// The store's own reader of its files for the change feed, for a store whose state is
    /// files on this machine ([`Changes::Files`]); made on the feed's thread when it starts,
    /// which sets its baseline. `None` for a store that notifies by itself.
    fn file_feed(&self) -> Option<Box<dyn crate::feed::FileFeed>> {
        None
    }

    /// Whether this store is shared by several machines (so a process id, a browser or a
    /// worktree on this machine is not the whole picture), or holds the project on this
    /// machine alone.
    fn shared_across_machines(&self) -> bool;

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

    /// Tasks that would be ready but for files other agents hold, best first, at most
    /// `limit` (what a claim that got nothing names as the reason). A store that can find them
    /// without reading the whole board says so by overriding this.
    fn held_back_by_files(&self, limit: usize) -> Result<Vec<TaskView>> {
        let mut held = best_first(self.status()?, |t| !t.waits_on_files.is_empty());
        held.truncate(limit);
        Ok(held)
    }

    /// Tasks a worker could claim now, best first (the order `claim` takes them in).
    fn ready_tasks(&self) -> Result<Vec<TaskView>> {
        Ok(best_first(self.status()?, |t| t.ready))
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
            Move::Claim { agent } => self
                .claim(&ClaimRequest::task(agent.as_str(), id))?
                .map(|claimed| claimed.task),
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
            Move::Approve => Some(self.approve(id)?),
            Move::Cancel => Some(self.cancel(id, text)?),
        };
        Ok((step, task))
    }
}

/// The tasks of `report` that `keep` keeps, best first (priority, then age: the order a
/// claim takes them in).
fn best_first(report: StatusReport, keep: impl Fn(&TaskView) -> bool) -> Vec<TaskView> {
    let mut kept: Vec<TaskView> = report.tasks.into_iter().filter(|t| keep(t)).collect();
    kept.sort_by_key(|t| (t.task.priority, t.task.created_at));
    kept
}

/// How a waiter notices that a store changed: the store's answer, so waiters and views never
/// ask which store it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Changes {
    /// The store's state is files under this folder on this machine: watch them.
    Files(PathBuf),
    /// The store notifies by itself ([`TaskStore::listen`], [`TaskStore::listen_for_changes`],
    /// [`crate::SignalStore::listen_for_signals`]).
    Notifications,
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
