//! # baton-store-suite
//!
//! The scenarios every Baton store must pass, as River's `riverdrivertest` is for its drivers:
//! one [`exercise`] entry that a store's own tests call with a factory of fresh stores, and
//! named scenarios, each of which drives the store through its traits (`TaskStore`,
//! `SignalStore`, `DocumentStore`, `TeamStore`) and asserts what the answers must be. The
//! folder runs it in its tests without PostgreSQL; PostgreSQL runs it directly and through
//! PgBouncer, and compares its answers with the folder's as well.
//!
//! A scenario records the answers it asserted on with [`kept`] (times left out, each store has
//! its own clock): what `exercise` returns, for a caller that compares two stores.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};

use baton_core::{DocumentStore, SignalStore, TaskStore, TeamStore};
use serde_json::{Value, json};

mod documents;
mod signals;
mod tasks;
mod team;

/// A store of every trait: what each of Baton's stores is.
pub trait Store: TaskStore + SignalStore + DocumentStore + TeamStore {}
impl<S: TaskStore + SignalStore + DocumentStore + TeamStore> Store for S {}

/// A fresh store for one scenario, and whatever must live as long as it (its folder, its
/// server's handle).
pub struct Fixture {
    pub store: Box<dyn Store>,
    pub keep: Box<dyn std::any::Any>,
}

/// One scenario: its name, and what it does to a fresh store, asserting as it goes.
pub struct Scenario {
    pub name: &'static str,
    pub run: fn(&dyn Store),
}

/// Every scenario, by name.
pub const SCENARIOS: &[Scenario] = &[
    Scenario {
        name: "a_plan_task_is_claimed_only_by_name",
        run: tasks::a_plan_task_is_claimed_only_by_name,
    },
    Scenario {
        name: "every_step_of_a_tasks_life_is_answered_as_the_lifecycle_says",
        run: tasks::every_step_of_a_tasks_life_is_answered_as_the_lifecycle_says,
    },
    Scenario {
        name: "claims_pass_over_tasks_whose_files_others_hold",
        run: tasks::claims_pass_over_tasks_whose_files_others_hold,
    },
    Scenario {
        name: "a_waiting_worker_is_told_what_it_waits_for",
        run: tasks::a_waiting_worker_is_told_what_it_waits_for,
    },
    Scenario {
        name: "an_agent_holds_the_tasks_it_claimed_and_has_not_finished",
        run: tasks::an_agent_holds_the_tasks_it_claimed_and_has_not_finished,
    },
    Scenario {
        name: "a_tasks_acceptance_is_kept_read_and_changed",
        run: tasks::a_tasks_acceptance_is_kept_read_and_changed,
    },
    Scenario {
        name: "a_plans_proposed_tasks_are_claimed_only_once_approved",
        run: tasks::a_plans_proposed_tasks_are_claimed_only_once_approved,
    },
    Scenario {
        name: "runs_and_signals_are_kept_read_and_cleared",
        run: signals::runs_and_signals_are_kept_read_and_cleared,
    },
    Scenario {
        name: "documents_change_whole_and_hostile_names_are_refused",
        run: documents::documents_change_whole_and_hostile_names_are_refused,
    },
    Scenario {
        name: "the_teams_spend_is_summed_from_its_attempts",
        run: documents::the_teams_spend_is_summed_from_its_attempts,
    },
    Scenario {
        name: "team_records_are_kept_in_batches_and_replaced_whole",
        run: team::team_records_are_kept_in_batches_and_replaced_whole,
    },
];

/// Runs every scenario, each on a fresh store from `fresh` (given the scenario's name, a
/// project name a shared server can tell apart). Prints each scenario's name and end; panics
/// naming every scenario that failed, with its message, after all have run. The answers each
/// scenario kept, by name.
pub fn exercise(fresh: &dyn Fn(&str) -> Fixture) -> BTreeMap<&'static str, Value> {
    let mut answers = BTreeMap::new();
    let mut failed = Vec::new();
    for scenario in SCENARIOS {
        let fixture = fresh(scenario.name);
        KEPT.with(|kept| kept.borrow_mut().clear());
        let outcome = catch_unwind(AssertUnwindSafe(|| (scenario.run)(fixture.store.as_ref())));
        drop(fixture);
        match outcome {
            Ok(()) => {
                println!("scenario {} ... ok", scenario.name);
                let kept = KEPT.with(|kept| std::mem::take(&mut *kept.borrow_mut()));
                answers.insert(scenario.name, Value::Array(kept));
            }
            Err(panic) => {
                let message = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                println!("scenario {} ... FAILED", scenario.name);
                failed.push(format!("{}: {message}", scenario.name));
            }
        }
    }
    assert!(
        failed.is_empty(),
        "{} of {} scenarios failed:\n{}",
        failed.len(),
        SCENARIOS.len(),
        failed.join("\n")
    );
    answers
}

thread_local! {
    static KEPT: RefCell<Vec<Value>> = const { RefCell::new(Vec::new()) };
}

/// Keeps `answers` (as JSON, times left out) with the running scenario's, and gives them back.
pub fn kept<T: serde::Serialize>(answers: T) -> T {
    let value = without_times(serde_json::to_value(&answers).expect("answers are JSON"));
    KEPT.with(|kept| kept.borrow_mut().push(value));
    answers
}

/// What one step answered, with times left out.
pub fn answer<T: serde::Serialize>(result: baton_core::Result<T>) -> Value {
    match result {
        Ok(value) => without_times(serde_json::to_value(value).unwrap()),
        Err(e) => json!({"error": e.kind(), "message": e.to_string()}),
    }
}

/// `value` without its times (`*_at`, `as_of`, a lease's time left).
pub fn without_times(mut value: Value) -> Value {
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
