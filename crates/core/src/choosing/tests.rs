use std::time::Duration;

use baton_test_support::Dice;
use serde_json::json;

use crate::model::{Task, TaskFile, TaskKind, TaskStatus};
use crate::requests::{ClaimRequest, Completion, DEFAULT_LEASE, Files, NewTask, Reopen};
use crate::reservations::NewReservation;
use crate::testing::t0;
use crate::time::Timestamp;

const LEASE: Duration = DEFAULT_LEASE;
const AGENTS: [&str; 3] = ["w1", "w2", "w3"];

/// One of the agents, at random.
fn any_agent(dice: &mut Dice) -> &'static str {
    AGENTS[dice.roll(AGENTS.len())]
}

/// A board made by random operations of the core's own (adds with dependencies and files,
/// claims, starts, completions, failures, resets, cancels, sent-back reviews, reservations),
/// spread over two lease lengths so some holds have expired by the end.
fn random_board(seed: u64) -> (TaskFile, Timestamp) {
    let mut dice = Dice(seed);
    let mut file = TaskFile::new(t0());
    let mut now = t0();
    for _ in 0..60 {
        now = now.after(Duration::from_secs(dice.roll(240) as u64));
        let ids: Vec<String> = file.tasks.iter().map(|t| t.id.clone()).collect();
        let some_id = |dice: &mut Dice| ids.get(dice.roll(ids.len().max(1))).cloned();
        // Mostly one in `status` (an operation on a task in another is refused).
        let one_in = |dice: &mut Dice, status: TaskStatus| {
            let fit: Vec<&Task> = file.tasks.iter().filter(|t| t.status == status).collect();
            match fit.is_empty() || dice.roll(4) == 0 {
                true => some_id(dice),
                false => Some(fit[dice.roll(fit.len())].id.clone()),
            }
        };
        // Mostly its holder's (a start or a completion by anyone else is refused).
        let holder =
            |dice: &mut Dice, id: &str| match file.task(id).and_then(|t| t.claimed_by.clone()) {
                Some(holder) if dice.roll(4) > 0 => holder,
                _ => any_agent(dice).to_string(),
            };
        let agent = any_agent(&mut dice);
        let _ = match dice.roll(12) {
            0..=1 => {
                let dependencies = match (dice.roll(3), some_id(&mut dice)) {
                    (0, Some(dep)) => vec![dep],
                    _ => vec![],
                };
                let files = match dice.roll(3) {
                    0 => vec![],
                    1 => vec![format!("src/{}.rs", dice.roll(4))],
                    _ => vec!["src/**".to_string()],
                };
                let kind = match dice.roll(8) {
                    0 => TaskKind::Plan,
                    _ => TaskKind::Work,
                };
                file.add_task(
                    NewTask {
                        description: format!("step {}", ids.len()),
                        priority: 1 + dice.roll(5) as u32,
                        dependencies,
                        files,
                        hints: "hints".into(),
                        acceptance: Some("it works".into()),
                        proposed: dice.roll(10) == 0,
                        kind,
                        ..NewTask::default()
                    },
                    now,
                )
                .map(drop)
            }
            2..=4 => file.claim(&ClaimRequest::next(agent), now, LEASE).map(drop),
            5 => match one_in(&mut dice, TaskStatus::Claimed) {
                Some(id) => {
                    let agent = holder(&mut dice, &id);
                    file.start(&agent, &id, now, LEASE).map(drop)
                }
                None => Ok(()),
            },
            6 => match one_in(&mut dice, TaskStatus::InProgress) {
                Some(id) => {
                    let agent = holder(&mut dice, &id);
                    let done = Completion {
                        output: "done".into(),
                        ..Completion::default()
                    };
                    file.complete(&agent, &id, done, now).map(drop)
                }
                None => Ok(()),
            },
            7 => match some_id(&mut dice) {
                Some(id) => file.fail(agent, &id, "broke", now).map(drop),
                None => Ok(()),
            },
            8 => match one_in(&mut dice, TaskStatus::Done) {
                Some(id) => match dice.roll(3) {
                    0 => file.reset(&id, now, LEASE, true).map(drop),
                    1 => file.cancel(&id, None, now).map(drop),
                    _ => file
                        .reopen(&id, "again", Reopen::ToItsWorker, now, LEASE)
                        .map(drop),
                },
                None => Ok(()),
            },
            _ => file
                .reserve(
                    NewReservation {
                        agent: agent.to_string(),
                        paths: vec![format!("src/{}.rs", dice.roll(4))],
                        task: None,
                        shared: dice.roll(3) == 0,
                        ttl: None,
                        reason: None,
                    },
                    now,
                    LEASE,
                )
                .map(drop),
        };
    }
    // As another tool may have left it: in any order (the oldest is not always first), and
    // some holds without a lease (the source design wrote none).
    let mut tasks: Vec<Task> = file.tasks.to_vec();
    for i in (1..tasks.len()).rev() {
        tasks.swap(i, dice.roll(i + 1));
    }
    for task in &mut tasks {
        if dice.roll(3) == 0 {
            task.lease_expires_at = None;
        }
    }

    file.tasks = tasks.into();
    (file, now)
}

