//! Runs and the signals scoped to them: the source design's signal files (`.ui-test-done` in a
//! per-sprint folder, content `done`) made durable, named and inspectable.
//!
//! A run is a number in `runs/runs.json`; its signals are files in `runs/<n>/signals/`.
//! Starting a run clears whatever its folder held, so no stale signal from an aborted attempt
//! can end a new wait early. A signal can also live at any path the user names (`--path`), for
//! agents that already follow the source design's convention.
//!
//! Writing, clearing and listing live here; waiting for signals needs file-system events and
//! lives in `baton-live`.

use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::durable::{FileLock, write_atomic};
use crate::error::{Result, StoreError};
use crate::names::{validate_agent_id, validate_name};
use crate::project::Project;
use crate::time::Timestamp;

/// The longest note a signal can carry, in bytes.
pub const MAX_NOTE_BYTES: usize = 4096;
/// A file larger than this is never a signal.
const MAX_SIGNAL_BYTES: u64 = 64 * 1024;

/// What a signal write or clear does with a file at the signal's place that is not a signal
/// (anything but `done` or Baton's signal JSON): a path given by mistake, or on an agent's word,
/// must not cost the user a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ForeignFile {
    /// Refuse, and change nothing (the default everywhere).
    Keep,
    /// Overwrite or remove it anyway (`--force`, the user's word only).
    Replace,
}

/// One run, as `runs/runs.json` records it.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Run {
    pub number: u32,
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub started_at: Timestamp,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct RunsFile {
    #[serde(default)]
    runs: Vec<Run>,
}

/// Where a signal lives: by name in a run, or at a path the user named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SignalTarget {
    Named { run: u32, name: String },
    Path(PathBuf),
}

/// What a signal file says. Plain signals hold `done` as the source design wrote them; a signal
/// written with a writer or a note holds a small JSON object.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SignalRecord {
    /// `done`, or whatever text a foreign writer put in the file.
    pub signal: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writer: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(type = "string | null"))]
    pub written_at: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A signal that is present, as `signal list` and the change feed report it.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Signal {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run: Option<u32>,
    pub path: PathBuf,
    #[serde(flatten)]
    pub record: SignalRecord,
}

impl SignalTarget {
    /// A named signal in `run`, with the name validated.
    pub fn named(run: u32, name: &str) -> Result<SignalTarget> {
        validate_name("signal name", name)?;
        Ok(SignalTarget::Named {
            run,
            name: name.to_string(),
        })
    }

    pub fn path(&self, project: &Project) -> PathBuf {
        match self {
            SignalTarget::Named { run, name } => project.layout().signals_dir(*run).join(name),
            SignalTarget::Path(path) => path.clone(),
        }
    }

    /// How people see this signal: `NAME (run N)` or the path.
    pub fn label(&self) -> String {
        match self {
            SignalTarget::Named { run, name } => format!("{name} (run {run})"),
            SignalTarget::Path(path) => path.display().to_string(),
        }
    }

    /// A signal in Baton's own run folders (or rows), not at a path the user named.
    pub fn is_named(&self) -> bool {
        matches!(self, SignalTarget::Named { .. })
    }

    /// The signal this target holds, found at `path` (or, in a database, described by it).
    pub fn signal(&self, path: PathBuf, record: SignalRecord) -> Signal {
        let (name, run) = self.name_and_run();
        Signal {
            name,
            run,
            path,
            record,
        }
    }

    fn name_and_run(&self) -> (String, Option<u32>) {
        match self {
            SignalTarget::Named { run, name } => (name.clone(), Some(*run)),
            SignalTarget::Path(path) => (
                path.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| path.display().to_string()),
                None,
            ),
        }
    }
}

impl SignalRecord {
    /// Reads what a signal file holds: Baton's JSON, or any text (trimmed) as the source
    /// design's writers leave it.
    pub fn parse(bytes: &[u8]) -> SignalRecord {
        let text = String::from_utf8_lossy(bytes);
        let text = text.trim();
        if text.starts_with('{')
            && let Ok(record) = serde_json::from_str::<SignalRecord>(text)
        {
            return record;
        }
        SignalRecord {
            signal: text.chars().take(200).collect(),
            writer: None,
            pid: None,
            written_at: None,
            note: None,
        }
    }

