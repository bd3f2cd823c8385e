//! Who may call each operation, listed whole: a new operation fails this test until it is
//! added here, so each is classified once, on purpose, where a reviewer sees the whole table.

use crate::{AgentUse, catalogue};

/// Every operation, with whether a responder device may call it and what an agent may do with
/// it, and whether a team's planner may (the lead may call every one).
const EXPECTED: &[(&str, bool, AgentUse, bool)] = &[
    ("task_status", true, AgentUse::Shared, false),
    ("task_list", true, AgentUse::Shared, false),
    ("task_add", false, AgentUse::Never, true),
    ("task_edit", false, AgentUse::Never, true),
    ("plan_write", false, AgentUse::Never, true),
    ("task_claim", false, AgentUse::OwnWork, false),
    ("task_start", false, AgentUse::OwnWork, false),
    ("task_complete", false, AgentUse::OwnWork, false),
    ("task_fail", false, AgentUse::OwnWork, false),
    ("task_release", false, AgentUse::OwnWork, false),
    ("task_heartbeat", false, AgentUse::OwnWork, false),
    ("task_reset", false, AgentUse::Never, false),
    ("task_approve", false, AgentUse::Never, false),
    ("task_cancel", false, AgentUse::Never, true),
    ("task_move", false, AgentUse::Never, false),
    ("discover", false, AgentUse::Shared, false),
    ("aggregate", false, AgentUse::Never, false),
    ("doctor", false, AgentUse::Never, false),
    ("task_archive", false, AgentUse::Never, false),
    ("logs", true, AgentUse::OwnWork, false),
    ("agents_overview", true, AgentUse::Shared, false),
    ("team_up", false, AgentUse::Never, false),
    ("team_status", true, AgentUse::Shared, false),
    ("team_report", true, AgentUse::Shared, false),
    ("team_transcript", true, AgentUse::OwnWork, false),
    ("team_stop", true, AgentUse::Never, false),
    ("team_pause", true, AgentUse::Never, false),
    ("team_resume", true, AgentUse::Never, false),
    ("ask_lead", false, AgentUse::OwnWork, false),
    ("answer_question", true, AgentUse::Never, true),
    ("inbox_read", true, AgentUse::OwnWork, false),
    ("message_send", true, AgentUse::OwnWork, false),
    ("message_ack", true, AgentUse::OwnWork, false),
    ("approve_tool_call", false, AgentUse::OwnWork, false),
    ("task_merge", false, AgentUse::Never, false),
    ("review_waiting", true, AgentUse::Shared, false),
    ("task_review", true, AgentUse::Shared, false),
    ("review_comment", true, AgentUse::Never, false),
    ("review_request_changes", true, AgentUse::Never, false),
    ("review_check", false, AgentUse::Never, false),
    ("paths_reserve", false, AgentUse::OwnWork, false),
    ("paths_release", false, AgentUse::OwnWork, false),
    ("paths_check", true, AgentUse::Shared, false),
    ("reservations_list", true, AgentUse::Shared, false),
    ("run_new", false, AgentUse::Shared, false),
    ("run_list", true, AgentUse::Shared, false),
    ("signal_write", false, AgentUse::Shared, false),
    ("signal_clear", false, AgentUse::Shared, false),
    ("signal_list", true, AgentUse::Shared, false),
    ("signal_wait", true, AgentUse::Shared, false),
    ("invoke_agent", false, AgentUse::Shared, false),
    ("complete_invocation", false, AgentUse::Shared, false),
    ("track_handoff", false, AgentUse::Shared, false),
    ("start_parallel_execution", false, AgentUse::Shared, false),
    ("aggregate_parallel_results", false, AgentUse::Shared, false),
    ("get_routing_recommendation", true, AgentUse::Shared, false),
];

#[test]
fn every_operation_is_listed_with_its_callers() {
    let mut missing = Vec::new();
    for entry in catalogue() {
        let declared = (
            entry.name,
            entry.callers.responder,
            entry.callers.agent,
            entry.callers.planner,
        );
        match EXPECTED.iter().find(|(name, ..)| *name == entry.name) {
            Some(expected) => assert_eq!(
                *expected, declared,
                "{} declares other callers than this table says",
                entry.name
            ),
            None => missing.push(format!(
                "    (\"{}\", {}, AgentUse::{:?}, {}),",
                declared.0, declared.1, declared.2, declared.3
            )),
        }
    }
    assert!(
        missing.is_empty(),
        "operations not in the table of callers (add them, having decided who may call each):\n{}",
        missing.join("\n")
    );
    for (name, ..) in EXPECTED {
        assert!(
            crate::find(name).is_some(),
            "{name} is listed but not in the catalogue"
        );
    }
}
