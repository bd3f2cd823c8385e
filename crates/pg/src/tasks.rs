//! [`PgProject`]: one project's tasks in PostgreSQL. Every operation is one transaction that
//! takes its time from the database and locks only the rows it changes; the task rules are
//! `baton-store`'s, applied to the row as the folder applies them to its entry.

use std::sync::{LazyLock, Mutex};
use std::time::Duration;

use baton_store::lifecycle::{Claim, Completion, DEFAULT_LEASE, Files, NewTask, TaskEdit};
use baton_store::model::{Task, TaskFile, TaskStatus};
use baton_store::project::LEADER;
use baton_store::reservations::task_conflicts;
use baton_store::{
    Aggregate, DoctorReport, Hold, Listener, LogLine, NewReservation, Outlook, Reservation,
    StatusReport, StoreError, TaskStore, TaskView, Timestamp,
};
use chrono::{DateTime, Utc};
use std::collections::HashMap;

use postgres::types::ToSql;
use postgres::{Client, Row, Statement, Transaction};
use serde_json::Value;

use crate::connect::{connect, describe};
use crate::error::{Failure, Result};
use crate::schema;

/// Every dependency of row `t` is done (an unknown dependency is never done).
pub(crate) const DEPENDENCIES_DONE: &str = "NOT EXISTS (
      SELECT 1 FROM unnest(t.dependencies) AS d(id)
      LEFT JOIN baton_tasks u ON u.project = t.project AND u.id = d.id
      WHERE u.status IS DISTINCT FROM 'done')";

/// An available task whose dependencies are all done (the `baton_tasks_ready` index).
pub(crate) const READY: &str = "t.status = 'available' AND t.waiting = 0";
/// A held task whose lease ran out, by the database's clock.
pub(crate) const EXPIRED: &str =
    "t.status IN ('claimed', 'in_progress') AND t.lease_expires_at <= statement_timestamp()";

/// A task a claim could take now: ready, or held on an expired lease with its dependencies
/// done (what the folder's `Task::is_claimable` and its dependency check say, as SQL on row
/// `t`).
pub(crate) static CLAIMABLE: LazyLock<String> =
    LazyLock::new(|| format!("(({READY}) OR ({EXPIRED} AND {DEPENDENCIES_DONE}))"));

/// The tasks a claim could take, best first (what `worker list` shows, and what a claim
/// passing over tasks whose files are held walks through).
pub(crate) static READY_TASKS: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT body FROM baton_tasks t WHERE t.project = $1 AND {}
         ORDER BY t.priority, t.created_at, t.position",
        *CLAIMABLE
    )
});

/// The best ready task, locked, skipping rows other claims hold: the best available one (read
/// in the order of the `baton_tasks_ready` index, so a large board, however many of its tasks
/// are blocked, costs no more than a small one) and the best one held on an expired lease,
/// whichever sorts first. Both are locked until the transaction ends; the one not taken is
/// free again a moment later. Built once per process: claims are the hot path.
static BEST_READY: LazyLock<String> = LazyLock::new(|| best_ready("", false));

/// [`BEST_READY`] that also tries the chosen task's file lock keys (its `keys` exclusively,
/// the rest of its `reach` shared; see `reservations`) in the same round trip: the third
/// column says whether all were taken, NULL when the row has none recorded.
static BEST_READY_KEYED: LazyLock<String> = LazyLock::new(|| best_ready("", true));

/// [`BEST_READY_KEYED`] but for the tasks in `$2` (passed over already).
static BEST_READY_BUT_KEYED: LazyLock<String> =
    LazyLock::new(|| best_ready("t.id <> ALL($2) AND ", true));

fn best_ready(extra: &str, keyed: bool) -> String {
    let candidate = |condition: &str| {
        format!(
            "SELECT t.id, t.priority, t.created_at, t.position, t.body, t.keys, t.reach
             FROM baton_tasks t
             WHERE t.project = $1 AND {extra}{condition}
             ORDER BY t.priority, t.created_at, t.position
             LIMIT 1 FOR UPDATE SKIP LOCKED"
        )
    };
    let keys = if keyed {
        ", CASE WHEN best.keys IS NULL THEN NULL ELSE (
             SELECT coalesce(bool_and(taken), true) FROM (
                 SELECT pg_try_advisory_xact_lock(hashtext('baton:' || $1 || ':' || k)) AS taken
                 FROM unnest(best.keys) AS k
                 UNION ALL
                 SELECT pg_try_advisory_xact_lock_shared(hashtext('baton:' || $1 || ':' || k))
                 FROM unnest(best.reach) AS k WHERE NOT k = ANY(best.keys)) AS tried) END"
    } else {
        ""
    };
    format!(
        "WITH available AS ({}), expired AS ({}),
         best AS (SELECT * FROM (SELECT * FROM available UNION ALL SELECT * FROM expired) AS c
                  ORDER BY c.priority, c.created_at, c.position LIMIT 1)
         SELECT best.body, statement_timestamp(){keys} FROM best",
        candidate(READY),
        candidate(&format!("{EXPIRED} AND {DEPENDENCIES_DONE}"))
    )
}

