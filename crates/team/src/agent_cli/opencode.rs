//! OpenCode (npm `opencode-ai`), headless: `opencode run --format json --auto PROMPT`, with
//! Baton's MCP server added to the user's configuration for the run (`OPENCODE_CONFIG_CONTENT`,
//! which OpenCode merges over its other configuration files), any provider the user configured
//! (an OpenAI-compatible or Anthropic endpoint, with its key in the environment or OpenCode's
//! `auth.json`), and its tokens priced by the profile when its provider reports no cost.

use std::path::Path;

use baton_core::Happened;
use serde_json::{Value, json};

use super::reading::text;
use super::{AgentCli, AgentRun, BuiltIn, CommandLine, Reading, StateFolder};

/// The variable OpenCode reads inline configuration from.
const CONFIG_CONTENT: &str = "OPENCODE_CONFIG_CONTENT";

#[derive(Debug)]
pub struct OpenCode;

impl AgentCli for OpenCode {
    fn name(&self) -> &'static str {
        "opencode"
    }

    fn built_in(&self) -> BuiltIn {
        BuiltIn {
            program: "opencode",
            name_prefix: "oc",
            allowed_tools: &[],
            permission_mode: None,
        }
    }

    fn install_hint(&self) -> &'static str {
        "install OpenCode: `npm install -g opencode-ai`"
    }

    /// Its own service and model list, and the two providers most used with it; another
    /// provider's address is allowed by its configuration ([`configured_model_urls`]) or the
    /// profile's `sandbox.allow`.
    fn model_hosts(&self) -> &'static [&'static str] {
        &[
            "opencode.ai",
            "*.opencode.ai",
            "models.dev",
            "api.anthropic.com",
            "api.openai.com",
        ]
    }

    /// The `baseURL` of each provider in the user's configuration file.
    fn configured_model_urls(&self, user_state: &Path) -> Vec<String> {
        ["opencode.json", "config.json"]
            .iter()
            .filter_map(|name| std::fs::read_to_string(user_state.join(name)).ok())
            .filter_map(|text| serde_json::from_str::<Value>(&text).ok())
            .flat_map(|config| {
                let providers = config["provider"].as_object().cloned().unwrap_or_default();
                providers
                    .values()
                    .filter_map(|p| p["options"]["baseURL"].as_str().map(str::to_string))
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    fn project_settings(&self) -> &'static [&'static str] {
        &["opencode.json", "opencode.jsonc", ".opencode/"]
    }

    /// Its own settings, and the keys of the providers it is most used with.
    fn variable_prefixes(&self) -> &'static [&'static str] {
        &[
            "OPENCODE_",
            "ANTHROPIC_",
            "OPENAI_",
            "OPENROUTER_",
            "GEMINI_",
            "GOOGLE_GENERATIVE_AI_",
            "GROQ_",
            "DEEPSEEK_",
            "XAI_",
            "MISTRAL_",
        ]
    }

    /// Its configuration (providers, instructions, agents, commands) and its data (sign-ins,
    /// sessions), each the task's own copy.
    fn state_folders(&self) -> &'static [StateFolder] {
        &[
            StateFolder {
                folder: ".config/opencode",
                variable: None,
                names: &[
                    "opencode.json",
                    "opencode.jsonc",
                    "config.json",
                    "AGENTS.md",
                    "agent",
                    "command",
                    "mode",
                    "plugin",
                    "tool",
                    "skill",
                ],
                beside: None,
            },
            StateFolder {
                folder: ".local/share/opencode",
                variable: None,
                names: &["auth.json", "mcp-auth.json"],
                beside: None,
            },
        ]
    }

    fn takes_mcp_servers(&self) -> bool {
        true
    }

    /// `--auto` approves what its permissions would ask (nobody is at a headless run's
    /// terminal) and nothing its configuration denies; it does not update itself mid-run.
    fn invocation(&self, run: &AgentRun<'_>) -> CommandLine {
        let mut args = vec![
            "run".to_string(),
            "--format".into(),
            "json".into(),
            "--auto".into(),
        ];
        if let Some(model) = run.model {
            args.extend(["--model".into(), model.to_string()]);
        }
        args.extend(run.args.iter().cloned());
        args.push(run.prompt.to_string());
        let mut command: Vec<String> = vec![run.baton.display().to_string()];
        command.extend(run.mcp_args.iter().map(|a| a.to_string()));
        let user = std::env::var(CONFIG_CONTENT).ok();
        let mut invocation = CommandLine::of(run.command, args);
        invocation.env = vec![
            (
                CONFIG_CONTENT.to_string(),
                with_baton_server(user.as_deref(), command).to_string(),
            ),
            ("OPENCODE_DISABLE_AUTOUPDATE".into(), "1".into()),
        ];
        invocation
    }

    /// `--format json`: `step_start`, `text`, `tool_use` (a finished call with its result),
    /// `step_finish` (a model turn's tokens and cost), `error`.
    fn read(&self, reading: &mut Reading, value: &Value) -> Vec<Happened> {
        let part = &value["part"];
        let mut events = Vec::new();
        if reading.session_id.is_none()
            && let Some(id) = text(&value["sessionID"])
        {
            reading.session_id = Some(id);
            events.push(Happened::Session {
                session_id: reading.session_id.clone(),
                model: None,
            });
        }
        match value["type"].as_str() {
            Some("text") => events.extend(
                text(&part["text"])
                    .filter(|t| !t.trim().is_empty())
                    .map(|text| Happened::Text { text }),
            ),
            Some("tool_use") => {
                let id = text(&part["callID"]).unwrap_or_default();
                let state = &part["state"];
                let failed = state["status"] == "error";
                events.push(Happened::ToolCall {
                    id: id.clone(),
                    name: text(&part["tool"]).unwrap_or_default(),
                    input: state["input"].clone(),
                });
                events.push(Happened::ToolResult {
                    id,
                    output: text(&state["output"])
                        .or_else(|| text(&state["error"]))
                        .unwrap_or_default(),
                    is_error: failed,
                });
            }
            Some("step_finish") => {
                let tokens = &part["tokens"];
                let count = |v: &Value| v.as_u64().unwrap_or(0);
                let usage = &mut reading.usage;
                usage.turns += 1;
                usage.input_tokens += count(&tokens["input"]);
                usage.output_tokens += count(&tokens["output"]);
                usage.cache_read_tokens += count(&tokens["cache"]["read"]);
                usage.cache_creation_tokens += count(&tokens["cache"]["write"]);
                usage.cost_usd += part["cost"].as_f64().unwrap_or(0.0);
                reading.price_usage();
            }
            Some("error") => {
                let error = &value["error"];
                events.push(Happened::Error {
                    message: text(&error["data"]["message"])
                        .or_else(|| text(&error["message"]))
                        .or_else(|| text(&error["name"]))
                        .unwrap_or_else(|| value.to_string()),
                });
            }
            _ => {}
        }
        events
    }
}

