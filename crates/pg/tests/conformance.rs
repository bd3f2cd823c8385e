//! One suite, two stores: the same scenario on a `.coordination/` folder and on PostgreSQL,
//! through the `TaskStore` seam, gives the same answers: claim order, refusals (kind and
//! words), the tasks after each change, and the board.

use baton_core::TaskStore;
use baton_core::{Completion, NewTask, Reopen, TaskEdit};
use baton_folder::FolderStore;
use baton_test_support::pg::PgServer;
use baton_test_support::pgbouncer::PgBouncer;
use serde_json::{Value, json};

/// What one step answered, with times left out (each store has its own clock).
fn answer<T: serde::Serialize>(result: baton_core::Result<T>) -> Value {
    match result {
        Ok(value) => without_times(serde_json::to_value(value).unwrap()),
        Err(e) => json!({"error": e.kind(), "message": e.to_string()}),
    }
}

fn without_times(mut value: Value) -> Value {
    match &mut value {
        Value::Object(map) => {
            map.retain(|key, _| {
                !key.ends_with("_at") && key != "as_of" && key != "lease_remaining_secs"
            });
            for v in map.values_mut() {
                *v = without_times(v.take());
            }
        }
        Value::Array(items) => {
            for v in items.iter_mut() {
                *v = without_times(v.take());
            }
        }
        _ => {}
    }
    value
}

fn new(description: &str, priority: u32, dependencies: &[&str]) -> NewTask {
    NewTask {
        description: description.into(),
        priority,
        dependencies: dependencies.iter().map(|d| d.to_string()).collect(),
        ..NewTask::default()
    }
}

fn report(text: &str) -> Completion {
    Completion {
        output: text.into(),
        files_modified: vec!["src/a.rs".into()],
        ..Completion::default()
    }
}

fn edit(dependencies: Option<Vec<&str>>, priority: Option<u32>) -> TaskEdit {
    TaskEdit {
        dependencies: dependencies.map(|d| d.into_iter().map(str::to_string).collect()),
        priority,
        ..TaskEdit::default()
    }
}

/// Every answer of the scenario, in order.
fn scenario(store: &dyn TaskStore) -> Vec<Value> {
    let mut named = new("named", 2, &[]);
    named.id = Some("api".into());
    vec![
        answer(store.add_task(new("A", 5, &[]))),
        answer(store.add_task(new("B", 1, &["task-1"]))),
        answer(store.add_task(named)),
        answer(store.add_task(new("C", 3, &["ghost"]))),
        answer(store.add_task(new("D", 3, &["api", "task-2"]))),
        answer(store.ready_tasks()),
        answer(store.edit_task("task-1", edit(Some(vec!["task-3"]), Some(9)))),
        answer(store.edit_task("task-3", edit(None, Some(0)))),
        answer(store.edit_task("task-3", edit(Some(vec![]), Some(4)))),
        answer(store.edit_task("ghost", edit(None, Some(2)))),
        answer(store.claim(&baton_core::ClaimRequest::next("w1"))),
        answer(
            store
                .claim(&baton_core::ClaimRequest::task("w2", "task-2"))
                .map(Option::unwrap),
        ),
        answer(
            store
                .claim(&baton_core::ClaimRequest::task("w2", "task-1"))
                .map(Option::unwrap),
        ),
        answer(store.complete("w2", "task-1", report("too early"))),
        answer(store.start("w1", "task-1")),
        answer(store.start("w2", "task-1")),
        answer(store.complete("w2", "task-1", report("did A"))),
        answer(store.claim(&baton_core::ClaimRequest::next("w3"))),
        answer(store.heartbeat("w1")),
        answer(store.fail("w1", "api", "broke")),
        answer(store.reset("api", false)),
        answer(store.reset("task-2", false)),
        answer(store.release("w3", "task-2")),
        answer(store.cancel("task-2", Some("not needed"))),
        answer(store.cancel("task-2", None)),
        answer(store.claim(&baton_core::ClaimRequest::next("w4"))),
        answer(store.start("bad name!", "task-1")),
        answer(store.task("task-1")),
        answer(store.task("ghost")),
        // Sent back for changes: held for the worker that did it, which takes it before any
        // other task; to anyone, available.
        answer(store.reopen("task-1", "Changes requested: more", Reopen::ToItsWorker)),
        answer(store.claim(&baton_core::ClaimRequest::next("w5"))),
        answer(store.claim(&baton_core::ClaimRequest::task("w5", "task-1"))),
        answer(store.add_task(new("E", 1, &[]))),
        answer(store.claim(&baton_core::ClaimRequest::next("w2"))),
        answer(store.reopen("task-1", "again", Reopen::ToItsWorker)),
        answer(store.start("w2", "task-1")),
        answer(store.complete("w2", "task-1", report("did more"))),
        answer(store.reopen("task-1", "to anyone", Reopen::ToAnyone)),
        answer(store.status()),
    ]
}

