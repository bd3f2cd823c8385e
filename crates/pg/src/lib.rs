//! # baton-pg
//!
//! A project's tasks in PostgreSQL, for agents on several machines that share no folder. One
//! row per task (the task as the folder's `tasks.json` holds it, in `body`, with the columns a
//! query needs beside it); each operation is one transaction that locks only the rows it
//! changes, and claims take the best ready row with `FOR UPDATE SKIP LOCKED`, so workers never
//! wait on each other's claims. Time is the database's (`now()` of the transaction), so a
//! worker whose clock is wrong cannot steal a live lease or keep a dead one.
//!
//! What may happen to a task is not restated here: each operation loads the row, applies
//! `baton-store`'s rules (`baton_store::rules`) and writes the row back. What needs other
//! tasks (a claim's readiness: every dependency done) is a query.
//!
//! Errors are `baton-store`'s (`StoreError`, database failures included), and [`PgProject`]
//! implements `baton_store::TaskStore`, the seam every front end reaches tasks through.
//!
//! Modules: `schema` (versioned migrations), `connect` (URLs, passwords, TLS), `tasks` (the
//! lifecycle, one transaction each), `notes` (logs, discoveries, master plan, summary, doctor,
//! aggregate), `listen` (waking waiting workers and watchers), `transfer` (export to and import
//! from a `.coordination/` folder), `signals` (runs and named signals), `documents`
//! (orchestration's record), `reservations` (file reservations). Front ends reach it through `baton-api`'s `OpenProject`. Still
//! per machine on a database project: signals at a path the user names, agent definitions,
//! browsers.

mod connect;
mod documents;
mod error;
pub mod listen;
mod notes;
mod reservations;
pub mod schema;
mod signals;
pub mod tasks;
pub mod transfer;

pub use listen::PgListener;
pub use tasks::PgProject;
