//! `SignalStore`: runs started and resolved, named signals written (with their writer and
//! note), read, listed, cleared one by one and as a run, and the refusals, alike on every
//! store. Where a signal is kept (its `path`) differs by store and is left out.

use baton_core::{ForeignFile, SignalStore, SignalTarget};
use serde_json::{Value, json};

use crate::{Store, answer, kept};

/// A step's answer without where things are kept, and a refusal as its kind alone (a
/// store's words may name its own place).
fn outcome<T: serde::Serialize>(result: baton_core::Result<T>) -> Value {
    fn without_paths(value: &mut Value) {
        match value {
            Value::Object(map) => {
                map.remove("path");
                map.values_mut().for_each(without_paths);
            }
            Value::Array(items) => items.iter_mut().for_each(without_paths),
            _ => {}
        }
    }
    match result {
        Ok(_) => {
            let mut value = answer(result);
            without_paths(&mut value);
            value
        }
        Err(e) => json!({"error": e.kind()}),
    }
}

fn signals_scenario(store: &dyn SignalStore) -> Vec<Value> {
    let named = |run: u32, name: &str| SignalTarget::named(run, name).unwrap();
    let keep = ForeignFile::Keep;
    vec![
        outcome(store.runs()),
        outcome(store.resolve_run(None)),
        outcome(store.runs().map(|runs| runs.len())),
        outcome(store.write_signal(
            &named(1, "ui-test-done"),
            Some("ui"),
            Some("all green"),
            keep,
        )),
        outcome(store.write_signal(&named(1, "lint-done"), None, None, keep)),
        outcome(store.signal(&named(1, "ui-test-done"))),
        outcome(store.signal(&named(1, "missing"))),
        outcome(store.list_signals(1)),
        outcome(store.new_run(Some("second"))),
        outcome(store.resolve_run(None)),
        outcome(store.resolve_run(Some(9))),
        outcome(store.write_signal(&named(2, "ui-test-done"), Some("ui"), None, keep)),
        outcome(store.all_signals()),
        outcome(store.clear_signal(&named(1, "lint-done"), Some("lead"), keep)),
        outcome(store.clear_signal(&named(1, "lint-done"), Some("lead"), keep)),
        outcome(store.clear_signals(1)),
        outcome(store.list_signals(1)),
        outcome(store.list_signals(2)),
        outcome(store.runs().map(|runs| runs.len())),
    ]
}

pub(crate) fn runs_and_signals_are_kept_read_and_cleared(store: &dyn Store) {
    let steps = kept(signals_scenario(store));
    assert_eq!(steps[0], json!([]), "no run at first");
    assert_eq!(
        steps[1],
        json!(1),
        "the first run is started when asked for"
    );
    assert_eq!(steps[5]["name"], "ui-test-done", "{:#}", steps[5]);
    assert_eq!(steps[6], Value::Null, "an unwritten signal is absent");
    assert_eq!(steps[7].as_array().map(Vec::len), Some(2), "{:#}", steps[7]);
    assert_eq!(steps[9], json!(2), "the latest run");
    assert!(steps[10]["error"].is_string(), "run 9 does not exist");
    assert_eq!(
        steps[12].as_array().map(Vec::len),
        Some(3),
        "{:#}",
        steps[12]
    );
    assert_eq!((&steps[13], &steps[14]), (&json!(true), &json!(false)));
    assert_eq!(steps[15], json!(["ui-test-done"]), "{:#}", steps[15]);
    assert_eq!(steps[16], json!([]));
    assert_eq!(
        steps[17].as_array().map(Vec::len),
        Some(1),
        "run 2 untouched"
    );
}
