//! `tasks.json` written back after a change, keeping the text of the tasks it left alone. A
//! claim changes one task of thousands; encoding the others again costs as much as reading
//! them. The board's [`baton_core::Tasks`] says which tasks a change was handed; each other
//! task's text is copied from the file as it was read.
//!
//! A task's text is found by the layout of the file (two spaces deep, as serde's and Python's
//! pretty JSON lay out the board): inside the top-level `"tasks": [` a task is a line `    {…}`
//! (the layout Baton writes, [`crate::lines`]) or opens on a line `    {` and closes on a line
//! `    }` (pretty JSON, as the source design's tool and earlier versions of Baton write it). A
//! string cannot hold a raw newline, so these lines are the document's own. A task is copied
//! in the layout it was read in, and one encoded is written on one line; a file laid out
//! otherwise, or whose tasks cannot all be found so, is encoded whole, in Baton's layout.

use std::ops::Range;

use baton_core::{Result, StoreError, TaskFile};

/// The top-level key that opens the task list, as the pretty layout writes it.
const TASKS_KEY: &[u8] = b"\n  \"tasks\": [";

/// `file` (a change of the board read as `read`) as `tasks.json`'s bytes: the same as
/// [`crate::encode`], except that each task the change did not touch is its text in `read`.
pub(crate) fn encode_after<'r>(file: &mut TaskFile, read: &'r [u8]) -> Result<Pieces<'r>> {
    let list = task_list(read).filter(|list| aligned(file, read, &list.tasks));
    encode_copying(file, read, list.as_ref().map(|l| l.tasks.as_slice()))
}

/// Whether each of `spans` is the text of the task of `file` at its place: it opens with that
/// task's id, as the layout writes it. The board was read whole, so the spans' count could
/// only be off in a file laid out by hand (a list of objects in a task, indented as tasks
/// are); a task's text is then never copied for another.
fn aligned(file: &TaskFile, read: &[u8], spans: &[Range<usize>]) -> bool {
    const OPENINGS: [&[u8]; 2] = [b"{\"id\":\"", b"{\n      \"id\": \""];
    spans.iter().zip(file.tasks.iter()).all(|(span, task)| {
        let text = &read[span.clone()];
        let id = task.id.as_bytes();
        OPENINGS.iter().any(|opening| {
            text.starts_with(opening)
                && text[opening.len()..].starts_with(id)
                && text.get(opening.len() + id.len()) == Some(&b'"')
        })
    })
}

/// [`encode_after`] with the tasks' text in `read` found already (`None`: not in the layout).
pub(crate) fn encode_copying<'r>(
    file: &mut TaskFile,
    read: &'r [u8],
    spans: Option<&[Range<usize>]>,
) -> Result<Pieces<'r>> {
    let plan = match (spans, file.tasks.changed()) {
        // When every task changed, encoding them all is as quick.
        (Some(spans), Some(changed)) if changed.len() < file.tasks.len() => copy_plan(file, spans),
        _ => None,
    };
    if let Some(plan) = plan
        && let Some(pieces) = encode_planned(file, read, &plan)?
    {
        return Ok(pieces);
    }
    Ok(Pieces::encoded(read, encode(file)?))
}

/// `file`'s bytes with each task `plan` gives a span for copied from `read` and the others
/// encoded; `None` if the list's place in the encoded board is not found.
pub(crate) fn encode_planned<'r>(
    file: &mut TaskFile,
    read: &'r [u8],
    plan: &[Option<Range<usize>>],
) -> Result<Option<Pieces<'r>>> {
    // Everything but the tasks, encoded with an empty list in their place.
    let tasks = std::mem::take(&mut file.tasks);
    let outside = encode(file);
    file.tasks = tasks;
    let outside = outside?;
    let Some(at) = find(&outside, b"\n  \"tasks\": []") else {
        return Ok(None);
    };
    let mut pieces = Pieces::encoded(read, Vec::new());
    pieces.encode(&outside[..at + TASKS_KEY.len()]);
    let mut copied: Option<&Range<usize>> = None;
    for (i, task) in file.tasks.iter().enumerate() {
        let span = plan.get(i).and_then(Option::as_ref);
        match (span, copied) {
            // The task before was copied too: the separator between them is the text read.
            (Some(span), Some(before)) => pieces.copy(before.end..span.end),
            _ => {
                pieces.encode(if i == 0 { b"\n    " } else { b",\n    " });
                match span {
                    Some(span) => pieces.copy(span.clone()),
                    None => pieces.encode_task(task)?,
                }
            }
        }
        copied = span;
    }
    if !file.tasks.is_empty() {
        pieces.encode(b"\n  ");
    }
    // `]` and everything after the list.
    pieces.encode(&outside[at + TASKS_KEY.len()..]);
    Ok(Some(pieces))
}