/// Both stores answered every step alike, and took as many.
fn same_steps(from_folder: &[Value], from_database: &[Value]) {
    for (step, (f, d)) in from_folder.iter().zip(from_database).enumerate() {
        assert_eq!(f, d, "step {step} differs");
    }
    assert_eq!(from_folder.len(), from_database.len(), "steps taken");
}

#[test]
fn the_folder_and_postgres_answer_every_step_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let folder = FolderStore::init(dir.path(), "Test goal", None).unwrap();
    let server = PgServer::shared();
    let database = baton_pg::PgStore::init(server.url(), "conformance", "Test goal", None).unwrap();
    let from_folder = scenario(&folder);
    let from_database = scenario(&database);
    same_steps(&from_folder, &from_database);
    // The scenario reached what it meant to: refusals and successes both.
    let errors = from_folder
        .iter()
        .filter(|a| a.get("error").is_some())
        .count();
    assert!(errors >= 6, "{from_folder:#?}");
    // A task sent back goes to its worker: held for it, passed over by others, taken by its
    // worker's next claim before a better ready task.
    let from_end = |n: usize| &from_folder[from_folder.len() - n];
    assert_eq!(from_end(10)["status"], "claimed", "{:#}", from_end(10));
    assert_eq!(from_end(10)["claimed_by"], "w2");
    assert_eq!(from_end(10)["sent_back"], true);
    assert_ne!(from_end(9)["task"]["id"], "task-1", "{:#}", from_end(9));
    assert_eq!(
        from_end(8)["error"],
        "illegal_transition",
        "{:#}",
        from_end(8)
    );
    assert_eq!(from_end(6)["task"]["id"], "task-1", "{:#}", from_end(6));
    assert_eq!(from_end(6)["reclaimed_from"], Value::Null);
    assert!(
        from_end(5)["error"].is_string(),
        "a claimed task is not sent back"
    );
    assert_eq!(from_end(2)["status"], "available", "{:#}", from_end(2));
}

#[test]
fn through_pgbouncer_in_transaction_mode_postgres_answers_every_step_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let folder = FolderStore::init(dir.path(), "Test goal", None).unwrap();
    let server = PgServer::shared();
    // Two server connections for the store's own connection and the test's: every
    // transaction may land on either, so a statement prepared in one and used in another
    // would fail.
    let bouncer = PgBouncer::start(&server, 2);
    let pooled =
        baton_pg::PgStore::init(&bouncer.url(), "conformance-pooled", "Test goal", None).unwrap();
    let other = baton_pg::PgStore::open(&bouncer.url(), "conformance-pooled").unwrap();
    other.status().unwrap();
    bouncer.wait_for_full_pool(2);
    let from_folder = scenario(&folder);
    let from_pooler = scenario(&pooled);
    same_steps(&from_folder, &from_pooler);
    assert_eq!(
        other.status().unwrap().tasks.len(),
        folder.status().unwrap().tasks.len(),
        "seen from another client"
    );
    assert!(bouncer.server_connections() <= 2);
}

/// Claims among tasks whose files others hold: plain files, a folder, a glob and a worker's
/// own file. The folder passes over such a task as it reads its one file, the database one
/// candidate at a time (its file keys, then the reservations near its files), so both stores
/// must take the same tasks in the same order.
fn held_files_scenario(store: &dyn TaskStore) -> Vec<String> {
    let files = [
        vec!["src/a.rs"],
        vec!["src/**/*.ts"],
        vec!["src/a.rs"],
        vec!["src/"],
        vec!["src/b.rs"],
        vec!["docs/guide.md", "src/a.rs"],
        vec!["src/api/users.ts"],
        vec!["docs/guide.md"],
        vec!["docs/"],
    ];
    for (i, paths) in files.iter().enumerate() {
        store
            .add_task(NewTask {
                description: format!("Task {i}"),
                files: paths.iter().map(|p| p.to_string()).collect(),
                ..NewTask::default()
            })
            .unwrap();
    }
    let claim = |agent: &str| {
        store
            .claim(&baton_core::ClaimRequest::next(agent))
            .unwrap()
            .map_or("none".to_string(), |c| c.task.id)
    };
    // w1 holds src/a.rs; then each worker takes the best task no other worker's files meet,
    // and w1 may take another task on its own file.
    ["w1", "w2", "w3", "w4", "w1", "w5", "w6"]
        .into_iter()
        .map(claim)
        .collect()
}