/// The channel waiting claims listen on: a task may have become ready. The payload is the
/// project's name.
pub(crate) const CHANNEL: &str = "baton_tasks";
/// The channel watchers listen on: anything of the project changed (payload: its name).
pub(crate) const CHANGES: &str = "baton_changes";

/// A connection and the statements prepared on it (by their SQL), so an operation's
/// statements are parsed and planned once per connection, not once per call: one round trip
/// each instead of two.
pub(crate) struct Connection {
    client: Client,
    prepared: HashMap<String, Statement>,
}

impl Connection {
    fn new(client: Client) -> Connection {
        Connection {
            client,
            prepared: HashMap::new(),
        }
    }
}

/// A transaction on a project's connection, running its statements prepared.
pub(crate) struct Tx<'a> {
    tx: Transaction<'a>,
    prepared: &'a mut HashMap<String, Statement>,
}

impl<'a> Tx<'a> {
    /// A transaction whose statements are prepared in `prepared` (for a connection of its own).
    pub(crate) fn over(tx: Transaction<'a>, prepared: &'a mut HashMap<String, Statement>) -> Self {
        Tx { tx, prepared }
    }

    pub(crate) fn commit(self) -> Result<()> {
        Ok(self.tx.commit()?)
    }

    fn statement(&mut self, sql: &str) -> Result<Statement> {
        if let Some(statement) = self.prepared.get(sql) {
            return Ok(statement.clone());
        }
        let statement = self.tx.prepare(sql)?;
        self.prepared.insert(sql.to_string(), statement.clone());
        Ok(statement)
    }

