use std::time::Duration;

use baton_core::{ClaimRequest, Completion, NewReservation, NewTask, TaskFile, Timestamp};

use super::*;

const LEASE: Duration = Duration::from_secs(900);

/// A change to the board, and the bytes written for it.
type Step<'a> = Box<dyn Fn(&mut TaskFile) -> Vec<u8> + 'a>;

/// What the feed said of the change from `before` to `after` when it read both whole.
fn whole_diff(before: &[u8], after: &[u8]) -> Vec<TaskChange> {
    let read = |bytes: &[u8]| tasks_by_id(&serde_json::from_slice(bytes).unwrap());
    diff_tasks(&read(before), &read(after))
}

fn encode(file: &TaskFile) -> Vec<u8> {
    crate::encode(file).unwrap()
}

#[test]
fn changes_read_by_text_are_those_read_whole() {
    let (mut file, first) = crate::test_boards::board(30);
    let now = Timestamp::now();
    let (mut seen, changes) = SeenTasks::read(&first, None).unwrap();
    assert!(changes.is_empty(), "the first read sets the baseline");
    assert_eq!(seen.texts.len(), 30);
    let reserve = NewReservation {
        agent: "w9".into(),
        paths: vec!["src/part_9.rs".into()],
        task: None,
        shared: false,
        ttl: None,
        reason: None,
    };
    // Each step: a change made by the core's rules, or a file another tool rewrote.
    let steps: Vec<Step> = vec![
        Box::new(|file| {
            file.claim(&ClaimRequest::next("w1"), now, LEASE).unwrap();
            encode(file)
        }),
        Box::new(|file| {
            let id = file
                .tasks
                .iter()
                .find(|t| t.claimed_by.is_some())
                .unwrap()
                .id
                .clone();
            let done = Completion {
                output: "done".into(),
                ..Completion::default()
            };
            file.start("w1", &id, now, LEASE).unwrap();
            file.complete("w1", &id, done, now).unwrap();
            encode(file)
        }),
        Box::new(|file| {
            let new = NewTask {
                description: "added".into(),
                dependencies: vec!["task-2".into()],
                ..NewTask::default()
            };
            file.add_task(new, now).unwrap();
            encode(file)
        }),
        // Outside the tasks: nothing to say.
        Box::new(move |file| {
            file.reserve(reserve.clone(), now, LEASE).unwrap();
            encode(file)
        }),
        // Removed and reordered, one edited by hand.
        Box::new(|file| {
            let mut tasks: Vec<_> = file.tasks.iter().cloned().collect();
            tasks.remove(4);
            tasks.swap(0, 10);
            tasks[3].description = "edited by hand".into();
            file.tasks = tasks.into();
            encode(file)
        }),
        // Compact, as another tool may write it: read whole.
        Box::new(|file| serde_json::to_vec(file).unwrap()),
        // Back in the layout, with one more task.
        Box::new(|file| {
            let new = NewTask {
                description: "after the compact file".into(),
                ..NewTask::default()
            };
            file.add_task(new, now).unwrap();
            encode(file)
        }),
    ];
    let mut last = first;
    for (i, step) in steps.iter().enumerate() {
        let bytes = step(&mut file);
        let (now_seen, changes) = SeenTasks::read(&bytes, Some(&mut seen)).unwrap();
        assert_eq!(changes, whole_diff(&last, &bytes), "step {i}");
        seen = now_seen;
        last = bytes;
    }
    assert_eq!(seen.texts.len(), file.tasks.len(), "read by text again");
}

#[test]
fn a_file_that_cannot_be_read_by_text_is_read_whole_and_one_that_does_not_parse_refused() {
    let (_, bytes) = crate::test_boards::board(4);
    let text = String::from_utf8(bytes.clone()).unwrap();
    let (mut seen, _) = SeenTasks::read(&bytes, None).unwrap();
    // One id twice: the whole read's answer (the last of the two).
    let twice = text.replacen("\"id\":\"task-2\"", "\"id\":\"task-1\"", 1);
    assert_ne!(twice, text);
    let (mut after, changes) = SeenTasks::read(twice.as_bytes(), Some(&mut seen)).unwrap();
    assert_eq!(changes, whole_diff(&bytes, twice.as_bytes()));
    assert!(after.texts.is_empty(), "read whole");
    // Not JSON: refused, and what was seen is what the next read is compared with.
    let broken = &text[..text.len() / 2];
    assert!(SeenTasks::read(broken.as_bytes(), Some(&mut after)).is_err());
    let (_, changes) = SeenTasks::read(&bytes, Some(&mut after)).unwrap();
    assert_eq!(changes, whole_diff(twice.as_bytes(), &bytes));
    assert!(!changes.is_empty());
}
