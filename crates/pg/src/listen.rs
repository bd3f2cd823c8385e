//! Waiting on a project in PostgreSQL: [`PgListener`] wakes a waiting worker through
//! `LISTEN`/`NOTIFY` when a task may have become ready (added, a dependency done, released,
//! reset), and [`PgStore::outlook`] answers from the indexes what the folder answers from its
//! whole file (and [`PgStore::ready_tasks`] the tasks a worker could claim): something to claim now, the next lease expiry to wait for (an expiry sends no
//! notification, so waiters set a timer), or nothing ever.

use std::sync::LazyLock;
use std::time::{Duration, Instant};

use crate::client::Client;
use baton_core::Task;
use baton_core::{Hold, Listener, Outlook, StoreError, TaskView, Timestamp};
use chrono::{DateTime, Utc};

use crate::connect::connect;
use baton_core::reservations::task_conflicts;

use crate::connection::Tx;
use crate::error::Result;
use crate::plan_functions::Kept;
use crate::rows::load;
use crate::sql::{ANY_CLAIMABLE, READY_TASKS};
use crate::store::PgStore;

/// A connection listening for one project's notifications on one channel.
pub struct PgListener {
    client: Client,
    project: String,
    store: String,
}

impl PgListener {
    /// Blocks until a notification for this project, or until `until`.
    fn wait_until(&mut self, until: Option<Instant>) -> baton_core::Result<bool> {
        loop {
            let left = match until {
                Some(at) => at.saturating_duration_since(Instant::now()),
                None => Duration::from_secs(3600),
            };
            if left.is_zero() {
                return Ok(false);
            }
            let next = self
                .client
                .next_notification(left)
                .map(|n| n.map(|n| n.payload() == self.project));
            match next {
                Ok(Some(true)) => return Ok(true),
                // Another project's notice: keep waiting.
                Ok(Some(false)) => continue,
                Ok(None) if self.client.is_closed() => return Err(self.lost()),
                Ok(None) if until.is_some() => return Ok(false),
                Ok(None) => continue,
                Err(e) => return Err(crate::error::database(&self.store, &e)),
            }
        }
    }

    fn lost(&self) -> StoreError {
        StoreError::Database {
            message: format!("the connection to PostgreSQL at {} was lost", self.store),
        }
    }
}

impl Listener for PgListener {
    fn wait(&mut self, until: Option<Instant>) -> baton_core::Result<bool> {
        self.wait_until(until)
    }
}

impl PgStore {
    /// A listener on `channel`: every waiter of this store shares one connection per channel
    /// (see [`crate::hub`]).
    pub(crate) fn listen_on(&self, channel: &str) -> baton_core::Result<Box<dyn Listener>> {
        self.hubs.listen(channel, || {
            // Straight to the server: a pooled session would not stay this one's.
            let client = connect(&self.route.listen_url)
                .and_then(|mut c| {
                    c.batch_execute(&format!("LISTEN {channel}"))?;
                    Ok(c)
                })
                .map_err(|e| e.at(&self.store))?;
            Ok(Box::new(PgListener {
                client,
                project: self.name.clone(),
                store: self.store.clone(),
            }) as Box<dyn Listener>)
        })
    }
}

/// The ready rows, best first, each with what other agents hold of its files now, read from
/// the indexes (the ready rows, and the held ones with files only when there are ready ones),
/// not the whole board.
fn ready_with_holds(
    store: &PgStore,
    tx: &mut Tx,
    now: Timestamp,
) -> Result<Vec<(Task, Vec<Hold>)>> {
    let ready = load(tx, &READY_TASKS, &[&store.name])?;
    if ready.is_empty() {
        return Ok(Vec::new());
    }
    let active = store
        .reservation_view(tx)?
        .active_reservations(now, store.lease);
    Ok(ready
        .into_iter()
        .map(|task| {
            let holds = task_conflicts(&active, &task, None);
            (task, holds)
        })
        .collect())
}

/// The tasks a worker could claim now, best first: what `worker list` shows.
pub(crate) fn ready_tasks(store: &PgStore) -> baton_core::Result<Vec<TaskView>> {
    store.read(|tx, now| {
        Ok(ready_with_holds(store, tx, now)?
            .into_iter()
            .filter(|(_, holds)| holds.is_empty())
            .map(|(task, _)| TaskView::of(task, Vec::new(), now, store.lease))
            .collect())
    })
}

