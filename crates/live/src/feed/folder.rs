//! The change feed's view of the folder: each area of `.coordination/` read from its files
//! and compared with what was seen before (tasks.json task by task, logs and discoveries by
//! what was appended, notes by their file's identity, signals by content).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use baton_core::Layout;
use baton_core::SignalRecord;
use baton_core::signals::read_signal;
use serde_json::{Map, Value};

use super::{ChangeEvent, Dirty, diff_tasks, tasks_by_id};

/// What the feed last saw, to compare against.
#[derive(Debug, Default)]
pub(super) struct FolderState {
    tasks: Option<BTreeMap<String, Map<String, Value>>>,
    tasks_unreadable: bool,
    plan: Option<Fingerprint>,
    summary: Option<Fingerprint>,
    discoveries_len: u64,
    log_lens: BTreeMap<String, u64>,
    results: BTreeMap<String, (SystemTime, u64)>,
    runs: BTreeSet<u32>,
    signals: BTreeMap<PathBuf, SignalRecord>,
    orchestration: BTreeMap<String, Option<Fingerprint>>,
    handoff: Option<Fingerprint>,
    /// Registered browsers by port: (owner, headless).
    browsers: BTreeMap<u16, (String, bool)>,
}

/// The files of `orchestration/` whose changes the feed reports.
const ORCHESTRATION_FILES: [&str; 3] = ["state.json", "workflows.json", "config.json"];

impl FolderState {
    pub(super) fn read(layout: &Layout) -> FolderState {
        let mut state = FolderState::default();
        let _ = state.update(layout, &Dirty::all()); // the first look sets the baseline, silently
        state
    }

    pub(super) fn update(&mut self, layout: &Layout, dirty: &Dirty) -> Vec<ChangeEvent> {
        let mut events = Vec::new();
        if dirty.tasks {
            self.update_tasks(layout, &mut events);
        }
        if dirty.plan && changed_mtime(&layout.master_plan(), &mut self.plan) {
            events.push(ChangeEvent::MasterPlanChanged);
        }
        if dirty.summary && changed_mtime(&layout.summary(), &mut self.summary) {
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
            self.update_logs(layout, &mut events);
        }
        if dirty.results {
            self.update_results(layout, &mut events);
        }
        if dirty.runs {
            self.update_runs(layout, &mut events);
        }
        if dirty.orchestration {
            for file in ORCHESTRATION_FILES {
                let seen = self.orchestration.entry(file.to_string()).or_default();
                let path = layout.root().join("orchestration").join(file);
                if changed_mtime(&path, seen) {
                    events.push(ChangeEvent::OrchestrationChanged {
                        file: file.to_string(),
                    });
                }
            }
        }
        if dirty.handoff && changed_mtime(&layout.root().join("HANDOFF.md"), &mut self.handoff) {
            events.push(ChangeEvent::HandoffWritten);
        }
        if dirty.browsers {
            self.update_browsers(layout, &mut events);
        }
        events
    }

    fn update_browsers(&mut self, layout: &Layout, events: &mut Vec<ChangeEvent>) {
        let Ok(records) = baton_browser::registry::records(layout) else {
            return; // an unreadable registry is reported by whoever lists it
        };
        let now: BTreeMap<u16, (String, bool)> = records
            .into_iter()
            .map(|r| (r.port, (r.owner, r.headless)))
            .collect();
        for port in self.browsers.keys().filter(|p| !now.contains_key(p)) {
            events.push(ChangeEvent::BrowserRemoved { port: *port });
        }
        for (port, (owner, headless)) in &now {
            if !self.browsers.contains_key(port) {
                events.push(ChangeEvent::BrowserAdded {
                    port: *port,
                    owner: owner.clone(),
                    headless: *headless,
                });
            }
        }
        self.browsers = now;
    }

    fn update_tasks(&mut self, layout: &Layout, events: &mut Vec<ChangeEvent>) {
        let read = fs::read(layout.tasks_file())
            .map_err(|e| e.to_string())
            .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).map_err(|e| e.to_string()));
        let tasks = match read {
            Ok(value) => tasks_by_id(&value),
            Err(message) => {
                if !self.tasks_unreadable {
                    self.tasks_unreadable = true;
                    events.push(ChangeEvent::TasksUnreadable { message });
                }
                return;
            }
        };
        self.tasks_unreadable = false;
        if let Some(before) = &self.tasks {
            let changes = diff_tasks(before, &tasks);
            if !changes.is_empty() {
                events.push(ChangeEvent::TasksChanged { changes });
            }
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
                let Ok(Some(record)) = read_signal(&path) else {
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

/// What identifies a version of a file: modification time, inode (an atomic replace makes a
/// new one, even within one tick of the coarse file-system clock) and size.
type Fingerprint = (SystemTime, u64, u64);

/// Whether `path` differs from the version `seen` (updating it); false once it is gone.
fn changed_mtime(path: &Path, seen: &mut Option<Fingerprint>) -> bool {
    use std::os::unix::fs::MetadataExt;
    let now = fs::metadata(path).ok().map(|m| {
        (
            m.modified().unwrap_or(SystemTime::UNIX_EPOCH),
            m.ino(),
            m.len(),
        )
    });
    let changed = now != *seen;
    *seen = now;
    changed && now.is_some()
}

/// Text appended to `path` since `len` bytes, moving `len` on. With `whole_lines`, a partial
/// last line is left for next time. A file that shrank is read from the start.
pub(super) fn appended(path: &Path, len: &mut u64, whole_lines: bool) -> Option<String> {
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
pub(super) fn files_with_suffix(dir: &Path, suffix: &str) -> Vec<(String, PathBuf)> {
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
    use baton_folder::FolderStore;
    use serde_json::json;

    #[test]
    fn browsers_entering_and_leaving_the_registry_are_reported_once() {
        let dir = tempfile::tempdir().unwrap();
        let project = FolderStore::init(dir.path(), "feed", None).unwrap();
        let layout = project.layout();
        let mut state = FolderState::read(layout);
        let dirty = Dirty {
            browsers: true,
            ..Dirty::default()
        };
        let registry = baton_browser::registry::registry_dir(layout);
        fs::create_dir_all(&registry).unwrap();
        let record = json!({"port": 9333, "pid": 1, "owner": "qa-agent", "headless": true,
            "started_at": "2026-11-22T10:00:00Z", "cdp_endpoint": "http://127.0.0.1:9333",
            "websocket_url": "ws://127.0.0.1:9333/devtools/browser/x"});
        fs::write(registry.join("9333.json"), record.to_string()).unwrap();
        fs::write(registry.join("broken.json"), "{").unwrap();
        assert_eq!(
            state.update(layout, &dirty),
            vec![ChangeEvent::BrowserAdded {
                port: 9333,
                owner: "qa-agent".into(),
                headless: true
            }]
        );
        assert!(state.update(layout, &dirty).is_empty(), "reported once");
        fs::remove_file(registry.join("9333.json")).unwrap();
        assert_eq!(
            state.update(layout, &dirty),
            vec![ChangeEvent::BrowserRemoved { port: 9333 }]
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
