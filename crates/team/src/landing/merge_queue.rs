//! A team's merge queue (`team up --merge auto`, or `merge = "auto"` in review.toml): the one
//! path by which its done tasks reach the lead's branch, one at a time, in the order they were
//! done (Gas Town's Refinery does the same for its polecats). For each task its branch is merged
//! with the lead's branch in the queue's scratch checkout, the project's check runs on exactly
//! that, and only a pass moves the lead's branch, by fast-forward to that merge commit
//! (`baton_git::land`). A failing check, or a conflict, sends the task back to the worker that
//! did it with the check's output or the files named (as a review's "request changes" does),
//! and the queue goes on with the next. The lead's branch is never left half-merged.
//!
//! This module is the queue: its entries, in the order tasks joined it, written to
//! `.coordination/team/merge-queue.json` as they change so `team status` shows each task's
//! place; workers do not stop while it has work (a task sent back is theirs to take up). The
//! merger that works it is [`crate::landing::merger`].

use std::path::PathBuf;
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use baton_core::Layout;
use baton_fs::write_atomic;
use serde::{Deserialize, Serialize};

/// Where a task is in the queue.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum QueueState {
    /// Waiting for its turn.
    Queued,
    /// Its branch merged with the lead's, the check running on it.
    Checking,
    /// In the lead's branch.
    Landed,
    /// Back with its worker: its check failed, or it conflicts.
    SentBack,
    /// Left for the lead: it could not be landed (the note says why).
    NotLanded,
}

/// One task in the queue.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct QueueEntry {
    pub task: String,
    /// The worker that did it (and gets it back).
    pub worker: String,
    pub state: QueueState,
    /// What happened, in words (the commit landed, why it went back or was left).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub note: Option<String>,
    /// How many times the queue sent it back.
    #[serde(default)]
    pub returns: u32,
}

/// The queue of one team run.
pub struct MergeQueue {
    state: Mutex<Entries>,
    changed: Condvar,
    file: PathBuf,
}

#[derive(Default)]
struct Entries {
    entries: Vec<QueueEntry>,
    closed: bool,
}

impl Entries {
    fn busy(&self) -> bool {
        self.entries
            .iter()
            .any(|e| matches!(e.state, QueueState::Queued | QueueState::Checking))
    }
}

/// The file the queue's entries are written to, for `team status`.
pub fn queue_file(local: &Layout) -> PathBuf {
    local.team_dir().join("merge-queue.json")
}

/// The entries the last (or the running) merge queue wrote; none when there is no such file
/// or it cannot be read.
pub fn read_queue(local: &Layout) -> Vec<QueueEntry> {
    std::fs::read(queue_file(local))
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
}

impl MergeQueue {
    pub fn new(local: &Layout) -> MergeQueue {
        let queue = MergeQueue {
            state: Mutex::new(Entries::default()),
            changed: Condvar::new(),
            file: queue_file(local),
        };
        queue.save(&queue.state.lock().expect("the queue's lock"));
        queue
    }

    /// Task `task`, done by `worker`, joins the end of the queue (again, after a send-back).
    pub fn push(&self, task: &str, worker: &str) {
        let mut state = self.state.lock().expect("the queue's lock");
        let returns = state
            .entries
            .iter()
            .find(|e| e.task == task)
            .map_or(0, |e| e.returns);
        state.entries.retain(|e| e.task != task);
        state.entries.push(QueueEntry {
            task: task.to_string(),
            worker: worker.to_string(),
            state: QueueState::Queued,
            note: None,
            returns,
        });
        self.save(&state);
        self.changed.notify_all();
    }

    /// Nothing waits and nothing is being checked: a worker finding no task may stop.
    pub fn idle(&self) -> bool {
        !self.state.lock().expect("the queue's lock").busy()
    }

    /// Waits until the queue is idle, or `stop` says to stop waiting.
    pub fn wait_idle(&self, stop: &dyn Fn() -> bool) {
        let mut state = self.state.lock().expect("the queue's lock");
        while state.busy() && !stop() {
            state = self
                .changed
                .wait_timeout(state, Duration::from_millis(100))
                .expect("the queue's lock")
                .0;
        }
    }

    /// Waits until the queue has had its turn at each of `tasks` (landed it, left it for the
    /// lead, or sent it back), or `stop` says to stop waiting; whether it had. A task not in
    /// the queue yet (its worker is about to push it) is waited for.
    pub fn wait_decided(&self, tasks: &[String], stop: &dyn Fn() -> bool) -> bool {
        let decided = |state: &Entries| {
            tasks.iter().all(|task| {
                state.entries.iter().any(|e| {
                    &e.task == task
                        && matches!(
                            e.state,
                            QueueState::Landed | QueueState::NotLanded | QueueState::SentBack
                        )
                })
            })
        };
        let mut state = self.state.lock().expect("the queue's lock");
        while !decided(&state) {
            if stop() {
                return false;
            }
            state = self
                .changed
                .wait_timeout(state, Duration::from_millis(100))
                .expect("the queue's lock")
                .0;
        }
        true
    }

    /// Whether each of `tasks` is settled in the queue: landed, or left for the lead.
    pub fn settled(&self, tasks: &[String]) -> bool {
        let state = self.state.lock().expect("the queue's lock");
        tasks.iter().all(|task| {
            state.entries.iter().any(|e| {
                &e.task == task && matches!(e.state, QueueState::Landed | QueueState::NotLanded)
            })
        })
    }

