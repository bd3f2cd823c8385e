//! Reading what an agent prints into transcript events and usage. Each agent kind prints its
//! own line format: Claude Code's `stream-json` (`system`/`assistant`/`user`/`result` objects),
//! Codex's `exec --json` (`thread.started`, `item.completed`, `turn.completed` with usage),
//! Gemini CLI's `stream-json` (`init`, `message`, `tool_use`, `tool_result`, `result`); any
//! other command's lines are kept as lines. A line that is not in the expected format is kept
//! as a line too, never dropped, and never stops the reading.

use std::collections::HashSet;

use baton_core::transcript::Stream;
use baton_core::{Happened, Usage};
use serde_json::Value;

use crate::profile::{AgentKind, Price};

/// An agent's output, read line by line, with what it reported so far.
#[derive(Debug)]
pub struct OutputReader {
    kind: AgentKind,
    /// Usage so far: summed from each model message until the agent's final report replaces it.
    pub usage: Usage,
    /// The agent's own session id, once it said it.
    pub session_id: Option<String>,
    /// What the agent last said (text, a result, an error), for a failure reason.
    pub last_said: Option<String>,
    /// Whether the agent printed its final report.
    pub reported_result: bool,
    /// Claude Code repeats a message's usage on every event of the message; counted once.
    seen_messages: HashSet<String>,
    /// Prices the tokens of an agent that reports no cost of its own.
    price: Option<Price>,
}

impl OutputReader {
    pub fn new(kind: AgentKind) -> OutputReader {
        OutputReader {
            kind,
            usage: Usage::default(),
            session_id: None,
            last_said: None,
            reported_result: false,
            seen_messages: HashSet::new(),
            price: None,
        }
    }

    /// The reader of an agent whose tokens cost `price` (when it reports no cost itself).
    pub fn priced(mut self, price: Option<Price>) -> OutputReader {
        self.price = price;
        self
    }

    /// The usage's cost at the profile's price, for an agent that reports tokens only.
    fn price_usage(&mut self) {
        if let Some(price) = &self.price {
            self.usage.cost_usd = price.cost(&self.usage);
        }
    }

    /// The events one line of output makes (none for a blank line or a line with nothing a
    /// lead reads, such as a turn starting).
    pub fn line(&mut self, line: &str, stream: Stream) -> Vec<Happened> {
        let line = line.trim_end_matches(['\r', '\n']);
        if line.trim().is_empty() {
            return Vec::new();
        }
        let parsed = match (stream, self.kind) {
            (Stream::Stderr, _) | (_, AgentKind::Exec) => None,
            _ => serde_json::from_str::<Value>(line)
                .ok()
                .filter(Value::is_object),
        };
        let events = match parsed {
            Some(value) => match self.kind {
                AgentKind::Claude => self.claude(&value),
                AgentKind::Codex => self.codex(&value),
                AgentKind::Gemini => self.gemini(&value),
                AgentKind::Exec => unreachable!("exec output is not parsed"),
            },
            None => vec![Happened::Line {
                stream,
                text: baton_core::text::printable(line.as_bytes()),
            }],
        };
        for event in &events {
            if let Some(said) = event.said()
                && !matches!(
                    event,
                    Happened::Line {
                        stream: Stream::Stderr,
                        ..
                    }
                )
            {
                // Kept in the attempt's record: bounded before it is written, as every text.
                self.last_said = Some(baton_core::transcript::cut(said.to_string()));
            }
        }
        events.into_iter().map(Happened::bounded).collect()
    }

