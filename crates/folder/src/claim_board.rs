//! The board as a claim reads it. A claim looks at every task to choose one, and changes only
//! that one; reading each task whole (its description, hints, result, …) was most of a
//! claim's cost on a board of thousands. So each task is read only for choosing
//! ([`Task::read_for_choosing`]), from its text in the file as [`crate::rewrite`] finds it; the
//! task a claim takes is read whole before it is changed; and the board is written back with
//! every other task's text copied as it was.
//!
//! Adding a task reads the board for less still: of the tasks already there it needs only
//! their ids (for the new one's) and dependencies (for its own, and a cycle), and it changes
//! none ([`Skim::Adding`], [`Task::read_for_adding`]).
//!
//! A task read only for choosing is never written: [`ClaimBoard::encode`] refuses a board on
//! which one was changed. A board in a layout this does not know, or with a task that does not
//! read so, is read whole, as any change reads it (and refused as it refuses it).

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Duration;

use baton_core::{ClaimRequest, Claimed, Result, StoreError, Task, TaskFile, Tasks, Timestamp};

use crate::rewrite::{Pieces, split_board};

/// What a change reads of the tasks it does not change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Skim {
    /// What choosing a claim reads ([`Task::read_for_choosing`]).
    Choosing,
    /// Ids and dependencies, for adding a task ([`Task::read_for_adding`]).
    Adding,
}

impl Skim {
    fn read(self, text: &str) -> serde_json::Result<Task> {
        match self {
            Skim::Choosing => Task::read_for_choosing(text),
            Skim::Adding => Task::read_for_adding(text),
        }
    }
}

/// A board read for claims.
pub(crate) struct ClaimBoard {
    /// `tasks.json`, for what is said of it.
    path: PathBuf,
    /// Everything but the tasks read whole; the tasks as [`Self::whole`] says.
    file: TaskFile,
    /// The file's bytes, as read.
    read: Vec<u8>,
    /// Each task's text in `read`; `None` when every task was read whole.
    spans: Option<Vec<Range<usize>>>,
    /// Which tasks are read whole (every one past those read: a task added is whole).
    whole: Vec<bool>,
    /// What the others were read for.
    skim: Skim,
}

impl ClaimBoard {
    /// The board `read` from `path` holds, each task read for what `skim` says. `parse_whole`
    /// reads a board whole (and refuses one that does not parse, saying where): for a board
    /// this cannot read task by task.
    pub(crate) fn read(
        path: PathBuf,
        read: Vec<u8>,
        skim: Skim,
        parse_whole: impl Fn(&[u8]) -> Result<TaskFile>,
    ) -> Result<ClaimBoard> {
        if let Some((file, spans)) = Self::skim(&read, skim) {
            return Ok(ClaimBoard {
                path,
                whole: vec![false; spans.len()],
                file,
                read,
                spans: Some(spans),
                skim,
            });
        }
        let file = parse_whole(&read)?;
        Ok(ClaimBoard {
            path,
            whole: vec![true; file.tasks.len()],
            file,
            read,
            spans: None,
            skim,
        })
    }

    /// The board with each task read for `skim`, and each task's text; `None` if it cannot be
    /// read so.
    fn skim(read: &[u8], skim: Skim) -> Option<(TaskFile, Vec<Range<usize>>)> {
        let (mut file, text, list) = split_board(read)?;
        let spans = list.tasks;
        let mut tasks = Vec::with_capacity(spans.len());
        for span in &spans {
            tasks.push(skim.read(&text[span.clone()]).ok()?);
        }
        file.tasks = Tasks::as_read(tasks);
        Some((file, spans))
    }

