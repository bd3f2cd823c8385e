//! The database store's task operations: [`TaskStore`] for [`PgStore`]. Each is one
//! transaction that locks only the rows it changes and applies `baton-core`'s rules to them,
//! as the folder applies them to its entry; claims take the best ready row with `FOR UPDATE
//! SKIP LOCKED`, so workers never wait on each other's claims. The board's reads, the notes,
//! the reservations and the listeners are their own modules' (`notes`, `reservations`,
//! `listen`), each written once and reached from here.

use std::time::Duration;

use baton_core::check_named_claim;
use baton_core::reservations::{refuse_held, task_conflicts};
use baton_core::{
    Aggregate, Changes, ClaimRequest, Claimed, Completion, DoctorReport, Files, Hold, Listener,
    LogEntry, LogLine, NewReservation, NewTask, Notes, Outlook, Reopen, Reservation, StatusReport,
    TaskAction, TaskEdit, TaskStore, TaskView, Timestamp,
};
use baton_core::{Task, TaskFile, TaskStatus};
use chrono::{DateTime, Utc};

use crate::connection::Tx;
use crate::error::Result;
use crate::rows::{
    database_now, exists, journal, load, locked_task, locked_task_now, parse, save, to_body, touch,
    waiting_on, wake,
};
use crate::sql::{BEST_READY, BEST_READY_BUT_KEYED, BEST_READY_KEYED};
use crate::store::PgStore;

