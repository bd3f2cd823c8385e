//! A board's tasks compared task by task: what the feed reports when `tasks.json` (or a
//! database's rows, read into the same shape) changed.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::{TaskChange, TaskChangeKind};
use crate::model::TaskStatus;

pub fn tasks_by_id(file: &Value) -> BTreeMap<String, Map<String, Value>> {
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
pub fn diff_tasks(
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::feed::ChangeEvent;
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
