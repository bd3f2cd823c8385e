//! Human-readable output of the live commands: runs, signals, waits, the change feed and the
//! worker loop. Text from files is cleaned before it reaches a terminal.

use std::fmt::Write;

use baton_core::{AttemptEnd, Run, Signal, Timestamp};
use baton_live::feed::{ChangeEvent, TaskChangeKind};
use baton_live::wait::WaitOutcome;
use baton_team::Progress;
use baton_team::{WorkerEnd, WorkerReport};

use crate::render::line;

pub fn runs(runs: &[Run]) -> String {
    if runs.is_empty() {
        return "No runs yet; `baton run new` starts one.".into();
    }
    let mut out = String::new();
    for run in runs {
        let _ = writeln!(
            out,
            "run {:<4} started {}{}",
            run.number,
            run.started_at,
            run.note
                .as_deref()
                .map(|n| format!("  {}", line(n, 80)))
                .unwrap_or_default()
        );
    }
    out
}

fn signal_line(signal: &Signal) -> String {
    let record = &signal.record;
    let mut text = line(&signal.name, 64);
    if let Some(writer) = &record.writer {
        text += &format!("  by {}", line(writer, 64));
    }
    if let Some(at) = record.written_at {
        text += &format!("  at {at}");
    }
    if let Some(note) = &record.note {
        text += &format!("  \"{}\"", line(note, 120));
    }
    if record.signal != "done" {
        text += &format!("  [{}]", line(&record.signal, 40));
    }
    text
}

pub fn signals(run: u32, signals: &[Signal]) -> String {
    if signals.is_empty() {
        return format!("No signals in run {run}.");
    }
    let mut out = format!("Signals in run {run}:\n");
    for signal in signals {
        let _ = writeln!(out, "  {}", signal_line(signal));
    }
    out
}

pub fn wait_outcome(outcome: &WaitOutcome) -> String {
    match outcome {
        WaitOutcome::Signalled { signals, .. } => signals
            .iter()
            .map(|s| format!("Signalled: {}", signal_line(s)))
            .collect::<Vec<_>>()
            .join("\n"),
        WaitOutcome::TimedOut { missing, .. } => {
            format!("Timed out; still missing: {}", missing.join(", "))
        }
        WaitOutcome::WriterGone {
            writer, missing, ..
        } => format!(
            "Stopped waiting: the writer ({writer}) is gone; still missing: {}",
            missing.join(", ")
        ),
    }
}

/// One line per change-feed event.
pub fn change(event: &ChangeEvent, at: Timestamp) -> String {
    let time = at.to_string();
    let time = time.get(11..23).unwrap_or(&time); // HH:MM:SS.mmm
    let what = match event {
        ChangeEvent::TasksChanged { changes } => changes
            .iter()
            .map(|c| match &c.kind {
                TaskChangeKind::Added {
                    status,
                    description,
                } => format!("{} added ({status}): {}", c.id, line(description, 60)),
                TaskChangeKind::Removed => format!("{} removed", c.id),
                TaskChangeKind::Status { from, to, by } => format!(
                    "{} {from} → {to}{}",
                    c.id,
                    by.as_deref().map(|b| format!(" ({b})")).unwrap_or_default()
                ),
                TaskChangeKind::Edited { fields } => {
                    format!("{} changed: {}", c.id, fields.join(", "))
                }
            })
            .collect::<Vec<_>>()
            .join("; "),
        ChangeEvent::TasksUnreadable { message } => {
            format!("tasks.json unreadable: {}", line(message, 200))
        }
        ChangeEvent::SignalWritten { name, run, .. } => {
            format!("signal {} written (run {run})", line(name, 64))
        }
        ChangeEvent::SignalCleared { name, run, .. } => {
            format!("signal {} cleared (run {run})", line(name, 64))
        }
        ChangeEvent::RunStarted { run } => format!("run {run} started"),
        ChangeEvent::DiscoveryAdded { text } => format!("discovery: {}", line(text, 160)),
        ChangeEvent::ResultWritten { task, .. } => format!("result written for {task}"),
        ChangeEvent::LogAppended { agent, lines } => lines
            .iter()
            .map(|l| format!("log {agent}: {}", line(l, 200)))
            .collect::<Vec<_>>()
            .join("\n             "),
        ChangeEvent::MasterPlanChanged => "master plan changed".into(),
        ChangeEvent::SummaryWritten => "summary written".into(),
        ChangeEvent::OrchestrationChanged { file } => format!("orchestration {file} changed"),
        ChangeEvent::HandoffWritten => "HANDOFF.md rewritten".into(),
        ChangeEvent::BrowserAdded {
            port,
            owner,
            headless,
        } => format!(
            "browser :{port} started by {} ({})",
            line(owner, 80),
            if *headless { "headless" } else { "visible" }
        ),
        ChangeEvent::BrowserRemoved { port } => format!("browser :{port} gone"),
        ChangeEvent::WorkerChanged { worker } => format!(
            "worker {} on {}: {}{}",
            worker.name,
            line(&worker.host, 64),
            worker.state.word(),
            worker
                .last_event
                .as_deref()
                .map(|e| format!(" ({})", line(e, 120)))
                .unwrap_or_default()
        ),
        ChangeEvent::TranscriptAppended {
            task,
            attempt,
            events,
        } => events
            .iter()
            .map(|e| format!("{task} #{attempt}: {}", line(&e.what.summary(), 200)))
            .collect::<Vec<_>>()
            .join("\n             "),
        ChangeEvent::QuestionAsked { question } => format!(
            "question {} from {}: {}",
            question.id,
            question.agent,
            line(&question.text, 160)
        ),
        ChangeEvent::QuestionSettled { question } => match question.answer() {
            Some(answer) => format!("question {} answered: {}", question.id, line(answer, 160)),
            None => format!("question {} closed unanswered", question.id),
        },
        ChangeEvent::MessageSent { message } => format!(
            "message {} from {} to {}: {}",
            message.id,
            message.from,
            message.to,
            line(&message.subject, 160)
        ),
        ChangeEvent::TeamEnded { ended } => format!(
            "the team on {} ended: {}",
            line(&ended.host, 64),
            line(&ended.headline, 240)
        ),
    };
    format!("{time}  {what}")
}

