use std::time::Duration;

use super::*;
use crate::requests::DEFAULT_LEASE;
use crate::testing::{file_with, t0};

const LEASE: Duration = DEFAULT_LEASE;

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

fn add(
    file: &mut TaskFile,
    description: &str,
    priority: u32,
    deps: &[&str],
    at: Timestamp,
) -> String {
    file.add_task(
        NewTask {
            description: description.into(),
            priority,
            dependencies: deps.iter().map(|d| d.to_string()).collect(),
            ..NewTask::default()
        },
        at,
    )
    .unwrap()
    .id
    .clone()
}

fn claimed_id(file: &mut TaskFile, agent: &str, now: Timestamp) -> Option<String> {
    file.claim(&ClaimRequest::next(agent), now, LEASE)
        .unwrap()
        .map(|c| c.task.id)
}

#[test]
fn add_task_numbers_ids_and_records_fields() {
    let mut file = file_with(vec![]);
    let a = add(&mut file, "first", 2, &[], t0());
    let b = add(&mut file, "  second  ", 1, &[&a], t0());
    assert_eq!((a.as_str(), b.as_str()), ("task-1", "task-2"));
    let second = file.task("task-2").unwrap();
    assert_eq!(second.description, "second");
    assert_eq!(second.dependencies, ["task-1"]);
    assert_eq!(second.status, TaskStatus::Available);
    assert_eq!(second.created_at, Some(t0()));
}

#[test]
fn add_task_refuses_bad_input_and_changes_nothing() {
    let mut file = file_with(vec![]);
    add(&mut file, "ok", 1, &[], t0());
    let before = serde_json::to_string(&file).unwrap();
    let cases: Vec<(NewTask, &str)> = vec![
        (
            NewTask {
                description: "  ".into(),
                priority: 1,
                ..Default::default()
            },
            "invalid description: it is empty",
        ),
        (
            NewTask {
                description: "x".into(),
                priority: 0,
                ..Default::default()
            },
            "invalid priority",
        ),
        (
            NewTask {
                description: "x".into(),
                priority: 1001,
                ..Default::default()
            },
            "invalid priority",
        ),
        (
            NewTask {
                description: "x\u{1b}[2J".into(),
                priority: 1,
                ..Default::default()
            },
            "control character U+001B",
        ),
        (
            NewTask {
                id: Some("../../etc".into()),
                description: "x".into(),
                priority: 1,
                ..Default::default()
            },
            "invalid task id",
        ),
        (
            NewTask {
                id: Some("task-1".into()),
                description: "x".into(),
                priority: 1,
                ..Default::default()
            },
            "already exists",
        ),
        (
            NewTask {
                description: "x".into(),
                priority: 1,
                dependencies: vec!["nope".into()],
                ..Default::default()
            },
            "unknown task \"nope\"",
        ),
        (
            NewTask {
                description: "x".into(),
                priority: 1,
                files: vec!["a\nb".into()],
                ..Default::default()
            },
            "not a usable file name",
        ),
    ];
    for (new, expected) in cases {
        let err = file.add_task(new, t0()).unwrap_err().to_string();
        assert!(
            err.contains(expected),
            "{err:?} should contain {expected:?}"
        );
    }
    assert_eq!(serde_json::to_string(&file).unwrap(), before);
}

#[test]
fn next_id_skips_past_the_highest_numbered_task() {
    let mut file = file_with(vec![]);
    file.add_task(
        NewTask {
            id: Some("task-41".into()),
            description: "x".into(),
            priority: 1,
            ..Default::default()
        },
        t0(),
    )
    .unwrap();
    file.add_task(
        NewTask {
            id: Some("custom".into()),
            description: "y".into(),
            priority: 1,
            ..Default::default()
        },
        t0(),
    )
    .unwrap();
    assert_eq!(add(&mut file, "z", 1, &[], t0()), "task-42");
}