impl PgStore {
    /// Claims the best ready task for `agent` (priority, then age, then board order); `None`
    /// when nothing is ready. Rows other workers are claiming are skipped, not waited for.
    /// Respecting reservations, the best ready task whose files no other agent holds
    /// exclusively is taken.
    fn claim_next(&self, agent: &str, files: Files) -> baton_core::Result<Option<Claimed>> {
        let lease = self.lease;
        self.transact_unclocked(|tx| {
            // Passed over: tasks whose files another agent holds, or another claim is taking.
            let mut passed: Vec<String> = Vec::new();
            loop {
                let respect = files == Files::Respect;
                let row = match (respect, passed.is_empty()) {
                    (false, _) => tx.query_opt_kept(&BEST_READY, &[&self.name, &agent])?,
                    (true, true) => tx.query_opt_kept(&BEST_READY_KEYED, &[&self.name, &agent])?,
                    (true, false) => {
                        tx.query_opt_kept(&BEST_READY_BUT_KEYED, &[&self.name, &agent, &passed])?
                    }
                };
                let Some(row) = row else {
                    let now = database_now(tx)?;
                    journal(tx, &self.name, &LogEntry::claim(agent, None), now)?;
                    return Ok(None);
                };
                let mut now = Timestamp(row.get::<_, DateTime<Utc>>(1));
                let task = parse(row.get(0))?;
                let paths = baton_core::reservations::task_files(&task);
                // A task sent back to this worker is held by it already: its files are its own.
                if respect && !paths.is_empty() && !task.sent_back {
                    // The keys were tried with the row; a row from before they were recorded
                    // has them tried now.
                    let taken = match row.get::<_, Option<bool>>(2) {
                        Some(taken) => taken,
                        None => self.try_keys(tx, &paths)?,
                    };
                    if !taken {
                        passed.push(task.id);
                        let held = self.held_ahead(tx, agent, &passed)?;
                        passed.extend(held);
                        continue;
                    }
                    // Stamped by the read that found the files free: a claim recorded before
                    // the completion that freed them would say two tasks overlapped.
                    let (near, read_at) = self.reservations_near(tx, &paths)?;
                    now = read_at;
                    let active = near.active_reservations(now, lease);
                    if !task_conflicts(&active, &task, Some(agent)).is_empty() {
                        passed.push(task.id);
                        let held = self.held_ahead(tx, agent, &passed)?;
                        passed.extend(held);
                        continue;
                    }
                }
                return Ok(Some(self.take(tx, task, agent, now)?));
            }
        })
    }
    /// Claims the task `id` for `agent` if it is ready (the core's checks on what this
    /// transaction found: the row locked, its unfinished dependencies, the reservations near
    /// its files), refused with the reason otherwise.
    fn claim_named(&self, agent: &str, id: &str, files: Files) -> baton_core::Result<Claimed> {
        self.transact_unclocked(|tx| {
            let (task, now) = locked_task_now(tx, &self.name, id)?;
            let blockers: Vec<String> = tx
                .query(
                    "SELECT d.id FROM unnest($2::text[]) WITH ORDINALITY AS d(id, n)
                     LEFT JOIN baton_tasks u ON u.project = $1 AND u.id = d.id
                     WHERE u.status IS DISTINCT FROM 'done' ORDER BY d.n",
                    &[&self.name, &task.dependencies],
                )?
                .into_iter()
                .map(|row| row.get(0))
                .collect();
            let blockers: Vec<&str> = blockers.iter().map(String::as_str).collect();
            check_named_claim(&task, &blockers, now, self.lease)?;
            let paths = baton_core::reservations::task_files(&task);
            let mut now = now;
            if files == Files::Respect && !paths.is_empty() {
                self.wait_keys(tx, &paths)?;
                // Stamped by the read that found the files free.
                let (near, read_at) = self.reservations_near(tx, &paths)?;
                now = read_at;
                let active = near.active_reservations(now, self.lease);
                refuse_held(&task_conflicts(&active, &task, Some(agent)))?;
            }
            self.take(tx, task, agent, now)
        })
    }
    /// Gives `task` (locked, found ready) to `agent`: the claim rule, then the row, the
    /// agent's heartbeat and the `CLAIM` log line in one statement.
    fn take(&self, tx: &mut Tx, mut task: Task, agent: &str, now: Timestamp) -> Result<Claimed> {
        let reclaimed_from = task.take(agent, now, self.lease);
        let claimed = Claimed {
            task,
            reclaimed_from,
        };
        let entry = LogEntry::claim(agent, Some(&claimed));
        let seen = Some((agent, now));
        save(
            tx,
            &self.name,
            &claimed.task,
            seen,
            Some((&entry, now)),
            false,
        )?;
        Ok(claimed)
    }
    /// Applies `rule` to task `id` under a row lock; a refusal changes nothing.
    /// The change is journaled in the worker's log (the leader's without one), worded by the
    /// core as on every store.
    fn change(
        &self,
        id: &str,
        worker: Option<&str>,
        change: TaskAction,
        mut rule: impl FnMut(&mut Task, Timestamp) -> baton_core::Result<()>,
    ) -> baton_core::Result<Task> {
        if let Some(agent) = worker {
            baton_core::names::validate_agent_id(agent)?;
        }
        self.transact_unclocked(|tx| {
            let (mut task, now) = locked_task_now(tx, &self.name, id)?;
            let was_done = task.status == TaskStatus::Done;
            rule(&mut task, now)?;
            if task.status == TaskStatus::Done && !was_done {
                // A decrement, not a recount: it reads the row as the last completion left it
                // (after waiting for its lock), so two dependencies done at once both count.
                tx.queue(
                    "UPDATE baton_tasks
                     SET waiting = waiting - cardinality(array_positions(dependencies, $2))
                     WHERE project = $1 AND dependencies @> ARRAY[$2]::text[]",
                    vec![Box::new(self.name.clone()), Box::new(task.id.clone())],
                )?;
            }
            let entry = LogEntry::task(change, worker, &task);
            // Available again, or done (its dependents may be ready): waiting claims look.
            let wake =
                matches!(task.status, TaskStatus::Available | TaskStatus::Done) || task.sent_back;
            let seen = worker.map(|agent| (agent, now));
            save(tx, &self.name, &task, seen, Some((&entry, now)), wake)?;
            Ok(task)
        })
    }
}

impl TaskStore for PgStore {
    fn describe(&self) -> String {
        format!("project {} in PostgreSQL at {}", self.name, self.store)
    }

    fn lease(&self) -> Duration {
        self.lease
    }

