//! The text of `baton team` for people.

use baton_api::team::{PauseAsked, StopAsked, TeamView, Transcript};
use baton_core::{Attempt, TranscriptEvent, Usage};
use baton_team::QueueState;
use baton_team::{Profile, Progress, TeamReport, TeamStarted, Verdict};

/// What one event is cut to on a line.
const LINE: usize = 160;

/// What it cost; "cost unknown" when nothing was reported (an `exec` command reports no
/// tokens, turns or cost: $0.0000 would be a guess).
fn cost(usage: &Usage) -> String {
    if *usage == Usage::default() {
        return "cost unknown".to_string();
    }
    format!("${:.4}", usage.cost_usd)
}

/// An event's text for the terminal: whole with `--full`, else on one line (newlines
/// marked) cut to [`LINE`] characters; control characters never reach the terminal.
fn one_line(text: &str, full: bool) -> String {
    if full {
        return crate::render::clean(text);
    }
    crate::render::line(&text.replace('\n', " ⏎ "), LINE + 1)
}

pub fn progress(event: &Progress) -> Option<String> {
    Some(match event {
        // Said by the summary line at the start; a worker waits after every task.
        Progress::Waiting { .. } => return None,
        Progress::Resumed { worker, task } => format!("{worker}: taking up {task} again"),
        Progress::Started {
            worker,
            task,
            attempt,
            pid,
        } => format!("{worker}: {task} attempt {attempt} started (pid {pid})"),
        Progress::Ended {
            worker,
            task,
            attempt,
            end,
            reason,
        } => {
            let end = serde_json::to_value(end)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            match reason {
                // Said once, by the worker's stop and the verdict.
                Some(_) if end == "not_started" => {
                    format!("{worker}: {task} attempt {attempt} could not start")
                }
                // A budget's reason says "budget: …" already.
                Some(reason) if reason.starts_with(&format!("{end}:")) => {
                    format!("{worker}: {task} attempt {attempt} {reason}")
                }
                Some(reason) => format!("{worker}: {task} attempt {attempt} {end}: {reason}"),
                None => format!("{worker}: {task} attempt {attempt} {end}"),
            }
        }
        Progress::Restarting {
            worker,
            task,
            after,
        } => format!(
            "{worker}: restarting {task} in {:.1} s",
            after.as_secs_f64()
        ),
        Progress::InWorktree {
            worker,
            task,
            path,
            branch,
            reused,
        } => format!(
            "{worker}: {task} in {} on {branch}{}",
            path.display(),
            if *reused { " (as it was left)" } else { "" }
        ),
        Progress::GaveUp {
            worker,
            task,
            reason,
        } => format!("{worker}: {task} failed: {}", one_line(reason, false)),
        Progress::Released { worker, task } => format!("{worker}: {task} handed back"),
        Progress::Stopped { worker } => format!("{worker}: stopped"),
        Progress::Paused {
            worker,
            paused: true,
        } => format!("{worker}: paused: it starts nothing new until `baton team resume {worker}`"),
        Progress::Paused {
            worker,
            paused: false,
        } => format!("{worker}: resumed"),
        Progress::Trouble { worker, message } => format!("{worker}: {message}"),
        Progress::TookOver { worker, task, from } => {
            format!("{worker}: took {task} over from {from}, whose lease had expired")
        }
        Progress::Merge {
            task,
            worker,
            state,
            note,
        } => match state {
            QueueState::Landed => format!("merge queue: {task} landed {note}"),
            QueueState::SentBack => format!("merge queue: {task} sent back to {worker}: {note}"),
            _ => format!("merge queue: {task} not landed: {note}"),
        },
        Progress::Tripped {
            worker, attempts, ..
        } => format!("{worker}: stopping: its agent could not start {attempts} times in a row"),
        Progress::Judged {
            task,
            judge,
            approved,
            comment,
        } => match approved {
            true => format!("{judge}: {task} approved"),
            false => format!(
                "{judge}: {task} needs changes: {}",
                crate::render::line(comment, 300)
            ),
        },
        Progress::Plan {
            planner,
            plan,
            step,
            detail,
        } => plan_step(planner, plan, *step, detail),
    })
}

