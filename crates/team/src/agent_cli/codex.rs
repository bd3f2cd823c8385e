//! Codex (npm `@openai/codex`): `codex exec --json PROMPT`, its Baton MCP server given by `-c`
//! options, its thread resumed after a supervisor stopped (`codex exec resume ID`), and its
//! tokens priced by the profile (it reports no cost).

use std::path::Path;

use baton_core::Happened;
use serde_json::Value;

use super::reading::{add_tokens, content_text, text};
use super::{AgentCli, AgentRun, AgentSession, BuiltIn, CommandLine, Reading, StateFolder};

#[derive(Debug)]
pub struct Codex;

impl AgentCli for Codex {
    fn name(&self) -> &'static str {
        "codex"
    }

    fn built_in(&self) -> BuiltIn {
        BuiltIn {
            program: "codex",
            name_prefix: "cx",
            allowed_tools: &[],
            permission_mode: None,
        }
    }

    fn install_hint(&self) -> &'static str {
        "install Codex: `npm install -g @openai/codex`"
    }

    fn model_hosts(&self) -> &'static [&'static str] {
        &["api.openai.com", "auth.openai.com", "chatgpt.com"]
    }

    fn base_url_variables(&self) -> &'static [&'static str] {
        &["OPENAI_BASE_URL"]
    }

    /// The `base_url`s of the model providers in the user's `config.toml` (as the user
    /// configured them, not as an agent left its copy).
    fn configured_model_urls(&self, user_state: &Path) -> Vec<String> {
        let Ok(text) = std::fs::read_to_string(user_state.join("config.toml")) else {
            return Vec::new();
        };
        let Ok(config) = toml::from_str::<toml::Table>(&text) else {
            return Vec::new();
        };
        let providers = config.get("model_providers").and_then(|p| p.as_table());
        providers
            .into_iter()
            .flat_map(|p| p.values())
            .filter_map(|provider| provider.get("base_url").and_then(|u| u.as_str()))
            .map(str::to_string)
            .collect()
    }

    fn project_settings(&self) -> &'static [&'static str] {
        &[".codex/"]
    }

    fn variable_prefixes(&self) -> &'static [&'static str] {
        &["OPENAI_", "CODEX_"]
    }

    fn state_folders(&self) -> &'static [StateFolder] {
        &[StateFolder {
            folder: ".codex",
            variable: Some("CODEX_HOME"),
            names: &["auth.json", "config.toml", "AGENTS.md", "prompts"],
            beside: None,
        }]
    }

    /// It names its own thread; an earlier one is resumed by its id.
    fn session(&self, resumed: Option<String>) -> AgentSession {
        resumed.map_or(AgentSession::Unnamed, AgentSession::Resume)
    }

    fn resumes(&self) -> bool {
        true
    }

    fn takes_mcp_servers(&self) -> bool {
        true
    }

    /// Codex runs without its sandbox and never asks (`danger-full-access`, `never`): its
    /// `workspace-write` sandbox keeps `.git` read-only, so an agent could not commit on its
    /// task's branch, and nobody is at a headless run's terminal to approve. A profile's `args`
    /// come after and may set either back (`-c sandbox_mode="workspace-write"`). Codex gives an
    /// MCP server only the environment its configuration names, so Baton's server gets the
    /// attempt's variables spelled out.
    fn invocation(&self, run: &AgentRun<'_>) -> CommandLine {
        let server_env: Vec<String> = run
            .env
            .iter()
            .filter(|(k, _)| k.starts_with("BATON_") || k.starts_with("PG"))
            .map(|(k, v)| format!("{k}={}", toml_string(v)))
            .collect();
        let mut args = vec!["exec".to_string()];
        if let AgentSession::Resume(_) = run.session {
            args.push("resume".into());
        }
        let server_args: Vec<String> = run.mcp_args.iter().map(|a| format!("\"{a}\"")).collect();
        args.extend([
            "--json".to_string(),
            "--skip-git-repo-check".into(),
            "-c".into(),
            "sandbox_mode=\"danger-full-access\"".into(),
            "-c".into(),
            "approval_policy=\"never\"".into(),
            "-c".into(),
            format!(
                "mcp_servers.baton.command={}",
                toml_string(&run.baton.display().to_string())
            ),
            "-c".into(),
            format!("mcp_servers.baton.args=[{}]", server_args.join(", ")),
            "-c".into(),
            format!(
                "mcp_servers.baton.cwd={}",
                toml_string(&run.workdir.display().to_string())
            ),
            "-c".into(),
            format!("mcp_servers.baton.env={{{}}}", server_env.join(", ")),
        ]);
        if let Some(model) = run.model {
            args.extend(["--model".into(), model.to_string()]);
        }
        args.extend(run.args.iter().cloned());
        if let AgentSession::Resume(id) = run.session {
            args.push(id.clone());
        }
        args.push(run.prompt.to_string());
        CommandLine::of(run.command, args)
    }

    /// `exec --json`: `thread.started`, `item.started`/`item.completed`, `turn.completed` with
    /// usage.
    fn read(&self, reading: &mut Reading, value: &Value) -> Vec<Happened> {
        let mut events = Vec::new();
        match value["type"].as_str() {
            Some("thread.started") => {
                reading.session_id = text(&value["thread_id"]);
                events.push(Happened::Session {
                    session_id: reading.session_id.clone(),
                    model: None,
                });
            }
            Some("turn.completed") => {
                reading.usage.turns += 1;
                add_tokens(&mut reading.usage, &value["usage"]);
                reading.price_usage();
            }
            Some("turn.failed") => events.push(Happened::Error {
                message: text(&value["error"]["message"]).unwrap_or_else(|| value.to_string()),
            }),
            Some("error") => events.push(Happened::Error {
                message: text(&value["message"]).unwrap_or_else(|| value.to_string()),
            }),
            Some("item.started") | Some("item.completed") => {
                let done = value["type"] == "item.completed";
                events.extend(item(&value["item"], done));
            }
            _ => {}
        }
        events
    }
}

