//! The lead in the loop, as operations: an agent asks the lead and waits for the answer
//! (`ask_lead`), the lead reads what waits for it and answers (`inbox_read`,
//! `answer_question`), and agents and the lead send each other messages (`message_send`,
//! `message_ack`). The records and their rules are `baton_core::inbox`; the waiting is
//! `baton_live::inbox_wait`. A caller that is an agent acts as itself only.

use std::time::{Duration, Instant};

use baton_core::inbox::{
    self, About, ApprovalDecision, EVERYONE, LEAD, Limited, Message, NewMessage, NewQuestion,
    Question, Unreadable,
};
use baton_core::{ErrorKind, StoreError};
use baton_live::Backend;
use baton_live::inbox_wait::wait_for_inbox;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::operation::{Callers, Context, Operation};

/// How long `ask_lead` waits by default, and at most (seconds).
pub const DEFAULT_ASK_SECONDS: u64 = 300;
pub const MAX_WAIT_SECONDS: u64 = 3600;

/// The agent an operation's required `agent` argument names, when the caller may act as it:
/// an agent's connection as itself only (naming another is refused), the user as any agent.
pub fn as_agent(cx: &Context, named: &str) -> Result<String> {
    acting_as(cx, Some(named), false)
}

/// An optional `agent` argument (who wrote a signal): the caller itself on an agent's
/// connection, named or not; what the user gave otherwise.
pub fn optional_agent(cx: &Context, named: Option<&str>) -> Result<Option<String>> {
    match cx.caller {
        Some(_) => acting_as(cx, named, false).map(Some),
        None => Ok(named.map(str::to_string)),
    }
}

/// Who the caller acts as: itself when it is an agent (naming another is refused), otherwise
/// the agent it names, or the lead when `lead_by_default`.
pub fn acting_as(cx: &Context, named: Option<&str>, lead_by_default: bool) -> Result<String> {
    match (cx.caller.as_deref(), named) {
        (Some(me), Some(other)) if other != me => Err(Error::new(
            ErrorKind::NotYou,
            format!("this connection is agent {me}; it cannot act as {other}"),
        )),
        (Some(me), _) => Ok(me.to_string()),
        (None, Some(name)) if name == LEAD => Ok(LEAD.to_string()),
        (None, Some(name)) => {
            baton_core::names::validate_agent_id(name)?;
            Ok(name.to_string())
        }
        (None, None) if lead_by_default => Ok(LEAD.to_string()),
        (None, None) => Err(Error::invalid_arguments(
            "say which agent is asking: --agent NAME (agent over MCP), or set BATON_AGENT",
        )),
    }
}

fn wait_limit(seconds: Option<u64>, default: u64) -> Result<Duration> {
    let seconds = seconds.unwrap_or(default);
    if seconds == 0 || seconds > MAX_WAIT_SECONDS {
        return Err(Error::invalid_arguments(format!(
            "the timeout must be 1 to {MAX_WAIT_SECONDS} seconds (--timeout; timeout_seconds \
             over MCP)"
        )));
    }
    Ok(Duration::from_secs(seconds))
}

fn known_task(cx: &Context, task: Option<&str>) -> Result<()> {
    if let Some(task) = task
        && cx.tasks.task(task)?.is_none()
    {
        return Err(StoreError::UnknownTask {
            id: task.to_string(),
        }
        .into());
    }
    Ok(())
}

/// Ask the lead a question and wait for the answer.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AskLead {
    /// The question, in words the lead can answer without opening anything else.
    pub question: String,
    /// Answers to choose from (the lead picks one); any text when none are given.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long = "choice", value_name = "CHOICE"))]
    pub choices: Vec<String>,
    /// The task it is about.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub task: Option<String>,
    /// The agent asking (an MCP server started with BATON_AGENT knows it already).
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub agent: Option<String>,
    /// How long to wait for the answer, in seconds (default 300, at most 3600).
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long = "timeout", value_name = "SECONDS"))]
    pub timeout_seconds: Option<u64>,
}

/// How a question ended for the agent that asked.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct AskOutcome {
    pub question: Question,
    /// Whether the lead answered within the time.
    pub answered: bool,
    /// The lead's answer.
    pub answer: Option<String>,
    /// What to do now, in words for the agent.
    pub message: String,
}

