//! Live views: `leader status --watch` and `logs --follow`. They update as soon as something
//! changes, without polling, from the project's change feed (a folder's file-system events, a
//! database's notifications).

use std::io::Write;
use std::time::Duration;

use baton_api::{Error, OpenProject};
use baton_core::LogLine;
use baton_live::feed::ChangeEvent;
use baton_live::{LiveError, WatchMode};

use crate::render;

/// Redraw at least this often so lease countdowns move.
const REDRAW: Duration = Duration::from_secs(1);

pub fn watch_status(project: &OpenProject, mode: WatchMode, json: bool) -> Result<(), Error> {
    use std::io::IsTerminal;
    let feed = project.feed(mode)?;
    let mut changed = true;
    // On a terminal the screen is redrawn; into a pipe or a file, each changed board is
    // printed after the last, with no escape codes.
    let screen = std::io::stdout().is_terminal();
    loop {
        let mut out = anstream::stdout().lock();
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
            Ok(report) if screen => {
                let _ = write!(
                    out,
                    "\x1b[2J\x1b[H{}\n(watching, {}; Ctrl-C to stop)\n",
                    render::status(&report),
                    feed.backend()
                );
            }
            Ok(report) => {
                if changed {
                    // Each board, then one empty line.
                    let _ = writeln!(out, "{}\n", render::status(&report).trim_end());
                }
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
        changed = match feed.recv_timeout(REDRAW) {
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
    // Start following first: lines written while the tail is printed are then not lost.
    let feed = project.feed(mode)?;
    let print = |l: &LogLine| {
        let mut out = anstream::stdout().lock();
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
