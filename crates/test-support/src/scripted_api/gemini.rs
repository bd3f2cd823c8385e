//! Gemini's `generateContent` API, as the Gemini CLI calls it (`GOOGLE_GEMINI_BASE_URL`,
//! streamed with `?alt=sse`). The shell is the function `run_shell_command`
//! (`{"command": …}`); the conversation is `contents` of `user` and `model` turns whose parts
//! are text, `functionCall` and `functionResponse` (matched to their calls in order).

use serde_json::{Value, json};

use super::{Conversation, INPUT_TOKENS, OUTPUT_TOKENS, Reply, text_of};

/// The Gemini CLI's shell tool.
const SHELL: &str = "run_shell_command";

/// `request` in the Messages API's shape.
pub fn conversation(model: &str, request: &Value) -> Value {
    let mut messages = Conversation::default();
    let mut calls = 0;
    let mut answered = 0;
    for content in request["contents"].as_array().into_iter().flatten() {
        let role = if content["role"] == "model" {
            "assistant"
        } else {
            "user"
        };
        for part in content["parts"].as_array().into_iter().flatten() {
            let block = if part["thought"] == true {
                continue;
            } else if let Some(text) = part["text"].as_str() {
                json!({"type": "text", "text": text})
            } else if let Some(call) = part.get("functionCall") {
                calls += 1;
                let name = call["name"].as_str().unwrap_or_default();
                let (name, input) = if name == SHELL {
                    (
                        "Bash".to_string(),
                        json!({"command": call["args"]["command"]}),
                    )
                } else {
                    (name.to_string(), call["args"].clone())
                };
                json!({"type": "tool_use", "id": format!("call_{calls}"), "name": name, "input": input})
            } else if let Some(response) = part.get("functionResponse") {
                answered += 1;
                let (text, is_error) = response_text(&response["response"]);
                json!({"type": "tool_result", "tool_use_id": format!("call_{answered}"),
                       "content": text, "is_error": is_error})
            } else {
                continue;
            };
            messages.push(role, block);
        }
    }
    let tools: Vec<Value> = request["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|t| {
            t["functionDeclarations"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter_map(|d| d["name"].as_str().map(str::to_string))
        .map(|name| json!({"name": if name == SHELL { "Bash".to_string() } else { name }}))
        .collect();
    let system = text_of(&request["systemInstruction"]["parts"]).unwrap_or_default();
    messages.request(json!(model), system, tools)
}

/// A function response's text, and whether it failed (an `error`, or a shell command's
/// non-zero exit code).
fn response_text(response: &Value) -> (String, bool) {
    let text = response["output"]
        .as_str()
        .or_else(|| response["error"].as_str())
        .map(str::to_string)
        .unwrap_or_else(|| response.to_string());
    let exit_code = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("Exit Code: "))
        .and_then(|code| code.trim().parse::<i64>().ok());
    let failed = response.get("error").is_some() || exit_code.is_some_and(|code| code != 0);
    (text, failed)
}

/// The reply as the Gemini CLI reads it: one candidate with one part, and the usage.
pub fn encode(model: &str, method: &str, reply: &Reply) -> (&'static str, String) {
    let part = match reply {
        Reply::Text(text) => json!({"text": text}),
        Reply::Tool { name, input } if name == "Bash" => json!({"functionCall": {
            "name": SHELL,
            "args": {"command": input["command"], "description": input["description"]},
        }}),
        Reply::Tool { name, input } => json!({"functionCall": {"name": name, "args": input}}),
    };
    let chunk = json!({
        "candidates": [{"content": {"role": "model", "parts": [part]},
                        "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": INPUT_TOKENS,
                          "candidatesTokenCount": OUTPUT_TOKENS,
                          "totalTokenCount": INPUT_TOKENS + OUTPUT_TOKENS},
        "modelVersion": model,
    });
    if method == "streamGenerateContent" {
        ("text/event-stream", format!("data: {chunk}\r\n\r\n"))
    } else {
        ("application/json", chunk.to_string())
    }
}