/// What one of its items says, started or `done`.
fn item(item: &Value, done: bool) -> Option<Happened> {
    let id = text(&item["id"]).unwrap_or_default();
    match (item["type"].as_str(), done) {
        (Some("agent_message"), true) => text(&item["text"]).map(|text| Happened::Text { text }),
        (Some("command_execution"), false) => Some(Happened::ToolCall {
            id,
            name: "command".into(),
            input: serde_json::json!({"command": item["command"]}),
        }),
        (Some("command_execution"), true) => Some(Happened::ToolResult {
            id,
            output: text(&item["aggregated_output"]).unwrap_or_default(),
            is_error: item["exit_code"].as_i64().is_some_and(|c| c != 0),
        }),
        // Named as Claude Code names MCP tools, so transcripts read alike.
        (Some("mcp_tool_call"), false) => Some(Happened::ToolCall {
            id,
            name: format!(
                "mcp__{}__{}",
                item["server"].as_str().unwrap_or("mcp"),
                item["tool"].as_str().unwrap_or("?")
            ),
            input: item["arguments"].clone(),
        }),
        (Some("mcp_tool_call"), true) => Some(Happened::ToolResult {
            id,
            output: content_text(&item["result"]["content"]),
            is_error: item["status"] == "failed",
        }),
        (Some("file_change"), true) => Some(Happened::ToolResult {
            id,
            output: item["changes"].to_string(),
            is_error: item["status"] == "failed",
        }),
        (Some("error"), _) => Some(Happened::Error {
            message: text(&item["message"]).unwrap_or_default(),
        }),
        _ => None,
    }
}

/// `text` as a TOML basic string (what Codex's `-c key=value` parses).
fn toml_string(text: &str) -> String {
    // JSON's string escapes are TOML's, for everything JSON escapes.
    serde_json::Value::String(text.to_string()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent_cli::testing::{read, run};

    #[test]
    fn json_gives_commands_messages_and_usage() {
        let (reader, events) = read(
            "codex",
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
        let so_far = &reader.so_far;
        assert_eq!(so_far.session_id.as_deref(), Some("th_1"));
        assert_eq!(
            (so_far.usage.input_tokens, so_far.usage.cache_read_tokens),
            (50, 10)
        );
        assert_eq!(so_far.last_said.as_deref(), Some("Done."));
    }

    /// A resumed thread is `exec resume … ID PROMPT`; Baton's MCP server gets the attempt's
    /// variables, quoted as TOML, and no others.
    #[test]
    fn its_command_line_resumes_the_thread_and_spells_out_the_server_s_variables() {
        let env = [
            ("BATON_TASK_ID".to_string(), "t\"1".to_string()),
            ("HOME".to_string(), "/home/x".to_string()),
        ];
        let line = Codex.invocation(&AgentRun {
            env: &env,
            session: &AgentSession::Resume("th_7".into()),
            ..run()
        });
        assert_eq!(&line.args[..2], ["exec", "resume"]);
        assert_eq!(&line.args[line.args.len() - 2..], ["th_7", "the prompt"]);
        assert!(
            line.args
                .contains(&r#"mcp_servers.baton.env={BATON_TASK_ID="t\"1"}"#.to_string()),
            "{:?}",
            line.args
        );
    }

    #[test]
    fn the_user_s_providers_are_its_model_addresses() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("config.toml"),
            "[model_providers.local]\nbase_url = \"http://127.0.0.1:7000/v1\"\n",
        )
        .unwrap();
        assert_eq!(
            Codex.configured_model_urls(dir.path()),
            ["http://127.0.0.1:7000/v1"]
        );
        assert!(
            Codex
                .configured_model_urls(&dir.path().join("none"))
                .is_empty()
        );
    }
}