    pub(crate) fn query(&mut self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<Row>> {
        let statement = self.statement(sql)?;
        Ok(self.tx.query(&statement, params)?)
    }

    pub(crate) fn query_one(&mut self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Row> {
        let statement = self.statement(sql)?;
        Ok(self.tx.query_one(&statement, params)?)
    }

    pub(crate) fn query_opt(
        &mut self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Option<Row>> {
        let statement = self.statement(sql)?;
        Ok(self.tx.query_opt(&statement, params)?)
    }

    pub(crate) fn execute(&mut self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<u64> {
        let statement = self.statement(sql)?;
        Ok(self.tx.execute(&statement, params)?)
    }
}

/// A project in a PostgreSQL database, over one connection.
pub struct PgProject {
    connection: Mutex<Connection>,
    /// For the extra connection a waiting claim listens on.
    pub(crate) url: String,
    pub(crate) name: String,
    /// `user@host:port/db`, for messages (never the password).
    pub(crate) store: String,
    pub(crate) lease: Duration,
}

impl PgProject {
    /// Creates project `name` (migrating the schema first).
    pub fn init(
        url: &str,
        name: &str,
        goal: &str,
        approach: Option<&str>,
    ) -> baton_store::Result<PgProject> {
        let store = describe(url);
        let goal = baton_store::notes::check_goal(goal)?;
        baton_store::names::validate_name("project name", name)?;
        let created = (|| {
            let mut client = connect(url)?;
            schema::migrate(&mut client, &store)?;
            let mut prepared = HashMap::new();
            let mut tx = Tx::over(client.transaction()?, &mut prepared);
            let now = database_now(&mut tx)?;
            let plan = baton_store::notes::master_plan(goal, approach, now);
            let created = tx.execute(
                "INSERT INTO baton_projects (name, goal, approach, master_plan)
                 VALUES ($1, $2, $3, $4) ON CONFLICT (name) DO NOTHING",
                &[&name, &goal, &approach, &plan],
            )?;
            if created == 0 {
                return Err(Failure::from(StoreError::ProjectExists {
                    name: name.to_string(),
                    store: store.clone(),
                }));
            }
            journal(&mut tx, name, LEADER, "INIT", &format!("Goal: {goal}"), now)?;
            tx.commit()?;
            Ok(client)
        })()
        .map_err(|e| e.at(&store))?;
        Ok(PgProject::over(created, url, name, store))
    }

    /// Opens project `name`, which must exist.
    pub fn open(url: &str, name: &str) -> baton_store::Result<PgProject> {
        let store = describe(url);
        baton_store::names::validate_name("project name", name)?;
        let client = (|| {
            let mut client = connect(url)?;
            // The common case in one round trip: the schema is current and the project there.
            // Anything else (no schema yet, an older or newer one) takes the migration's path.
            let current = client
                .query_typed_one(
                    "SELECT (SELECT version FROM baton_schema),
                            EXISTS (SELECT 1 FROM baton_projects WHERE name = $1)",
                    &[(&name, postgres::types::Type::TEXT)],
                )
                .ok()
                .filter(|row| row.get::<_, Option<i32>>(0) == Some(schema::VERSION));
            let known = match current {
                Some(row) => row.get::<_, bool>(1),
                None => {
                    schema::migrate(&mut client, &store)?;
                    client
                        .query_opt("SELECT 1 FROM baton_projects WHERE name = $1", &[&name])?
                        .is_some()
                }
            };
            if !known {
                return Err(Failure::from(StoreError::UnknownProject {
                    name: name.to_string(),
                    store: store.clone(),
                }));
            }
            Ok(client)
        })()
        .map_err(|e| e.at(&store))?;
        Ok(PgProject::over(client, url, name, store))
    }

    pub(crate) fn over(client: Client, url: &str, name: &str, store: String) -> PgProject {
        PgProject {
            connection: Mutex::new(Connection::new(client)),
            url: url.to_string(),
            name: name.to_string(),
            store,
            lease: DEFAULT_LEASE,
        }
    }

    /// Uses `lease` for new claims, starts and heartbeats (default 15 minutes).
    pub fn with_lease(mut self, lease: Duration) -> Self {
        self.lease = lease;
        self
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Runs `op` in one transaction on the project's connection; a failure rolls it back.
    pub(crate) fn transact<T>(
        &self,
        mut op: impl FnMut(&mut Tx, Timestamp) -> Result<T>,
    ) -> baton_store::Result<T> {
        self.transact_unclocked(|tx| {
            let now = database_now(tx)?;
            op(tx, now)
        })
    }

    /// [`Self::transact`] for an operation that reads the clock itself, with its first query
    /// (one round trip fewer, on the claim path).
    fn transact_unclocked<T>(
        &self,
        mut op: impl FnMut(&mut Tx) -> Result<T>,
    ) -> baton_store::Result<T> {
        let mut connection = self.connection.lock().unwrap_or_else(|e| e.into_inner());
        // A connection lost since the last operation (the server restarted, the network
        // dropped) is replaced, and an operation that found it lost before committing runs
        // again once on the new one: nothing of it can have been applied. A connection lost
        // while committing fails the operation, since the commit may or may not have landed.
        let mut retried = false;
        loop {
            if connection.client.is_closed() {
                *connection = Connection::new(connect(&self.url).map_err(|e| e.at(&self.store))?);
            }
            let mut committing = false;
            let mut run = || -> Result<T> {
                let Connection { client, prepared } = &mut *connection;
                let mut tx = Tx {
                    tx: client.transaction()?,
                    prepared,
                };
                let out = op(&mut tx)?;
                committing = true;
                tx.commit()?;
                Ok(out)
            };
            match run() {
                Err(Failure::Database(e))
                    if !committing && !retried && (connection.client.is_closed() || ended(&e)) =>
                {
                    retried = true;
                    *connection =
                        Connection::new(connect(&self.url).map_err(|e| e.at(&self.store))?);
                }
                outcome => return outcome.map_err(|e| e.at(&self.store)),
            }
        }
    }

    /// Adds a task, validated as the folder validates it (ids, text, priority, files, unknown
    /// dependencies); its id is the next free `task-N` unless chosen.
    pub fn add_task(&self, new: NewTask) -> baton_store::Result<Task> {
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
            file.tasks = load(
                tx,
                "SELECT body FROM baton_tasks WHERE project = $1 AND id = ANY($2)
                 ORDER BY position FOR SHARE",
                &[&self.name, &wanted],
            )?;
            let task = file.add_task(new, now)?.clone();
            let waiting = waiting_on(&file, &task);
            let (keys, reach) = baton_store::reservations::task_keys(&task);
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
            journal(
                tx,
                &self.name,
                LEADER,
                "ADD_TASK",
                &baton_store::journal::added(&task),
                now,
            )?;
            Ok(task)
        })
    }

    /// Edits a task as the folder edits it. A change of dependencies is checked against the
    /// whole graph (cycles), under the project's lock so two such edits cannot cross.
    pub fn edit_task(&self, id: &str, edit: TaskEdit) -> baton_store::Result<Task> {
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
            file.tasks = if edit.dependencies.is_some() {
                load(
                    tx,
                    "SELECT body FROM baton_tasks WHERE project = $1 ORDER BY position",
                    &[&self.name],
                )?
            } else {
                vec![target]
            };
            let task = file.edit_task(id, edit.clone())?.clone();
            let entry = Entry {
                agent: LEADER,
                action: "EDIT_TASK",
                details: format!("{}: {}", task.id, task.description),
                now,
            };
            save(tx, &self.name, &task, None, Some(&entry), false)?;
            if edit.dependencies.is_some() {
                tx.execute(
                    "UPDATE baton_tasks SET waiting = $3 WHERE project = $1 AND id = $2",
                    &[&self.name, &task.id, &waiting_on(&file, &task)],
                )?;
            }
            Ok(task)
        })
    }

    /// Claims the best ready task for `agent` (priority, then age, then board order); `None`
    /// when nothing is ready. Rows other workers are claiming are skipped, not waited for.
    pub fn claim(&self, agent: &str) -> baton_store::Result<Option<Claim>> {
        self.claim_with(agent, Files::Respect)
    }

    /// [`PgProject::claim`], saying whether other agents' file reservations count. Respecting
    /// them, claims of the project take its reservation lock in turn, and the best ready task
    /// whose files no other agent holds exclusively is taken.
    pub fn claim_with(&self, agent: &str, files: Files) -> baton_store::Result<Option<Claim>> {
        baton_store::names::validate_agent_id(agent)?;
        let lease = self.lease;
        self.transact_unclocked(|tx| {
            // Passed over: tasks whose files another agent holds, or another claim is taking.
            let mut passed: Vec<String> = Vec::new();
            loop {
                let respect = files == Files::Respect;
                let row = match (respect, passed.is_empty()) {
                    (false, _) => tx.query_opt(&BEST_READY, &[&self.name])?,
                    (true, true) => tx.query_opt(&BEST_READY_KEYED, &[&self.name])?,
                    (true, false) => tx.query_opt(&BEST_READY_BUT_KEYED, &[&self.name, &passed])?,
                };
                let Some(row) = row else {
                    let now = database_now(tx)?;
                    journal(tx, &self.name, agent, "CLAIM", "nothing ready", now)?;
                    return Ok(None);
                };
                let mut now = Timestamp(row.get::<_, DateTime<Utc>>(1));
                let task = parse(row.get(0))?;
                let paths = baton_store::reservations::task_files(&task);
                if respect && !paths.is_empty() {
                    // The keys were tried with the row; a row from before they were recorded
                    // has them tried now.
                    let taken = match row.get::<_, Option<bool>>(2) {
                        Some(taken) => taken,
                        None => self.try_keys(tx, &paths)?,
                    };
                    if !taken {
                        passed.push(task.id);
                        continue;
                    }
                    // Stamped by the read that found the files free: a claim recorded before
                    // the completion that freed them would say two tasks overlapped.
                    let (near, read_at) = self.reservations_near(tx, &paths)?;
                    now = read_at;
                    let active = near.active_reservations(now, lease);
                    if !task_conflicts(&active, &task, Some(agent)).is_empty() {
                        passed.push(task.id);
                        continue;
                    }
                }
                return Ok(Some(self.take(tx, task, agent, now)?));
            }
        })
    }

    /// Claims the task `id` for `agent` if it is ready (dependencies done; available, or held
    /// on an expired lease), refused with the reason otherwise.
    pub fn claim_task(&self, agent: &str, id: &str) -> baton_store::Result<Claim> {
        self.claim_task_with(agent, id, Files::Respect)
    }

    /// [`PgProject::claim_task`], saying whether other agents' file reservations count.
    pub fn claim_task_with(
        &self,
        agent: &str,
        id: &str,
        files: Files,
    ) -> baton_store::Result<Claim> {
        baton_store::names::validate_agent_id(agent)?;
        self.transact(|tx, now| {
            let task = locked_task(tx, &self.name, id)?;
            task.check_claimable(now, self.lease)?;
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
            if !blockers.is_empty() {
                let hint = format!("; it waits for {}", blockers.join(", "));
                return Err(baton_store::rules::illegal(&task, "claim", &hint).into());
            }
            let paths = baton_store::reservations::task_files(&task);
            let mut now = now;
            if files == Files::Respect && !paths.is_empty() {
                self.wait_keys(tx, &paths)?;
                // Stamped by the read that found the files free.
                let (near, read_at) = self.reservations_near(tx, &paths)?;
                now = read_at;
                let active = near.active_reservations(now, self.lease);
                let holds = task_conflicts(&active, &task, Some(agent));
                if !holds.is_empty() {
                    return Err(crate::reservations::held(&holds).into());
                }
            }
            self.take(tx, task, agent, now)
        })
    }

    /// Gives `task` (locked, found ready) to `agent`: the claim rule, then the row, the
    /// agent's heartbeat and the `CLAIM` log line in one statement.
    fn take(&self, tx: &mut Tx, mut task: Task, agent: &str, now: Timestamp) -> Result<Claim> {
        let reclaimed_from = task.take(agent, now, self.lease);
        let claim = Claim {
            task,
            reclaimed_from,
        };
        let entry = Entry {
            agent,
            action: "CLAIM",
            details: baton_store::journal::claimed(&claim),
            now,
        };
        let seen = Some((agent, now));
        save(tx, &self.name, &claim.task, seen, Some(&entry), false)?;
        Ok(claim)
    }

    /// The owner starts work on its claimed task.
    pub fn start(&self, agent: &str, id: &str) -> baton_store::Result<Task> {
        let lease = self.lease;
        self.change(id, Some(agent), "START", |task, now| {
            task.start(agent, now, lease)
        })
    }

    /// The owner completes its task in progress.
    pub fn complete(&self, agent: &str, id: &str, report: Completion) -> baton_store::Result<Task> {
        self.change(id, Some(agent), "COMPLETE", |task, now| {
            task.complete(agent, report.clone(), now)
        })
    }

    /// The owner fails its task, saying why.
    pub fn fail(&self, agent: &str, id: &str, reason: &str) -> baton_store::Result<Task> {
        self.change(id, Some(agent), "FAIL", |task, now| {
            task.fail(agent, reason, now)
        })
    }

    /// The owner hands its task back.
    pub fn release(&self, agent: &str, id: &str) -> baton_store::Result<Task> {
        self.change(id, Some(agent), "RELEASE", |task, _| task.release(agent))
    }

    /// The leader puts a failed, cancelled or stale task back to available.
    pub fn reset(&self, id: &str, force: bool) -> baton_store::Result<Task> {
        let lease = self.lease;
        self.change(id, None, "RESET", |task, now| task.reset(now, lease, force))
    }

    /// The leader cancels an unfinished task.
    pub fn cancel(&self, id: &str, reason: Option<&str>) -> baton_store::Result<Task> {
        self.change(id, None, "CANCEL", |task, now| task.cancel(reason, now))
    }

    /// Renews `agent`'s leases; returns the ids of the tasks it holds.
    pub fn heartbeat(&self, agent: &str) -> baton_store::Result<Vec<String>> {
        baton_store::names::validate_agent_id(agent)?;
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
            journal(tx, &self.name, agent, "HEARTBEAT", &renewed.join(", "), now)?;
            Ok(renewed)
        })
    }

    /// The board: every task in order, with counts (the one read of the whole project).
    pub fn status(&self) -> baton_store::Result<StatusReport> {
        let lease = self.lease;
        self.transact(|tx, now| {
            let goal: String = tx
                .query_one(
                    "SELECT goal FROM baton_projects WHERE name = $1",
                    &[&self.name],
                )?
                .get(0);
            let mut file = TaskFile::new(now);
            file.tasks = load(
                tx,
                "SELECT body FROM baton_tasks WHERE project = $1 ORDER BY position",
                &[&self.name],
            )?;
            crate::reservations::explicit(tx, &self.name, &mut file)?;
            Ok(StatusReport::build(&file, Some(goal), now, lease))
        })
    }

    /// Applies `rule` to task `id` under a row lock; a refusal changes nothing.
    /// The change is journaled as `action` in the worker's log (the leader's without one),
    /// as the folder journals it.
    fn change(
        &self,
        id: &str,
        worker: Option<&str>,
        action: &str,
        mut rule: impl FnMut(&mut Task, Timestamp) -> baton_store::Result<()>,
    ) -> baton_store::Result<Task> {
        if let Some(agent) = worker {
            baton_store::names::validate_agent_id(agent)?;
        }
        self.transact(|tx, now| {
            let mut task = locked_task(tx, &self.name, id)?;
            let was_done = task.status == TaskStatus::Done;
            rule(&mut task, now)?;
            if task.status == TaskStatus::Done && !was_done {
                // A decrement, not a recount: it reads the row as the last completion left it
                // (after waiting for its lock), so two dependencies done at once both count.
                tx.execute(
                    "UPDATE baton_tasks
                     SET waiting = waiting - cardinality(array_positions(dependencies, $2))
                     WHERE project = $1 AND dependencies @> ARRAY[$2]::text[]",
                    &[&self.name, &task.id],
                )?;
            }
            let details = match action {
                "FAIL" | "CANCEL" => format!(
                    "{}: {}",
                    task.id,
                    task.failure_reason.as_deref().unwrap_or_default()
                ),
                _ => task.id.clone(),
            };
            let entry = Entry {
                agent: worker.unwrap_or(LEADER),
                action,
                details,
                now,
            };
            // Available again, or done (its dependents may be ready): waiting claims look.
            let wake = matches!(task.status, TaskStatus::Available | TaskStatus::Done);
            let seen = worker.map(|agent| (agent, now));
            save(tx, &self.name, &task, seen, Some(&entry), wake)?;
            Ok(task)
        })
    }
}

