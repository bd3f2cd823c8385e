//! `DocumentStore`: a document changed as a whole (created, changed from what it was, left as
//! it was when the change says so, untouched when the change fails), read back, listed by
//! folder, and hostile names refused, alike on every store.

use baton_core::{DocumentStore, StoreError};
use serde_json::{Value, json};

use crate::{Store, answer, kept};

/// A refusal as its kind alone (a store's words may name its own place).
fn outcome<T: serde::Serialize>(result: baton_core::Result<T>) -> Value {
    match result {
        Ok(_) => answer(result),
        Err(e) => json!({"error": e.kind()}),
    }
}

fn documents_scenario(store: &dyn DocumentStore) -> Vec<Value> {
    let count = |old: Option<Value>| old.and_then(|d| d["count"].as_u64()).unwrap_or(0);
    let mut increment = |old: Option<Value>, _| Ok(Some(json!({"count": count(old) + 1})));
    let mut unchanged = |_: Option<Value>, _| Ok(None);
    let mut refused = |_: Option<Value>, _| {
        Err(StoreError::InvalidInput {
            field: "count",
            reason: "refused by the change".into(),
        })
    };
    let q1 = "inbox/questions/q-1.json";
    let mut steps = vec![
        outcome(store.read_document(q1)),
        outcome(store.change_document(q1, &mut increment)),
        outcome(store.change_document(q1, &mut increment)),
        outcome(store.read_document(q1)),
        outcome(store.change_document(q1, &mut unchanged)),
        outcome(store.change_document(q1, &mut refused)),
        outcome(store.read_document(q1)),
        outcome(store.change_document("inbox/questions/q-2.json", &mut increment)),
        outcome(store.change_document("inbox/messages/m-1.json", &mut increment)),
    ];
    let mut listed = store.documents_in("inbox/questions").unwrap();
    listed.sort_by(|a, b| a.0.cmp(&b.0));
    steps.push(json!(listed));
    steps.push(outcome(store.documents_in("inbox/nothing-here")));
    steps.push(outcome(store.read_document("../outside.json")));
    steps.push(outcome(
        store.change_document("/etc/outside.json", &mut increment),
    ));
    steps
}

pub(crate) fn documents_change_whole_and_hostile_names_are_refused(store: &dyn Store) {
    let steps = kept(documents_scenario(store));
    assert_eq!(steps[0], Value::Null, "never written");
    assert_eq!(steps[3], json!({"count": 2}), "changed from what it was");
    assert_eq!(
        steps[6],
        json!({"count": 2}),
        "left as it was, and untouched by a failure"
    );
    assert!(steps[5]["error"].is_string(), "{:#}", steps[5]);
    assert_eq!(steps[9].as_array().map(Vec::len), Some(2), "{:#}", steps[9]);
    assert_eq!(steps[9][0][0], "inbox/questions/q-1.json", "{:#}", steps[9]);
    assert_eq!(steps[10], json!([]));
    assert!(steps[11]["error"].is_string(), "{:#}", steps[11]);
    assert!(steps[12]["error"].is_string(), "{:#}", steps[12]);
}

/// The team's spend, which one module of `baton-core` reads and writes (`attempts`): summed
/// per agent and in total as attempts end, never per task (read from the attempts instead).
fn spend_scenario(store: &dyn DocumentStore) -> Vec<Value> {
    use baton_core::attempts::{add_to_spend, read_spend};
    use baton_core::{Attempt, AttemptEnd, Timestamp, Usage};
    let ended = |task: &str, agent: &str, cost_usd: f64| Attempt {
        task: task.into(),
        attempt: 1,
        agent: agent.into(),
        host: "a".into(),
        profile: "claude".into(),
        started_at: Timestamp::now(),
        ended_at: Some(Timestamp::now()),
        end: AttemptEnd::Completed,
        reason: None,
        session_id: None,
        usage: Usage {
            cost_usd,
            ..Usage::default()
        },
        last_message: None,
        events: 0,
        sandboxed: false,
        role: baton_core::AttemptRole::Work,
    };
    vec![
        outcome(read_spend(store)),
        outcome(add_to_spend(store, &ended("task-1", "cc1", 0.25))),
        outcome(add_to_spend(store, &ended("task-2", "cc1", 0.5))),
        outcome(add_to_spend(store, &ended("task-3", "cc2", 1.0))),
        outcome(add_to_spend(store, &ended("task-4", "ex1", 0.0))),
        outcome(read_spend(store)),
    ]
}

pub(crate) fn the_teams_spend_is_summed_from_its_attempts(store: &dyn Store) {
    let steps = kept(spend_scenario(store));
    assert_eq!(steps[0], Value::Null, "nothing spent yet");
    let spend = &steps[5];
    assert_eq!(spend["total"]["cost_usd"], 1.75, "{spend:#}");
    assert_eq!(
        spend["by_agent"].get("ex1"),
        None,
        "nothing used, nothing added: {spend:#}"
    );
    assert_eq!(spend["by_agent"]["cc1"]["cost_usd"], 0.75, "{spend:#}");
    assert_eq!(
        spend["by_task"],
        json!({}),
        "per task is not kept: {spend:#}"
    );
}
