use super::*;
use baton_core::{ClaimRequest, Completion, NewTask, Timestamp};
use serde_json::Value;
use std::time::Duration;

const LEASE: Duration = Duration::from_secs(900);

type Change = Box<dyn FnOnce(&mut TaskFile)>;

use crate::test_boards::{board, pretty_board};

fn read(bytes: &[u8]) -> TaskFile {
    serde_json::from_slice(bytes).unwrap()
}

/// Applies `change` to the board read from `bytes`; returns the rewritten bytes, checked to
/// read back as the board the change left (encoded whole, the same bytes).
fn rewritten(bytes: &[u8], change: impl FnOnce(&mut TaskFile)) -> Vec<u8> {
    let mut file = read(bytes);
    change(&mut file);
    let out = encode_after(&mut file, bytes).unwrap().to_vec();
    let whole = encode(&file).unwrap();
    serde_json::from_slice::<Value>(&out).expect("JSON");
    assert_eq!(
        String::from_utf8(encode(&read(&out)).unwrap()).unwrap(),
        String::from_utf8(whole).unwrap()
    );
    out
}

#[test]
fn a_change_of_one_task_is_byte_for_byte_the_whole_board_encoded() {
    let (_, bytes) = board(50);
    let now = Timestamp::now();
    let changes: Vec<Change> = vec![
        Box::new(move |f| drop(f.claim(&ClaimRequest::next("w1"), now, LEASE).unwrap())),
        Box::new(move |f| {
            f.claim(&ClaimRequest::task("w1", "task-50"), now, LEASE)
                .unwrap();
            f.start("w1", "task-50", now, LEASE).unwrap();
            let report = Completion {
                output: "done".into(),
                ..Completion::default()
            };
            f.complete("w1", "task-50", report, now).unwrap();
        }),
        Box::new(move |f| drop(f.heartbeat("w1", now, LEASE).unwrap())),
        Box::new(move |f| {
            f.add_task(
                NewTask {
                    description: "one more".into(),
                    ..NewTask::default()
                },
                now,
            )
            .unwrap();
        }),
    ];
    for change in changes {
        let out = rewritten(&bytes, change);
        assert_eq!(out, encode(&read(&out)).unwrap());
    }
}

#[test]
fn tasks_left_alone_keep_their_text_as_it_was() {
    // Written by another tool: pretty JSON, a null list, an unknown field, escaped text.
    let (_, bytes) = pretty_board(3);
    let text = String::from_utf8(bytes).unwrap().replacen(
        "\"dependencies\": [],",
        "\"dependencies\": null,\n      \"x_other_tool\": \"\\u00e9\",",
        1,
    );
    let first = &text[text.find("    {").unwrap()..text.find("\n    },").unwrap() + 6];
    assert!(first.contains("null"));
    let now = Timestamp::now();
    let out = rewritten(text.as_bytes(), |f| {
        f.claim(&ClaimRequest::task("w1", "task-2"), now, LEASE)
            .unwrap();
    });
    let out = String::from_utf8(out).unwrap();
    assert!(out.contains(first), "task-1 copied as it was");
    assert_eq!(
        read(out.as_bytes()).tasks[1].claimed_by.as_deref(),
        Some("w1")
    );
    // The task changed is on a line of its own, found as such with those copied around it.
    assert!(out.contains("\n    {\"id\":\"task-2\","), "{out}");
    let spans = task_spans(out.as_bytes()).expect("both layouts in one list");
    assert_eq!(spans.len(), 3);
    assert_eq!(
        &out[spans[0].clone()],
        first.trim_start().trim_end_matches(',')
    );
}

#[test]
fn other_layouts_and_wholesale_changes_are_encoded_whole() {
    let (file, pretty) = board(4);
    let compact = serde_json::to_vec(&file).unwrap();
    let four = {
        let mut out = Vec::new();
        let formatter = serde_json::ser::PrettyFormatter::with_indent(b"    ");
        let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
        serde::Serialize::serialize(&file, &mut ser).unwrap();
        out
    };
    let crlf = String::from_utf8(pretty.clone())
        .unwrap()
        .replace('\n', "\r\n")
        .into_bytes();
    let now = Timestamp::now();
    for bytes in [compact, four, crlf] {
        assert!(task_spans(&bytes).is_none());
        let out = rewritten(&bytes, |f| {
            f.claim(&ClaimRequest::next("w1"), now, LEASE).unwrap();
        });
        assert_eq!(out, encode(&read(&out)).unwrap());
    }
    // Every task changed, or the list reordered: nothing to copy.
    rewritten(&pretty, |f| f.tasks.reverse());
    rewritten(&pretty, |f| drop(f.tasks.remove(1)));
}

