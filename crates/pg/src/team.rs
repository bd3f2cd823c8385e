//! The team's records in PostgreSQL ([`TeamStore`]): attempts and workers as one row each
//! (`body` the record as JSON), transcripts as one row per event, a batch inserted in one
//! statement. Every write tells watchers at commit, so a lead on another machine following a
//! transcript or the team's status learns of it at once. A row that is not a Baton record (a
//! hand-edited body) is named where it would have been read, never the end of a view.

use baton_core::{
    Attempt, AttemptEvent, Happened, StoreError, TeamStore, Timestamp, TranscriptEvent,
    WorkerRecord,
};
use baton_core::{Listing, Unreadable};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::connection::Tx;
use crate::error::Failure;
use crate::sql::CHANGES;
use crate::store::PgStore;

/// A record read back from a `body` column.
fn record<T: DeserializeOwned>(table: &str, body: Value) -> Result<T, Failure> {
    serde_json::from_value(body).map_err(|e| {
        Failure::from(StoreError::InvalidInput {
            field: "record",
            reason: format!("a row of {table} is not a Baton record: {e}"),
        })
    })
}

impl TeamStore for PgStore {
    fn append_events(
        &self,
        task: &str,
        attempt: u32,
        events: &[TranscriptEvent],
    ) -> baton_core::Result<()> {
        baton_core::names::validate_task_id(task)?;
        if events.is_empty() {
            return Ok(());
        }
        self.transact_unclocked(|tx| {
            queue_events(tx, &self.name, task, attempt, events)?;
            Ok(())
        })
    }

    fn events_since(
        &self,
        after: u64,
        limit: usize,
    ) -> baton_core::Result<Option<(Vec<AttemptEvent>, u64)>> {
        let after = i64::try_from(after).unwrap_or(i64::MAX);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.transact_unclocked(|tx| {
            let rows = tx.query(
                "SELECT place, task, attempt, body FROM baton_transcripts
                 WHERE project = $1 AND place > $2 ORDER BY place LIMIT $3",
                &[&self.name, &after, &limit],
            )?;
            let last: i64 = match rows.last() {
                Some(row) => row.get(0),
                // Nothing new: the last place there is, never past `after` (a batch that
                // commits between the two statements is read next time, not skipped).
                None => tx
                    .query_opt(
                        "SELECT last FROM baton_transcript_places WHERE project = $1",
                        &[&self.name],
                    )?
                    .map_or(0, |row| row.get::<_, i64>(0))
                    .min(after),
            };
            let events = rows
                .into_iter()
                .map(|row| {
                    Ok(AttemptEvent {
                        task: row.get(1),
                        attempt: row.get::<_, i32>(2) as u32,
                        event: record("baton_transcripts", row.get(3))?,
                    })
                })
                .collect::<Result<Vec<_>, Failure>>()?;
            Ok(Some((events, u64::try_from(last).unwrap_or_default())))
        })
    }

    fn events(
        &self,
        task: &str,
        attempt: u32,
        after: u64,
        limit: usize,
    ) -> baton_core::Result<Vec<TranscriptEvent>> {
        let attempt = attempt as i32;
        let after = i64::try_from(after).unwrap_or(i64::MAX);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.transact_unclocked(|tx| {
            Ok(tx
                .query(
                    "SELECT seq, body FROM baton_transcripts
                     WHERE project = $1 AND task = $2 AND attempt = $3 AND seq > $4
                     ORDER BY seq LIMIT $5",
                    &[&self.name, &task, &attempt, &after, &limit],
                )?
                .into_iter()
                .map(|row| {
                    let seq: i64 = row.get(0);
                    serde_json::from_value::<TranscriptEvent>(row.get(1)).unwrap_or_else(|e| {
                        TranscriptEvent {
                            seq: seq as u64,
                            at: Timestamp::now(),
                            what: Happened::Error {
                                message: format!(
                                    "row {seq} of baton_transcripts ({task}'s attempt \
                                     {attempt}) is not an event: {e}; it is skipped"
                                ),
                            },
                        }
                    })
                })
                .collect())
        })
    }

    fn save_attempt(&self, attempt: &Attempt) -> baton_core::Result<()> {
        baton_core::names::validate_task_id(&attempt.task)?;
        self.transact_unclocked(|tx| {
            queue_attempt(tx, &self.name, attempt)?;
            Ok(())
        })
    }

    fn attempts(&self, task: Option<&str>) -> baton_core::Result<Vec<Attempt>> {
        self.transact_unclocked(|tx| {
            tx.query(
                "SELECT body FROM baton_attempts
                 WHERE project = $1 AND ($2::text IS NULL OR task = $2)
                 ORDER BY task, attempt",
                &[&self.name, &task],
            )?
            .into_iter()
            .map(|row| record("baton_attempts", row.get(0)))
            .collect()
        })
    }

    fn attempts_listed(&self, task: Option<&str>) -> baton_core::Result<Listing<Attempt>> {
        self.transact_unclocked(|tx| {
            let rows = tx.query(
                "SELECT task, attempt, body FROM baton_attempts
                 WHERE project = $1 AND ($2::text IS NULL OR task = $2)
                 ORDER BY task, attempt",
                &[&self.name, &task],
            )?;
            Ok(listed(rows, |row| {
                format!(
                    "baton_attempts: {} attempt {}",
                    row.get::<_, String>(0),
                    row.get::<_, i32>(1)
                )
            }))
        })
    }

