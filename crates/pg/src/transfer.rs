//! Moving a project between the two stores. [`PgStore::export`] writes a `.coordination/`
//! folder from a database project (the source design's `tasks.json`, master plan,
//! discoveries, logs, results, summary, runs, named signals, orchestration's record, and the
//! team's attempts, transcripts and workers), so `jq` and every folder reader work on it and it
//! opens as a folder project; [`PgStore::import`] loads a folder project into a database in
//! one transaction (all of it, or nothing), keeping ids, order, statuses, leases and notes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use baton_core::Layout;
use baton_core::notes::Notes;
use baton_core::{
    Attempt, DocumentStore, LEAD_LOG, LogEntry, SignalStore, StoreError, TaskStore, TeamStore,
    TranscriptEvent, WorkerRecord,
};
use baton_folder::FolderStore;
use baton_fs::write_atomic;
use serde::Serialize;

use crate::connect::{connect, describe};
use crate::connection::Tx;
use crate::error::{Failure, Result};
use crate::rows::{database_now, journal, to_body};
use crate::schema;
use crate::store::PgStore;

/// What an export or import moved.
#[derive(Debug, Clone, Serialize)]
pub struct Transfer {
    /// The folder written (export) or read (import).
    pub folder: PathBuf,
    /// The database project, for people (`project NAME in PostgreSQL at user@host:port/db`).
    pub store: String,
    pub tasks: usize,
    pub log_lines: usize,
    pub discoveries: usize,
    pub runs: usize,
    pub signals: usize,
    /// Agents' attempts at tasks (`baton team`), each with its transcript.
    pub attempts: usize,
    /// Documents: questions, messages and approval decisions, reviews, orchestration's record,
    /// the team's spend.
    pub documents: usize,
}

/// A store's team records: every attempt with its transcript, and every worker.
type TeamRecords = (Vec<(Attempt, Vec<TranscriptEvent>)>, Vec<WorkerRecord>);

fn team_records(store: &dyn TeamStore) -> baton_core::Result<TeamRecords> {
    let mut attempts = Vec::new();
    for attempt in store.attempts(None)? {
        let events = store.events(&attempt.task, attempt.attempt, 0, usize::MAX)?;
        attempts.push((attempt, events));
    }
    Ok((attempts, store.workers()?))
}

impl PgStore {
    /// Writes this project as a `.coordination/` folder in `dir` (a project folder, or the
    /// `.coordination` folder itself). Refuses a folder that already holds a project.
    pub fn export(&self, dir: &Path) -> baton_core::Result<Transfer> {
        let layout = Layout::for_project(dir);
        if layout.holds_project() {
            return Err(StoreError::AlreadyInitialized {
                path: layout.root().to_path_buf(),
            });
        }
        let (file, _) = self.snapshot()?;
        let Notes {
            master_plan: plan,
            summary,
            discoveries,
        } = self.notes()?;
        let (lines, _) = crate::notes::log_since(self, 0)?;
        let runs = self.runs()?;
        let signals = self.all_signals()?;
        let (attempts, workers) = team_records(self)?;
        let documents = baton_core::every_document(self)?;
        for folder in [
            layout.root().to_path_buf(),
            layout.context_dir(),
            layout.logs_dir(),
            layout.results_dir(),
        ] {
            std::fs::create_dir_all(&folder).map_err(|e| StoreError::io(&folder, e))?;
        }
        write_atomic(&layout.master_plan(), plan.as_bytes())?;
        write_atomic(&layout.discoveries(), discoveries.as_bytes())?;
        if let Some(summary) = &summary {
            write_atomic(&layout.summary(), summary.as_bytes())?;
        }
        let mut logs: BTreeMap<&str, String> = BTreeMap::new();
        for line in &lines {
            let text = logs.entry(&line.agent).or_default();
            text.push_str(&line.line);
            text.push('\n');
        }
        for (agent, text) in &logs {
            write_atomic(&layout.log_file(agent)?, text.as_bytes())?;
        }
        for task in file.tasks.iter().filter(|t| t.status.is_final()) {
            baton_folder::notes::write_result(&layout, task)?;
        }
        let folder = FolderStore::unopened(layout.clone());
        folder.restore_runs(&runs)?;
        for signal in &signals {
            folder.restore_signal(signal)?;
        }
        for (name, body) in &documents {
            folder.change_document(name, &mut |_, _| Ok(Some(body.clone())))?;
        }
        for (attempt, events) in &attempts {
            folder.save_attempt(attempt)?;
            folder.append_events(&attempt.task, attempt.attempt, events)?;
        }
        for worker in &workers {
            folder.save_worker(worker)?;
        }
        baton_folder::ignore_own_files(&layout)?;
        // Last, as `leader init` does: a folder without tasks.json is not a project yet.
        write_atomic(&layout.tasks_file(), &baton_folder::encode(&file)?)?;
        Ok(Transfer {
            folder: layout.root().to_path_buf(),
            store: TaskStore::describe(self),
            tasks: file.tasks.len(),
            log_lines: lines.len(),
            discoveries: entries_count(&discoveries),
            runs: runs.len(),
            signals: signals.len(),
            attempts: attempts.len(),
            documents: documents.len(),
        })
    }

