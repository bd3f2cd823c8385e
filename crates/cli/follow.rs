//! Live views: `leader status --watch` and `logs --follow`. They update as soon as something
//! changes, without polling: on a folder project from the change feed (file-system events),
//! on a database project from its notifications.

use std::io::Write;
use std::time::{Duration, Instant};

use baton_api::{Error, OpenProject};
use baton_core::{Listener, LogLine};
use baton_live::feed::{ChangeEvent, ChangeFeed};
use baton_live::{LiveError, WatchMode};

use crate::render;

/// Redraw at least this often so lease countdowns move.
const REDRAW: Duration = Duration::from_secs(1);

/// What wakes a live view: the folder's change feed or the store's notifications.
enum Changes {
    Feed(ChangeFeed),
    Store(Box<dyn Listener>),
}

impl Changes {
    fn start(project: &OpenProject, mode: WatchMode) -> Result<Changes, Error> {
        Ok(match project.tasks.listen_for_changes()? {
            Some(listener) => Changes::Store(listener),
            None => Changes::Feed(project.feed(mode)?),
        })
    }

    fn describe(&self) -> String {
        match self {
            Changes::Feed(feed) => feed.backend().to_string(),
            Changes::Store(_) => "the store's notifications".to_string(),
        }
    }
}

pub fn watch_status(project: &OpenProject, mode: WatchMode, json: bool) -> Result<(), Error> {
    let mut changes = Changes::start(project, mode)?;
    let mut changed = true;
    loop {
        let mut out = std::io::stdout().lock();
        match project.tasks.status() {
            Ok(report) if json => {
                if changed {
                    let _ = writeln!(
                        out,
                        "{}",
                        serde_json::to_string(&report).expect("serialisable")
                    );
                }
            }
            Ok(report) => {
                let _ = write!(
                    out,
                    "\x1b[2J\x1b[H{}\n(watching, {}; Ctrl-C to stop)\n",
                    render::status(&report),
                    changes.describe()
                );
            }
            // A corrupt file is shown, not fatal: someone may be fixing it by hand.
            Err(err) => {
                let _ = writeln!(out, "baton: {err}");
            }
        }
        if out.flush().is_err() {
            return Ok(()); // the reader went away
        }
        drop(out);
        changed = match &mut changes {
            Changes::Feed(feed) => match feed.recv_timeout(REDRAW) {
                Ok(event) => matches!(
                    event,
                    ChangeEvent::TasksChanged { .. }
                        | ChangeEvent::TasksUnreadable { .. }
                        | ChangeEvent::MasterPlanChanged
                ),
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => false,
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(LiveError::WatchStopped.into());
                }
            },
            Changes::Store(listener) => listener.wait(Some(Instant::now() + REDRAW))?,
        };
    }
}

pub fn follow_logs(
    project: &OpenProject,
    agent: Option<&str>,
    tail: usize,
    mode: WatchMode,
    json: bool,
) -> Result<(), Error> {
    // Start listening first: lines written while the tail is printed are then not lost.
    let mut changes = Changes::start(project, mode)?;
    let cursor = project.tasks.log_since(u64::MAX)?;
    let print = |l: &LogLine| {
        let mut out = std::io::stdout().lock();
        let text = if json {
            serde_json::to_string(l).expect("serialisable")
        } else {
            render::log_line(l, agent.is_none())
        };
        writeln!(out, "{text}").and_then(|_| out.flush()).is_ok()
    };
    for l in project.tasks.logs(agent, tail)? {
        print(&l);
    }
    match &mut changes {
        Changes::Feed(feed) => {
            while let Some(event) = feed.recv() {
                let ChangeEvent::LogAppended { agent: who, lines } = event else {
                    continue;
                };
                if agent.is_some_and(|a| a != who) {
                    continue;
                }
                for line in lines {
                    if !print(&LogLine {
                        agent: who.clone(),
                        line,
                    }) {
                        return Ok(());
                    }
                }
            }
            Err(LiveError::WatchStopped.into())
        }
        Changes::Store(listener) => {
            let mut after = cursor.map_or(0, |(_, last)| last);
            loop {
                listener.wait(None)?;
                let Some((lines, last)) = project.tasks.log_since(after)? else {
                    return Ok(());
                };
                after = last;
                for line in lines.iter().filter(|l| agent.is_none_or(|a| a == l.agent)) {
                    if !print(line) {
                        return Ok(());
                    }
                }
            }
        }
    }
}
