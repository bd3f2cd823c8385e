//! The folder store reading its own files for the change feed (`baton_core::feed::FileFeed`):
//! each area of `.coordination/` read from its files and compared with what was seen before
//! (`tasks.json` task by task, logs and discoveries by what was appended, results by their
//! file's time and size, signals by content, transcripts by what was appended to each). A
//! database store is compared through its rows instead; this is the folder's counterpart of
//! `baton-pg` listening to PostgreSQL's notifications.

mod seen_tasks;
mod transcripts;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use baton_core::feed::{ChangeEvent, Dirty, FileFeed};
use baton_core::signals::read_signal;
use baton_core::{Layout, SignalRecord};
use baton_fs::FileVersion;
use serde_json::Value;

use seen_tasks::SeenTasks;
use transcripts::TranscriptFiles;

/// What the feed last saw of the folder's files, to compare against.
#[derive(Debug)]
pub(crate) struct FolderFeed {
    layout: Layout,
    tasks: Option<SeenTasks>,
    /// The last read of `tasks.json`: the next is read into the same memory.
    tasks_bytes: Vec<u8>,
    tasks_unreadable: bool,
    plan: Option<FileVersion>,
    summary: Option<FileVersion>,
    discoveries_len: u64,
    log_lens: BTreeMap<String, u64>,
    results: BTreeMap<String, (SystemTime, u64)>,
    runs: BTreeSet<u32>,
    signals: BTreeMap<PathBuf, SignalRecord>,
    transcripts: TranscriptFiles,
}

impl FolderFeed {
    /// The first look, which sets the baseline silently.
    pub(crate) fn read(layout: &Layout) -> FolderFeed {
        let mut feed = FolderFeed {
            layout: layout.clone(),
            tasks: None,
            tasks_bytes: Vec::new(),
            tasks_unreadable: false,
            plan: None,
            summary: None,
            discoveries_len: 0,
            log_lens: BTreeMap::new(),
            results: BTreeMap::new(),
            runs: BTreeSet::new(),
            signals: BTreeMap::new(),
            transcripts: TranscriptFiles::read(layout),
        };
        feed.project(&Dirty::all(), &mut Vec::new());
        feed
    }

    fn update_tasks(&mut self, layout: &Layout, events: &mut Vec<ChangeEvent>) {
        let bytes = &mut self.tasks_bytes;
        let read = crate::store::read_into(&layout.tasks_file(), bytes)
            .map_err(|e| e.to_string())
            .and_then(|()| SeenTasks::read(bytes, self.tasks.as_mut()));
        let (tasks, changes) = match read {
            Ok(read) => read,
            Err(message) => {
                if !self.tasks_unreadable {
                    self.tasks_unreadable = true;
                    events.push(ChangeEvent::TasksUnreadable { message });
                }
                return;
            }
        };
        self.tasks_unreadable = false;
        if !changes.is_empty() {
            events.push(ChangeEvent::TasksChanged { changes });
        }
        self.tasks = Some(tasks);
    }

    fn update_logs(&mut self, layout: &Layout, events: &mut Vec<ChangeEvent>) {
        for (agent, path) in files_with_suffix(&layout.logs_dir(), ".log") {
            let len = self.log_lens.entry(agent.clone()).or_insert(0);
            if let Some(text) = appended(&path, len, true) {
                let lines: Vec<String> = text.lines().map(str::to_string).collect();
                if !lines.is_empty() {
                    events.push(ChangeEvent::LogAppended { agent, lines });
                }
            }
        }
    }

    fn update_results(&mut self, layout: &Layout, events: &mut Vec<ChangeEvent>) {
        let mut seen = BTreeMap::new();
        for (task, path) in files_with_suffix(&layout.results_dir(), ".md") {
            let Ok(meta) = fs::metadata(&path) else {
                continue;
            };
            let stamp = (
                meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
                meta.len(),
            );
            if self.results.get(&task) != Some(&stamp) {
                events.push(ChangeEvent::ResultWritten {
                    task: task.clone(),
                    path,
                });
            }
            seen.insert(task, stamp);
        }
        self.results = seen;
    }

