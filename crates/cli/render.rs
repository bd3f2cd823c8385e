//! Human-readable output. Text from tasks.json is cleaned of control characters before it
//! reaches a terminal, whatever a hand-edited file may hold.

use std::fmt::Write;
use std::time::Duration;

use baton_api::worktrees::{MergeReport, WorktreeInfo};
use baton_core::time::short_duration;
use baton_core::{DoctorReport, LogLine, Move, StatusReport, Task, TaskStatus, TaskView};

/// One line of text, safe for a terminal, at most `max` characters.
pub fn line(text: &str, max: usize) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    // A bidirectional override is written out, not obeyed (it would reorder what follows).
    let flat = baton_core::text::inert(&flat).into_owned();
    if flat.chars().count() > max {
        let mut cut: String = flat.chars().take(max.saturating_sub(1)).collect();
        cut.push('…');
        cut
    } else {
        flat
    }
}

/// Text safe for a terminal, newlines kept.
pub fn clean(text: &str) -> String {
    let spaced: String = text
        .chars()
        .map(|c| if c.is_control() && c != '\n' { ' ' } else { c })
        .collect();
    baton_core::text::inert(&spaced).into_owned()
}

pub fn initialised(root: &str, goal: &str) -> String {
    format!(
        "Initialised {root} for: {}\nNext: baton leader add-task \"DESCRIPTION\" -p 1   (then `baton prompt worker NAME` for each worker)",
        line(goal, 200)
    )
}

pub fn added(task: &Task) -> String {
    let mut out = format!("Added {} (priority {}", task.id, task.priority);
    if !task.dependencies.is_empty() {
        let _ = write!(out, ", after {}", task.dependencies.join(", "));
    }
    let _ = write!(out, "): {}", line(&task.description, 100));
    out
}

pub fn status(report: &StatusReport) -> String {
    let mut out = String::new();
    if let Some(goal) = &report.goal {
        let _ = writeln!(out, "Goal: {}", line(goal, 200));
    }
    let _ = writeln!(
        out,
        "Tasks: {} total · {}{} available ({} ready) · {} claimed · {} in progress · {} done · {} failed{}{}",
        report.total,
        match report.count(TaskStatus::Proposed) {
            0 => String::new(),
            n => format!("{n} proposed (`leader approve`) · "),
        },
        report.count(TaskStatus::Available),
        report.ready,
        report.count(TaskStatus::Claimed),
        report.count(TaskStatus::InProgress),
        report.count(TaskStatus::Done),
        report.count(TaskStatus::Failed),
        match report.count(TaskStatus::Cancelled) {
            0 => String::new(),
            n => format!(" · {n} cancelled"),
        },
        if report.stale > 0 {
            format!(" · {} stale (run `baton leader doctor`)", report.stale)
        } else {
            String::new()
        }
    );
    if let Some(spend) = &report.spend {
        let _ = writeln!(
            out,
            "Agents' spend: ${:.4} ({} input and {} output tokens, {} turns; `baton team status` per agent)",
            spend.total.cost_usd,
            spend.total.input_tokens,
            spend.total.output_tokens,
            spend.total.turns
        );
    }
    if report.tasks.is_empty() {
        out.push_str("\nNo tasks yet: baton leader add-task \"DESCRIPTION\"\n");
        return out;
    }
    out.push('\n');
    out.push_str(&table(&report.tasks));
    out
}

fn table(tasks: &[TaskView]) -> String {
    let id_width = tasks
        .iter()
        .map(|t| t.task.id.chars().count())
        .max()
        .unwrap_or(2)
        .clamp(2, 30);
    let owner_width = tasks
        .iter()
        .filter_map(|t| t.task.claimed_by.as_ref().map(|o| o.chars().count()))
        .max()
        .unwrap_or(5)
        .clamp(5, 24);
    let mut out = format!(
        "{:id_width$}  {:11}  {:>3}  {:owner_width$}  {:9}  {:28}  DESCRIPTION\n",
        "ID", "STATUS", "PRI", "OWNER", "LEASE", "WAITING FOR"
    );
    for view in tasks {
        let task = &view.task;
        let lease = match (view.stale, view.lease_remaining_secs) {
            (true, _) => "stale".to_string(),
            (false, Some(secs)) => short_duration(Duration::from_secs(secs)),
            (false, None) => String::new(),
        };
        let waiting = if let Some(note) = view.files_note() {
            // "files held by w1 (task-2)"
            note.trim_start_matches("waits on ").to_string()
        } else if task.status.is_final() || view.blocked_by.is_empty() {
            String::new()
        } else {
            view.blocked_by.join(",")
        };
        let status = if view.ready && task.status == TaskStatus::Available {
            "ready".to_string()
        } else {
            task.status.to_string()
        };
        let _ = writeln!(
            out,
            "{:id_width$}  {}  {:>3}  {:owner_width$}  {:9}  {:28}  {}",
            line(&task.id, id_width),
            crate::style::paint(crate::style::task_state(&status), &format!("{status:11}")),
            task.priority,
            line(task.claimed_by.as_deref().unwrap_or(""), owner_width),
            lease,
            line(&waiting, 28),
            line(&task.description, 70)
        );
    }
    out
}

