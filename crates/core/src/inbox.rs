//! The lead in the loop: questions an agent asks the lead (an approval is a question about one
//! tool call), and messages between agents and the lead. Each question and each message is a
//! document beside the tasks ([`DocumentStore`]), changed under its hold: two leads answering
//! at once give one answer, and a reader marking a message read loses nobody else's mark.
//! Waiters wake on the store's own notice of a change (file events, a database's
//! notifications), never by polling; `baton-live` does the waiting.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::documents::DocumentStore;
use crate::error::{Result, StoreError};
use crate::time::Timestamp;

mod decisions;
mod listing;
mod numbering;
mod quota;

pub use decisions::{ApprovalDecision, DECISIONS, MAX_DECISIONS, decisions, record_decision};
use listing::read_each;
pub use listing::{Listing, Unreadable};
use numbering::create;
pub use numbering::{highest_number, inbox_findings, repair_number};
pub use quota::{LIMITED, Limited, MAX_OPEN_QUESTIONS, MAX_UNREAD_FROM, limited};

/// The folder of question documents (`inbox/questions/q-N.json`).
pub const QUESTIONS: &str = "inbox/questions";
/// The folder of message documents (`inbox/messages/m-N.json`).
pub const MESSAGES: &str = "inbox/messages";
/// The document numbering questions and messages.
pub const NUMBERS: &str = "inbox/numbers.json";

/// Who the lead is, as a sender and a recipient.
pub use crate::names::LEAD;
/// The recipient that is everyone working on the project.
pub const EVERYONE: &str = "all";

/// The longest question, answer, subject and body kept (bytes).
pub const MAX_TEXT: usize = 16 * 1024;
pub const MAX_BODY: usize = 64 * 1024;
pub const MAX_SUBJECT: usize = 200;
/// The most choices a question offers.
pub const MAX_CHOICES: usize = 20;

/// A question to the lead, or an approval asked for.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Question {
    /// `q-1`, `q-2`, … in the order asked.
    pub id: String,
    /// The agent that asked.
    pub agent: String,
    /// The task it asked about.
    pub task: Option<String>,
    pub text: String,
    /// The answers to choose from; any text when empty.
    pub choices: Vec<String>,
    /// What is asked about: a plain question, or a tool call to approve.
    pub about: About,
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub asked_at: Timestamp,
    pub state: QuestionState,
}

/// What a question is about.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum About {
    /// A question in words.
    Question,
    /// Whether the agent may make this tool call (its permission prompt).
    Approval {
        tool: String,
        #[cfg_attr(feature = "ts", ts(type = "unknown"))]
        input: Value,
    },
    /// Whether the team may work its planner's plan: the tasks it proposed (`plan`'s), which
    /// nobody claims before the answer. `approve`, or words the planner plans again with.
    Plan { plan: String, tasks: Vec<String> },
    /// Whether a team's planner may go past a limit of plan `plan`'s. Asked by Baton, never by
    /// an agent, so only the lead answers it: `go on`, or words that keep the limit.
    Limit { plan: String, limit: PlanLimit },
}

/// A limit a team's planner reached, which the lead may raise.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PlanLimit {
    /// The sessions a plan gets: the lead may give it as many again.
    Sessions,
    /// The tasks a plan may have: the lead may allow more.
    Tasks,
    /// What the planner may spend: the lead may give it as much again.
    Budget,
}

/// Where a question stands.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum QuestionState {
    /// Waiting for the lead.
    Open,
    Answered {
        answer: String,
        by: String,
        #[cfg_attr(feature = "ts", ts(type = "string"))]
        at: Timestamp,
    },
    /// Closed without an answer: the asker stopped waiting (its timeout), or went away.
    Closed {
        reason: String,
        #[cfg_attr(feature = "ts", ts(type = "string"))]
        at: Timestamp,
    },
}

impl Question {
    pub fn is_open(&self) -> bool {
        self.state == QuestionState::Open
    }

    pub fn answer(&self) -> Option<&str> {
        match &self.state {
            QuestionState::Answered { answer, .. } => Some(answer),
            _ => None,
        }
    }
}

/// A message between agents and the lead.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Message {
    /// `m-1`, `m-2`, … in the order sent.
    pub id: String,
    pub from: String,
    /// An agent, `lead`, or `all` (everyone working on the project but the sender).
    pub to: String,
    pub subject: String,
    pub body: String,
    pub task: Option<String>,
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub sent_at: Timestamp,
    /// Who has read it (acknowledged it).
    pub read_by: Vec<String>,
}

