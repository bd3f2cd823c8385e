use std::collections::HashMap;
use std::time::Duration;

use baton_core::{NewTask, StatusReport, Task, TaskFile, TaskView, Timestamp};
use baton_test_support::Dice;

use super::*;

const LEASE: Duration = Duration::from_secs(900);

/// One time for every board: a task's view is what its task is, not when it was read.
fn now() -> Timestamp {
    serde_json::from_str("\"2026-11-29T09:00:00Z\"").unwrap()
}

/// A board of tasks `ids`, in that order, each described as `described(id)`.
fn report(ids: &[String], described: impl Fn(&str) -> String) -> StatusReport {
    StatusReport::build(file(ids, described, |_| None), None, now(), LEASE)
}

/// The file of tasks `ids`, each described as `described(id)`, each waiting for
/// `dependency(id)` when it names one before it.
fn file(
    ids: &[String],
    described: impl Fn(&str) -> String,
    dependency: impl Fn(&str) -> Option<String>,
) -> TaskFile {
    let mut file = TaskFile::new(now());
    for id in ids {
        let dependencies = dependency(id)
            .filter(|dep| file.task(dep).is_some())
            .into_iter()
            .collect();
        let new = NewTask {
            id: Some(id.clone()),
            description: described(id),
            dependencies,
            ..Default::default()
        };
        file.add_task(new, now()).unwrap();
    }
    file
}

/// The board a window holding `held` has after `update`, as the UI works it out (`board.ts`'s
/// `withUpdate`).
fn apply(held: Option<&[TaskView]>, update: &BoardUpdate) -> Vec<TaskView> {
    let (Some(held), Some(_)) = (held, update.base) else {
        return update.report.tasks.clone();
    };
    let changed: HashMap<&str, &TaskView> = update
        .report
        .tasks
        .iter()
        .map(|view| (view.task.id.as_str(), view))
        .collect();
    let mut board: Vec<TaskView> = held
        .iter()
        .filter(|view| !update.removed.contains(&view.task.id))
        .map(|view| (*changed.get(view.task.id.as_str()).unwrap_or(&view)).clone())
        .collect();
    let known: Vec<String> = board.iter().map(|view| view.task.id.clone()).collect();
    board.extend(
        update
            .report
            .tasks
            .iter()
            .filter(|view| !known.contains(&view.task.id))
            .cloned(),
    );
    if let Some(order) = &update.order {
        let at: HashMap<&str, usize> = order
            .iter()
            .enumerate()
            .map(|(i, id)| (id.as_str(), i))
            .collect();
        board.sort_by_key(|view| at[view.task.id.as_str()]);
    }
    board
}

/// The board a window holding `held` works out from `update`, checked against `expected`
/// (the board read whole); `tally` counts the tasks it was sent, and those it holds.
fn worked_out(
    held: Option<&[TaskView]>,
    update: &BoardUpdate,
    expected: &[TaskView],
    tally: &mut (usize, usize),
) -> Vec<TaskView> {
    let json = |views: &[TaskView]| -> Vec<String> {
        let json = views
            .iter()
            .map(|view| serde_json::to_string(view).unwrap());
        json.collect()
    };
    let board = apply(held, update);
    assert_eq!(json(&board), json(expected));
    tally.0 += update.report.tasks.len();
    tally.1 += board.len();
    board
}

fn ids(views: &[TaskView]) -> Vec<&str> {
    views.iter().map(|view| view.task.id.as_str()).collect()
}

fn names(range: std::ops::RangeInclusive<usize>) -> Vec<String> {
    range.map(|i| format!("task-{i}")).collect()
}