/// The operation's time: the database's clock when its first statement started, which is
/// also when that statement's snapshot was taken. Not `now()` (when `BEGIN` arrived): a
/// claim whose `BEGIN` came before a dependency's completion committed, but whose query came
/// after (so it saw the dependency done), would otherwise be stamped before that completion.
pub(crate) fn database_now(tx: &mut Tx) -> Result<Timestamp> {
    let now: DateTime<Utc> = tx.query_one("SELECT statement_timestamp()", &[])?.get(0);
    Ok(Timestamp(now))
}

fn exists(tx: &mut Tx, project: &str, id: &str) -> Result<bool> {
    Ok(tx
        .query_opt(
            "SELECT 1 FROM baton_tasks WHERE project = $1 AND id = $2",
            &[&project, &id],
        )?
        .is_some())
}

/// Task `id`, its row locked until the transaction ends; unknown ids refused as the folder
/// refuses them.
fn locked_task(tx: &mut Tx, project: &str, id: &str) -> Result<Task> {
    load(
        tx,
        "SELECT body FROM baton_tasks WHERE project = $1 AND id = $2 FOR UPDATE",
        &[&project, &id],
    )?
    .pop()
    .ok_or_else(|| {
        StoreError::UnknownTask {
            id: id.chars().take(80).collect(),
        }
        .into()
    })
}

