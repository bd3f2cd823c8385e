//! The lead in the loop on the command line: `baton ask` (an agent in a terminal asks the lead
//! and waits), `baton inbox [--wait]`, `baton answer ID TEXT`, and `baton message send|ack`.
//! Each is its catalogue operation; this file only reads the words and prints the result.

use baton_api::approvals::ApproveToolCall;
use baton_api::inbox::{AnswerQuestion, AskLead, InboxRead, InboxView, MessageAck, MessageSend};
use baton_api::{Error, OpenProject, exit};
use baton_core::inbox::{About, Message, Question, QuestionState};
use baton_live::WatchMode;
use clap::Subcommand;

use crate::context::{as_user, operate};
use crate::output::emit;
use crate::render::{clean, line};

#[derive(Debug, Subcommand)]
pub enum MessageCommand {
    /// Send a message to an agent, the lead, or all (everyone working on the project). An
    /// agent gets it on its next tool call (Claude Code hooks) or its `baton inbox`.
    Send(MessageSend),
    /// Mark messages as read (acknowledged), so they stop being shown as new.
    Ack(MessageAck),
}

/// The agent a terminal's commands (and an MCP server it starts) speak for, from BATON_AGENT.
pub fn terminal_agent() -> Option<String> {
    crate::context::door_guest()
        .or_else(|| std::env::var("BATON_AGENT").ok().filter(|a| !a.is_empty()))
}

/// `baton ask`: the answer on stdout; exit code 5 (timed out) when none came.
pub fn ask(
    project: &OpenProject,
    mut request: AskLead,
    mode: WatchMode,
    json: bool,
) -> Result<u8, Error> {
    request.agent = request.agent.or_else(terminal_agent);
    let outcome = as_user(project, mode, baton_core::ForeignFile::Keep, |cx| {
        request.run_with(cx, |id, backend| {
            eprintln!("baton: asked {id}; waiting for the lead's answer ({backend})")
        })
    })?;
    // The answer alone on stdout (for `$(baton ask …)`); why there is none on stderr.
    match &outcome.answer {
        None if !json => eprintln!("baton: {}", outcome.message),
        _ => emit(json, &outcome, || {
            outcome.answer.clone().unwrap_or_default()
        }),
    }
    Ok(if outcome.answered {
        0
    } else {
        exit::TIMED_OUT.code
    })
}

/// `baton inbox`: what waits; with --wait and nothing arriving, exit code 5.
pub fn inbox(
    project: &OpenProject,
    mut request: InboxRead,
    mode: WatchMode,
    json: bool,
) -> Result<u8, Error> {
    request.agent = request.agent.or_else(terminal_agent);
    let waited = request.wait;
    let view = as_user(project, mode, baton_core::ForeignFile::Keep, |cx| {
        request.run_with(cx, |backend| {
            eprintln!("baton: waiting for questions and messages ({backend})")
        })
    })?;
    emit(json, &view, || render(&view));
    Ok(if waited && view.is_empty() {
        exit::TIMED_OUT.code
    } else {
        0
    })
}

/// `baton approve`: the verdict; the agent is BATON_AGENT unless --agent names it.
pub fn approve(
    project: &OpenProject,
    mut request: ApproveToolCall,
    mode: WatchMode,
    json: bool,
) -> Result<u8, Error> {
    request.agent = request.agent.or_else(terminal_agent);
    let render = |v: &baton_api::approvals::ToolVerdict| match &v.message {
        Some(why) => format!("{}: {}", v.behavior, clean(why)),
        None => v.behavior.clone(),
    };
    // A denied call is a refusal: said as usual, and the exit says so to a script.
    let exit =
        |v: &baton_api::approvals::ToolVerdict| match v.behavior == baton_api::approvals::DENY {
            true => baton_api::exit::ERROR.code,
            false => 0,
        };
    crate::context::operate_exiting(project, mode, json, request, render, exit)
}

pub fn answer(
    project: &OpenProject,
    request: AnswerQuestion,
    mode: WatchMode,
    json: bool,
) -> Result<u8, Error> {
    operate(project, mode, json, request, |q| {
        format!(
            "{} answered: {}",
            q.id,
            clean(q.answer().unwrap_or_default())
        )
    })
}

pub fn message(
    project: &OpenProject,
    command: MessageCommand,
    mode: WatchMode,
    json: bool,
) -> Result<u8, Error> {
    match command {
        MessageCommand::Send(mut request) => {
            request.from = request.from.or_else(terminal_agent);
            operate(project, mode, json, request, |m| {
                format!("{} sent to {}", m.id, m.to)
            })
        }
        MessageCommand::Ack(mut request) => {
            request.reader = request.reader.or_else(terminal_agent);
            operate(project, mode, json, request, |a| {
                format!("{} marked read by {}", a.ids.join(", "), a.reader)
            })
        }
    }
}

