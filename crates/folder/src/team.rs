//! The folder's team records ([`TeamStore`]): each attempt at a task as
//! `transcripts/TASK/N.json` (replaced atomically) beside its transcript `N.jsonl` (one event
//! per line, a batch appended in one write, so a reader never sees half a batch interleaved
//! with another), and each worker as `team/workers/NAME.json`.
//!
//! A transcript whose writer died mid-line ends in a partial line; readers skip it. Any other
//! line that is not an event is reported with its file and line in its place, never silently
//! dropped, and the rest of the transcript is read; a record that cannot be read is named by
//! a view ([`TeamStore::attempts_listed`], [`TeamStore::workers_listed`]) and the rest shown.

use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use baton_core::{
    Attempt, Happened, Result, StoreError, TeamStore, Timestamp, TranscriptEvent, WorkerRecord,
};
use baton_core::{Listing, Unreadable};
use baton_fs::{append_line, write_atomic};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::store::FolderStore;

impl FolderStore {
    fn transcript_file(&self, task: &str, attempt: u32) -> Result<PathBuf> {
        let dir = self.layout().task_transcripts_dir(task)?;
        self.layout().unlinked(dir.join(format!("{attempt}.jsonl")))
    }

    /// The attempt records of `task`, or of every task.
    fn attempt_files(&self, task: Option<&str>) -> Result<Vec<PathBuf>> {
        let dirs = match task {
            Some(task) => vec![self.layout().task_transcripts_dir(task)?],
            None => transcript_dirs(&self.layout().transcripts_dir())?,
        };
        let mut files = Vec::new();
        for dir in dirs {
            files.extend(json_files(&dir)?);
        }
        Ok(files)
    }

    fn attempt_file(&self, task: &str, attempt: u32) -> Result<PathBuf> {
        let dir = self.layout().task_transcripts_dir(task)?;
        self.layout().unlinked(dir.join(format!("{attempt}.json")))
    }
}

fn corrupt(path: &Path, line: usize, e: &serde_json::Error) -> StoreError {
    StoreError::Corrupt {
        path: path.to_path_buf(),
        line: if line > 0 { line } else { e.line() },
        column: e.column(),
        message: e.to_string(),
    }
}

fn read_json<T: DeserializeOwned>(path: &Path) -> Result<Option<T>> {
    match fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| corrupt(path, 0, &e)),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
        Err(e) => Err(StoreError::io(path, e)),
    }
}

fn write_json(path: &Path, value: &impl Serialize) -> Result<()> {
    let dir = path.parent().expect("a record is inside .coordination/");
    fs::create_dir_all(dir).map_err(|e| StoreError::io(dir, e))?;
    let mut bytes = serde_json::to_vec_pretty(value).expect("records serialise");
    bytes.push(b'\n');
    Ok(write_atomic(path, &bytes)?)
}

/// `files` read one by one: a record that cannot be read is named (from `.coordination/`'s
/// parent, `root`), not the end of the listing.
fn read_each<T: DeserializeOwned>(files: Vec<PathBuf>, root: &Path) -> Listing<T> {
    let mut listing = Listing::all(Vec::new());
    for file in files {
        match read_json::<T>(&file) {
            Ok(record) => listing.items.extend(record),
            Err(e) => listing.unreadable.push(Unreadable {
                document: file
                    .strip_prefix(root)
                    .unwrap_or(&file)
                    .display()
                    .to_string(),
                problem: e.to_string(),
            }),
        }
    }
    listing
}

/// Each task's folder of transcripts under `root`, sorted; none when it does not exist.
fn transcript_dirs(root: &Path) -> Result<Vec<PathBuf>> {
    let mut dirs: Vec<PathBuf> = match fs::read_dir(root) {
        Ok(entries) => entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_dir())
            .collect(),
        Err(e) if e.kind() == ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(StoreError::io(root, e)),
    };
    dirs.sort();
    Ok(dirs)
}

