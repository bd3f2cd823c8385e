//! PostgreSQL's places in the project's transcripts, which the folder does not have (its files
//! are watched instead).

use baton_folder::FolderStore;
use baton_test_support::pg::PgServer;

/// Every transcript of a project followed from a place (the change feed's reading): events
/// in the order their batches were appended, across tasks and attempts, none of another
/// project's; nothing new past the last place; the folder says it has no places (its files are
/// watched instead).
#[test]
fn transcript_events_are_read_from_a_place_in_the_order_they_were_appended() {
    use baton_core::{Happened, TeamStore, Timestamp, TranscriptEvent};
    let text = |seq: u64, t: &str| TranscriptEvent {
        seq,
        at: Timestamp::now(),
        what: Happened::Text { text: t.into() },
    };
    let server = PgServer::shared();
    let store = baton_pg::PgStore::init(server.url(), "places", "Goal", None).unwrap();
    let other = baton_pg::PgStore::init(server.url(), "places-other", "Goal", None).unwrap();
    let (none, start) = store.events_since(u64::MAX, 0).unwrap().unwrap();
    assert!(none.is_empty());
    assert_eq!(start, 0, "a project with no transcript starts at 0");

    store
        .append_events("task-1", 1, &[text(1, "a1"), text(2, "a2")])
        .unwrap();
    other
        .append_events("task-1", 1, &[text(1, "elsewhere")])
        .unwrap();
    store.append_events("task-2", 1, &[text(1, "b1")]).unwrap();
    store.append_events("task-1", 1, &[text(3, "a3")]).unwrap();
    let read = |after: u64, limit: usize| {
        let (events, last) = store.events_since(after, limit).unwrap().unwrap();
        let texts: Vec<String> = events
            .iter()
            .map(|e| format!("{}#{}:{}", e.task, e.attempt, e.event.what.summary()))
            .collect();
        (texts, last)
    };
    let (all, last) = read(start, 100);
    assert_eq!(
        all,
        ["task-1#1:a1", "task-1#1:a2", "task-2#1:b1", "task-1#1:a3"]
    );
    assert_eq!(last, 4);
    let (first_two, middle) = read(start, 2);
    assert_eq!(first_two, ["task-1#1:a1", "task-1#1:a2"]);
    assert_eq!(read(middle, 100).0, ["task-2#1:b1", "task-1#1:a3"]);
    assert_eq!(
        read(last, 100),
        (vec![], last),
        "nothing past the last place"
    );
    assert_eq!(read(u64::MAX, 0).1, last, "the last place alone");

    // A batch sent again (a retry) is read again at its new place, as the same events.
    store.append_events("task-1", 1, &[text(3, "a3")]).unwrap();
    assert_eq!(read(last, 100), (vec!["task-1#1:a3".to_string()], 5));

    let dir = tempfile::tempdir().unwrap();
    let folder = FolderStore::init(dir.path(), "Goal", None).unwrap();
    assert!(folder.events_since(0, 10).unwrap().is_none());
}
