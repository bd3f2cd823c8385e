use std::time::Duration;

use baton_core::{ClaimRequest, NewTask, Timestamp};
use std::sync::Arc;

use super::*;

const LEASE: Duration = Duration::from_secs(900);

/// The board `bytes` read whole, as JSON, to compare with.
fn whole(bytes: &[u8]) -> String {
    let file: TaskFile = serde_json::from_slice(bytes).unwrap();
    serde_json::to_string(&file).unwrap()
}

fn as_json(file: &TaskFile) -> String {
    serde_json::to_string(file).unwrap()
}

#[test]
fn a_board_read_again_is_the_board_read_whole_parsing_only_the_tasks_changed() {
    let (mut file, bytes) = crate::test_boards::board(40);
    let mut reread = Reread::default();
    assert_eq!(as_json(&reread.read(&bytes).unwrap()), whole(&bytes));
    assert_eq!(reread.parsed, 40);
    // Unchanged: nothing parsed.
    assert_eq!(as_json(&reread.read(&bytes).unwrap()), whole(&bytes));
    assert_eq!(reread.parsed, 0);
    // One claimed, one added, one reserved (outside the tasks), in turn.
    let now = Timestamp::now();
    let changes: [&dyn Fn(&mut TaskFile); 3] = [
        &|file| {
            file.claim(&ClaimRequest::next("w1"), now, LEASE).unwrap();
        },
        &|file| {
            let new = NewTask {
                description: "new".into(),
                ..NewTask::default()
            };
            file.add_task(new, now).unwrap();
        },
        &|file| {
            let request = baton_core::NewReservation {
                agent: "w2".into(),
                paths: vec!["src/part_9.rs".into()],
                task: None,
                shared: false,
                ttl: None,
                reason: None,
            };
            file.reserve(request, now, LEASE).unwrap();
        },
    ];
    for (change, parsed) in changes.iter().zip([1, 1, 0]) {
        change(&mut file);
        let bytes = crate::encode(&file).unwrap();
        assert_eq!(as_json(&reread.read(&bytes).unwrap()), whole(&bytes));
        assert_eq!(reread.parsed, parsed);
    }
    // Tasks gone and in another order (a file another tool rewrote): the same as whole.
    let mut tasks: Vec<_> = file.tasks.iter().cloned().collect();
    tasks.reverse();
    tasks.truncate(20);
    file.tasks = tasks.into();
    let bytes = crate::encode(&file).unwrap();
    assert_eq!(as_json(&reread.read(&bytes).unwrap()), whole(&bytes));
    assert_eq!(reread.parsed, 0);
}

#[test]
fn a_board_another_tool_wrote_pretty_is_read_task_by_task_too() {
    let (_, pretty) = crate::test_boards::pretty_board(20);
    let mut reread = Reread::default();
    assert_eq!(as_json(&reread.read(&pretty).unwrap()), whole(&pretty));
    assert_eq!(reread.parsed, 20);
    // A claim on it: the task taken is written on a line, the others copied as they were.
    let mut file: TaskFile = serde_json::from_slice(&pretty).unwrap();
    file.claim(&ClaimRequest::next("w1"), Timestamp::now(), LEASE)
        .unwrap();
    let mixed = crate::rewrite::encode_after(&mut file, &pretty)
        .unwrap()
        .slices()
        .concat();
    assert_eq!(as_json(&reread.read(&mixed).unwrap()), whole(&mixed));
    assert_eq!(reread.parsed, 1);
}

#[test]
fn a_board_that_cannot_be_read_task_by_task_is_left_to_the_whole_read() {
    let (file, bytes) = crate::test_boards::board(5);
    let text = String::from_utf8(bytes.clone()).unwrap();
    let mut reread = Reread::default();
    reread.read(&bytes).unwrap();
    // A task another tool wrote wrong, a compact file, one laid out by hand.
    let wrong = text.replacen("\"priority\":2", "\"priority\":\"high\"", 1);
    assert_ne!(wrong, text);
    let compact = serde_json::to_string(&file).unwrap();
    let pretty = String::from_utf8(crate::test_boards::pretty_board(5).1).unwrap();
    let by_hand = crate::test_boards::with_objects_laid_out_as_tasks(&pretty);
    for other in [wrong, compact, by_hand] {
        assert!(reread.read(other.as_bytes()).is_none());
        // Nothing is kept of a board not read so: the next read parses every task.
        assert_eq!(as_json(&reread.read(&bytes).unwrap()), whole(&bytes));
        assert_eq!(reread.parsed, 5);
    }
}

#[test]
fn a_board_read_shared_hands_out_the_same_task_while_its_text_is_the_same() {
    let (mut file, bytes) = crate::test_boards::board(10);
    let mut reread = Reread::default();
    let (outside, first) = reread.read_shared(&bytes).unwrap();
    assert!(outside.tasks.is_empty());
    let tasks: Vec<&Task> = first.iter().map(|task| &**task).collect();
    assert_eq!(
        serde_json::to_value(&tasks).unwrap(),
        serde_json::to_value(&file.tasks).unwrap()
    );
    // One claimed: it alone is another task; a task read whole in between changes nothing.
    let claimed = file
        .claim(&ClaimRequest::next("w1"), Timestamp::now(), LEASE)
        .unwrap()
        .unwrap();
    let bytes = crate::encode(&file).unwrap();
    assert_eq!(as_json(&reread.read(&bytes).unwrap()), whole(&bytes));
    let (_, again) = reread.read_shared(&bytes).unwrap();
    assert_eq!(reread.parsed, 0);
    for (was, now) in first.iter().zip(&again) {
        let same = Arc::ptr_eq(was, now);
        assert_eq!(same, now.id != claimed.task.id, "{}", now.id);
        assert_eq!(same, **was == **now, "{}", now.id);
    }
}

#[test]
fn the_same_bytes_again_are_the_board_read_before_neither_split_nor_compared() {
    let (mut file, bytes) = crate::test_boards::board(30);
    let mut reread = Reread::default();
    let (outside, first) = reread.read_shared(&bytes).unwrap();
    reread.keep_bytes(bytes.clone());
    assert!(reread.split);
    // Read again from the same bytes (another reader of the same change): the same tasks,
    // the same `Arc`s, and the file not split again.
    let (again_outside, again) = reread.read_shared(&bytes).unwrap();
    reread.keep_bytes(bytes.clone());
    assert!(!reread.split && reread.parsed == 0);
    assert_eq!(as_json(&again_outside), as_json(&outside));
    assert!(first.iter().zip(&again).all(|(a, b)| Arc::ptr_eq(a, b)));
    assert_eq!(again.len(), 30);
    // As `read` hands it out too, whole.
    assert_eq!(as_json(&reread.read(&bytes).unwrap()), whole(&bytes));
    reread.keep_bytes(bytes.clone());
    // One byte of it changed (outside the tasks, as a reservation is): read again.
    let now = Timestamp::now();
    file.last_updated = Some(now.after(LEASE));
    let changed = crate::encode(&file).unwrap();
    assert_ne!(changed, bytes);
    let (changed_outside, _) = reread.read_shared(&changed).unwrap();
    reread.keep_bytes(changed.clone());
    assert!(reread.split);
    assert_eq!(changed_outside.last_updated, file.last_updated);
    // A board that cannot be read by its texts is not kept to be handed out again.
    let compact = serde_json::to_vec(&file).unwrap();
    assert!(reread.read_shared(&compact).is_none());
    reread.keep_bytes(compact.clone());
    assert!(reread.read_shared(&compact).is_none());
}
