use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::requests::DEFAULT_LEASE;
use crate::testing::random_board_after;

const LEASE: Duration = DEFAULT_LEASE;

/// A task's text, as the store would have written it.
fn text(task: &Task) -> String {
    serde_json::to_string(task).unwrap()
}

/// `file`'s tasks as a store that keeps what it read hands them out: a task whose text is one
/// of `kept` is that `Arc`.
fn shared(file: &TaskFile, kept: &HashMap<String, Arc<Task>>, now: Timestamp) -> SharedBoard {
    let tasks = file.tasks.iter().map(|task| match kept.get(&text(task)) {
        Some(kept) => kept.clone(),
        None => Arc::new(task.clone()),
    });
    SharedBoard {
        file: TaskFile {
            tasks: Default::default(),
            ..file.clone()
        },
        tasks: tasks.collect(),
        goal: Some("goal".into()),
        now,
    }
}

/// Every board of random histories (claims, completions, failures, resets, reservations, tasks
/// added with dependencies and files; held tasks whose leases run out), read in turn by a
/// reader that keeps its views, and each read again later: every view is the one a whole read
/// builds, the counts are its counts, and a view equal to the one held is that one.
#[test]
fn views_kept_between_reads_are_those_a_whole_read_builds() {
    let json = |views: Vec<&TaskView>| serde_json::to_value(views).unwrap();
    let (mut reused, mut built) = (0, 0);
    for seed in 1..=8 {
        let mut held: Vec<(Arc<Task>, Arc<TaskView>)> = Vec::new();
        for steps in 0..=60 {
            let (file, now) = random_board_after(seed * 104_729, steps);
            for at in [now, now.after(LEASE / 2), now.after(LEASE * 2)] {
                let kept: HashMap<String, Arc<Task>> = held
                    .iter()
                    .map(|(task, _)| (text(task), task.clone()))
                    .collect();
                let board = shared(&file, &kept, at);
                let held_view = |place: usize, id: &str| {
                    let (task, view) = match held.get(place) {
                        Some(entry) if entry.0.id == id => entry,
                        _ => held.iter().find(|(task, _)| task.id == id)?,
                    };
                    Some((Some(task), view))
                };
                let (views, report) = board.views(LEASE, held_view);
                let whole = StatusReport::build(file.clone(), Some("goal".into()), at, LEASE);
                let step = format!("seed {seed}, after {steps} steps, at {at}");
                assert_eq!(
                    json(views.iter().map(|v| &**v).collect()),
                    json(whole.tasks.iter().collect()),
                    "{step}"
                );
                assert_eq!(report.counts, whole.counts, "{step}");
                assert_eq!(
                    (report.total, report.ready, report.stale, &report.goal),
                    (whole.total, whole.ready, whole.stale, &whole.goal),
                    "{step}"
                );
                assert!(report.tasks.is_empty(), "{step}");
                for view in &views {
                    match held_view(0, &view.task.id) {
                        Some((_, was)) if **was == **view => {
                            assert!(Arc::ptr_eq(was, view), "{step}: {}", view.task.id);
                            reused += 1;
                        }
                        _ => built += 1,
                    }
                }
                held = board.tasks.into_iter().zip(views).collect();
            }
        }
    }
    // The histories change some tasks at every step and leave most alone.
    assert!(
        reused > built && built > 400,
        "{reused} kept, {built} built"
    );
}