    fn save_worker(&self, worker: &WorkerRecord) -> baton_core::Result<()> {
        baton_core::names::validate_agent_id(&worker.name)?;
        self.transact_unclocked(|tx| {
            queue_worker(tx, &self.name, worker)?;
            Ok(())
        })
    }

    /// One transaction, sent in one round trip: the attempt, the worker, then the transcript's
    /// batch, whose place counter's row is locked only from there to the commit.
    fn save_attempt_with(
        &self,
        attempt: &Attempt,
        events: &[TranscriptEvent],
        worker: Option<&WorkerRecord>,
    ) -> baton_core::Result<()> {
        baton_core::names::validate_task_id(&attempt.task)?;
        if let Some(worker) = worker {
            baton_core::names::validate_agent_id(&worker.name)?;
        }
        self.transact_unclocked(|tx| {
            queue_attempt(tx, &self.name, attempt)?;
            if let Some(worker) = worker {
                queue_worker(tx, &self.name, worker)?;
            }
            if !events.is_empty() {
                queue_events(tx, &self.name, &attempt.task, attempt.attempt, events)?;
            }
            Ok(())
        })
    }

    fn workers(&self) -> baton_core::Result<Vec<WorkerRecord>> {
        self.transact_unclocked(|tx| {
            tx.query(
                "SELECT body FROM baton_workers WHERE project = $1 ORDER BY name",
                &[&self.name],
            )?
            .into_iter()
            .map(|row| record("baton_workers", row.get(0)))
            .collect()
        })
    }

    fn workers_listed(&self) -> baton_core::Result<Listing<WorkerRecord>> {
        self.transact_unclocked(|tx| {
            let rows = tx.query(
                "SELECT name, body FROM baton_workers WHERE project = $1 ORDER BY name",
                &[&self.name],
            )?;
            Ok(listed(rows, |row| {
                format!("baton_workers: {}", row.get::<_, String>(0))
            }))
        })
    }
}

/// Rows whose last column is a record's body, read one by one: a row that is not one is named
/// (`name` says which it is) and left out.
fn listed<T: DeserializeOwned>(
    rows: Vec<tokio_postgres::Row>,
    name: impl Fn(&tokio_postgres::Row) -> String,
) -> Listing<T> {
    let mut listing = Listing::all(Vec::new());
    for row in rows {
        let body: Value = row.get(row.len() - 1);
        match serde_json::from_value(body) {
            Ok(item) => listing.items.push(item),
            Err(e) => listing.unreadable.push(Unreadable {
                document: name(&row),
                problem: format!("not a Baton record: {e}"),
            }),
        }
    }
    listing
}

/// Records `attempt` (replacing the same task and number's), telling watchers at commit.
fn queue_attempt(tx: &mut Tx, project: &str, attempt: &Attempt) -> Result<(), Failure> {
    tx.queue(
        "WITH saved AS (
             INSERT INTO baton_attempts (project, task, attempt, body) VALUES ($1, $2, $3, $4)
             ON CONFLICT (project, task, attempt) DO UPDATE SET body = EXCLUDED.body)
         SELECT pg_notify($5, $1)",
        vec![
            Box::new(project.to_string()),
            Box::new(attempt.task.clone()),
            Box::new(attempt.attempt as i32),
            Box::new(serde_json::to_value(attempt).expect("attempts serialise")),
            Box::new(CHANGES),
        ],
    )
}

/// Records `worker` (replacing its earlier record), telling watchers at commit.
fn queue_worker(tx: &mut Tx, project: &str, worker: &WorkerRecord) -> Result<(), Failure> {
    tx.queue(
        "WITH saved AS (
             INSERT INTO baton_workers (project, name, body) VALUES ($1, $2, $3)
             ON CONFLICT (project, name) DO UPDATE SET body = EXCLUDED.body)
         SELECT pg_notify($4, $1)",
        vec![
            Box::new(project.to_string()),
            Box::new(worker.name.clone()),
            Box::new(serde_json::to_value(worker).expect("workers serialise")),
            Box::new(CHANGES),
        ],
    )
}

/// Appends `events` to the transcript of `task`'s attempt `attempt`, telling watchers at
/// commit. The batch's places: the project's counter moved on by its size, under the counter
/// row's lock until commit (so places become visible in order).
fn queue_events(
    tx: &mut Tx,
    project: &str,
    task: &str,
    attempt: u32,
    events: &[TranscriptEvent],
) -> Result<(), Failure> {
    tx.queue(
        "WITH places AS (
             INSERT INTO baton_transcript_places (project, last) VALUES ($1, $6)
             ON CONFLICT (project)
             DO UPDATE SET last = baton_transcript_places.last + EXCLUDED.last
             RETURNING last - $6 AS first),
         saved AS (
             INSERT INTO baton_transcripts (project, task, attempt, seq, body, place)
             SELECT $1, $2, $3, (e->>'seq')::bigint, e, places.first + n
             FROM jsonb_array_elements($4) WITH ORDINALITY AS batch(e, n), places
             ON CONFLICT (project, task, attempt, seq)
             DO UPDATE SET body = EXCLUDED.body, place = EXCLUDED.place)
         SELECT pg_notify($5, $1)",
        vec![
            Box::new(project.to_string()),
            Box::new(task.to_string()),
            Box::new(attempt as i32),
            Box::new(serde_json::to_value(events).expect("events serialise")),
            Box::new(CHANGES),
            Box::new(events.len() as i64),
        ],
    )
}
