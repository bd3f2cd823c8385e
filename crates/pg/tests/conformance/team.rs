//! `TeamStore`: transcripts in batches read back in order and from a point, attempts and
//! workers replaced whole, hostile names refused; and PostgreSQL's places in the project's
//! transcripts, which the folder does not have (its files are watched instead).

use baton_folder::FolderStore;
use baton_test_support::pg::PgServer;
use serde_json::{Value, json};

use crate::every_store::{answer, on_every_store};

/// The team's records through the `TeamStore` seam: transcripts in batches read back in order
/// and from a point, attempts and workers replaced whole, and hostile names refused.
fn team_scenario(store: &dyn baton_core::TeamStore, at: baton_core::Timestamp) -> Vec<Value> {
    use baton_core::{
        Attempt, AttemptEnd, Happened, Timestamp, TranscriptEvent, Usage, WorkerRecord, WorkerState,
    };
    let event = |seq: u64, what: Happened| TranscriptEvent { seq, at, what };
    let text = |t: &str| Happened::Text { text: t.into() };
    let call = Happened::ToolCall {
        id: "toolu_1".into(),
        name: "Bash".into(),
        input: json!({"command": "cargo test"}),
    };
    let mut attempt = Attempt {
        task: "task-1".into(),
        attempt: 1,
        agent: "cc1".into(),
        host: "a".into(),
        profile: "claude".into(),
        started_at: Timestamp::now(),
        ended_at: None,
        end: AttemptEnd::Running,
        reason: None,
        session_id: Some("s-1".into()),
        usage: Usage::default(),
        last_message: None,
        events: 0,
        sandboxed: false,
    };
    let worker = WorkerRecord {
        name: "cc1".into(),
        host: "a".into(),
        supervisor_pid: 42,
        profile: "claude".into(),
        state: WorkerState::Working,
        task: Some("task-1".into()),
        pid: Some(43),
        attempt: Some(1),
        usage: Usage::default(),
        last_event: Some("started".into()),
        sandboxed: true,
        updated_at: Timestamp::now(),
    };
    let mut answers = vec![
        answer(store.events("task-1", 1, 0, 100)),
        answer(store.append_events("task-1", 1, &[event(1, text("one")), event(2, call)])),
        answer(store.append_events("task-1", 1, &[event(3, text("three"))])),
        answer(store.append_events("task-1", 2, &[event(1, text("again"))])),
        answer(store.events("task-1", 1, 0, 100)),
        answer(store.events("task-1", 1, 1, 1)),
        answer(store.events("task-1", 2, 0, 100)),
        answer(store.save_attempt(&attempt)),
    ];
    attempt.end = AttemptEnd::Completed;
    attempt.usage.cost_usd = 0.25;
    attempt.usage.turns = 3;
    let mut second = attempt.clone();
    second.task = "task-0".into();
    answers.extend([
        answer(store.save_attempt(&attempt)),
        answer(store.save_attempt(&second)),
        answer(store.attempts(None)),
        answer(store.attempts(Some("task-1"))),
        answer(store.attempts(Some("nothing"))),
        answer(store.save_worker(&worker)),
        answer(store.save_worker(&WorkerRecord {
            state: WorkerState::Waiting,
            task: None,
            ..worker.clone()
        })),
        answer(store.workers()),
        answer(store.append_events("../x", 1, &[event(1, text("no"))])),
        answer(store.save_worker(&WorkerRecord {
            name: "bad name!".into(),
            ..worker.clone()
        })),
    ]);
    // An attempt's records written together: the attempt, its events, its worker.
    let mut together = attempt.clone();
    together.task = "task-2".into();
    together.end = AttemptEnd::Running;
    let on_two = WorkerRecord {
        task: Some("task-2".into()),
        ..worker.clone()
    };
    let two = [event(1, text("begun")), event(2, text("going"))];
    answers.extend([
        answer(store.save_attempt_with(&together, &two, Some(&on_two))),
        answer(store.events("task-2", 1, 0, 100)),
        answer(store.attempts(Some("task-2"))),
        answer(store.workers()),
        answer(store.save_attempt_with(&together, &[event(3, text("ended"))], None)),
        answer(store.events("task-2", 1, 2, 100)),
        // A hostile worker name writes nothing of the three.
        answer(store.save_attempt_with(
            &Attempt {
                task: "task-3".into(),
                ..together.clone()
            },
            &[event(1, text("no"))],
            Some(&WorkerRecord {
                name: "../w".into(),
                ..worker
            }),
        )),
        answer(store.attempts(Some("task-3"))),
        answer(store.events("task-3", 1, 0, 100)),
    ]);
    answers
}

#[test]
fn every_store_keeps_the_team_records_the_same() {
    let at = baton_core::Timestamp::now();
    let from_folder = on_every_store("conformance-team", |store| team_scenario(store, at));
    assert_eq!(
        from_folder[4].as_array().map(Vec::len),
        Some(3),
        "{from_folder:#?}"
    );
    assert_eq!(from_folder[5][0]["seq"], 2);
    assert_eq!(from_folder[10].as_array().map(Vec::len), Some(2));
    assert_eq!(from_folder[11][0]["usage"]["cost_usd"], 0.25);
    assert_eq!(from_folder[15][0]["state"], "waiting");
    assert!(
        from_folder[16]["error"].is_string(),
        "{:?}",
        from_folder[16]
    );
    assert!(
        from_folder[17]["error"].is_string(),
        "{:?}",
        from_folder[17]
    );
    // Written together: two events, the attempt, the worker on task-2; then one more event.
    assert_eq!(from_folder[19].as_array().map(Vec::len), Some(2));
    assert_eq!(from_folder[20][0]["task"], "task-2");
    assert_eq!(from_folder[21][0]["task"], "task-2");
    assert_eq!(from_folder[23][0]["seq"], 3);
    assert!(
        from_folder[24]["error"].is_string(),
        "{:?}",
        from_folder[24]
    );
    assert_eq!(from_folder[25].as_array().map(Vec::len), Some(0));
    assert_eq!(from_folder[26].as_array().map(Vec::len), Some(0));
}

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
