//! Claude Code (npm `@anthropic-ai/claude-code`), headless: `claude -p PROMPT --output-format
//! stream-json --verbose`, with Baton's MCP server and a hook that hands it its messages, a
//! session Baton names (and resumes after a supervisor stopped), and its caps given to it.
//! Its project setup for a person's own sessions (`baton setup claude`) is [`project`].

pub mod project;

use baton_core::Happened;
use serde_json::{Value, json};

use super::reading::{add_tokens, content_text, text};
use super::{AgentCli, AgentRun, AgentSession, BuiltIn, CommandLine, Reading, StateFolder};

#[derive(Debug)]
pub struct Claude;

impl AgentCli for Claude {
    fn name(&self) -> &'static str {
        "claude"
    }

    fn built_in(&self) -> BuiltIn {
        BuiltIn {
            program: "claude",
            name_prefix: "cc",
            allowed_tools: &[
                "Bash",
                "Read",
                "Edit",
                "Write",
                "Glob",
                "Grep",
                "mcp__baton",
            ],
            permission_mode: Some("acceptEdits"),
        }
    }

    fn install_hint(&self) -> &'static str {
        "install Claude Code: `npm install -g @anthropic-ai/claude-code`"
    }

    /// Claude Code may read and use Baton's tools unasked, and everything else goes to the
    /// permission prompt (its acceptEdits, which would pass file commands such as `rm` in the
    /// working folder, is dropped: the policy decides them).
    fn under_policy(&self) -> Option<&'static [&'static str]> {
        Some(&["Read", "Glob", "Grep", "mcp__baton"])
    }

    fn model_hosts(&self) -> &'static [&'static str] {
        &[
            "api.anthropic.com",
            "console.anthropic.com",
            "statsig.anthropic.com",
            "claude.ai",
            "platform.claude.com",
        ]
    }

    fn base_url_variables(&self) -> &'static [&'static str] {
        &["ANTHROPIC_BASE_URL"]
    }

    /// Its settings by variable: its documented DISABLE_*, ENABLE_*, MCP_*, MAX_*, BASH_* and
    /// its Vertex region besides its own prefixes.
    fn project_settings(&self) -> &'static [&'static str] {
        &[".mcp.json", ".claude/"]
    }

    fn variable_prefixes(&self) -> &'static [&'static str] {
        &[
            "ANTHROPIC_",
            "CLAUDE_",
            "DISABLE_",
            "ENABLE_",
            "MCP_",
            "MAX_",
            "BASH_",
            "VERTEX_",
            "CLOUD_ML_",
        ]
    }

    fn state_folders(&self) -> &'static [StateFolder] {
        &[StateFolder {
            folder: ".claude",
            variable: Some("CLAUDE_CONFIG_DIR"),
            names: &[
                ".credentials.json",
                "settings.json",
                "CLAUDE.md",
                "agents",
                "commands",
                "skills",
            ],
            // Its main file is beside the folder unless the variable moved the folder.
            beside: Some(".claude.json"),
        }]
    }

    fn session(&self, resumed: Option<String>) -> AgentSession {
        match resumed {
            Some(id) => AgentSession::Resume(id),
            None => AgentSession::New(super::new_session_id()),
        }
    }

    fn resumes(&self) -> bool {
        true
    }

    fn takes_mcp_servers(&self) -> bool {
        true
    }

    /// It is given `--max-turns` and `--max-budget-usd` and stops itself at them with its own
    /// report of the cost.
    fn caps_itself(&self) -> bool {
        true
    }

    fn invocation(&self, run: &AgentRun<'_>) -> CommandLine {
        // The prompt right after -p: the tool list that follows takes several values.
        let mut args = vec![
            "-p".to_string(),
            run.prompt.to_string(),
            "--output-format".into(),
            "stream-json".into(),
            "--verbose".into(),
            "--mcp-config".into(),
            json!({"mcpServers": {"baton": {
                "type": "stdio",
                "command": run.baton.display().to_string(),
                "args": run.mcp_args,
            }}})
            .to_string(),
        ];
        match run.session {
            AgentSession::New(id) => args.extend(["--session-id".into(), id.clone()]),
            AgentSession::Resume(id) => args.extend(["--resume".into(), id.clone()]),
            AgentSession::Unnamed => {}
        }
        if let Some(model) = run.model {
            args.extend(["--model".into(), model.to_string()]);
        }
        if let Some(mode) = run.permission_mode {
            args.extend(["--permission-mode".into(), mode.to_string()]);
        }
        if let Some(turns) = run.max_turns {
            args.extend(["--max-turns".into(), turns.to_string()]);
        }
        if let Some(left) = run.budget_left_usd {
            args.extend(["--max-budget-usd".into(), format!("{left:.4}")]);
        }
        // Messages for the agent reach it after its next tool call (a hook, not polling).
        args.extend(["--settings".into(), message_hooks(run).to_string()]);
        if run.approvals {
            args.extend([
                "--permission-prompt-tool".into(),
                "mcp__baton__approve_tool_call".into(),
            ]);
        }
        if !run.allowed_tools.is_empty() {
            args.push("--allowedTools".into());
            args.extend(run.allowed_tools.iter().cloned());
        }
        args.extend(run.args.iter().cloned());
        CommandLine::of(run.command, args)
    }

    /// `stream-json`: `system`/`assistant`/`user`/`result` objects.
    fn read(&self, reading: &mut Reading, value: &Value) -> Vec<Happened> {
        let mut events = Vec::new();
        match value["type"].as_str() {
            Some("system") if value["subtype"] == "init" => {
                reading.session_id = text(&value["session_id"]).or(reading.session_id.take());
                events.push(Happened::Session {
                    session_id: reading.session_id.clone(),
                    model: text(&value["model"]),
                });
            }
            Some("assistant") => {
                let message = &value["message"];
                let id = text(&message["id"]).unwrap_or_default();
                if reading.seen_messages.insert(id) {
                    reading.usage.turns += 1;
                    add_tokens(&mut reading.usage, &message["usage"]);
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
                reading.reported_result = true;
                reading.session_id = text(&value["session_id"]).or(reading.session_id.take());
                let mut usage = baton_core::Usage::default();
                add_tokens(&mut usage, &value["usage"]);
                usage.turns = value["num_turns"].as_u64().unwrap_or(reading.usage.turns);
                usage.cost_usd = value["total_cost_usd"].as_f64().unwrap_or(0.0);
                reading.usage = usage;
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
}

/// Claude Code settings whose PostToolUse hook puts the agent's unread messages into its
/// context.
fn message_hooks(run: &AgentRun<'_>) -> Value {
    let command = format!(
        "'{}' claude-hook messages",
        run.baton.display().to_string().replace('\'', "'\\''")
    );
    json!({"hooks": {"PostToolUse": [{"matcher": "*", "hooks": [
        {"type": "command", "command": command}
    ]}]}})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent_cli::testing::{kinds_of, read, run};

    /// Lines as Claude Code 2.1.330 printed them (trimmed of fields Baton does not read).
    #[test]
    fn stream_json_gives_calls_results_and_the_reported_cost() {
        let (reader, events) = read(
            "claude",
            &[
                r#"{"type":"system","subtype":"init","session_id":"s-1","model":"claude-opus-5-5"}"#,
                r#"{"type":"assistant","message":{"id":"msg_1","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"echo hi"}}],"usage":{"input_tokens":100,"output_tokens":20}}}"#,
                r#"{"type":"user","message":{"content":[{"tool_use_id":"toolu_1","type":"tool_result","content":"hi","is_error":false}]}}"#,
                r#"{"type":"assistant","message":{"id":"msg_2","content":[{"type":"text","text":"All done."}],"usage":{"input_tokens":100,"output_tokens":20}}}"#,
                "not json at all",
                r#"{"type":"result","subtype":"success","is_error":false,"num_turns":2,"result":"All done.","session_id":"s-1","total_cost_usd":0.0016,"usage":{"input_tokens":200,"output_tokens":40,"cache_read_input_tokens":0}}"#,
            ],
        );
        assert_eq!(
            kinds_of(&events),
            ["session", "call", "result", "text", "line", "final"]
        );
        let so_far = &reader.so_far;
        assert_eq!(so_far.session_id.as_deref(), Some("s-1"));
        assert_eq!(so_far.usage.cost_usd, 0.0016);
        assert_eq!(so_far.usage.input_tokens, 200);
        assert_eq!(so_far.usage.turns, 2);
        assert!(so_far.reported_result);
        assert_eq!(so_far.last_said.as_deref(), Some("All done."));
    }

    #[test]
    fn usage_repeated_on_events_of_one_message_is_counted_once() {
        let line = r#"{"type":"assistant","message":{"id":"msg_1","content":[{"type":"text","text":"a"}],"usage":{"input_tokens":100,"output_tokens":20}}}"#;
        let (reader, _) = read("claude", &[line, line]);
        assert_eq!(reader.so_far.usage.input_tokens, 100);
        assert_eq!(reader.so_far.usage.turns, 1);
    }

    /// A new attempt names its session, a resumed one goes on with the earlier one, and the
    /// caps, the permission prompt and the profile's own arguments (last) are on the line.
    #[test]
    fn its_command_line_names_the_session_the_caps_and_the_prompt_tool() {
        let session = Claude.session(None);
        assert!(matches!(&session, AgentSession::New(id) if id.len() == 36));
        let args = ["--foo".to_string()];
        let line = Claude.invocation(&AgentRun {
            args: &args,
            max_turns: Some(7),
            budget_left_usd: Some(0.5),
            approvals: true,
            session: &AgentSession::Resume("s-9".into()),
            ..run()
        });
        let joined = line.args.join(" ");
        assert!(joined.contains("--resume s-9"), "{joined}");
        assert!(
            joined.contains("--max-turns 7 --max-budget-usd 0.5000"),
            "{joined}"
        );
        assert!(
            joined.contains("--permission-prompt-tool mcp__baton__approve_tool_call"),
            "{joined}"
        );
        assert_eq!(line.args.last().map(String::as_str), Some("--foo"));
        assert_eq!(&line.args[..2], ["-p", "the prompt"]);
    }
}
