//! Tasks for benchmarks, written straight into a folder project's `tasks.json` (adding them
//! one by one would time the adds, not what a benchmark measures): the rows
//! `baton_test_support::pg::insert_tasks` gives a database project.

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
