//! Builders shared by this crate's unit tests.

use crate::model::{Task, TaskFile, TaskStatus};
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
    file.tasks = tasks;
    file
}
