//! [`Project`]: one opened `.coordination/` folder and every operation on it. This is the
//! service layer the CLI, the MCP server and the desktop app share: each operation is one
//! locked read-modify-write of `tasks.json`, followed by the files derived from it (result
//! reports, logs).

use std::fs;
use std::path::Path;
use std::time::Duration;

use crate::doctor::{self, DoctorReport, Finding, FindingKind};
use crate::durable::{FileLock, leftover_temp_files, write_atomic};
use crate::error::{Result, StoreError};
use crate::journal::{self, LogLine};
use crate::layout::Layout;
use crate::lifecycle::{Claim, Completion, DEFAULT_LEASE, Files, NewTask, TaskEdit};
use crate::model::{Task, TaskFile, TaskStatus};
use crate::notes;
use crate::reservations::{NewReservation, Reservation};
use crate::status::{StatusReport, TaskView};
use crate::summary;
use crate::time::Timestamp;

/// The agent name leader operations are logged under.
pub const LEADER: &str = "leader";

/// An opened `.coordination/` folder.
#[derive(Debug, Clone)]
pub struct Project {
    layout: Layout,
    lease: Duration,
}

/// What a transaction decided: write the new state, or keep the file as it was.
enum Change<T> {
    Write(T),
    Keep(T),
}

/// What `aggregate` wrote.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct Aggregate {
    /// Where the summary was written: `summary.md`'s path, or the database and project.
    pub path: String,
    pub total: usize,
    pub done: usize,
    pub failed: usize,
    pub cancelled: usize,
    pub unfinished: usize,
}

impl Project {
    /// Creates `.coordination/` in `dir` with a master plan for `goal`. Refuses if a task store
    /// is already there. `tasks.json` is written last, so an interrupted init can be re-run.
    pub fn init(dir: &Path, goal: &str, approach: Option<&str>) -> Result<Project> {
        let goal = notes::check_goal(goal)?;
        let layout = Layout::for_project(dir);
        for folder in [
            layout.root().to_path_buf(),
            layout.context_dir(),
            layout.logs_dir(),
            layout.results_dir(),
        ] {
            fs::create_dir_all(&folder).map_err(|e| StoreError::io(&folder, e))?;
        }
        let _lock = FileLock::exclusive(&layout.lock_file())?;
        if layout.tasks_file().exists() {
            return Err(StoreError::AlreadyInitialized {
                path: layout.root().to_path_buf(),
            });
        }
        let now = Timestamp::now();
        write_atomic(
            &layout.master_plan(),
            notes::master_plan(goal, approach, now).as_bytes(),
        )?;
        if !layout.discoveries().exists() {
            write_atomic(&layout.discoveries(), notes::DISCOVERIES_HEADER.as_bytes())?;
        }
        let gitignore = layout.root().join(".gitignore");
        if !gitignore.exists() {
            write_atomic(
                &gitignore,
                format!(".lock\n*{}\n", crate::durable::TEMP_SUFFIX).as_bytes(),
            )?;
        }
        write_atomic(&layout.tasks_file(), &encode(&TaskFile::new(now))?)?;
        let project = Project {
            layout,
            lease: DEFAULT_LEASE,
        };
        project.log(LEADER, "INIT", &format!("Goal: {goal}"), now);
        Ok(project)
    }

    /// Opens the folder at `layout`, which must hold a `tasks.json` (a folder that points to a
    /// database instead is refused as such: `baton-api`'s `OpenProject` opens those).
    pub fn open(layout: Layout) -> Result<Project> {
        if !layout.tasks_file().is_file() && layout.pointer_file().is_file() {
            return Err(StoreError::KeptInDatabase {
                path: layout.root().to_path_buf(),
            });
        }
        if !layout.tasks_file().is_file() {
            return Err(StoreError::NotInitialized {
                searched: layout.project_dir().to_path_buf(),
            });
        }
        Ok(Project {
            layout,
            lease: DEFAULT_LEASE,
        })
    }

    /// The folder at `layout` for what stays on this machine (signals, runs, orchestration,
    /// browsers) when its tasks are kept elsewhere (a database): nothing is checked or
    /// created until an operation writes there.
    pub fn local(layout: Layout) -> Project {
        Project {
            layout,
            lease: DEFAULT_LEASE,
        }
    }

    /// Finds and opens the folder: `dir` if given, else the nearest one above `cwd`.
    pub fn locate(dir: Option<&Path>, cwd: &Path) -> Result<Project> {
        Project::open(Layout::locate(dir, cwd)?)
    }