#[test]
fn the_task_spans_are_each_task_s_text() {
    for (file, bytes) in [board(3), pretty_board(3)] {
        let spans = task_spans(&bytes).unwrap();
        assert_eq!(spans.len(), 3);
        for (span, task) in spans.iter().zip(file.tasks.iter()) {
            let one: baton_core::Task = serde_json::from_slice(&bytes[span.clone()]).unwrap();
            assert_eq!(one.id, task.id);
        }
    }
    let empty = encode(&TaskFile::new(Timestamp::now())).unwrap();
    assert_eq!(task_spans(&empty), Some(vec![]));
    // Pretty JSON: a task cut short is not the layout.
    let pretty = String::from_utf8(pretty_board(3).1).unwrap();
    assert!(task_spans(pretty.replacen("\n    },", "\n", 1).as_bytes()).is_none());
    // Anything between the tasks, or a comma missing or too many, is in neither layout:
    // between two tasks there is nothing but the comma (a claim copies it with them).
    let lines = String::from_utf8(board(3).1).unwrap();
    for (text, close) in [(&pretty, "\n    }"), (&lines, "}")] {
        for odd in [
            text.replacen(
                &format!("{close},\n"),
                &format!("{close},\n      \"stray\": 1,\n"),
                1,
            ),
            text.replacen(&format!("{close},\n"), &format!("{close}\n"), 1),
            text.replacen(&format!("{close}\n  ]"), &format!("{close},\n  ]"), 1),
            text.replacen(&format!("{close},\n"), &format!("{close},\n\n"), 1),
        ] {
            assert_ne!(&odd, text);
            assert!(task_spans(odd.as_bytes()).is_none(), "{odd}");
        }
    }
    // A line that opens a task and does not close it is not one.
    let open = lines.replacen("},\n    {", ",\n    {", 1);
    assert!(task_spans(open.as_bytes()).is_none(), "{open}");
}

#[test]
fn a_task_s_text_is_never_copied_for_another() {
    // A list of objects inside task 1, laid out by hand as tasks are: four spans are found
    // for three tasks; with a task added, the counts agree but the texts are not the tasks'.
    let (_, bytes) = pretty_board(3);
    let text =
        crate::test_boards::with_objects_laid_out_as_tasks(&String::from_utf8(bytes).unwrap());
    assert_eq!(task_spans(text.as_bytes()).map(|s| s.len()), Some(4));
    let out = rewritten(text.as_bytes(), |f| {
        f.add_task(
            NewTask {
                description: "four".into(),
                ..NewTask::default()
            },
            Timestamp::now(),
        )
        .unwrap();
    });
    let written = read(&out);
    assert_eq!(written.tasks.len(), 4);
    assert_eq!(written.tasks[0].extra["x_notes"][1]["b"], 2);
    assert_eq!(written.tasks[1].id, "task-2");
}

#[test]
fn a_claim_is_written_as_the_text_read_around_the_one_task_encoded() {
    let (_, bytes) = board(200);
    let mut file = read(&bytes);
    let now = Timestamp::now();
    file.claim(&ClaimRequest::task("w1", "task-100"), now, LEASE)
        .unwrap();
    let pieces = encode_after(&mut file, &bytes).unwrap();
    // The header, the 99 tasks before (one run), the task, the 100 after, the end.
    let slices = pieces.slices();
    assert_eq!(
        slices.len(),
        5,
        "{:?}",
        slices.iter().map(|s| s.len()).collect::<Vec<_>>()
    );
    let copied = slices
        .iter()
        .filter(|s| bytes.windows(s.len()).any(|w| w == **s));
    assert!(copied.map(|s| s.len()).sum::<usize>() > bytes.len() * 9 / 10);
    assert_eq!(pieces.to_vec(), encode(&file).unwrap());
}
