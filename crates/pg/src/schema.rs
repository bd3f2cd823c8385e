//! Baton's tables, created and migrated by Baton. The version is a row in `baton_schema`;
//! migrations run in one transaction under an advisory lock, so two `baton` processes starting
//! at once migrate once. A database migrated by a newer `baton` is refused, not guessed at.

use crate::client::Client;

use baton_core::StoreError;

use crate::error::Result;

/// The schema this `baton` writes.
pub const VERSION: i32 = 10;

/// Migration N brings the schema from version N to N + 1.
const MIGRATIONS: [&str; VERSION as usize] = [
    r#"
CREATE TABLE baton_projects (
    name text PRIMARY KEY,
    goal text NOT NULL,
    approach text,
    created_at timestamptz NOT NULL DEFAULT now(),
    -- the next task-N to try, and the next position in the board's order
    next_number bigint NOT NULL DEFAULT 1,
    next_position bigint NOT NULL DEFAULT 1
);
CREATE TABLE baton_tasks (
    project text NOT NULL REFERENCES baton_projects (name) ON DELETE CASCADE,
    id text NOT NULL,
    position bigint NOT NULL,
    status text NOT NULL,
    priority integer NOT NULL,
    created_at timestamptz NOT NULL,
    claimed_by text,
    lease_expires_at timestamptz,
    dependencies text[] NOT NULL DEFAULT '{}',
    body jsonb NOT NULL,
    PRIMARY KEY (project, id)
);
-- A claim reads ready tasks best first: priority, then age, then board order.
CREATE INDEX baton_tasks_available ON baton_tasks (project, priority, created_at, position)
    WHERE status = 'available';
CREATE INDEX baton_tasks_held ON baton_tasks (project, lease_expires_at)
    WHERE status IN ('claimed', 'in_progress');
CREATE TABLE baton_agents (
    project text NOT NULL REFERENCES baton_projects (name) ON DELETE CASCADE,
    name text NOT NULL,
    last_seen timestamptz NOT NULL,
    PRIMARY KEY (project, name)
);
"#,
    r#"
-- The notes around the tasks, shared by every machine: the master plan and the last summary
-- (on the project), agents' log lines and discoveries (appended, in order).
ALTER TABLE baton_projects ADD COLUMN master_plan text, ADD COLUMN summary text;
CREATE TABLE baton_log (
    project text NOT NULL REFERENCES baton_projects (name) ON DELETE CASCADE,
    seq bigserial,
    at timestamptz NOT NULL,
    agent text NOT NULL,
    line text NOT NULL,
    PRIMARY KEY (project, seq)
);
CREATE INDEX baton_log_agent ON baton_log (project, agent, seq);
-- How many of a task's dependencies are not done yet, kept as tasks complete (a decrement,
-- which concurrent completions cannot lose), so a claim reads ready tasks straight from an
-- index instead of checking every blocked task's dependencies.
ALTER TABLE baton_tasks ADD COLUMN waiting integer NOT NULL DEFAULT 0;
UPDATE baton_tasks t SET waiting = (
    SELECT count(*) FROM unnest(t.dependencies) AS d(id)
    LEFT JOIN baton_tasks u ON u.project = t.project AND u.id = d.id
    WHERE u.status IS DISTINCT FROM 'done');
DROP INDEX baton_tasks_available;
CREATE INDEX baton_tasks_ready ON baton_tasks (project, priority, created_at, position)
    WHERE status = 'available' AND waiting = 0;
CREATE INDEX baton_tasks_dependencies ON baton_tasks USING gin (dependencies);
CREATE TABLE baton_discoveries (
    project text NOT NULL REFERENCES baton_projects (name) ON DELETE CASCADE,
    seq bigserial,
    at timestamptz NOT NULL,
    agent text NOT NULL,
    entry text NOT NULL,
    PRIMARY KEY (project, seq)
);
"#,
    r#"
-- Runs and the signals named in them, shared by every machine. A signal's record is what the
-- folder's signal file holds (`done`, or the writer, pid, time and note).
CREATE TABLE baton_runs (
    project text NOT NULL REFERENCES baton_projects (name) ON DELETE CASCADE,
    number integer NOT NULL,
    started_at timestamptz NOT NULL,
    note text,
    PRIMARY KEY (project, number)
);
CREATE TABLE baton_signals (
    project text NOT NULL,
    run integer NOT NULL,
    name text NOT NULL,
    record jsonb NOT NULL,
    PRIMARY KEY (project, run, name),
    FOREIGN KEY (project, run) REFERENCES baton_runs (project, number) ON DELETE CASCADE
);
"#,
    r#"
-- Documents kept whole beside the tasks (orchestration's state: invocations, handoffs,
-- parallel runs, conflicts), each changed under its row's lock.
CREATE TABLE baton_documents (
    project text NOT NULL REFERENCES baton_projects (name) ON DELETE CASCADE,
    name text NOT NULL,
    body jsonb NOT NULL,
    PRIMARY KEY (project, name)
);
"#,
    r#"
