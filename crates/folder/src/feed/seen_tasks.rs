//! `tasks.json`'s tasks as the feed last saw them, compared task by task with the file now.
//! A change to one task of thousands is one task's text changed: reading the whole file into a
//! JSON tree, and comparing every task field by field, was the feed's cost of every change on a
//! large board. So each task's text is kept with its id, and only the tasks whose text is not
//! one kept are read and compared ([`diff_tasks`] on those alone says what it says of the
//! whole, since a task whose text did not change did not change). A file not in the layout the
//! folder writes (or with one id twice, or a task without an id) is read whole as before.

use std::collections::BTreeMap;

use baton_core::feed::{TaskChange, diff_tasks, tasks_by_id};
use serde_json::{Map, Value};

use crate::kept_texts::read_again;
use crate::rewrite::split_board;

type TaskObject = Map<String, Value>;

/// The tasks as last read.
#[derive(Debug, Default)]
pub(crate) struct SeenTasks {
    /// Each task by its id.
    by_id: BTreeMap<String, TaskObject>,
    /// Each task's text with its id, in the file's order; empty when the last read was whole.
    texts: Vec<(Box<str>, String)>,
}

impl SeenTasks {
    /// The tasks `bytes` hold, and what changed since `before` (nothing, when there is no
    /// `before`: the first read sets the baseline); the reason when the file does not parse.
    pub(crate) fn read(
        bytes: &[u8],
        before: Option<&mut SeenTasks>,
    ) -> Result<(SeenTasks, Vec<TaskChange>), String> {
        let mut empty = SeenTasks::default();
        let had_before = before.is_some();
        let before = before.unwrap_or(&mut empty);
        let (seen, changes) = match Self::by_text(bytes, before) {
            Some(read) => read,
            None => {
                let whole = serde_json::from_slice::<Value>(bytes).map_err(|e| e.to_string())?;
                let by_id = tasks_by_id(&whole);
                let changes = diff_tasks(&before.by_id, &by_id);
                let seen = SeenTasks {
                    by_id,
                    texts: Vec::new(),
                };
                (seen, changes)
            }
        };
        Ok((seen, if had_before { changes } else { Vec::new() }))
    }

    /// [`Self::read`] reading only the tasks whose text `before` does not hold; `None` if the
    /// file cannot be read so. What `before` kept of the texts is used up either way.
    fn by_text(bytes: &[u8], before: &mut SeenTasks) -> Option<(SeenTasks, Vec<TaskChange>)> {
        let (_, text, list) = split_board(bytes)?;
        let spans = list.tasks;
        // The tasks whose text is new: added or changed.
        let mut fresh: BTreeMap<String, TaskObject> = BTreeMap::new();
        let texts = read_again(std::mem::take(&mut before.texts), text, &spans, |task| {
            let object: TaskObject = serde_json::from_str(task).ok()?;
            let id = object.get("id")?.as_str()?.to_string();
            fresh.insert(id.clone(), object);
            Some(id)
        })?;
        // One id twice (or one text twice): whole, as the whole read takes the last of each.
        let ids: foldhash::HashSet<&String> = texts.iter().map(|(_, id)| id).collect();
        if ids.len() != spans.len() {
            return None;
        }
        let removed: Vec<String> = before
            .by_id
            .keys()
            .filter(|id| !ids.contains(id))
            .cloned()
            .collect();
        let was: BTreeMap<String, TaskObject> = fresh
            .keys()
            .chain(&removed)
            .filter_map(|id| Some((id.clone(), before.by_id.get(id)?.clone())))
            .collect();
        let changes = diff_tasks(&was, &fresh);
        let mut by_id = std::mem::take(&mut before.by_id);
        for id in &removed {
            by_id.remove(id);
        }
        by_id.extend(fresh);
        Some((SeenTasks { by_id, texts }, changes))
    }
}

#[cfg(test)]
mod tests;
