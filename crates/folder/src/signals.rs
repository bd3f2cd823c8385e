//! The folder's runs and named signals: `runs/runs.json` numbers the runs, and each named
//! signal is a file in `runs/<n>/signals/`, written atomically so a waiter never reads half of
//! one. Starting a run clears its folder. Signals at a path the user named are the core's
//! files, the same on every store.

use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use baton_core::names::validate_agent_id;
use baton_core::signals::{
    check_note, check_write, read_signal, remove_signal_file, write_signal_file,
};
use baton_core::{
    ForeignFile, LogEntry, Placed, Result, Run, Signal, SignalRecord, SignalStore, SignalTarget,
    StoreError, Timestamp,
};
use baton_fs::{FileLock, TEMP_SUFFIX, write_atomic};
use serde::{Deserialize, Serialize};

use crate::store::FolderStore;

#[derive(Debug, Default, Serialize, Deserialize)]
struct RunsFile {
    #[serde(default)]
    runs: Vec<Run>,
}

impl SignalStore for FolderStore {
    /// Every run, oldest first.
    fn runs(&self) -> Result<Vec<Run>> {
        Ok(self.read_runs()?.runs)
    }

    /// Starts the next run and clears its signal folder. Returns the run and the signals that
    /// were cleared (left there by an earlier, aborted attempt or written ahead of time).
    fn new_run(&self, note: Option<&str>) -> Result<(Run, Vec<String>)> {
        if let Some(note) = note {
            check_note(note)?;
        }
        let _lock = FileLock::exclusive(&self.layout().lock_file())?;
        let mut file = self.read_runs()?;
        let number = file.runs.iter().map(|r| r.number).max().unwrap_or(0) + 1;
        let run = Run {
            number,
            started_at: Timestamp::now(),
            note: note.map(str::to_string),
        };
        let cleared = self.clear_folder(number)?;
        file.runs.push(run.clone());
        self.write_runs(&file)?;
        self.log(&LogEntry::run_new(number, &cleared), run.started_at);
        Ok((run, cleared))
    }

    /// The run a signal command means: `run` if given (it must exist), otherwise the latest,
    /// starting run 1 when there is none yet so simple use needs no `run new`.
    fn resolve_run(&self, run: Option<u32>) -> Result<u32> {
        let runs = self.runs()?;
        let latest = runs.iter().map(|r| r.number).max();
        match (run, latest) {
            (Some(n), _) if runs.iter().any(|r| r.number == n) => Ok(n),
            (Some(n), latest) => Err(StoreError::UnknownRun { run: n, latest }),
            (None, Some(latest)) => Ok(latest),
            (None, None) => {
                let _lock = FileLock::exclusive(&self.layout().lock_file())?;
                let mut file = self.read_runs()?;
                if let Some(latest) = file.runs.iter().map(|r| r.number).max() {
                    return Ok(latest); // another process started one meanwhile
                }
                file.runs.push(Run {
                    number: 1,
                    started_at: Timestamp::now(),
                    note: None,
                });
                self.write_runs(&file)?;
                Ok(1)
            }
        }
    }

    /// Writes a signal atomically (a waiter never reads a half-written one). With neither
    /// `writer` nor `note` the file holds `done`, exactly as the source design wrote it.
    fn write_signal(
        &self,
        target: &SignalTarget,
        writer: Option<&str>,
        note: Option<&str>,
        foreign: ForeignFile,
    ) -> Result<Signal> {
        check_write(writer, note)?;
        let path = target.path(self.layout());
        let record = SignalRecord::written(writer, note, Timestamp::now());
        write_signal_file(
            &target.file(self.layout()),
            &record,
            foreign,
            target.is_named(),
        )?;
        if let Some(writer) = writer {
            self.log(&LogEntry::signal(writer, target), Timestamp::now());
        }
        Ok(target.signal(path, record))
    }

    /// Removes a signal; `false` when it was not there.
    fn clear_signal(
        &self,
        target: &SignalTarget,
        by: Option<&str>,
        foreign: ForeignFile,
    ) -> Result<bool> {
        if let Some(by) = by {
            validate_agent_id(by)?;
        }
        let removed = remove_signal_file(&target.file(self.layout()), foreign, target.is_named())?;
        if let (true, Some(by)) = (removed, by) {
            self.log(&LogEntry::signal_clear(by, target), Timestamp::now());
        }
        Ok(removed)
    }

    /// Removes every signal of `run`; returns their names.
    fn clear_signals(&self, run: u32) -> Result<Vec<String>> {
        let _lock = FileLock::exclusive(&self.layout().lock_file())?;
        self.clear_folder(run)
    }

    /// The signals present in `run`, by name.
    fn list_signals(&self, run: u32) -> Result<Vec<Signal>> {
        let dir = self.layout().signals_dir(run);
        let mut signals = Vec::new();
        for name in signal_names(&dir)? {
            let path = dir.join(&name);
            if let Some(record) = read_signal(&Placed::trusted(path.clone()))? {
                signals.push(Signal {
                    name,
                    run: Some(run),
                    path,
                    record,
                });
            }
        }
        Ok(signals)
    }

