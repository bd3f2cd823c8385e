//! The mount options of a sandbox's bubblewrap command line, in the order they cover each
//! other, each only for a path that exists; and where what they bind appears inside.

use std::path::{Path, PathBuf};

/// bubblewrap's mount options, each only for a path that exists (a mount needs its source),
/// in order: a later one covers an earlier one.
#[derive(Default)]
pub(crate) struct Mounts {
    pub(crate) args: Vec<String>,
    /// Where the folders and files bound in appear inside.
    shown: Vec<PathBuf>,
}

impl Mounts {
    pub(crate) fn read(&mut self, path: &Path) {
        if path.is_absolute() && path.exists() {
            self.add("--ro-bind", Some(path), path);
        }
    }

    pub(crate) fn write(&mut self, path: &Path) {
        if path.is_absolute() && path.exists() {
            self.add("--bind", Some(path), path);
        }
    }

    /// `path` shown, read-only, at `at`.
    pub(crate) fn read_at(&mut self, path: &Path, at: &Path) {
        if path.is_absolute() && path.exists() {
            self.add("--ro-bind", Some(path), at);
        }
    }

    /// Whether `path` lies in something bound in (so it is there inside).
    pub(crate) fn shows(&self, path: &Path) -> bool {
        self.shown.iter().any(|at| path.starts_with(at))
    }

    pub(crate) fn add(&mut self, option: &str, from: Option<&Path>, at: &Path) {
        if from.is_some() {
            self.shown.push(at.to_path_buf());
        }
        self.args.push(option.into());
        if let Some(from) = from {
            self.args.push(from.display().to_string());
        }
        self.args.push(at.display().to_string());
    }
}