#[test]
fn a_window_with_no_board_hears_it_whole_and_then_only_what_changed() {
    let updates = BoardUpdates::default();
    let plain = |id: &str| format!("Do {id}");
    let first = updates.update(report(&names(1..=50), plain), false, None);
    assert_eq!(first.base, None);
    assert_eq!(first.report.tasks.len(), 50);
    assert_eq!(first.report.total, 50);
    // One task's description changed: that task alone.
    let edited = |id: &str| match id {
        "task-7" => "Do task-7 differently".to_string(),
        _ => plain(id),
    };
    let second = updates.update(
        report(&names(1..=50), edited),
        false,
        Some(first.generation),
    );
    assert_eq!(second.base, Some(first.generation));
    assert_ne!(second.generation, first.generation);
    assert_eq!(ids(&second.report.tasks), ["task-7"]);
    assert_eq!(second.report.total, 50, "the counts are the whole board's");
    assert!(second.removed.is_empty() && second.order.is_none());
    // Nothing changed: the same generation, and nothing to send.
    let third = updates.update(
        report(&names(1..=50), edited),
        false,
        Some(second.generation),
    );
    assert_eq!(third.generation, second.generation);
    assert!(third.report.tasks.is_empty());
    // One added, one gone: the added one, and the gone one's id.
    let mut fewer = names(2..=51);
    fewer.retain(|id| id != "task-20");
    let fourth = updates.update(report(&fewer, edited), false, Some(third.generation));
    assert_eq!(ids(&fourth.report.tasks), ["task-51"]);
    assert_eq!(fourth.removed, ["task-1", "task-20"]);
    assert!(
        fourth.order.is_none(),
        "the order a window works out itself"
    );
    let held = apply(Some(&second.report.tasks), &first);
    let held = apply(Some(&held), &fourth);
    assert_eq!(
        ids(&held),
        fewer.iter().map(String::as_str).collect::<Vec<_>>()
    );
}

#[test]
fn a_window_whose_board_is_not_kept_or_of_the_other_kind_hears_it_whole() {
    let updates = BoardUpdates::default();
    let first = updates.update(report(&names(1..=3), |id| id.into()), false, None);
    // A generation never given (a served page's guess), and one long gone.
    let unknown = updates.update(report(&names(1..=3), |id| id.into()), false, Some(999));
    assert_eq!((unknown.base, unknown.report.tasks.len()), (None, 3));
    for i in 0..KEPT {
        updates.update(report(&names(1..=3), |id| format!("{id} {i}")), false, None);
    }
    let late = updates.update(
        report(&names(1..=3), |id| id.into()),
        false,
        Some(first.generation),
    );
    assert_eq!((late.base, late.report.tasks.len()), (None, 3));
    // Another project's board (another window's, or this one's before it opened another
    // project) is none of this project's.
    let other = BoardUpdates::default();
    let theirs = other.update(report(&names(1..=3), |id| id.into()), false, None);
    let mine = updates.update(report(&names(1..=3), |id| id.into()), false, None);
    let asked = updates.update(
        report(&names(1..=3), |id| id.into()),
        false,
        Some(theirs.generation),
    );
    assert_ne!(theirs.generation, mine.generation);
    assert_eq!((asked.base, asked.report.tasks.len()), (None, 3));
    // The board with the landed work is another board: asked for, it comes whole.
    let all = updates.update(
        report(&names(1..=4), |id| id.into()),
        true,
        Some(late.generation),
    );
    assert_eq!((all.base, all.report.tasks.len()), (None, 4));
}

/// A board changed at random, one step at a time: a task added (waiting for another), one
/// removed, two swapped, one done (or available again: what waits for it is blocked, or
/// ready, again), one described anew.
struct History {
    dice: Dice,
    board: Vec<String>,
    descriptions: HashMap<String, u32>,
    dependencies: HashMap<String, String>,
    done: Vec<String>,
    next: usize,
}

impl History {
    fn new(seed: u64) -> History {
        History {
            dice: Dice(seed),
            board: names(1..=30),
            descriptions: HashMap::new(),
            dependencies: HashMap::new(),
            done: Vec::new(),
            next: 31,
        }
    }

    /// The board after the next change.
    fn step(&mut self) -> TaskFile {
        let (dice, board) = (&mut self.dice, &mut self.board);
        match dice.roll(6) {
            0 => {
                let id = format!("task-{}", self.next);
                let dependency = board[dice.roll(board.len())].clone();
                self.dependencies.insert(id.clone(), dependency);
                board.insert(dice.roll(board.len() + 1), id);
                self.next += 1;
            }
            1 if board.len() > 1 => drop(board.remove(dice.roll(board.len()))),
            2 => {
                let (a, b) = (dice.roll(board.len()), dice.roll(board.len()));
                board.swap(a, b);
            }
            3 => {
                let id = board[dice.roll(board.len())].clone();
                match self.done.iter().position(|done| *done == id) {
                    Some(at) => drop(self.done.remove(at)),
                    None => self.done.push(id),
                }
            }
            _ => {
                let id = &board[dice.roll(board.len())];
                *self.descriptions.entry(id.clone()).or_default() += 1;
            }
        }
        let descriptions = &self.descriptions;
        let described = |id: &str| format!("{id} v{}", descriptions.get(id).unwrap_or(&0));
        let mut file = file(&self.board, described, |id| {
            self.dependencies.get(id).cloned()
        });
        for id in &self.done {
            if let Some(task) = file.task_mut(id) {
                task.status = baton_core::TaskStatus::Done;
            }
        }
        file
    }
}