/// The tasks a query's first column (`body`) holds.
pub(crate) fn load(tx: &mut Tx, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<Task>> {
    tx.query(sql, params)?
        .into_iter()
        .map(|row| parse(row.get(0)))
        .collect()
}

/// A task from its row's `body`.
fn parse(body: Value) -> Result<Task> {
    serde_json::from_value(body).map_err(|e| {
        Failure::from(StoreError::InvalidInput {
            field: "task row",
            reason: format!("does not parse: {e}"),
        })
    })
}

/// How many of `task`'s dependencies (all in `file`) are not done.
fn waiting_on(file: &TaskFile, task: &Task) -> i32 {
    let open = task
        .dependencies
        .iter()
        .filter(|d| file.task(d).is_none_or(|t| t.status != TaskStatus::Done))
        .count();
    i32::try_from(open).unwrap_or(i32::MAX)
}

/// A line for an agent's log, written with the change it records.
pub(crate) struct Entry<'a> {
    pub agent: &'a str,
    pub action: &'a str,
    pub details: String,
    pub now: Timestamp,
}

/// Writes `task` back to its row, with the columns queries use, in one statement (one round
/// trip) with what goes with it: the worker recorded as alive, the log line (watchers told at
/// commit), and waiting claims told a task may have become ready (`wake`).
fn save(
    tx: &mut Tx,
    project: &str,
    task: &Task,
    worker: Option<(&str, Timestamp)>,
    entry: Option<&Entry>,
    wake: bool,
) -> Result<()> {
    let status = task.status.as_str();
    let priority = task.priority as i32;
    let lease = task.lease_expires_at.map(|t| t.0);
    let body = to_body(task);
    let (keys, reach) = baton_store::reservations::task_keys(task);
    let mut params: Vec<&(dyn ToSql + Sync)> = vec![
        &project,
        &task.id,
        &status,
        &priority,
        &task.claimed_by,
        &lease,
        &task.dependencies,
        &body,
        &keys,
        &reach,
    ];
    let seen = worker.map(|(agent, now)| (agent, now.0));
    if let Some((agent, now)) = &seen {
        params.push(agent);
        params.push(now);
    }
    let logged = entry.map(|e| {
        let line = baton_store::journal::format_line(e.action, &e.details, e.now);
        (e.now.0, e.agent, line)
    });
    if let Some((at, agent, line)) = &logged {
        params.push(at);
        params.push(agent);
        params.push(line);
    }
    tx.execute(save_sql(seen.is_some(), logged.is_some(), wake), &params)?;
    Ok(())
}

