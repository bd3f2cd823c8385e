//! # baton-store
//!
//! Baton's task store: the `.coordination/` folder that parallel coding agents share, with
//! `tasks.json` as its source of truth. It owns the schema, the task lifecycle (claims, leases,
//! dependencies), durable locked writes, and the notes around the tasks (master plan,
//! discoveries, logs, results, summary).
//!
//! It is synchronous and has no GUI or async-runtime dependency, so the `baton` CLI, the MCP
//! server and the desktop app can all call it directly. It writes, clears and lists
//! signals between agents, but does not watch files or wait: that is `baton-live`'s job.
//!
//! Entry point: [`Project`], an opened `.coordination/` folder.

pub mod confine;
pub mod doctor;
pub mod documents;
pub mod durable;
pub mod error;
pub mod graph;
pub mod journal;
pub mod kind;
pub mod layout;
pub mod lifecycle;
pub mod model;
pub mod moves;
pub mod names;
pub mod notes;
pub mod outlook;
pub mod process;
pub mod project;
pub mod reservations;
pub mod rules;
pub mod signal_store;
pub mod signals;
pub mod status;
pub mod store;
pub mod summary;
pub mod team;
pub mod text;
pub mod time;

#[cfg(test)]
mod testing;

pub use confine::Confinement;
pub use doctor::{DoctorReport, Finding, FindingKind};
pub use documents::DocumentStore;
pub use error::{Result, StoreError};
pub use journal::LogLine;
pub use kind::ErrorKind;
pub use layout::Layout;
pub use lifecycle::{Claim, Completion, DEFAULT_LEASE, Files, NewTask, TaskEdit};
pub use model::{BranchRecord, CommitRecord, Task, TaskFile, TaskStatus};
pub use moves::Move;
pub use outlook::Outlook;
pub use project::{Aggregate, Project};
pub use reservations::{Hold, NewReservation, Reservation};
pub use signal_store::SignalStore;
pub use signals::{ForeignFile, Run, Signal, SignalRecord, SignalTarget};
pub use status::{StatusReport, TaskView};
pub use store::{Listener, TaskStore};
pub use time::Timestamp;
