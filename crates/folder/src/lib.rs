//! # baton-folder
//!
//! The embedded default store: a project kept in its `.coordination/` folder, no server,
//! human-readable and git-friendly. [`FolderStore`] implements the core's store traits
//! (`TaskStore`, `SignalStore`, `DocumentStore`, `TeamStore`) over files: `tasks.json` is the source of
//! truth, changed under an exclusive lock file by one atomic replacement per operation; logs,
//! notes, result reports, runs and signals are files around it.
//!
//! ```text
//! .coordination/
//!   master-plan.md          the goal and approach (leader init)
//!   tasks.json              source of truth for tasks
//!   .queue/                 claims waiting for the lock, answered together
//!   context/discoveries.md  findings shared between agents
//!   logs/<agent>.log        one journal per agent
//!   results/<task-id>.md    each finished task's report
//!   summary.md              written by leader aggregate
//!   runs/runs.json          numbered runs (baton run new)
//!   runs/<n>/signals/<name> signals of run n
//! ```
//!
//! What the rules are is `baton-core`'s; this crate only keeps them on disk. It is a peer of
//! `baton-pg`: front ends reach either through the traits, never this type by name, except to
//! create or open a folder project.

mod archive;
mod claim_board;
mod combine;
mod doctor;
mod documents;
mod feed;
mod ignored;
pub mod journal;
mod kept_texts;
mod lines;
pub mod notes;
mod reread;
mod rewrite;
mod signals;
mod store;
mod tasks;
mod team;
#[cfg(test)]
mod test_boards;

pub use ignored::ignore_own_files;
pub use rewrite::encode;
pub use store::FolderStore;
