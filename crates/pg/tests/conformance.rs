//! One suite, two stores: the same scenario on a `.coordination/` folder and on PostgreSQL,
//! through the `TaskStore` seam, gives the same answers: claim order, refusals (kind and
//! words), the tasks after each change, and the board.

use baton_core::TaskStore;
use baton_core::{Completion, NewTask, TaskEdit};
use baton_folder::FolderStore;
use baton_test_support::pg::PgServer;
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
        answer(store.status()),
    ]
}

#[test]
fn the_folder_and_postgres_answer_every_step_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let folder = FolderStore::init(dir.path(), "Test goal", None).unwrap();
    let server = PgServer::shared();
    let database = baton_pg::PgStore::init(server.url(), "conformance", "Test goal", None).unwrap();
    let from_folder = scenario(&folder);
    let from_database = scenario(&database);
    for (step, (f, d)) in from_folder.iter().zip(&from_database).enumerate() {
        assert_eq!(f, d, "step {step} differs");
    }
    // The scenario reached what it meant to: refusals and successes both.
    let errors = from_folder
        .iter()
        .filter(|a| a.get("error").is_some())
        .count();
    assert!(errors >= 6, "{from_folder:#?}");
}
