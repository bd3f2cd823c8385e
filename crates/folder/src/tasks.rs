//! The folder store's task operations: [`TaskStore`] for [`FolderStore`]. Each is one
//! transaction of `tasks.json` applying the core's rules, then the files derived from it (a
//! result report for a finished task) and the agent's log line, worded by the core.

use std::time::Duration;

use baton_core::archive::ArchiveReport;
use baton_core::feed::FileFeed;
use baton_core::{
    Aggregate, Changes, ClaimRequest, Claimed, Completion, DoctorReport, LogEntry, LogLine,
    NewTask, Notes, Result, StatusReport, TaskAction, TaskEdit, TaskStore, Timestamp,
    render_summary,
};
use baton_core::{NewReservation, Reopen, Reservation};
use baton_core::{SharedBoard, StoreError, Task, TaskFile};
use baton_fs::{FileLock, write_atomic};

use crate::claim_board::Skim;
use crate::store::{Change, FolderStore};
use crate::{journal, notes};

impl FolderStore {
    /// The board `file` as a status report, with the project's goal.
    fn report(&self, file: TaskFile) -> StatusReport {
        StatusReport::build(
            file,
            notes::goal(self.layout()),
            Timestamp::now(),
            self.lease(),
        )
    }

    /// Applies `change` to task `id` in one transaction, writes its result report when it
    /// finished, and journals it.
    fn change(
        &self,
        change: TaskAction,
        agent: Option<&str>,
        id: &str,
        op: impl FnOnce(&mut TaskFile, Timestamp) -> Result<()>,
    ) -> Result<Task> {
        let (task, now) = self.change_task(id, op)?;
        if task.status.is_final() {
            notes::write_result(self.layout(), &task)?;
        }
        self.log(&LogEntry::task(change, agent, &task), now);
        Ok(task)
    }
}

impl TaskStore for FolderStore {
    fn describe(&self) -> String {
        self.layout().root().display().to_string()
    }

    fn lease(&self) -> Duration {
        self.lease
    }

    fn add_task(&self, mut new: NewTask) -> Result<Task> {
        let lock = FileLock::exclusive(&self.layout().lock_file())?;
        // The tasks there are read only for their ids and dependencies (`ClaimBoard`).
        let (task, now) = self.transact_skimming(&lock, Skim::Adding, |board, now| {
            let file = board.file_for_adding();
            // Ids are unique across the archive too; a dependency on archived work brings it
            // back to the board, which holds every task a live one depends on.
            let archived = self.archived_ids()?;
            match &new.id {
                Some(id) if archived.contains(id) && file.task(id).is_none() => {
                    return Err(StoreError::DuplicateTask { id: id.clone() });
                }
                Some(_) => {}
                None => new.id = Some(archived.next_task_id(file)),
            }
            let deps: Vec<&str> = new.dependencies.iter().map(String::as_str).collect();
            self.restore(file, &deps)?;
            let task = file.add_task(new, now)?.clone();
            Ok(Change::Write((task, now)))
        })?;
        self.log(&LogEntry::added(&task), now);
        Ok(task)
    }

    fn edit_task(&self, id: &str, edit: TaskEdit) -> Result<Task> {
        let (task, now) = self.change_task(id, |file, _| {
            let deps: Vec<&str> = edit
                .dependencies
                .iter()
                .flatten()
                .map(String::as_str)
                .collect();
            self.restore(file, &deps)?;
            file.edit_task(id, edit).map(drop)
        })?;
        self.log(&LogEntry::edited(&task), now);
        Ok(task)
    }

    fn claim(&self, request: &ClaimRequest) -> Result<Option<Claimed>> {
        let (claimed, now) = match request.task {
            None => crate::combine::claim(self, request)?,
            Some(_) => {
                let lease = self.lease();
                let lock = FileLock::exclusive(&self.layout().lock_file())?;
                self.transact_skimming(&lock, Skim::Choosing, |board, now| {
                    crate::combine::alone(board, request, now, lease)
                })?
            }
        };
        self.log(&LogEntry::claim(&request.agent, claimed.as_ref()), now);
        Ok(claimed)
    }

    fn reserve(&self, new: NewReservation) -> Result<Reservation> {
        let lease = self.lease();
        let (reservation, now) = self.transact(|file, now| {
            Ok(Change::Write((file.reserve(new.clone(), now, lease)?, now)))
        })?;
        self.log(&LogEntry::reserve(&reservation), now);
        Ok(reservation)
    }

    fn unreserve(&self, agent: &str, paths: &[String]) -> Result<Vec<Reservation>> {
        let (gone, now) = self.transact(|file, now| {
            let gone = file.unreserve(agent, paths)?;
            Ok(if gone.is_empty() {
                Change::Keep((gone, now))
            } else {
                Change::Write((gone, now))
            })
        })?;
        if let Some(entry) = LogEntry::unreserve(agent, &gone) {
            self.log(&entry, now);
        }
        Ok(gone)
    }

    fn start(&self, agent: &str, id: &str) -> Result<Task> {
        let lease = self.lease();
        self.change(TaskAction::Start, Some(agent), id, |file, now| {
            file.start(agent, id, now, lease).map(drop)
        })
    }

    fn complete(&self, agent: &str, id: &str, report: Completion) -> Result<Task> {
        self.change(TaskAction::Complete, Some(agent), id, |file, now| {
            file.complete(agent, id, report, now).map(drop)
        })
    }