/// The ready tasks kept back by files others hold, best first, at most `limit`.
pub(crate) fn held_back_by_files(
    store: &PgStore,
    limit: usize,
) -> baton_core::Result<Vec<TaskView>> {
    store.read(|tx, now| {
        Ok(ready_with_holds(store, tx, now)?
            .into_iter()
            .filter(|(_, holds)| !holds.is_empty())
            .take(limit)
            .map(|(task, holds)| {
                TaskView::of(task, Vec::new(), now, store.lease).waiting_on_files(holds)
            })
            .collect())
    })
}

/// Why a claim got nothing, from the count of tasks in each status.
pub(crate) fn nothing_ready_reason(store: &PgStore) -> baton_core::Result<String> {
    store.read(|tx, _| {
        let counts: Vec<(String, i64)> = tx
            .query(
                "SELECT status, count(*) FROM baton_tasks WHERE project = $1 GROUP BY status",
                &[&store.name],
            )?
            .into_iter()
            .map(|row| (row.get(0), row.get(1)))
            .collect();
        Ok(baton_core::nothing_ready_reason(|status| {
            counts
                .iter()
                .find(|(s, _)| s == status.as_str())
                .map_or(0, |(_, n)| usize::try_from(*n).unwrap_or(0))
        }))
    })
}

/// Whether the project has proposed tasks (a plan the lead has not approved yet).
fn proposed_tasks(tx: &mut Tx<'_>, project: &str) -> Result<bool> {
    Ok(tx
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM baton_tasks WHERE project = $1 AND status = 'proposed')",
            &[&project],
        )?
        .get(0))
}

/// What a waiting worker can expect, read from the indexes: a task ready now (available
/// or held on an expired lease, dependencies done), else the earliest lease expiry; with
/// neither, nothing can ever become ready without new tasks (every unfinished task waits
/// on a failed, cancelled or missing one).
pub(crate) fn outlook(store: &PgStore, agent: &str) -> baton_core::Result<(Outlook, Timestamp)> {
    let lease = store.lease;
    store.read_unclocked(|tx| {
        // What a waiting worker asks on every wake-up, in one round trip: the time, whether a
        // task was sent back to this worker, whether any task is ready, and whether any
        // explicit reservation exists. Kept as a function through a pooler. (The earliest
        // lease expiry is read below, only when the worker will wait: in this statement it
        // cost the wake-up to a claim ~0.5 ms, `cargo bench -p baton-pg --bench claims`.)
        static LOOK: LazyLock<Kept> = LazyLock::new(|| {
            let sql = format!(
                "SELECT statement_timestamp(),
                        EXISTS (SELECT 1 FROM baton_tasks t WHERE t.project = $1 AND {}),
                        {},
                        EXISTS (SELECT 1 FROM baton_reservations WHERE project = $1)",
                crate::sql::SENT_BACK,
                *ANY_CLAIMABLE
            );
            Kept::new(
                sql,
                &["text", "text"],
                &["timestamptz", "boolean", "boolean", "boolean"],
            )
        });
        let found = tx.query_one_kept(&LOOK, &[&store.name, &agent])?;
        let now = Timestamp(found.get::<_, DateTime<Utc>>(0));
        // A task sent back to this worker is its own to claim, whatever else is held.
        if found.get::<_, bool>(1) {
            return Ok((Outlook::Claimable, now));
        }
        let view = store.held_files_view(tx, found.get(3))?;
        let active = view.active_reservations(now, lease);
        let mut files_end = None;
        if active.iter().all(|r| r.agent == agent) {
            if found.get::<_, bool>(2) {
                return Ok((Outlook::Claimable, now));
            }
        } else {
            // Ready tasks whose files others hold are waited for until a change frees
            // them, or a reservation runs out.
            let ready = load(tx, &READY_TASKS, &[&store.name])?;
            if ready
                .iter()
                .any(|task| task_conflicts(&active, task, Some(agent)).is_empty())
            {
                return Ok((Outlook::Claimable, now));
            }
            if !ready.is_empty() {
                files_end = view.next_reservation_end(now, lease);
            }
        }
        let next: Option<DateTime<Utc>> = tx
            .query_one(
                "SELECT min(lease_expires_at) FROM baton_tasks
                 WHERE project = $1 AND status IN ('claimed', 'in_progress')",
                &[&store.name],
            )?
            .get(0);
        let next = next.map(Timestamp).into_iter().chain(files_end).min();
        let outlook = match next {
            Some(at) => Outlook::Waiting {
                next_lease_expiry: Some(at),
            },
            // A plan the lead has not approved yet: its tasks become claimable without new
            // ones (asked only here, where the answer would otherwise be drained).
            None if proposed_tasks(tx, &store.name)? => Outlook::Waiting {
                next_lease_expiry: None,
            },
            None => Outlook::Drained,
        };
        Ok((outlook, now))
    })
}
