//! What an agent did on one attempt at a task, as the lead reads it: the assistant's text, its
//! tool calls with their input, the tools' results, errors, and the final result, in order.
//! Agents print this in their own formats (Claude Code's and Gemini's `stream-json`, Codex's
//! `--json`, plain lines from any other command); `baton-team` turns each into these events,
//! and a store keeps them per task attempt so a lead on another machine reads the same thing.
//!
//! Sizes are bounded here, once, for every store: a long text is cut to its first
//! [`MAX_TEXT`] bytes and says how much was left out, so an agent that floods its output
//! cannot fill a disk or a table.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::time::Timestamp;

/// The most of one text (a message, a tool result, a line) an event keeps.
pub const MAX_TEXT: usize = 16 * 1024;
/// The most of a tool call's input an event keeps, as JSON text.
pub const MAX_INPUT: usize = 8 * 1024;

/// One thing an agent did, numbered within its attempt.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TranscriptEvent {
    /// 1, 2, 3… within the attempt, in the order the agent printed them.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub seq: u64,
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub at: Timestamp,
    #[serde(flatten)]
    pub what: Happened,
}

/// An event with the attempt it belongs to, as a reader following every transcript of a
/// project receives it (the change feed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttemptEvent {
    pub task: String,
    pub attempt: u32,
    pub event: TranscriptEvent,
}

/// What an event records.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Happened {
    /// The supervisor started the agent: what it ran, where.
    Started { command: String, workdir: String },
    /// The agent's session began (Claude Code's session id, the model), when it says so.
    Session {
        session_id: Option<String>,
        model: Option<String>,
    },
    /// Text the assistant wrote.
    Text { text: String },
    /// A tool the assistant called, with its input (cut to [`MAX_INPUT`] as JSON text).
    ToolCall {
        id: String,
        name: String,
        #[cfg_attr(feature = "ts", ts(type = "unknown"))]
        input: Value,
    },
    /// What a tool call returned.
    ToolResult {
        id: String,
        output: String,
        is_error: bool,
    },
    /// A line a command printed that is not in a known format (the `exec` profile, stderr).
    Line { stream: Stream, text: String },
    /// Something went wrong that the agent reported, or the supervisor saw.
    Error { message: String },
    /// The agent's own final report of the attempt.
    Result {
        text: String,
        is_error: bool,
        #[cfg_attr(feature = "ts", ts(type = "number | null"))]
        turns: Option<u64>,
        cost_usd: Option<f64>,
    },
    /// What the supervisor did about the attempt (a restart, a budget reached, a stop).
    Supervisor { text: String },
    /// The agent's process ended: its exit code, or the signal that killed it.
    Exited {
        code: Option<i32>,
        signal: Option<i32>,
    },
}

/// Which output a line came from.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Stream {
    Stdout,
    Stderr,
}

impl Happened {
    /// The event with every text cut to its bound.
    pub fn bounded(self) -> Happened {
        match self {
            Happened::Text { text } => Happened::Text { text: cut(text) },
            Happened::ToolCall { id, name, input } => Happened::ToolCall {
                id,
                name,
                input: bound_input(input),
            },
            Happened::ToolResult {
                id,
                output,
                is_error,
            } => Happened::ToolResult {
                id,
                output: cut(output),
                is_error,
            },
            Happened::Line { stream, text } => Happened::Line {
                stream,
                text: cut(text),
            },
            Happened::Error { message } => Happened::Error {
                message: cut(message),
            },
            Happened::Result {
                text,
                is_error,
                turns,
                cost_usd,
            } => Happened::Result {
                text: cut(text),
                is_error,
                turns,
                cost_usd,
            },
            Happened::Supervisor { text } => Happened::Supervisor { text: cut(text) },
            other => other,
        }
    }