impl Message {
    /// Whether `reader` is among its recipients.
    pub fn is_for(&self, reader: &str) -> bool {
        self.to == reader || (self.to == EVERYONE && self.from != reader)
    }

    pub fn is_read_by(&self, reader: &str) -> bool {
        self.read_by.iter().any(|r| r == reader)
    }
}

/// A question about to be asked.
#[derive(Debug, Clone)]
pub struct NewQuestion {
    pub agent: String,
    pub task: Option<String>,
    pub text: String,
    pub choices: Vec<String>,
    pub about: About,
}

/// A message about to be sent.
#[derive(Debug, Clone)]
pub struct NewMessage {
    pub from: String,
    pub to: String,
    pub subject: String,
    pub body: String,
    pub task: Option<String>,
}

/// Refuses empty text, text over `max` bytes or with control characters (the rules of every
/// free text, `crate::text`); `one_line` refuses line breaks and tabs too.
fn check_text(field: &'static str, text: &str, max: usize, one_line: bool) -> Result<()> {
    crate::text::check_text(field, text, max, true)?;
    if one_line && text.contains(['\n', '\r', '\t']) {
        return Err(StoreError::invalid(field, "it must be one line"));
    }
    Ok(())
}

fn document(folder: &str, id: &str) -> String {
    format!("{folder}/{id}.json")
}

fn parse<T: serde::de::DeserializeOwned>(name: &str, value: Value) -> Result<T> {
    serde_json::from_value(value).map_err(|e| {
        StoreError::invalid(
            "inbox",
            format!("{name} is not what Baton wrote ({e}); fix or remove it"),
        )
    })
}

/// Checks an id as `prefix-N`, so it names a document and nothing else.
fn check_id(id: &str, prefix: &str) -> Result<()> {
    let number = id
        .strip_prefix(prefix)
        .and_then(|n| n.strip_prefix('-'))
        .filter(|n| !n.is_empty() && n.len() <= 12 && n.bytes().all(|b| b.is_ascii_digit()));
    match number {
        Some(_) => Ok(()),
        None => Err(StoreError::invalid(
            "id",
            format!("{id:?} is not an id of Baton's inbox (they look like {prefix}-12)"),
        )),
    }
}

/// Records `new` as an open question and returns it.
pub fn ask(docs: &dyn DocumentStore, new: NewQuestion) -> Result<Question> {
    check_text("question", &new.text, MAX_TEXT, false)?;
    if new.choices.len() > MAX_CHOICES {
        return Err(StoreError::invalid(
            "choices",
            format!("at most {MAX_CHOICES}"),
        ));
    }
    for choice in &new.choices {
        check_text("choices", choice, MAX_SUBJECT, true)?;
    }
    quota::check_question(docs, &new.agent)?;
    create(docs, QUESTIONS, "q", "questions", &|id, now| Question {
        id,
        agent: new.agent.clone(),
        task: new.task.clone(),
        text: new.text.clone(),
        choices: new.choices.clone(),
        about: new.about.clone(),
        asked_at: now,
        state: QuestionState::Open,
    })
}

/// Question `id`, or an unknown-id error.
pub fn question(docs: &dyn DocumentStore, id: &str) -> Result<Question> {
    check_id(id, "q")?;
    let name = document(QUESTIONS, id);
    match docs.read_document(&name)? {
        Some(value) => parse(&name, value),
        None => Err(StoreError::UnknownInboxItem {
            what: "question",
            id: id.to_string(),
        }),
    }
}

/// Every question, oldest first; only the open ones with `open_only`.
pub fn questions(docs: &dyn DocumentStore, open_only: bool) -> Result<Listing<Question>> {
    let mut all = read_each::<Question>(docs, QUESTIONS, |q| &q.id)?;
    all.items.retain(|q| !open_only || q.is_open());
    Ok(all)
}

