//! # baton-fs
//!
//! The plumbing every part of Baton that keeps files on this machine shares, and nothing else:
//! crash-safe replacement of a file ([`write_atomic`]), advisory lock files ([`FileLock`]),
//! appends that never interleave ([`append_line`]), whether a process is still there
//! ([`pid_alive`]), whether a file was rewritten ([`rewritten`]), secrets from the system's random
//! source ([`random_hex`]), where a program is
//! ([`find_program`]), and a child in a process group of its own, stopped as a whole
//! ([`ProcessGroup`]) and killed by a [`warden`] when this process dies without stopping it. It knows nothing of tasks, stores or projects, so `baton-git` and
//! `baton-browser` can use it without depending on the task model, and the folder store
//! builds its transactions on it.
//!
//! Errors are [`FileError`]: the path and the operating system's error, which every caller
//! wraps into its own error type.

pub mod beneath;
pub mod durable;
pub mod group;
pub mod process;
pub mod program;
pub mod random;
pub mod untrusted;
pub mod version;
pub mod warden;

use std::path::PathBuf;

pub use durable::{
    FileLock, TEMP_SUFFIX, append_line, leftover_temp_files, sync_dir, write_atomic,
    write_atomic_parts, write_atomic_private,
};
pub use group::{ProcessGroup, command_in_own_group, command_in_own_group_ending_itself};
pub use process::{ProcStat, pid_alive, proc_stat};
pub use program::{find_program, is_executable};
pub use random::{random_bytes, random_hex};
pub use version::{FileVersion, rewritten};

/// A file operation failed: which path, and what the operating system said.
#[derive(Debug, thiserror::Error)]
#[error("{}: {source}", path.display())]
pub struct FileError {
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

impl FileError {
    /// Wraps an I/O error with the path it concerns.
    pub fn new(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        FileError {
            path: path.into(),
            source,
        }
    }
}

pub type Result<T, E = FileError> = std::result::Result<T, E>;