/// A step of the team's plan, said.
fn plan_step(planner: &str, plan: &str, step: baton_team::PlanStep, detail: &str) -> String {
    use baton_team::PlanStep;
    let detail = crate::render::line(detail, 300);
    match step {
        PlanStep::Proposed => format!("{planner}: planned {plan}: {detail}"),
        PlanStep::Asked => format!(
            "{planner}: {plan} waits for your approval (question {detail}): `baton inbox` shows \
             it; `baton answer {detail} approve`, or your words for the planner"
        ),
        PlanStep::Approved => format!("{planner}: {plan} approved {detail}"),
        PlanStep::AtLimit => format!(
            "{planner}: {plan} has had the planning sessions a plan gets: may it go on? (question \
             {detail}): `baton answer {detail} \"go on\"`, or `stop`"
        ),
        PlanStep::SentBack => format!("{planner}: planning {plan} again: {detail}"),
        PlanStep::SubPlan => format!("{planner}: planning a slice of {plan} apart: {detail}"),
        PlanStep::CarriedOut => format!("{planner}: {plan} carried out: {detail}"),
        PlanStep::GoalJudged => format!("judge: the goal of {plan} is {detail}"),
        PlanStep::Ended => format!("{planner}: planning {plan} ended: {detail}"),
    }
}

pub fn report(report: &TeamReport) -> String {
    let mut lines = Vec::new();
    for w in &report.workers {
        lines.push(format!(
            "{}: {} done, {} failed, {} handed back, {}",
            w.name,
            w.completed.len(),
            w.failed.len(),
            w.released.len(),
            cost(&w.usage)
        ));
    }
    for (name, error) in &report.errors {
        lines.push(format!("{name}: stopped by an error: {error}"));
    }
    if let Some(plan) = &report.plan {
        lines.push(format!(
            "{}: {} task(s) in {} planning session(s); {}",
            plan.plan,
            plan.tasks.len(),
            plan.sessions,
            plan.state()
        ));
    }
    let reported = report.workers.iter().any(|w| w.usage != Usage::default());
    lines.push(match reported {
        true => format!("The team cost ${:.4}.", report.spent_usd),
        false => "The team's cost is unknown: its agents reported none.".to_string(),
    });
    lines.extend(verdict(&report.verdict));
    lines.join("\n")
}

/// The verdict's lines: the counts, then every task not done with why, and why workers
/// stopped early (each cause once).
fn verdict(verdict: &Verdict) -> Vec<String> {
    let mut lines = vec![verdict.counts()];
    for cause in &verdict.cannot_start {
        lines.push(format!(
            "  agents could not start, so workers stopped: {}",
            one_line(cause, false)
        ));
    }
    for failed in &verdict.failed {
        lines.push(format!(
            "  ✗ {} failed: {}",
            failed.task,
            one_line(&failed.why, false)
        ));
    }
    if let Some(merged) = &verdict.merged {
        lines.push(format!(
            "  merged into the lead's branch: {}",
            match merged.is_empty() {
                true => "none".to_string(),
                false => merged.join(", "),
            }
        ));
    }
    for left in &verdict.not_merged {
        lines.push(format!("  ⊘ {} not merged: {}", left.task, left.why));
    }
    for waiting in &verdict.waiting {
        let back = match verdict.handed_back.contains(&waiting.task) {
            true => " (handed back)",
            false => "",
        };
        lines.push(format!("  … {}{back}: {}", waiting.task, waiting.why));
    }
    lines
}

