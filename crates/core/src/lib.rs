//! # baton-core
//!
//! What a Baton project is, whatever keeps it: the task model (`tasks.json`'s schema), the
//! rules of one task's life (claims, leases, starts, completions, failures, resets), the
//! decisions made from the whole board (which task a claim takes, dependencies and cycles,
//! file reservations, the board's status, the doctor's findings, each agent's state), the
//! words of the agents' logs, the error kinds every part of Baton reports, and the traits
//! every store implements ([`TaskStore`], [`SignalStore`], [`DocumentStore`], [`TeamStore`]),
//! and the team's records (agents' transcripts, attempts, spend).
//!
//! It does no I/O of its own beyond two things every store shares: the project's local
//! folder ([`Layout`]: on either store browsers, agent definitions and signals at a path the
//! user named stay on this machine) and those path signals' files. The stores are peers
//! behind the traits, laid out as River lays out its drivers: `baton-folder` keeps a project
//! in its `.coordination/` folder, `baton-pg` in PostgreSQL, and one conformance suite runs
//! the same scenarios on both. Front ends (`baton-api` and the shells over it) reach a project
//! through the traits and never ask which store is underneath.
//!
//! "The source design", where the code names it, is the file-based task coordination design
//! Baton grew from (`.coordination/` with `tasks.json`, logs, results and signal files): its
//! file formats are kept so that its readers and agents keep working.

pub mod attempts;
pub mod confine;
pub mod doctor;
pub mod documents;
pub mod error;
pub mod feed;
pub mod graph;
pub mod inbox;
pub mod inventory;
pub mod journal;
pub mod kind;
pub mod layout;
pub mod lifecycle;
pub mod listing;
pub mod model;
pub mod moves;
pub mod names;
pub mod network;
pub mod notes;
pub mod outlook;
pub mod policy;
pub mod protected;
pub mod requests;
pub mod reservations;
pub mod review;
pub mod rules;
pub mod shell;
pub mod signal_store;
pub mod signals;
pub mod status;
pub mod store;
pub mod summary;
pub mod team;
pub mod team_store;
pub mod text;
pub mod time;
pub mod transcript;

#[cfg(test)]
mod testing;

pub use attempts::{Attempt, AttemptEnd, Spend, Usage, WorkerRecord, WorkerState};
pub use confine::{Confinement, Placed};
pub use doctor::{DoctorReport, Finding, FindingKind};
pub use documents::DocumentStore;
pub use error::{Result, StoreError};
pub use journal::{Entry, LogLine, TaskAction};
pub use kind::ErrorKind;
pub use layout::Layout;
pub use model::{BranchRecord, CommitRecord, Reservation, Task, TaskFile, TaskStatus};
pub use moves::Move;
pub use names::{LEAD, LEADER};
pub use notes::Notes;
pub use outlook::Outlook;
pub use requests::{
    ClaimRequest, Claimed, Completion, DEFAULT_LEASE, Files, NewTask, Reopen, TaskEdit,
};
pub use reservations::{Hold, NewReservation};
pub use signal_store::SignalStore;
pub use signals::{ForeignFile, Run, Signal, SignalRecord, SignalTarget};
pub use status::{StatusReport, TaskView};
pub use store::{Changes, Listener, TaskStore};
pub use summary::Aggregate;
pub use team_store::TeamStore;
pub use time::Timestamp;
pub use transcript::{AttemptEvent, Happened, TranscriptEvent};