/// The `.json` files of `dir`, sorted by name; none when it does not exist.
fn json_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(StoreError::io(dir, e)),
    };
    let mut files = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| StoreError::io(dir, e))?.path();
        if path.extension().is_some_and(|e| e == "json") {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

impl TeamStore for FolderStore {
    fn append_events(&self, task: &str, attempt: u32, events: &[TranscriptEvent]) -> Result<()> {
        if events.is_empty() {
            return Ok(());
        }
        let path = self.transcript_file(task, attempt)?;
        let dir = path
            .parent()
            .expect("a transcript is inside .coordination/");
        fs::create_dir_all(dir).map_err(|e| StoreError::io(dir, e))?;
        let mut batch = String::new();
        for event in events {
            batch.push_str(&serde_json::to_string(event).expect("events serialise"));
            batch.push('\n');
        }
        Ok(append_line(&path, &batch)?)
    }

    fn events(
        &self,
        task: &str,
        attempt: u32,
        after: u64,
        limit: usize,
    ) -> Result<Vec<TranscriptEvent>> {
        let path = self.transcript_file(task, attempt)?;
        let bytes = match fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(StoreError::io(&path, e)),
        };
        // Everything after the last newline is a line still being written (or whose writer
        // died): not an event yet.
        let complete = bytes
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(&bytes[..0], |end| &bytes[..end]);
        let mut events = Vec::new();
        // The last event read: a bad line after it takes its number and time, and is shown to
        // a reader that has not read past it.
        let (mut before, mut before_at) = (0, None);
        for (index, line) in complete.split(|b| *b == b'\n').enumerate() {
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let (event, unread) = match serde_json::from_slice::<TranscriptEvent>(line) {
                Ok(event) => {
                    (before, before_at) = (event.seq, Some(event.at));
                    let unread = event.seq > after;
                    (event, unread)
                }
                Err(e) => {
                    let bad = TranscriptEvent {
                        seq: before,
                        at: before_at.unwrap_or_else(Timestamp::now),
                        what: Happened::Error {
                            message: format!(
                                "{}; the line is skipped",
                                corrupt(&path, index + 1, &e)
                            ),
                        },
                    };
                    (bad, before >= after)
                }
            };
            if unread {
                events.push(event);
                if events.len() >= limit {
                    break;
                }
            }
        }
        Ok(events)
    }

    fn save_attempt(&self, attempt: &Attempt) -> Result<()> {
        write_json(&self.attempt_file(&attempt.task, attempt.attempt)?, attempt)
    }

    fn attempts(&self, task: Option<&str>) -> Result<Vec<Attempt>> {
        let mut attempts = Vec::new();
        for file in self.attempt_files(task)? {
            attempts.extend(read_json::<Attempt>(&file)?);
        }
        attempts.sort_by(|a, b| (&a.task, a.attempt).cmp(&(&b.task, b.attempt)));
        Ok(attempts)
    }

    fn attempts_listed(&self, task: Option<&str>) -> Result<Listing<Attempt>> {
        let files = self.attempt_files(task)?;
        let mut listing = read_each::<Attempt>(files, self.layout().project_dir());
        listing
            .items
            .sort_by(|a, b| (&a.task, a.attempt).cmp(&(&b.task, b.attempt)));
        Ok(listing)
    }

    fn save_worker(&self, worker: &WorkerRecord) -> Result<()> {
        let path = self
            .layout()
            .unlinked(self.layout().worker_file(&worker.name)?)?;
        write_json(&path, worker)
    }

    fn workers(&self) -> Result<Vec<WorkerRecord>> {
        let dir = self.layout().team_dir().join("workers");
        let mut workers = Vec::new();
        for file in json_files(&dir)? {
            workers.extend(read_json::<WorkerRecord>(&file)?);
        }
        Ok(workers)
    }

    fn workers_listed(&self) -> Result<Listing<WorkerRecord>> {
        let dir = self.layout().team_dir().join("workers");
        Ok(read_each(json_files(&dir)?, self.layout().project_dir()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use baton_core::{Happened, Timestamp};

    fn event(seq: u64, text: &str) -> TranscriptEvent {
        TranscriptEvent {
            seq,
            at: Timestamp::now(),
            what: Happened::Text { text: text.into() },
        }
    }

    #[test]
    fn a_partial_last_line_is_not_read_and_a_bad_line_is_named_in_its_place() {
        let dir = tempfile::tempdir().unwrap();
        let store = FolderStore::init(dir.path(), "team", None).unwrap();
        store
            .append_events("task-1", 1, &[event(1, "one"), event(2, "two")])
            .unwrap();
        let path = store.transcript_file("task-1", 1).unwrap();
        let mut text = fs::read_to_string(&path).unwrap();
        text.push_str("{\"seq\":3,\"at\":");
        fs::write(&path, &text).unwrap();
        let read = store.events("task-1", 1, 0, 100).unwrap();
        let seqs: Vec<u64> = read.iter().map(|e| e.seq).collect();
        assert_eq!(seqs, [1, 2]);
        assert_eq!(read[1].what, Happened::Text { text: "two".into() });
        assert_eq!(store.events("task-1", 1, 1, 100).unwrap().len(), 1);

        // A line that is not JSON, and one that is not UTF-8: each named with its line in its
        // place, and the events around them read.
        let one = serde_json::to_string(&event(1, "one")).unwrap();
        let three = serde_json::to_string(&event(3, "three")).unwrap();
        let mut bytes = format!("{one}\nnot json\n").into_bytes();
        bytes.extend_from_slice(b"\xff\xfe\n");
        bytes.extend_from_slice(format!("{three}\n").as_bytes());
        fs::write(&path, &bytes).unwrap();
        let read = store.events("task-1", 1, 0, 100).unwrap();
        let said: Vec<(u64, String)> = read
            .iter()
            .map(|e| match &e.what {
                Happened::Text { text } => (e.seq, text.clone()),
                Happened::Error { message } => (e.seq, message.clone()),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(said.len(), 4, "{said:?}");
        assert_eq!(said[0], (1, "one".to_string()));
        for (n, (seq, message)) in said[1..3].iter().enumerate() {
            assert_eq!(*seq, 1, "numbered as the event before it");
            assert!(
                message.contains("1.jsonl") && message.contains(&format!("line {}", n + 2)),
                "{message}"
            );
        }
        assert_eq!(said[3], (3, "three".to_string()));
        // A reader that has read event 1 still hears of the bad lines after it; one that has
        // read event 3 does not.
        assert_eq!(store.events("task-1", 1, 1, 100).unwrap().len(), 3);
        assert!(store.events("task-1", 1, 3, 100).unwrap().is_empty());
    }

    #[test]
    fn hostile_task_names_are_refused_before_any_path_is_built() {
        let dir = tempfile::tempdir().unwrap();
        let store = FolderStore::init(dir.path(), "team", None).unwrap();
        let err = store.append_events("../../etc", 1, &[event(1, "x")]);
        assert!(err.is_err());
        assert!(!dir.path().join("etc").exists());
    }
}
