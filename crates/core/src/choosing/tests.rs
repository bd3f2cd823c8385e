use std::time::Duration;

use serde_json::json;

use crate::model::{Task, TaskFile, TaskKind};
use crate::requests::{ClaimRequest, DEFAULT_LEASE, Files, NewTask};
use crate::testing::{AGENTS, random_board};

const LEASE: Duration = DEFAULT_LEASE;
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
