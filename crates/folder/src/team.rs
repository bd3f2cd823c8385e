//! The folder's team records ([`TeamStore`]): each attempt at a task as
//! `transcripts/TASK/N.json` (replaced atomically) beside its transcript `N.jsonl` (one event
//! per line, a batch appended in one write, so a reader never sees half a batch interleaved
//! with another), and each worker as `team/workers/NAME.json`.
//!
//! A transcript whose writer died mid-line ends in a partial line; readers skip it. Any other
//! line that is not an event is reported with its file and line, never silently dropped.

use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use baton_core::{Attempt, Result, StoreError, TeamStore, TranscriptEvent, WorkerRecord};
use baton_fs::{append_line, write_atomic};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::store::FolderStore;

impl FolderStore {
    fn transcript_file(&self, task: &str, attempt: u32) -> Result<PathBuf> {
        let dir = self.layout().task_transcripts_dir(task)?;
        self.layout().unlinked(dir.join(format!("{attempt}.jsonl")))
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
        let text = match fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(StoreError::io(&path, e)),
        };
        // Everything after the last newline is a line still being written (or whose writer
        // died): not an event yet.
        let complete = text.rfind('\n').map_or("", |end| &text[..end]);
        let mut events = Vec::new();
        for (index, line) in complete.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let event: TranscriptEvent =
                serde_json::from_str(line).map_err(|e| corrupt(&path, index + 1, &e))?;
            if event.seq > after {
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
        let dirs = match task {
            Some(task) => vec![self.layout().task_transcripts_dir(task)?],
            None => {
                let root = self.layout().transcripts_dir();
                let mut dirs = match fs::read_dir(&root) {
                    Ok(entries) => entries
                        .filter_map(|e| e.ok().map(|e| e.path()))
                        .filter(|p| p.is_dir())
                        .collect(),
                    Err(e) if e.kind() == ErrorKind::NotFound => Vec::new(),
                    Err(e) => return Err(StoreError::io(&root, e)),
                };
                dirs.sort();
                dirs
            }
        };
        let mut attempts = Vec::new();
        for dir in dirs {
            for file in json_files(&dir)? {
                attempts.extend(read_json::<Attempt>(&file)?);
            }
        }
        attempts.sort_by(|a, b| (&a.task, a.attempt).cmp(&(&b.task, b.attempt)));
        Ok(attempts)
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
    fn a_partial_last_line_is_not_read_and_a_corrupt_line_is_named() {
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

        fs::write(&path, "not json\n").unwrap();
        let err = store.events("task-1", 1, 0, 100).unwrap_err().to_string();
        assert!(err.contains("1.jsonl") && err.contains("line 1"), "{err}");
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
