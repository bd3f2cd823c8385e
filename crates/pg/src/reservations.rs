//! File reservations in PostgreSQL. The rules (normalising paths, what overlaps, which
//! reservations are in force, what a claim passes over) are `baton-core`'s
//! (`baton_core::reservations`); this module reads the reservations in force (held tasks'
//! files and the `baton_reservations` rows) and keeps two workers from both taking tasks with
//! overlapping files in the moment between reading and committing: whoever decides on some
//! paths first takes their lock keys (`reservations::lock_keys`: each path's own key
//! exclusively, the folders above it shared, as transaction-level advisory locks), then reads
//! what is committed. Claims only try the keys and pass over a task whose keys are busy, as
//! `SKIP LOCKED` passes over a row, so claims never wait for each other and never deadlock;
//! reserving and named claims wait for the keys, taken in one order.

use std::sync::LazyLock;

use baton_core::reservations::{lock_keys, normalise_all, task_conflicts};
use baton_core::{Hold, LogEntry, NewReservation, Reservation, StoreError, Timestamp};
use baton_core::{Task, TaskFile};
use chrono::{DateTime, Utc};

use crate::connection::Tx;
use crate::error::Result;
use crate::plan_functions::Kept;
use crate::rows::{journal, load, load_agents, lock_project};
use crate::sql::{CHANNEL, CLAIM_ORDER, READY};
use crate::store::PgStore;

