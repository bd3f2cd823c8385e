//! # baton-pg
//!
//! A project kept in PostgreSQL, for agents on several machines that share no folder: a peer
//! of `baton-folder` behind `baton-core`'s store traits. One row per task (the task as the
//! folder's `tasks.json` holds it, in `body`, with the columns a query needs beside it); each
//! operation is one transaction that locks only the rows it changes, and claims take the best
//! ready row with `FOR UPDATE SKIP LOCKED`, so workers never wait on each other's claims. Time
//! is the database's, so a worker whose clock is wrong cannot steal a live lease or keep a
//! dead one.
//!
//! What may happen to a task is not restated here: each operation loads the row, applies
//! `baton-core`'s rules and writes the row back, with the log line the core words. What needs
//! other tasks (a claim's readiness: every dependency done) is a query.
//!
//! Errors are `baton-core`'s (`StoreError`, database failures included). [`PgStore`]
//! implements `TaskStore`, `SignalStore`, `DocumentStore` and `TeamStore`; it has no public operations of
//! its own besides creating, opening, exporting and importing a project.
//!
//! Modules, each importing only those before it: `plan_functions` (statements kept planned as functions
//! on a pooler's server sessions), `error`, `client` (tokio-postgres's client used from
//! blocking code, on a runtime of its own), `schema` (versioned migrations),
//! `connect` (URLs, passwords, TLS), `pipeline` (a transaction's requests sent together), `connection` (a
//! connection, its prepared statements and its transactions), `pool` (a store's few connections),
//! `sql` (the hot paths' SQL), `rows` (loading and saving tasks, the log, the clock), `store`
//! ([`PgStore`] and its transactions), `reservations`, `notes` (logs, discoveries, master
//! plan, summary, doctor, aggregate), `listen` (waking waiting workers and watchers), `tasks`
//! (the `TaskStore`), `signals`, `documents`, `team` (attempts, transcripts, workers), `transfer` (export to and import from a
//! `.coordination/` folder). Still per machine on a database project: signals at a path the
//! user names, agent definitions, browsers.

mod client;
mod connect;
mod connection;
mod documents;
mod error;
mod hub;
pub mod listen;
mod notes;
mod pipeline;
mod plan_functions;
mod pool;
mod reservations;
mod rows;
pub mod schema;
mod signals;
mod sql;
mod store;
mod tasks;
mod team;
pub mod transfer;

pub use listen::PgListener;
pub use store::PgStore;