    /// The signal at `target`, if present.
    fn signal(&self, target: &SignalTarget) -> Result<Option<Signal>> {
        let path = target.path(self.layout());
        Ok(read_signal(&target.file(self.layout()))?.map(|record| target.signal(path, record)))
    }

    fn signal_file(&self, target: &SignalTarget) -> Option<PathBuf> {
        Some(target.path(self.layout()))
    }
}

impl FolderStore {
    /// Records `runs` as this folder's runs, as they are (a project moved here from another
    /// store).
    pub fn restore_runs(&self, runs: &[Run]) -> Result<()> {
        let _lock = FileLock::exclusive(&self.layout().lock_file())?;
        self.write_runs(&RunsFile {
            runs: runs.to_vec(),
        })
    }

    /// Writes `signal` into its run's folder with its record as it is (who wrote it, when).
    pub fn restore_signal(&self, signal: &Signal) -> Result<()> {
        let run = signal.run.ok_or_else(|| StoreError::InvalidInput {
            field: "signal",
            reason: format!("{} belongs to no run", signal.name),
        })?;
        let target = SignalTarget::named(run, &signal.name)?;
        write_signal_file(
            &target.file(self.layout()),
            &signal.record,
            ForeignFile::Replace,
            true,
        )
    }

    fn clear_folder(&self, run: u32) -> Result<Vec<String>> {
        let dir = self.layout().signals_dir(run);
        let names = signal_names(&dir)?;
        for name in &names {
            let path = dir.join(name);
            match fs::remove_file(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == ErrorKind::NotFound => {}
                Err(e) => return Err(StoreError::io(&path, e)),
            }
        }
        fs::create_dir_all(&dir).map_err(|e| StoreError::io(&dir, e))?;
        Ok(names)
    }

    fn read_runs(&self) -> Result<RunsFile> {
        let path = self.layout().runs_file();
        match fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| StoreError::Corrupt {
                line: e.line(),
                column: e.column(),
                message: e.to_string(),
                path,
            }),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(RunsFile::default()),
            Err(e) => Err(StoreError::io(path, e)),
        }
    }

    fn write_runs(&self, file: &RunsFile) -> Result<()> {
        let dir = self.layout().runs_dir();
        fs::create_dir_all(&dir).map_err(|e| StoreError::io(&dir, e))?;
        let mut bytes = serde_json::to_vec_pretty(file).expect("runs serialise");
        bytes.push(b'\n');
        Ok(write_atomic(&self.layout().runs_file(), &bytes)?)
    }
}

