//! Builders shared by this crate's unit tests.

use std::time::Duration;

use baton_test_support::Dice;

use crate::model::{Task, TaskFile, TaskKind, TaskStatus};
use crate::requests::{ClaimRequest, Completion, DEFAULT_LEASE, NewTask, Reopen};
use crate::reservations::NewReservation;
use crate::time::Timestamp;

pub fn t0() -> Timestamp {
    Timestamp::parse("2026-01-01T00:00:00Z").unwrap()
}

pub fn task(id: &str, status: TaskStatus, deps: &[&str]) -> Task {
    serde_json::from_value(serde_json::json!({
        "id": id,
        "description": format!("do {id}"),
        "status": status,
        "dependencies": deps,
        "created_at": t0().to_string(),
    }))
    .unwrap()
}

pub fn file_with(tasks: Vec<Task>) -> TaskFile {
    let mut file = TaskFile::new(t0());
    file.tasks = tasks.into();
    file
}

/// Documents in memory, held by one mutex (the stores' own suites test the real holds).
#[derive(Default)]
pub struct MemoryDocuments(std::sync::Mutex<std::collections::BTreeMap<String, serde_json::Value>>);

impl crate::documents::DocumentStore for MemoryDocuments {
    fn read_document(&self, name: &str) -> crate::Result<Option<serde_json::Value>> {
        Ok(self.0.lock().unwrap().get(name).cloned())
    }

    fn documents_in(&self, folder: &str) -> crate::Result<Vec<(String, serde_json::Value)>> {
        let prefix = format!("{folder}/");
        let docs = self.0.lock().unwrap();
        Ok(docs
            .iter()
            .filter(|(name, _)| name.starts_with(&prefix))
            .map(|(name, value)| (name.clone(), value.clone()))
            .collect())
    }

    fn document_names_in(&self, folder: &str) -> crate::Result<Vec<String>> {
        Ok(self
            .documents_in(folder)?
            .into_iter()
            .map(|(name, _)| name)
            .collect())
    }

    fn change_document(
        &self,
        name: &str,
        change: &mut dyn FnMut(
            Option<serde_json::Value>,
            Timestamp,
        ) -> crate::Result<Option<serde_json::Value>>,
    ) -> crate::Result<()> {
        let mut docs = self.0.lock().unwrap();
        if let Some(value) = change(docs.get(name).cloned(), Timestamp::now())? {
            docs.insert(name.to_string(), value);
        }
        Ok(())
    }
}

/// The lease of the random boards' claims.
const LEASE: Duration = DEFAULT_LEASE;

pub const AGENTS: [&str; 3] = ["w1", "w2", "w3"];

/// One of the agents, at random.
fn any_agent(dice: &mut Dice) -> &'static str {
    AGENTS[dice.roll(AGENTS.len())]
}

/// A board made by random operations of the core's own (adds with dependencies and files,
/// claims, starts, completions, failures, resets, cancels, sent-back reviews, reservations),
/// spread over two lease lengths so some holds have expired by the end.
pub fn random_board(seed: u64) -> (TaskFile, Timestamp) {
    random_board_after(seed, 60)
}

/// [`random_board`] after its first `steps` operations (of the same seed, each board is the
/// next one's start, but for its order).
pub fn random_board_after(seed: u64, steps: usize) -> (TaskFile, Timestamp) {
    let mut dice = Dice(seed);
    let mut file = TaskFile::new(t0());
    let mut now = t0();
    for _ in 0..steps {
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
