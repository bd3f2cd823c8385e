//! Who may call each operation, listed whole: a new operation fails this test until it is
//! added here, so each is classified once, on purpose, where a reviewer sees the whole table.

use crate::{AgentUse, catalogue};

/// Every operation, with whether a responder device may call it and what an agent may do with
/// it (the lead may call every one).
const EXPECTED: &[(&str, bool, AgentUse)] = &[
    ("task_status", true, AgentUse::Shared),
    ("task_list", true, AgentUse::Shared),
    ("task_add", false, AgentUse::Never),
    ("task_edit", false, AgentUse::Never),
    ("task_claim", false, AgentUse::OwnWork),
    ("task_start", false, AgentUse::OwnWork),
    ("task_complete", false, AgentUse::OwnWork),
    ("task_fail", false, AgentUse::OwnWork),
    ("task_release", false, AgentUse::OwnWork),
    ("task_heartbeat", false, AgentUse::OwnWork),
    ("task_reset", false, AgentUse::Never),
    ("task_approve", false, AgentUse::Never),
    ("task_cancel", false, AgentUse::Never),
    ("task_move", false, AgentUse::Never),
    ("discover", false, AgentUse::Shared),
    ("aggregate", false, AgentUse::Never),
    ("doctor", false, AgentUse::Never),
    ("logs", true, AgentUse::OwnWork),
    ("agents_overview", true, AgentUse::Shared),
    ("team_up", false, AgentUse::Never),
    ("team_status", true, AgentUse::Shared),
    ("team_transcript", true, AgentUse::OwnWork),
    ("team_stop", true, AgentUse::Never),
    ("ask_lead", false, AgentUse::OwnWork),
    ("answer_question", true, AgentUse::Never),
    ("inbox_read", true, AgentUse::OwnWork),
    ("message_send", true, AgentUse::OwnWork),
    ("message_ack", true, AgentUse::OwnWork),
    ("approve_tool_call", false, AgentUse::OwnWork),
    ("task_merge", false, AgentUse::Never),
    ("task_review", true, AgentUse::Shared),
    ("review_comment", true, AgentUse::Never),
    ("review_request_changes", true, AgentUse::Never),
    ("review_check", false, AgentUse::Never),
    ("paths_reserve", false, AgentUse::OwnWork),
    ("paths_release", false, AgentUse::OwnWork),
    ("paths_check", true, AgentUse::Shared),
    ("reservations_list", true, AgentUse::Shared),
    ("run_new", false, AgentUse::Shared),
    ("run_list", true, AgentUse::Shared),
    ("signal_write", false, AgentUse::Shared),
    ("signal_clear", false, AgentUse::Shared),
    ("signal_list", true, AgentUse::Shared),
    ("signal_wait", true, AgentUse::Shared),
    ("invoke_agent", false, AgentUse::Shared),
    ("complete_invocation", false, AgentUse::Shared),
    ("track_handoff", false, AgentUse::Shared),
    ("start_parallel_execution", false, AgentUse::Shared),
    ("aggregate_parallel_results", false, AgentUse::Shared),
    ("get_routing_recommendation", true, AgentUse::Shared),
];

#[test]
fn every_operation_is_listed_with_its_callers() {
    let mut missing = Vec::new();
    for entry in catalogue() {
        let declared = (entry.name, entry.callers.responder, entry.callers.agent);
        match EXPECTED.iter().find(|(name, ..)| *name == entry.name) {
            Some(expected) => assert_eq!(
                *expected, declared,
                "{} declares other callers than this table says",
                entry.name
            ),
            None => missing.push(format!(
                "    (\"{}\", {}, AgentUse::{:?}),",
                declared.0, declared.1, declared.2
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