/// The statement [`save`] runs, for what goes with the row (the parameters after the row's
/// ten: the agent and its time, then the log line's time, agent and text). Each of the
/// eight forms is built once per process.
fn save_sql(seen: bool, logged: bool, wake: bool) -> &'static str {
    static FORMS: LazyLock<Vec<String>> = LazyLock::new(|| {
        (0..8)
            .map(|bits| build_save_sql(bits & 1 != 0, bits & 2 != 0, bits & 4 != 0))
            .collect()
    });
    &FORMS[usize::from(seen) | usize::from(logged) << 1 | usize::from(wake) << 2]
}

fn build_save_sql(seen: bool, logged: bool, wake: bool) -> String {
    let mut parts = vec![
        "saved AS (UPDATE baton_tasks
             SET status = $3, priority = $4, claimed_by = $5, lease_expires_at = $6,
                 dependencies = $7, body = $8, keys = $9, reach = $10
             WHERE project = $1 AND id = $2)"
            .to_string(),
    ];
    let mut next = 11;
    if seen {
        parts.push(format!(
            "seen AS (INSERT INTO baton_agents (project, name, last_seen) VALUES ($1, ${}, ${})
             ON CONFLICT (project, name) DO UPDATE SET last_seen = EXCLUDED.last_seen)",
            next,
            next + 1
        ));
        next += 2;
    }
    let mut notices = Vec::new();
    if logged {
        parts.push(format!(
            "logged AS (INSERT INTO baton_log (project, at, agent, line) VALUES ($1, ${}, ${}, ${}))",
            next,
            next + 1,
            next + 2
        ));
        notices.push(format!("pg_notify('{CHANGES}', $1)"));
    }
    if wake {
        notices.push(format!("pg_notify('{CHANNEL}', $1)"));
    }
    if notices.is_empty() {
        notices.push("1".into());
    }
    format!("WITH {} SELECT {}", parts.join(", "), notices.join(", "))
}

