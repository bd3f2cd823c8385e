//! The change feed: typed events for everything that changes in `.coordination/`, for the
//! desktop app, the MCP server's resource notifications and `baton watch`. Nothing else in
//! Baton watches the folder itself.
//!
//! Events are computed by comparing state, not by trusting raw file-system events: a wake-up
//! marks an area of the folder dirty (tasks, logs, signals, …), and after a short quiet period
//! each dirty area is re-read and compared with what was seen before. So a burst of writes
//! (a temp file, a rename, a log line) gives one event per logical change, missed or
//! reordered raw events cannot produce wrong ones, and polling works the same as events.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use baton_store::signals::read_signal;
use baton_store::{Layout, Project, SignalRecord, TaskStatus};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::error::Result;
use crate::watcher::{Backend, Wake, Watch, WatchMode};

/// How long the folder must be quiet before a burst of writes is turned into events.
pub const QUIET: Duration = Duration::from_millis(5);
/// The longest a burst is held back, however busy the folder is.
pub const MAX_DELAY: Duration = Duration::from_millis(30);

/// One logical change in `.coordination/`. The desktop's UI receives these as they are
/// (`ui/src/bindings/ChangeEvent.ts` is generated from this type).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum ChangeEvent {
    /// `tasks.json` changed; what changed, task by task.
    TasksChanged {
        changes: Vec<TaskChange>,
    },
    /// `tasks.json` cannot be read (hand-broken); reported once until it is repaired.
    TasksUnreadable {
        message: String,
    },
    SignalWritten {
        name: String,
        run: u32,
        path: PathBuf,
        #[serde(flatten)]
        record: SignalRecord,
    },
    SignalCleared {
        name: String,
        run: u32,
        path: PathBuf,
    },
    RunStarted {
        run: u32,
    },
    /// Text appended to `context/discoveries.md`.
    DiscoveryAdded {
        text: String,
    },
    ResultWritten {
        task: String,
        path: PathBuf,
    },
    /// Whole lines appended to an agent's log.
    LogAppended {
        agent: String,
        lines: Vec<String>,
    },
    MasterPlanChanged,
    SummaryWritten,
    /// A file of `orchestration/` changed: `state.json` (invocations, parallel runs,
    /// handoffs, conflicts), `workflows.json` or `config.json`.
    OrchestrationChanged {
        file: String,
    },
    /// `HANDOFF.md` was rewritten with the consolidated handoff context.
    HandoffWritten,
    /// A browser was recorded in `browsers/` (launched for a UI-test agent or a session).
    BrowserAdded {
        port: u16,
        owner: String,
        headless: bool,
    },
    /// A browser left the registry (stopped, or its window closed).
    BrowserRemoved {
        port: u16,
    },
}

/// What happened to one task.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskChange {
    pub id: String,
    #[serde(flatten)]
    pub kind: TaskChangeKind,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "change", rename_all = "snake_case")]
pub enum TaskChangeKind {
    Added {
        status: TaskStatus,
        description: String,
    },
    Removed,
    /// The status moved; `by` is the owner after the move (or before, when released).
    Status {
        from: TaskStatus,
        to: TaskStatus,
        by: Option<String>,
    },
    /// Other fields changed (a heartbeat shows as `lease_expires_at`).
    Edited {
        fields: Vec<String>,
    },
}

