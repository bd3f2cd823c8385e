//! The folder's transcripts for the change feed: each `transcripts/TASK/N.jsonl` read from
//! the length seen before, whole lines only (a batch is appended in one write; a line still
//! being written is read next time).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use baton_core::feed::{ChangeEvent, Dirty, group_transcript_events};
use baton_core::{AttemptEvent, Layout, TranscriptEvent};

/// Each transcript file's length read so far.
#[derive(Debug)]
pub(super) struct TranscriptFiles {
    lengths: BTreeMap<PathBuf, u64>,
}

impl TranscriptFiles {
    /// The baseline: every transcript as long as it is now.
    pub(super) fn read(layout: &Layout) -> TranscriptFiles {
        let lengths = transcript_files(&layout.transcripts_dir())
            .into_iter()
            .filter_map(|path| Some((path.clone(), fs::metadata(&path).ok()?.len())))
            .collect();
        TranscriptFiles { lengths }
    }

    /// The events appended to the transcripts in the `dirty` areas since the last look.
    pub(super) fn update(&mut self, layout: &Layout, dirty: &Dirty, events: &mut Vec<ChangeEvent>) {
        let files = if dirty.transcripts {
            transcript_files(&layout.transcripts_dir())
        } else {
            named_files(&dirty.transcript_paths)
        };
        for path in files {
            read_appended(layout, &path, &mut self.lengths, events);
        }
    }
}

/// The transcript files named by changed paths: a file itself, or every transcript in a
/// task's folder that appeared (its first lines may have been written before it was watched).
fn named_files(paths: &BTreeSet<PathBuf>) -> Vec<PathBuf> {
    let mut files = BTreeSet::new();
    for path in paths {
        if is_transcript(path) {
            files.insert(path.clone());
        } else if path.is_dir() {
            files.extend(transcripts_in(path));
        }
    }
    files.into_iter().collect()
}

fn is_transcript(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "jsonl")
}

/// Every transcript file of the project: `transcripts/TASK/N.jsonl`.
fn transcript_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .flat_map(|e| transcripts_in(&e.path()))
        .collect();
    files.sort();
    files
}

/// The transcripts in one task's folder (temp files of a write in progress left out).
fn transcripts_in(task_dir: &Path) -> Vec<PathBuf> {
    super::files_with_suffix(task_dir, ".jsonl")
        .into_iter()
        .map(|(_, path)| path)
        .collect()
}

/// The events appended to transcript `path` since it was last read. A line that is not an
/// event is passed over here; `team logs` reports it with its file and line.
fn read_appended(
    layout: &Layout,
    path: &Path,
    lengths: &mut BTreeMap<PathBuf, u64>,
    events: &mut Vec<ChangeEvent>,
) {
    let Some((task, attempt)) = identity(layout, path) else {
        return;
    };
    let length = lengths.entry(path.to_path_buf()).or_insert(0);
    let Some(text) = super::appended(path, length, true) else {
        return;
    };
    let appended = text
        .lines()
        .filter_map(|line| serde_json::from_str::<TranscriptEvent>(line).ok())
        .map(|event| AttemptEvent {
            task: task.clone(),
            attempt,
            event,
        })
        .collect();
    group_transcript_events(appended, events);
}

/// The task and attempt of `transcripts/TASK/N.jsonl`.
fn identity(layout: &Layout, path: &Path) -> Option<(String, u32)> {
    let relative = path.strip_prefix(layout.transcripts_dir()).ok()?;
    let mut parts = relative.components().map(|c| c.as_os_str().to_str());
    let task = parts.next()??.to_string();
    let attempt = parts.next()??.strip_suffix(".jsonl")?.parse().ok()?;
    parts.next().is_none().then_some((task, attempt))
}