impl PgStore {
    /// Tries the lock keys of `patterns` without waiting; `false` when another transaction
    /// holds a conflicting one (keys taken meanwhile stay taken until the transaction ends).
    pub(crate) fn try_keys(&self, tx: &mut Tx, patterns: &[String]) -> Result<bool> {
        let (exclusive, shared) = lock_keys(patterns);
        let row = tx.query_one(
            "SELECT coalesce(bool_and(taken), true) FROM (
                 SELECT pg_try_advisory_xact_lock(hashtext('baton:' || $1 || ':' || k)) AS taken
                 FROM unnest($2::text[]) AS k
                 UNION ALL
                 SELECT pg_try_advisory_xact_lock_shared(hashtext('baton:' || $1 || ':' || k))
                 FROM unnest($3::text[]) AS k) AS tried",
            &[&self.name, &exclusive, &shared],
        )?;
        Ok(row.get(0))
    }

    /// Takes the lock keys of `patterns`, waiting for them, in one order (by their hash).
    pub(crate) fn wait_keys(&self, tx: &mut Tx, patterns: &[String]) -> Result<()> {
        let (exclusive, shared) = lock_keys(patterns);
        let keys = tx.query(
            "SELECT h, bool_or(excl) FROM (
                 SELECT hashtext('baton:' || $1 || ':' || k) AS h, true AS excl
                 FROM unnest($2::text[]) AS k
                 UNION ALL
                 SELECT hashtext('baton:' || $1 || ':' || k), false FROM unnest($3::text[]) AS k
             ) AS keys GROUP BY h ORDER BY h",
            &[&self.name, &exclusive, &shared],
        )?;
        for key in keys {
            let (hash, exclusive): (i32, bool) = (key.get(0), key.get(1));
            let sql = if exclusive {
                "SELECT pg_advisory_xact_lock($1::bigint)"
            } else {
                "SELECT pg_advisory_xact_lock_shared($1::bigint)"
            };
            tx.execute(sql, &[&i64::from(hash)])?;
        }
        Ok(())
    }

    /// Every held task with files, the explicit reservations and their holders' last signs of
    /// life, as a `TaskFile` the store's rules read (for the board and the lists; a claim
    /// reads only what is near its own files).
    pub(crate) fn reservation_view(&self, tx: &mut Tx) -> Result<TaskFile> {
        self.held_files_view(tx, true)
    }

    /// [`Self::reservation_view`], the explicit reservations read only when `reserved` (some
    /// exist, or none is known not to).
    pub(crate) fn held_files_view(&self, tx: &mut Tx, reserved: bool) -> Result<TaskFile> {
        let mut file = TaskFile::new(Timestamp(DateTime::<Utc>::UNIX_EPOCH));
        file.tasks = baton_core::Tasks::from(load(
            tx,
            "SELECT body FROM baton_tasks WHERE project = $1
               AND status IN ('claimed', 'in_progress')
               AND jsonb_array_length(coalesce(body->'context'->'files', '[]')) > 0",
            &[&self.name],
        )?);
        if reserved {
            explicit(tx, &self.name, &mut file)?;
        }
        Ok(file)
    }

    /// The reservations that could overlap `patterns`, as a `TaskFile` the store's rules read:
    /// the held tasks whose file keys meet the patterns' keys (from the indexes on `keys` and
    /// `reach`; rows written before those columns existed are always looked at), and every
    /// explicit reservation with its holder's last sign of life.
    pub(crate) fn reservations_near(
        &self,
        tx: &mut Tx,
        patterns: &[String],
    ) -> Result<(TaskFile, Timestamp)> {
        let (keys, shared) = lock_keys(patterns);
        let above: Vec<String> = keys.iter().cloned().chain(shared).collect();
        // One round trip for the common case: the near held tasks, whether any explicit
        // reservation exists, and the time of this read.
        // Kept as a function through a pooler: its plan costs the server more than its run.
        // Its own round trip, after the claim's read: sent with that read, the keys taken from
        // the task it found in a subquery, the planner read every held task instead of using
        // the indexes on `keys` and `reach` (2.5 ms with 2,500 held; 16 workers' claims/s
        // fell from ~1,600 to ~1,000 in `cargo bench -p baton-pg --bench claims`).
        static NEAR: LazyLock<Kept> = LazyLock::new(|| {
            Kept::new(
                "SELECT statement_timestamp(),
                    EXISTS (SELECT 1 FROM baton_reservations WHERE project = $1),
                    (SELECT coalesce(jsonb_agg(body), '[]') FROM baton_tasks
                     WHERE project = $1 AND status IN ('claimed', 'in_progress')
                       AND (keys && $2 OR reach && $3
                            OR (keys IS NULL
                                AND jsonb_array_length(coalesce(body->'context'->'files', '[]'))
                                    > 0)))"
                    .into(),
                &["text", "text[]", "text[]"],
                &["timestamptz", "boolean", "jsonb"],
            )
        });
        let row = tx.query_one_kept(&NEAR, &[&self.name, &above, &keys])?;
        let now = Timestamp(row.get::<_, DateTime<Utc>>(0));
        let file = self.near_file(tx, now, row.get(1), row.get(2))?;
        Ok((file, now))
    }

    /// The ready tasks just ahead in claim order, other than `passed`, that `agent` could not
    /// take now because another agent holds some of their files: one read of the next
    /// [`AHEAD`] and of the reservations near all their files. A claim that has passed over a
    /// task at a busy board's front passes over these at once instead of locking and reading
    /// near each in turn (two round trips a task). Only the passing is decided here: a task
    /// found free is still locked, keyed and checked against what is committed after its keys
    /// were taken before it is claimed; one found held was held a moment ago, as it would have
    /// been had the claim reached it a moment earlier.
    pub(crate) fn held_ahead(
        &self,
        tx: &mut Tx,
        agent: &str,
        passed: &[String],
    ) -> Result<Vec<String>> {
        // The held tasks near the candidates are found as `NEAR` finds them for one: keys
        // meeting the candidates' reach, or reach meeting their keys.
        static HELD_AHEAD: LazyLock<Kept> = LazyLock::new(|| {
            Kept::new(
                format!(
                    "WITH ahead AS (
                         SELECT t.priority, t.created_at, t.position, t.body, t.keys, t.reach
                         FROM baton_tasks t
                         WHERE t.project = $1 AND t.id <> ALL($2) AND {READY}
                         ORDER BY {CLAIM_ORDER} LIMIT {AHEAD})
                     SELECT statement_timestamp(),
                         EXISTS (SELECT 1 FROM baton_reservations WHERE project = $1),
                         (SELECT coalesce(jsonb_agg(h.body), '[]') FROM baton_tasks h
                          WHERE h.project = $1 AND h.status IN ('claimed', 'in_progress')
                            AND (h.keys && (SELECT array_agg(k) FROM ahead, unnest(ahead.reach) k)
                                 OR h.reach && (SELECT array_agg(k) FROM ahead, unnest(ahead.keys) k)
                                 OR (h.keys IS NULL
                                     AND jsonb_array_length(
                                         coalesce(h.body->'context'->'files', '[]')) > 0))),
                         (SELECT coalesce(jsonb_agg(body ORDER BY priority, created_at, position),
                                          '[]')
                          FROM ahead)"
                ),
                &["text", "text[]"],
                &["timestamptz", "boolean", "jsonb", "jsonb"],
            )
        });
        let row = tx.query_one_kept(&HELD_AHEAD, &[&self.name, &passed])?;
        let now = Timestamp(row.get::<_, DateTime<Utc>>(0));
        let near = self.near_file(tx, now, row.get(1), row.get(2))?;
        let active = near.active_reservations(now, self.lease);
        let ahead: Vec<Task> = parse_tasks(row.get(3))?;
        Ok(ahead
            .into_iter()
            .filter(|task| !task_conflicts(&active, task, Some(agent)).is_empty())
            .map(|task| task.id)
            .collect())
    }

    /// The reservations a near read found, as a `TaskFile` at `now`: the held tasks `held`
    /// and, when `reserved` (some exist), the explicit reservations.
    fn near_file(
        &self,
        tx: &mut Tx,
        now: Timestamp,
        reserved: bool,
        held: serde_json::Value,
    ) -> Result<TaskFile> {
        let mut file = TaskFile::new(now);
        file.tasks = baton_core::Tasks::from(parse_tasks(held)?);
        if reserved {
            explicit(tx, &self.name, &mut file)?;
        }
        Ok(file)
    }
}

