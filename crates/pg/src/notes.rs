//! The notes around a project's tasks, in the database so every machine shares them: agents'
//! log lines (`baton_log`, one row per line, written in the transaction of the operation they
//! record), discoveries (`baton_discoveries`), the master plan and the last summary (columns of
//! `baton_projects`). The texts are formatted by `baton-store`, as the folder formats its
//! files, so an export reads like a folder project's notes.

use baton_store::doctor::diagnose;
use baton_store::model::{AgentRecord, TaskFile};
use baton_store::notes::Notes;
use baton_store::project::LEADER;
use baton_store::{Aggregate, DoctorReport, LogLine, TaskStatus, TaskStore, Timestamp};
use chrono::{DateTime, Utc};

use crate::error::Result;
use crate::tasks::{PgProject, Tx, database_now, journal, load};

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

impl PgProject {
    /// Every task in board order, with the database's time now (one consistent read).
    pub fn snapshot(&self) -> baton_store::Result<(TaskFile, Timestamp)> {
        self.transact(|tx, now| {
            let mut file = TaskFile::new(now);
            let created: DateTime<Utc> = tx
                .query_one(
                    "SELECT created_at FROM baton_projects WHERE name = $1",
                    &[&self.name],
                )?
                .get(0);
            file.created_at = Some(Timestamp(created));
            // Not tracked (it would make every write contend on one row): left out, so an
            // export of an unchanged project is the same bytes.
            file.last_updated = None;
            file.tasks = load(
                tx,
                "SELECT body FROM baton_tasks WHERE project = $1 ORDER BY position",
                &[&self.name],
            )?;
            load_agents(tx, &self.name, &mut file)?;
            crate::reservations::explicit(tx, &self.name, &mut file)?;
            Ok((file, now))
        })
    }

    /// Appends a discovery (checked and formatted as the folder's `context/discoveries.md`
    /// entries are); says where it went.
    pub fn discover(&self, agent: &str, text: &str) -> baton_store::Result<String> {
        self.transact(|tx, now| {
            let entry = baton_store::notes::discovery_entry(agent, text, now)?;
            tx.execute(
                "INSERT INTO baton_discoveries (project, at, agent, entry) VALUES ($1, $2, $3, $4)",
                &[&self.name, &now.0, &agent, &entry],
            )?;
            journal(tx, &self.name, agent, "DISCOVERY", text.trim(), now)?;
            Ok(())
        })?;
        Ok(format!("the discoveries of {}", TaskStore::describe(self)))
    }

    /// The master plan, the summary and the discoveries, read together.
    pub fn notes(&self) -> baton_store::Result<Notes> {
        self.transact(|tx, _| {
            let row = tx.query_one(
                "SELECT coalesce(master_plan, ''), summary FROM baton_projects WHERE name = $1",
                &[&self.name],
            )?;
            let mut discoveries = baton_store::notes::DISCOVERIES_HEADER.to_string();
            for entry in tx.query(
                "SELECT entry FROM baton_discoveries WHERE project = $1 ORDER BY seq",
                &[&self.name],
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
    pub fn logs(&self, agent: Option<&str>, tail: usize) -> baton_store::Result<Vec<LogLine>> {
        if let Some(agent) = agent {
            baton_store::names::validate_agent_id(agent)?;
        }
        let tail = i64::try_from(tail).unwrap_or(i64::MAX);
        self.transact(|tx, _| {
            let rows = tx.query(
                "SELECT agent, line FROM (
                     SELECT seq, agent, line FROM baton_log
                     WHERE project = $1 AND ($2::text IS NULL OR agent = $2)
                     ORDER BY seq DESC LIMIT $3
                 ) AS last ORDER BY seq",
                &[&self.name, &agent, &tail],
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
    pub fn log_since(&self, seq: i64) -> baton_store::Result<(Vec<LogLine>, i64)> {
        self.transact(|tx, _| {
            let rows = tx.query(
                "SELECT seq, agent, line FROM baton_log WHERE project = $1 AND seq > $2
                 ORDER BY seq",
                &[&self.name, &seq],
            )?;
            let last: i64 = match rows.last() {
                Some(row) => row.get(0),
                None => tx
                    .query_one(
                        "SELECT coalesce(max(seq), 0) FROM baton_log WHERE project = $1",
                        &[&self.name],
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
    pub fn aggregate(&self) -> baton_store::Result<Aggregate> {
        let report = self.status()?;
        let text = baton_store::summary::render(&report);
        let outcome = format!("{} of {}", report.outcome(), report.total);
        self.transact(|tx, _| {
            let now = database_now(tx)?;
            tx.execute(
                "UPDATE baton_projects SET summary = $2 WHERE name = $1",
                &[&self.name, &text],
            )?;
            journal(tx, &self.name, LEADER, "AGGREGATE", &outcome, now)?;
            Ok(())
        })?;
        let done = report.count(TaskStatus::Done);
        let failed = report.count(TaskStatus::Failed);
        let cancelled = report.count(TaskStatus::Cancelled);
        Ok(Aggregate {
            path: format!("summary.md of {}", TaskStore::describe(self)),
            total: report.total,
            done,
            failed,
            cancelled,
            unfinished: report.total - done - failed - cancelled,
        })
    }

    /// The folder's findings on the tasks (stale leases, tasks that can never finish, a stalled
    /// queue); there are no files to lose or leave behind. With `fix`, each stale lease is
    /// released in its own transaction.
    pub fn doctor(&self, fix: bool) -> baton_store::Result<DoctorReport> {
        let (file, now) = self.snapshot()?;
        let mut report = DoctorReport {
            findings: diagnose(&file, now, self.lease),
            fixed: Vec::new(),
        };
        if fix {
            baton_store::store::release_stale_leases(self, &file, &mut report);
            if !report.fixed.is_empty() {
                let fixed = report.fixed.clone();
                self.transact(|tx, now| {
                    for line in &fixed {
                        journal(tx, &self.name, LEADER, "DOCTOR_FIX", line, now)?;
                    }
                    Ok(())
                })?;
            }
        }
        Ok(report)
    }
}