pub fn task_list(tasks: &[TaskView], all: bool) -> String {
    if tasks.is_empty() {
        return if all {
            "No tasks yet.".into()
        } else {
            "No task is ready to claim right now.".into()
        };
    }
    table(tasks)
}

pub fn claimed(
    task: &Task,
    reclaimed_from: Option<&str>,
    worktree: Option<&WorktreeInfo>,
    agent: &str,
    lease: Duration,
) -> String {
    let mut out = format!(
        "Claimed {} (priority {}): {}\n",
        task.id,
        task.priority,
        clean(&task.description)
    );
    if let Some(from) = reclaimed_from {
        let _ = writeln!(
            out,
            "  Taken over from {from}, whose lease expired; check for its partial work."
        );
    }
    if !task.context.files.is_empty() {
        let _ = writeln!(
            out,
            "  Files: {}",
            line(&task.context.files.join(", "), 300)
        );
    }
    if !task.context.hints.is_empty() {
        let _ = writeln!(
            out,
            "  Hints: {}",
            clean(&task.context.hints).replace('\n', "\n         ")
        );
    }
    if let Some(acceptance) = &task.acceptance {
        let _ = writeln!(
            out,
            "  Done when: {}",
            clean(acceptance).replace('\n', "\n             ")
        );
    }
    if let Some(worktree) = worktree {
        let _ = writeln!(
            out,
            "  Worktree: {} on {}{} (work and commit there)",
            worktree.path.display(),
            worktree.branch,
            if worktree.reused {
                ", as it was left"
            } else {
                ""
            }
        );
    }
    let _ = writeln!(
        out,
        "  Lease: {} (renew with `baton worker heartbeat {agent}`)\nNext: baton worker start {agent} {}",
        humantime::format_duration(lease),
        task.id
    );
    out
}

/// `leader agents`: one line per agent.
pub fn team(team: &baton_api::agents::Team) -> String {
    use baton_core::team::AgentState;

    if team.agents.is_empty() {
        return "No agent has claimed, logged or sent a heartbeat yet.".into();
    }
    let mut out = format!(
        "{:<16} {:<18} {:<32} {:>9} {:>11} {:>4} {:>6} {:>9}  LAST\n",
        "AGENT", "STATE", "TASK", "LEASE", "HEARD", "DONE", "FAILED", "COST"
    );
    for agent in &team.agents {
        let state = match agent.state {
            AgentState::Working => "working",
            AgentState::LeaseRunningOut => "lease running out",
            AgentState::Stale => "STALE",
            AgentState::WaitingForWork => "waiting for work",
            AgentState::Idle => "idle",
            AgentState::Gone => "gone",
        };
        let (task, lease) = match agent.holds.first() {
            Some(held) => (
                format!("{} {}", held.id, held.description),
                humantime::format_duration(Duration::from_secs(held.lease_left_secs)).to_string(),
            ),
            None => ("-".to_string(), "-".to_string()),
        };
        let heard = match agent.last_seen {
            Some(seen) => {
                let ago = Duration::from_secs(seen.age(team.at).as_secs());
                format!("{} ago", humantime::format_duration(ago))
            }
            None => "never".into(),
        };
        let last = agent
            .last_line
            .as_deref()
            .map(|l| l.split_once("] ").map_or(l, |(_, rest)| rest))
            .unwrap_or("-");
        let cost = team
            .spend
            .as_ref()
            .and_then(|s| s.by_agent.get(&agent.name))
            .map_or("-".to_string(), |u| format!("${:.4}", u.cost_usd));
        let _ = writeln!(
            out,
            "{:<16} {:<18} {:<32} {:>9} {:>11} {:>4} {:>6} {:>9}  {}",
            line(&agent.name, 16),
            state,
            line(&task, 32),
            lease,
            heard,
            agent.done,
            agent.failed,
            cost,
            line(last, 60)
        );
    }
    out.trim_end().to_string()
}