#[test]
fn windows_holding_any_kept_board_work_out_the_board_exactly() {
    let mut history = History::new(0x9e37_79b9_7f4a_7c15);
    let updates = BoardUpdates::default();
    // Three windows, each reading after some changes and not others.
    let mut windows: Vec<Option<(u64, Vec<TaskView>)>> = vec![None, None, None];
    let mut tally = (0, 0);
    for _ in 0..300 {
        let now = StatusReport::build(history.step(), None, now(), LEASE);
        let expected = now.tasks.clone();
        let window = history.dice.roll(windows.len());
        let held = windows[window].take();
        let update = updates.update(now, false, held.as_ref().map(|(g, _)| *g));
        let views = held.as_ref().map(|(_, views)| views.as_slice());
        let board = worked_out(views, &update, &expected, &mut tally);
        windows[window] = Some((update.generation, board));
    }
    // Most of what the windows hold they were not sent again.
    let (sent, on_boards) = tally;
    assert!(sent * 2 < on_boards, "sent {sent} of {on_boards}");
}

/// A task's text, as a store would have written it.
fn text(task: &Task) -> String {
    serde_json::to_string(task).unwrap()
}

#[test]
fn windows_of_a_board_its_store_shares_work_out_the_board_exactly() {
    let mut history = History::new(0x2545_f491_4f6c_dd1d);
    let updates = BoardUpdates::default();
    // The store's tasks by their text, as it shares them.
    let mut shared: HashMap<String, Arc<Task>> = HashMap::new();
    let mut windows: Vec<Option<(u64, Vec<TaskView>)>> = vec![None, None, None];
    let mut tally = (0, 0);
    for _ in 0..300 {
        let file = history.step();
        let tasks: Vec<Arc<Task>> = file
            .tasks
            .iter()
            .map(|task| match shared.get(&text(task)) {
                Some(kept) => kept.clone(),
                None => Arc::new(task.clone()),
            })
            .collect();
        shared = tasks
            .iter()
            .map(|task| (text(task), task.clone()))
            .collect();
        let whole = StatusReport::build(file.clone(), None, now(), LEASE);
        let window = history.dice.roll(windows.len());
        let held = windows[window].take();
        let known = held.as_ref().map(|(generation, _)| *generation);
        // Now and then read whole, as a store that shares nothing reads it.
        let update = match history.dice.roll(5) {
            0 => updates.update(whole.clone(), false, known),
            _ => {
                let board = SharedBoard {
                    file: TaskFile {
                        tasks: Default::default(),
                        ..file
                    },
                    tasks,
                    goal: None,
                    now: now(),
                };
                updates.update_shared(board, LEASE, None, known)
            }
        };
        let counts = |report: &StatusReport| (report.total, report.ready, report.counts.clone());
        assert_eq!(counts(&update.report), counts(&whole));
        let views = held.as_ref().map(|(_, views)| views.as_slice());
        let board = worked_out(views, &update, &whole.tasks, &mut tally);
        windows[window] = Some((update.generation, board));
    }
    let (sent, on_boards) = tally;
    assert!(sent * 2 < on_boards, "sent {sent} of {on_boards}");
}

#[test]
fn two_ids_of_one_hash_are_told_apart() {
    let views: Vec<Arc<TaskView>> = report(&names(1..=3), |id| id.to_string())
        .tasks
        .into_iter()
        .map(Arc::new)
        .collect();
    let board = Board {
        generation: 1,
        all: false,
        views,
        made_of: Vec::new(),
        places: OnceLock::new(),
    };
    // As if task-3's id hashed as task-1's: its place is found along the board.
    let collided = [(id_hash("task-1"), 0), (id_hash("task-3"), 0)]
        .into_iter()
        .collect();
    board.places.set(collided).unwrap();
    assert_eq!(board.place("task-3", usize::MAX), Some(2));
    assert_eq!(board.place("task-1", usize::MAX), Some(0));
    assert_eq!(board.place("task-2", 1), Some(1), "at its place");
    assert!(!board.contains("task-4"));
}