/// How many ready tasks ahead [`PgStore::held_ahead`] reads at once: more than a busy front
/// holds back in the 200-worker run (~10), few enough to parse in a fraction of a round trip.
const AHEAD: usize = 16;

/// Task bodies aggregated into one JSON array.
fn parse_tasks(bodies: serde_json::Value) -> Result<Vec<Task>> {
    let tasks = serde_json::from_value(bodies).map_err(|e| StoreError::InvalidInput {
        field: "task row",
        reason: format!("does not parse: {e}"),
    })?;
    Ok(tasks)
}

/// Adds the explicit reservations and every agent's last sign of life to `file`.
pub(crate) fn explicit(tx: &mut Tx, project: &str, file: &mut TaskFile) -> Result<()> {
    file.reservations = tx
        .query(
            "SELECT number, agent, task, paths, shared, since, expires_at, reason
             FROM baton_reservations WHERE project = $1 ORDER BY number",
            &[&project],
        )?
        .iter()
        .map(reservation)
        .collect();
    if file.reservations.is_empty() || !file.agents.is_empty() {
        return Ok(());
    }
    load_agents(tx, project, file)
}

fn reservation(row: &tokio_postgres::Row) -> Reservation {
    Reservation {
        id: format!("r-{}", row.get::<_, i64>(0)),
        agent: row.get(1),
        task: row.get(2),
        paths: row.get(3),
        shared: row.get(4),
        since: Timestamp(row.get::<_, DateTime<Utc>>(5)),
        expires_at: row.get::<_, Option<DateTime<Utc>>>(6).map(Timestamp),
        reason: row.get(7),
    }
}

/// Reserves paths for an agent; refused when another agent holds any of them.
pub(crate) fn reserve(store: &PgStore, new: NewReservation) -> baton_core::Result<Reservation> {
    let lease = store.lease;
    let paths = normalise_all(&new.paths)?;
    store.transact(|tx, now| {
        store.wait_keys(tx, &paths)?;
        let (mut file, _) = store.reservations_near(tx, &paths)?;
        if let Some(id) = &new.task
            && file.task(id).is_none()
        {
            // Not held with files: load it to say why.
            file.tasks.extend(load(
                tx,
                "SELECT body FROM baton_tasks WHERE project = $1 AND id = $2",
                &[&store.name, id],
            )?);
        }
        let reservation = file.reserve(new.clone(), now, lease)?;
        // Ones whose time ran out go as new ones are made.
        tx.execute(
            "DELETE FROM baton_reservations WHERE project = $1 AND expires_at <= $2",
            &[&store.name, &now.0],
        )?;
        // Reservations of paths that cannot overlap do not wait for each other's keys:
        // their numbers are given out under the project's row lock.
        lock_project(tx, &store.name)?;
        let number: i64 = tx
            .query_one(
                "SELECT coalesce(max(number), 0) + 1 FROM baton_reservations WHERE project = $1",
                &[&store.name],
            )?
            .get(0);
        let reservation = Reservation {
            id: format!("r-{number}"),
            ..reservation
        };
        tx.execute(
            "INSERT INTO baton_reservations
                 (project, number, agent, task, paths, shared, since, expires_at, reason)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
            &[
                &store.name,
                &number,
                &reservation.agent,
                &reservation.task,
                &reservation.paths,
                &reservation.shared,
                &reservation.since.0,
                &reservation.expires_at.map(|t| t.0),
                &reservation.reason,
            ],
        )?;
        tx.execute(
            "INSERT INTO baton_agents (project, name, last_seen) VALUES ($1, $2, $3)
             ON CONFLICT (project, name) DO UPDATE SET last_seen = EXCLUDED.last_seen",
            &[&store.name, &reservation.agent, &now.0],
        )?;
        journal(tx, &store.name, &LogEntry::reserve(&reservation), now)?;
        Ok(reservation)
    })
}

