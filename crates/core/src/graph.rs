//! The dependency graph between tasks: validation when tasks are added or edited, readiness,
//! and the analysis `leader doctor` uses to find work that can never finish.

use std::collections::{HashMap, HashSet};

use crate::error::{Result, StoreError};
use crate::model::{Task, TaskFile, TaskStatus};

/// Status of every task by id, built once per operation so lookups are O(1).
pub struct StatusIndex<'a> {
    /// Hashed with foldhash (seeded per process): a board's ids are hashed at every read of
    /// it, and SipHash was a tenth of a window's read of a board of thousands.
    by_id: foldhash::HashMap<&'a str, &'a Task>,
}

impl<'a> StatusIndex<'a> {
    pub fn new(file: &'a TaskFile) -> Self {
        Self::of(file.tasks.iter())
    }

    /// The index of a board's `tasks`.
    pub fn of(tasks: impl Iterator<Item = &'a Task>) -> Self {
        StatusIndex {
            by_id: tasks.map(|t| (t.id.as_str(), t)).collect(),
        }
    }

    pub fn get(&self, id: &str) -> Option<&'a Task> {
        self.by_id.get(id).copied()
    }

    pub fn contains(&self, id: &str) -> bool {
        self.by_id.contains_key(id)
    }

    /// The dependencies of `task` that are not done yet (unknown ids included).
    pub fn blockers(&self, task: &'a Task) -> Vec<&'a str> {
        task.dependencies
            .iter()
            .filter(|dep| self.get(dep).is_none_or(|d| d.status != TaskStatus::Done))
            .map(String::as_str)
            .collect()
    }

    /// All of `task`'s dependencies are done.
    pub fn dependencies_done(&self, task: &Task) -> bool {
        task.dependencies
            .iter()
            .all(|dep| self.get(dep).is_some_and(|d| d.status == TaskStatus::Done))
    }
}

/// Refuses `dependencies` for task `id` if one is unknown, repeats `id` itself, or closes a
/// cycle through the existing graph. `file` must not yet hold the new edges.
pub fn check_dependencies(file: &TaskFile, id: &str, dependencies: &[String]) -> Result<()> {
    let index = StatusIndex::new(file);
    for dep in dependencies {
        if dep == id {
            return Err(StoreError::DependencyCycle {
                cycle: vec![id.to_string(), id.to_string()],
            });
        }
        if !index.contains(dep) {
            return Err(StoreError::UnknownDependency {
                task: id.to_string(),
                dependency: dep.clone(),
            });
        }
    }
    // A cycle appears iff `id` is reachable from one of its new dependencies.
    for dep in dependencies {
        if let Some(mut path) = path_between(&index, dep, id) {
            path.insert(0, id.to_string());
            return Err(StoreError::DependencyCycle { cycle: path });
        }
    }
    Ok(())
}

/// A dependency path from `from` to `to` (both included), if there is one.
fn path_between(index: &StatusIndex<'_>, from: &str, to: &str) -> Option<Vec<String>> {
    let mut parent: HashMap<&str, &str> = HashMap::new();
    let mut seen: HashSet<&str> = HashSet::from([from]);
    let mut stack = vec![from];
    while let Some(node) = stack.pop() {
        if node == to {
            let mut path = vec![to.to_string()];
            let mut at = to;
            while let Some(&p) = parent.get(at) {
                path.push(p.to_string());
                at = p;
            }
            path.reverse();
            return Some(path);
        }
        let Some(task) = index.get(node) else {
            continue;
        };
        for dep in &task.dependencies {
            if seen.insert(dep.as_str()) {
                parent.insert(dep.as_str(), node);
                stack.push(dep.as_str());
            }
        }
    }
    None
}

/// Why a task can never become ready, as `leader doctor` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Doom {
    /// Depends on a task id that does not exist (hand-edited file).
    UnknownDependency(String),
    /// Depends, directly or through others, on a failed or cancelled task.
    FailedDependency { via: String, status: TaskStatus },
    /// Sits on a dependency cycle (hand-edited file).
    Cycle(Vec<String>),
}

/// Every unfinished task that can never become ready, with the first reason found.
pub fn doomed_tasks(file: &TaskFile) -> Vec<(String, Doom)> {
    let index = StatusIndex::new(file);
    let mut memo: HashMap<&str, Option<Doom>> = HashMap::new();
    let mut out = Vec::new();
    for task in &file.tasks {
        if task.status.is_final() {
            continue;
        }
        let mut visiting = Vec::new();
        if let Some(doom) = doom_of(&index, task, &mut memo, &mut visiting) {
            out.push((task.id.clone(), doom));
        }
    }
    out
}