/// The inbox for people: each question with its choices and how to answer, then messages.
pub fn render(view: &InboxView) -> String {
    // What could not be read is said first, whatever else there is.
    let mut lines: Vec<String> = view
        .unreadable
        .iter()
        .map(|u| {
            format!(
                "Skipped .coordination/{}: {} (see `baton leader doctor`)",
                clean(&u.document),
                line(&u.problem, 300)
            )
        })
        .collect();
    // So is an agent that hit its limit: what it sent was refused, not lost in the pile.
    for l in &view.limited {
        let mut refused = Vec::new();
        if l.messages_refused > 0 {
            refused.push(format!("{} message(s)", l.messages_refused));
        }
        if l.questions_refused > 0 {
            refused.push(format!("{} question(s)", l.questions_refused));
        }
        lines.push(format!(
            "Agent {} hit its inbox limit ({} unread messages, {} open questions): {} refused, \
             the last at {}",
            clean(&l.agent),
            baton_core::inbox::MAX_UNREAD_FROM,
            baton_core::inbox::MAX_OPEN_QUESTIONS,
            refused.join(" and "),
            l.last_at.map_or("-".to_string(), |t| t.to_string())
        ));
    }
    if view.is_empty() && view.decisions.is_empty() {
        lines.push(format!("Nothing waits for {}.", view.reader));
        return lines.join("\n");
    }
    for q in &view.questions {
        lines.push(question_line(q));
    }
    for m in &view.messages {
        lines.push(message_line(m));
    }
    for d in &view.decisions {
        lines.push(format!(
            "{}  {} {} for {}: {} ({})",
            d.at,
            if d.allowed { "allowed" } else { "denied" },
            d.tool,
            d.agent,
            line(&d.call, 160),
            line(&d.why, 200)
        ));
    }
    lines.join("\n")
}

fn question_line(q: &Question) -> String {
    let task = q
        .task
        .as_deref()
        .map(|t| format!(" on {t}"))
        .unwrap_or_default();
    let what = match &q.about {
        // An approval's text says the call in words already ("May I run Bash: make build?");
        // its input whole is in --json.
        About::Question | About::Approval { .. } | About::Limit { .. } => {
            clean(&q.text).replace('\n', "\n      ")
        }
        // The plan's tasks and their graph, a line each.
        About::Plan { tasks, .. } => {
            let lines: Vec<String> = q
                .text
                .lines()
                .map(|l| format!("\n      {}", clean(l)))
                .collect();
            format!(
                "may the team work this plan ({} tasks)?{}",
                tasks.len(),
                lines.concat()
            )
        }
    };
    let mut text = format!("{}  {}{task} asks: {what}", q.id, q.agent);
    for (i, choice) in q.choices.iter().enumerate() {
        text.push_str(&format!("\n      {}. {}", i + 1, line(choice, 200)));
    }
    text.push_str(&match &q.state {
        QuestionState::Open if matches!(q.about, About::Plan { .. }) => format!(
            "\n      answer: baton answer {} approve (or say what to change: the planner plans again)",
            q.id
        ),
        QuestionState::Open => format!("\n      answer: baton answer {} TEXT", q.id),
        QuestionState::Answered { answer, by, .. } => {
            format!("\n      answered by {by}: {}", line(answer, 200))
        }
        QuestionState::Closed { reason, .. } => format!("\n      closed: {}", line(reason, 200)),
    });
    text
}

fn message_line(m: &Message) -> String {
    let task = m
        .task
        .as_deref()
        .map(|t| format!(" ({t})"))
        .unwrap_or_default();
    format!(
        "{}  from {}{task}: {}\n      {}",
        m.id,
        m.from,
        line(&m.subject, 200),
        clean(&m.body).replace('\n', "\n      ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An approval is said once, as its text says it (it was "may I run Bash {…}? May I run
    /// Bash: make build?").
    #[test]
    fn an_approval_is_said_once_in_words() {
        let q = Question {
            id: "q-1".into(),
            agent: "cc1".into(),
            task: Some("task-1".into()),
            text: "May I run Bash: make build?".into(),
            choices: vec!["allow".into(), "deny".into()],
            about: About::Approval {
                tool: "Bash".into(),
                input: serde_json::json!({"command": "make build"}),
            },
            asked_at: baton_core::Timestamp::now(),
            state: QuestionState::Open,
        };
        let said = question_line(&q);
        assert!(
            said.starts_with("q-1  cc1 on task-1 asks: May I run Bash: make build?\n"),
            "{said}"
        );
        assert_eq!(said.matches("make build").count(), 1, "{said}");
    }
}
