//! Reading what an agent prints into transcript events and usage. Each agent CLI's adapter
//! reads its own JSON lines ([`super::AgentCli::read`]); any other command's lines, a line that
//! is not in the expected format and everything on standard error are kept as lines, never
//! dropped, and never stop the reading.

use std::collections::HashSet;

use baton_core::transcript::Stream;
use baton_core::{Happened, Usage};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::AgentKind;

/// US dollars per million tokens (`[profiles.codex.price]` with `input`, `output` and
/// optionally `cached_input`, which is `input` when not given).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Price {
    pub input: f64,
    pub output: f64,
    #[serde(default)]
    pub cached_input: Option<f64>,
}

impl Price {
    /// What `usage` cost: input tokens read from the cache at their own price.
    pub fn cost(&self, usage: &baton_core::Usage) -> f64 {
        let cached = usage.cache_read_tokens.min(usage.input_tokens);
        let fresh = usage.input_tokens - cached;
        (fresh as f64 * self.input
            + cached as f64 * self.cached_input.unwrap_or(self.input)
            + usage.output_tokens as f64 * self.output)
            / 1e6
    }
}

/// What an agent reported so far, as its adapter reads it.
#[derive(Debug, Default)]
pub struct Reading {
    /// Usage so far: summed from each model message until the agent's final report replaces it.
    pub usage: Usage,
    /// The agent's own session id, once it said it.
    pub session_id: Option<String>,
    /// What the agent last said (text, a result, an error), for a failure reason.
    pub last_said: Option<String>,
    /// Whether the agent printed its final report.
    pub reported_result: bool,
    /// Ids of model messages already counted (Claude Code repeats a message's usage on every
    /// event of the message).
    pub seen_messages: HashSet<String>,
    /// Prices the tokens of an agent that reports no cost of its own.
    price: Option<Price>,
}

impl Reading {
    /// The usage's cost at the profile's price, for an agent that reports tokens only.
    pub fn price_usage(&mut self) {
        if let Some(price) = &self.price {
            self.usage.cost_usd = price.cost(&self.usage);
        }
    }
}

/// An agent's output, read line by line, with what it reported so far.
#[derive(Debug)]
pub struct OutputReader {
    kind: AgentKind,
    pub so_far: Reading,
}

impl OutputReader {
    pub fn new(kind: AgentKind) -> OutputReader {
        OutputReader {
            kind,
            so_far: Reading::default(),
        }
    }

    /// The reader of an agent whose tokens cost `price` (when it reports no cost itself).
    pub fn priced(mut self, price: Option<Price>) -> OutputReader {
        self.so_far.price = price;
        self
    }

    /// The events one line of output makes (none for a blank line or a line with nothing a
    /// lead reads, such as a turn starting).
    pub fn line(&mut self, line: &str, stream: Stream) -> Vec<Happened> {
        let line = line.trim_end_matches(['\r', '\n']);
        if line.trim().is_empty() {
            return Vec::new();
        }
        let parsed = match stream {
            Stream::Stdout if self.kind.prints_json() => serde_json::from_str::<Value>(line)
                .ok()
                .filter(Value::is_object),
            _ => None,
        };
        let events = match parsed {
            Some(value) => self.kind.read(&mut self.so_far, &value),
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
                self.so_far.last_said = Some(baton_core::transcript::cut(said.to_string()));
            }
        }
        events.into_iter().map(Happened::bounded).collect()
    }
}

pub(super) fn text(value: &Value) -> Option<String> {
    value.as_str().map(str::to_string)
}

/// A tool result's content: a string, or the text of its blocks.
pub(super) fn content_text(value: &Value) -> String {
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

pub(super) fn add_tokens(usage: &mut Usage, reported: &Value) {
    let count = |name: &str| reported[name].as_u64().unwrap_or(0);
    usage.input_tokens += count("input_tokens");
    usage.output_tokens += count("output_tokens");
    usage.cache_read_tokens += count("cache_read_input_tokens") + count("cached_input_tokens");
    usage.cache_creation_tokens += count("cache_creation_input_tokens");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_of_an_agent_without_a_cost_are_priced_by_the_profile() {
        let price = Price {
            input: 2.0,
            output: 8.0,
            cached_input: Some(0.5),
        };
        let codex = AgentKind::named("codex").unwrap();
        let mut reader = OutputReader::new(codex).priced(Some(price));
        for _ in 0..2 {
            reader.line(
                r#"{"type":"turn.completed","usage":{"input_tokens":1000,"cached_input_tokens":400,"output_tokens":100}}"#,
                Stream::Stdout,
            );
        }
        // 1,200 fresh input at $2/M, 800 cached at $0.5/M, 200 output at $8/M.
        let expected = (1200.0 * 2.0 + 800.0 * 0.5 + 200.0 * 8.0) / 1e6;
        let usage = &reader.so_far.usage;
        assert!((usage.cost_usd - expected).abs() < 1e-12, "{usage:?}");
        let mut unpriced = OutputReader::new(codex);
        unpriced.line(
            r#"{"type":"turn.completed","usage":{"input_tokens":1000,"output_tokens":100}}"#,
            Stream::Stdout,
        );
        assert_eq!(unpriced.so_far.usage.cost_usd, 0.0);
    }

    /// A JSON object on standard error, or a JSON line that is not an object, is a line.
    #[test]
    fn only_objects_on_standard_output_are_read_as_the_agent_s_json() {
        let mut reader = OutputReader::new(AgentKind::named("claude").unwrap());
        let said = reader.line(r#"{"type":"result","result":"x"}"#, Stream::Stderr);
        assert!(matches!(&said[..], [Happened::Line { .. }]), "{said:?}");
        let said = reader.line("[1, 2]", Stream::Stdout);
        assert!(matches!(&said[..], [Happened::Line { .. }]), "{said:?}");
        assert!(!reader.so_far.reported_result);
    }
}
