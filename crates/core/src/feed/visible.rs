//! What of the change feed an agent may see: the project's shared state (the board, signals
//! and runs, discoveries, the master plan and summary, results, orchestration), and of the
//! records that belong to someone, its own only (its task's transcript, its log, its worker's
//! record, the questions it asked, the messages to and from it). The lead sees everything; an
//! agent behind its attempt's door sees this (`baton watch`), so one agent cannot read
//! another's transcript, its questions or its messages to the lead as they happen.

use super::ChangeEvent;

impl ChangeEvent {
    /// Whether agent `agent`, working task `task` (when it works one), may see this change.
    pub fn visible_to(&self, agent: &str, task: Option<&str>) -> bool {
        match self {
            ChangeEvent::TasksChanged { .. }
            | ChangeEvent::TasksUnreadable { .. }
            | ChangeEvent::SignalWritten { .. }
            | ChangeEvent::SignalCleared { .. }
            | ChangeEvent::RunStarted { .. }
            | ChangeEvent::DiscoveryAdded { .. }
            | ChangeEvent::ResultWritten { .. }
            | ChangeEvent::MasterPlanChanged
            | ChangeEvent::SummaryWritten
            | ChangeEvent::OrchestrationChanged { .. }
            | ChangeEvent::HandoffWritten => true,
            ChangeEvent::LogAppended { agent: whose, .. } => whose == agent,
            ChangeEvent::WorkerChanged { worker } => worker.name == agent,
            ChangeEvent::TranscriptAppended { task: of, .. } => task == Some(of.as_str()),
            ChangeEvent::QuestionAsked { question } | ChangeEvent::QuestionSettled { question } => {
                question.agent == agent
            }
            ChangeEvent::MessageSent { message } => message.from == agent || message.is_for(agent),
            // Browsers are the lead's machine's; the team's end is the lead's news.
            ChangeEvent::BrowserAdded { .. }
            | ChangeEvent::BrowserRemoved { .. }
            | ChangeEvent::TeamEnded { .. } => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inbox::{EVERYONE, Message};
    use crate::time::Timestamp;

    fn message(from: &str, to: &str) -> ChangeEvent {
        ChangeEvent::MessageSent {
            message: Message {
                id: "m-1".into(),
                from: from.into(),
                to: to.into(),
                subject: "s".into(),
                body: "b".into(),
                task: None,
                sent_at: Timestamp::now(),
                read_by: Vec::new(),
            },
        }
    }

    #[test]
    fn an_agent_sees_shared_state_and_its_own_records_only() {
        let transcript = |task: &str| ChangeEvent::TranscriptAppended {
            task: task.into(),
            attempt: 1,
            events: Vec::new(),
        };
        assert!(transcript("t1").visible_to("ex1", Some("t1")));
        assert!(!transcript("t2").visible_to("ex1", Some("t1")));
        assert!(!transcript("t1").visible_to("ex1", None));
        let log = |agent: &str| ChangeEvent::LogAppended {
            agent: agent.into(),
            lines: Vec::new(),
        };
        assert!(log("ex1").visible_to("ex1", None));
        assert!(!log("ex2").visible_to("ex1", None));
        assert!(message("ex1", "lead").visible_to("ex1", None));
        assert!(message("lead", "ex1").visible_to("ex1", None));
        assert!(message("lead", EVERYONE).visible_to("ex1", None));
        assert!(!message("ex2", "lead").visible_to("ex1", None));
        assert!(ChangeEvent::MasterPlanChanged.visible_to("ex1", None));
        assert!(ChangeEvent::DiscoveryAdded { text: "x".into() }.visible_to("ex1", None));
        assert!(!ChangeEvent::BrowserRemoved { port: 1 }.visible_to("ex1", None));
    }
}
