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
//! in its `.coordination/` folder, `baton-pg` in PostgreSQL, and one store suite
//! (`baton-store-suite`) runs the same scenarios on both. Front ends (`baton-api` and the shells over it) reach a project
//! through the traits and never ask which store is underneath.
//!
//! Its surface: the types and traits every part of Baton uses are at the crate's root (a
//! [`Task`], a [`TaskStore`], a [`LogEntry`], …); the public modules are the namespaces other
//! crates name as such (`names`, `review`, `inbox`, `feed`, `notes`, `transcript`, `time`,
//! `text`, …); the rest (the lifecycle, the rules, the board's decisions, the model's files)
//! is private, reached through those.
//!
//! "The source design", where the code names it, is the file-based task coordination design
//! Baton grew from (`.coordination/` with `tasks.json`, logs, results and signal files): its
//! file formats are kept so that its readers and agents keep working.

pub mod archive;
pub mod attempts;
mod choosing;
mod confine;
mod doctor;
pub mod documents;
mod error;
pub mod feed;
mod graph;
pub mod inbox;
mod inventory;
mod journal;
mod kind;
mod layout;
mod lifecycle;
mod listing;
mod model;
mod moves;
pub mod names;
pub mod network;
pub mod notes;
mod outlook;
pub mod plans;
pub mod policy;
mod protected;
mod requests;
pub mod reservations;
pub mod review;
mod rules;
mod shared_board;
mod shell;
mod signal_store;
pub mod signals;
mod status;
mod store;
mod summary;
pub mod team;
pub mod team_end;
mod team_store;
pub mod text;
pub mod time;
mod touched;
pub mod transcript;

#[cfg(test)]
mod testing;
mod unknown_fields;

pub use attempts::{Attempt, AttemptEnd, AttemptRole, Spend, Usage, WorkerRecord, WorkerState};
pub use confine::{Confinement, Placed};
pub use doctor::{DoctorReport, Finding, FindingKind, diagnose};
pub use documents::DocumentStore;
pub use error::{Result, StoreError};
pub use graph::{Doom, doomed_tasks};
pub use inventory::every_document;
pub use journal::{LEAD_LOG, LogEntry, LogLine, TaskAction};
pub use kind::ErrorKind;
pub use layout::Layout;
pub use listing::{Listing, Unreadable};
pub use model::{
    AgentRecord, BranchRecord, CommitRecord, DEFAULT_PRIORITY, Reservation, Task, TaskContext,
    TaskFile, TaskKind, TaskResult, TaskStatus, Tasks,
};
pub use moves::Move;
pub use names::LEAD;
pub use notes::Notes;
pub use outlook::Outlook;
pub use protected::ProtectedPaths;
pub use requests::{
    ClaimRequest, Claimed, Completion, DEFAULT_LEASE, Files, MAX_PLAN_TASKS, MAX_PRIORITY, NewTask,
    Reopen, TaskEdit,
};
pub use reservations::{Hold, NewReservation};
pub use rules::check_named_claim;
pub use shared_board::{HeldView, SharedBoard};
pub use signal_store::SignalStore;
pub use signals::{ForeignFile, Run, Signal, SignalRecord, SignalTarget};
pub use status::{StatusReport, TaskView, nothing_ready_reason, outcome};
pub use store::{Changes, Listener, TaskStore, release_stale_leases};
pub use summary::{Aggregate, render as render_summary};
pub use team_store::TeamStore;
pub use time::Timestamp;
pub use touched::TrackedList;
pub use transcript::{AttemptEvent, Happened, TranscriptEvent};
