//! Boards for this crate's unit tests, as the folder writes them.

use baton_core::{NewTask, TaskFile, Timestamp};

/// A board of `n` tasks (every third depending on the one before, descriptions with escapes
/// and non-ASCII text, a file and hints each), and its bytes.
pub fn board(n: usize) -> (TaskFile, Vec<u8>) {
    let now = Timestamp::now();
    let mut file = TaskFile::new(now);
    for i in 1..=n {
        file.add_task(
            NewTask {
                description: format!("part {i} — with \"quotes\" and ünïcode"),
                priority: 1 + (i % 3) as u32,
                dependencies: match i % 3 {
                    0 => vec![format!("task-{}", i - 1)],
                    _ => vec![],
                },
                files: vec![format!("src/part_{i}.rs")],
                hints: "read the module first".into(),
                ..NewTask::default()
            },
            now,
        )
        .unwrap();
    }
    let bytes = crate::encode(&file).unwrap();
    (file, bytes)
}