/// What `leader merge` did.
pub fn merged(report: &MergeReport) -> String {
    let into = report.into.as_deref().unwrap_or("your branch");
    let mut out = String::new();
    if report.merged.is_empty() && report.conflict.is_none() && report.check_failed.is_none() {
        return "Nothing to merge: no done task has a branch that is not merged yet.".into();
    }
    for merged in &report.merged {
        if merged.already_merged {
            let _ = writeln!(out, "{} is in {into} already", merged.branch);
        } else {
            let short = merged.commit.get(..12).unwrap_or(&merged.commit);
            let _ = writeln!(
                out,
                "Merged {} into {into} ({short}; {} file{})",
                merged.branch,
                merged.files.len(),
                if merged.files.len() == 1 { "" } else { "s" }
            );
        }
    }
    if let Some(conflict) = &report.conflict {
        let _ = writeln!(
            out,
            "Conflict: {} not merged ({}); your checkout is as it was. To have it resolved:\n  \
             baton leader add-task {}{}",
            conflict.branch,
            conflict.files.join(", "),
            crate::render::shell_word(&conflict.follow_up.description),
            conflict
                .follow_up
                .files
                .iter()
                .map(|f| format!(" --files {}", crate::render::shell_word(f)))
                .collect::<String>()
        );
    }
    if let Some(failed) = &report.check_failed {
        let check = &failed.check;
        let code = check
            .exit_code
            .map_or("it was stopped".to_string(), |c| format!("exit code {c}"));
        let _ = writeln!(
            out,
            "Check failed: {} not merged; `{}` {code} on its branch (`baton review {}` shows its \
             output; --no-check merges anyway)",
            failed.task, check.command, failed.task
        );
    }
    if !report.not_tried.is_empty() {
        let _ = writeln!(out, "Not tried: {}", report.not_tried.join(", "));
    }
    out.trim_end().to_string()
}

/// What `leader move` did, or (dry run) would do.
pub fn moved(out: &baton_api::tasks::Moved, to: TaskStatus) -> String {
    let what = match &out.step {
        Move::Stay => return format!("Nothing to do: the task is {to} already"),
        Move::Claim { agent } => format!("claim as {agent}"),
        Move::Start { agent } => format!("start as {agent}"),
        Move::Complete { agent } => format!("complete as {agent}"),
        Move::Fail { agent } => format!("fail as {agent}"),
        Move::Release { agent } => format!("release as {agent}"),
        Move::Reset => "reset as the leader".to_string(),
        Move::Approve => "approve as the lead".to_string(),
        Move::Cancel => "cancel as the leader".to_string(),
    };
    match &out.task {
        Some(task) => format!("Moved {} to {}: {what}", task.id, task.status),
        None => match &out.needs {
            Some(needs) => format!("Would {what}, given a {needs} (--text)"),
            None => format!("Would {what}"),
        },
    }
}

pub fn doctor(report: &DoctorReport, fix: bool) -> String {
    let mut out = String::new();
    if report.findings.is_empty() {
        return "No problems found.".into();
    }
    for finding in &report.findings {
        let mark = if finding.fixable {
            if fix { "fixed" } else { "fixable" }
        } else {
            "manual"
        };
        let _ = writeln!(out, "[{mark}] {}", line(&finding.message, 400));
    }
    if !report.fixed.is_empty() {
        out.push_str("\nChanged:\n");
        for change in &report.fixed {
            let _ = writeln!(out, "  {}", line(change, 300));
        }
    } else if report.findings.iter().any(|f| f.fixable) {
        out.push_str("\nRun `baton leader doctor --fix` to apply the fixable repairs.\n");
    }
    out
}

pub fn log_lines(lines: &[LogLine], with_agent: bool) -> String {
    if lines.is_empty() {
        return "No log lines yet.".into();
    }
    lines
        .iter()
        .map(|l| log_line(l, with_agent) + "\n")
        .collect()
}

pub fn log_line(l: &LogLine, with_agent: bool) -> String {
    if with_agent {
        format!("{:>12} | {}", line(&l.agent, 12), clean(&l.line))
    } else {
        clean(&l.line)
    }
}

/// `word` quoted for a POSIX shell when it needs it.
pub fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=@,+".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// What `leader archive` moved (or, with --dry-run, would move).
pub fn archived(report: &baton_core::archive::ArchiveReport) -> String {
    let ids = &report.archived;
    if ids.is_empty() {
        return format!(
            "Nothing to archive ({} task(s) on the board): {}",
            report.live, report.place
        );
    }
    let shown: Vec<&str> = ids.iter().take(20).map(String::as_str).collect();
    let more = match ids.len() > shown.len() {
        true => format!(" and {} more", ids.len() - shown.len()),
        false => String::new(),
    };
    format!(
        "Archived {} task(s) to {} ({} left on the board): {}{more}\n\
         baton leader status --all lists them with the board's.",
        ids.len(),
        report.place,
        report.live,
        shown.join(", ")
    )
}