impl Operation for AskLead {
    const NAME: &'static str = "ask_lead";
    const DESCRIPTION: &'static str = "Ask the lead a question and wait for the answer (with progress notifications while waiting). Offer choices when the answer is one of a few. Returns the answer, or after timeout_seconds says no answer came: then go on with your best judgement, or fail the task saying what you needed.";
    const READ_ONLY: bool = false;
    const CALLERS: Callers = Callers::OWN_WORK;
    type Output = AskOutcome;
    fn run(self, cx: &Context) -> Result<AskOutcome> {
        self.run_with(cx, |_, _| {})
    }
}

impl AskLead {
    /// Asks and waits; `armed` hears the question's id and what the wait sleeps on, once the
    /// wait is in place.
    pub fn run_with(self, cx: &Context, armed: impl FnOnce(&str, Backend)) -> Result<AskOutcome> {
        let agent = acting_as(cx, self.agent.as_deref(), false)?;
        let limit = wait_limit(self.timeout_seconds, DEFAULT_ASK_SECONDS)?;
        known_task(cx, self.task.as_deref())?;
        // Unnamed, it is about the task the agent holds (the lead sees which).
        let task = match self.task {
            Some(task) => Some(task),
            None => cx.tasks.held_by(&agent)?.into_iter().next().map(|t| t.id),
        };
        let question = ask_and_wait(
            cx,
            NewQuestion {
                agent,
                task,
                text: self.question,
                choices: self.choices,
                about: About::Question,
            },
            limit,
            "no answer",
            armed,
        )?;
        Ok(outcome(question))
    }
}

/// Asks `question` and waits up to `limit` for it to be settled; at the limit it is closed
/// ("`why_closed` within LIMIT"), and an answer that came as the wait ended counts over the
/// closing. `armed` hears the question's id and what the wait sleeps on, once it is in place.
/// What questions and tool-call approvals both do.
pub fn ask_and_wait(
    cx: &Context,
    question: NewQuestion,
    limit: std::time::Duration,
    why_closed: &str,
    armed: impl FnOnce(&str, Backend),
) -> Result<Question> {
    let asked = inbox::ask(&*cx.documents, question)?;
    let id = asked.id.clone();
    let settled = wait_until_settled(cx, &asked.id, Instant::now() + limit, |backend| {
        armed(&id, backend)
    })?;
    if let Some(question) = settled {
        return Ok(question);
    }
    let why = format!("{why_closed} within {}", humantime::format_duration(limit));
    match inbox::close(&*cx.documents, &asked.id, &why) {
        Ok(question) => Ok(question),
        // Answered as the wait ended: the answer counts.
        Err(StoreError::QuestionSettled { .. }) => Ok(inbox::question(&*cx.documents, &asked.id)?),
        Err(e) => Err(e.into()),
    }
}

/// The question once answered or closed, or `None` at `deadline`.
pub fn wait_until_settled(
    cx: &Context,
    id: &str,
    deadline: Instant,
    armed: impl FnOnce(Backend),
) -> Result<Option<Question>> {
    let documents = cx.documents.clone();
    Ok(wait_for_inbox(
        cx.tasks,
        &[inbox::QUESTIONS],
        Some(deadline),
        cx.watch_mode,
        None,
        armed,
        || Ok(Some(inbox::question(&*documents, id)?).filter(|q| !q.is_open())),
    )?)
}

fn outcome(question: Question) -> AskOutcome {
    let answer = question.answer().map(str::to_string);
    let message = match (&answer, &question.state) {
        (Some(answer), _) => format!("The lead answered: {answer}"),
        (None, inbox::QuestionState::Closed { reason, .. }) => format!(
            "{reason}; go on with your best judgement, or fail the task saying what you needed"
        ),
        (None, _) => "the question is still open".to_string(),
    };
    AskOutcome {
        answered: answer.is_some(),
        answer,
        message,
        question,
    }
}

/// Answer a question an agent asked.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AnswerQuestion {
    /// The question's id (q-3).
    pub id: String,
    /// The answer; for a question with choices, one of them or its number (1 for the first).
    pub answer: String,
}