/// A board's bytes in pieces: runs of the text it was read from, copied, and what was encoded
/// (written out piece by piece: a board of thousands of tasks is not copied again in memory).
pub(crate) struct Pieces<'r> {
    read: &'r [u8],
    encoded: Vec<u8>,
    parts: Vec<Part>,
}

/// A range of [`Pieces`]' text read, or of what it encoded.
enum Part {
    Read(Range<usize>),
    Encoded(Range<usize>),
}

impl<'r> Pieces<'r> {
    /// `encoded`, whole.
    fn encoded(read: &'r [u8], encoded: Vec<u8>) -> Self {
        let parts = vec![Part::Encoded(0..encoded.len())];
        Pieces {
            read,
            encoded,
            parts,
        }
    }

    fn copy(&mut self, range: Range<usize>) {
        match self.parts.last_mut() {
            Some(Part::Read(last)) if last.end == range.start => last.end = range.end,
            _ => self.parts.push(Part::Read(range)),
        }
    }

    fn encode(&mut self, bytes: &[u8]) {
        let start = self.encoded.len();
        self.encoded.extend_from_slice(bytes);
        self.grown(start);
    }

    /// `task` as an element of the task list: on one line ([`crate::lines`]).
    fn encode_task(&mut self, task: &baton_core::Task) -> Result<()> {
        let start = self.encoded.len();
        serde_json::to_writer(&mut self.encoded, task).map_err(|e| StoreError::InvalidInput {
            field: "tasks.json",
            reason: e.to_string(),
        })?;
        self.grown(start);
        Ok(())
    }

    /// Records what was encoded from `start` on.
    fn grown(&mut self, start: usize) {
        let end = self.encoded.len();
        match self.parts.last_mut() {
            Some(Part::Encoded(last)) if last.end == start => last.end = end,
            _ => self.parts.push(Part::Encoded(start..end)),
        }
    }

    /// The pieces, in order.
    pub(crate) fn slices(&self) -> Vec<&[u8]> {
        self.parts
            .iter()
            .map(|part| match part {
                Part::Read(range) => &self.read[range.clone()],
                Part::Encoded(range) => &self.encoded[range.clone()],
            })
            .collect()
    }

    /// The bytes, in one piece.
    #[cfg(test)]
    pub(crate) fn to_vec(&self) -> Vec<u8> {
        self.slices().concat()
    }
}

