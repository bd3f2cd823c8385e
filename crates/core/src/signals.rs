//! Runs and the signals scoped to them: the source design's signal files (`.ui-test-done` in a
//! per-sprint folder, content `done`) made durable, named and inspectable.
//!
//! A run is a number; its signals have names. Starting a run clears whatever it held, so no
//! stale signal from an aborted attempt can end a new wait early. Each store keeps runs and
//! named signals its own way (the folder: `runs/runs.json` and `runs/<n>/signals/`). A signal
//! can also live at any path the user names (`--path`), for agents that already follow the
//! source design's convention: that is a file on this machine on every store, written, cleared
//! and read by the file functions here.
//!
//! Waiting for signals needs file-system events or notifications and lives in `baton-live`.

use std::io::ErrorKind;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::confine::Placed;

use crate::error::{Result, StoreError};
use crate::layout::Layout;
use crate::names::{validate_agent_id, validate_name};
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

/// Where a signal lives: by name in a run, or at a path the user named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SignalTarget {
    Named {
        run: u32,
        name: String,
    },
    /// A file a caller named: opened beneath the project when a tool call named it.
    Path(Placed),
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

    /// The file that holds this signal on this machine, for a project whose local folder is
    /// `layout` (a named signal's file is where the folder store keeps it).
    pub fn path(&self, layout: &Layout) -> PathBuf {
        match self {
            SignalTarget::Named { run, name } => layout.signals_dir(*run).join(name),
            SignalTarget::Path(path) => path.full().to_path_buf(),
        }
    }

    /// The file that holds this signal, as it is to be opened.
    pub fn file(&self, layout: &Layout) -> Placed {
        match self {
            SignalTarget::Named { .. } => Placed::trusted(self.path(layout)),
            SignalTarget::Path(path) => path.clone(),
        }
    }

    /// How people see this signal: `NAME (run N)` or the path.
    pub fn label(&self) -> String {
        match self {
            SignalTarget::Named { run, name } => format!("{name} (run {run})"),
            SignalTarget::Path(path) => path.full().display().to_string(),
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
                path.full()
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| path.full().display().to_string()),
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

/// The most of a file a signal read takes in: a signal is `done` or a small JSON object.
const MAX_READ_BYTES: u64 = 1024 * 1024;

/// Reads the signal at `file`; `None` when there is none.
pub fn read_signal(file: &Placed) -> Result<Option<SignalRecord>> {
    match file.read(MAX_READ_BYTES) {
        Ok(bytes) => Ok(Some(SignalRecord::parse(&bytes))),
        Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => Ok(None),
        Err(e) => Err(file_error(file, e)),
    }
}

/// An I/O error on `file`, a link in the way said as such.
fn file_error(file: &Placed, e: std::io::Error) -> StoreError {
    if baton_fs::beneath::is_link_refusal(&e) {
        return StoreError::io(
            file.full(),
            std::io::Error::new(
                e.kind(),
                "a symbolic link is in the way, and links are not followed for a path a tool \
                 call named",
            ),
        );
    }
    StoreError::io(file.full(), e)
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
    file: &Placed,
    record: &SignalRecord,
    foreign: ForeignFile,
    named: bool,
) -> Result<()> {
    check_replaceable(named, file, "overwrite", foreign)?;
    file.write_atomic(&record.encode())
        .map_err(|e| file_error(file, e))
}

/// Removes the signal file at `path`; `false` when there was none. Refuses as
/// [`write_signal_file`] does.
pub fn remove_signal_file(file: &Placed, foreign: ForeignFile, named: bool) -> Result<bool> {
    check_replaceable(named, file, "remove", foreign)?;
    match file.remove_file() {
        Ok(()) => Ok(true),
        Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => Ok(false),
        Err(e) => Err(file_error(file, e)),
    }
}

/// Refuses to `action` the file at `path` (a signal at a named path) unless it is absent or a
/// signal, or `foreign` says replace it anyway. Named signals live in Baton's own run folders,
/// where whatever a writer left is that signal.
fn check_replaceable(
    named: bool,
    file: &Placed,
    action: &'static str,
    foreign: ForeignFile,
) -> Result<()> {
    if foreign == ForeignFile::Replace || named {
        return Ok(());
    }
    let meta = match file.symlink_metadata() {
        Ok(meta) => meta,
        Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => {
            return Ok(());
        }
        Err(e) => return Err(file_error(file, e)),
    };
    let refuse = || {
        Err(StoreError::NotASignal {
            path: file.full().to_path_buf(),
            action,
            hint: "; if it should go, the user can do it with `--force` on the command line",
        })
    };
    if !meta.is_file() || meta.len() > MAX_SIGNAL_BYTES {
        return refuse();
    }
    let bytes = file
        .read(MAX_SIGNAL_BYTES)
        .map_err(|e| file_error(file, e))?;
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

/// Checks a note a run or a signal carries.
pub fn check_note(note: &str) -> Result<()> {
    crate::text::check_text("note", note, MAX_NOTE_BYTES, false)
}

#[cfg(test)]
mod tests {
    use super::*;

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