    fn claude(&mut self, value: &Value) -> Vec<Happened> {
        let mut events = Vec::new();
        match value["type"].as_str() {
            Some("system") if value["subtype"] == "init" => {
                self.session_id = text(&value["session_id"]).or(self.session_id.take());
                events.push(Happened::Session {
                    session_id: self.session_id.clone(),
                    model: text(&value["model"]),
                });
            }
            Some("assistant") => {
                let message = &value["message"];
                let id = text(&message["id"]).unwrap_or_default();
                if self.seen_messages.insert(id) {
                    self.usage.turns += 1;
                    add_tokens(&mut self.usage, &message["usage"]);
                }
                for block in message["content"].as_array().into_iter().flatten() {
                    match block["type"].as_str() {
                        Some("text") => events.extend(
                            text(&block["text"])
                                .filter(|t| !t.trim().is_empty())
                                .map(|text| Happened::Text { text }),
                        ),
                        Some("tool_use") => events.push(Happened::ToolCall {
                            id: text(&block["id"]).unwrap_or_default(),
                            name: text(&block["name"]).unwrap_or_default(),
                            input: block["input"].clone(),
                        }),
                        _ => {}
                    }
                }
            }
            Some("user") => {
                for block in value["message"]["content"].as_array().into_iter().flatten() {
                    if block["type"] == "tool_result" {
                        events.push(Happened::ToolResult {
                            id: text(&block["tool_use_id"]).unwrap_or_default(),
                            output: content_text(&block["content"]),
                            is_error: block["is_error"] == true,
                        });
                    }
                }
            }
            Some("result") => {
                self.reported_result = true;
                self.session_id = text(&value["session_id"]).or(self.session_id.take());
                let mut usage = Usage::default();
                add_tokens(&mut usage, &value["usage"]);
                usage.turns = value["num_turns"].as_u64().unwrap_or(self.usage.turns);
                usage.cost_usd = value["total_cost_usd"].as_f64().unwrap_or(0.0);
                self.usage = usage;
                let is_error = value["is_error"] == true;
                let said = text(&value["result"])
                    .or_else(|| text(&value["subtype"]))
                    .unwrap_or_default();
                events.push(Happened::Result {
                    text: said,
                    is_error,
                    turns: value["num_turns"].as_u64(),
                    cost_usd: value["total_cost_usd"].as_f64(),
                });
            }
            _ => {}
        }
        events
    }

    fn codex(&mut self, value: &Value) -> Vec<Happened> {
        let mut events = Vec::new();
        match value["type"].as_str() {
            Some("thread.started") => {
                self.session_id = text(&value["thread_id"]);
                events.push(Happened::Session {
                    session_id: self.session_id.clone(),
                    model: None,
                });
            }
            Some("turn.completed") => {
                self.usage.turns += 1;
                add_tokens(&mut self.usage, &value["usage"]);
                self.price_usage();
            }
            Some("turn.failed") => events.push(Happened::Error {
                message: text(&value["error"]["message"]).unwrap_or_else(|| value.to_string()),
            }),
            Some("error") => events.push(Happened::Error {
                message: text(&value["message"]).unwrap_or_else(|| value.to_string()),
            }),
            Some("item.started") | Some("item.completed") => {
                let item = &value["item"];
                let done = value["type"] == "item.completed";
                let id = text(&item["id"]).unwrap_or_default();
                match (item["type"].as_str(), done) {
                    (Some("agent_message"), true) => {
                        events.extend(text(&item["text"]).map(|text| Happened::Text { text }))
                    }
                    (Some("command_execution"), false) => events.push(Happened::ToolCall {
                        id,
                        name: "command".into(),
                        input: serde_json::json!({"command": item["command"]}),
                    }),
                    (Some("command_execution"), true) => events.push(Happened::ToolResult {
                        id,
                        output: text(&item["aggregated_output"]).unwrap_or_default(),
                        is_error: item["exit_code"].as_i64().is_some_and(|c| c != 0),
                    }),
                    // Named as Claude Code names MCP tools, so transcripts read alike.
                    (Some("mcp_tool_call"), false) => events.push(Happened::ToolCall {
                        id,
                        name: format!(
                            "mcp__{}__{}",
                            item["server"].as_str().unwrap_or("mcp"),
                            item["tool"].as_str().unwrap_or("?")
                        ),
                        input: item["arguments"].clone(),
                    }),
                    (Some("mcp_tool_call"), true) => events.push(Happened::ToolResult {
                        id,
                        output: content_text(&item["result"]["content"]),
                        is_error: item["status"] == "failed",
                    }),
                    (Some("file_change"), true) => events.push(Happened::ToolResult {
                        id,
                        output: item["changes"].to_string(),
                        is_error: item["status"] == "failed",
                    }),
                    (Some("error"), _) => events.push(Happened::Error {
                        message: text(&item["message"]).unwrap_or_default(),
                    }),
                    _ => {}
                }
            }
            _ => {}
        }
        events
    }

