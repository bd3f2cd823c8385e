//! The change feed's view of the team: each worker's record as its supervisor saves it, and
//! every transcript's events as they are appended, so a lead (the desktop, `baton watch`, an
//! MCP client) follows what the agents do as they do it, on any machine.
//!
//! A store that numbers every append of the project (a database, [`TeamStore::events_since`])
//! is read from the last place seen, so nothing is missed however short an attempt is. The
//! folder's transcripts are files: each is read from the length seen before, whole lines only
//! (a batch is appended in one write; a line still being written is read next time).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use baton_core::{AttemptEvent, Layout, TeamStore, TranscriptEvent, WorkerRecord};

use super::{ChangeEvent, Dirty};

/// The most events one `TranscriptAppended` carries (a longer run is sent as several).
pub const MAX_EVENTS_PER_CHANGE: usize = 256;

/// What the feed last saw of the team.
pub(super) struct TeamState {
    store: Arc<dyn TeamStore>,
    workers: BTreeMap<String, WorkerRecord>,
    transcripts: Transcripts,
}

/// How far each transcript was read.
enum Transcripts {
    /// The store's place of the last event read.
    Place(u64),
    /// Each transcript file's length read so far.
    Files(BTreeMap<PathBuf, u64>),
}

impl TeamState {
    /// The first look, which sets the baseline silently.
    pub(super) fn read(
        store: Arc<dyn TeamStore>,
        layout: &Layout,
    ) -> baton_core::Result<TeamState> {
        let workers = by_name(store.workers()?);
        let transcripts = match store.events_since(u64::MAX, 0)? {
            Some((_, place)) => Transcripts::Place(place),
            None => Transcripts::Files(
                transcript_files(&layout.transcripts_dir())
                    .into_iter()
                    .filter_map(|path| Some((path.clone(), fs::metadata(&path).ok()?.len())))
                    .collect(),
            ),
        };
        Ok(TeamState {
            store,
            workers,
            transcripts,
        })
    }

    /// Adds the events for what changed in the `dirty` areas: workers whose record changed,
    /// then transcripts' new events in the order they were appended. A store that could not be
    /// read keeps its baseline and is compared again next time.
    pub(super) fn update(
        &mut self,
        layout: &Layout,
        dirty: &Dirty,
        events: &mut Vec<ChangeEvent>,
    ) -> baton_core::Result<()> {
        if dirty.team {
            let workers = by_name(self.store.workers()?);
            for (name, worker) in &workers {
                if self.workers.get(name) != Some(worker) {
                    events.push(ChangeEvent::WorkerChanged {
                        worker: worker.clone(),
                    });
                }
            }
            self.workers = workers;
        }
        match &mut self.transcripts {
            Transcripts::Place(place) if dirty.team || dirty.transcripts => loop {
                let Some((appended, last)) =
                    self.store.events_since(*place, MAX_EVENTS_PER_CHANGE)?
                else {
                    break;
                };
                let full = appended.len() == MAX_EVENTS_PER_CHANGE;
                *place = last;
                group(appended, events);
                if !full {
                    break;
                }
            },
            Transcripts::Place(_) => {}
            Transcripts::Files(lengths) => {
                let files = if dirty.transcripts {
                    transcript_files(&layout.transcripts_dir())
                } else {
                    named_files(&dirty.transcript_paths)
                };
                for path in files {
                    read_appended(layout, &path, lengths, events);
                }
            }
        }
        Ok(())
    }
}

fn by_name(workers: Vec<WorkerRecord>) -> BTreeMap<String, WorkerRecord> {
    workers.into_iter().map(|w| (w.name.clone(), w)).collect()
}

/// One `TranscriptAppended` per run of events of one attempt, at most
/// [`MAX_EVENTS_PER_CHANGE`] each.
fn group(appended: Vec<AttemptEvent>, events: &mut Vec<ChangeEvent>) {
    for AttemptEvent {
        task,
        attempt,
        event,
    } in appended
    {
        match events.last_mut() {
            Some(ChangeEvent::TranscriptAppended {
                task: t,
                attempt: a,
                events,
            }) if *t == task && *a == attempt && events.len() < MAX_EVENTS_PER_CHANGE => {
                events.push(event)
            }
            _ => events.push(ChangeEvent::TranscriptAppended {
                task,
                attempt,
                events: vec![event],
            }),
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
    super::folder::files_with_suffix(task_dir, ".jsonl")
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
    let Some(text) = super::folder::appended(path, length, true) else {
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
    group(appended, events);
}

/// The task and attempt of `transcripts/TASK/N.jsonl`.
fn identity(layout: &Layout, path: &Path) -> Option<(String, u32)> {
    let relative = path.strip_prefix(layout.transcripts_dir()).ok()?;
    let mut parts = relative.components().map(|c| c.as_os_str().to_str());
    let task = parts.next()??.to_string();
    let attempt = parts.next()??.strip_suffix(".jsonl")?.parse().ok()?;
    parts.next().is_none().then_some((task, attempt))
}