    /// What a write leaves: `done` alone as the source design wrote it, or, with a writer or
    /// a note, who wrote it, from which process, when, and the note.
    pub fn written(writer: Option<&str>, note: Option<&str>, now: Timestamp) -> SignalRecord {
        if writer.is_none() && note.is_none() {
            return SignalRecord::parse(b"done");
        }
        SignalRecord {
            signal: "done".into(),
            writer: writer.map(str::to_string),
            pid: Some(std::process::id()),
            written_at: Some(now),
            note: note.map(str::to_string),
        }
    }

    fn encode(&self) -> Vec<u8> {
        if self.writer.is_none() && self.note.is_none() {
            return format!("{}\n", self.signal).into_bytes();
        }
        let mut bytes = serde_json::to_vec(self).expect("signal records serialise");
        bytes.push(b'\n');
        bytes
    }
}

/// Reads the signal at `path`; `None` when there is none.
pub fn read_signal(path: &Path) -> Result<Option<SignalRecord>> {
    match fs::read(path) {
        Ok(bytes) => Ok(Some(SignalRecord::parse(&bytes))),
        Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => Ok(None),
        Err(e) => Err(StoreError::io(path, e)),
    }
}

/// Checks what a signal write carries: the writer's name and the note.
pub fn check_write(writer: Option<&str>, note: Option<&str>) -> Result<()> {
    if let Some(writer) = writer {
        validate_agent_id(writer)?;
    }
    if let Some(note) = note {
        check_note(note)?;
    }
    Ok(())
}

/// Writes `record` to the signal file at `path` atomically, creating its folders. A file
/// there that is not a signal is refused unless `foreign` says replace it (`named`: the file
/// is in Baton's own run folders, where whatever a writer left is that signal).
pub fn write_signal_file(
    path: &Path,
    record: &SignalRecord,
    foreign: ForeignFile,
    named: bool,
) -> Result<()> {
    check_replaceable(named, path, "overwrite", foreign)?;
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent).map_err(|e| StoreError::io(parent, e))?;
    }
    write_atomic(path, &record.encode())
}

/// Removes the signal file at `path`; `false` when there was none. Refuses as
/// [`write_signal_file`] does.
pub fn remove_signal_file(path: &Path, foreign: ForeignFile, named: bool) -> Result<bool> {
    check_replaceable(named, path, "remove", foreign)?;
    match fs::remove_file(path) {
        Ok(()) => Ok(true),
        Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => Ok(false),
        Err(e) => Err(StoreError::io(path, e)),
    }
}

impl Project {
    /// Every run, oldest first.
    pub fn runs(&self) -> Result<Vec<Run>> {
        Ok(self.read_runs()?.runs)
    }

    /// Starts the next run and clears its signal folder. Returns the run and the signals that
    /// were cleared (left there by an earlier, aborted attempt or written ahead of time).
    pub fn new_run(&self, note: Option<&str>) -> Result<(Run, Vec<String>)> {
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
        let details = match cleared.len() {
            0 => format!("run {number}"),
            n => format!(
                "run {number}; cleared {n} stale signal(s): {}",
                cleared.join(", ")
            ),
        };
        self.log(crate::project::LEADER, "RUN_NEW", &details, run.started_at);
        Ok((run, cleared))
    }