pub fn status(view: &TeamView) -> String {
    let mut lines = Vec::new();
    match &view.supervisor {
        Some(s) => lines.push(format!(
            "This machine's supervisor: pid {} on {}, {} × {}",
            s.pid, s.host, s.workers, s.profile
        )),
        None => lines.push("No supervisor runs on this machine.".to_string()),
    }
    if view.workers.is_empty() {
        lines.push("No supervised workers yet: `baton team up` starts some.".to_string());
    } else {
        lines.push(format!(
            "{:<14} {:<16} {:<8} {:<11} {:<12} {:>3} {:>8} {:>9} {:<7}  LAST EVENT",
            "WORKER", "HOST", "PROFILE", "STATE", "TASK", "TRY", "PID", "COST", "SANDBOX"
        ));
        for w in &view.workers {
            let r = &w.record;
            lines.push(format!(
                "{:<14} {:<16} {:<8} {:<11} {:<12} {:>3} {:>8} {:>9} {:<7}  {}",
                r.name,
                r.host,
                r.profile,
                r.state.word(),
                r.task.as_deref().unwrap_or("-"),
                r.attempt.map_or("-".into(), |a| a.to_string()),
                r.pid.map_or("-".into(), |p| p.to_string()),
                // Within its column: nothing reported is "-" (the desktop shows $0.000).
                match r.usage == Usage::default() {
                    true => "-".to_string(),
                    false => format!("${:.4}", r.usage.cost_usd),
                },
                if r.sandboxed { "yes" } else { "NO" },
                one_line(r.last_event.as_deref().unwrap_or(""), false)
            ));
        }
    }
    let total = &view.spend.total;
    let spent = match *total == Usage::default() {
        true => "Nothing reported spent".to_string(),
        false => format!("Spent ${:.4}", total.cost_usd),
    };
    lines.push(format!(
        "{spent} over {} task(s): {} input and {} output tokens, {} turns.",
        view.spend.by_task.len(),
        total.input_tokens,
        total.output_tokens,
        total.turns
    ));
    lines.extend(queue_lines(&view.merge_queue));
    if let Some(ended) = &view.last_run {
        lines.push(format!(
            "The last run (on {}) ended {}: {}",
            crate::render::clean(&ended.host),
            ended.ended_at,
            one_line(&ended.headline, false)
        ));
    }
    lines.extend(skipped(&view.unreadable));
    lines.join("\n")
}

/// Records a view could not read, each named with why (the rest was shown).
fn skipped(unreadable: &[baton_core::Unreadable]) -> Vec<String> {
    unreadable
        .iter()
        .map(|u| {
            format!(
                "Skipped {}: {} (see `baton leader doctor`)",
                crate::render::clean(&u.document),
                crate::render::line(&u.problem, 300)
            )
        })
        .collect()
}

pub fn header(attempt: &Attempt) -> String {
    let end = serde_json::to_value(attempt.end)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    let reason = attempt
        .reason
        .as_deref()
        .map(|r| format!(" ({})", one_line(r, false)))
        .unwrap_or_default();
    format!(
        "{} attempt {} by {} on {} ({}, {}): {end}{reason}, {}, {} turns, {} events",
        attempt.task,
        attempt.attempt,
        attempt.agent,
        attempt.host,
        attempt.profile,
        if attempt.sandboxed {
            "sandboxed"
        } else {
            "not sandboxed"
        },
        cost(&attempt.usage),
        attempt.usage.turns,
        attempt.events
    )
}

pub fn event(event: &TranscriptEvent, full: bool) -> String {
    format!(
        "#{:<4} {} {}",
        event.seq,
        event.at.0.format("%H:%M:%S"),
        one_line(&event.what.summary(), full)
    )
}

