//! OpenAI's Responses API, as Codex calls it (`wire_api = "responses"`, streamed). Codex offers
//! its shell as the function `exec_command` (`{"cmd": …}`) and an MCP server's tools in a
//! namespace (`mcp__baton` holding `task_complete`); the conversation is a list of items
//! (`message`, `function_call`, `function_call_output`).

use serde_json::{Value, json};

use super::{Conversation, INPUT_TOKENS, OUTPUT_TOKENS, Reply, rand_id, text_of};

/// Codex's shell tool.
const SHELL: &str = "exec_command";

/// `request` in the Messages API's shape: developer text as `system`, the items as messages
/// (consecutive items of one role in one message), the tools by their full names.
pub fn conversation(request: &Value) -> Value {
    let mut system = Vec::new();
    let mut messages = Conversation::default();
    for item in request["input"].as_array().into_iter().flatten() {
        match item["type"].as_str() {
            Some("message") => {
                let text = text_of(&item["content"]).unwrap_or_default();
                match item["role"].as_str() {
                    Some("developer") | Some("system") => system.push(text),
                    Some("assistant") => {
                        messages.push("assistant", json!({"type": "text", "text": text}))
                    }
                    _ => messages.push("user", json!({"type": "text", "text": text})),
                }
            }
            Some("function_call") => {
                let arguments: Value = item["arguments"]
                    .as_str()
                    .and_then(|a| serde_json::from_str(a).ok())
                    .unwrap_or(Value::Null);
                let (name, input) = from_codex(item, arguments);
                messages.push(
                    "assistant",
                    json!({"type": "tool_use", "id": item["call_id"], "name": name, "input": input}),
                );
            }
            Some("function_call_output") => {
                let (text, is_error) = output_text(&item["output"]);
                messages.push(
                    "user",
                    json!({"type": "tool_result", "tool_use_id": item["call_id"],
                           "content": text, "is_error": is_error}),
                );
            }
            _ => {}
        }
    }
    let mut tools = Vec::new();
    for tool in request["tools"].as_array().into_iter().flatten() {
        let name = tool["name"].as_str().unwrap_or_default();
        match tool["type"].as_str() {
            Some("namespace") => {
                for inner in tool["tools"].as_array().into_iter().flatten() {
                    let inner = inner["name"].as_str().unwrap_or_default();
                    tools.push(json!({"name": format!("{name}__{inner}")}));
                }
            }
            Some("function") if name == SHELL => tools.push(json!({"name": "Bash"})),
            Some("function") => tools.push(json!({"name": name})),
            _ => {}
        }
    }
    messages.request(request["model"].clone(), system.join("\n"), tools)
}

/// A call Codex made, by the names scripts use: its shell as `Bash` with `command`, a
/// namespaced tool by its full name.
fn from_codex(item: &Value, arguments: Value) -> (String, Value) {
    let name = item["name"].as_str().unwrap_or_default();
    match item["namespace"].as_str() {
        Some(space) => (format!("{space}__{name}"), arguments),
        None if name == SHELL => ("Bash".into(), json!({"command": arguments["cmd"]})),
        None => (name.to_string(), arguments),
    }
}

/// A tool output's text, and whether it failed: a shell command that exited non-zero, an MCP
/// result marked as an error.
fn output_text(output: &Value) -> (String, bool) {
    let text = text_of(output).unwrap_or_else(|| output.to_string());
    let exit_code = text
        .lines()
        .find_map(|l| l.strip_prefix("Process exited with code "))
        .and_then(|code| code.trim().parse::<i64>().ok());
    let failed = exit_code.is_some_and(|code| code != 0)
        || text.starts_with("Error")
        || output["isError"] == true;
    (text, failed)
}

/// The reply as Codex reads it: the output item, then the completed response with its usage.
pub fn encode(request: &Value, reply: &Reply) -> (&'static str, String) {
    let id = format!("resp_{:016x}", rand_id());
    let item = match reply {
        Reply::Text(text) => json!({
            "type": "message", "id": format!("msg_{:016x}", rand_id()), "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }),
        Reply::Tool { name, input } => {
            let (name, namespace, arguments) = to_codex(request, name, input);
            let mut item = json!({
                "type": "function_call", "id": format!("fc_{:016x}", rand_id()),
                "call_id": format!("call_{:016x}", rand_id()), "name": name,
                "arguments": arguments.to_string(), "status": "completed",
            });
            if let Some(namespace) = namespace {
                item["namespace"] = json!(namespace);
            }
            item
        }
    };
    let events = [
        json!({"type": "response.created", "response": {"id": id}}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
        json!({"type": "response.completed", "response": {"id": id, "usage": {
            "input_tokens": INPUT_TOKENS, "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": OUTPUT_TOKENS, "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": INPUT_TOKENS + OUTPUT_TOKENS}}}),
    ];
    let body = events
        .iter()
        .map(|event| {
            format!(
                "event: {}\ndata: {event}\n\n",
                event["type"].as_str().unwrap()
            )
        })
        .collect();
    ("text/event-stream", body)
}

/// A script's call in Codex's terms: `Bash` as `exec_command`, `SPACE__NAME` as `NAME` in the
/// namespace `SPACE` when the request offers that namespace.
fn to_codex(request: &Value, name: &str, input: &Value) -> (String, Option<String>, Value) {
    if name == "Bash" {
        return (SHELL.into(), None, json!({"cmd": input["command"]}));
    }
    for tool in request["tools"].as_array().into_iter().flatten() {
        if tool["type"] == "namespace"
            && let Some(space) = tool["name"].as_str()
            && let Some(inner) = name.strip_prefix(&format!("{space}__"))
        {
            return (inner.to_string(), Some(space.to_string()), input.clone());
        }
    }
    (name.to_string(), None, input.clone())
}