#[test]
fn claim_picks_highest_priority_ready_task_oldest_first() {
    let mut file = file_with(vec![]);
    let low = add(&mut file, "low", 5, &[], t0());
    let older = add(&mut file, "older urgent", 1, &[], t0().after(secs(1)));
    let newer = add(&mut file, "newer urgent", 1, &[], t0().after(secs(2)));
    let now = t0().after(secs(10));
    assert_eq!(claimed_id(&mut file, "w1", now), Some(older));
    assert_eq!(claimed_id(&mut file, "w2", now), Some(newer));
    assert_eq!(claimed_id(&mut file, "w3", now), Some(low));
    assert_eq!(claimed_id(&mut file, "w4", now), None);
}

#[test]
fn claim_waits_for_dependencies_to_be_done() {
    let mut file = file_with(vec![]);
    let base = add(&mut file, "base", 5, &[], t0());
    let top = add(&mut file, "top", 1, &[&base], t0());
    let now = t0();
    assert_eq!(claimed_id(&mut file, "w1", now), Some(base.clone()));
    assert_eq!(
        claimed_id(&mut file, "w2", now),
        None,
        "top is blocked by base"
    );
    file.start("w1", &base, now, LEASE).unwrap();
    file.complete(
        "w1",
        &base,
        Completion {
            output: "ok".into(),
            ..Default::default()
        },
        now,
    )
    .unwrap();
    assert_eq!(claimed_id(&mut file, "w2", now), Some(top));
}

#[test]
fn claim_records_owner_lease_and_attempts() {
    let mut file = file_with(vec![]);
    add(&mut file, "a", 1, &[], t0());
    let claim = file
        .claim(&ClaimRequest::next("w1"), t0(), secs(60))
        .unwrap()
        .unwrap();
    assert_eq!(claim.task.status, TaskStatus::Claimed);
    assert_eq!(claim.task.claimed_by.as_deref(), Some("w1"));
    assert_eq!(claim.task.lease_expires_at, Some(t0().after(secs(60))));
    assert_eq!(claim.task.attempts, 1);
    assert_eq!(claim.reclaimed_from, None);
    assert!(file.agents["w1"].last_seen == Some(t0()));
}

#[test]
fn an_expired_lease_makes_the_task_claimable_by_another_worker() {
    let mut file = file_with(vec![]);
    let id = add(&mut file, "a", 1, &[], t0());
    file.claim(&ClaimRequest::next("dead"), t0(), secs(60))
        .unwrap();
    file.start("dead", &id, t0(), secs(60)).unwrap();
    assert!(
        file.claim(&ClaimRequest::next("w2"), t0().after(secs(59)), secs(60))
            .unwrap()
            .is_none()
    );
    let claim = file
        .claim(&ClaimRequest::next("w2"), t0().after(secs(60)), secs(60))
        .unwrap()
        .unwrap();
    assert_eq!(claim.task.id, id);
    assert_eq!(claim.reclaimed_from.as_deref(), Some("dead"));
    assert_eq!(claim.task.attempts, 2);
    assert_eq!(claim.task.started_at, None);
    // The dead worker's late report is refused and names the new owner.
    let err = file
        .start("dead", &id, t0().after(secs(61)), LEASE)
        .unwrap_err()
        .to_string();
    assert!(err.contains("claimed by w2, not by dead"), "{err}");
}

/// `id` claimed, started and completed by `agent` at `now`.
fn done_by(file: &mut TaskFile, agent: &str, id: &str, now: Timestamp) {
    file.claim(&ClaimRequest::task(agent, id), now, LEASE)
        .unwrap();
    file.start(agent, id, now, LEASE).unwrap();
    let report = Completion {
        output: "did it".into(),
        ..Default::default()
    };
    file.complete(agent, id, report, now).unwrap();
}