/// Whether the server ended the connection (an administrator, a shutdown, a crash or a
/// restart), so a fresh connection could run the operation.
fn ended(e: &postgres::Error) -> bool {
    e.is_closed()
        || e.as_db_error()
            .is_some_and(|db| matches!(db.code().code(), "57P01" | "57P02" | "57P03"))
}

/// Tells waiting claims (at commit) that a task of `project` may have become ready.
fn wake(tx: &mut Tx, project: &str) -> Result<()> {
    tx.execute("SELECT pg_notify($1, $2)", &[&CHANNEL, &project])?;
    Ok(())
}

/// Appends `[now] ACTION: details` to `agent`'s log, and tells watchers (at commit) that the
/// project changed.
pub(crate) fn journal(
    tx: &mut Tx,
    project: &str,
    agent: &str,
    action: &str,
    details: &str,
    now: Timestamp,
) -> Result<()> {
    let line = baton_store::journal::format_line(action, details, now);
    tx.execute(
        "WITH logged AS (
             INSERT INTO baton_log (project, at, agent, line) VALUES ($1, $2, $3, $4)
         ) SELECT pg_notify($5, $1)",
        &[&project, &now.0, &agent, &line, &CHANGES],
    )?;
    Ok(())
}

/// Serialises numbering within the project (runs, reservations): the project's row, locked
/// until the transaction ends.
pub(crate) fn lock_project(tx: &mut Tx, project: &str) -> Result<()> {
    tx.query_one(
        "SELECT 1 FROM baton_projects WHERE name = $1 FOR UPDATE",
        &[&project],
    )?;
    Ok(())
}

/// Records `agent` as alive at `now`.
fn touch(tx: &mut Tx, project: &str, agent: &str, now: Timestamp) -> Result<()> {
    tx.execute(
        "INSERT INTO baton_agents (project, name, last_seen) VALUES ($1, $2, $3)
         ON CONFLICT (project, name) DO UPDATE SET last_seen = EXCLUDED.last_seen",
        &[&project, &agent, &now.0],
    )?;
    Ok(())
}

pub(crate) fn to_body(task: &Task) -> Value {
    serde_json::to_value(task).expect("a task serialises")
}