    /// Claims for `request` as [`TaskFile::claim`] does, reading whole the task it takes (and
    /// a task it names, before choosing).
    pub(crate) fn claim(
        &mut self,
        request: &ClaimRequest,
        now: Timestamp,
        lease: Duration,
    ) -> Result<Option<Claimed>> {
        if self.skim != Skim::Choosing && self.spans.is_some() {
            return Err(StoreError::invalid(
                "tasks.json",
                "a claim on a board read for adding (a bug in Baton: nothing was written)",
            ));
        }
        if let Some(i) = request.task.as_deref().and_then(|id| self.file.named(id)) {
            self.make_whole(i)?;
        }
        let Some(i) = self.file.choose(request, now, lease)? else {
            return Ok(None);
        };
        self.make_whole(i)?;
        Ok(Some(self.file.take(i, &request.agent, now, lease)))
    }

    /// The board, for a change that reads of the tasks there only their ids and dependencies
    /// and changes none of them: adding a task. A task read only in part that is changed anyway
    /// makes [`Self::encode`] refuse the board.
    pub(crate) fn file_for_adding(&mut self) -> &mut TaskFile {
        &mut self.file
    }

    /// Reads task `i` whole, in place of its reading for choosing.
    fn make_whole(&mut self, i: usize) -> Result<()> {
        if self.whole.get(i).is_none_or(|&whole| whole) {
            return Ok(());
        }
        let span = self.spans.as_ref().and_then(|spans| spans.get(i)).cloned();
        let span = span.ok_or_else(|| StoreError::invalid("tasks.json", "a task's text"))?;
        let task: Task = serde_json::from_slice(&self.read[span.clone()]).map_err(|e| {
            let at = position(&self.read, span.start, e.line(), e.column());
            corrupt(&self.path, &e, at)
        })?;
        *self
            .file
            .tasks
            .get_mut(i)
            .expect("a task of the board has its text") = task;
        self.whole[i] = true;
        Ok(())
    }

    /// The board's bytes after its changes, `now`: those it did not change copied as read.
    /// Refused (nothing to write) if a task read only for choosing was changed, or could not
    /// be copied, which would lose what it was not read with.
    pub(crate) fn encode(&mut self, now: Timestamp) -> Result<Pieces<'_>> {
        self.file.last_updated = Some(now);
        let spans = self.spans.as_deref();
        if self.whole.iter().all(|&whole| whole) {
            return crate::rewrite::encode_copying(&mut self.file, &self.read, spans);
        }
        let lost = || {
            StoreError::invalid(
                "tasks.json",
                "a change to a task read only for choosing (a bug in Baton: nothing was \
                 written)",
            )
        };
        // Every task read only for choosing is copied.
        let plan = spans
            .and_then(|spans| crate::rewrite::copy_plan(&self.file, spans))
            .filter(|plan| {
                let whole = |i: usize| self.whole.get(i).is_none_or(|&whole| whole);
                plan.iter()
                    .enumerate()
                    .all(|(i, span)| span.is_some() || whole(i))
            })
            .ok_or_else(lost)?;
        crate::rewrite::encode_planned(&mut self.file, &self.read, &plan)?.ok_or_else(lost)
    }
}

/// The refusal of `tasks.json` at `path`, which does not parse: `error` at `(line, column)`.
pub(crate) fn corrupt(path: &Path, error: &serde_json::Error, at: (usize, usize)) -> StoreError {
    let message = error.to_string();
    // serde_json appends " at line L column C"; the error carries those apart.
    let message = match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message,
    };
    StoreError::Corrupt {
        path: path.to_path_buf(),
        line: at.0,
        column: at.1,
        message,
    }
}

/// The line and column in `read` of a parse error at `line`, `column` of the text that
/// starts at byte `start`.
fn position(read: &[u8], start: usize, line: usize, column: usize) -> (usize, usize) {
    let before = &read[..start];
    let lines_before = memchr::memchr_iter(b'\n', before).count();
    match line {
        1 => {
            let line_start = memchr::memrchr(b'\n', before).map_or(0, |at| at + 1);
            (lines_before + 1, start - line_start + column)
        }
        _ => (lines_before + line, column),
    }
}

#[cfg(test)]
mod tests;