    /// The words a lead reads for this event in one line of a log (`team logs`).
    pub fn summary(&self) -> String {
        match self {
            Happened::Started { command, workdir } => format!("started `{command}` in {workdir}"),
            Happened::Session { session_id, model } => format!(
                "session {} ({})",
                session_id.as_deref().unwrap_or("?"),
                model.as_deref().unwrap_or("model not said")
            ),
            Happened::Text { text } => text.clone(),
            Happened::ToolCall { name, input, .. } => format!("→ {name} {input}"),
            Happened::ToolResult {
                output, is_error, ..
            } => {
                let mark = if *is_error { "✗" } else { "←" };
                format!("{mark} {output}")
            }
            Happened::Line { stream, text } => match stream {
                Stream::Stdout => text.clone(),
                Stream::Stderr => format!("stderr: {text}"),
            },
            Happened::Error { message } => format!("error: {message}"),
            Happened::Result {
                text,
                is_error,
                cost_usd,
                ..
            } => {
                let cost = cost_usd.map(|c| format!(" (${c:.4})")).unwrap_or_default();
                let how = if *is_error {
                    "ended in error"
                } else {
                    "result"
                };
                format!("{how}{cost}: {text}")
            }
            Happened::Supervisor { text } => format!("baton: {text}"),
            Happened::Exited { code, signal } => match (code, signal) {
                (Some(code), _) => format!("exited with status {code}"),
                (None, Some(signal)) => format!("killed by signal {signal}"),
                (None, None) => "exited".to_string(),
            },
        }
    }

    /// What the assistant last said or reported, for a failure reason or the next attempt.
    pub fn said(&self) -> Option<&str> {
        match self {
            Happened::Text { text } | Happened::Result { text, .. } => Some(text),
            Happened::Error { message } => Some(message),
            Happened::Line { text, .. } => Some(text),
            _ => None,
        }
    }
}

/// `text` cut to [`MAX_TEXT`] bytes at a character boundary, saying how much was left out.
pub fn cut(text: String) -> String {
    cut_to(text, MAX_TEXT)
}

fn cut_to(text: String, max: usize) -> String {
    let kept = crate::text::prefix(&text, max);
    if kept.len() == text.len() {
        return text;
    }
    format!("{kept} [… {} more bytes cut]", text.len() - kept.len())
}

/// A tool call's input kept whole when small, else as its cut JSON text.
fn bound_input(input: Value) -> Value {
    let text = input.to_string();
    if text.len() <= MAX_INPUT {
        input
    } else {
        Value::String(cut_to(text, MAX_INPUT))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_texts_are_cut_at_a_character_and_say_so() {
        let text = "é".repeat(MAX_TEXT); // two bytes each
        let Happened::Text { text } = (Happened::Text { text }).bounded() else {
            unreachable!()
        };
        assert!(text.len() < MAX_TEXT + 40, "{}", text.len());
        assert!(
            text.ends_with(&format!("[… {} more bytes cut]", MAX_TEXT)),
            "{}",
            &text[text.len() - 40..]
        );
        let small = Happened::Text { text: "ok".into() }.bounded();
        assert_eq!(small, Happened::Text { text: "ok".into() });
    }

    #[test]
    fn a_huge_tool_input_becomes_its_cut_text() {
        let input = serde_json::json!({"content": "x".repeat(MAX_INPUT * 2)});
        let Happened::ToolCall { input, .. } = (Happened::ToolCall {
            id: "t".into(),
            name: "Write".into(),
            input,
        })
        .bounded() else {
            unreachable!()
        };
        let text = input.as_str().expect("cut to text");
        assert!(text.starts_with("{\"content\":\"xxx"), "{text:.40}");
        assert!(text.contains("more bytes cut"));
    }

    #[test]
    fn events_read_back_as_written() {
        let event = TranscriptEvent {
            seq: 3,
            at: Timestamp::now(),
            what: Happened::ToolResult {
                id: "toolu_1".into(),
                output: "ok".into(),
                is_error: false,
            },
        };
        let json = serde_json::to_string(&event).unwrap();
        assert!(json.contains("\"kind\":\"tool_result\""), "{json}");
        let back: TranscriptEvent = serde_json::from_str(&json).unwrap();
        assert_eq!(back, event);
    }
}
