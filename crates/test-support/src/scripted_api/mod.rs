//! A scripted model API on loopback, so the real agent CLIs can be driven in tests without an
//! account or a network. It speaks four dialects on one port: Anthropic's Messages API
//! (`POST /v1/messages`, Claude Code), OpenAI's Responses API (`POST /v1/responses`, Codex),
//! OpenAI's Chat Completions (`POST /v1/chat/completions`, OpenCode's OpenAI-compatible
//! provider) and Gemini's `streamGenerateContent` (Gemini CLI). Each request is turned into one
//! shape, the Messages API's (`messages` with `tool_use`/`tool_result` blocks, `tools` by
//! name), and answered by a script that reads the conversation so far (every CLI sends all of
//! it each turn); the reply goes back streamed in the request's own dialect. So one script
//! drives all three agents: a shell command is the tool `Bash` whichever CLI runs it, and
//! Baton's MCP tools are `mcp__baton__NAME`. Every request is kept, in that one shape, for the
//! test to assert on what the agent sent, including what Baton answered.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

mod anthropic;
mod chat;
mod gemini;
mod responses;

/// What the model says next.
pub enum Reply {
    /// Call one tool with this input.
    Tool { name: String, input: Value },
    /// End the turn with this text.
    Text(String),
}

pub type Script = Arc<dyn Fn(&Value) -> Reply + Send + Sync>;

/// The server; it runs until the test ends.
pub struct ScriptedApi {
    pub addr: SocketAddr,
    requests: Arc<Mutex<Vec<Value>>>,
}

impl ScriptedApi {
    pub fn start(script: Script) -> ScriptedApi {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = requests.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let script = script.clone();
                let seen = seen.clone();
                std::thread::spawn(move || serve(stream, &script, &seen));
            }
        });
        ScriptedApi { addr, requests }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every message request received so far, in order.
    pub fn requests(&self) -> Vec<Value> {
        self.requests.lock().unwrap().clone()
    }
}

fn serve(stream: TcpStream, script: &Script, seen: &Mutex<Vec<Value>>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut stream = stream;
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
            return;
        }
        let mut length = 0;
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 {
                return;
            }
            if header == "\r\n" {
                break;
            }
            if let Some((name, value)) = header.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let path = request_line.split_whitespace().nth(1).unwrap_or("");
        let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let Some((content_type, payload)) = answer(path, &request, script, seen) else {
            let answer = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";
            if stream.write_all(answer.as_bytes()).is_err() {
                return;
            }
            continue;
        };
        let head = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n",
            payload.len()
        );
        if stream.write_all(head.as_bytes()).is_err()
            || stream.write_all(payload.as_bytes()).is_err()
        {
            return;
        }
    }
}

/// The reply to a request at `path`, by its dialect: the content type and the body (none: no
/// such endpoint).
fn answer(
    path: &str,
    request: &Value,
    script: &Script,
    seen: &Mutex<Vec<Value>>,
) -> Option<(&'static str, String)> {
    let ask = |conversation: Value| {
        seen.lock().unwrap().push(conversation.clone());
        script(&conversation)
    };
    if path.starts_with("/v1/messages/count_tokens") {
        Some(("application/json", json!({"input_tokens": 100}).to_string()))
    } else if path.starts_with("/v1/messages") {
        let reply = ask(request.clone());
        Some(anthropic::encode(request, &reply))
    } else if path.starts_with("/v1/chat/completions") {
        if chat::is_title(request) {
            return Some(chat::title());
        }
        let reply = ask(chat::conversation(request));
        Some(chat::encode(&reply))
    } else if path.starts_with("/v1/responses") {
        let reply = ask(responses::conversation(request));
        Some(responses::encode(request, &reply))
    } else if let Some(call) = path.strip_prefix("/v1beta/models/") {
        let (model, method) = call.split_once(':')?;
        let method = method.split('?').next().unwrap_or(method);
        if method == "countTokens" {
            return Some(("application/json", json!({"totalTokens": 100}).to_string()));
        }
        let reply = ask(gemini::conversation(model, request));
        Some(gemini::encode(model, method, &reply))
    } else {
        None
    }
}

/// A conversation being put in the Messages API's shape: consecutive blocks of one role in one
/// message.
#[derive(Default)]
pub(crate) struct Conversation {
    messages: Vec<(String, Vec<Value>)>,
}

impl Conversation {
    pub(crate) fn push(&mut self, role: &str, block: Value) {
        match self.messages.last_mut() {
            Some((last, blocks)) if last == role => blocks.push(block),
            _ => self.messages.push((role.to_string(), vec![block])),
        }
    }

    /// The request a script reads.
    pub(crate) fn request(self, model: Value, system: String, tools: Vec<Value>) -> Value {
        let messages: Vec<Value> = self
            .messages
            .into_iter()
            .map(|(role, content)| json!({"role": role, "content": content}))
            .collect();
        json!({"model": model, "system": system, "messages": messages, "tools": tools})
    }
}

/// The usage every scripted reply reports, whatever the dialect.
pub const INPUT_TOKENS: u64 = 100;
pub const OUTPUT_TOKENS: u64 = 20;

pub(crate) fn rand_id() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64,
    );
    hasher.finish()
}

/// The names of the tools offered in a request.
pub fn tool_names(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// The first user message's text (the prompt given to `claude -p`, with what Claude Code adds).
pub fn prompt_text(request: &Value) -> String {
    text_of(&request["messages"][0]["content"]).unwrap_or_default()
}

/// Content as text: a string, or its parts' texts one per line; `None` for anything else.
pub(crate) fn text_of(content: &Value) -> Option<String> {
    match content {
        Value::String(text) => Some(text.clone()),
        Value::Array(parts) => Some(
            parts
                .iter()
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        _ => None,
    }
}

/// A tool call the model made and what came back for it.
#[derive(Debug, Clone)]
pub struct Exchange {
    pub tool: String,
    pub input: Value,
    pub result: String,
    pub is_error: bool,
}

/// The tool calls of the conversation in `request`, each with its result, in order.
pub fn exchanges(request: &Value) -> Vec<Exchange> {
    let mut calls: Vec<(String, String, Value)> = Vec::new();
    let mut done = Vec::new();
    for message in request["messages"].as_array().into_iter().flatten() {
        let Some(blocks) = message["content"].as_array() else {
            continue;
        };
        for block in blocks {
            match block["type"].as_str() {
                Some("tool_use") => calls.push((
                    block["id"].as_str().unwrap_or_default().to_string(),
                    block["name"].as_str().unwrap_or_default().to_string(),
                    block["input"].clone(),
                )),
                Some("tool_result") => {
                    let id = block["tool_use_id"].as_str().unwrap_or_default();
                    if let Some((_, tool, input)) = calls.iter().find(|(i, _, _)| i == id) {
                        let result = text_of(&block["content"]).unwrap_or_default();
                        done.push(Exchange {
                            tool: tool.clone(),
                            input: input.clone(),
                            result,
                            is_error: block["is_error"] == true,
                        });
                    }
                }
                _ => {}
            }
        }
    }
    done
}
