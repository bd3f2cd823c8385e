//! The notes around a project's tasks, in the database so every machine shares them: agents'
//! log lines (`baton_log`, one row per line, written in the transaction of the operation they
//! record), discoveries (`baton_discoveries`), the master plan and the last summary (columns of
//! `baton_projects`). The texts are formatted by `baton-core`, as the folder formats its
//! files, so an export reads like a folder project's notes.

use baton_core::TaskFile;
use baton_core::diagnose;
use baton_core::notes::Notes;
use baton_core::{Aggregate, DoctorReport, LogEntry, LogLine, TaskStore, Timestamp};
use chrono::{DateTime, Utc};

use crate::rows::{database_now, journal, load, load_agents};
use crate::store::PgStore;

/// Every task in board order, with the database's time now (one consistent read).
pub(crate) fn snapshot(store: &PgStore) -> baton_core::Result<(TaskFile, Timestamp)> {
    store.transact(|tx, now| {
        let mut file = TaskFile::new(now);
        let created: DateTime<Utc> = tx
            .query_one(
                "SELECT created_at FROM baton_projects WHERE name = $1",
                &[&store.name],
            )?
            .get(0);
        file.created_at = Some(Timestamp(created));
        // Not tracked (it would make every write contend on one row): left out, so an
        // export of an unchanged project is the same bytes.
        file.last_updated = None;
        file.tasks = baton_core::Tasks::from(load(
            tx,
            "SELECT body FROM baton_tasks WHERE project = $1 ORDER BY position",
            &[&store.name],
        )?);
        load_agents(tx, &store.name, &mut file)?;
        crate::reservations::explicit(tx, &store.name, &mut file)?;
        Ok((file, now))
    })
}

/// Appends a discovery (checked and formatted as the folder's `context/discoveries.md`
/// entries are); says where it went.
pub(crate) fn discover(store: &PgStore, agent: &str, text: &str) -> baton_core::Result<String> {
    store.transact(|tx, now| {
        let entry = baton_core::notes::discovery_entry(agent, text, now)?;
        tx.execute(
            "INSERT INTO baton_discoveries (project, at, agent, entry) VALUES ($1, $2, $3, $4)",
            &[&store.name, &now.0, &agent, &entry],
        )?;
        journal(tx, &store.name, &LogEntry::discovery(agent, text), now)?;
        Ok(())
    })?;
    Ok(format!("the discoveries of {}", TaskStore::describe(store)))
}

/// Rewrites the master plan, told to watchers.
pub(crate) fn write_master_plan(store: &PgStore, by: &str, text: &str) -> baton_core::Result<()> {
    baton_core::notes::check_master_plan(text)?;
    store.transact(|tx, now| {
        tx.execute(
            "UPDATE baton_projects SET master_plan = $2 WHERE name = $1",
            &[&store.name, &text],
        )?;
        journal(tx, &store.name, &LogEntry::master_plan(by, text.len()), now)?;
        tx.execute(
            "SELECT pg_notify($1, $2)",
            &[&crate::sql::CHANGES, &store.name],
        )?;
        Ok(())
    })
}

/// The master plan, the summary and the discoveries, read together.
pub(crate) fn notes(store: &PgStore) -> baton_core::Result<Notes> {
    store.transact(|tx, _| {
        let row = tx.query_one(
            "SELECT coalesce(master_plan, ''), summary FROM baton_projects WHERE name = $1",
            &[&store.name],
        )?;
        let mut discoveries = baton_core::notes::DISCOVERIES_HEADER.to_string();
        for entry in tx.query(
            "SELECT entry FROM baton_discoveries WHERE project = $1 ORDER BY seq",
            &[&store.name],
        )? {
            discoveries.push_str(entry.get(0));
        }
        Ok(Notes {
            master_plan: row.get(0),
            summary: row.get(1),
            discoveries,
        })
    })
}

/// The last `tail` log lines of one agent, or of every agent merged in time order (the
/// order they were written in).
pub(crate) fn logs(
    store: &PgStore,
    agent: Option<&str>,
    tail: usize,
) -> baton_core::Result<Vec<LogLine>> {
    if let Some(agent) = agent {
        baton_core::names::validate_agent_id(agent)?;
    }
    let tail = i64::try_from(tail).unwrap_or(i64::MAX);
    store.transact(|tx, _| {
        let rows = tx.query(
            "SELECT agent, line FROM (
                 SELECT seq, agent, line FROM baton_log
                 WHERE project = $1 AND ($2::text IS NULL OR agent = $2)
                 ORDER BY seq DESC LIMIT $3
             ) AS last ORDER BY seq",
            &[&store.name, &agent, &tail],
        )?;
        Ok(rows
            .into_iter()
            .map(|row| LogLine {
                agent: row.get(0),
                line: row.get(1),
            })
            .collect())
    })
}

/// Log lines after `seq` (every agent's, in order), with the number of the last line
/// there is: what a follower prints next.
pub(crate) fn log_since(store: &PgStore, seq: i64) -> baton_core::Result<(Vec<LogLine>, i64)> {
    store.transact(|tx, _| {
        let rows = tx.query(
            "SELECT seq, agent, line FROM baton_log WHERE project = $1 AND seq > $2
             ORDER BY seq",
            &[&store.name, &seq],
        )?;
        let last: i64 = match rows.last() {
            Some(row) => row.get(0),
            None => tx
                .query_one(
                    "SELECT coalesce(max(seq), 0) FROM baton_log WHERE project = $1",
                    &[&store.name],
                )?
                .get(0),
        };
        let lines = rows
            .into_iter()
            .map(|row| LogLine {
                agent: row.get(1),
                line: row.get(2),
            })
            .collect();
        Ok((lines, last))
    })
}

/// Writes the summary of every task's result (`summary.md`'s text) into the project.
pub(crate) fn aggregate(store: &PgStore) -> baton_core::Result<Aggregate> {
    let report = store.status()?;
    let text = baton_core::render_summary(&report);
    let entry = LogEntry::aggregate(&report.outcome(), report.total);
    store.transact(|tx, _| {
        let now = database_now(tx)?;
        tx.execute(
            "UPDATE baton_projects SET summary = $2 WHERE name = $1",
            &[&store.name, &text],
        )?;
        journal(tx, &store.name, &entry, now)?;
        Ok(())
    })?;
    Ok(Aggregate::of(
        &report,
        format!("summary.md of {}", TaskStore::describe(store)),
    ))
}

/// The folder's findings on the tasks (stale leases, tasks that can never finish, a stalled
/// queue); there are no files to lose or leave behind. With `fix`, each stale lease is
/// released in its own transaction.
pub(crate) fn doctor(store: &PgStore, fix: bool) -> baton_core::Result<DoctorReport> {
    let (file, now) = store.snapshot()?;
    let mut report = DoctorReport {
        findings: diagnose(&file, now, store.lease),
        fixed: Vec::new(),
    };
    if fix {
        baton_core::release_stale_leases(store, &file, &mut report);
        if !report.fixed.is_empty() {
            let fixed = report.fixed.clone();
            store.transact(|tx, now| {
                for line in &fixed {
                    journal(tx, &store.name, &LogEntry::doctor_fix(line), now)?;
                }
                Ok(())
            })?;
        }
    }
    Ok(report)
}
