//! Boards for this crate's unit tests, as the folder writes them.

use baton_core::{NewTask, TaskFile, Timestamp};

/// A board of `n` tasks (every third depending on the one before, descriptions with escapes
/// and non-ASCII text, a file and hints each), and its bytes in Baton's layout (a task a line).
pub fn board(n: usize) -> (TaskFile, Vec<u8>) {
    let file = tasks(n);
    let bytes = crate::encode(&file).unwrap();
    (file, bytes)
}

/// [`board`] laid out as pretty JSON, as the source design's tool and earlier versions of Baton
/// write it.
pub fn pretty_board(n: usize) -> (TaskFile, Vec<u8>) {
    let file = tasks(n);
    let mut bytes = serde_json::to_vec_pretty(&file).unwrap();
    bytes.push(b'\n');
    (file, bytes)
}

/// How a member's name and value are apart in `text`: `": "` when it is pretty JSON.
pub fn colon(text: &str) -> &'static str {
    if text.contains("\n      \"id\": ") {
        "\": "
    } else {
        "\":"
    }
}

/// The board of [`board`].
fn tasks(n: usize) -> TaskFile {
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
    file
}

/// `text` (a board of [`pretty_board`]) with a list of objects in its first task laid out by hand as
/// tasks are, so that the task's text is found cut in two.
pub fn with_objects_laid_out_as_tasks(text: &str) -> String {
    let laid_out = text.replacen(
        "\"dependencies\": [],",
        "\"x_notes\": [\n        {\n          \"a\": 1\n    },\n    {\n          \"b\": 2\n        }\n      ],\n      \"dependencies\": [],",
        1,
    );
    assert_ne!(laid_out, text, "a task without dependencies to lay out");
    laid_out
}