/// A `worker loop` event for people (`None`: not said).
pub fn loop_event(event: &Progress) -> Option<String> {
    Some(match event {
        Progress::Waiting { worker, how } => {
            format!("baton: {worker} waiting for ready tasks ({how})")
        }
        Progress::Resumed { task, .. } => format!("baton: taking up {task} again"),
        Progress::Started { task, .. } => format!("baton: ▶ {task}"),
        Progress::InWorktree {
            path,
            branch,
            reused,
            ..
        } => format!(
            "baton:   in {} on {branch}{}",
            path.display(),
            if *reused { " (as it was left)" } else { "" }
        ),
        Progress::Ended {
            task, end, reason, ..
        } => match end {
            AttemptEnd::Completed => format!("baton: ✓ {task} done"),
            AttemptEnd::Failed => format!(
                "baton: ✗ {task} failed: {}",
                line(reason.as_deref().unwrap_or("?"), 160)
            ),
            AttemptEnd::Lost => format!(
                "baton: could not report {task}: {}",
                line(reason.as_deref().unwrap_or("?"), 200)
            ),
            // A failure, a hand-back or a restart follows.
            _ => return None,
        },
        Progress::GaveUp { task, reason, .. } => {
            format!("baton: ✗ {task} failed: {}", line(reason, 160))
        }
        Progress::Released { task, .. } => format!("baton: {task} released"),
        Progress::Restarting { task, after, .. } => {
            format!("baton: restarting {task} in {:.1} s", after.as_secs_f64())
        }
        Progress::Trouble { message, .. } => format!("baton: {}", line(message, 200)),
        Progress::TookOver { task, from, .. } => {
            format!("baton: took {task} over from {from}, whose lease had expired")
        }
        Progress::Tripped {
            attempts, cause, ..
        } => format!(
            "baton: stopping: the command could not start {attempts} times in a row ({})",
            line(cause, 300)
        ),
        // A lone worker has no merge queue, and no lead to pause it.
        Progress::Stopped { .. }
        | Progress::Paused { .. }
        | Progress::Merge { .. }
        | Progress::Plan { .. }
        | Progress::Judged { .. } => return None,
    })
}

/// JSON lines for `worker loop --json` progress (the wait is not reported).
pub fn loop_event_json(event: &Progress) -> Option<String> {
    let value = match event {
        Progress::Started { task, .. } => serde_json::json!({"event": "started", "task": task}),
        Progress::InWorktree {
            task,
            path,
            branch,
            reused,
            ..
        } => serde_json::json!({
            "event": "worktree", "task": task, "path": path, "branch": branch, "reused": reused,
        }),
        Progress::Ended {
            task, end, reason, ..
        } => match end {
            AttemptEnd::Completed => serde_json::json!({"event": "completed", "task": task}),
            AttemptEnd::Failed => {
                serde_json::json!({"event": "failed", "task": task, "reason": reason})
            }
            AttemptEnd::Lost => serde_json::json!({"event": "lost", "task": task, "error": reason}),
            _ => return None,
        },
        Progress::GaveUp { task, reason, .. } => {
            serde_json::json!({"event": "failed", "task": task, "reason": reason})
        }
        Progress::Released { task, .. } => serde_json::json!({"event": "released", "task": task}),
        Progress::Resumed { task, .. } => serde_json::json!({"event": "resumed", "task": task}),
        Progress::Trouble { message, .. } => {
            serde_json::json!({"event": "trouble", "message": message})
        }
        Progress::Tripped {
            attempts, cause, ..
        } => serde_json::json!({"event": "tripped", "attempts": attempts, "cause": cause}),
        Progress::TookOver { task, from, .. } => {
            serde_json::json!({"event": "took_over", "task": task, "from": from})
        }
        Progress::Waiting { .. }
        | Progress::Restarting { .. }
        | Progress::Stopped { .. }
        | Progress::Paused { .. }
        | Progress::Merge { .. }
        | Progress::Plan { .. }
        | Progress::Judged { .. } => {
            return None;
        }
    };
    Some(value.to_string())
}

pub fn loop_report(report: &WorkerReport) -> String {
    let why = match report.end {
        WorkerEnd::Drained => "no work can become ready",
        WorkerEnd::Stopped => "stopped",
        WorkerEnd::MaxTasks => "reached --max-tasks",
        WorkerEnd::Tripped => "its command could not start",
    };
    format!(
        "Worker loop ended ({why}): {} done, {} failed, {} released",
        report.completed.len(),
        report.failed.len(),
        report.released.len()
    )
}