#[test]
fn a_task_sent_back_goes_to_its_worker_first_and_to_anyone_after_its_lease() {
    let mut file = file_with(vec![]);
    let reviewed = add(&mut file, "reviewed", 5, &[], t0());
    let urgent = add(&mut file, "urgent", 1, &[], t0());
    done_by(&mut file, "w1", &reviewed, t0());
    let sent = file
        .reopen(
            &reviewed,
            "Changes requested",
            Reopen::ToItsWorker,
            t0(),
            secs(60),
        )
        .unwrap();
    assert_eq!(sent.status, TaskStatus::Claimed);
    assert_eq!(sent.claimed_by.as_deref(), Some("w1"));
    assert!(sent.sent_back);
    assert!(sent.result.is_none());
    assert!(sent.context.hints.contains("Changes requested"));
    // A waiting worker looks again for it: its worker sees it claimable (another does not,
    // below).
    assert_eq!(
        file.outlook(Some("w1"), t0(), secs(60)),
        crate::outlook::Outlook::Claimable
    );
    // Another worker gets the next ready task, and is refused the held one by name.
    assert_eq!(claimed_id(&mut file, "w2", t0()), Some(urgent.clone()));
    assert_ne!(
        file.outlook(Some("w3"), t0(), secs(60)),
        crate::outlook::Outlook::Claimable
    );
    let err = file
        .claim(&ClaimRequest::task("w3", &reviewed), t0(), secs(60))
        .unwrap_err()
        .to_string();
    assert!(err.contains("lease is still running"), "{err}");
    // Its worker's next claim takes it before any better ready task, as its own.
    add(&mut file, "more urgent", 1, &[], t0());
    let claim = file
        .claim(&ClaimRequest::next("w1"), t0().after(secs(1)), secs(60))
        .unwrap()
        .unwrap();
    assert_eq!(claim.task.id, reviewed);
    assert_eq!(claim.reclaimed_from, None);
    assert!(!claim.task.sent_back);
    assert_eq!(claim.task.attempts, 2);

    // Sent back again, to a worker that does not come back: anyone may take it after the
    // lease, and the next claim of the first worker is an ordinary one.
    file.start("w1", &reviewed, t0().after(secs(1)), secs(60))
        .unwrap();
    let report = Completion {
        output: "changed".into(),
        ..Default::default()
    };
    file.complete("w1", &reviewed, report, t0().after(secs(2)))
        .unwrap();
    file.reopen(
        &reviewed,
        "Again",
        Reopen::ToItsWorker,
        t0().after(secs(2)),
        secs(60),
    )
    .unwrap();
    let late = t0().after(secs(62));
    let claim = file
        .claim(&ClaimRequest::task("w2", &reviewed), late, secs(60))
        .unwrap()
        .unwrap();
    assert_eq!(claim.reclaimed_from.as_deref(), Some("w1"));
    assert!(!claim.task.sent_back);
}

#[test]
fn a_task_sent_back_to_anyone_is_available_and_a_sent_back_task_released_is_too() {
    let mut file = file_with(vec![]);
    let a = add(&mut file, "a", 1, &[], t0());
    done_by(&mut file, "w1", &a, t0());
    let open = file
        .reopen(&a, "Changes", Reopen::ToAnyone, t0(), LEASE)
        .unwrap();
    assert_eq!(open.status, TaskStatus::Available);
    assert_eq!(open.claimed_by, None);
    assert!(!open.sent_back);
    assert_eq!(claimed_id(&mut file, "w2", t0()), Some(a.clone()));
    file.start("w2", &a, t0(), LEASE).unwrap();
    let report = Completion {
        output: "ok".into(),
        ..Default::default()
    };
    file.complete("w2", &a, report, t0()).unwrap();
    file.reopen(&a, "Once more", Reopen::ToItsWorker, t0(), LEASE)
        .unwrap();
    let released = file.release("w2", &a, t0()).unwrap();
    assert_eq!(released.status, TaskStatus::Available);
    assert!(!released.sent_back);
    // Only a done task is sent back.
    let err = file
        .reopen(&a, "no", Reopen::ToItsWorker, t0(), LEASE)
        .unwrap_err()
        .to_string();
    assert!(err.contains("only a done task"), "{err}");
}

#[test]
fn heartbeat_renews_only_the_agents_own_leases() {
    let mut file = file_with(vec![]);
    let a = add(&mut file, "a", 1, &[], t0());
    let b = add(&mut file, "b", 1, &[], t0());
    file.claim(&ClaimRequest::next("w1"), t0(), secs(60))
        .unwrap();
    file.claim(&ClaimRequest::next("w2"), t0(), secs(60))
        .unwrap();
    let renewed = file
        .heartbeat("w1", t0().after(secs(50)), secs(60))
        .unwrap();
    assert_eq!(renewed, vec![a.clone()]);
    let later = t0().after(secs(100));
    assert!(!file.task(&a).unwrap().lease_expired(later, LEASE));
    assert!(file.task(&b).unwrap().lease_expired(later, LEASE));
}