    /// Adds a task, validated as the folder validates it (ids, text, priority, files, unknown
    /// dependencies); its id is the next free `task-N` unless chosen.
    fn add_task(&self, new: NewTask) -> baton_core::Result<Task> {
        self.transact(|tx, now| {
            let mut new = new.clone(); // the whole operation may run again on a new connection
            // The project row serialises adds: ids and positions are handed out in order.
            let row = tx.query_one(
                "SELECT next_number, next_position FROM baton_projects WHERE name = $1 FOR UPDATE",
                &[&self.name],
            )?;
            let (mut number, position): (i64, i64) = (row.get(0), row.get(1));
            if new.id.is_none() {
                loop {
                    let candidate = format!("task-{number}");
                    number += 1;
                    if !exists(tx, &self.name, &candidate)? {
                        new.id = Some(candidate);
                        break;
                    }
                }
            }
            // The folder's checks, on the tasks they concern: the named id (duplicates) and
            // the dependencies (unknown ones).
            let mut wanted = new.dependencies.clone();
            wanted.extend(new.id.clone());
            // Shared locks on the dependencies: a completion of one of them waits for this
            // insert (and then counts the new task among its dependants), or this waits for
            // the completion and sees it done.
            let mut file = TaskFile::new(now);
            file.tasks = baton_core::Tasks::from(load(
                tx,
                "SELECT body FROM baton_tasks WHERE project = $1 AND id = ANY($2)
                 ORDER BY position FOR SHARE",
                &[&self.name, &wanted],
            )?);
            let task = file.add_task(new, now)?.clone();
            let waiting = waiting_on(&file, &task);
            let (keys, reach) = baton_core::reservations::task_keys(&task);
            tx.execute(
                "INSERT INTO baton_tasks
                     (project, id, position, status, priority, created_at, dependencies, body,
                      waiting, keys, reach)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
                &[
                    &self.name,
                    &task.id,
                    &position,
                    &task.status.as_str(),
                    &(task.priority as i32),
                    &now.0,
                    &task.dependencies,
                    &to_body(&task),
                    &waiting,
                    &keys,
                    &reach,
                ],
            )?;
            tx.execute(
                "UPDATE baton_projects SET next_number = $2, next_position = $3 WHERE name = $1",
                &[&self.name, &number, &(position + 1)],
            )?;
            wake(tx, &self.name)?;
            journal(tx, &self.name, &LogEntry::added(&task), now)?;
            Ok(task)
        })
    }

    /// Edits a task as the folder edits it. A change of dependencies is checked against the
    /// whole graph (cycles), under the project's lock so two such edits cannot cross.
    fn edit_task(&self, id: &str, edit: TaskEdit) -> baton_core::Result<Task> {
        self.transact(|tx, now| {
            if edit.dependencies.is_some() {
                tx.execute(
                    "SELECT 1 FROM baton_projects WHERE name = $1 FOR UPDATE",
                    &[&self.name],
                )?;
            }
            let target = locked_task(tx, &self.name, id)?;
            if let Some(dependencies) = &edit.dependencies {
                // As in `add_task`: a completion of a new dependency cannot slip by unseen.
                tx.execute(
                    "SELECT 1 FROM baton_tasks WHERE project = $1 AND id = ANY($2) FOR SHARE",
                    &[&self.name, dependencies],
                )?;
            }
            let mut file = TaskFile::new(now);
            file.tasks = baton_core::Tasks::from(if edit.dependencies.is_some() {
                load(
                    tx,
                    "SELECT body FROM baton_tasks WHERE project = $1 ORDER BY position",
                    &[&self.name],
                )?
            } else {
                vec![target]
            });
            let task = file.edit_task(id, edit.clone())?.clone();
            let entry = LogEntry::edited(&task);
            save(tx, &self.name, &task, None, Some((&entry, now)), false)?;
            if edit.dependencies.is_some() {
                tx.execute(
                    "UPDATE baton_tasks SET waiting = $3 WHERE project = $1 AND id = $2",
                    &[&self.name, &task.id, &waiting_on(&file, &task)],
                )?;
            }
            Ok(task)
        })
    }