/// A running change feed. Dropping it stops the watching thread.
pub struct ChangeFeed {
    events: Receiver<ChangeEvent>,
    backend: Backend,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl ChangeFeed {
    /// Starts watching `project`'s folder. Events describe changes made after this returns.
    pub fn start(project: &Project, mode: WatchMode) -> Result<ChangeFeed> {
        let layout = project.layout().clone();
        let mut watch = Watch::new(mode, layout.root())?;
        let interval = match mode {
            WatchMode::Auto(i) | WatchMode::Poll(i) => i,
            WatchMode::Events => crate::watcher::DEFAULT_POLL_INTERVAL,
        };
        watch.add_or_poll(layout.root(), true, interval)?;
        let backend = watch.backend();
        let mut state = FolderState::read(&layout);
        let (tx, rx) = channel();
        let stop = Arc::new(AtomicBool::new(false));
        let thread_stop = stop.clone();
        let thread = std::thread::Builder::new()
            .name("baton-change-feed".into())
            .spawn(move || run(&layout, &watch, &mut state, &tx, &thread_stop))
            .map_err(|e| baton_store::StoreError::io("change feed thread", e))?;
        Ok(ChangeFeed {
            events: rx,
            backend,
            stop,
            thread: Some(thread),
        })
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// The next event, waiting as long as it takes; `None` if the feed stopped.
    pub fn recv(&self) -> Option<ChangeEvent> {
        self.events.recv().ok()
    }

    /// The next event, waiting at most `timeout`.
    pub fn recv_timeout(
        &self,
        timeout: Duration,
    ) -> std::result::Result<ChangeEvent, RecvTimeoutError> {
        self.events.recv_timeout(timeout)
    }
}

impl Drop for ChangeFeed {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// How often the feed thread checks whether its owner dropped it.
const STOP_CHECK: Duration = Duration::from_millis(200);

fn run(
    layout: &Layout,
    watch: &Watch,
    state: &mut FolderState,
    tx: &Sender<ChangeEvent>,
    stop: &AtomicBool,
) {
    while !stop.load(Ordering::Relaxed) {
        let mut dirty = Dirty::default();
        match watch.wait(Some(Instant::now() + STOP_CHECK)) {
            Ok(Wake::Deadline) => continue,
            Ok(Wake::Changed(paths)) => dirty.mark(layout, &paths),
            Err(_) => return,
        }
        // Debounce: gather the rest of the burst.
        let burst_end = Instant::now() + MAX_DELAY;
        loop {
            let quiet_end = (Instant::now() + QUIET).min(burst_end);
            match watch.wait(Some(quiet_end)) {
                Ok(Wake::Changed(paths)) if Instant::now() < burst_end => {
                    dirty.mark(layout, &paths)
                }
                Ok(Wake::Changed(paths)) => {
                    dirty.mark(layout, &paths);
                    break;
                }
                Ok(Wake::Deadline) => break,
                Err(_) => return,
            }
        }
        for event in state.update(layout, &dirty) {
            if tx.send(event).is_err() {
                return; // the feed was dropped
            }
        }
    }
}

/// Areas of the folder that may have changed.
#[derive(Debug, Default)]
struct Dirty {
    tasks: bool,
    plan: bool,
    summary: bool,
    discoveries: bool,
    logs: bool,
    results: bool,
    runs: bool,
    orchestration: bool,
    handoff: bool,
    browsers: bool,
}

impl Dirty {
    fn all() -> Dirty {
        Dirty {
            tasks: true,
            plan: true,
            summary: true,
            discoveries: true,
            logs: true,
            results: true,
            runs: true,
            orchestration: true,
            handoff: true,
            browsers: true,
        }
    }

    /// Marks the areas `paths` fall in; a path the backend did not name marks everything.
    fn mark(&mut self, layout: &Layout, paths: &[PathBuf]) {
        if paths.is_empty() {
            *self = Dirty::all();
            return;
        }
        let root = layout.root();
        for path in paths {
            let Ok(relative) = path.strip_prefix(root) else {
                continue;
            };
            let first = relative
                .components()
                .next()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .unwrap_or_default();
            match first.as_str() {
                // A rename of a temp file over tasks.json shows as either name.
                "tasks.json" => self.tasks = true,
                name if name.starts_with(".tasks.json.") => self.tasks = true,
                "master-plan.md" => self.plan = true,
                "summary.md" => self.summary = true,
                "context" => self.discoveries = true,
                "logs" => self.logs = true,
                "results" => self.results = true,
                "runs" => self.runs = true,
                "orchestration" => self.orchestration = true,
                "HANDOFF.md" => self.handoff = true,
                "browsers" => self.browsers = true,
                "" => self.mark(layout, &[]),
                _ => {}
            }
        }
    }
}

/// What the feed last saw, to compare against.
#[derive(Debug, Default)]
struct FolderState {
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
    fn read(layout: &Layout) -> FolderState {
        let mut state = FolderState::default();
        let _ = state.update(layout, &Dirty::all()); // the first look sets the baseline, silently
        state
    }

    fn update(&mut self, layout: &Layout, dirty: &Dirty) -> Vec<ChangeEvent> {
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

fn tasks_by_id(file: &Value) -> BTreeMap<String, Map<String, Value>> {
    file["tasks"]
        .as_array()
        .map(|tasks| {
            tasks
                .iter()
                .filter_map(|t| {
                    let object = t.as_object()?.clone();
                    Some((object.get("id")?.as_str()?.to_string(), object))
                })
                .collect()
        })
        .unwrap_or_default()
}

fn status_of(task: &Map<String, Value>) -> Option<TaskStatus> {
    task.get("status")
        .and_then(|s| serde_json::from_value(s.clone()).ok())
}

fn owner_of(task: &Map<String, Value>) -> Option<String> {
    task.get("claimed_by")
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// Task-by-task differences, in the order of the new file (removals last).
fn diff_tasks(
    before: &BTreeMap<String, Map<String, Value>>,
    after: &BTreeMap<String, Map<String, Value>>,
) -> Vec<TaskChange> {
    let mut changes = Vec::new();
    for (id, new) in after {
        let Some(old) = before.get(id) else {
            changes.push(TaskChange {
                id: id.clone(),
                kind: TaskChangeKind::Added {
                    status: status_of(new).unwrap_or(TaskStatus::Available),
                    description: new
                        .get("description")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                },
            });
            continue;
        };
        let (from, to) = (status_of(old), status_of(new));
        if from != to
            && let (Some(from), Some(to)) = (from, to)
        {
            changes.push(TaskChange {
                id: id.clone(),
                kind: TaskChangeKind::Status {
                    from,
                    to,
                    by: owner_of(new).or_else(|| owner_of(old)),
                },
            });
            continue;
        }
        let fields: Vec<String> = new
            .iter()
            .filter(|(key, value)| old.get(*key) != Some(value))
            .map(|(key, _)| key.clone())
            .chain(old.keys().filter(|k| !new.contains_key(*k)).cloned())
            .collect();
        if !fields.is_empty() {
            changes.push(TaskChange {
                id: id.clone(),
                kind: TaskChangeKind::Edited { fields },
            });
        }
    }
    for id in before.keys().filter(|id| !after.contains_key(*id)) {
        changes.push(TaskChange {
            id: id.clone(),
            kind: TaskChangeKind::Removed,
        });
    }
    changes
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
fn appended(path: &Path, len: &mut u64, whole_lines: bool) -> Option<String> {
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
fn files_with_suffix(dir: &Path, suffix: &str) -> Vec<(String, PathBuf)> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<(String, PathBuf)> = entries
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.ends_with(baton_store::durable::TEMP_SUFFIX) || name.starts_with('.') {
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
    use serde_json::json;

    fn tasks(list: Value) -> BTreeMap<String, Map<String, Value>> {
        tasks_by_id(&json!({ "tasks": list }))
    }

    #[test]
    fn diff_reports_additions_moves_edits_and_removals() {
        let before = tasks(json!([
            {"id": "a", "status": "available", "description": "A"},
            {"id": "b", "status": "claimed", "claimed_by": "w1", "lease_expires_at": "1"},
            {"id": "c", "status": "done"},
        ]));
        let after = tasks(json!([
            {"id": "a", "status": "claimed", "claimed_by": "w2", "description": "A"},
            {"id": "b", "status": "claimed", "claimed_by": "w1", "lease_expires_at": "2"},
            {"id": "d", "status": "available", "description": "D"},
        ]));
        let changes = diff_tasks(&before, &after);
        assert_eq!(
            changes,
            vec![
                TaskChange {
                    id: "a".into(),
                    kind: TaskChangeKind::Status {
                        from: TaskStatus::Available,
                        to: TaskStatus::Claimed,
                        by: Some("w2".into())
                    }
                },
                TaskChange {
                    id: "b".into(),
                    kind: TaskChangeKind::Edited {
                        fields: vec!["lease_expires_at".into()]
                    }
                },
                TaskChange {
                    id: "d".into(),
                    kind: TaskChangeKind::Added {
                        status: TaskStatus::Available,
                        description: "D".into()
                    }
                },
                TaskChange {
                    id: "c".into(),
                    kind: TaskChangeKind::Removed
                },
            ]
        );
    }

    #[test]
    fn browsers_entering_and_leaving_the_registry_are_reported_once() {
        let dir = tempfile::tempdir().unwrap();
        let project = Project::init(dir.path(), "feed", None).unwrap();
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

    #[test]
    fn events_serialise_with_a_tag() {
        let event = ChangeEvent::TasksChanged {
            changes: vec![TaskChange {
                id: "task-1".into(),
                kind: TaskChangeKind::Removed,
            }],
        };
        assert_eq!(
            serde_json::to_value(&event).unwrap(),
            json!({"event": "tasks_changed", "changes": [{"id": "task-1", "change": "removed"}]})
        );
    }
}
