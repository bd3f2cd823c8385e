//! `TeamStore`: transcripts in batches read back in order and from a point, attempts and
//! workers replaced whole, hostile names refused; and PostgreSQL's places in the project's
//! transcripts, which the folder does not have (its files are watched instead).

use serde_json::{Value, json};

use crate::{Store, answer, kept};

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
        role: baton_core::AttemptRole::Work,
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

pub(crate) fn team_records_are_kept_in_batches_and_replaced_whole(store: &dyn Store) {
    // One time for every store's events, which keep the time they are given.
    let at = baton_core::Timestamp::parse("2026-01-02T03:04:05Z").expect("a time");
    let answers = kept(team_scenario(store, at));
    assert_eq!(answers[4].as_array().map(Vec::len), Some(3), "{answers:#?}");
    assert_eq!(answers[5][0]["seq"], 2);
    assert_eq!(answers[10].as_array().map(Vec::len), Some(2));
    assert_eq!(answers[11][0]["usage"]["cost_usd"], 0.25);
    assert_eq!(answers[15][0]["state"], "waiting");
    assert!(answers[16]["error"].is_string(), "{:?}", answers[16]);
    assert!(answers[17]["error"].is_string(), "{:?}", answers[17]);
    // Written together: two events, the attempt, the worker on task-2; then one more event.
    assert_eq!(answers[19].as_array().map(Vec::len), Some(2));
    assert_eq!(answers[20][0]["task"], "task-2");
    assert_eq!(answers[21][0]["task"], "task-2");
    assert_eq!(answers[23][0]["seq"], 3);
    assert!(answers[24]["error"].is_string(), "{:?}", answers[24]);
    assert_eq!(answers[25].as_array().map(Vec::len), Some(0));
    assert_eq!(answers[26].as_array().map(Vec::len), Some(0));
}
