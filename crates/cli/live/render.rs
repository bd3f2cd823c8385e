//! Human-readable output of the live commands: runs, signals, waits, the change feed and the
//! worker loop. Text from files is cleaned before it reaches a terminal.

use std::fmt::Write;

use baton_core::{Run, Signal, Timestamp};
use baton_live::feed::{ChangeEvent, TaskChangeKind};
use baton_live::wait::WaitOutcome;
use baton_live::worker_loop::{LoopEnd, LoopEvent, LoopReport};

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
    };
    format!("{time}  {what}")
}

pub fn loop_event(agent: &str, event: &LoopEvent<'_>) -> String {
    match event {
        LoopEvent::Waiting(backend) => {
            format!("baton: {agent} waiting for ready tasks ({backend})")
        }
        LoopEvent::Started(task) => {
            format!("baton: ▶ {} {}", task.id, line(&task.description, 100))
        }
        LoopEvent::InWorktree(worktree) => format!(
            "baton:   in {} on {}{}",
            worktree.workdir.display(),
            worktree.branch,
            if worktree.reused {
                " (as it was left)"
            } else {
                ""
            }
        ),
        LoopEvent::Completed(task) => format!("baton: ✓ {} done", task.id),
        LoopEvent::Failed(task) => format!(
            "baton: ✗ {} failed: {}",
            task.id,
            line(task.failure_reason.as_deref().unwrap_or("?"), 160)
        ),
        LoopEvent::Released(task) => format!("baton: {} released", task.id),
        LoopEvent::Lost { task, error } => {
            format!("baton: could not report {task}: {}", line(error, 200))
        }
    }
}

/// JSON lines for `worker loop --json` progress (the wait is not reported).
pub fn loop_event_json(event: &LoopEvent<'_>) -> Option<String> {
    let value = match event {
        LoopEvent::Waiting(_) => return None,
        LoopEvent::Started(task) => serde_json::json!({"event": "started", "task": task.id}),
        LoopEvent::InWorktree(worktree) => serde_json::json!({
            "event": "worktree", "task": worktree.task, "path": worktree.workdir,
            "branch": worktree.branch, "reused": worktree.reused,
        }),
        LoopEvent::Completed(task) => serde_json::json!({"event": "completed", "task": task.id}),
        LoopEvent::Failed(task) => serde_json::json!({
            "event": "failed", "task": task.id, "reason": task.failure_reason,
        }),
        LoopEvent::Released(task) => serde_json::json!({"event": "released", "task": task.id}),
        LoopEvent::Lost { task, error } => {
            serde_json::json!({"event": "lost", "task": task, "error": error})
        }
    };
    Some(value.to_string())
}

pub fn loop_report(report: &LoopReport) -> String {
    let why = match report.end {
        LoopEnd::Drained => "no work can become ready",
        LoopEnd::Stopped => "stopped",
        LoopEnd::MaxTasks => "reached --max-tasks",
    };
    format!(
        "Worker loop ended ({why}): {} done, {} failed, {} released",
        report.completed.len(),
        report.failed.len(),
        report.released.len()
    )
}