    fn gemini(&mut self, value: &Value) -> Vec<Happened> {
        let mut events = Vec::new();
        let field = |a: &str, b: &str| text(&value[a]).or_else(|| text(&value[b]));
        match value["type"].as_str() {
            Some("init") => {
                self.session_id = field("session_id", "sessionId");
                events.push(Happened::Session {
                    session_id: self.session_id.clone(),
                    model: text(&value["model"]),
                });
            }
            Some("message") if value["role"] == "assistant" => {
                events.extend(
                    text(&value["content"])
                        .filter(|t| !t.is_empty())
                        .map(|text| Happened::Text { text }),
                );
            }
            Some("tool_use") => events.push(Happened::ToolCall {
                id: field("tool_id", "id").unwrap_or_default(),
                name: field("tool_name", "name").unwrap_or_default(),
                input: value["parameters"].clone(),
            }),
            Some("tool_result") => events.push(Happened::ToolResult {
                id: field("tool_id", "id").unwrap_or_default(),
                output: text(&value["output"])
                    .or_else(|| text(&value["error"]["message"]))
                    .unwrap_or_default(),
                is_error: value["status"] == "error",
            }),
            Some("error") => events.push(Happened::Error {
                message: text(&value["message"]).unwrap_or_else(|| value.to_string()),
            }),
            Some("result") => {
                self.reported_result = true;
                let stats = &value["stats"];
                self.usage.input_tokens = stats["input_tokens"].as_u64().unwrap_or(0);
                self.usage.output_tokens = stats["output_tokens"].as_u64().unwrap_or(0);
                self.usage.cache_read_tokens = stats["cached"].as_u64().unwrap_or(0);
                self.price_usage();
                events.push(Happened::Result {
                    text: text(&value["status"]).unwrap_or_default(),
                    is_error: value["status"] == "error",
                    turns: None,
                    cost_usd: None,
                });
            }
            _ => {}
        }
        events
    }
}

fn text(value: &Value) -> Option<String> {
    value.as_str().map(str::to_string)
}