    /// The owner starts work on its claimed task.
    fn start(&self, agent: &str, id: &str) -> baton_core::Result<Task> {
        let lease = self.lease;
        self.change(id, Some(agent), TaskAction::Start, |task, now| {
            task.start(agent, now, lease)
        })
    }

    /// The owner completes its task in progress.
    fn complete(&self, agent: &str, id: &str, report: Completion) -> baton_core::Result<Task> {
        self.change(id, Some(agent), TaskAction::Complete, |task, now| {
            task.complete(agent, report.clone(), now)
        })
    }

    /// The owner fails its task, saying why.
    fn fail(&self, agent: &str, id: &str, reason: &str) -> baton_core::Result<Task> {
        self.change(id, Some(agent), TaskAction::Fail, |task, now| {
            task.fail(agent, reason, now)
        })
    }

    /// The owner hands its task back.
    fn release(&self, agent: &str, id: &str) -> baton_core::Result<Task> {
        self.change(id, Some(agent), TaskAction::Release, |task, _| {
            task.release(agent)
        })
    }

    /// The leader puts a failed, cancelled or stale task back to available.
    fn reset(&self, id: &str, force: bool) -> baton_core::Result<Task> {
        let lease = self.lease;
        self.change(id, None, TaskAction::Reset, |task, now| {
            task.reset(now, lease, force)
        })
    }

    /// The leader sends a done task back for more work.
    fn reopen(&self, id: &str, request: &str, to: Reopen) -> baton_core::Result<Task> {
        let lease = self.lease;
        self.change(id, None, TaskAction::Reopen, |task, now| {
            task.reopen(request, to, now, lease)
        })
    }

    /// The lead approves a proposed task.
    fn approve(&self, id: &str) -> baton_core::Result<Task> {
        self.change(id, None, TaskAction::Approve, |task, _| task.approve())
    }

    /// The leader cancels an unfinished task.
    fn cancel(&self, id: &str, reason: Option<&str>) -> baton_core::Result<Task> {
        self.change(id, None, TaskAction::Cancel, |task, now| {
            task.cancel(reason, now)
        })
    }

    /// Renews `agent`'s leases; returns the ids of the tasks it holds.
    fn heartbeat(&self, agent: &str) -> baton_core::Result<Vec<String>> {
        baton_core::names::validate_agent_id(agent)?;
        let lease = self.lease;
        self.transact(|tx, now| {
            let held = load(
                tx,
                "SELECT body FROM baton_tasks
                 WHERE project = $1 AND claimed_by = $2 AND status IN ('claimed', 'in_progress')
                 ORDER BY position FOR UPDATE",
                &[&self.name, &agent],
            )?;
            let mut renewed = Vec::new();
            for mut task in held {
                if task.renew(agent, now, lease) {
                    save(tx, &self.name, &task, None, None, false)?;
                    renewed.push(task.id);
                }
            }
            touch(tx, &self.name, agent, now)?;
            journal(tx, &self.name, &LogEntry::heartbeat(agent, &renewed), now)?;
            Ok(renewed)
        })
    }

    /// The board: every task in order, with counts (the one read of the whole project).
    fn status(&self) -> baton_core::Result<StatusReport> {
        let lease = self.lease;
        self.transact(|tx, now| {
            let goal: String = tx
                .query_one(
                    "SELECT goal FROM baton_projects WHERE name = $1",
                    &[&self.name],
                )?
                .get(0);
            let mut file = TaskFile::new(now);
            file.tasks = baton_core::Tasks::from(load(
                tx,
                "SELECT body FROM baton_tasks WHERE project = $1 ORDER BY position",
                &[&self.name],
            )?);
            crate::reservations::explicit(tx, &self.name, &mut file)?;
            Ok(StatusReport::build(file, Some(goal), now, lease))
        })
    }

    fn claim(&self, request: &ClaimRequest) -> baton_core::Result<Option<Claimed>> {
        baton_core::names::validate_agent_id(&request.agent)?;
        match &request.task {
            None => self.claim_next(&request.agent, request.files),
            Some(id) => self
                .claim_named(&request.agent, id, request.files)
                .map(Some),
        }
    }