impl Operation for AnswerQuestion {
    const NAME: &'static str = "answer_question";
    const DESCRIPTION: &'static str = "Answer an open question an agent asked (`inbox_read` lists them); the agent's waiting ask_lead returns the answer at once. A question answered or closed already is refused. A team's planner told to (`team up --planner-answers`) answers the workers' questions about its plan's tasks, never an approval.";
    const READ_ONLY: bool = false;
    const CALLERS: Callers = Callers::ANSWERS_AND_PLANNER;
    type Output = Question;
    fn run(self, cx: &Context) -> Result<Question> {
        let by = acting_as(cx, None, true)?;
        // An agent here is a team's planner (the catalogue refuses every other one).
        if let Some(plan) = crate::planning::planning_for(cx)?.filter(|_| cx.caller.is_some()) {
            crate::planning::may_answer(cx, &plan, &self.id)?;
        }
        Ok(inbox::answer(&*cx.documents, &self.id, &by, &self.answer)?)
    }
}

/// What waits for a reader: open questions (for the lead) and messages.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InboxRead {
    /// Whose inbox: the lead's unless the caller is an agent (or names one).
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub agent: Option<String>,
    /// Everything, answered questions and read messages too (default: what waits).
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub all: bool,
    /// Only what concerns this task, with the approval decisions made for it.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub task: Option<String>,
    /// Wait until something waits (returns at once when something does already).
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub wait: bool,
    /// With wait: give up after this many seconds (default 60, at most 3600).
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long = "timeout", value_name = "SECONDS"))]
    pub timeout_seconds: Option<u64>,
}

/// A reader's inbox.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct InboxView {
    /// Who it is for.
    pub reader: String,
    /// Questions the agents asked (the lead's inbox only), oldest first.
    pub questions: Vec<Question>,
    /// Messages for the reader, oldest first.
    pub messages: Vec<Message>,
    /// With a task: every decision about its agents' tool calls (by the policy, the lead, or
    /// for want of an answer), oldest first.
    pub decisions: Vec<ApprovalDecision>,
    /// Questions and messages that could not be read (corrupt, or not what Baton wrote),
    /// named: everything else is shown. `leader doctor` names them too.
    pub unreadable: Vec<Unreadable>,
    /// The lead's inbox only: agents that had messages or questions refused because they had
    /// as many waiting as an agent may (`MAX_UNREAD_FROM`, `MAX_OPEN_QUESTIONS`).
    pub limited: Vec<Limited>,
}

impl InboxView {
    pub fn is_empty(&self) -> bool {
        self.questions.is_empty() && self.messages.is_empty()
    }
}

/// What waits for `reader` now (everything with `all`).
pub fn inbox_of(
    cx: &Context,
    reader: &str,
    all: bool,
    task: Option<&str>,
) -> baton_core::Result<InboxView> {
    let mut unreadable = Vec::new();
    let mut questions = if reader == LEAD {
        let listing = inbox::questions(&*cx.documents, !all)?;
        unreadable.extend(listing.unreadable);
        listing.items
    } else {
        Vec::new()
    };
    let listing = inbox::messages_for(&*cx.documents, reader, !all)?;
    unreadable.extend(listing.unreadable);
    let mut messages = listing.items;
    let mut decisions = Vec::new();
    if let Some(task) = task {
        questions.retain(|q| q.task.as_deref() == Some(task));
        messages.retain(|m| m.task.as_deref() == Some(task));
        decisions = inbox::decisions(&*cx.documents, Some(task), reader)?;
    }
    let limited = match reader == LEAD {
        true => inbox::limited(&*cx.documents)?,
        false => Vec::new(),
    };
    Ok(InboxView {
        reader: reader.to_string(),
        questions,
        messages,
        decisions,
        unreadable,
        limited,
    })
}

impl Operation for InboxRead {
    const NAME: &'static str = "inbox_read";
    const DESCRIPTION: &'static str = "What waits for you: messages sent to you (unread ones unless all), and for the lead the agents' open questions. With wait, returns as soon as something arrives (pushed, not polled). Acknowledge messages with message_ack.";
    const READ_ONLY: bool = true;
    const CALLERS: Callers = Callers::OWN_WORK_AND_RESPONDER;
    type Output = InboxView;
    fn run(self, cx: &Context) -> Result<InboxView> {
        self.run_with(cx, |_| {})
    }
}