    fn update_runs(&mut self, layout: &Layout, events: &mut Vec<ChangeEvent>) {
        let runs: BTreeSet<u32> = fs::read(layout.runs_file())
            .ok()
            .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok())
            .and_then(|v| {
                v["runs"].as_array().map(|runs| {
                    runs.iter()
                        .filter_map(|r| r["number"].as_u64())
                        .filter_map(|n| u32::try_from(n).ok())
                        .collect()
                })
            })
            .unwrap_or_default();
        for run in runs.difference(&self.runs) {
            events.push(ChangeEvent::RunStarted { run: *run });
        }
        let mut signals = BTreeMap::new();
        for run in run_folders(&layout.runs_dir()) {
            let dir = layout.signals_dir(run);
            for (name, path) in files_with_suffix(&dir, "") {
                let Ok(Some(record)) = read_signal(&baton_core::Placed::trusted(path.clone()))
                else {
                    continue;
                };
                if self.signals.get(&path) != Some(&record) {
                    events.push(ChangeEvent::SignalWritten {
                        name,
                        run,
                        path: path.clone(),
                        record: record.clone(),
                    });
                }
                signals.insert(path, record);
            }
        }
        for path in self.signals.keys().filter(|p| !signals.contains_key(*p)) {
            if let Some((run, name)) = signal_identity(layout, path) {
                events.push(ChangeEvent::SignalCleared {
                    name,
                    run,
                    path: path.clone(),
                });
            }
        }
        self.runs = runs;
        self.signals = signals;
    }
}

impl FileFeed for FolderFeed {
    fn project(&mut self, dirty: &Dirty, events: &mut Vec<ChangeEvent>) {
        let layout = self.layout.clone();
        if dirty.tasks {
            self.update_tasks(&layout, events);
        }
        if dirty.plan && baton_fs::rewritten(&layout.master_plan(), &mut self.plan) {
            events.push(ChangeEvent::MasterPlanChanged);
        }
        if dirty.summary && baton_fs::rewritten(&layout.summary(), &mut self.summary) {
            events.push(ChangeEvent::SummaryWritten);
        }
        if dirty.discoveries
            && let Some(text) = appended(&layout.discoveries(), &mut self.discoveries_len, false)
        {
            let text = text.trim().to_string();
            if !text.is_empty() {
                events.push(ChangeEvent::DiscoveryAdded { text });
            }
        }
        if dirty.logs {
            self.update_logs(&layout, events);
        }
        if dirty.results {
            self.update_results(&layout, events);
        }
        if dirty.runs {
            self.update_runs(&layout, events);
        }
    }

    fn transcripts(&mut self, dirty: &Dirty, events: &mut Vec<ChangeEvent>) {
        self.transcripts.update(&self.layout, dirty, events);
    }
}

/// Text appended to `path` since `len` bytes, moving `len` on. With `whole_lines`, a partial
/// last line is left for next time. A file that shrank is read from the start.
pub(crate) fn appended(path: &Path, len: &mut u64, whole_lines: bool) -> Option<String> {
    let mut file = fs::File::open(path).ok()?;
    let size = file.metadata().ok()?.len();
    if size < *len {
        *len = 0;
    }
    if size == *len {
        return None;
    }
    file.seek(SeekFrom::Start(*len)).ok()?;
    let mut bytes = Vec::with_capacity((size - *len) as usize);
    file.take(size - *len).read_to_end(&mut bytes).ok()?;
    if whole_lines {
        let end = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        bytes.truncate(end);
    }
    *len += bytes.len() as u64;
    (!bytes.is_empty()).then(|| String::from_utf8_lossy(&bytes).into_owned())
}

/// `(stem, path)` of the files in `dir` whose names end with `suffix`, skipping temp files.
pub(crate) fn files_with_suffix(dir: &Path, suffix: &str) -> Vec<(String, PathBuf)> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<(String, PathBuf)> = entries
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.ends_with(baton_fs::TEMP_SUFFIX) || name.starts_with('.') {
                return None;
            }
            let stem = name.strip_suffix(suffix)?.to_string();
            entry
                .file_type()
                .ok()?
                .is_file()
                .then(|| (stem, entry.path()))
        })
        .collect();
    files.sort();
    files
}

fn run_folders(runs_dir: &Path) -> Vec<u32> {
    let Ok(entries) = fs::read_dir(runs_dir) else {
        return Vec::new();
    };
    let mut runs: Vec<u32> = entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    runs.sort();
    runs
}