#[test]
fn a_worker_whose_task_was_taken_over_is_told_so_whatever_it_tries() {
    let mut file = file_with(vec![]);
    let id = add(&mut file, "a", 1, &[], t0());
    file.claim(&ClaimRequest::next("cc1"), t0(), secs(60))
        .unwrap();
    file.start("cc1", &id, t0(), secs(60)).unwrap();
    // cc1 sends no heartbeat; after its lease, thief takes the task over (claimed, not started).
    file.claim(&ClaimRequest::next("thief"), t0().after(secs(61)), secs(60))
        .unwrap()
        .unwrap();
    let now = t0().after(secs(62));
    let report = || Completion {
        output: "x".into(),
        ..Default::default()
    };
    let refusals = [
        file.clone().start("cc1", &id, now, LEASE).unwrap_err(),
        file.clone()
            .complete("cc1", &id, report(), now)
            .unwrap_err(),
        file.clone().fail("cc1", &id, "no", now).unwrap_err(),
        file.clone().release("cc1", &id, now).unwrap_err(),
    ];
    for (err, action) in refusals
        .iter()
        .zip(["start", "complete", "fail", "release"])
    {
        let err = err.to_string();
        assert!(
            err.starts_with(&format!(
                "cannot {action} task task-1: it is claimed by thief, not by cc1; if it was \
                 yours, your lease expired (no heartbeat in time) and it was taken over"
            )),
            "{err}"
        );
        assert!(
            err.contains("`baton discover \"…\" --agent cc1`, tell the lead"),
            "{err}"
        );
        assert!(!err.contains("start it first"), "{err}");
    }
    // Once the new holder has finished it, the refusal still says what happened.
    file.start("thief", &id, now, LEASE).unwrap();
    file.complete("thief", &id, report(), now).unwrap();
    let err = file
        .complete("cc1", &id, report(), now)
        .unwrap_err()
        .to_string();
    assert!(err.contains("it is done (owned by thief)"), "{err}");
    assert!(err.contains("it was taken over"), "{err}");
}

#[test]
fn only_legal_transitions_are_allowed_and_errors_name_status_and_owner() {
    let mut file = file_with(vec![]);
    let id = add(&mut file, "a", 1, &[], t0());
    let err = file.start("w1", &id, t0(), LEASE).unwrap_err().to_string();
    assert_eq!(
        err,
        "cannot start task task-1: it is available; claim it first with `baton worker claim w1 \
         --task task-1` (if you were working on it, your lease expired and it was released: \
         claiming it again goes on with it)"
    );
    file.claim(&ClaimRequest::next("w1"), t0(), LEASE).unwrap();
    let err = file
        .complete(
            "w1",
            &id,
            Completion {
                output: "x".into(),
                ..Default::default()
            },
            t0(),
        )
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "cannot complete task task-1: it is claimed (owned by w1); start it first with `baton worker start w1 task-1`"
    );
    let err = file.start("w2", &id, t0(), LEASE).unwrap_err().to_string();
    assert!(
        err.starts_with("cannot start task task-1: it is claimed by w1, not by w2"),
        "{err}"
    );
    file.start("w1", &id, t0(), LEASE).unwrap();
    let err = file.start("w1", &id, t0(), LEASE).unwrap_err().to_string();
    assert_eq!(
        err,
        "cannot start task task-1: it is in_progress (owned by w1); it is started already"
    );
    file.complete(
        "w1",
        &id,
        Completion {
            output: "x".into(),
            ..Default::default()
        },
        t0(),
    )
    .unwrap();
    let err = file.fail("w1", &id, "late", t0()).unwrap_err().to_string();
    assert_eq!(err, "cannot fail task task-1: it is done (owned by w1)");
    let err = file.reset(&id, t0(), LEASE, true).unwrap_err().to_string();
    assert!(err.contains("done tasks stay done"), "{err}");
}

