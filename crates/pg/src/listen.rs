//! Waiting on a project in PostgreSQL: [`PgListener`] wakes a waiting worker through
//! `LISTEN`/`NOTIFY` when a task may have become ready (added, a dependency done, released,
//! reset), and [`PgProject::outlook`] answers from the indexes what the folder answers from its
//! whole file (and [`PgProject::ready_tasks`] the tasks a worker could claim): something to claim now, the next lease expiry to wait for (an expiry sends no
//! notification, so waiters set a timer), or nothing ever.

use std::sync::LazyLock;
use std::time::{Duration, Instant};

use baton_store::{Listener, Outlook, StoreError, TaskView, Timestamp};
use chrono::{DateTime, Utc};
use postgres::Client;
use postgres::fallible_iterator::FallibleIterator;

use crate::connect::connect;
use baton_store::reservations::task_conflicts;

use crate::tasks::{CHANGES, CHANNEL, CLAIMABLE, PgProject, READY_TASKS, load};

/// A connection listening for one project's notifications on one channel.
pub struct PgListener {
    client: Client,
    project: String,
    store: String,
}

impl PgListener {
    /// Blocks until a notification for this project, or until `until`.
    fn wait_until(&mut self, until: Option<Instant>) -> baton_store::Result<bool> {
        loop {
            let left = match until {
                Some(at) => at.saturating_duration_since(Instant::now()),
                None => Duration::from_secs(3600),
            };
            if left.is_zero() {
                return Ok(false);
            }
            let next = {
                let mut notifications = self.client.notifications();
                let mut waiting = notifications.timeout_iter(left);
                waiting
                    .next()
                    .map(|n| n.map(|n| n.payload() == self.project))
            };
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
    fn wait(&mut self, until: Option<Instant>) -> baton_store::Result<bool> {
        self.wait_until(until)
    }
}

impl PgProject {
    /// A listener for tasks becoming ready. Listening starts before this returns, so a change
    /// after it is never missed.
    pub fn listen(&self) -> baton_store::Result<PgListener> {
        self.listen_on(CHANNEL)
    }

    /// A listener for any change to the project (tasks, logs, notes), for watchers.
    pub fn listen_for_changes(&self) -> baton_store::Result<PgListener> {
        self.listen_on(CHANGES)
    }

    pub(crate) fn listen_on(&self, channel: &str) -> baton_store::Result<PgListener> {
        let client = connect(&self.url)
            .and_then(|mut c| {
                c.batch_execute(&format!("LISTEN {channel}"))?;
                Ok(c)
            })
            .map_err(|e| e.at(&self.store))?;
        Ok(PgListener {
            client,
            project: self.name.clone(),
            store: self.store.clone(),
        })
    }

    /// The tasks a worker could claim now, best first, read from the indexes (not the whole
    /// board): what `worker list` shows.
    pub fn ready_tasks(&self) -> baton_store::Result<Vec<TaskView>> {
        let lease = self.lease;
        self.transact(|tx, now| {
            let ready = load(tx, &READY_TASKS, &[&self.name])?;
            let active = self.reservation_view(tx)?.active_reservations(now, lease);
            Ok(ready
                .into_iter()
                .filter(|task| task_conflicts(&active, task, None).is_empty())
                .map(|task| TaskView::of(task, Vec::new(), now, lease))
                .collect())
        })
    }

    /// Why a claim got nothing, from the count of tasks in each status.
    pub fn nothing_ready_reason(&self) -> baton_store::Result<String> {
        self.transact(|tx, _| {
            let counts: Vec<(String, i64)> = tx
                .query(
                    "SELECT status, count(*) FROM baton_tasks WHERE project = $1 GROUP BY status",
                    &[&self.name],
                )?
                .into_iter()
                .map(|row| (row.get(0), row.get(1)))
                .collect();
            Ok(baton_store::status::nothing_ready_reason(|status| {
                counts
                    .iter()
                    .find(|(s, _)| s == status.as_str())
                    .map_or(0, |(_, n)| usize::try_from(*n).unwrap_or(0))
            }))
        })
    }

    /// What a waiting worker can expect, read from the indexes: a task ready now (available
    /// or held on an expired lease, dependencies done), else the earliest lease expiry; with
    /// neither, nothing can ever become ready without new tasks (every unfinished task waits
    /// on a failed, cancelled or missing one).
    pub fn outlook(&self, agent: &str) -> baton_store::Result<(Outlook, Timestamp)> {
        let lease = self.lease;
        self.transact(|tx, now| {
            static ANY_READY: LazyLock<String> = LazyLock::new(|| {
                format!(
                    "SELECT 1 FROM baton_tasks t WHERE t.project = $1 AND {} LIMIT 1",
                    *CLAIMABLE
                )
            });
            let view = self.reservation_view(tx)?;
            let active = view.active_reservations(now, lease);
            let mut files_end = None;
            if active.iter().all(|r| r.agent == agent) {
                if tx.query_opt(&ANY_READY, &[&self.name])?.is_some() {
                    return Ok((Outlook::Claimable, now));
                }
            } else {
                // Ready tasks whose files others hold are waited for until a change frees
                // them, or a reservation runs out.
                let ready = load(tx, &READY_TASKS, &[&self.name])?;
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
                    &[&self.name],
                )?
                .get(0);
            let next = next.map(Timestamp).into_iter().chain(files_end).min();
            let outlook = match next {
                Some(at) => Outlook::Waiting {
                    next_lease_expiry: Some(at),
                },
                None => Outlook::Drained,
            };
            Ok((outlook, now))
        })
    }
}
