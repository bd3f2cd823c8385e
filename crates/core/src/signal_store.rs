//! [`SignalStore`]: runs and the signals named in them, wherever a project keeps them: the
//! folder's `runs/` files (`baton-folder`) or a database (`baton-pg`), so a diagnostics
//! agent on one machine can wait for a signal a UI-test agent writes on another.
//!
//! A signal at a path the user named (`--path`, the source design's file convention) is a
//! file on this machine on every store: stores write, clear and read those through the same
//! file functions ([`crate::signals::write_signal_file`] and its neighbours).

use std::path::PathBuf;

use crate::error::Result;
use crate::signals::{ForeignFile, Run, Signal, SignalTarget};
use crate::store::Listener;

/// A project's runs and named signals. Each call is one atomic change or one consistent read;
/// a refusal changes nothing.
pub trait SignalStore: Send + Sync {
    /// Every run, oldest first.
    fn runs(&self) -> Result<Vec<Run>>;
    /// Starts the next run; returns it and the stale signals cleared from it.
    fn new_run(&self, note: Option<&str>) -> Result<(Run, Vec<String>)>;
    /// The run a signal command means: `run` if given (it must exist), otherwise the latest,
    /// starting run 1 when there is none yet.
    fn resolve_run(&self, run: Option<u32>) -> Result<u32>;
    /// Writes a signal (`writer` and `note` recorded with it when given).
    fn write_signal(
        &self,
        target: &SignalTarget,
        writer: Option<&str>,
        note: Option<&str>,
        foreign: ForeignFile,
    ) -> Result<Signal>;
    /// Removes a signal; `false` when it was not there.
    fn clear_signal(
        &self,
        target: &SignalTarget,
        by: Option<&str>,
        foreign: ForeignFile,
    ) -> Result<bool>;
    /// Removes every signal of `run`; their names.
    fn clear_signals(&self, run: u32) -> Result<Vec<String>>;
    /// The signals present in `run`, by name.
    fn list_signals(&self, run: u32) -> Result<Vec<Signal>>;
    /// The signal at `target`, if present.
    fn signal(&self, target: &SignalTarget) -> Result<Option<Signal>>;
    /// Every named signal present, in every run, by run and name.
    fn all_signals(&self) -> Result<Vec<Signal>> {
        let mut all = Vec::new();
        for run in self.runs()? {
            all.extend(self.list_signals(run.number)?);
        }
        Ok(all)
    }
    /// The file that holds `target` on this machine, which a waiter watches; `None` for a
    /// signal kept in a database (waited for through [`SignalStore::listen_for_signals`]).
    fn signal_file(&self, target: &SignalTarget) -> Option<PathBuf>;
    /// What wakes a waiter when a named signal is written or cleared, if the store notifies
    /// by itself; `None` when waiters watch the signal files.
    fn listen_for_signals(&self) -> Result<Option<Box<dyn Listener>>> {
        Ok(None)
    }
}
