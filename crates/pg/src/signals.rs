//! Runs and named signals in PostgreSQL, so a waiter on one machine wakes when a writer on
//! another writes (`NOTIFY` at commit, on [`SIGNALS`] for waiters and on the changes channel
//! for watchers). Each operation is one transaction with the database's time; the rules (names,
//! notes, which run a command means) are `baton-core`'s.
//!
//! A signal at a path the user named stays a file on the machine that names it, as on a
//! folder project; only its log line reaches the database.

use std::path::PathBuf;

use baton_core::signals::{check_write, remove_signal_file, write_signal_file};
use baton_core::{
    ForeignFile, Listener, LogEntry, Run, Signal, SignalRecord, SignalStore, SignalTarget,
    StoreError, Timestamp,
};
use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::connection::Tx;
use crate::error::Result;
use crate::rows::{journal, lock_project};
use crate::sql::CHANGES;
use crate::store::PgStore;

/// The channel signal waiters listen on (payload: the project's name).
pub(crate) const SIGNALS: &str = "baton_signals";

impl PgStore {
    /// Where a named signal is, for people: there is no file.
    fn signal_place(&self, run: u32, name: &str) -> PathBuf {
        PathBuf::from(format!(
            "runs/{run}/signals/{name} of project {} in PostgreSQL at {}",
            self.name, self.store
        ))
    }

    fn named_signal(&self, run: u32, name: &str, record: SignalRecord) -> Signal {
        Signal {
            name: name.to_string(),
            run: Some(run),
            path: self.signal_place(run, name),
            record,
        }
    }

    /// Appends a log line on its own (for a change that is not in the database: a signal
    /// file at a path on this machine).
    fn note(&self, entry: &LogEntry) -> baton_core::Result<()> {
        self.transact(|tx, now| journal(tx, &self.name, entry, now))
    }
}

impl SignalStore for PgStore {
    /// Every run, oldest first.
    fn runs(&self) -> baton_core::Result<Vec<Run>> {
        self.transact(|tx, _| runs(tx, &self.name))
    }

    /// Starts the next run. The database holds no signal of a run before it starts, so none
    /// is ever stale: the list of cleared signals is empty.
    fn new_run(&self, note: Option<&str>) -> baton_core::Result<(Run, Vec<String>)> {
        if let Some(note) = note {
            check_write(None, Some(note))?;
        }
        let run = self.transact(|tx, now| {
            lock_project(tx, &self.name)?;
            let number = latest(tx, &self.name)?.unwrap_or(0) + 1;
            insert_run(tx, &self.name, number, now, note)?;
            journal(tx, &self.name, &LogEntry::run_new(number, &[]), now)?;
            notify_signals(tx, &self.name)?;
            Ok(Run {
                number,
                started_at: now,
                note: note.map(str::to_string),
            })
        })?;
        Ok((run, Vec::new()))
    }

    /// The run a signal command means (see [`SignalStore::resolve_run`]).
    fn resolve_run(&self, run: Option<u32>) -> baton_core::Result<u32> {
        self.transact(|tx, now| {
            let newest = latest(tx, &self.name)?;
            match (run, newest) {
                (Some(n), _) if has_run(tx, &self.name, n)? => Ok(n),
                (Some(n), newest) => Err(StoreError::UnknownRun {
                    run: n,
                    latest: newest,
                }
                .into()),
                (None, Some(newest)) => Ok(newest),
                (None, None) => {
                    lock_project(tx, &self.name)?;
                    // Read again under the lock (each statement sees what was committed
                    // before it began).
                    if let Some(newest) = latest(tx, &self.name)? {
                        return Ok(newest); // another machine started one meanwhile
                    }
                    insert_run(tx, &self.name, 1, now, None)?;
                    notify_signals(tx, &self.name)?;
                    Ok(1)
                }
            }
        })
    }

    /// Writes a named signal (a row), or a signal at a path (a file on this machine).
    fn write_signal(
        &self,
        target: &SignalTarget,
        writer: Option<&str>,
        note: Option<&str>,
        foreign: ForeignFile,
    ) -> baton_core::Result<Signal> {
        check_write(writer, note)?;
        match target {
            SignalTarget::Path(path) => {
                let record = SignalRecord::written(writer, note, Timestamp::now());
                write_signal_file(path, &record, foreign, false)?;
                if let Some(writer) = writer {
                    self.note(&LogEntry::signal(writer, target))?;
                }
                Ok(target.signal(path.full().to_path_buf(), record))
            }
            SignalTarget::Named { run, name } => self.transact(|tx, now| {
                check_run(tx, &self.name, *run)?;
                let record = SignalRecord::written(writer, note, now);
                let body = serde_json::to_value(&record).expect("signal records serialise");
                tx.execute(
                    "INSERT INTO baton_signals (project, run, name, record) VALUES ($1, $2, $3, $4)
                     ON CONFLICT (project, run, name) DO UPDATE SET record = EXCLUDED.record",
                    &[&self.name, &(*run as i32), name, &body],
                )?;
                if let Some(writer) = writer {
                    journal(tx, &self.name, &LogEntry::signal(writer, target), now)?;
                }
                notify_signals(tx, &self.name)?;
                Ok(self.named_signal(*run, name, record.clone()))
            }),
        }
    }

