//! Tasks for benchmarks, written straight into a folder project's `tasks.json` (adding them
//! one by one would time the adds, not what a benchmark measures): the rows
//! `baton_test_support::pg::insert_tasks` gives a database project.

#![allow(dead_code)] // each benchmark takes the boards it needs

/// `tasks.json` with `n` available tasks `task-1` … `task-N`, priorities 1 to 5, a file each.
pub fn folder_tasks(n: usize) -> Vec<u8> {
    use baton_core::NewTask;
    use baton_core::{TaskFile, Timestamp};
    let mut file = TaskFile::new(Timestamp::now());
    for i in 1..=n {
        file.add_task(
            NewTask {
                description: format!("Implement part {i} of the feature, with tests and docs"),
                priority: 1 + (i % 5) as u32,
                files: vec![format!("src/part_{i}.rs")],
                ..NewTask::default()
            },
            Timestamp::now(),
        )
        .unwrap();
    }
    baton_folder::encode(&file).unwrap()
}

/// A board of `landed` tasks done hours ago (each with its result) and `live` available ones
/// after them, every tenth depending on the one before: a project of the previous version
/// before its first command archives the landed ones.
pub fn landed_and_live(landed: usize, live: usize) -> baton_core::TaskFile {
    use serde_json::{Value, json};
    let hours_ago = "2026-01-01T09:00:00Z";
    let tasks: Vec<Value> = (1..=landed + live)
        .map(|i| {
            let done = i <= landed;
            json!({
                "id": format!("task-{i}"),
                "description": format!("Implement part {i} of the feature, with tests and docs"),
                "status": if done { "done" } else { "available" },
                "priority": 1 + (i % 5),
                "claimed_by": if done { json!("w1") } else { Value::Null },
                "dependencies": if i > 1 && i % 10 == 0 { json!([format!("task-{}", i - 1)]) } else { json!([]) },
                "context": {"files": [format!("src/part_{i}.rs")], "hints": "Follow the existing module layout"},
                "result": if done { json!({"output": format!("part {i} written, tests pass"), "files_modified": [format!("src/part_{i}.rs")], "files_created": []}) } else { Value::Null },
                "created_at": hours_ago,
                "claimed_at": if done { json!(hours_ago) } else { Value::Null },
                "completed_at": if done { json!(hours_ago) } else { Value::Null },
            })
        })
        .collect();
    serde_json::from_value(json!({
        "version": "1.0", "created_at": hours_ago, "last_updated": hours_ago, "tasks": tasks,
    }))
    .unwrap()
}