pub fn transcript(t: &Transcript, full: bool) -> String {
    let mut lines = vec![header(&t.attempt)];
    if t.attempts.len() > 1 {
        lines.push(format!(
            "(attempts: {}; --attempt N shows another)",
            t.attempts
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    lines.extend(t.events.iter().map(|e| event(e, full)));
    if t.more > 0 {
        let last_shown = t.events.last().map_or(0, |e| e.seq);
        let skipped = t.more.saturating_sub(t.tail.len() as u64);
        lines.push(format!(
            "… {} more event(s) (--after {last_shown} shows them); its last {}:",
            t.more,
            t.tail.len()
        ));
        if skipped == 0 {
            lines.pop();
        }
        lines.extend(t.tail.iter().map(|e| event(e, full)));
    }
    lines.extend(skipped(&t.unreadable));
    lines.join("\n")
}

pub fn stop_asked(asked: &StopAsked) -> String {
    let how = if asked.now {
        "now (their tasks handed back)"
    } else {
        "after their current task"
    };
    format!(
        "Asked the team (pid {}) to stop {}: {}",
        asked.supervisor.pid,
        how,
        asked.workers.join(", ")
    )
}

pub fn pause_asked(asked: &PauseAsked) -> String {
    let who = asked.workers.join(", ");
    match asked.paused {
        true => format!(
            "Asked the team (pid {}) to pause {who}: what runs goes on, nothing new starts until \
             `baton team resume`",
            asked.supervisor.pid
        ),
        false => format!(
            "Asked the team (pid {}) to resume {who}",
            asked.supervisor.pid
        ),
    }
}

pub fn profiles(profiles: &[&Profile], local: &baton_core::Layout) -> String {
    let mut lines = vec![format!(
        "Agent profiles (change or add them in {}):",
        baton_team::profiles_file(local).display()
    )];
    for p in profiles {
        let kind = serde_json::to_value(p.kind)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        let command = if p.command.is_empty() {
            "(give --exec)".to_string()
        } else {
            p.command.clone()
        };
        let mut caps = Vec::new();
        if let Some(c) = p.max_cost_usd {
            caps.push(format!("${c} per task"));
        }
        if let Some(t) = p.max_turns {
            caps.push(format!("{t} turns"));
        }
        if let Some(m) = p.max_minutes {
            caps.push(format!("{m} min"));
        }
        let price = p.price.map_or(String::new(), |price| {
            format!(", ${} in / ${} out per M tokens", price.input, price.output)
        });
        lines.push(format!(
            "  {:<10} {:<7} {}  (workers {}1…, {} attempts{}{price})",
            p.name,
            kind,
            command,
            p.name_prefix,
            p.max_attempts,
            if caps.is_empty() {
                String::new()
            } else {
                format!(", caps: {}", caps.join(", "))
            }
        ));
    }
    lines.join("\n")
}

/// A team started in the background, or the running one resized.
pub fn started(started: &TeamStarted) -> String {
    let info = &started.supervisor;
    match (started.resized_from, &started.log) {
        (Some(before), _) => format!(
            "The running team (pid {}, {}) goes from {} to {} workers: {}",
            info.pid,
            info.profile,
            before,
            info.workers,
            info.names.join(", ")
        ),
        (None, log) => format!(
            "The team runs in the background (pid {}): {} ({}). Its output: {}\n\
             `baton team status` shows it, `baton team stop` stops it.",
            info.pid,
            info.names.join(", "),
            info.profile,
            log.as_deref().unwrap_or("-")
        ),
    }
}

/// The merge queue's entries, one line each with its place in line or what became of it;
/// none when no queue ran.
pub fn queue_lines(queue: &[baton_team::QueueEntry]) -> Vec<String> {
    let mut lines = Vec::new();
    if queue.is_empty() {
        return lines;
    }
    lines.push("Merge queue (in the order tasks joined it):".to_string());
    let mut place = 0;
    for entry in queue {
        let state = serde_json::to_value(entry.state)
            .ok()
            .and_then(|v| v.as_str().map(|s| s.replace('_', " ")))
            .unwrap_or_default();
        let turn = match entry.state {
            QueueState::Queued => {
                place += 1;
                format!(" (#{place})")
            }
            _ => String::new(),
        };
        let note = entry
            .note
            .as_deref()
            .map(|n| format!(" — {}", one_line(n, false)))
            .unwrap_or_default();
        // The file is the supervisor's, but anything on this machine may have written it:
        // nothing of it reaches the terminal raw.
        lines.push(format!(
            "  {} by {}: {state}{turn}{note}",
            one_line(&entry.task, false),
            one_line(&entry.worker, false)
        ));
    }
    lines
}

#[cfg(test)]
mod tests {
    use baton_team::{QueueEntry, QueueState};

    #[test]
    fn a_planted_queue_file_reaches_the_terminal_without_control_codes() {
        let planted = QueueEntry {
            task: "t1\u{1b}[2J".into(),
            worker: "ex1\n\u{7}".into(),
            state: QueueState::Queued,
            note: Some("\u{1b}]0;owned\u{7}".into()),
            returns: 0,
        };
        let lines = super::queue_lines(&[planted]);
        assert_eq!(lines.len(), 2);
        assert!(
            lines.iter().all(|l| !l.chars().any(char::is_control)),
            "{lines:?}"
        );
        assert!(lines[1].contains("(#1)"), "{lines:?}");
    }
}