fn signal_identity(layout: &Layout, path: &Path) -> Option<(u32, String)> {
    let relative = path.strip_prefix(layout.runs_dir()).ok()?;
    let mut parts = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy());
    let run = parts.next()?.parse().ok()?;
    let _signals = parts.next()?;
    Some((run, parts.next()?.into_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FolderStore;
    use baton_core::feed::TaskChangeKind;
    use baton_core::{NewTask, TaskStore};

    fn tasks_only() -> Dirty {
        Dirty {
            tasks: true,
            ..Dirty::default()
        }
    }

    #[test]
    fn a_broken_tasks_file_is_reported_once_and_its_repair_compared_with_the_last_good_one() {
        let dir = tempfile::tempdir().unwrap();
        let store = FolderStore::init(dir.path(), "feed", None).unwrap();
        let mut feed = store.file_feed().expect("the folder reads its own files");
        let good = fs::read(store.layout().tasks_file()).unwrap();
        let mut events = Vec::new();
        feed.project(&Dirty::all(), &mut events);
        assert!(events.is_empty(), "the baseline is silent: {events:?}");

        fs::write(store.layout().tasks_file(), "{ not json").unwrap();
        feed.project(&tasks_only(), &mut events);
        feed.project(&tasks_only(), &mut events);
        assert!(
            matches!(events.as_slice(), [ChangeEvent::TasksUnreadable { .. }]),
            "{events:?}"
        );

        fs::write(store.layout().tasks_file(), good).unwrap();
        store
            .add_task(NewTask {
                description: "after the repair".into(),
                ..NewTask::default()
            })
            .unwrap();
        events.clear();
        feed.project(&tasks_only(), &mut events);
        let [ChangeEvent::TasksChanged { changes }] = events.as_slice() else {
            panic!("{events:?}");
        };
        assert_eq!(changes.len(), 1, "{changes:?}");
        assert!(matches!(changes[0].kind, TaskChangeKind::Added { .. }));
    }

    #[test]
    fn transcripts_are_read_once_each_from_where_they_were_left() {
        let dir = tempfile::tempdir().unwrap();
        let store = FolderStore::init(dir.path(), "feed", None).unwrap();
        let task_dir = store.layout().transcripts_dir().join("task-1");
        fs::create_dir_all(&task_dir).unwrap();
        let line = |seq: u64| {
            let event = baton_core::TranscriptEvent {
                seq,
                at: baton_core::time::Timestamp::now(),
                what: baton_core::Happened::Started {
                    command: "true".into(),
                    workdir: ".".into(),
                },
            };
            serde_json::to_string(&event).unwrap() + "\n"
        };
        fs::write(task_dir.join("1.jsonl"), line(1)).unwrap();
        let mut feed = store.file_feed().unwrap();
        let mut events = Vec::new();
        fs::write(task_dir.join("1.jsonl"), line(1) + &line(2) + "{\"partial").unwrap();
        let dirty = Dirty {
            transcripts: true,
            ..Dirty::default()
        };
        feed.transcripts(&dirty, &mut events);
        feed.transcripts(&dirty, &mut events);
        let [
            ChangeEvent::TranscriptAppended {
                task,
                attempt,
                events: appended,
            },
        ] = events.as_slice()
        else {
            panic!("{events:?}");
        };
        assert_eq!((task.as_str(), *attempt), ("task-1", 1));
        assert_eq!(
            appended.iter().map(|e| e.seq).collect::<Vec<_>>(),
            [2],
            "only what was appended since the baseline, a partial line left for later"
        );
    }

    #[test]
    fn appended_text_keeps_a_partial_line_for_later() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.log");
        fs::write(&path, "one\ntw").unwrap();
        let mut len = 0;
        assert_eq!(appended(&path, &mut len, true).as_deref(), Some("one\n"));
        fs::write(&path, "one\ntwo\n").unwrap();
        assert_eq!(appended(&path, &mut len, true).as_deref(), Some("two\n"));
        assert_eq!(appended(&path, &mut len, true), None);
        fs::write(&path, "x\n").unwrap();
        assert_eq!(
            appended(&path, &mut len, true).as_deref(),
            Some("x\n"),
            "a shrunk file is read again from the start"
        );
    }
}
