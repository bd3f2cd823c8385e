//! The Gemini CLI (npm `@google/gemini-cli`): `gemini -p PROMPT --output-format stream-json
//! --yolo`. It has no option that adds an MCP server for one run (its system settings must
//! belong to root, and a workspace's would be written into the task's worktree), so a Gemini
//! agent reports through the `baton` command in its shell, which is first on its PATH; its
//! prompt says how.

use baton_core::Happened;
use serde_json::Value;

use super::reading::text;
use super::{AgentCli, AgentRun, BuiltIn, CommandLine, Reading, StateFolder};

#[derive(Debug)]
pub struct Gemini;

impl AgentCli for Gemini {
    fn name(&self) -> &'static str {
        "gemini"
    }

    fn built_in(&self) -> BuiltIn {
        BuiltIn {
            program: "gemini",
            name_prefix: "gm",
            allowed_tools: &[],
            permission_mode: None,
        }
    }

    fn install_hint(&self) -> &'static str {
        "install the Gemini CLI: `npm install -g @google/gemini-cli`"
    }

    fn model_hosts(&self) -> &'static [&'static str] {
        &[
            "generativelanguage.googleapis.com",
            "cloudcode-pa.googleapis.com",
            "oauth2.googleapis.com",
            "www.googleapis.com",
        ]
    }

    fn base_url_variables(&self) -> &'static [&'static str] {
        &["GOOGLE_GEMINI_BASE_URL", "GEMINI_BASE_URL"]
    }

    fn project_settings(&self) -> &'static [&'static str] {
        &[".gemini/"]
    }

    fn variable_prefixes(&self) -> &'static [&'static str] {
        &["GEMINI_", "GOOGLE_"]
    }

    fn state_folders(&self) -> &'static [StateFolder] {
        &[StateFolder {
            folder: ".gemini",
            variable: None,
            names: &[
                "settings.json",
                "oauth_creds.json",
                "google_accounts.json",
                "installation_id",
                "GEMINI.md",
                ".env",
                "commands",
                "extensions",
            ],
            beside: None,
        }]
    }

    /// `--skip-trust`: the lead who started the team trusts the project.
    fn invocation(&self, run: &AgentRun<'_>) -> CommandLine {
        let mut args = vec![
            "-p".to_string(),
            run.prompt.to_string(),
            "--output-format".into(),
            "stream-json".into(),
            "--yolo".into(),
            "--skip-trust".into(),
        ];
        if let Some(model) = run.model {
            args.extend(["--model".into(), model.to_string()]);
        }
        args.extend(run.args.iter().cloned());
        CommandLine::of(run.command, args)
    }

    /// `stream-json`: `init`, `message`, `tool_use`, `tool_result`, `result`.
    fn read(&self, reading: &mut Reading, value: &Value) -> Vec<Happened> {
        let mut events = Vec::new();
        let field = |a: &str, b: &str| text(&value[a]).or_else(|| text(&value[b]));
        match value["type"].as_str() {
            Some("init") => {
                reading.session_id = field("session_id", "sessionId");
                events.push(Happened::Session {
                    session_id: reading.session_id.clone(),
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
                reading.reported_result = true;
                let stats = &value["stats"];
                reading.usage.input_tokens = stats["input_tokens"].as_u64().unwrap_or(0);
                reading.usage.output_tokens = stats["output_tokens"].as_u64().unwrap_or(0);
                reading.usage.cache_read_tokens = stats["cached"].as_u64().unwrap_or(0);
                reading.price_usage();
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

#[cfg(test)]
mod tests {
    use crate::agent_cli::testing::{kinds_of, read};

    #[test]
    fn stream_json_gives_tools_and_its_result() {
        let (reader, events) = read(
            "gemini",
            &[
                r#"{"type":"init","session_id":"g-1","model":"gemini-2.5-pro"}"#,
                r#"{"type":"tool_use","tool_name":"run_shell_command","tool_id":"t1","parameters":{"command":"ls"}}"#,
                r#"{"type":"tool_result","tool_id":"t1","status":"success","output":"a"}"#,
                r#"{"type":"message","role":"assistant","content":"Done","delta":true}"#,
                r#"{"type":"result","status":"success","stats":{"input_tokens":7,"output_tokens":3}}"#,
            ],
        );
        assert_eq!(
            kinds_of(&events),
            ["session", "call", "result", "text", "final"]
        );
        assert_eq!(reader.so_far.usage.output_tokens, 3);
        assert!(reader.so_far.reported_result);
    }
}