    /// Removes a named signal (a row) or a signal at a path (a file on this machine).
    fn clear_signal(
        &self,
        target: &SignalTarget,
        by: Option<&str>,
        foreign: ForeignFile,
    ) -> baton_core::Result<bool> {
        if let Some(by) = by {
            baton_core::names::validate_agent_id(by)?;
        }
        let removed = match target {
            SignalTarget::Path(path) => remove_signal_file(path, foreign, false)?,
            SignalTarget::Named { run, name } => self.transact(|tx, now| {
                let removed = tx.execute(
                    "DELETE FROM baton_signals WHERE project = $1 AND run = $2 AND name = $3",
                    &[&self.name, &(*run as i32), name],
                )? > 0;
                if removed {
                    if let Some(by) = by {
                        journal(tx, &self.name, &LogEntry::signal_clear(by, target), now)?;
                    }
                    notify_signals(tx, &self.name)?;
                }
                Ok(removed)
            })?,
        };
        if let (true, Some(by), SignalTarget::Path(_)) = (removed, by, target) {
            self.note(&LogEntry::signal_clear(by, target))?;
        }
        Ok(removed)
    }

    /// Removes every signal of `run`; their names.
    fn clear_signals(&self, run: u32) -> baton_core::Result<Vec<String>> {
        self.transact(|tx, _| {
            check_run(tx, &self.name, run)?;
            let mut names: Vec<String> = tx
                .query(
                    "DELETE FROM baton_signals WHERE project = $1 AND run = $2 RETURNING name",
                    &[&self.name, &(run as i32)],
                )?
                .iter()
                .map(|row| row.get(0))
                .collect();
            names.sort();
            if !names.is_empty() {
                notify_signals(tx, &self.name)?;
            }
            Ok(names)
        })
    }

    /// The signals present in `run`, by name.
    fn list_signals(&self, run: u32) -> baton_core::Result<Vec<Signal>> {
        self.transact(|tx, _| {
            check_run(tx, &self.name, run)?;
            let rows = tx.query(
                "SELECT name, record FROM baton_signals WHERE project = $1 AND run = $2
                 ORDER BY name",
                &[&self.name, &(run as i32)],
            )?;
            Ok(rows
                .iter()
                .map(|row| self.named_signal(run, row.get(0), record(row.get(1))))
                .collect())
        })
    }

    /// Every signal present, in every run, by run and name (for the change feed).
    fn all_signals(&self) -> baton_core::Result<Vec<Signal>> {
        self.transact(|tx, _| {
            let rows = tx.query(
                "SELECT run, name, record FROM baton_signals WHERE project = $1
                 ORDER BY run, name",
                &[&self.name],
            )?;
            Ok(rows
                .iter()
                .map(|row| {
                    let run: i32 = row.get(0);
                    self.named_signal(run as u32, row.get(1), record(row.get(2)))
                })
                .collect())
        })
    }

    /// The signal at `target`, if present.
    fn signal(&self, target: &SignalTarget) -> baton_core::Result<Option<Signal>> {
        match target {
            SignalTarget::Path(path) => Ok(baton_core::signals::read_signal(path)?
                .map(|record| target.signal(path.full().to_path_buf(), record))),
            SignalTarget::Named { run, name } => self.transact(|tx, _| {
                let row = tx.query_opt(
                    "SELECT record FROM baton_signals WHERE project = $1 AND run = $2 AND name = $3",
                    &[&self.name, &(*run as i32), name],
                )?;
                Ok(row.map(|row| self.named_signal(*run, name, record(row.get(0)))))
            }),
        }
    }

    fn signal_file(&self, target: &SignalTarget) -> Option<PathBuf> {
        match target {
            SignalTarget::Path(path) => Some(path.full().to_path_buf()),
            SignalTarget::Named { .. } => None,
        }
    }

    fn listen_for_signals(&self) -> baton_core::Result<Option<Box<dyn Listener>>> {
        Ok(Some(self.listen_on(SIGNALS)?))
    }
}

fn record(value: Value) -> SignalRecord {
    serde_json::from_value(value.clone())
        .unwrap_or_else(|_| SignalRecord::parse(value.to_string().as_bytes()))
}

fn runs(tx: &mut Tx, project: &str) -> Result<Vec<Run>> {
    let rows = tx.query(
        "SELECT number, started_at, note FROM baton_runs WHERE project = $1 ORDER BY number",
        &[&project],
    )?;
    Ok(rows
        .iter()
        .map(|row| Run {
            number: row.get::<_, i32>(0) as u32,
            started_at: Timestamp(row.get::<_, DateTime<Utc>>(1)),
            note: row.get(2),
        })
        .collect())
}

fn latest(tx: &mut Tx, project: &str) -> Result<Option<u32>> {
    let row = tx.query_one(
        "SELECT max(number) FROM baton_runs WHERE project = $1",
        &[&project],
    )?;
    Ok(row.get::<_, Option<i32>>(0).map(|n| n as u32))
}

fn has_run(tx: &mut Tx, project: &str, run: u32) -> Result<bool> {
    Ok(tx
        .query_opt(
            "SELECT 1 FROM baton_runs WHERE project = $1 AND number = $2",
            &[&project, &(run as i32)],
        )?
        .is_some())
}

fn check_run(tx: &mut Tx, project: &str, run: u32) -> Result<()> {
    if has_run(tx, project, run)? {
        return Ok(());
    }
    let latest = latest(tx, project)?;
    Err(StoreError::UnknownRun { run, latest }.into())
}

fn insert_run(
    tx: &mut Tx,
    project: &str,
    number: u32,
    now: Timestamp,
    note: Option<&str>,
) -> Result<()> {
    tx.execute(
        "INSERT INTO baton_runs (project, number, started_at, note) VALUES ($1, $2, $3, $4)",
        &[&project, &(number as i32), &now.0, &note],
    )?;
    Ok(())
}

/// Tells signal waiters and watchers (at commit) that the project's signals or runs changed.
fn notify_signals(tx: &mut Tx, project: &str) -> Result<()> {
    tx.execute(
        "SELECT pg_notify($1, $2), pg_notify($3, $2)",
        &[&SIGNALS, &project, &CHANGES],
    )?;
    Ok(())
}