/// The board as a store reading for choosing (or adding) has it: each task read from its JSON
/// with `read` ([`Task::read_for_choosing`]), everything else as it was.
fn skimmed(file: &TaskFile, read: fn(&str) -> serde_json::Result<Task>) -> TaskFile {
    let mut skimmed = file.clone();
    skimmed.tasks = file
        .tasks
        .iter()
        .map(|t| read(&serde_json::to_string(t).unwrap()).unwrap())
        .collect::<Vec<_>>()
        .into();
    skimmed
}

#[test]
fn a_board_read_for_choosing_chooses_as_the_whole_board() {
    let mut compared = 0;
    let mut chosen = 0;
    for seed in 1..=200u64 {
        let (file, end) = random_board(seed * 7919);
        let skimmed = skimmed(&file, Task::read_for_choosing);
        // Now, and once every lease has run out.
        for now in [end, end.after(LEASE * 2)] {
            for agent in AGENTS {
                for files in [Files::Respect, Files::Ignore] {
                    let request = ClaimRequest::next(agent).files(files);
                    let whole = file.choose(&request, now, LEASE).unwrap();
                    let read = skimmed.choose(&request, now, LEASE).unwrap();
                    assert_eq!(whole, read, "seed {seed}, {agent}, {files:?}");
                    compared += 1;
                    chosen += usize::from(whole.is_some());
                }
            }
        }
    }
    // The boards are varied enough that both answers are common.
    assert!(
        chosen > compared / 4 && chosen < compared * 19 / 20,
        "{chosen} of {compared}"
    );
}

