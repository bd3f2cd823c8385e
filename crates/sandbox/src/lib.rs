//! # baton-sandbox
//!
//! The boundary a program runs in, and nothing else: bubblewrap's command line for it
//! ([`Boundary::wrap`], which says too what a reader should be shown of the wrapped command),
//! the first command inside ([`inside::run`], behind `baton __sandbox-start`: limits, bridges,
//! the syscall filter), its pids cgroup ([`pids_cgroup`]), and its network: an allow-list and
//! the HTTP proxy outside that lets only that through ([`net`]).
//!
//! It knows folders to show, hide or bind, the names of variables to pass, a network mode and
//! limits. It does not know agents, their CLIs, Baton's door or its store: the team says what
//! to show (an agent CLI's state, a door's folder, the binds git needs) in those terms. As
//! Codex keeps its `linux-sandbox` apart from its agents, so the sandbox can be read, tested
//! and reused (a project's check runs in it too) alone.

mod boundary;
mod hidden;
pub mod inside;
mod listening;
mod mounts;
pub mod net;
pub mod pids_cgroup;
mod seccomp;

pub use boundary::{
    BWRAP, Binds, Boundary, CgroupEntry, Command, NetworkAccess, Wrapped, check_available,
    user_home,
};
pub use listening::{Listening, socket_address};
