//! File reservations in PostgreSQL. The rules (normalising paths, what overlaps, which
//! reservations are in force, what a claim passes over) are `baton-store`'s
//! (`baton_store::reservations`); this module reads the reservations in force (held tasks'
//! files and the `baton_reservations` rows) and serialises everything that decides on them
//! (claims that respect reservations, reserving) under one advisory lock per project, so two
//! workers cannot both take tasks with overlapping files in the moment between reading and
//! committing.

use baton_store::model::{AgentRecord, TaskFile};
use baton_store::reservations::{describe_hold, normalise_all};
use baton_store::{Hold, NewReservation, Reservation, StoreError, Timestamp};
use chrono::{DateTime, Utc};

use crate::error::Result;
use crate::tasks::{CHANNEL, PgProject, Tx, journal, load};

impl PgProject {
    /// Holds this project's reservation lock until the transaction ends.
    pub(crate) fn lock_reservations(&self, tx: &mut Tx) -> Result<()> {
        tx.execute(
            "SELECT pg_advisory_xact_lock(hashtext('baton-reservations:' || $1))",
            &[&self.name],
        )?;
        Ok(())
    }

    /// The held tasks with files, the explicit reservations and their holders' last signs of
    /// life, as a `TaskFile` the store's rules read (`active_reservations`, `holds`).
    pub(crate) fn reservation_view(&self, tx: &mut Tx) -> Result<TaskFile> {
        let mut file = TaskFile::new(Timestamp(DateTime::<Utc>::UNIX_EPOCH));
        file.tasks = load(
            tx,
            "SELECT body FROM baton_tasks WHERE project = $1
               AND status IN ('claimed', 'in_progress')
               AND jsonb_array_length(coalesce(body->'context'->'files', '[]')) > 0",
            &[&self.name],
        )?;
        explicit(tx, &self.name, &mut file)?;
        Ok(file)
    }

    /// Reserves paths for an agent; refused when another agent holds any of them.
    pub fn reserve(&self, new: NewReservation) -> baton_store::Result<Reservation> {
        let lease = self.lease;
        self.transact(|tx, now| {
            self.lock_reservations(tx)?;
            let mut file = self.reservation_view(tx)?;
            if let Some(id) = &new.task
                && file.task(id).is_none()
            {
                // Not held with files: load it to say why.
                file.tasks.extend(load(
                    tx,
                    "SELECT body FROM baton_tasks WHERE project = $1 AND id = $2",
                    &[&self.name, id],
                )?);
            }
            let reservation = file.reserve(new.clone(), now, lease)?;
            // Ones whose time ran out go as new ones are made.
            tx.execute(
                "DELETE FROM baton_reservations WHERE project = $1 AND expires_at <= $2",
                &[&self.name, &now.0],
            )?;
            let number: i64 = tx
                .query_one(
                    "SELECT coalesce(max(number), 0) + 1 FROM baton_reservations WHERE project = $1",
                    &[&self.name],
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
                    &self.name,
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
                &[&self.name, &reservation.agent, &now.0],
            )?;
            let details = baton_store::journal::reserved(&reservation);
            journal(tx, &self.name, &reservation.agent, "RESERVE", &details, now)?;
            Ok(reservation)
        })
    }

    /// Gives back `agent`'s reservations of `paths` (all when empty); tells waiting claims.
    pub fn unreserve(
        &self,
        agent: &str,
        paths: &[String],
    ) -> baton_store::Result<Vec<Reservation>> {
        baton_store::names::validate_agent_id(agent)?;
        let paths = if paths.is_empty() {
            Vec::new()
        } else {
            normalise_all(paths)?
        };
        self.transact(|tx, now| {
            let rows = tx.query(
                "DELETE FROM baton_reservations
                 WHERE project = $1 AND agent = $2 AND (cardinality($3::text[]) = 0 OR paths && $3)
                 RETURNING number, agent, task, paths, shared, since, expires_at, reason",
                &[&self.name, &agent, &paths],
            )?;
            let mut gone: Vec<Reservation> = rows.iter().map(reservation).collect();
            gone.sort_by(|a, b| a.id.cmp(&b.id));
            if !gone.is_empty() {
                let ids: Vec<&str> = gone.iter().map(|r| r.id.as_str()).collect();
                journal(tx, &self.name, agent, "UNRESERVE", &ids.join(", "), now)?;
                tx.execute("SELECT pg_notify($1, $2)", &[&CHANNEL, &self.name])?;
            }
            Ok(gone)
        })
    }

    /// The reservations in force now.
    pub fn reservations(&self) -> baton_store::Result<Vec<Reservation>> {
        let lease = self.lease;
        self.transact(|tx, now| Ok(self.reservation_view(tx)?.active_reservations(now, lease)))
    }

    /// Which of `paths` agents other than `agent` hold exclusively now.
    pub fn check_paths(
        &self,
        paths: &[String],
        agent: Option<&str>,
    ) -> baton_store::Result<Vec<Hold>> {
        if let Some(agent) = agent {
            baton_store::names::validate_agent_id(agent)?;
        }
        let paths = normalise_all(paths)?;
        let lease = self.lease;
        self.transact(|tx, now| {
            Ok(self
                .reservation_view(tx)?
                .holds(&paths, agent, true, now, lease))
        })
    }
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
    for row in tx.query(
        "SELECT name, last_seen FROM baton_agents WHERE project = $1",
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

fn reservation(row: &postgres::Row) -> Reservation {
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

/// The `paths_held` refusal for `holds`.
pub(crate) fn held(holds: &[Hold]) -> StoreError {
    StoreError::PathsHeld {
        holds: holds
            .iter()
            .map(describe_hold)
            .collect::<Vec<_>>()
            .join("; "),
    }
}