    /// No more turns: the merger stops after the task it is on.
    pub fn close(&self) {
        self.state.lock().expect("the queue's lock").closed = true;
        self.changed.notify_all();
    }

    /// The next task's turn (it is then `Checking`), waiting for one; `None` once closed.
    pub(crate) fn next(&self) -> Option<QueueEntry> {
        let mut state = self.state.lock().expect("the queue's lock");
        loop {
            if state.closed {
                return None;
            }
            if let Some(entry) = state
                .entries
                .iter_mut()
                .find(|e| e.state == QueueState::Queued)
            {
                entry.state = QueueState::Checking;
                let taken = entry.clone();
                self.save(&state);
                return Some(taken);
            }
            state = self.changed.wait(state).expect("the queue's lock");
        }
    }

    pub(crate) fn record_outcome(&self, task: &str, state_now: QueueState, note: String) {
        let mut state = self.state.lock().expect("the queue's lock");
        if let Some(entry) = state.entries.iter_mut().find(|e| e.task == task) {
            entry.state = state_now;
            entry.note = Some(note);
            if state_now == QueueState::SentBack {
                entry.returns += 1;
            }
        }
        self.save(&state);
        self.changed.notify_all();
    }

    /// Every entry as it stands.
    pub fn entries(&self) -> Vec<QueueEntry> {
        self.state.lock().expect("the queue's lock").entries.clone()
    }

    /// The tasks landed, and the entries of those done but not landed (still queued when the
    /// team stopped, or left for the lead, the note saying why).
    pub fn summary(&self) -> (Vec<String>, Vec<QueueEntry>) {
        let state = self.state.lock().expect("the queue's lock");
        let landed = state
            .entries
            .iter()
            .filter(|e| e.state == QueueState::Landed)
            .map(|e| e.task.clone())
            .collect();
        let not_landed = state
            .entries
            .iter()
            .filter(|e| !matches!(e.state, QueueState::Landed | QueueState::SentBack))
            .cloned()
            .collect();
        (landed, not_landed)
    }

    fn save(&self, state: &Entries) {
        let mut bytes = serde_json::to_vec_pretty(&state.entries).expect("entries serialise");
        bytes.push(b'\n');
        // The file is for people and `team status`; the queue itself is in memory.
        let _ = write_atomic(&self.file, &bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queue() -> (tempfile::TempDir, Layout, MergeQueue) {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::at(dir.path().join(".coordination"));
        std::fs::create_dir_all(layout.team_dir()).unwrap();
        let queue = MergeQueue::new(&layout);
        (dir, layout, queue)
    }

    #[test]
    fn tasks_take_their_turns_in_the_order_they_were_done() {
        let (_dir, layout, queue) = queue();
        queue.push("t2", "w1");
        queue.push("t1", "w2");
        let first = queue.next().unwrap();
        assert_eq!(
            (first.task.as_str(), first.state),
            ("t2", QueueState::Checking)
        );
        assert!(!queue.idle(), "one is being checked");
        queue.record_outcome("t2", QueueState::Landed, "landed as abc".into());
        assert_eq!(queue.next().unwrap().task, "t1");
        queue.record_outcome("t1", QueueState::NotLanded, "conflicts".into());
        assert!(queue.idle());
        let (landed, not_landed) = queue.summary();
        assert_eq!(landed, ["t2"]);
        assert_eq!(not_landed.len(), 1);
        assert_eq!(not_landed[0].note.as_deref(), Some("conflicts"));
        // What `team status` reads is what the queue holds.
        let written = read_queue(&layout);
        assert_eq!(written.len(), 2);
        assert_eq!(written[0].state, QueueState::Landed);
    }

    /// A task sent back and done again joins the end of the queue, its returns counted, so the
    /// lead can be handed it after too many.
    #[test]
    fn a_task_sent_back_rejoins_at_the_end_with_its_returns_counted() {
        let (_dir, _layout, queue) = queue();
        queue.push("t1", "w1");
        queue.push("t2", "w2");
        assert_eq!(queue.next().unwrap().task, "t1");
        queue.record_outcome("t1", QueueState::SentBack, "its check failed".into());
        queue.push("t1", "w1");
        assert_eq!(queue.next().unwrap().task, "t2", "t1 went to the end");
        queue.record_outcome("t2", QueueState::Landed, "landed".into());
        let again = queue.next().unwrap();
        assert_eq!((again.task.as_str(), again.returns), ("t1", 1));
    }

    #[test]
    fn a_closed_queue_gives_no_more_turns_and_wakes_its_merger() {
        let (_dir, _layout, queue) = queue();
        let queue = std::sync::Arc::new(queue);
        let merger = {
            let queue = queue.clone();
            std::thread::spawn(move || queue.next())
        };
        queue.close();
        assert!(merger.join().unwrap().is_none());
        queue.push("t1", "w1");
        assert!(queue.next().is_none(), "closed: no more turns");
    }

    #[test]
    fn an_unreadable_queue_file_reads_as_no_queue() {
        let (_dir, layout, _queue) = queue();
        std::fs::write(queue_file(&layout), b"{not json").unwrap();
        assert!(read_queue(&layout).is_empty());
    }
}