#[test]
fn complete_records_the_result_and_clears_the_lease() {
    let mut file = file_with(vec![]);
    let id = add(&mut file, "a", 1, &[], t0());
    file.claim(&ClaimRequest::next("w1"), t0(), LEASE).unwrap();
    file.start("w1", &id, t0(), LEASE).unwrap();
    let report = Completion {
        output: "did it".into(),
        files_modified: vec!["src/a.rs".into()],
        files_created: vec!["src/b.rs".into()],
        branch: None,
    };
    let task = file
        .complete("w1", &id, report, t0().after(secs(5)))
        .unwrap();
    assert_eq!(task.status, TaskStatus::Done);
    assert_eq!(task.completed_at, Some(t0().after(secs(5))));
    assert_eq!(task.lease_expires_at, None);
    let result = task.result.as_ref().unwrap();
    assert_eq!(result.output.as_deref(), Some("did it"));
    assert_eq!(result.files_modified, ["src/a.rs"]);
    assert_eq!(result.files_created, ["src/b.rs"]);
}

#[test]
fn fail_then_reset_makes_the_task_claimable_again() {
    let mut file = file_with(vec![]);
    let id = add(&mut file, "a", 1, &[], t0());
    file.claim(&ClaimRequest::next("w1"), t0(), LEASE).unwrap();
    let failed = file.fail("w1", &id, "compiler exploded", t0()).unwrap();
    assert_eq!(failed.status, TaskStatus::Failed);
    assert_eq!(failed.failure_reason.as_deref(), Some("compiler exploded"));
    assert_eq!(claimed_id(&mut file, "w2", t0()), None);
    let reset = file.reset(&id, t0(), LEASE, false).unwrap();
    assert_eq!(reset.status, TaskStatus::Available);
    assert_eq!(reset.failure_reason, None);
    assert_eq!(reset.claimed_by, None);
    assert_eq!(claimed_id(&mut file, "w2", t0()), Some(id));
}

#[test]
fn reset_of_a_live_claim_needs_force_but_a_stale_one_does_not() {
    let mut file = file_with(vec![]);
    let id = add(&mut file, "a", 1, &[], t0());
    file.claim(&ClaimRequest::next("w1"), t0(), secs(60))
        .unwrap();
    let err = file
        .reset(&id, t0().after(secs(10)), secs(60), false)
        .unwrap_err()
        .to_string();
    assert!(err.contains("50s left on its lease"), "{err}");
    file.reset(&id, t0().after(secs(60)), secs(60), false)
        .unwrap();
    file.claim(&ClaimRequest::next("w1"), t0(), secs(60))
        .unwrap();
    file.reset(&id, t0(), secs(60), true).unwrap();
    let err = file
        .reset(&id, t0(), secs(60), false)
        .unwrap_err()
        .to_string();
    assert!(err.contains("it can be claimed already"), "{err}");
}

#[test]
fn release_returns_a_held_task_to_the_queue() {
    let mut file = file_with(vec![]);
    let id = add(&mut file, "a", 1, &[], t0());
    file.claim(&ClaimRequest::next("w1"), t0(), LEASE).unwrap();
    assert!(file.release("w2", &id, t0()).is_err());
    let task = file.release("w1", &id, t0()).unwrap();
    assert_eq!(
        (task.status, task.claimed_by.clone()),
        (TaskStatus::Available, None)
    );
}

#[test]
fn unknown_ids_and_bad_agent_names_are_refused() {
    let mut file = file_with(vec![]);
    let err = file
        .start("w1", "task-9", t0(), LEASE)
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "no task with id \"task-9\"; `baton leader status` lists the tasks"
    );
    let err = file
        .claim(&ClaimRequest::next("../w1"), t0(), LEASE)
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("invalid agent id \"../w1\""), "{err}");
}

