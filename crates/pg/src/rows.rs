//! The rows of a project's tasks and what is written with them: loading and parsing tasks,
//! locking one, writing one back in one statement with its log line and wake-ups, the log,
//! the agents' last signs of life, and the database's clock. Shared by every operation of the
//! database store.

use baton_core::{AgentRecord, Task, TaskFile, TaskStatus};
use baton_core::{LogEntry, StoreError, Timestamp};
use chrono::{DateTime, Utc};
use serde_json::Value;
use tokio_postgres::types::ToSql;

use crate::connection::Tx;
use crate::error::{Failure, Result};
use crate::pipeline::Owned;
use crate::sql::{CHANGES, CHANNEL, save_sql};

/// The operation's time: the database's clock when its first statement started, which is
/// also when that statement's snapshot was taken. Not `now()` (when `BEGIN` arrived): a
/// claim whose `BEGIN` came before a dependency's completion committed, but whose query came
/// after (so it saw the dependency done), would otherwise be stamped before that completion.
pub(crate) fn database_now(tx: &mut Tx) -> Result<Timestamp> {
    let now: DateTime<Utc> = tx.query_one("SELECT statement_timestamp()", &[])?.get(0);
    Ok(Timestamp(now))
}

pub(crate) fn exists(tx: &mut Tx, project: &str, id: &str) -> Result<bool> {
    Ok(tx
        .query_opt(
            "SELECT 1 FROM baton_tasks WHERE project = $1 AND id = $2",
            &[&project, &id],
        )?
        .is_some())
}

/// Task `id`, its row locked until the transaction ends; unknown ids refused as the folder
/// refuses them.
pub(crate) fn locked_task(tx: &mut Tx, project: &str, id: &str) -> Result<Task> {
    Ok(locked_task_now(tx, project, id)?.0)
}

/// [`locked_task`], with the database's clock when this statement started: the operation's
/// time when it is the operation's first (see [`database_now`]), with no round trip of its
/// own.
pub(crate) fn locked_task_now(tx: &mut Tx, project: &str, id: &str) -> Result<(Task, Timestamp)> {
    let row = tx
        .query_opt(
            "SELECT body, statement_timestamp() FROM baton_tasks
             WHERE project = $1 AND id = $2 FOR UPDATE",
            &[&project, &id],
        )?
        .ok_or_else(|| StoreError::UnknownTask {
            id: id.chars().take(80).collect(),
        })?;
    Ok((
        parse(row.get(0))?,
        Timestamp(row.get::<_, DateTime<Utc>>(1)),
    ))
}

/// The tasks a query's first column (`body`) holds.
pub(crate) fn load(tx: &mut Tx, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<Task>> {
    tx.query(sql, params)?
        .into_iter()
        .map(|row| parse(row.get(0)))
        .collect()
}

/// A task from its row's `body`.
pub(crate) fn parse(body: Value) -> Result<Task> {
    serde_json::from_value(body).map_err(|e| {
        Failure::from(StoreError::InvalidInput {
            field: "task row",
            reason: format!("does not parse: {e}"),
        })
    })
}

/// How many of `task`'s dependencies (all in `file`) are not done.
pub(crate) fn waiting_on(file: &TaskFile, task: &Task) -> i32 {
    let open = task
        .dependencies
        .iter()
        .filter(|d| file.task(d).is_none_or(|t| t.status != TaskStatus::Done))
        .count();
    i32::try_from(open).unwrap_or(i32::MAX)
}

/// Writes `task` back to its row, with the columns queries use, in one statement with what
/// goes with it: the worker recorded as alive, the log line (watchers told at commit), and
/// waiting claims told a task may have become ready (`wake`). Queued: it goes out with the
/// transaction's next request, its `COMMIT` at the latest ([`Tx::queue`]).
pub(crate) fn save(
    tx: &mut Tx,
    project: &str,
    task: &Task,
    worker: Option<(&str, Timestamp)>,
    entry: Option<(&LogEntry, Timestamp)>,
    wake: bool,
) -> Result<()> {
    let (keys, reach) = baton_core::reservations::task_keys(task);
    let mut params: Vec<Owned> = vec![
        Box::new(project.to_string()),
        Box::new(task.id.clone()),
        Box::new(task.status.as_str()),
        Box::new(task.priority as i32),
        Box::new(task.claimed_by.clone()),
        Box::new(task.lease_expires_at.map(|t| t.0)),
        Box::new(task.dependencies.clone()),
        Box::new(to_body(task)),
        Box::new(keys),
        Box::new(reach),
    ];
    if let Some((agent, now)) = worker {
        params.push(Box::new(agent.to_string()));
        params.push(Box::new(now.0));
    }
    if let Some((e, now)) = entry {
        params.push(Box::new(now.0));
        params.push(Box::new(e.agent.clone()));
        params.push(Box::new(e.line(now)));
    }
    tx.queue(save_sql(worker.is_some(), entry.is_some(), wake), params)
}

/// Tells waiting claims (at commit) that a task of `project` may have become ready. Queued.
pub(crate) fn wake(tx: &mut Tx, project: &str) -> Result<()> {
    tx.queue(
        "SELECT pg_notify($1, $2)",
        vec![Box::new(CHANNEL), Box::new(project.to_string())],
    )
}

/// Appends `entry`'s line at `now` to its agent's log, and tells watchers (at commit) that
/// the project changed. Queued.
pub(crate) fn journal(tx: &mut Tx, project: &str, entry: &LogEntry, now: Timestamp) -> Result<()> {
    tx.queue(
        "WITH logged AS (
             INSERT INTO baton_log (project, at, agent, line) VALUES ($1, $2, $3, $4)
         ) SELECT pg_notify($5, $1)",
        vec![
            Box::new(project.to_string()),
            Box::new(now.0),
            Box::new(entry.agent.clone()),
            Box::new(entry.line(now)),
            Box::new(CHANGES),
        ],
    )
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

/// Records `agent` as alive at `now`. Queued.
pub(crate) fn touch(tx: &mut Tx, project: &str, agent: &str, now: Timestamp) -> Result<()> {
    tx.queue(
        "INSERT INTO baton_agents (project, name, last_seen) VALUES ($1, $2, $3)
         ON CONFLICT (project, name) DO UPDATE SET last_seen = EXCLUDED.last_seen",
        vec![
            Box::new(project.to_string()),
            Box::new(agent.to_string()),
            Box::new(now.0),
        ],
    )
}

pub(crate) fn to_body(task: &Task) -> Value {
    serde_json::to_value(task).expect("a task serialises")
}

/// Every agent's last sign of life, into `file.agents`.
pub(crate) fn load_agents(tx: &mut Tx, project: &str, file: &mut TaskFile) -> Result<()> {
    for row in tx.query(
        "SELECT name, last_seen FROM baton_agents WHERE project = $1 ORDER BY name",
        &[&project],
    )? {
        let seen: DateTime<Utc> = row.get(1);
        file.agents.insert(
            row.get(0),
            AgentRecord {
                last_seen: Some(Timestamp(seen)),
                extra: Default::default(),
            },
        );
    }
    Ok(())
}
