//! # baton-live
//!
//! Live coordination over `.coordination/`: knowing at once when something changed instead of
//! polling for it. It owns
//!
//! - [`watcher`]: file-system events with an automatic polling fallback, the one place that
//!   decides how Baton learns about changes;
//! - [`feed`]: the change feed, typed and debounced events for everything in the folder, which
//!   the desktop app, the MCP server and `baton watch` consume;
//! - [`wait`]: waiting for signals, tied to the writer's liveness so a crashed writer never
//!   leaves a reader waiting forever;
//! - [`claim_wait`]: claiming the next task as soon as one becomes ready;
//! - [`reconnect`]: riding out a store that went away, the same way for every waiter and
//!   worker;
//! - [`keepalive`]: an agent's leases renewed for as long as its process lives;
//! - [`transcript_wait`]: waking a reader that follows one task's transcript;
//!
//! It is synchronous (threads and channels, no async runtime), so async hosts run it on a
//! blocking thread. The state itself, and every write, belong to the stores (`baton-folder`, `baton-pg`); browsers, whose
//! registry the feed reads, belong to `baton-browser`.

pub mod claim_wait;
pub mod error;
pub mod feed;
mod fs_kind;
pub mod inbox_wait;
pub mod keepalive;
pub mod liveness;
pub mod reconnect;
pub mod transcript_wait;
pub mod wait;
pub mod watcher;

pub use error::{LiveError, Result};
pub use watcher::{Backend, WatchMode};
