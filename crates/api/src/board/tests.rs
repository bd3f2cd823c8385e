use std::time::Duration;

use baton_core::{NewTask, StatusReport, TaskFile, TaskView, Timestamp};
use baton_test_support::Dice;

use super::*;

const LEASE: Duration = Duration::from_secs(900);

/// A board of tasks `ids`, in that order, each described as `described(id)`.
fn report(ids: &[String], described: impl Fn(&str) -> String) -> StatusReport {
    // One time for every board: a task's view is what its task is, not when it was read.
    let now: Timestamp = serde_json::from_str("\"2026-11-29T09:00:00Z\"").unwrap();
    let mut file = TaskFile::new(now);
    for id in ids {
        let new = NewTask {
            id: Some(id.clone()),
            description: described(id),
            ..Default::default()
        };
        file.add_task(new, now).unwrap();
    }
    StatusReport::build(file, None, now, LEASE)
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

#[test]
fn windows_holding_any_kept_board_work_out_the_board_exactly() {
    let mut random = Dice(0x9e37_79b9_7f4a_7c15);
    let updates = BoardUpdates::default();
    let mut board: Vec<String> = names(1..=30);
    let mut descriptions: HashMap<String, u32> = HashMap::new();
    let mut next = 31;
    // Three windows, each reading after some changes and not others.
    let mut windows: Vec<Option<(u64, Vec<TaskView>)>> = vec![None, None, None];
    let (mut sent, mut on_boards) = (0, 0);
    for _ in 0..300 {
        match random.roll(5) {
            0 => {
                board.insert(random.roll(board.len() + 1), format!("task-{next}"));
                next += 1;
            }
            1 if board.len() > 1 => {
                board.remove(random.roll(board.len()));
            }
            2 => {
                let (a, b) = (random.roll(board.len()), random.roll(board.len()));
                board.swap(a, b);
            }
            _ => {
                let id = &board[random.roll(board.len())];
                *descriptions.entry(id.clone()).or_default() += 1;
            }
        }
        let window = random.roll(windows.len());
        let described = |id: &str| format!("{id} v{}", descriptions.get(id).unwrap_or(&0));
        let now = report(&board, described);
        let expected: Vec<String> = now
            .tasks
            .iter()
            .map(|view| serde_json::to_string(view).unwrap())
            .collect();
        let held = windows[window].take();
        let update = updates.update(now, false, held.as_ref().map(|(g, _)| *g));
        let worked_out = apply(held.as_ref().map(|(_, views)| views.as_slice()), &update);
        let got: Vec<String> = worked_out
            .iter()
            .map(|view| serde_json::to_string(view).unwrap())
            .collect();
        assert_eq!(got, expected);
        sent += update.report.tasks.len();
        on_boards += got.len();
        windows[window] = Some((update.generation, worked_out));
    }
    // Most of what the windows hold they were not sent again.
    assert!(sent * 2 < on_boards, "sent {sent} of {on_boards}");
}
