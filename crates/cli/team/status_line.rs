//! `team up`'s one live status line on a terminal: how many tasks are done, running, ready and
//! waiting, what the waiting ones wait for (a lease another worker holds and for how long,
//! dependencies) and where the merge queue is, redrawn every second under the team's progress
//! lines (indicatif draws it; the lines are printed above it). Piped, or with `--json`, there
//! is no status line: plain lines only, so no escape code reaches a file.

use std::io::IsTerminal;
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use baton_core::{Layout, TaskStore};
use baton_team::BoardSummary;
use baton_team::{QueueEntry, QueueState, read_queue};
use indicatif::{ProgressBar, ProgressStyle};

/// How often the line is read again from the board.
const EVERY: Duration = Duration::from_secs(1);

pub struct StatusLine {
    bar: ProgressBar,
    /// (asked to redraw now, finished), and the refresher's wake-up.
    state: Mutex<(bool, bool)>,
    woken: Condvar,
}

impl StatusLine {
    /// A status line on stderr, when stderr is a terminal and the output is for people.
    pub fn on_terminal(json: bool) -> Option<StatusLine> {
        if json || !std::io::stderr().is_terminal() {
            return None;
        }
        let bar = ProgressBar::new_spinner();
        bar.set_style(
            ProgressStyle::with_template("{spinner} {wide_msg}").expect("a valid template"),
        );
        Some(StatusLine {
            bar,
            state: Mutex::new((false, false)),
            woken: Condvar::new(),
        })
    }

    /// Prints `line` above the status line, which is then drawn again from the board (what
    /// the line said has just changed).
    pub fn println(&self, line: &str) {
        self.bar.println(line);
        self.state.lock().unwrap_or_else(|e| e.into_inner()).0 = true;
        self.woken.notify_all();
    }

    /// Redraws the line from the board and the merge queue every second and after each
    /// progress line, until [`Self::finish`].
    pub fn keep_up(&self, tasks: &dyn TaskStore, local: &Layout) {
        loop {
            if let Ok((file, now)) = tasks.snapshot() {
                let glance = BoardSummary::of(&file, now, tasks.lease());
                self.bar.set_message(text(&glance, &read_queue(local)));
            }
            self.bar.tick();
            let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
            let (mut state, _) = self
                .woken
                .wait_timeout_while(state, EVERY, |(now, done)| !*now && !*done)
                .unwrap_or_else(|e| e.into_inner());
            if state.1 {
                return;
            }
            state.0 = false;
        }
    }

    /// Clears the line for good (the verdict is printed after it).
    pub fn finish(&self) {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).1 = true;
        self.woken.notify_all();
        self.bar.finish_and_clear();
    }
}

/// "3 done · 2 running · 1 ready · 4 waiting (task-7 held by ex2, lease for 12m more; …) ·
/// merge queue: 2 waiting, task-3 being checked".
fn text(glance: &BoardSummary, queue: &[QueueEntry]) -> String {
    let mut parts = vec![
        format!("{} done", glance.done),
        format!("{} running", glance.running),
        format!("{} ready", glance.ready),
    ];
    if !glance.waiting.is_empty() {
        let first: Vec<String> = glance
            .waiting
            .iter()
            .take(2)
            .map(|w| format!("{} {}", w.task, w.why))
            .collect();
        let more = glance.waiting.len().saturating_sub(first.len());
        parts.push(format!(
            "{} waiting ({}{})",
            glance.waiting.len(),
            first.join("; "),
            if more > 0 {
                format!("; {more} more")
            } else {
                String::new()
            }
        ));
    }
    let queued = queue
        .iter()
        .filter(|e| e.state == QueueState::Queued)
        .count();
    let checking = queue.iter().find(|e| e.state == QueueState::Checking);
    if queued > 0 || checking.is_some() {
        let mut said = format!("merge queue: {queued} waiting");
        if let Some(entry) = checking {
            said.push_str(&format!(", {} being checked", entry.task));
        }
        parts.push(said);
    }
    parts.join(" · ")
}