    /// Loads the folder project at `dir` into the database at `url` as project `name`, in one
    /// transaction. Refuses a name the database already has.
    pub fn import(url: &str, name: &str, dir: &Path) -> baton_core::Result<(PgStore, Transfer)> {
        baton_core::names::validate_name("project name", name)?;
        let folder = FolderStore::open(Layout::for_project(dir))?;
        let layout = folder.layout().clone();
        // The database keeps every task on its board: the archived ones come back to it,
        // before the live ones (as `leader status --all` lists them).
        let mut file = folder.load()?;
        file.tasks.splice(0..0, folder.archived()?);
        let Notes {
            master_plan: plan,
            summary,
            discoveries,
        } = baton_folder::notes::read(&layout)?;
        let lines = folder.logs(None, usize::MAX)?;
        let runs = folder.runs()?;
        let documents = baton_core::every_document(&folder)?;
        let mut signals = Vec::new();
        for run in &runs {
            signals.extend(folder.list_signals(run.number)?);
        }
        let (attempts, workers) = team_records(&folder)?;
        let goal = baton_core::notes::goal_of(&plan).unwrap_or_else(|| name.to_string());
        let store = describe(url);
        let route = crate::connect::route(url).map_err(|e| e.at(&store))?;
        let client = (|| -> Result<crate::client::Client> {
            let mut client = connect(url)?;
            schema::migrate(&mut client, &store)?;
            let mut prepared = std::collections::HashMap::new();
            let mut tx = Tx::over(&mut client, &mut prepared, route.pooled);
            let now = database_now(&mut tx)?;
            let created = tx.execute(
                "INSERT INTO baton_projects (name, goal, master_plan, summary, created_at)
                 VALUES ($1, $2, $3, $4, coalesce($5, now())) ON CONFLICT (name) DO NOTHING",
                &[&name, &goal, &plan, &summary, &file.created_at.map(|t| t.0)],
            )?;
            if created == 0 {
                return Err(Failure::from(StoreError::ProjectExists {
                    name: name.to_string(),
                    store: store.clone(),
                }));
            }
            let mut next_number = 1_i64;
            for (position, task) in file.tasks.iter().enumerate() {
                let (keys, reach) = baton_core::reservations::task_keys(task);
                if let Some(n) = task
                    .id
                    .strip_prefix("task-")
                    .and_then(|n| n.parse::<i64>().ok())
                {
                    next_number = next_number.max(n + 1);
                }
                tx.execute(
                    "INSERT INTO baton_tasks (project, id, position, status, priority, created_at,
                         claimed_by, lease_expires_at, dependencies, body, keys, reach)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
                    &[
                        &name,
                        &task.id,
                        &(position as i64 + 1),
                        &task.status.as_str(),
                        &(task.priority as i32),
                        &task.created_at.map_or(now.0, |t| t.0),
                        &task.claimed_by,
                        &task.lease_expires_at.map(|t| t.0),
                        &task.dependencies,
                        &to_body(task),
                        &keys,
                        &reach,
                    ],
                )?;
            }
            tx.execute(
                "UPDATE baton_projects SET next_number = $2, next_position = $3 WHERE name = $1",
                &[&name, &next_number, &(file.tasks.len() as i64 + 1)],
            )?;
            // Counted once the whole board is in (a dependency may come after its dependant).
            tx.execute(
                "UPDATE baton_tasks t SET waiting = (
                     SELECT count(*) FROM unnest(t.dependencies) AS d(id)
                     LEFT JOIN baton_tasks u ON u.project = t.project AND u.id = d.id
                     WHERE u.status IS DISTINCT FROM 'done')
                 WHERE t.project = $1",
                &[&name],
            )?;
            for (agent, record) in &file.agents {
                if let Some(seen) = record.last_seen {
                    tx.execute(
                        "INSERT INTO baton_agents (project, name, last_seen) VALUES ($1, $2, $3)",
                        &[&name, agent, &seen.0],
                    )?;
                }
            }
            let entries = discoveries
                .strip_prefix(baton_core::notes::DISCOVERIES_HEADER)
                .unwrap_or(&discoveries);
            if !entries.trim().is_empty() {
                tx.execute(
                    "INSERT INTO baton_discoveries (project, at, agent, entry)
                     VALUES ($1, $2, $3, $4)",
                    &[&name, &now.0, &LEAD_LOG, &entries],
                )?;
            }
            for line in &lines {
                tx.execute(
                    "INSERT INTO baton_log (project, at, agent, line) VALUES ($1, $2, $3, $4)",
                    &[&name, &now.0, &line.agent, &line.line],
                )?;
            }
            for run in &runs {
                tx.execute(
                    "INSERT INTO baton_runs (project, number, started_at, note)
                     VALUES ($1, $2, $3, $4)",
                    &[&name, &(run.number as i32), &run.started_at.0, &run.note],
                )?;
            }
            for signal in &signals {
                let record = serde_json::to_value(&signal.record).expect("records serialise");
                tx.execute(
                    "INSERT INTO baton_signals (project, run, name, record) VALUES ($1, $2, $3, $4)",
                    &[&name, &(signal.run.unwrap_or(0) as i32), &signal.name, &record],
                )?;
            }
            for (document, body) in &documents {
                tx.execute(
                    "INSERT INTO baton_documents (project, name, body) VALUES ($1, $2, $3)",
                    &[&name, document, body],
                )?;
            }
            for (attempt, events) in &attempts {
                let number = attempt.attempt as i32;
                let body = serde_json::to_value(attempt).expect("attempts serialise");
                tx.execute(
                    "INSERT INTO baton_attempts (project, task, attempt, body) VALUES ($1, $2, $3, $4)",
                    &[&name, &attempt.task, &number, &body],
                )?;
                let batch = serde_json::to_value(events).expect("events serialise");
                tx.execute(
                    "INSERT INTO baton_transcripts (project, task, attempt, seq, body)
                     SELECT $1, $2, $3, (e->>'seq')::bigint, e FROM jsonb_array_elements($4) e",
                    &[&name, &attempt.task, &number, &batch],
                )?;
            }
            for worker in &workers {
                let body = serde_json::to_value(worker).expect("workers serialise");
                tx.execute(
                    "INSERT INTO baton_workers (project, name, body) VALUES ($1, $2, $3)",
                    &[&name, &worker.name, &body],
                )?;
            }
            let details = format!(
                "{} tasks from {}",
                file.tasks.len(),
                layout.root().display()
            );
            journal(&mut tx, name, &LogEntry::new(LEAD_LOG, "IMPORT", details), now)?;
            tx.commit()?;
            Ok(client)
        })()
        .map_err(|e| e.at(&store))?;
        let project = PgStore::over(client, url, route, name, store);
        let transfer = Transfer {
            folder: layout.root().to_path_buf(),
            store: TaskStore::describe(&project),
            tasks: file.tasks.len(),
            log_lines: lines.len(),
            discoveries: entries_count(&discoveries),
            runs: runs.len(),
            signals: signals.len(),
            attempts: attempts.len(),
            documents: documents.len(),
        };
        Ok((project, transfer))
    }
}

/// How many discoveries a `discoveries.md` holds (its `## [time] agent` headings).
fn entries_count(text: &str) -> usize {
    text.matches("\n## [").count()
}