    fn reserve(&self, new: NewReservation) -> baton_core::Result<Reservation> {
        crate::reservations::reserve(self, new)
    }

    fn unreserve(&self, agent: &str, paths: &[String]) -> baton_core::Result<Vec<Reservation>> {
        crate::reservations::unreserve(self, agent, paths)
    }

    fn reservations(&self) -> baton_core::Result<Vec<Reservation>> {
        crate::reservations::reservations(self)
    }

    fn check_paths(&self, paths: &[String], agent: Option<&str>) -> baton_core::Result<Vec<Hold>> {
        crate::reservations::check_paths(self, paths, agent)
    }

    fn snapshot(&self) -> baton_core::Result<(TaskFile, Timestamp)> {
        crate::notes::snapshot(self)
    }

    fn task(&self, id: &str) -> baton_core::Result<Option<Task>> {
        self.transact_unclocked(|tx| {
            Ok(crate::rows::load(
                tx,
                "SELECT body FROM baton_tasks WHERE project = $1 AND id = $2",
                &[&self.name, &id],
            )?
            .pop())
        })
    }

    fn discover(&self, agent: &str, text: &str) -> baton_core::Result<String> {
        crate::notes::discover(self, agent, text)
    }

    fn logs(&self, agent: Option<&str>, tail: usize) -> baton_core::Result<Vec<LogLine>> {
        crate::notes::logs(self, agent, tail)
    }

    fn aggregate(&self) -> baton_core::Result<Aggregate> {
        crate::notes::aggregate(self)
    }

    fn doctor(&self, fix: bool) -> baton_core::Result<DoctorReport> {
        crate::notes::doctor(self, fix)
    }

    fn notes(&self) -> baton_core::Result<Notes> {
        crate::notes::notes(self)
    }

    fn write_master_plan(&self, by: &str, text: &str) -> baton_core::Result<()> {
        crate::notes::write_master_plan(self, by, text)
    }

    fn outlook(&self, agent: &str) -> baton_core::Result<(Outlook, Timestamp)> {
        crate::listen::outlook(self, agent)
    }

    fn listen(&self) -> baton_core::Result<Option<Box<dyn Listener>>> {
        Ok(Some(self.listen_on(crate::sql::CHANNEL)?))
    }

    fn ready_tasks(&self) -> baton_core::Result<Vec<TaskView>> {
        crate::listen::ready_tasks(self)
    }

    fn nothing_ready_reason(&self) -> baton_core::Result<String> {
        crate::listen::nothing_ready_reason(self)
    }

    fn held_back_by_files(&self, limit: usize) -> baton_core::Result<Vec<TaskView>> {
        crate::listen::held_back_by_files(self, limit)
    }

    fn listen_for_changes(&self) -> baton_core::Result<Option<Box<dyn Listener>>> {
        Ok(Some(self.listen_on(crate::sql::CHANGES)?))
    }

    fn log_since(&self, after: u64) -> baton_core::Result<Option<(Vec<LogLine>, u64)>> {
        let after = i64::try_from(after).unwrap_or(i64::MAX);
        let (lines, last) = crate::notes::log_since(self, after)?;
        Ok(Some((lines, u64::try_from(last).unwrap_or_default())))
    }

    fn changes(&self) -> Changes {
        Changes::Notifications
    }

    fn shared_across_machines(&self) -> bool {
        true
    }

    /// When `agent` last showed a sign of life, from its row alone, with the database's time.
    fn last_seen(&self, agent: &str) -> baton_core::Result<(Option<Timestamp>, Timestamp)> {
        baton_core::names::validate_agent_id(agent)?;
        self.transact(|tx, now| {
            let seen = tx
                .query_opt(
                    "SELECT last_seen FROM baton_agents WHERE project = $1 AND name = $2",
                    &[&self.name, &agent],
                )?
                .map(|row| Timestamp(row.get::<_, DateTime<Utc>>(0)));
            Ok((seen, now))
        })
    }
}
