//! `TaskStore`: claim order, refusals (kind and words), the tasks after each change, the
//! board, files others hold, and what a waiting worker is told.

use baton_core::TaskStore;
use baton_core::{Completion, NewTask, Reopen, TaskEdit};
use serde_json::Value;

use crate::{Store, answer, kept};

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

pub(crate) fn every_step_of_a_tasks_life_is_answered_as_the_lifecycle_says(store: &dyn Store) {
    let answers = kept(scenario(store));
    // The scenario reached what it meant to: refusals and successes both.
    let errors = answers.iter().filter(|a| a.get("error").is_some()).count();
    assert!(errors >= 6, "{answers:#?}");
    // A task sent back goes to its worker: held for it, passed over by others, taken by its
    // worker's next claim before a better ready task.
    let from_end = |n: usize| &answers[answers.len() - n];
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

pub(crate) fn claims_pass_over_tasks_whose_files_others_hold(store: &dyn Store) {
    let answers = kept(held_files_scenario(store));
    // w3 passes over the two tasks w1's src/a.rs meets (the file, its folder) and takes
    // src/b.rs, which w2's glob does not name; w4 passes over the glob's file too; w1 takes a
    // task on its own file; nothing is left that no other worker's files meet.
    assert_eq!(
        answers,
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

pub(crate) fn a_waiting_worker_is_told_what_it_waits_for(store: &dyn Store) {
    assert_eq!(
        kept(outlook_scenario(store)),
        ["claimable", "waiting until a lease ends", "claimable"]
    );
}

/// The tasks an agent holds: claimed or in progress by it, in the board's order; not another
/// agent's, not one it finished.
fn held_scenario(store: &dyn TaskStore) -> Vec<Vec<String>> {
    for i in 1..=4 {
        store.add_task(new(&format!("Task {i}"), 5, &[])).unwrap();
    }
    let claim = |agent: &str| {
        store
            .claim(&baton_core::ClaimRequest::next(agent))
            .unwrap()
            .unwrap()
    };
    claim("w1");
    claim("w2");
    let started = claim("w1").task.id;
    store.start("w1", &started).unwrap();
    let done = claim("w1").task.id;
    store.start("w1", &done).unwrap();
    store.complete("w1", &done, report("done")).unwrap();
    let ids = |agent: &str| -> Vec<String> {
        store
            .held_by(agent)
            .unwrap()
            .into_iter()
            .map(|t| t.id)
            .collect()
    };
    vec![ids("w1"), ids("w2"), ids("w3")]
}

pub(crate) fn an_agent_holds_the_tasks_it_claimed_and_has_not_finished(store: &dyn Store) {
    assert_eq!(
        kept(held_scenario(store)),
        [
            vec!["task-1".to_string(), "task-3".to_string()],
            vec!["task-2".to_string()],
            vec![]
        ]
    );
}

/// A task's acceptance (how its work will be judged done) is kept with it, read back by every
/// view, changed and removed by an edit.
pub(crate) fn a_tasks_acceptance_is_kept_read_and_changed(store: &dyn Store) {
    let added = store
        .add_task(NewTask {
            description: "Judged".into(),
            acceptance: Some("the page lists every task".into()),
            ..NewTask::default()
        })
        .unwrap();
    let read = store.task(&added.id).unwrap().unwrap();
    let listed = store.status().unwrap();
    let changed = store
        .edit_task(
            &added.id,
            TaskEdit {
                acceptance: Some("the page lists every task, newest first".into()),
                ..TaskEdit::default()
            },
        )
        .unwrap();
    let removed = store
        .edit_task(
            &added.id,
            TaskEdit {
                acceptance: Some(String::new()),
                ..TaskEdit::default()
            },
        )
        .unwrap();
    let seen = kept(vec![
        read.acceptance.clone(),
        listed.tasks[0].task.acceptance.clone(),
        changed.acceptance.clone(),
        removed.acceptance.clone(),
    ]);
    assert_eq!(
        seen,
        [
            Some("the page lists every task".to_string()),
            Some("the page lists every task".to_string()),
            Some("the page lists every task, newest first".to_string()),
            None
        ]
    );
}

/// A plan's proposed tasks are on the board but claimed by nobody until the lead approves
/// them; a waiting worker is told to wait for that, not that the queue is drained.
pub(crate) fn a_plans_proposed_tasks_are_claimed_only_once_approved(store: &dyn Store) {
    let planned = |description: &str| NewTask {
        description: description.into(),
        proposed: true,
        ..NewTask::default()
    };
    let first = store.add_task(planned("First step")).unwrap();
    let second = store.add_task(planned("Second step")).unwrap();
    let claim = || {
        store
            .claim(&baton_core::ClaimRequest::next("w1"))
            .unwrap()
            .map(|c| c.task.id)
    };
    let before = claim();
    let named = answer(store.claim(&baton_core::ClaimRequest::task("w1", &first.id)));
    let waiting = matches!(
        store.outlook("w1").unwrap().0,
        baton_core::Outlook::Waiting { .. }
    );
    let counted = store
        .status()
        .unwrap()
        .count(baton_core::TaskStatus::Proposed);
    let approved = store.approve(&first.id).unwrap();
    let again = answer(store.approve(&first.id));
    let after = claim();
    let seen = kept(vec![
        serde_json::json!(before),
        named.clone(),
        serde_json::json!(waiting),
        serde_json::json!(counted),
        serde_json::json!(approved.status),
        again.clone(),
        serde_json::json!(after),
        serde_json::json!(store.task(&second.id).unwrap().unwrap().status),
    ]);
    assert_eq!(seen[0], Value::Null, "nothing claimed before approval");
    assert_eq!(named["error"], "illegal_transition", "{named}");
    assert_eq!(seen[2], true, "a waiting worker waits for the approval");
    assert_eq!(seen[3], 2);
    assert_eq!(seen[4], "available");
    assert_eq!(again["error"], "illegal_transition", "{again}");
    assert_eq!(seen[6], first.id.as_str());
    assert_eq!(seen[7], "proposed", "only what was approved");
}

/// A team's plan task is claimed only by name (its planner), never as the next ready task,
/// not even once its holder's lease ran out; the tasks its planner adds say which plan they
/// are of; the master plan is rewritten whole.
pub(crate) fn a_plan_task_is_claimed_only_by_name(store: &dyn Store) {
    let plan = store
        .add_task(NewTask {
            id: Some("plan-1".into()),
            description: "Ship the parts".into(),
            kind: baton_core::TaskKind::Plan,
            ..NewTask::default()
        })
        .unwrap();
    let next = || {
        store
            .claim(&baton_core::ClaimRequest::next("w1"))
            .unwrap()
            .map(|c| c.task.id)
    };
    let before = next();
    let drained = store.outlook("w1").unwrap().0 == baton_core::Outlook::Drained;
    let named = store
        .claim(&baton_core::ClaimRequest::task("planner", &plan.id))
        .unwrap()
        .map(|c| c.task.id);
    let part = store
        .add_task(NewTask {
            description: "Part a".into(),
            proposed: true,
            plan: Some(plan.id.clone()),
            ..NewTask::default()
        })
        .unwrap();
    store
        .write_master_plan("planner", "# Plan\n\na first")
        .unwrap();
    let written = store.notes().unwrap().master_plan;
    let empty = answer(store.write_master_plan("planner", "  "));
    let read = store.task(&part.id).unwrap().unwrap();
    let seen = kept(vec![
        serde_json::json!(before),
        serde_json::json!(drained),
        serde_json::json!(named),
        serde_json::json!(store.task(&plan.id).unwrap().unwrap().kind),
        serde_json::json!(read.plan),
        serde_json::json!(written),
        empty.clone(),
    ]);
    assert_eq!(seen[0], Value::Null, "a plan is not the next task");
    assert_eq!(
        seen[1], true,
        "a board of one plan has nothing for a worker"
    );
    assert_eq!(seen[2], "plan-1");
    assert_eq!(seen[3], "plan");
    assert_eq!(seen[4], "plan-1");
    assert_eq!(seen[5], "# Plan\n\na first");
    assert_eq!(empty["error"], "invalid_input", "{empty}");
}