/// For each task, the span of `read` to copy (`None`: encode it, it changed or was added);
/// `None` when the whole board must be encoded (any task may have changed, or the tasks read
/// are not the tasks `spans` found).
pub(crate) fn copy_plan(
    file: &TaskFile,
    spans: &[Range<usize>],
) -> Option<Vec<Option<Range<usize>>>> {
    let changed = file.tasks.changed()?;
    let count = file.tasks.len();
    if spans.len() > count {
        return None;
    }
    let mut plan: Vec<Option<Range<usize>>> = spans.iter().cloned().map(Some).collect();
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

/// Where the task list and each task are in a board's text.
pub(crate) struct TaskList {
    /// From just after the list's `[` to its `]`.
    pub list: Range<usize>,
    /// Each task's text (from its `{` to its `}`), in order.
    pub tasks: Vec<Range<usize>>,
}

/// The board `read` holds with its tasks left out (everything else read whole: the text
/// outside the task list), `read` as text, and where each task's text is in it; `None` if
/// the file is in neither layout, is not UTF-8, or its text outside the tasks does not
/// parse.
pub(crate) fn split_board(read: &[u8]) -> Option<(TaskFile, &str, TaskList)> {
    let text = std::str::from_utf8(read).ok()?;
    let tasks = task_list(read)?;
    // Everything but the tasks: the file with an empty list in their place.
    let list = &tasks.list;
    let mut outside = String::with_capacity(read.len() - list.len());
    outside.push_str(&text[..list.start]);
    outside.push_str(&text[list.end..]);
    Some((serde_json::from_str(&outside).ok()?, text, tasks))
}

/// Whether `read` is laid out as Baton writes it: every task on a line of its own.
pub(crate) fn in_lines(read: &[u8]) -> bool {
    task_list(read).is_some_and(|list| {
        list.tasks
            .iter()
            .all(|span| read.get(span.start + 1) != Some(&b'\n'))
    })
}

/// Each task's text in `read`, in order; `None` if the file is in neither layout.
#[cfg(test)]
fn task_spans(read: &[u8]) -> Option<Vec<Range<usize>>> {
    task_list(read).map(|list| list.tasks)
}

/// Where the tasks are in `read`; `None` if the file is in neither layout (nothing but the
/// tasks, each a line `    {…}`, or opening on a line `    {` and closing on a line `    }`
/// with the lines between deeper, and a comma when another follows).
pub(crate) fn task_list(read: &[u8]) -> Option<TaskList> {
    /// Where the reading is in the list.
    enum Next {
        /// A task opens (the first, or one after a comma).
        Task,
        /// A task's line, or its end.
        InTask(usize),
        /// The list's end (after a task without a comma).
        End,
        /// A task, or the list's end (an empty list).
        TaskOrEnd,
    }
    /// A task on one line: `    {…}`, with its comma when another follows.
    fn one_line(line: &[u8]) -> Option<(usize, bool)> {
        let task = line.strip_prefix(b"    {")?;
        let (task, comma) = match task.strip_suffix(b",") {
            Some(task) => (task, true),
            None => (task, false),
        };
        task.ends_with(b"}").then_some((task.len() + 1, comma))
    }
    let mut at = find(read, TASKS_KEY)? + TASKS_KEY.len();
    let start = at;
    if read.get(at) != Some(&b'\n') {
        // `"tasks": []`, or the list on one line.
        return (read.get(at) == Some(&b']')).then(|| TaskList {
            list: at..at,
            tasks: Vec::new(),
        });
    }
    at += 1;
    let mut spans = Vec::new();
    let mut next = Next::TaskOrEnd;
    let from = at;
    for end in memchr::memchr_iter(b'\n', &read[from..]).map(|end| from + end) {
        let line = &read[at..end];
        // Where a task may open: is this one whole on its line?
        let whole = match next {
            Next::Task | Next::TaskOrEnd => one_line(line),
            _ => None,
        };
        next = match (next, line, whole) {
            (Next::Task | Next::TaskOrEnd, b"    {", _) => Next::InTask(at + 4),
            (_, _, Some((len, comma))) => {
                spans.push(at + 4..at + 4 + len);
                if comma { Next::Task } else { Next::End }
            }
            (Next::InTask(open), b"    },", _) => {
                spans.push(open..at + 5);
                Next::Task
            }
            (Next::InTask(open), b"    }", _) => {
                spans.push(open..at + 5);
                Next::End
            }
            (Next::InTask(open), line, _) if line.starts_with(b"      ") => Next::InTask(open),
            (Next::End | Next::TaskOrEnd, b"  ]" | b"  ],", _) => {
                return Some(TaskList {
                    list: start..at + 2,
                    tasks: spans,
                });
            }
            // Anything else is a layout this does not know.
            _ => return None,
        };
        at = end + 1;
    }
    None
}

/// `tasks.json`'s bytes for `file`: in Baton's layout ([`crate::lines`]: a task a line) and a
/// final newline (`git diff` and `jq` friendly).
pub fn encode(file: &TaskFile) -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    crate::lines::write(&mut bytes, file).map_err(|e| StoreError::InvalidInput {
        field: "tasks.json",
        reason: e.to_string(),
    })?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// Where `needle` first occurs in `haystack`.
fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(haystack, needle)
}

#[cfg(test)]
mod tests;
