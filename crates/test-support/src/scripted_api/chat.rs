//! OpenAI's Chat Completions API, as OpenCode calls an OpenAI-compatible provider (streamed,
//! `stream_options.include_usage`). OpenCode offers its shell as the function `bash`
//! (`{"command": …, "description": …}`) and an MCP server's tools as `SERVER_TOOL`
//! (`baton_task_complete`); the conversation is `messages` with `tool_calls` on the assistant's
//! and `role: "tool"` for their results. OpenCode also asks a small model for a session title,
//! a request without tools that is not the agent's work: [`is_title`].

use serde_json::{Value, json};

use super::{Conversation, INPUT_TOKENS, OUTPUT_TOKENS, Reply, rand_id, text_of};

/// OpenCode's shell tool.
const SHELL: &str = "bash";
/// The MCP server whose tools scripts name `mcp__baton__NAME`.
const BATON: &str = "baton_";

/// Whether `request` only asks for a title (it offers no tools).
pub fn is_title(request: &Value) -> bool {
    request["tools"]
        .as_array()
        .is_none_or(|tools| tools.is_empty())
}

/// `request` in the Messages API's shape.
pub fn conversation(request: &Value) -> Value {
    let mut system = Vec::new();
    let mut messages = Conversation::default();
    for message in request["messages"].as_array().into_iter().flatten() {
        let text = text_of(&message["content"]).unwrap_or_default();
        match message["role"].as_str() {
            Some("system") | Some("developer") => system.push(text),
            Some("assistant") => {
                if !text.is_empty() {
                    messages.push("assistant", json!({"type": "text", "text": text}));
                }
                for call in message["tool_calls"].as_array().into_iter().flatten() {
                    let function = &call["function"];
                    let arguments: Value = function["arguments"]
                        .as_str()
                        .and_then(|a| serde_json::from_str(a).ok())
                        .unwrap_or(Value::Null);
                    let (name, input) = from_opencode(function["name"].as_str(), arguments);
                    messages.push(
                        "assistant",
                        json!({"type": "tool_use", "id": call["id"], "name": name, "input": input}),
                    );
                }
            }
            Some("tool") => messages.push(
                "user",
                json!({"type": "tool_result", "tool_use_id": message["tool_call_id"],
                       "content": text, "is_error": failed(&text)}),
            ),
            _ => messages.push("user", json!({"type": "text", "text": text})),
        }
    }
    let tools = request["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["function"]["name"].as_str())
        .map(|name| json!({"name": from_opencode(Some(name), Value::Null).0}))
        .collect();
    messages.request(request["model"].clone(), system.join("\n"), tools)
}

/// A tool's name (and input) by the names scripts use: its shell as `Bash`, Baton's tools as
/// `mcp__baton__NAME`.
fn from_opencode(name: Option<&str>, input: Value) -> (String, Value) {
    match name.unwrap_or_default() {
        SHELL => ("Bash".into(), json!({"command": input["command"]})),
        name if name.starts_with(BATON) => (format!("mcp__baton__{}", &name[BATON.len()..]), input),
        name => (name.to_string(), input),
    }
}

/// Whether a tool's result says it failed: OpenCode gives a command's exit status only in its
/// own metadata, so a failing command is told by what it printed, an MCP error by its text.
fn failed(text: &str) -> bool {
    text.starts_with("Error") || text.contains("\"isError\":true")
}

/// The reply as OpenCode reads it: chunks of one streamed completion, the last with usage.
pub fn encode(reply: &Reply) -> (&'static str, String) {
    let id = format!("chatcmpl-{:016x}", rand_id());
    let chunk = |delta: Value, finish: Value| {
        json!({"id": id, "object": "chat.completion.chunk", "created": 0, "model": "scripted",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let (first, finish) = match reply {
        Reply::Text(text) => (
            chunk(json!({"role": "assistant", "content": text}), Value::Null),
            "stop",
        ),
        Reply::Tool { name, input } => {
            let (name, arguments) = to_opencode(name, input);
            let call = json!({"index": 0, "id": format!("call_{:016x}", rand_id()),
                              "type": "function",
                              "function": {"name": name, "arguments": arguments.to_string()}});
            (
                chunk(
                    json!({"role": "assistant", "tool_calls": [call]}),
                    Value::Null,
                ),
                "tool_calls",
            )
        }
    };
    let mut last = chunk(json!({}), json!(finish));
    last["usage"] = json!({"prompt_tokens": INPUT_TOKENS, "completion_tokens": OUTPUT_TOKENS,
                           "total_tokens": INPUT_TOKENS + OUTPUT_TOKENS});
    let body = [first, last]
        .iter()
        .map(|c| format!("data: {c}\n\n"))
        .chain(std::iter::once("data: [DONE]\n\n".to_string()))
        .collect();
    ("text/event-stream", body)
}

/// A title for a title request.
pub fn title() -> (&'static str, String) {
    encode(&Reply::Text("A Baton task".into()))
}

/// A script's call in OpenCode's terms.
fn to_opencode(name: &str, input: &Value) -> (String, Value) {
    match name.strip_prefix("mcp__baton__") {
        _ if name == "Bash" => (
            SHELL.into(),
            json!({"command": input["command"], "description": "the task's work"}),
        ),
        Some(tool) => (format!("{BATON}{tool}"), input.clone()),
        None => (name.to_string(), input.clone()),
    }
}
