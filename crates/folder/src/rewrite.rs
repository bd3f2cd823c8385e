//! `tasks.json` written back after a change, keeping the text of the tasks it left alone. A
//! claim changes one task of thousands; encoding the others again costs as much as reading
//! them. The board's [`baton_core::Tasks`] says which tasks a change was handed; each other
//! task's text is copied from the file as it was read.
//!
//! A task's text is found by the layout every writer of the file uses (serde's and Python's
//! pretty JSON, two spaces): inside the top-level `"tasks": [` a task opens on a line `    {`
//! and closes on a line `    }` (a string cannot hold a raw newline, so these lines are the
//! document's own). A file laid out otherwise, or whose tasks cannot all be found so, is
//! encoded whole, as before.

use std::ops::Range;

use baton_core::{Result, StoreError, TaskFile};

/// The top-level key that opens the task list, as the pretty layout writes it.
const TASKS_KEY: &[u8] = b"\n  \"tasks\": [";

/// `file` (a change of the board read as `read`) as `tasks.json`'s bytes: the same as
/// [`crate::encode`], except that each task the change did not touch is its text in `read`.
pub(crate) fn encode_after(file: &mut TaskFile, read: &[u8]) -> Result<Vec<u8>> {
    let Some(plan) = plan(file, read) else {
        return encode(file);
    };
    // Everything but the tasks, encoded with an empty list in their place.
    let tasks = std::mem::take(&mut file.tasks);
    let outside = encode(file);
    file.tasks = tasks;
    let outside = outside?;
    let Some(at) = find(&outside, b"\n  \"tasks\": []") else {
        return encode(file);
    };
    let mut bytes = Vec::with_capacity(read.len() + 4096);
    bytes.extend_from_slice(&outside[..at + TASKS_KEY.len()]);
    for (i, task) in file.tasks.iter().enumerate() {
        bytes.extend_from_slice(if i == 0 { b"\n    " } else { b",\n    " });
        match plan.get(i) {
            Some(Some(span)) => bytes.extend_from_slice(&read[span.clone()]),
            _ => encode_indented(task, &mut bytes)?,
        }
    }
    if !file.tasks.is_empty() {
        bytes.extend_from_slice(b"\n  ");
    }
    // `]` and everything after the list.
    bytes.extend_from_slice(&outside[at + TASKS_KEY.len()..]);
    Ok(bytes)
}

/// For each task, the span of `read` to copy (`None`: encode it); `None` when the whole board
/// must be encoded (any task may have changed, or the tasks' text cannot be found).
fn plan(file: &TaskFile, read: &[u8]) -> Option<Vec<Option<Range<usize>>>> {
    let changed = file.tasks.changed()?;
    if changed.len() >= file.tasks.len() {
        return None;
    }
    let spans = task_spans(read)?;
    let count = file.tasks.len();
    if spans.len() > count {
        return None;
    }
    let mut plan: Vec<Option<Range<usize>>> = spans.into_iter().map(Some).collect();
    plan.resize(count, None);
    for &i in changed {
        if let Some(slot) = plan.get_mut(i) {
            *slot = None;
        }
    }
    // Tasks past those read were added, and so marked: any other gap means a miscount.
    plan.iter()
        .enumerate()
        .all(|(i, span)| span.is_some() || changed.contains(&i))
        .then_some(plan)
}

/// Each task's text in `read` (from its `{` to its `}`), in order; `None` if the file is not
/// in the pretty layout.
fn task_spans(read: &[u8]) -> Option<Vec<Range<usize>>> {
    let mut at = find(read, TASKS_KEY)? + TASKS_KEY.len();
    if read.get(at) != Some(&b'\n') {
        // `"tasks": []`, or the list on one line.
        return (read.get(at) == Some(&b']')).then(Vec::new);
    }
    at += 1;
    let mut spans = Vec::new();
    let mut open = None;
    let from = at;
    for end in memchr::memchr_iter(b'\n', &read[from..]).map(|end| from + end) {
        let line = &read[at..end];
        match line {
            b"    {" if open.is_none() => open = Some(at + 4),
            b"    }" | b"    }," => spans.push(open.take()?..at + 5),
            b"  ]" | b"  ]," => return open.is_none().then_some(spans),
            // Anything else at a task's depth is a layout this does not know.
            _ if line.len() > 4 && line.starts_with(b"    ") && line[4] != b' ' => return None,
            _ if !line.starts_with(b"      ") => return None,
            _ => {}
        }
        at = end + 1;
    }
    None
}

/// `tasks.json`'s bytes for `file`: pretty JSON and a final newline, as every writer of the
/// file writes it (`git diff` and `jq` friendly).
pub fn encode(file: &TaskFile) -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    serde_json::to_writer_pretty(&mut bytes, file).map_err(|e| StoreError::InvalidInput {
        field: "tasks.json",
        reason: e.to_string(),
    })?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// `task` in the pretty layout, as an element of the task list (indented by four spaces).
fn encode_indented(task: &baton_core::Task, bytes: &mut Vec<u8>) -> Result<()> {
    let text = serde_json::to_vec_pretty(task).map_err(|e| StoreError::InvalidInput {
        field: "tasks.json",
        reason: e.to_string(),
    })?;
    for &b in &text {
        bytes.push(b);
        if b == b'\n' {
            bytes.extend_from_slice(b"    ");
        }
    }
    Ok(())
}

/// Where `needle` first occurs in `haystack`.
fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(haystack, needle)
}

#[cfg(test)]
mod tests;