impl TaskStore for PgProject {
    fn add_task(&self, new: NewTask) -> baton_store::Result<Task> {
        PgProject::add_task(self, new)
    }
    fn edit_task(&self, id: &str, edit: TaskEdit) -> baton_store::Result<Task> {
        PgProject::edit_task(self, id, edit)
    }
    fn claim_with(&self, agent: &str, files: Files) -> baton_store::Result<Option<Claim>> {
        PgProject::claim_with(self, agent, files)
    }
    fn claim_task_with(&self, agent: &str, id: &str, files: Files) -> baton_store::Result<Claim> {
        PgProject::claim_task_with(self, agent, id, files)
    }
    fn reserve(&self, new: NewReservation) -> baton_store::Result<Reservation> {
        PgProject::reserve(self, new)
    }
    fn unreserve(&self, agent: &str, paths: &[String]) -> baton_store::Result<Vec<Reservation>> {
        PgProject::unreserve(self, agent, paths)
    }
    fn reservations(&self) -> baton_store::Result<Vec<Reservation>> {
        PgProject::reservations(self)
    }
    fn check_paths(&self, paths: &[String], agent: Option<&str>) -> baton_store::Result<Vec<Hold>> {
        PgProject::check_paths(self, paths, agent)
    }
    fn start(&self, agent: &str, id: &str) -> baton_store::Result<Task> {
        PgProject::start(self, agent, id)
    }
    fn complete(&self, agent: &str, id: &str, report: Completion) -> baton_store::Result<Task> {
        PgProject::complete(self, agent, id, report)
    }
    fn fail(&self, agent: &str, id: &str, reason: &str) -> baton_store::Result<Task> {
        PgProject::fail(self, agent, id, reason)
    }
    fn release(&self, agent: &str, id: &str) -> baton_store::Result<Task> {
        PgProject::release(self, agent, id)
    }
    fn heartbeat(&self, agent: &str) -> baton_store::Result<Vec<String>> {
        PgProject::heartbeat(self, agent)
    }
    fn reset(&self, id: &str, force: bool) -> baton_store::Result<Task> {
        PgProject::reset(self, id, force)
    }
    fn cancel(&self, id: &str, reason: Option<&str>) -> baton_store::Result<Task> {
        PgProject::cancel(self, id, reason)
    }
    fn status(&self) -> baton_store::Result<StatusReport> {
        PgProject::status(self)
    }
    fn describe(&self) -> String {
        format!("project {} in PostgreSQL at {}", self.name, self.store)
    }
    fn lease(&self) -> Duration {
        self.lease
    }
    fn snapshot(&self) -> baton_store::Result<(TaskFile, Timestamp)> {
        PgProject::snapshot(self)
    }
    fn discover(&self, agent: &str, text: &str) -> baton_store::Result<String> {
        PgProject::discover(self, agent, text)
    }
    fn logs(&self, agent: Option<&str>, tail: usize) -> baton_store::Result<Vec<LogLine>> {
        PgProject::logs(self, agent, tail)
    }
    fn aggregate(&self) -> baton_store::Result<Aggregate> {
        PgProject::aggregate(self)
    }
    fn doctor(&self, fix: bool) -> baton_store::Result<DoctorReport> {
        PgProject::doctor(self, fix)
    }
    fn notes(&self) -> baton_store::Result<baton_store::notes::Notes> {
        PgProject::notes(self)
    }
    fn outlook(&self, agent: &str) -> baton_store::Result<(Outlook, Timestamp)> {
        PgProject::outlook(self, agent)
    }
    fn listen(&self) -> baton_store::Result<Option<Box<dyn Listener>>> {
        Ok(Some(Box::new(PgProject::listen(self)?)))
    }
    fn ready_tasks(&self) -> baton_store::Result<Vec<TaskView>> {
        PgProject::ready_tasks(self)
    }
    fn nothing_ready_reason(&self) -> baton_store::Result<String> {
        PgProject::nothing_ready_reason(self)
    }
    fn listen_for_changes(&self) -> baton_store::Result<Option<Box<dyn Listener>>> {
        Ok(Some(Box::new(PgProject::listen_for_changes(self)?)))
    }
    fn log_since(&self, after: u64) -> baton_store::Result<Option<(Vec<LogLine>, u64)>> {
        let (lines, last) = PgProject::log_since(self, i64::try_from(after).unwrap_or(i64::MAX))?;
        Ok(Some((lines, u64::try_from(last).unwrap_or_default())))
    }
    fn last_seen(&self, agent: &str) -> baton_store::Result<(Option<Timestamp>, Timestamp)> {
        PgProject::last_seen(self, agent)
    }
}

impl PgProject {
    /// When `agent` last showed a sign of life, from its row alone, with the database's time.
    pub fn last_seen(&self, agent: &str) -> baton_store::Result<(Option<Timestamp>, Timestamp)> {
        baton_store::names::validate_agent_id(agent)?;
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
