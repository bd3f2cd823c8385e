//! The change feed's view of a project kept in a store that notifies (a database): on each
//! notification the store's areas are read through the seams every front end uses
//! (`TaskStore`, `SignalStore`, `DocumentStore`) and compared with what was seen before, so the events are the
//! ones the folder's files would give for the same changes.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use baton_core::documents::ORCHESTRATION;
use baton_core::notes::Notes;
use baton_core::{SignalRecord, TaskStatus};
use serde_json::{Map, Value};

use super::{ChangeEvent, Dirty, Stores};
use crate::error::Result;
use baton_core::feed::{diff_tasks, tasks_by_id};

/// What the feed last saw in the store.
pub(super) struct StoreState {
    pub(super) stores: Stores,
    board: BTreeMap<String, Map<String, Value>>,
    notes: Notes,
    /// The number of the last log line seen.
    log_after: u64,
    runs: BTreeSet<u32>,
    signals: BTreeMap<(u32, String), (PathBuf, SignalRecord)>,
    /// The orchestration record (invocations, handoffs, parallel runs, conflicts).
    orchestration: Option<Value>,
}

impl StoreState {
    /// The first look, which sets the baseline.
    pub(super) fn read(stores: Stores) -> Result<StoreState> {
        let mut state = StoreState {
            board: board(&stores)?,
            notes: stores.tasks.notes()?,
            log_after: stores
                .tasks
                .log_since(u64::MAX)?
                .map_or(0, |(_, last)| last),
            runs: BTreeSet::new(),
            signals: BTreeMap::new(),
            orchestration: stores.documents.read_document(ORCHESTRATION)?,
            stores,
        };
        state.update_runs(&mut Vec::new())?;
        Ok(state)
    }

    /// Reads the `dirty` areas and adds the events for what changed, in the order the folder
    /// reports them (tasks, notes, logs, results, runs and signals). An area that could not
    /// be read keeps its baseline and is compared again next time.
    pub(super) fn update(&mut self, dirty: &Dirty, events: &mut Vec<ChangeEvent>) -> Result<()> {
        let mut results = Vec::new();
        if dirty.tasks || dirty.results {
            let after = board(&self.stores)?;
            let changes = diff_tasks(&self.board, &after);
            results = finished_results(&self.board, &after, &self.stores);
            if !changes.is_empty() {
                events.push(ChangeEvent::TasksChanged { changes });
            }
            self.board = after;
        }
        if dirty.plan || dirty.summary || dirty.discoveries {
            let notes = self.stores.tasks.notes()?;
            if notes.master_plan != self.notes.master_plan {
                events.push(ChangeEvent::MasterPlanChanged);
            }
            if notes.summary.is_some() && notes.summary != self.notes.summary {
                events.push(ChangeEvent::SummaryWritten);
            }
            let added = notes
                .discoveries
                .strip_prefix(self.notes.discoveries.as_str())
                .unwrap_or(&notes.discoveries)
                .trim();
            if !added.is_empty() {
                events.push(ChangeEvent::DiscoveryAdded {
                    text: added.to_string(),
                });
            }
            self.notes = notes;
        }
        if dirty.logs
            && let Some((lines, last)) = self.stores.tasks.log_since(self.log_after)?
        {
            self.log_after = last;
            // One event per run of lines by one agent, in the order they were written.
            for line in lines {
                match events.last_mut() {
                    Some(ChangeEvent::LogAppended { agent, lines }) if *agent == line.agent => {
                        lines.push(line.line)
                    }
                    _ => events.push(ChangeEvent::LogAppended {
                        agent: line.agent,
                        lines: vec![line.line],
                    }),
                }
            }
        }
        events.extend(results);
        if dirty.runs {
            self.update_runs(events)?;
        }
        if dirty.orchestration {
            let now = self.stores.documents.read_document(ORCHESTRATION)?;
            if now != self.orchestration {
                events.push(ChangeEvent::OrchestrationChanged {
                    file: "state.json".into(),
                });
            }
            self.orchestration = now;
        }
        Ok(())
    }

    fn update_runs(&mut self, events: &mut Vec<ChangeEvent>) -> Result<()> {
        let runs: BTreeSet<u32> = self
            .stores
            .signals
            .runs()?
            .into_iter()
            .map(|r| r.number)
            .collect();
        let signals: BTreeMap<(u32, String), (PathBuf, SignalRecord)> = self
            .stores
            .signals
            .all_signals()?
            .into_iter()
            .filter_map(|s| Some(((s.run?, s.name), (s.path, s.record))))
            .collect();
        for run in runs.difference(&self.runs) {
            events.push(ChangeEvent::RunStarted { run: *run });
        }
        for ((run, name), (path, record)) in &signals {
            if self.signals.get(&(*run, name.clone())).map(|(_, r)| r) != Some(record) {
                events.push(ChangeEvent::SignalWritten {
                    name: name.clone(),
                    run: *run,
                    path: path.clone(),
                    record: record.clone(),
                });
            }
        }
        for ((run, name), (path, _)) in &self.signals {
            if !signals.contains_key(&(*run, name.clone())) {
                events.push(ChangeEvent::SignalCleared {
                    name: name.clone(),
                    run: *run,
                    path: path.clone(),
                });
            }
        }
        self.runs = runs;
        self.signals = signals;
        Ok(())
    }
}

fn board(stores: &Stores) -> Result<BTreeMap<String, Map<String, Value>>> {
    let (file, _) = stores.tasks.snapshot()?;
    let value = serde_json::to_value(&file).expect("a task file serialises");
    Ok(tasks_by_id(&value))
}

/// A result report written: a task that finished (done, failed, cancelled) or whose finished
/// result changed, as the folder writes `results/TASK.md` then.
fn finished_results(
    before: &BTreeMap<String, Map<String, Value>>,
    after: &BTreeMap<String, Map<String, Value>>,
    stores: &Stores,
) -> Vec<ChangeEvent> {
    let finished = |task: &Map<String, Value>| {
        task.get("status")
            .and_then(|s| serde_json::from_value::<TaskStatus>(s.clone()).ok())
            .is_some_and(TaskStatus::is_final)
    };
    after
        .iter()
        .filter(|(_, task)| finished(task))
        .filter(|(id, task)| {
            before
                .get(*id)
                .is_none_or(|old| !finished(old) || old.get("result") != task.get("result"))
        })
        .map(|(id, _)| ChangeEvent::ResultWritten {
            task: id.clone(),
            path: PathBuf::from(format!("results/{id}.md of {}", stores.tasks.describe())),
        })
        .collect()
}