    /// Uses `lease` for new claims, starts and heartbeats (default 15 minutes).
    pub fn with_lease(mut self, lease: Duration) -> Self {
        self.lease = lease;
        self
    }

    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    pub fn lease(&self) -> Duration {
        self.lease
    }

    /// Reads `tasks.json` without locking: writes are atomic renames, so this sees a whole
    /// state, never a torn one.
    pub fn load(&self) -> Result<TaskFile> {
        let path = self.layout.tasks_file();
        let bytes = match fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(StoreError::NotInitialized {
                    searched: self.layout.project_dir().to_path_buf(),
                });
            }
            Err(e) => return Err(StoreError::io(path, e)),
        };
        serde_json::from_slice(&bytes).map_err(|e| StoreError::Corrupt {
            path,
            line: e.line(),
            column: e.column(),
            message: strip_position(&e.to_string()),
        })
    }

    /// Holds the lock, reads, applies `op`, and writes the result atomically if `op` asks to.
    /// If `op` fails, nothing is written.
    fn transact<T>(
        &self,
        op: impl FnOnce(&mut TaskFile, Timestamp) -> Result<Change<T>>,
    ) -> Result<T> {
        let _lock = FileLock::exclusive(&self.layout.lock_file())?;
        let mut file = self.load()?;
        let now = Timestamp::now();
        match op(&mut file, now)? {
            Change::Keep(value) => Ok(value),
            Change::Write(value) => {
                file.last_updated = Some(now);
                write_atomic(&self.layout.tasks_file(), &encode(&file)?)?;
                Ok(value)
            }
        }
    }

    /// Runs `op` in a transaction that always writes, and returns a copy of task `id` after it.
    fn change_task(
        &self,
        id: &str,
        op: impl FnOnce(&mut TaskFile, Timestamp) -> Result<()>,
    ) -> Result<(Task, Timestamp)> {
        self.transact(|file, now| {
            op(file, now)?;
            let task = file
                .task(id)
                .cloned()
                .ok_or_else(|| StoreError::UnknownTask { id: id.to_string() })?;
            Ok(Change::Write((task, now)))
        })
    }

    /// The board now.
    pub fn status(&self) -> Result<StatusReport> {
        let file = self.load()?;
        Ok(StatusReport::build(
            &file,
            notes::goal(&self.layout),
            Timestamp::now(),
            self.lease,
        ))
    }

    /// Tasks a worker could claim now, best first (the order `claim` takes them in).
    pub fn ready_tasks(&self) -> Result<Vec<TaskView>> {
        crate::store::TaskStore::ready_tasks(self)
    }

    pub fn add_task(&self, new: NewTask) -> Result<Task> {
        let (task, now) = self.transact(|file, now| {
            let task = file.add_task(new, now)?.clone();
            Ok(Change::Write((task, now)))
        })?;
        self.log(LEADER, "ADD_TASK", &journal::added(&task), now);
        Ok(task)
    }

    pub fn edit_task(&self, id: &str, edit: TaskEdit) -> Result<Task> {
        let (task, now) = self.change_task(id, |file, _| file.edit_task(id, edit).map(drop))?;
        self.log(
            LEADER,
            "EDIT_TASK",
            &format!("{}: {}", task.id, task.description),
            now,
        );
        Ok(task)
    }

    /// Claims the best ready task for `agent`; `None` when nothing is ready.
    pub fn claim(&self, agent: &str) -> Result<Option<Claim>> {
        self.claim_with(agent, Files::Respect)
    }

    /// [`Project::claim`], saying whether other agents' file reservations count.
    pub fn claim_with(&self, agent: &str, files: Files) -> Result<Option<Claim>> {
        let (claim, now) = self.transact(|file, now| {
            Ok(match file.claim_next_with(agent, files, now, self.lease)? {
                Some(claim) => Change::Write((Some(claim), now)),
                None => Change::Keep((None, now)),
            })
        })?;
        let details = match &claim {
            Some(c) => journal::claimed(c),
            None => "nothing ready".to_string(),
        };
        self.log(agent, "CLAIM", &details, now);
        Ok(claim)
    }

    /// Claims the task `id` for `agent` if it is ready (the lead picking a card, or a worker
    /// told which task to take); refused with the reason when it is not.
    pub fn claim_task(&self, agent: &str, id: &str) -> Result<Claim> {
        self.claim_task_with(agent, id, Files::Respect)
    }

    /// [`Project::claim_task`], saying whether other agents' file reservations count.
    pub fn claim_task_with(&self, agent: &str, id: &str, files: Files) -> Result<Claim> {
        let (claim, now) = self.transact(|file, now| {
            Ok(Change::Write((
                file.claim_task_with(agent, id, files, now, self.lease)?,
                now,
            )))
        })?;
        self.log(agent, "CLAIM", &journal::claimed(&claim), now);
        Ok(claim)
    }

    /// Reserves paths for an agent (refused when another agent holds them).
    pub fn reserve(&self, new: NewReservation) -> Result<Reservation> {
        let (reservation, now) = self.transact(|file, now| {
            Ok(Change::Write((
                file.reserve(new.clone(), now, self.lease)?,
                now,
            )))
        })?;
        self.log(
            &reservation.agent,
            "RESERVE",
            &journal::reserved(&reservation),
            now,
        );
        Ok(reservation)
    }

    /// Gives back `agent`'s reservations of `paths` (all of them when empty).
    pub fn unreserve(&self, agent: &str, paths: &[String]) -> Result<Vec<Reservation>> {
        let (gone, now) = self.transact(|file, now| {
            let gone = file.unreserve(agent, paths)?;
            Ok(if gone.is_empty() {
                Change::Keep((gone, now))
            } else {
                Change::Write((gone, now))
            })
        })?;
        if !gone.is_empty() {
            let ids: Vec<&str> = gone.iter().map(|r| r.id.as_str()).collect();
            self.log(agent, "UNRESERVE", &ids.join(", "), now);
        }
        Ok(gone)
    }

    pub fn start(&self, agent: &str, id: &str) -> Result<Task> {
        let (task, now) = self.change_task(id, |file, now| {
            file.start(agent, id, now, self.lease).map(drop)
        })?;
        self.log(agent, "START", &task.id, now);
        Ok(task)
    }

    /// Completes a task and writes its `results/<id>.md`.
    pub fn complete(&self, agent: &str, id: &str, report: Completion) -> Result<Task> {
        let (task, now) = self.change_task(id, |file, now| {
            file.complete(agent, id, report, now).map(drop)
        })?;
        notes::write_result(&self.layout, &task)?;
        self.log(agent, "COMPLETE", &task.id, now);
        Ok(task)
    }

    /// Fails a task with `reason` and writes its `results/<id>.md`.
    pub fn fail(&self, agent: &str, id: &str, reason: &str) -> Result<Task> {
        let (task, now) =
            self.change_task(id, |file, now| file.fail(agent, id, reason, now).map(drop))?;
        notes::write_result(&self.layout, &task)?;
        self.log(agent, "FAIL", &format!("{}: {reason}", task.id), now);
        Ok(task)
    }

    /// Gives a held task back to the queue.
    pub fn release(&self, agent: &str, id: &str) -> Result<Task> {
        let (task, now) =
            self.change_task(id, |file, now| file.release(agent, id, now).map(drop))?;
        self.log(agent, "RELEASE", &task.id, now);
        Ok(task)
    }

    /// Renews `agent`'s leases; returns the ids of the tasks it holds.
    pub fn heartbeat(&self, agent: &str) -> Result<Vec<String>> {
        let (renewed, now) = self.transact(|file, now| {
            Ok(Change::Write((
                file.heartbeat(agent, now, self.lease)?,
                now,
            )))
        })?;
        self.log(agent, "HEARTBEAT", &renewed.join(", "), now);
        Ok(renewed)
    }

    /// Puts a failed, cancelled or stale task back to available (`force`: even a live claim).
    pub fn reset(&self, id: &str, force: bool) -> Result<Task> {
        let (task, now) = self.change_task(id, |file, now| {
            file.reset(id, now, self.lease, force).map(drop)
        })?;
        self.log(LEADER, "RESET", &task.id, now);
        Ok(task)
    }

    /// Cancels an unfinished task and writes its `results/<id>.md`. The holder, if any, loses it:
    /// its next complete, fail or heartbeat is refused.
    pub fn cancel(&self, id: &str, reason: Option<&str>) -> Result<Task> {
        let (task, now) =
            self.change_task(id, |file, now| file.cancel(id, reason, now).map(drop))?;
        notes::write_result(&self.layout, &task)?;
        let why = task.failure_reason.as_deref().unwrap_or_default();
        self.log(LEADER, "CANCEL", &format!("{}: {why}", task.id), now);
        Ok(task)
    }

    /// Shares a finding with every agent through `context/discoveries.md`.
    pub fn discover(&self, agent: &str, text: &str) -> Result<()> {
        let now = Timestamp::now();
        notes::add_discovery(&self.layout, agent, text, now)?;
        self.log(agent, "DISCOVERY", text, now);
        Ok(())
    }

    /// Writes `summary.md` from every task's result.
    pub fn aggregate(&self) -> Result<Aggregate> {
        let report = self.status()?;
        let path = self.layout.summary();
        write_atomic(&path, summary::render(&report).as_bytes())?;
        let done = report.count(TaskStatus::Done);
        let failed = report.count(TaskStatus::Failed);
        let cancelled = report.count(TaskStatus::Cancelled);
        self.log(
            LEADER,
            "AGGREGATE",
            &format!("{} of {}", report.outcome(), report.total),
            report.as_of,
        );
        Ok(Aggregate {
            path: path.display().to_string(),
            total: report.total,
            done,
            failed,
            cancelled,
            unfinished: report.total - done - failed - cancelled,
        })
    }

    /// Finds problems; with `fix`, applies the safe repairs under the lock and says what changed.
    pub fn doctor(&self, fix: bool) -> Result<DoctorReport> {
        let _lock = FileLock::exclusive(&self.layout.lock_file())?;
        let mut file = self.load()?;
        let now = Timestamp::now();
        let mut findings = doctor::diagnose(&file, now, self.lease);
        // Under the lock no write is in flight, so every temp file is debris.
        for temp in leftover_temp_files(self.layout.root())? {
            findings.push(Finding {
                kind: FindingKind::LeftoverTempFile,
                task: None,
                message: format!("{} was left by an interrupted write", temp.display()),
                fixable: true,
            });
        }
        for task in file.tasks.iter().filter(|t| t.status.is_final()) {
            if !self.layout.result_file(&task.id).is_ok_and(|p| p.exists()) {
                findings.push(Finding {
                    kind: FindingKind::MissingResult,
                    task: Some(task.id.clone()),
                    message: format!(
                        "{} is {} but results/{}.md is missing",
                        task.id, task.status, task.id
                    ),
                    fixable: crate::names::validate_task_id(&task.id).is_ok(),
                });
            }
        }
        let mut report = DoctorReport {
            findings,
            fixed: Vec::new(),
        };
        if !fix {
            return Ok(report);
        }
        let mut rewrite = false;
        for finding in report.findings.iter().filter(|f| f.fixable) {
            match (finding.kind, &finding.task) {
                (FindingKind::StaleLease, Some(id)) => {
                    let owner = file
                        .task(id)
                        .and_then(|t| t.claimed_by.clone())
                        .unwrap_or_default();
                    file.reset(id, now, self.lease, false)?;
                    rewrite = true;
                    report.fixed.push(format!(
                        "{id}: released from {owner} (lease expired); it is available again"
                    ));
                }
                (FindingKind::MissingResult, Some(id)) => {
                    if let Some(task) = file.task(id) {
                        notes::write_result(&self.layout, task)?;
                        report
                            .fixed
                            .push(format!("{id}: wrote results/{id}.md from tasks.json"));
                    }
                }
                _ => {}
            }
        }
        for temp in leftover_temp_files(self.layout.root())? {
            fs::remove_file(&temp).map_err(|e| StoreError::io(&temp, e))?;
            report.fixed.push(format!("removed {}", temp.display()));
        }
        if rewrite {
            file.last_updated = Some(now);
            write_atomic(&self.layout.tasks_file(), &encode(&file)?)?;
        }
        for line in &report.fixed {
            self.log(LEADER, "DOCTOR_FIX", line, now);
        }
        Ok(report)
    }

    /// The last `tail` log lines of one agent, or of all agents merged in time order.
    pub fn logs(&self, agent: Option<&str>, tail: usize) -> Result<Vec<LogLine>> {
        journal::read(&self.layout, agent, tail)
    }

    /// Journals an operation that has already happened. Best effort: `tasks.json` holds the
    /// record, and failing an operation that is done because its log line could not be
    /// written would mislead the caller.
    pub(crate) fn log(&self, agent: &str, action: &str, details: &str, now: Timestamp) {
        let _ = journal::record(&self.layout, agent, action, details, now);
    }
}

/// `tasks.json`'s bytes for `file`: pretty JSON and a final newline, as every writer of the
/// file writes it (`git diff` and `jq` friendly).
pub fn encode(file: &TaskFile) -> Result<Vec<u8>> {
    let mut bytes = serde_json::to_vec_pretty(file).map_err(|e| StoreError::InvalidInput {
        field: "tasks.json",
        reason: e.to_string(),
    })?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// serde_json appends " at line L column C"; the error carries those separately.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

#[cfg(test)]
mod tests;
