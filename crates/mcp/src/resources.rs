//! Resources: the source design's `agents://` resources and Baton's board, as JSON. Which
//! change-feed events make which resource stale is decided here too, so subscribers are
//! notified exactly when what they read would change.

use baton_agents::Orchestrator;
use baton_api::{Context, Operation, signals, tasks};
use baton_live::feed::ChangeEvent;
use rmcp::model::Resource;
use serde_json::{Value, json};

use baton_api::Error;
use baton_core::ErrorKind;

pub const CATALOG: &str = "agents://catalog";
pub const WORKFLOWS: &str = "agents://workflows";
pub const ACTIVE: &str = "agents://active";
pub const HISTORY: &str = "agents://history";
pub const TASKS: &str = "baton://tasks";
pub const SIGNALS: &str = "baton://signals";
pub const INBOX: &str = "baton://inbox";

pub fn list() -> Vec<Resource> {
    let json = |uri: &str, name: &str, description: &str| {
        Resource::new(uri, name)
            .with_description(description)
            .with_mime_type("application/json")
    };
    vec![
        json(
            TASKS,
            "tasks",
            "The task board: every task, its status, owner, lease and dependencies, with counts.",
        ),
        json(SIGNALS, "signals", "The signals present in the latest run."),
        json(
            INBOX,
            "inbox",
            "What waits for this server's agent (BATON_AGENT), or for the lead: open questions and unread messages. Subscribe to hear of each arrival.",
        ),
        json(
            CATALOG,
            "catalog",
            "Every agent: role, default model, tools, delegation.",
        ),
        json(
            WORKFLOWS,
            "workflows",
            "Routing rules: workflow, pattern, agents, confidence.",
        ),
        json(ACTIVE, "active", "Active invocations and parallel runs."),
        json(
            HISTORY,
            "history",
            "The last 50 invocations, the handoff chain and the conflict log.",
        ),
    ]
}

/// The resource's content now: the board and the signals are what the `task_status` and
/// `signal_list` tools return. Blocking.
pub fn read(cx: &Context, uri: &str) -> Result<Value, Error> {
    let orchestrator =
        || Orchestrator::open_on(cx.local, cx.documents.clone()).map_err(Error::from);
    Ok(match uri {
        TASKS => to_json(tasks::Status::default().run(cx)?),
        SIGNALS => to_json(signals::ListSignals { run: None }.run(cx)?),
        INBOX => to_json(baton_api::inbox::InboxRead::default().run(cx)?),
        CATALOG => {
            let o = orchestrator()?;
            let agents: Vec<Value> = o
                .registry()
                .agents
                .values()
                .map(|a| {
                    json!({
                        "name": a.name, "role": a.role, "description": a.description,
                        "default_model": a.model, "tools": a.tools,
                        "delegates_to": a.delegates_to, "called_by": a.called_by,
                        "artifact_directory": a.artifact_directory, "source": a.source,
                    })
                })
                .collect();
            json!({ "agents": agents, "total_agents": agents.len(), "problems": o.registry().diagnostics })
        }
        WORKFLOWS => to_json(orchestrator()?.workflows()?),
        ACTIVE => {
            let state = orchestrator()?.state()?;
            let running: Vec<_> = state
                .parallel_runs
                .iter()
                .filter(|p| p.status != baton_agents::state::ParallelStatus::Complete)
                .collect();
            json!({ "active_invocations": state.active, "parallel_executions": running })
        }
        HISTORY => {
            let state = orchestrator()?.state()?;
            json!({ "invocations": state.history, "handoffs": state.handoffs, "conflicts": state.conflicts })
        }
        other => {
            return Err(Error::new(
                ErrorKind::UnknownResource,
                format!("unknown resource {other:?}; resources/list names them"),
            ));
        }
    })
}

fn to_json(value: impl serde::Serialize) -> Value {
    serde_json::to_value(value).expect("serialises")
}

/// The resources whose content an event changes.
pub fn affected(event: &ChangeEvent) -> &'static [&'static str] {
    match event {
        ChangeEvent::TasksChanged { .. } | ChangeEvent::TasksUnreadable { .. } => &[TASKS],
        ChangeEvent::SignalWritten { .. }
        | ChangeEvent::SignalCleared { .. }
        | ChangeEvent::RunStarted { .. } => &[SIGNALS],
        ChangeEvent::OrchestrationChanged { file } if file == "workflows.json" => &[WORKFLOWS],
        ChangeEvent::OrchestrationChanged { file } if file == "config.json" => &[CATALOG],
        ChangeEvent::OrchestrationChanged { .. } => &[ACTIVE, HISTORY],
        ChangeEvent::QuestionAsked { .. }
        | ChangeEvent::QuestionSettled { .. }
        | ChangeEvent::MessageSent { .. } => &[INBOX],
        _ => &[],
    }
}