    fn fail(&self, agent: &str, id: &str, reason: &str) -> Result<Task> {
        self.change(TaskAction::Fail, Some(agent), id, |file, now| {
            file.fail(agent, id, reason, now).map(drop)
        })
    }

    fn release(&self, agent: &str, id: &str) -> Result<Task> {
        self.change(TaskAction::Release, Some(agent), id, |file, now| {
            file.release(agent, id, now).map(drop)
        })
    }

    fn heartbeat(&self, agent: &str) -> Result<Vec<String>> {
        let lease = self.lease();
        let (renewed, now) = self
            .transact(|file, now| Ok(Change::Write((file.heartbeat(agent, now, lease)?, now))))?;
        self.log(&LogEntry::heartbeat(agent, &renewed), now);
        Ok(renewed)
    }

    fn reset(&self, id: &str, force: bool) -> Result<Task> {
        let lease = self.lease();
        self.change(TaskAction::Reset, None, id, |file, now| {
            file.reset(id, now, lease, force).map(drop)
        })
    }

    fn reopen(&self, id: &str, request: &str, to: Reopen) -> Result<Task> {
        let lease = self.lease();
        self.change(TaskAction::Reopen, None, id, |file, now| {
            file.reopen(id, request, to, now, lease).map(drop)
        })
    }

    fn cancel(&self, id: &str, reason: Option<&str>) -> Result<Task> {
        self.change(TaskAction::Cancel, None, id, |file, now| {
            file.cancel(id, reason, now).map(drop)
        })
    }

    fn approve(&self, id: &str) -> Result<Task> {
        self.change(TaskAction::Approve, None, id, |file, _| {
            file.approve(id).map(drop)
        })
    }

    fn status(&self) -> Result<StatusReport> {
        Ok(self.report(self.load()?))
    }

    fn status_again(&self) -> Result<StatusReport> {
        Ok(self.report(self.load_again()?))
    }

    fn snapshot(&self) -> Result<(TaskFile, Timestamp)> {
        Ok((self.load()?, Timestamp::now()))
    }

    fn snapshot_again(&self) -> Result<(TaskFile, Timestamp)> {
        Ok((self.load_again()?, Timestamp::now()))
    }

    fn board_again(&self) -> Result<Option<SharedBoard>> {
        let (file, tasks) = self.load_shared_again()?;
        Ok(Some(SharedBoard {
            file,
            tasks,
            goal: notes::goal(self.layout()),
            now: Timestamp::now(),
        }))
    }

    fn task(&self, id: &str) -> Result<Option<Task>> {
        match self.load()?.tasks.into_iter().find(|t| t.id == id) {
            Some(task) => Ok(Some(task)),
            None => Ok(self.archived_task(id)?.map(|a| a.task)),
        }
    }

    fn archive(
        &self,
        choose: &dyn Fn(&TaskFile, Timestamp) -> Vec<String>,
        dry_run: bool,
    ) -> Result<ArchiveReport> {
        self.move_to_archive(choose, dry_run)
    }

    fn archived(&self) -> Result<Vec<Task>> {
        self.archived_beside(&self.load()?)
    }

    fn status_all(&self) -> Result<StatusReport> {
        let mut file = self.load()?;
        let archived = self.archived_beside(&file)?;
        file.tasks.splice(0..0, archived);
        Ok(self.report(file))
    }

    fn discover(&self, agent: &str, text: &str) -> Result<String> {
        let now = Timestamp::now();
        notes::add_discovery(self.layout(), agent, text, now)?;
        self.log(&LogEntry::discovery(agent, text), now);
        Ok(self.layout().discoveries().display().to_string())
    }

    fn logs(&self, agent: Option<&str>, tail: usize) -> Result<Vec<LogLine>> {
        journal::read(self.layout(), agent, tail)
    }

    fn aggregate(&self) -> Result<Aggregate> {
        let report = self.status()?;
        let path = self.layout().summary();
        write_atomic(&path, render_summary(&report).as_bytes())?;
        self.log(
            &LogEntry::aggregate(&report.outcome(), report.total),
            report.as_of,
        );
        Ok(Aggregate::of(&report, path.display().to_string()))
    }

    fn doctor(&self, fix: bool) -> Result<DoctorReport> {
        crate::doctor::doctor(self, fix)
    }

    fn notes(&self) -> Result<Notes> {
        notes::read(self.layout())
    }

    fn write_master_plan(&self, by: &str, text: &str) -> Result<()> {
        baton_core::notes::check_master_plan(text)?;
        let path = self.layout().unlinked(self.layout().master_plan())?;
        baton_fs::write_atomic(&path, text.as_bytes())?;
        self.log(&LogEntry::master_plan(by, text.len()), Timestamp::now());
        Ok(())
    }

    fn result_report(&self, id: &str) -> Result<String> {
        notes::read_text(&self.layout().unlinked(self.layout().result_file(id)?)?)
    }

    fn changes(&self) -> Changes {
        Changes::Files(self.layout().root().to_path_buf())
    }

    fn file_feed(&self) -> Option<Box<dyn FileFeed>> {
        Some(Box::new(crate::feed::FolderFeed::read(self.layout())))
    }

    fn shared_across_machines(&self) -> bool {
        false
    }
}