/// The answers `scenario` gives on the folder, which PostgreSQL must give alike, directly and
/// through PgBouncer (where the claim's queries run as functions of their own, `kept`):
/// projects `{name}` and `{name}-pooled` on the shared server.
fn on_every_store<T: PartialEq + std::fmt::Debug>(
    name: &str,
    scenario: impl Fn(&dyn TaskStore) -> T,
) -> T {
    let dir = tempfile::tempdir().unwrap();
    let folder = FolderStore::init(dir.path(), "Test goal", None).unwrap();
    let server = PgServer::shared();
    let database = baton_pg::PgStore::init(server.url(), name, "Test goal", None).unwrap();
    let bouncer = PgBouncer::start(&server, 2);
    let pooled =
        baton_pg::PgStore::init(&bouncer.url(), &format!("{name}-pooled"), "Test goal", None)
            .unwrap();
    let from_folder = scenario(&folder);
    assert_eq!(scenario(&database), from_folder, "PostgreSQL");
    assert_eq!(scenario(&pooled), from_folder, "through PgBouncer");
    from_folder
}

#[test]
fn claims_pass_over_tasks_whose_files_others_hold_alike_on_both_stores_pooled_or_not() {
    let from_folder = on_every_store("conformance-held", held_files_scenario);
    // w3 passes over the two tasks w1's src/a.rs meets (the file, its folder) and takes
    // src/b.rs, which w2's glob does not name; w4 passes over the glob's file too; w1 takes a
    // task on its own file; nothing is left that no other worker's files meet.
    assert_eq!(
        from_folder,
        [
            "task-1", "task-2", "task-5", "task-8", "task-3", "none", "none"
        ]
    );
}

/// What a waiting worker is told as files are held and given back: a task ready and free,
/// one kept back by an explicit reservation, free again.
fn outlook_scenario(store: &dyn TaskStore) -> Vec<String> {
    for (description, file) in [("Lib", "lib/x.rs"), ("Docs", "docs/a.md")] {
        store
            .add_task(NewTask {
                description: description.into(),
                files: vec![file.into()],
                ..NewTask::default()
            })
            .unwrap();
    }
    let look = || match store.outlook("w2").unwrap().0 {
        baton_core::Outlook::Claimable => "claimable".to_string(),
        baton_core::Outlook::Waiting { next_lease_expiry } => {
            format!(
                "waiting until {}",
                next_lease_expiry.map_or("ever", |_| "a lease ends")
            )
        }
        baton_core::Outlook::Drained => "drained".to_string(),
    };
    let mut seen = Vec::new();
    store.claim(&baton_core::ClaimRequest::next("w1")).unwrap();
    seen.push(look());
    store
        .reserve(baton_core::NewReservation {
            agent: "w3".into(),
            paths: vec!["docs/**".into()],
            task: None,
            shared: false,
            ttl: Some(std::time::Duration::from_secs(3600)),
            reason: None,
        })
        .unwrap();
    seen.push(look());
    store.unreserve("w3", &[]).unwrap();
    seen.push(look());
    seen
}

#[test]
fn a_waiting_worker_is_told_the_same_on_both_stores_pooled_or_not() {
    assert_eq!(
        on_every_store("conformance-outlook", outlook_scenario),
        ["claimable", "waiting until a lease ends", "claimable"]
    );
}

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
            ..worker
        })),
    ]);
    answers
}

#[test]
fn the_folder_and_postgres_keep_the_team_records_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let folder = FolderStore::init(dir.path(), "Test goal", None).unwrap();
    let server = PgServer::shared();
    let database =
        baton_pg::PgStore::init(server.url(), "conformance-team", "Test goal", None).unwrap();
    let at = baton_core::Timestamp::now();
    let from_folder = team_scenario(&folder, at);
    let from_database = team_scenario(&database, at);
    same_steps(&from_folder, &from_database);
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
}

#[test]
fn through_pgbouncer_the_team_records_are_kept_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let folder = FolderStore::init(dir.path(), "Test goal", None).unwrap();
    let server = PgServer::shared();
    let bouncer = PgBouncer::start(&server, 2);
    let pooled =
        baton_pg::PgStore::init(&bouncer.url(), "conformance-team-pooled", "Test goal", None)
            .unwrap();
    bouncer.wait_for_full_pool(2);
    let at = baton_core::Timestamp::now();
    let from_folder = team_scenario(&folder, at);
    let from_pooler = team_scenario(&pooled, at);
    same_steps(&from_folder, &from_pooler);
    assert_eq!(from_pooler[11][0]["usage"]["cost_usd"], 0.25);
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
