//! What Baton's Claude Code hooks tell a worker, as pure functions (so each answer is tested
//! without a session): who it is and what it holds at its start, why it may not stop yet, and
//! its unread messages. `baton claude-hook` reads the event and prints these.

use baton_core::{Task, TaskStatus, inbox};

/// What a worker's session is told at its start.
pub fn session_context(agent: &str, goal: Option<&str>, held: &[Task]) -> String {
    let mut text = format!("Baton: you are worker \"{agent}\" in this project");
    if let Some(goal) = goal {
        text.push_str(&format!(" (goal: {goal})"));
    }
    text.push_str(". Your leases are renewed while this session runs.\n");
    if held.is_empty() {
        text.push_str(&format!(
            "You hold no task. Claim one with `baton worker claim {agent}` (or the task_claim \
             tool), or wait for one with `baton worker claim {agent} --wait`."
        ));
        return text;
    }
    for task in held {
        let status = match task.status {
            TaskStatus::InProgress => "in progress",
            _ => "claimed, not started",
        };
        text.push_str(&format!(
            "You hold {} ({status}): {}\n",
            task.id, task.description
        ));
        if !task.context.files.is_empty() {
            text.push_str(&format!("  Files: {}\n", task.context.files.join(", ")));
        }
        if !task.context.hints.is_empty() {
            text.push_str(&format!("  Hints: {}\n", task.context.hints));
        }
        if task.status == TaskStatus::Claimed {
            text.push_str(&format!(
                "  Start it with `baton worker start {agent} {}`.\n",
                task.id
            ));
        }
    }
    let id = if held.len() == 1 {
        held[0].id.as_str()
    } else {
        "TASK"
    };
    text.push_str(&format!(
        "Go on with it. When finished: `baton worker complete {agent} {id} \"<summary>\"` (or \
         task_complete); if it cannot be done: `baton worker fail {agent} {id} \"<why>\"`."
    ));
    text
}

/// The messages as the agent reads them.
pub fn messages_context(messages: &[inbox::Message]) -> String {
    let mut text = format!(
        "Baton: {} new message{} for you (reply with message_send):\n",
        messages.len(),
        if messages.len() == 1 { "" } else { "s" }
    );
    for m in messages {
        let task = m
            .task
            .as_deref()
            .map(|t| format!(" about {t}"))
            .unwrap_or_default();
        text.push_str(&format!(
            "- {} from {}{task}: {}\n{}\n",
            m.id, m.from, m.subject, m.body
        ));
    }
    text
}

/// Why a worker may not stop yet: the unfinished tasks it holds; `None` when it may.
pub fn stop_reason(agent: &str, held: &[Task]) -> Option<String> {
    if held.is_empty() {
        return None;
    }
    let tasks: Vec<String> = held
        .iter()
        .map(|t| format!("{} ({})", t.id, t.status))
        .collect();
    let first = &held[0].id;
    Some(format!(
        "You still hold {} in Baton. Before stopping, finish properly: complete it \
         (`baton worker complete {agent} {first} \"<summary>\"` or task_complete), fail it with \
         the reason (`baton worker fail {agent} {first} \"<why>\"`), or release it for another \
         worker (`baton worker release {agent} {first}`).",
        tasks.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn task(id: &str, status: &str, files: &[&str]) -> Task {
        serde_json::from_value(json!({
            "id": id,
            "description": format!("Do {id}"),
            "status": status,
            "priority": 5,
            "claimed_by": "w1",
            "context": {"files": files, "hints": ""},
        }))
        .expect("a task")
    }

    #[test]
    fn a_worker_holding_nothing_is_told_how_to_claim() {
        let text = session_context("w1", Some("Ship it"), &[]);
        assert!(text.contains("worker \"w1\""), "{text}");
        assert!(text.contains("(goal: Ship it)"), "{text}");
        assert!(text.contains("baton worker claim w1"), "{text}");
    }

    #[test]
    fn a_worker_is_told_each_task_it_holds_with_its_files() {
        let held = [
            task("task-1", "in_progress", &["src/a.rs"]),
            task("task-2", "claimed", &[]),
        ];
        let text = session_context("w1", None, &held);
        assert!(
            text.contains("You hold task-1 (in progress): Do task-1"),
            "{text}"
        );
        assert!(text.contains("Files: src/a.rs"), "{text}");
        assert!(text.contains("task-2 (claimed, not started)"), "{text}");
    }

    #[test]
    fn a_worker_may_stop_only_when_it_holds_nothing() {
        assert_eq!(stop_reason("w1", &[]), None);
        let reason = stop_reason("w1", &[task("task-3", "in_progress", &[])]).unwrap();
        assert!(reason.contains("task-3"), "{reason}");
        assert!(
            reason.contains("baton worker complete w1 task-3"),
            "{reason}"
        );
        assert!(
            reason.contains("baton worker release w1 task-3"),
            "{reason}"
        );
    }

    #[test]
    fn messages_are_listed_with_their_sender_subject_and_task() {
        let message = |id: &str, task: Option<&str>| inbox::Message {
            id: id.into(),
            from: baton_core::LEAD.into(),
            to: "w1".into(),
            subject: "Scope".into(),
            body: "Only the parser".into(),
            task: task.map(str::to_string),
            sent_at: baton_core::Timestamp::now(),
            read_by: vec![],
        };
        let one = messages_context(&[message("m-1", Some("task-1"))]);
        assert!(one.starts_with("Baton: 1 new message for you"), "{one}");
        assert!(
            one.contains("- m-1 from lead about task-1: Scope\nOnly the parser"),
            "{one}"
        );
        let two = messages_context(&[message("m-1", None), message("m-2", None)]);
        assert!(two.starts_with("Baton: 2 new messages for you"), "{two}");
    }
}