/// A tool result's content: a string, or the text of its blocks.
fn content_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn add_tokens(usage: &mut Usage, reported: &Value) {
    let count = |name: &str| reported[name].as_u64().unwrap_or(0);
    usage.input_tokens += count("input_tokens");
    usage.output_tokens += count("output_tokens");
    usage.cache_read_tokens += count("cache_read_input_tokens") + count("cached_input_tokens");
    usage.cache_creation_tokens += count("cache_creation_input_tokens");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(kind: AgentKind, lines: &[&str]) -> (OutputReader, Vec<Happened>) {
        let mut reader = OutputReader::new(kind);
        let events = lines
            .iter()
            .flat_map(|l| reader.line(l, Stream::Stdout))
            .collect();
        (reader, events)
    }

    /// Lines as Claude Code 2.1.330 printed them (trimmed of fields Baton does not read).
    #[test]
    fn claude_stream_json_gives_calls_results_and_the_reported_cost() {
        let (reader, events) = read(
            AgentKind::Claude,
            &[
                r#"{"type":"system","subtype":"init","session_id":"s-1","model":"claude-opus-5-5"}"#,
                r#"{"type":"assistant","message":{"id":"msg_1","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"echo hi"}}],"usage":{"input_tokens":100,"output_tokens":20}}}"#,
                r#"{"type":"user","message":{"content":[{"tool_use_id":"toolu_1","type":"tool_result","content":"hi","is_error":false}]}}"#,
                r#"{"type":"assistant","message":{"id":"msg_2","content":[{"type":"text","text":"All done."}],"usage":{"input_tokens":100,"output_tokens":20}}}"#,
                "not json at all",
                r#"{"type":"result","subtype":"success","is_error":false,"num_turns":2,"result":"All done.","session_id":"s-1","total_cost_usd":0.0016,"usage":{"input_tokens":200,"output_tokens":40,"cache_read_input_tokens":0}}"#,
            ],
        );
        let kinds: Vec<&str> = events
            .iter()
            .map(|e| match e {
                Happened::Session { .. } => "session",
                Happened::ToolCall { .. } => "call",
                Happened::ToolResult { .. } => "result",
                Happened::Text { .. } => "text",
                Happened::Line { .. } => "line",
                Happened::Result { .. } => "final",
                _ => "other",
            })
            .collect();
        assert_eq!(
            kinds,
            ["session", "call", "result", "text", "line", "final"]
        );
        assert_eq!(reader.session_id.as_deref(), Some("s-1"));
        assert_eq!(reader.usage.cost_usd, 0.0016);
        assert_eq!(reader.usage.input_tokens, 200);
        assert_eq!(reader.usage.turns, 2);
        assert!(reader.reported_result);
        assert_eq!(reader.last_said.as_deref(), Some("All done."));
    }

    #[test]
    fn usage_repeated_on_events_of_one_message_is_counted_once() {
        let line = r#"{"type":"assistant","message":{"id":"msg_1","content":[{"type":"text","text":"a"}],"usage":{"input_tokens":100,"output_tokens":20}}}"#;
        let (reader, _) = read(AgentKind::Claude, &[line, line]);
        assert_eq!(reader.usage.input_tokens, 100);
        assert_eq!(reader.usage.turns, 1);
    }

    #[test]
    fn codex_json_gives_commands_messages_and_usage() {
        let (reader, events) = read(
            AgentKind::Codex,
            &[
                r#"{"type":"thread.started","thread_id":"th_1"}"#,
                r#"{"type":"item.started","item":{"id":"i1","type":"command_execution","command":"ls","status":"in_progress"}}"#,
                r#"{"type":"item.completed","item":{"id":"i1","type":"command_execution","command":"ls","aggregated_output":"a\n","exit_code":1,"status":"failed"}}"#,
                r#"{"type":"item.completed","item":{"id":"i2","type":"agent_message","text":"Done."}}"#,
                r#"{"type":"turn.completed","usage":{"input_tokens":50,"cached_input_tokens":10,"output_tokens":5}}"#,
            ],
        );
        assert_eq!(events.len(), 4, "{events:?}");
        assert!(matches!(
            &events[2],
            Happened::ToolResult { is_error: true, .. }
        ));
        assert_eq!(reader.session_id.as_deref(), Some("th_1"));
        assert_eq!(
            (reader.usage.input_tokens, reader.usage.cache_read_tokens),
            (50, 10)
        );
        assert_eq!(reader.last_said.as_deref(), Some("Done."));
    }

    #[test]
    fn tokens_of_an_agent_without_a_cost_are_priced_by_the_profile() {
        let price = Price {
            input: 2.0,
            output: 8.0,
            cached_input: Some(0.5),
        };
        let mut reader = OutputReader::new(AgentKind::Codex).priced(Some(price));
        for _ in 0..2 {
            reader.line(
                r#"{"type":"turn.completed","usage":{"input_tokens":1000,"cached_input_tokens":400,"output_tokens":100}}"#,
                Stream::Stdout,
            );
        }
        // 1,200 fresh input at $2/M, 800 cached at $0.5/M, 200 output at $8/M.
        let expected = (1200.0 * 2.0 + 800.0 * 0.5 + 200.0 * 8.0) / 1e6;
        assert!(
            (reader.usage.cost_usd - expected).abs() < 1e-12,
            "{:?}",
            reader.usage
        );
        let unpriced = read(
            AgentKind::Codex,
            &[r#"{"type":"turn.completed","usage":{"input_tokens":1000,"output_tokens":100}}"#],
        )
        .0;
        assert_eq!(unpriced.usage.cost_usd, 0.0);
    }

    #[test]
    fn gemini_stream_json_gives_tools_and_its_result() {
        let (reader, events) = read(
            AgentKind::Gemini,
            &[
                r#"{"type":"init","session_id":"g-1","model":"gemini-2.5-pro"}"#,
                r#"{"type":"tool_use","tool_name":"run_shell_command","tool_id":"t1","parameters":{"command":"ls"}}"#,
                r#"{"type":"tool_result","tool_id":"t1","status":"success","output":"a"}"#,
                r#"{"type":"message","role":"assistant","content":"Done","delta":true}"#,
                r#"{"type":"result","status":"success","stats":{"input_tokens":7,"output_tokens":3}}"#,
            ],
        );
        assert_eq!(events.len(), 5, "{events:?}");
        assert_eq!(reader.usage.output_tokens, 3);
        assert!(reader.reported_result);
    }

    #[test]
    fn exec_output_and_stderr_stay_lines_and_escape_codes_go() {
        let mut reader = OutputReader::new(AgentKind::Exec);
        let out = reader.line("{\"type\":\"result\"}", Stream::Stdout);
        assert!(matches!(
            &out[0],
            Happened::Line {
                stream: Stream::Stdout,
                ..
            }
        ));
        let err = reader.line("\u{1b}[31mboom\u{1b}[0m", Stream::Stderr);
        assert_eq!(
            err,
            [Happened::Line {
                stream: Stream::Stderr,
                text: "boom".into()
            }]
        );
        assert!(reader.line("   ", Stream::Stdout).is_empty());
    }
}