    /// The run a signal command means: `run` if given (it must exist), otherwise the latest,
    /// starting run 1 when there is none yet so simple use needs no `run new`.
    pub fn resolve_run(&self, run: Option<u32>) -> Result<u32> {
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
    pub fn write_signal(
        &self,
        target: &SignalTarget,
        writer: Option<&str>,
        note: Option<&str>,
        foreign: ForeignFile,
    ) -> Result<Signal> {
        check_write(writer, note)?;
        let path = target.path(self);
        let record = SignalRecord::written(writer, note, Timestamp::now());
        write_signal_file(&path, &record, foreign, target.is_named())?;
        if let Some(writer) = writer {
            self.log(writer, "SIGNAL", &target.label(), Timestamp::now());
        }
        Ok(target.signal(path, record))
    }

    /// Removes a signal; `false` when it was not there.
    pub fn clear_signal(
        &self,
        target: &SignalTarget,
        by: Option<&str>,
        foreign: ForeignFile,
    ) -> Result<bool> {
        if let Some(by) = by {
            validate_agent_id(by)?;
        }
        let removed = remove_signal_file(&target.path(self), foreign, target.is_named())?;
        if let (true, Some(by)) = (removed, by) {
            self.log(by, "SIGNAL_CLEAR", &target.label(), Timestamp::now());
        }
        Ok(removed)
    }

    /// Removes every signal of `run`; returns their names.
    pub fn clear_signals(&self, run: u32) -> Result<Vec<String>> {
        let _lock = FileLock::exclusive(&self.layout().lock_file())?;
        self.clear_folder(run)
    }

    /// The signals present in `run`, by name.
    pub fn list_signals(&self, run: u32) -> Result<Vec<Signal>> {
        let dir = self.layout().signals_dir(run);
        let mut signals = Vec::new();
        for name in signal_names(&dir)? {
            let path = dir.join(&name);
            if let Some(record) = read_signal(&path)? {
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
    pub fn signal(&self, target: &SignalTarget) -> Result<Option<Signal>> {
        let path = target.path(self);
        Ok(read_signal(&path)?.map(|record| target.signal(path, record)))
    }

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
            &target.path(self),
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
        write_atomic(&self.layout().runs_file(), &bytes)
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
        if !name.ends_with(crate::durable::TEMP_SUFFIX) && entry.path().is_file() {
            names.push(name);
        }
    }
    names.sort();
    Ok(names)
}

/// Refuses to `action` the file at `path` (a signal at a named path) unless it is absent or a
/// signal, or `foreign` says replace it anyway. Named signals live in Baton's own run folders,
/// where whatever a writer left is that signal.
fn check_replaceable(
    named: bool,
    path: &Path,
    action: &'static str,
    foreign: ForeignFile,
) -> Result<()> {
    if foreign == ForeignFile::Replace || named {
        return Ok(());
    }
    let meta = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => {
            return Ok(());
        }
        Err(e) => return Err(StoreError::io(path, e)),
    };
    let refuse = || {
        Err(StoreError::NotASignal {
            path: path.to_path_buf(),
            action,
            hint: "; if it should go, the user can do it with `--force` on the command line",
        })
    };
    if !meta.is_file() || meta.len() > MAX_SIGNAL_BYTES {
        return refuse();
    }
    let bytes = fs::read(path).map_err(|e| StoreError::io(path, e))?;
    if is_signal_content(&bytes) {
        Ok(())
    } else {
        refuse()
    }
}

/// A signal file holds `done` (as the source design writes it) or Baton's signal JSON.
pub fn is_signal_content(bytes: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return false;
    };
    let text = text.trim();
    text == "done"
        || (text.starts_with('{')
            && serde_json::from_str::<serde_json::Value>(text).is_ok_and(|value| {
                value.get("signal").is_some_and(|s| s.is_string())
                    && serde_json::from_value::<SignalRecord>(value).is_ok()
            }))
}

fn check_note(note: &str) -> Result<()> {
    crate::text::check_text("note", note, MAX_NOTE_BYTES, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project() -> (tempfile::TempDir, Project) {
        let dir = tempfile::tempdir().unwrap();
        let project = Project::init(dir.path(), "signals", None).unwrap();
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
        let text = fs::read_to_string(target.path(&p)).unwrap();
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
            serde_json::from_slice(&fs::read(target.path(&p)).unwrap()).unwrap();
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
        let target = SignalTarget::Path(path.clone());
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
        let target = SignalTarget::Path(notes.clone());
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
        let folder = SignalTarget::Path(dir.path().join(".coordination"));
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
        let path = target.path(&p);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, "finished\n").unwrap();
        assert!(p.clear_signal(&target, None, ForeignFile::Keep).unwrap());
    }

    #[test]
    fn signal_content_is_done_or_baton_json() {
        assert!(is_signal_content(b"done"));
        assert!(is_signal_content(b"  done\n"));
        assert!(is_signal_content(br#"{"signal":"done","writer":"qa"}"#));
        assert!(!is_signal_content(b""));
        assert!(!is_signal_content(b"finished"));
        assert!(!is_signal_content(br#"{"name":"x"}"#));
        assert!(!is_signal_content(br#"{"signal":1}"#));
        assert!(!is_signal_content(b"\xff\xfe"));
    }

    #[test]
    fn foreign_content_is_read_as_text() {
        let record = SignalRecord::parse(b"  finished\n");
        assert_eq!(record.signal, "finished");
        assert_eq!(SignalRecord::parse(b"{not json").signal, "{not json");
    }
}