/// The inline configuration of a run: the user's own (`user`, when they set the variable),
/// with Baton's MCP server (`command`) added.
fn with_baton_server(user: Option<&str>, command: Vec<String>) -> Value {
    let mut config = user
        .and_then(|text| serde_json::from_str::<Value>(text).ok())
        .filter(Value::is_object)
        .unwrap_or_else(|| json!({}));
    if !config["mcp"].is_object() {
        config["mcp"] = json!({});
    }
    config["mcp"]["baton"] = json!({"type": "local", "command": command, "enabled": true});
    config
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent_cli::testing::{kinds_of, read, run};

    /// Lines as OpenCode 1.18.33 printed them (trimmed of fields Baton does not read).
    #[test]
    fn json_gives_calls_with_their_results_text_and_usage() {
        let (reader, events) = read(
            "opencode",
            &[
                r#"{"type":"step_start","sessionID":"ses_1","part":{"type":"step-start"}}"#,
                r#"{"type":"tool_use","sessionID":"ses_1","part":{"type":"tool","tool":"bash","callID":"call_1","state":{"status":"completed","input":{"command":"ls"},"output":"a.txt"}}}"#,
                r#"{"type":"step_finish","sessionID":"ses_1","part":{"type":"step-finish","reason":"tool-calls","tokens":{"input":100,"output":20,"reasoning":0,"cache":{"write":0,"read":30}},"cost":0.25}}"#,
                r#"{"type":"tool_use","sessionID":"ses_1","part":{"type":"tool","tool":"baton_task_fail","callID":"call_2","state":{"status":"error","input":{},"error":"no such task"}}}"#,
                r#"{"type":"text","sessionID":"ses_1","part":{"type":"text","text":"All done."}}"#,
                r#"{"type":"step_finish","sessionID":"ses_1","part":{"type":"step-finish","reason":"stop","tokens":{"input":100,"output":20,"cache":{"read":0}},"cost":0.25}}"#,
            ],
        );
        assert_eq!(
            kinds_of(&events),
            ["session", "call", "result", "call", "result", "text"]
        );
        assert!(
            matches!(&events[4], Happened::ToolResult { is_error: true, output, .. } if output == "no such task")
        );
        let so_far = &reader.so_far;
        assert_eq!(so_far.session_id.as_deref(), Some("ses_1"));
        assert_eq!(
            (
                so_far.usage.turns,
                so_far.usage.input_tokens,
                so_far.usage.cache_read_tokens
            ),
            (2, 200, 30)
        );
        assert_eq!(so_far.usage.cost_usd, 0.5);
        assert_eq!(so_far.last_said.as_deref(), Some("All done."));
    }

    #[test]
    fn an_error_event_says_its_message() {
        let (_, events) = read(
            "opencode",
            &[
                r#"{"type":"error","sessionID":"ses_1","error":{"name":"APIError","data":{"message":"model not found"}}}"#,
            ],
        );
        assert!(
            matches!(&events[1], Happened::Error { message } if message == "model not found"),
            "{events:?}"
        );
    }

    /// Baton's server joins what the user configured inline, which is kept.
    #[test]
    fn its_run_adds_batons_server_to_the_users_inline_configuration() {
        let line = OpenCode.invocation(&AgentRun {
            model: Some("scripted/m1"),
            ..run()
        });
        assert_eq!(
            &line.args[..6],
            [
                "run",
                "--format",
                "json",
                "--auto",
                "--model",
                "scripted/m1"
            ]
        );
        assert_eq!(line.args.last().map(String::as_str), Some("the prompt"));
        let user = r#"{"model": "a/b", "mcp": {"other": {"type": "remote", "url": "x"}}}"#;
        let config = with_baton_server(Some(user), vec!["baton".into(), "mcp".into()]);
        assert_eq!(config["model"], "a/b");
        assert_eq!(config["mcp"]["other"]["url"], "x");
        assert_eq!(config["mcp"]["baton"]["command"], json!(["baton", "mcp"]));
        let fresh = with_baton_server(Some("not json"), vec!["baton".into()]);
        assert_eq!(fresh["mcp"]["baton"]["type"], "local");
    }

    #[test]
    fn the_users_providers_are_its_model_addresses() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("opencode.json"),
            r#"{"provider": {"local": {"options": {"baseURL": "http://127.0.0.1:7000/v1"}}}}"#,
        )
        .unwrap();
        assert_eq!(
            OpenCode.configured_model_urls(dir.path()),
            ["http://127.0.0.1:7000/v1"]
        );
    }
}
