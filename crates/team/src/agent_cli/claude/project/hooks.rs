//! What each of Baton's Claude Code hooks answers, read from the project's stores: the JSON (or
//! text) `baton claude-hook` prints for Claude Code, `None` when it says nothing. The words
//! are [`super::answers`]'; which tasks and messages they are about is decided here, so the CLI
//! only reads the event and prints.

use baton_core::{DocumentStore, Result, TaskStore, inbox};
use serde_json::{Value, json};

use super::answers::{messages_context, session_context, stop_reason};

/// At a worker's session start: who it is, the project's goal and what it holds (plain text,
/// which Claude Code adds to the session's context).
pub fn at_session_start(tasks: &dyn TaskStore, agent: &str) -> Result<String> {
    let held = tasks.held_by(agent)?;
    // A goal that cannot be read is left out, not a reason to say nothing.
    let goal = tasks
        .notes()
        .ok()
        .and_then(|n| baton_core::notes::goal_of(&n.master_plan));
    Ok(session_context(agent, goal.as_deref(), &held))
}

/// When the worker wants to stop: blocked, with the reason, while it holds unfinished tasks.
/// `already_going_on`: Claude Code goes on because of this hook already (asked once per stop,
/// so the hook can never keep a worker going for ever).
pub fn at_stop(
    tasks: &dyn TaskStore,
    agent: &str,
    already_going_on: bool,
) -> Result<Option<Value>> {
    if already_going_on {
        return Ok(None);
    }
    let held = tasks.held_by(agent)?;
    Ok(stop_reason(agent, &held).map(|reason| json!({"decision": "block", "reason": reason})))
}

/// After a tool call: `agent`'s unread messages put into its context (Claude Code reads a
/// PostToolUse hook's `additionalContext` with its next request), and marked read: pushed on
/// its next tool call, never polled for.
pub fn deliver_messages(documents: &dyn DocumentStore, agent: &str) -> Result<Option<Value>> {
    let unread = inbox::messages_for(documents, agent, true)?.items;
    if unread.is_empty() {
        return Ok(None);
    }
    let answer = json!({"hookSpecificOutput": {
        "hookEventName": "PostToolUse",
        "additionalContext": messages_context(&unread),
    }});
    let ids: Vec<String> = unread.into_iter().map(|m| m.id).collect();
    inbox::mark_read(documents, agent, &ids)?;
    Ok(Some(answer))
}

#[cfg(test)]
mod tests {
    use super::*;
    use baton_core::{ClaimRequest, NewTask};
    use baton_folder::FolderStore;

    fn project() -> (tempfile::TempDir, FolderStore) {
        let dir = tempfile::tempdir().unwrap();
        let store = FolderStore::init(dir.path(), "Ship the parser", None).unwrap();
        (dir, store)
    }

    #[test]
    fn a_worker_holding_a_task_is_told_so_and_may_not_stop_once() {
        let (_dir, store) = project();
        let new = NewTask {
            description: "Write the parser".into(),
            ..NewTask::default()
        };
        let id = store.add_task(new).unwrap().id;
        let start = at_session_start(&store, "w1").unwrap();
        assert!(start.contains("You hold no task"), "{start}");
        assert!(start.contains("Ship the parser"), "{start}");

        store.claim(&ClaimRequest::next("w1")).unwrap().unwrap();
        let start = at_session_start(&store, "w1").unwrap();
        assert!(start.contains(&id), "{start}");
        let stop = at_stop(&store, "w1", false).unwrap().expect("blocked");
        assert_eq!(stop["decision"], "block");
        assert!(stop["reason"].as_str().unwrap().contains(&id));
        assert!(at_stop(&store, "w1", true).unwrap().is_none(), "asked once");
        assert!(
            at_stop(&store, "w2", false).unwrap().is_none(),
            "w2 holds nothing"
        );
    }

    #[test]
    fn unread_messages_are_delivered_once() {
        let (_dir, store) = project();
        assert!(deliver_messages(&store, "w1").unwrap().is_none());
        inbox::send(
            &store,
            inbox::NewMessage {
                from: baton_core::LEAD.into(),
                to: "w1".into(),
                task: None,
                subject: "Use the new schema".into(),
                body: "It is in schema/v2.".into(),
            },
        )
        .unwrap();
        let answer = deliver_messages(&store, "w1").unwrap().expect("delivered");
        let context = answer["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap();
        assert!(context.contains("Use the new schema"), "{context}");
        assert!(
            deliver_messages(&store, "w1").unwrap().is_none(),
            "read now"
        );
    }
}