fn doom_of<'a>(
    index: &StatusIndex<'a>,
    task: &'a Task,
    memo: &mut HashMap<&'a str, Option<Doom>>,
    visiting: &mut Vec<&'a str>,
) -> Option<Doom> {
    if let Some(known) = memo.get(task.id.as_str()) {
        return known.clone();
    }
    if let Some(pos) = visiting.iter().position(|v| *v == task.id) {
        let mut cycle: Vec<String> = visiting[pos..].iter().map(|s| s.to_string()).collect();
        cycle.push(task.id.clone());
        return Some(Doom::Cycle(cycle));
    }
    visiting.push(task.id.as_str());
    let mut verdict = None;
    for dep in &task.dependencies {
        let Some(dep_task) = index.get(dep) else {
            verdict = Some(Doom::UnknownDependency(dep.clone()));
            break;
        };
        match dep_task.status {
            TaskStatus::Done => continue,
            TaskStatus::Failed | TaskStatus::Cancelled => {
                verdict = Some(Doom::FailedDependency {
                    via: dep.clone(),
                    status: dep_task.status,
                });
                break;
            }
            _ => {}
        }
        if let Some(inner) = doom_of(index, dep_task, memo, visiting) {
            verdict = Some(match inner {
                Doom::FailedDependency { status, .. } => Doom::FailedDependency {
                    via: dep.clone(),
                    status,
                },
                other => other,
            });
            break;
        }
    }
    visiting.pop();
    // A cycle verdict depends on the path taken, so only memoise settled answers.
    if !matches!(verdict, Some(Doom::Cycle(_))) {
        memo.insert(task.id.as_str(), verdict.clone());
    }
    verdict
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{file_with, task};

    #[test]
    fn refuses_unknown_dependencies() {
        let file = file_with(vec![task("a", TaskStatus::Available, &[])]);
        let err = check_dependencies(&file, "b", &["zzz".into()]).unwrap_err();
        assert_eq!(err.to_string(), "task b depends on unknown task \"zzz\"");
    }

    #[test]
    fn refuses_self_dependency() {
        let file = file_with(vec![]);
        let err = check_dependencies(&file, "a", &["a".into()]).unwrap_err();
        assert!(matches!(err, StoreError::DependencyCycle { .. }));
    }

    #[test]
    fn refuses_a_cycle_through_existing_tasks_and_names_it() {
        // c -> b -> a already; making a depend on c closes a -> c -> b -> a.
        let file = file_with(vec![
            task("a", TaskStatus::Available, &[]),
            task("b", TaskStatus::Available, &["a"]),
            task("c", TaskStatus::Available, &["b"]),
        ]);
        let err = check_dependencies(&file, "a", &["c".into()]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "dependencies would form a cycle: a -> c -> b -> a"
        );
        check_dependencies(&file, "d", &["c".into(), "a".into()]).unwrap();
    }

    #[test]
    fn blockers_lists_unfinished_and_unknown_dependencies() {
        let file = file_with(vec![
            task("a", TaskStatus::Done, &[]),
            task("b", TaskStatus::InProgress, &[]),
            task("c", TaskStatus::Available, &["a", "b", "ghost"]),
        ]);
        let index = StatusIndex::new(&file);
        assert_eq!(index.blockers(&file.tasks[2]), ["b", "ghost"]);
        assert!(!index.dependencies_done(&file.tasks[2]));
        assert!(index.dependencies_done(&file.tasks[1]));
    }

    #[test]
    fn finds_tasks_doomed_by_failures_unknown_ids_and_cycles() {
        let file = file_with(vec![
            task("f", TaskStatus::Failed, &[]),
            task("x", TaskStatus::Available, &["f"]),
            task("y", TaskStatus::Available, &["x"]),
            task("u", TaskStatus::Available, &["nope"]),
            task("p", TaskStatus::Available, &["q"]),
            task("q", TaskStatus::Available, &["p"]),
            task("ok", TaskStatus::Available, &[]),
        ]);
        let doomed: HashMap<String, Doom> = doomed_tasks(&file).into_iter().collect();
        assert_eq!(
            doomed["x"],
            Doom::FailedDependency {
                via: "f".into(),
                status: TaskStatus::Failed
            }
        );
        assert_eq!(
            doomed["y"],
            Doom::FailedDependency {
                via: "x".into(),
                status: TaskStatus::Failed
            }
        );
        assert_eq!(doomed["u"], Doom::UnknownDependency("nope".into()));
        assert!(matches!(doomed["p"], Doom::Cycle(_)));
        assert!(matches!(doomed["q"], Doom::Cycle(_)));
        assert!(!doomed.contains_key("ok"));
        assert!(!doomed.contains_key("f"), "final tasks are not doomed");
    }
}