#[test]
fn edit_changes_fields_and_refuses_cycles_or_late_dependency_changes() {
    let mut file = file_with(vec![]);
    let a = add(&mut file, "a", 1, &[], t0());
    let b = add(&mut file, "b", 1, &[&a], t0());
    let edited = file
        .edit_task(
            &a,
            TaskEdit {
                description: Some("A!".into()),
                priority: Some(3),
                hints: Some("h".into()),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(
        (
            edited.description.as_str(),
            edited.priority,
            edited.context.hints.as_str()
        ),
        ("A!", 3, "h")
    );
    let err = file
        .edit_task(
            &a,
            TaskEdit {
                dependencies: Some(vec![b.clone()]),
                ..Default::default()
            },
        )
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "dependencies would form a cycle: task-1 -> task-2 -> task-1"
    );
    // Re-stating the same dependencies is fine; changing them after a claim is not.
    file.edit_task(
        &b,
        TaskEdit {
            dependencies: Some(vec![]),
            ..Default::default()
        },
    )
    .unwrap();
    file.claim(&ClaimRequest::next("w1"), t0(), LEASE).unwrap();
    let claimed = file
        .tasks
        .iter()
        .find(|t| t.status == TaskStatus::Claimed)
        .unwrap()
        .id
        .clone();
    let err = file
        .edit_task(
            &claimed,
            TaskEdit {
                dependencies: Some(vec!["x".into()]),
                ..Default::default()
            },
        )
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("cannot change the dependencies of"),
        "{err}"
    );
}

/// A task's acceptance is kept as written (trimmed), changed by an edit, removed by an empty
/// one, and bounded like the hints.
#[test]
fn a_tasks_acceptance_is_kept_changed_and_removed_and_refused_when_too_long() {
    let mut file = file_with(vec![]);
    let added = file
        .add_task(
            NewTask {
                description: "judged".into(),
                acceptance: Some("  `cargo test` passes  ".into()),
                ..NewTask::default()
            },
            t0(),
        )
        .unwrap()
        .clone();
    assert_eq!(added.acceptance.as_deref(), Some("`cargo test` passes"));
    let text = serde_json::to_value(&added).unwrap();
    assert_eq!(text["acceptance"], "`cargo test` passes");
    let edit = |acceptance: &str| TaskEdit {
        acceptance: Some(acceptance.into()),
        ..Default::default()
    };
    let changed = file.edit_task(&added.id, edit("the page loads")).unwrap();
    assert_eq!(changed.acceptance.as_deref(), Some("the page loads"));
    let removed = file.edit_task(&added.id, edit(" ")).unwrap();
    assert_eq!(removed.acceptance, None);
    assert!(
        serde_json::to_value(removed)
            .unwrap()
            .get("acceptance")
            .is_none(),
        "tasks.json keeps its schema for a task without one"
    );
    let long = "x".repeat(crate::text::MAX_TEXT_BYTES + 1);
    let err = file.edit_task(&added.id, edit(&long)).unwrap_err();
    assert!(err.to_string().contains("acceptance"), "{err}");
    assert_eq!(file.task(&added.id).unwrap().acceptance, None, "unchanged");
}

/// A proposed task (a plan's) is on the board but never claimed, not even by name; approving
/// makes it available. It may be edited (its dependencies too) and cancelled meanwhile, and is
/// neither reset nor approved twice.
#[test]
fn a_proposed_task_is_claimed_only_once_approved() {
    let mut file = file_with(vec![]);
    let planned = |description: &str| NewTask {
        description: description.into(),
        proposed: true,
        ..NewTask::default()
    };
    let a = file.add_task(planned("a"), t0()).unwrap().id.clone();
    let b = file.add_task(planned("b"), t0()).unwrap().id.clone();
    assert_eq!(file.task(&a).unwrap().status, TaskStatus::Proposed);
    assert_eq!(claimed_id(&mut file, "w1", t0()), None, "nothing is ready");
    let named = file.claim(&ClaimRequest::task("w1", &a), t0(), DEFAULT_LEASE);
    assert!(named.is_err(), "{named:?}");
    file.edit_task(
        &b,
        TaskEdit {
            dependencies: Some(vec![a.clone()]),
            ..Default::default()
        },
    )
    .unwrap();
    let reset = file.reset(&a, t0(), DEFAULT_LEASE, true).unwrap_err();
    assert!(reset.to_string().contains("approve it"), "{reset}");
    assert_eq!(
        file.approve(&a).unwrap().status,
        TaskStatus::Available,
        "approved"
    );
    assert!(file.approve(&a).is_err(), "approved once");
    assert_eq!(
        claimed_id(&mut file, "w1", t0()).as_deref(),
        Some(a.as_str())
    );
    file.cancel(&b, Some("not in the plan after all"), t0())
        .unwrap();
    assert_eq!(file.task(&b).unwrap().status, TaskStatus::Cancelled);
}
