//! The board read again by a reader that keeps it. A window redraws its board on every change
//! anyone makes, and on a board of thousands most changes touch one task: parsing every task
//! again was most of each redraw's read. So a store that serves windows keeps each task's text
//! with the task read from it, and a task whose text is as it was is not parsed again.
//!
//! Only the tasks are kept; the rest of the file (reservations, agents) is small and read
//! whole each time. A board in a layout this does not know, or with a task that does not
//! parse, is left to the whole read ([`Reread::read`] answers `None`), which refuses it as
//! every read does.

use std::sync::Arc;

use baton_core::{Task, TaskFile, Tasks};

use crate::kept_texts::read_again;
use crate::rewrite::split_board;

/// Each task's text, as last read, with the task read from it.
#[derive(Debug, Default)]
pub(crate) struct Reread {
    /// In the file's order.
    tasks: Vec<(Box<str>, Arc<Task>)>,
    /// Everything on the board but its tasks (the list empty), as the last read found it;
    /// `None` when the last read could not read the board by its tasks' texts.
    outside: Option<TaskFile>,
    /// How many tasks the last read parsed (the others were kept).
    parsed: usize,
    /// Whether the last read split the file into its tasks' texts (not the same bytes again).
    split: bool,
    /// The last read's bytes.
    last: Vec<u8>,
    /// Memory for the next read's bytes.
    pub(crate) spare: Vec<u8>,
}

impl Reread {
    /// The board `read` holds, parsing only the tasks whose text is not one kept; what it
    /// keeps is then this board's. `None` (and nothing kept) if it cannot be read so.
    pub(crate) fn read(&mut self, read: &[u8]) -> Option<TaskFile> {
        let (mut file, tasks) = self.read_shared(read)?;
        file.tasks = Tasks::as_read(tasks.iter().map(|task| (**task).clone()).collect());
        Some(file)
    }

    /// [`Self::read`] with the board's tasks apart from it, each shared with what is kept: a
    /// task whose text did not change since the last read is the same `Arc` as then. The
    /// same bytes as the last read's are that board again, neither split nor compared: a
    /// window's board and its other reads of one change (the Review's count, the tray) read
    /// the file once each.
    pub(crate) fn read_shared(&mut self, read: &[u8]) -> Option<(TaskFile, Vec<Arc<Task>>)> {
        self.parsed = 0;
        self.split = false;
        if let Some(outside) = self.outside.as_ref().filter(|_| read == self.last) {
            let tasks = self.tasks.iter().map(|(_, task)| task.clone()).collect();
            return Some((outside.clone(), tasks));
        }
        self.outside = None;
        let kept = std::mem::take(&mut self.tasks);
        self.split = true;
        let (file, text, list) = split_board(read)?;
        let spans = list.tasks;
        let mut parsed = 0;
        let now = read_again(kept, text, &spans, |task| {
            parsed += 1;
            serde_json::from_str::<Task>(task).ok().map(Arc::new)
        })?;
        self.parsed = parsed;
        let tasks = now.iter().map(|(_, task)| task.clone()).collect();
        self.tasks = now;
        self.outside = Some(file.clone());
        Some((file, tasks))
    }

    /// `bytes` (what was just read) become the last read's; the last read's memory is the
    /// next read's.
    pub(crate) fn keep_bytes(&mut self, bytes: Vec<u8>) {
        self.spare = std::mem::replace(&mut self.last, bytes);
    }
}

#[cfg(test)]
mod tests;