-- Paths agents reserved with `baton reserve` (a held task's files are reserved by the task).
CREATE TABLE baton_reservations (
    project text NOT NULL REFERENCES baton_projects (name) ON DELETE CASCADE,
    number bigint NOT NULL,
    agent text NOT NULL,
    task text,
    paths text[] NOT NULL,
    shared boolean NOT NULL,
    since timestamptz NOT NULL,
    expires_at timestamptz,
    reason text,
    PRIMARY KEY (project, number)
);
-- Each task's file lock keys and every folder above them (`baton_core::reservations::
-- task_keys`), so a claim finds the held tasks whose files could overlap its own from an
-- index, not by reading every held task. NULL for rows written before: always looked at.
ALTER TABLE baton_tasks ADD COLUMN keys text[], ADD COLUMN reach text[];
CREATE INDEX baton_tasks_held_keys ON baton_tasks USING gin (keys)
    WHERE status IN ('claimed', 'in_progress');
CREATE INDEX baton_tasks_held_reach ON baton_tasks USING gin (reach)
    WHERE status IN ('claimed', 'in_progress');
"#,
    r#"
-- The team (`baton team`): each attempt an agent made at a task, its transcript (one row per
-- event, numbered by the attempt's one writer), and each supervised worker's last record.
CREATE TABLE baton_attempts (
    project text NOT NULL REFERENCES baton_projects (name) ON DELETE CASCADE,
    task text NOT NULL,
    attempt integer NOT NULL,
    body jsonb NOT NULL,
    PRIMARY KEY (project, task, attempt)
);
CREATE TABLE baton_transcripts (
    project text NOT NULL REFERENCES baton_projects (name) ON DELETE CASCADE,
    task text NOT NULL,
    attempt integer NOT NULL,
    seq bigint NOT NULL,
    body jsonb NOT NULL,
    PRIMARY KEY (project, task, attempt, seq)
);
CREATE TABLE baton_workers (
    project text NOT NULL REFERENCES baton_projects (name) ON DELETE CASCADE,
    name text NOT NULL,
    body jsonb NOT NULL,
    PRIMARY KEY (project, name)
);
"#,
    r#"
-- Each transcript event's place in the project's order of appends, so a reader following
-- every transcript (the change feed) asks for what came after the last place it saw. The
-- counter row is taken in the append's transaction, so places commit in their order and a
-- reader never passes one that commits later. Events copied in by an import have none.
ALTER TABLE baton_transcripts ADD COLUMN place bigint;
CREATE INDEX baton_transcripts_place ON baton_transcripts (project, place)
    WHERE place IS NOT NULL;
CREATE TABLE baton_transcript_places (
    project text PRIMARY KEY REFERENCES baton_projects (name) ON DELETE CASCADE,
    last bigint NOT NULL
);
"#,
    r#"
-- A claim first looks for a task sent back to the claiming worker for changes: rare rows, so
-- the index is tiny and the look costs a probe (the predicate is `sql::SENT_BACK`'s).
CREATE INDEX baton_tasks_sent_back ON baton_tasks (project, claimed_by)
    WHERE status = 'claimed' AND body @> '{"sent_back": true}';
"#,
    r#"
-- GIN's fast update puts new entries in a pending list that every search reads in full until
-- a vacuum (or 4 MB of them) merges it into the index. These indexes are searched by every
-- claim (the held tasks near its files) and every completion (the tasks depending on it), and
-- written by every claim, completion and added task: in the 200-worker run the completion's
-- dependents update read a board's worth of pending entries each time (0.92 ms a call; the
-- claim's p50 17 ms, 12 ms without). Entries go into the index itself from now on, and what is
-- pending is merged now.
ALTER INDEX baton_tasks_dependencies SET (fastupdate = off);
ALTER INDEX baton_tasks_held_keys SET (fastupdate = off);
ALTER INDEX baton_tasks_held_reach SET (fastupdate = off);
SELECT gin_clean_pending_list('baton_tasks_dependencies'),
       gin_clean_pending_list('baton_tasks_held_keys'),
       gin_clean_pending_list('baton_tasks_held_reach');
"#,
    r#"
-- The held tasks near a claim's files are those whose keys or reach meet its own (the GIN
-- indexes above) and those held since before keys were recorded (NULL keys: looked at
-- always). With nothing to find that third kind through, the plan read every held task and
-- tested each; with this index (empty once such tasks are done) it is an OR of three index
-- scans: the held tasks near the 16 ready tasks ahead, on a board of 3,000 with 200 held,
-- 1.0 -> 0.5 ms (EXPLAIN ANALYZE of the generic plan).
CREATE INDEX baton_tasks_held_unkeyed ON baton_tasks (project)
    WHERE keys IS NULL AND status IN ('claimed', 'in_progress');
"#,
];

/// The SQL that brings the schema from `version` to the next (for tests of the migrations).
pub fn migration(version: i32) -> Option<&'static str> {
    MIGRATIONS.get(usize::try_from(version).ok()?).copied()
}

/// An arbitrary key for the advisory lock that serialises migrations.
const MIGRATION_LOCK: i64 = 0x6261_746f_6e01;

/// Brings the database's Baton schema to [`VERSION`]; refuses a newer one. `store` names the
/// database in messages.
pub(crate) fn migrate(client: &mut Client, store: &str) -> Result<()> {
    let mut tx = client.transaction()?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])?;
    tx.batch_execute("CREATE TABLE IF NOT EXISTS baton_schema (version integer NOT NULL)")?;
    let found: Option<i32> = tx
        .query_opt("SELECT version FROM baton_schema", &[])?
        .map(|row| row.get(0));
    let current = found.unwrap_or(0);
    if current > VERSION {
        return Err(StoreError::SchemaTooNew {
            store: store.to_string(),
            found: current,
            known: VERSION,
        }
        .into());
    }
    for migration in &MIGRATIONS[current as usize..] {
        tx.batch_execute(migration)?;
    }
    if found.is_none() {
        tx.execute(
            "INSERT INTO baton_schema (version) VALUES ($1)",
            &[&VERSION],
        )?;
    } else if current < VERSION {
        tx.execute("UPDATE baton_schema SET version = $1", &[&VERSION])?;
    }
    tx.commit()?;
    Ok(())
}