#[test]
fn what_choosing_does_not_read_is_left_empty_and_what_it_reads_is_checked() {
    let text = json!({
        "id": "t1", "description": "Write it", "status": "claimed", "priority": 2,
        "claimed_by": "w1", "dependencies": ["t0"], "owner": "legacy",
        "context": {"files": ["src/a.rs"], "hints": ["one", "two"], "why": 1},
        "result": {"output": "x"}, "created_at": "2026-01-01T00:00:00Z",
        "claimed_at": "2026-01-01T00:01:00Z", "lease_expires_at": "2026-01-01T00:31:00Z",
        "sent_back": true, "kind": "plan", "acceptance": "tests pass", "attempts": 3,
    })
    .to_string();
    let task = Task::read_for_choosing(&text).unwrap();
    assert_eq!(
        (task.id.as_str(), task.priority, task.claimed_by.as_deref()),
        ("t1", 2, Some("w1"))
    );
    assert_eq!(task.dependencies, ["t0"]);
    assert_eq!(task.context.files, ["src/a.rs"]);
    assert!(task.sent_back && task.kind == TaskKind::Plan);
    assert!(task.lease_expires_at.is_some() && task.claimed_at.is_some());
    assert!(task.description.is_empty() && task.result.is_none() && task.extra.is_empty());
    assert!(task.context.hints.is_empty() && task.acceptance.is_none() && task.attempts == 0);
    // What it reads is read as a whole read reads it: refused when wrong.
    for wrong in [
        r#"{"id": "t1", "status": "waiting"}"#,
        r#"{"id": "t1", "status": "available", "priority": "high"}"#,
        r#"{"id": "t1", "id": "t2", "status": "available"}"#,
        r#"{"status": "available"}"#,
        r#"{"id": "t1", "status": "available", "context": {"files": "a.rs"}}"#,
        r#"{"id": "t1", "status": "available""#,
    ] {
        assert!(Task::read_for_choosing(wrong).is_err(), "{wrong}");
    }
    // Nulls the source design writes read as empty.
    let nulls = r#"{"id": "t1", "status": "available", "dependencies": null, "context": null}"#;
    assert!(
        Task::read_for_choosing(nulls)
            .unwrap()
            .dependencies
            .is_empty()
    );
}

#[test]
fn a_board_read_for_adding_adds_as_the_whole_board() {
    let mut added = 0;
    let mut refused = 0;
    for seed in 1..=100u64 {
        let (file, now) = random_board(seed * 7919);
        let skimmed = skimmed(&file, Task::read_for_adding);
        let ids: Vec<&str> = file.tasks.iter().map(|t| t.id.as_str()).collect();
        let some = |at: usize| ids.get(at % ids.len().max(1)).map(|id| id.to_string());
        let news = [
            NewTask::default(),
            NewTask {
                dependencies: some(seed as usize).into_iter().chain(some(3)).collect(),
                ..NewTask::default()
            },
            NewTask {
                id: some(seed as usize),
                ..NewTask::default()
            },
            NewTask {
                id: Some(format!("new-{seed}")),
                dependencies: vec!["no-such-task".into()],
                ..NewTask::default()
            },
        ];
        for new in news {
            let new = NewTask {
                description: "Added".into(),
                ..new
            };
            let whole = file
                .clone()
                .add_task(new.clone(), now)
                .map(|t| t.id.clone());
            let read = skimmed.clone().add_task(new, now).map(|t| t.id.clone());
            assert_eq!(format!("{whole:?}"), format!("{read:?}"), "seed {seed}");
            added += usize::from(whole.is_ok());
            refused += usize::from(whole.is_err());
        }
    }
    assert!(
        added > 100 && refused > 100,
        "{added} added, {refused} refused"
    );
}

#[test]
fn adding_reads_ids_and_dependencies_and_refuses_as_a_whole_read() {
    let text = json!({
        "id": "t1", "description": "Write it", "status": "claimed", "priority": 2,
        "dependencies": ["t0"], "context": {"files": ["src/a.rs"]}, "result": {"output": "x"},
    })
    .to_string();
    let task = Task::read_for_adding(&text).unwrap();
    assert_eq!(
        (task.id.as_str(), task.dependencies.as_slice()),
        ("t1", &["t0".to_string()][..])
    );
    assert!(task.description.is_empty() && task.result.is_none() && task.context.files.is_empty());
    for wrong in [
        r#"{"id": "t1", "id": "t2"}"#,
        r#"{"status": "available"}"#,
        r#"{"id": 7}"#,
        r#"{"id": "t1", "dependencies": "t0"}"#,
        r#"{"id": "t1""#,
    ] {
        assert!(Task::read_for_adding(wrong).is_err(), "{wrong}");
        assert!(serde_json::from_str::<Task>(wrong).is_err(), "{wrong}");
    }
    let nulls = r#"{"id": "t1", "dependencies": null}"#;
    assert!(
        Task::read_for_adding(nulls)
            .unwrap()
            .dependencies
            .is_empty()
    );
}