/// Gives back `agent`'s reservations of `paths` (all when empty); tells waiting claims.
pub(crate) fn unreserve(
    store: &PgStore,
    agent: &str,
    paths: &[String],
) -> baton_core::Result<Vec<Reservation>> {
    baton_core::names::validate_agent_id(agent)?;
    let paths = if paths.is_empty() {
        Vec::new()
    } else {
        normalise_all(paths)?
    };
    store.transact(|tx, now| {
        let rows = tx.query(
            "DELETE FROM baton_reservations
             WHERE project = $1 AND agent = $2 AND (cardinality($3::text[]) = 0 OR paths && $3)
             RETURNING number, agent, task, paths, shared, since, expires_at, reason",
            &[&store.name, &agent, &paths],
        )?;
        let mut gone: Vec<Reservation> = rows.iter().map(reservation).collect();
        gone.sort_by(|a, b| a.id.cmp(&b.id));
        if let Some(entry) = LogEntry::unreserve(agent, &gone) {
            journal(tx, &store.name, &entry, now)?;
            tx.execute("SELECT pg_notify($1, $2)", &[&CHANNEL, &store.name])?;
        }
        Ok(gone)
    })
}

/// The reservations in force now.
pub(crate) fn reservations(store: &PgStore) -> baton_core::Result<Vec<Reservation>> {
    let lease = store.lease;
    store.transact(|tx, now| Ok(store.reservation_view(tx)?.active_reservations(now, lease)))
}

/// Which of `paths` agents other than `agent` hold exclusively now.
pub(crate) fn check_paths(
    store: &PgStore,
    paths: &[String],
    agent: Option<&str>,
) -> baton_core::Result<Vec<Hold>> {
    if let Some(agent) = agent {
        baton_core::names::validate_agent_id(agent)?;
    }
    let paths = normalise_all(paths)?;
    let lease = store.lease;
    store.transact(|tx, now| {
        Ok(store
            .reservation_view(tx)?
            .holds(&paths, agent, true, now, lease))
    })
}

#[cfg(test)]
mod tests {
    use baton_core::{ClaimRequest, NewReservation, NewTask, TaskStore};
    use baton_test_support::pg::PgServer;

    use crate::store::PgStore;

    fn add(store: &PgStore, files: &[&str]) -> String {
        let task = store
            .add_task(NewTask {
                description: format!("Change {files:?}"),
                files: files.iter().map(|f| f.to_string()).collect(),
                ..NewTask::default()
            })
            .unwrap();
        task.id
    }

    /// What [`PgStore::held_ahead`] passes over for `agent`, in one read.
    fn held_ahead(store: &PgStore, agent: &str, passed: &[&String]) -> Vec<String> {
        let passed = ids(passed);
        store
            .transact_unclocked(|tx| store.held_ahead(tx, agent, &passed))
            .unwrap()
    }

    fn ids(of: &[&String]) -> Vec<String> {
        of.iter().map(|id| id.to_string()).collect()
    }

    #[test]
    fn the_tasks_ahead_whose_files_others_hold_are_found_in_one_read() {
        let server = PgServer::shared();
        let store = PgStore::init(server.url(), "held-ahead", "Test goal", None).unwrap();
        // w1 holds src/a.rs, w2 a glob over src's TypeScript, w9 reserves docs/.
        let a = add(&store, &["src/a.rs"]);
        let glob = add(&store, &["src/**/*.ts"]);
        for (agent, id) in [("w1", &a), ("w2", &glob)] {
            let claimed = store.claim(&ClaimRequest::task(agent, id)).unwrap();
            assert_eq!(claimed.map(|c| c.task.id).as_ref(), Some(id));
        }
        store
            .reserve(NewReservation {
                agent: "w9".into(),
                paths: vec!["docs/".into()],
                task: None,
                shared: false,
                ttl: None,
                reason: None,
            })
            .unwrap();
        let on_a = add(&store, &["src/a.rs"]);
        let in_glob = add(&store, &["src/api/users.ts"]);
        let _free = add(&store, &["src/b.rs"]);
        let reserved = add(&store, &["docs/guide.md"]);
        let _no_files = add(&store, &[]);
        let folder = add(&store, &["src/"]);

        assert_eq!(
            held_ahead(&store, "w3", &[&folder]),
            ids(&[&on_a, &in_glob, &reserved]),
            "another worker's file, a glob's, an explicit reservation's"
        );
        assert_eq!(
            held_ahead(&store, "w3", &[]),
            ids(&[&on_a, &in_glob, &reserved, &folder]),
            "and a folder over them"
        );
        // A worker's own files keep nothing from it; passed tasks are not read again.
        assert_eq!(
            held_ahead(&store, "w1", &[&in_glob]),
            ids(&[&reserved, &folder])
        );
    }
}