/// Names of the signal files in `dir`, sorted; Baton's temp files are skipped.
fn signal_names(dir: &Path) -> Result<Vec<String>> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(StoreError::io(dir, e)),
    };
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| StoreError::io(dir, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.ends_with(TEMP_SUFFIX) && entry.path().is_file() {
            names.push(name);
        }
    }
    names.sort();
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project() -> (tempfile::TempDir, FolderStore) {
        let dir = tempfile::tempdir().unwrap();
        let project = FolderStore::init(dir.path(), "signals", None).unwrap();
        (dir, project)
    }

    #[test]
    fn a_plain_signal_holds_done_like_the_source_design() {
        let (_dir, p) = project();
        let run = p.resolve_run(None).unwrap();
        assert_eq!(run, 1, "the first signal command starts run 1");
        let target = SignalTarget::named(run, "ui-test-done").unwrap();
        p.write_signal(&target, None, None, ForeignFile::Keep)
            .unwrap();
        let text = fs::read_to_string(target.path(p.layout())).unwrap();
        assert_eq!(text, "done\n");
        assert_eq!(p.signal(&target).unwrap().unwrap().record.signal, "done");
    }

    #[test]
    fn a_signal_with_writer_and_note_is_small_json() {
        let (_dir, p) = project();
        let target = SignalTarget::named(p.resolve_run(None).unwrap(), "ready").unwrap();
        p.write_signal(&target, Some("qa"), Some("all green"), ForeignFile::Keep)
            .unwrap();
        let value: serde_json::Value =
            serde_json::from_slice(&fs::read(target.path(p.layout())).unwrap()).unwrap();
        assert_eq!(value["signal"], "done");
        assert_eq!(value["writer"], "qa");
        assert_eq!(value["note"], "all green");
        assert!(value["written_at"].is_string());
        let log = fs::read_to_string(p.layout().log_file("qa").unwrap()).unwrap();
        assert!(log.contains("SIGNAL: ready (run 1)"), "{log}");
    }

    #[test]
    fn a_new_run_numbers_on_and_clears_stale_signals_in_its_folder() {
        let (_dir, p) = project();
        let (first, _) = p.new_run(Some("sprint 1")).unwrap();
        assert_eq!(first.number, 1);
        // A stale signal left in the next run's folder before the run was started.
        let stale = p.layout().signals_dir(2);
        fs::create_dir_all(&stale).unwrap();
        fs::write(stale.join("ui-test-done"), "done").unwrap();
        let (second, cleared) = p.new_run(None).unwrap();
        assert_eq!(second.number, 2);
        assert_eq!(cleared, vec!["ui-test-done".to_string()]);
        assert!(p.list_signals(2).unwrap().is_empty());
        assert_eq!(p.runs().unwrap().len(), 2);
        assert_eq!(p.resolve_run(None).unwrap(), 2);
    }

    #[test]
    fn unknown_runs_and_hostile_names_are_refused() {
        let (_dir, p) = project();
        let err = p.resolve_run(Some(7)).unwrap_err();
        assert!(err.to_string().contains("no run 7"), "{err}");
        for name in ["../escape", "a/b", ".hidden", "x\u{7}", &"n".repeat(65)] {
            assert!(SignalTarget::named(1, name).is_err(), "{name:?} accepted");
        }
        let target = SignalTarget::named(p.resolve_run(None).unwrap(), "x").unwrap();
        assert!(
            p.write_signal(&target, None, Some("bad\u{1b}[2J"), ForeignFile::Keep)
                .is_err()
        );
        assert!(
            p.write_signal(&target, Some("../w"), None, ForeignFile::Keep)
                .is_err()
        );
        assert!(
            p.signal(&target).unwrap().is_none(),
            "a refusal writes nothing"
        );
    }

    #[test]
    fn clear_and_list_report_what_is_there() {
        let (_dir, p) = project();
        let run = p.resolve_run(None).unwrap();
        for name in ["b", "a"] {
            p.write_signal(
                &SignalTarget::named(run, name).unwrap(),
                None,
                None,
                ForeignFile::Keep,
            )
            .unwrap();
        }
        let names: Vec<_> = p
            .list_signals(run)
            .unwrap()
            .into_iter()
            .map(|s| s.name)
            .collect();
        assert_eq!(names, ["a", "b"]);
        let a = SignalTarget::named(run, "a").unwrap();
        assert!(p.clear_signal(&a, None, ForeignFile::Keep).unwrap());
        assert!(!p.clear_signal(&a, None, ForeignFile::Keep).unwrap());
        assert_eq!(p.clear_signals(run).unwrap(), vec!["b".to_string()]);
    }

    #[test]
    fn a_signal_at_a_named_path_creates_its_folder() {
        let (dir, p) = project();
        let path = dir.path().join(".claude/sprint/3/.ui-test-done");
        let target = SignalTarget::Path(Placed::trusted(path.clone()));
        let signal = p
            .write_signal(&target, None, None, ForeignFile::Keep)
            .unwrap();
        assert_eq!(signal.name, ".ui-test-done");
        assert_eq!(fs::read_to_string(&path).unwrap(), "done\n");
    }

    #[test]
    fn a_file_that_is_not_a_signal_is_neither_overwritten_nor_removed_unless_forced() {
        let (dir, p) = project();
        let notes = dir.path().join("notes.txt");
        fs::write(&notes, "my notes\n").unwrap();
        let target = SignalTarget::Path(Placed::trusted(notes.clone()));
        let err = p
            .write_signal(&target, None, None, ForeignFile::Keep)
            .unwrap_err();
        assert_eq!(err.kind(), "not_a_signal");
        assert!(err.to_string().contains("--force"), "{err}");
        let err = p
            .clear_signal(&target, None, ForeignFile::Keep)
            .unwrap_err();
        assert_eq!(err.kind(), "not_a_signal");
        assert_eq!(fs::read_to_string(&notes).unwrap(), "my notes\n");
        // A folder is not a signal either.
        let folder = SignalTarget::Path(Placed::trusted(dir.path().join(".coordination")));
        assert_eq!(
            p.clear_signal(&folder, None, ForeignFile::Keep)
                .unwrap_err()
                .kind(),
            "not_a_signal"
        );
        // Signals, plain or JSON, are replaced and removed as before.
        fs::write(&notes, "done").unwrap();
        p.write_signal(&target, Some("qa"), Some("ok"), ForeignFile::Keep)
            .unwrap();
        p.write_signal(&target, None, None, ForeignFile::Keep)
            .unwrap();
        assert!(p.clear_signal(&target, None, ForeignFile::Keep).unwrap());
        // The user's --force.
        fs::write(&notes, "my notes\n").unwrap();
        p.write_signal(&target, None, None, ForeignFile::Replace)
            .unwrap();
        fs::write(&notes, "my notes\n").unwrap();
        assert!(p.clear_signal(&target, None, ForeignFile::Replace).unwrap());
        assert!(!notes.exists());
    }

    #[test]
    fn a_named_signal_holding_a_foreign_writer_s_text_is_still_cleared() {
        let (_dir, p) = project();
        let target = SignalTarget::named(p.resolve_run(None).unwrap(), "ui-test-done").unwrap();
        let path = target.path(p.layout());
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, "finished\n").unwrap();
        assert!(p.clear_signal(&target, None, ForeignFile::Keep).unwrap());
    }
}