fn number_of(id: &str) -> u64 {
    id.rsplit('-')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// Settles open question `id` by the state `state` gives it (an answer or a closing), under
/// the question's hold; a question already settled is refused with what settled it, and left
/// as it was.
fn settle(
    docs: &dyn DocumentStore,
    id: &str,
    state: &dyn Fn(&Question, Timestamp) -> Result<QuestionState>,
) -> Result<Question> {
    question(docs, id)?; // known, before anything is held
    let name = document(QUESTIONS, id);
    let mut outcome = None;
    docs.change_document(&name, &mut |current, now| {
        let Some(value) = current else {
            outcome = Some(Err(StoreError::UnknownInboxItem {
                what: "question",
                id: id.to_string(),
            }));
            return Ok(None);
        };
        let mut question: Question = parse(&name, value)?;
        if !question.is_open() {
            let how = match &question.state {
                QuestionState::Answered { answer, by, .. } => {
                    format!("already answered by {by}: {answer:?}")
                }
                QuestionState::Closed { reason, .. } => format!("closed: {reason}"),
                QuestionState::Open => unreachable!(),
            };
            outcome = Some(Err(StoreError::QuestionSettled {
                id: id.to_string(),
                how,
            }));
            return Ok(None);
        }
        question.state = state(&question, now)?;
        let value = serde_json::to_value(&question).expect("questions serialise");
        outcome = Some(Ok(question));
        Ok(Some(value))
    })?;
    outcome.expect("the question was looked at")
}

/// Answers open question `id` as `by`. With choices, the answer is one of them (or its number,
/// 1 for the first).
pub fn answer(docs: &dyn DocumentStore, id: &str, by: &str, text: &str) -> Result<Question> {
    check_text("answer", text, MAX_TEXT, false)?;
    settle(docs, id, &|asked, at| {
        let answer = if asked.choices.is_empty() {
            text.to_string()
        } else {
            chosen(&asked.choices, text)?
        };
        Ok(QuestionState::Answered {
            answer,
            by: by.to_string(),
            at,
        })
    })
}

/// The choice `text` names: itself, or the one choice equal to it but for case, or its
/// number.
pub fn chosen(choices: &[String], text: &str) -> Result<String> {
    let text = text.trim();
    if let Some(choice) = choices.iter().find(|c| c.as_str() == text) {
        return Ok(choice.clone());
    }
    let folded: Vec<&String> = choices
        .iter()
        .filter(|c| c.to_lowercase() == text.to_lowercase())
        .collect();
    if let [choice] = folded[..] {
        return Ok(choice.clone());
    }
    if let Ok(n) = text.parse::<usize>()
        && (1..=choices.len()).contains(&n)
    {
        return Ok(choices[n - 1].clone());
    }
    let listed: Vec<String> = choices
        .iter()
        .enumerate()
        .map(|(i, c)| format!("{} {c:?}", i + 1))
        .collect();
    Err(StoreError::invalid(
        "answer",
        format!("choose one of: {}", listed.join(", ")),
    ))
}

/// Closes open question `id` unanswered, saying why (the asker stopped waiting, or is gone).
pub fn close(docs: &dyn DocumentStore, id: &str, reason: &str) -> Result<Question> {
    settle(docs, id, &|_, at| {
        Ok(QuestionState::Closed {
            reason: reason.to_string(),
            at,
        })
    })
}

/// Closes every open question `agent` asked about `task`, saying `reason` (its attempt ended,
/// so nobody waits for the answer any more); the ids closed. A question Baton asked for the
/// plan the agent plans (a limit of it, its approval) waits for the lead past the attempt.
pub fn close_open_of(
    docs: &dyn DocumentStore,
    agent: &str,
    task: &str,
    reason: &str,
) -> Result<Vec<String>> {
    let mut closed = Vec::new();
    for question in questions(docs, true)?.items {
        let the_agents = matches!(question.about, About::Question | About::Approval { .. });
        if the_agents && question.agent == agent && question.task.as_deref() == Some(task) {
            match close(docs, &question.id, reason) {
                Ok(_) => closed.push(question.id),
                // Answered meanwhile: nothing to close.
                Err(StoreError::QuestionSettled { .. }) => {}
                Err(e) => return Err(e),
            }
        }
    }
    Ok(closed)
}

/// Sends `new` and returns it as stored.
pub fn send(docs: &dyn DocumentStore, new: NewMessage) -> Result<Message> {
    check_text("subject", &new.subject, MAX_SUBJECT, true)?;
    check_text("body", &new.body, MAX_BODY, false)?;
    quota::check_message(docs, &new.from)?;
    create(docs, MESSAGES, "m", "messages", &|id, now| Message {
        id,
        from: new.from.clone(),
        to: new.to.clone(),
        subject: new.subject.clone(),
        body: new.body.clone(),
        task: new.task.clone(),
        sent_at: now,
        read_by: Vec::new(),
    })
}

/// Every message, oldest first.
pub fn all_messages(docs: &dyn DocumentStore) -> Result<Listing<Message>> {
    read_each::<Message>(docs, MESSAGES, |m| &m.id)
}

/// The messages for `reader`, oldest first; only those it has not read with `unread_only`.
pub fn messages_for(
    docs: &dyn DocumentStore,
    reader: &str,
    unread_only: bool,
) -> Result<Listing<Message>> {
    let mut all = all_messages(docs)?;
    all.items
        .retain(|m| m.is_for(reader) && !(unread_only && m.is_read_by(reader)));
    Ok(all)
}

/// Marks messages `ids` read by `reader`; a message not for `reader` is refused.
pub fn mark_read(docs: &dyn DocumentStore, reader: &str, ids: &[String]) -> Result<()> {
    // All or nothing: every id is checked (known, and the reader's) before any is marked.
    for id in ids {
        check_id(id, "m")?;
        let name = document(MESSAGES, id);
        let Some(value) = docs.read_document(&name)? else {
            return Err(StoreError::UnknownInboxItem {
                what: "message",
                id: id.clone(),
            });
        };
        let message: Message = parse(&name, value)?;
        if !message.is_for(reader) {
            return Err(not_the_readers(id, &message, reader));
        }
    }
    for id in ids {
        let name = document(MESSAGES, id);
        let mut refusal = None;
        docs.change_document(&name, &mut |current, _| {
            let Some(value) = current else {
                refusal = Some(StoreError::UnknownInboxItem {
                    what: "message",
                    id: id.clone(),
                });
                return Ok(None);
            };
            let mut message: Message = parse(&name, value)?;
            if !message.is_for(reader) {
                refusal = Some(not_the_readers(id, &message, reader));
                return Ok(None);
            }
            if message.is_read_by(reader) {
                return Ok(None);
            }
            message.read_by.push(reader.to_string());
            Ok(Some(
                serde_json::to_value(&message).expect("messages serialise"),
            ))
        })?;
        if let Some(refusal) = refusal {
            return Err(refusal);
        }
    }
    Ok(())
}

fn not_the_readers(id: &str, message: &Message, reader: &str) -> StoreError {
    StoreError::invalid(
        "ids",
        format!("message {id} is for {}, not {reader}", message.to),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::MemoryDocuments;

    fn send(docs: &MemoryDocuments, body: &str) -> Message {
        super::send(
            docs,
            NewMessage {
                from: "a1".into(),
                to: LEAD.into(),
                subject: "Note".into(),
                body: body.into(),
                task: None,
            },
        )
        .unwrap()
    }

    #[test]
    fn a_rewound_or_deleted_counter_never_costs_a_record_and_doctor_moves_it_up() {
        let docs = MemoryDocuments::default();
        let first = send(&docs, "one");
        let second = send(&docs, "two");
        assert_eq!((first.id.as_str(), second.id.as_str()), ("m-1", "m-2"));
        // Rewound to before m-1, as `git checkout` of an old copy would.
        docs.change_document(NUMBERS, &mut |_, _| {
            Ok(Some(serde_json::json!({"messages": 0})))
        })
        .unwrap();
        let (findings, _) = inbox_findings(&docs, false).unwrap();
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert!(findings[0].message.contains("m-2"), "{findings:?}");
        let third = send(&docs, "three");
        assert_eq!(third.id, "m-3");
        let kept = |id: &str| -> String {
            let value = docs
                .read_document(&document(MESSAGES, id))
                .unwrap()
                .unwrap();
            value["body"].as_str().unwrap().to_string()
        };
        assert_eq!((kept("m-1"), kept("m-2")), ("one".into(), "two".into()));
        // Deleted: the same.
        docs.change_document(NUMBERS, &mut |_, _| Ok(Some(serde_json::json!({}))))
            .unwrap();
        let (_, fixed) = inbox_findings(&docs, true).unwrap();
        assert_eq!(fixed.len(), 1, "{fixed:?}");
        assert!(inbox_findings(&docs, false).unwrap().0.is_empty());
        assert_eq!(send(&docs, "four").id, "m-4");
        assert_eq!(kept("m-3"), "three");
    }

    #[test]
    fn a_choice_is_named_by_its_text_whatever_the_case_or_by_its_number() {
        let choices = ["serde_json".to_string(), "simd-json".to_string()];
        assert_eq!(chosen(&choices, "simd-json").unwrap(), "simd-json");
        assert_eq!(chosen(&choices, " SIMD-JSON ").unwrap(), "simd-json");
        assert_eq!(chosen(&choices, "1").unwrap(), "serde_json");
        assert!(chosen(&choices, "3").is_err());
        assert!(chosen(&choices, "rapidjson").is_err());
        // Two choices equal but for case: only the exact one names one.
        let both = ["Yes".to_string(), "yes".to_string()];
        assert_eq!(chosen(&both, "yes").unwrap(), "yes");
        assert!(chosen(&both, "YES").is_err());
    }
}