impl InboxRead {
    /// Reads (and with wait, waits); `armed` hears what the wait sleeps on once it is in
    /// place (not called without wait, nor when something waits already).
    pub fn run_with(self, cx: &Context, armed: impl FnOnce(Backend)) -> Result<InboxView> {
        let reader = acting_as(cx, self.agent.as_deref(), true)?;
        let task = self.task.as_deref();
        let now = inbox_of(cx, &reader, self.all, task)?;
        // What waits already is answered at once: no wait is armed, none said.
        let waiting = match self.all {
            true => !inbox_of(cx, &reader, false, task)?.is_empty(),
            false => !now.is_empty(),
        };
        if !self.wait || waiting {
            return Ok(now);
        }
        let limit = wait_limit(self.timeout_seconds, 60)?;
        let found = wait_for_inbox(
            cx.tasks,
            &[inbox::QUESTIONS, inbox::MESSAGES],
            Some(Instant::now() + limit),
            cx.watch_mode,
            None,
            armed,
            || {
                let view = inbox_of(cx, &reader, false, task)?;
                Ok((!view.is_empty()).then_some(view))
            },
        )?;
        match found {
            Some(view) if !self.all => Ok(view),
            _ => Ok(inbox_of(cx, &reader, self.all, task)?),
        }
    }
}

/// Send a message to an agent, the lead, or everyone.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MessageSend {
    /// An agent's name, `lead`, or `all` (everyone working on the project).
    pub to: String,
    /// One line saying what it is about.
    pub subject: String,
    /// The message (at most 64 KiB of plain text).
    pub body: String,
    /// The task it is about.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub task: Option<String>,
    /// Who sends it: yourself (an MCP server started with BATON_AGENT knows who that is);
    /// the lead by default for the user.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long = "as", value_name = "AGENT"))]
    pub from: Option<String>,
}

impl Operation for MessageSend {
    const NAME: &'static str = "message_send";
    const DESCRIPTION: &'static str = "Send a message to an agent, the lead, or all (everyone working on the project). It reaches an agent on its next tool call (Claude Code's hooks) or its inbox_read, and wakes anyone waiting. You send as yourself only.";
    const READ_ONLY: bool = false;
    const CALLERS: Callers = Callers::OWN_WORK_AND_RESPONDER;
    type Output = Message;
    fn run(self, cx: &Context) -> Result<Message> {
        let from = acting_as(cx, self.from.as_deref(), true)?;
        known_recipient(cx, &self.to)?;
        known_task(cx, self.task.as_deref())?;
        Ok(inbox::send(
            &*cx.documents,
            NewMessage {
                from,
                to: self.to,
                subject: self.subject,
                body: self.body,
                task: self.task,
            },
        )?)
    }
}

/// A recipient Baton knows: the lead, everyone, an agent that has worked on the project or a
/// supervised worker.
fn known_recipient(cx: &Context, to: &str) -> Result<()> {
    if to == LEAD || to == EVERYONE {
        return Ok(());
    }
    baton_core::names::validate_agent_id(to)?;
    // One agent's record (one row in a database), not the whole board.
    let (seen, _) = cx.tasks.last_seen(to)?;
    if seen.is_some() || cx.team.workers()?.iter().any(|w| w.name == to) {
        return Ok(());
    }
    Err(Error::new(
        ErrorKind::UnknownRecipient,
        format!(
            "no agent {to:?} in this project (`baton leader agents` lists them); send to lead or all instead"
        ),
    ))
}

/// Mark messages as read.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MessageAck {
    /// The messages' ids (m-4).
    #[cfg_attr(feature = "cli", arg(required = true))]
    pub ids: Vec<String>,
    /// Whose reading: yourself (the lead by default for the user).
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long = "as", value_name = "AGENT"))]
    pub reader: Option<String>,
}

/// Messages marked read.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Acknowledged {
    pub reader: String,
    pub ids: Vec<String>,
}

impl Operation for MessageAck {
    const NAME: &'static str = "message_ack";
    const DESCRIPTION: &'static str =
        "Mark messages sent to you as read, so inbox_read and the hooks stop showing them.";
    const READ_ONLY: bool = false;
    const CALLERS: Callers = Callers::OWN_WORK_AND_RESPONDER;
    type Output = Acknowledged;
    fn run(self, cx: &Context) -> Result<Acknowledged> {
        let reader = acting_as(cx, self.reader.as_deref(), true)?;
        if self.ids.is_empty() {
            return Err(Error::invalid_arguments("name at least one message id"));
        }
        inbox::mark_read(&*cx.documents, &reader, &self.ids)?;
        Ok(Acknowledged {
            reader,
            ids: self.ids,
        })
    }
}
