//! Anthropic's Messages API, as Claude Code calls it: the reply as one message, or streamed
//! as server-sent events (the block opened empty, its content as one delta).

use serde_json::{Value, json};

use super::{INPUT_TOKENS, OUTPUT_TOKENS, Reply, rand_id};

/// The reply to `request`: streamed when it asked for a stream.
pub fn encode(request: &Value, reply: &Reply) -> (&'static str, String) {
    let model = request["model"].as_str().unwrap_or("claude");
    if request["stream"] == true {
        ("text/event-stream", events(model, reply))
    } else {
        ("application/json", message(model, reply).to_string())
    }
}

fn content_block(reply: &Reply) -> Value {
    match reply {
        Reply::Tool { name, input } => json!({
            "type": "tool_use",
            "id": format!("toolu_{:016x}", rand_id()),
            "name": name,
            "input": input,
        }),
        Reply::Text(text) => json!({"type": "text", "text": text}),
    }
}

fn stop_reason(reply: &Reply) -> &'static str {
    match reply {
        Reply::Tool { .. } => "tool_use",
        Reply::Text(_) => "end_turn",
    }
}

fn message(model: &str, reply: &Reply) -> Value {
    json!({
        "id": format!("msg_{:016x}", rand_id()),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [content_block(reply)],
        "stop_reason": stop_reason(reply),
        "stop_sequence": null,
        "usage": {"input_tokens": INPUT_TOKENS, "output_tokens": OUTPUT_TOKENS},
    })
}

/// The reply as the streaming API sends it: the block opened empty, its content as one delta.
fn events(model: &str, reply: &Reply) -> String {
    let mut block = content_block(reply);
    let delta = match reply {
        Reply::Tool { input, .. } => {
            block["input"] = json!({});
            json!({"type": "input_json_delta", "partial_json": input.to_string()})
        }
        Reply::Text(text) => {
            block["text"] = json!("");
            json!({"type": "text_delta", "text": text})
        }
    };
    let mut start = message(model, reply);
    start["content"] = json!([]);
    start["stop_reason"] = Value::Null;
    let events = [
        (
            "message_start",
            json!({"type": "message_start", "message": start}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": block}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": delta}),
        ),
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        ),
        (
            "message_delta",
            json!({"type": "message_delta",
                   "delta": {"stop_reason": stop_reason(reply), "stop_sequence": null},
                   "usage": {"output_tokens": OUTPUT_TOKENS}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ];
    events
        .iter()
        .map(|(name, data)| format!("event: {name}\ndata: {data}\n\n"))
        .collect()
}
