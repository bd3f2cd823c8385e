//! MCP prompts: the lead's and a worker's instructions (`baton prompt leader|worker AGENT`),
//! which hosts show as slash commands (`/mcp__baton__worker cc1` in Claude Code).

use rmcp::ErrorData as McpError;
use rmcp::model::{GetPromptResult, JsonObject, Prompt, PromptArgument, PromptMessage, Role};

/// Every prompt served, with its arguments.
pub fn list() -> Vec<Prompt> {
    vec![
        Prompt::new(
            "worker",
            Some(
                "Work the Baton queue as one worker: claim, start, heartbeat, complete or fail, ask the lead.",
            ),
            Some(vec![
                PromptArgument::new("agent")
                    .with_description("The worker's name (cc1); the same in every command.")
                    .with_required(true),
            ]),
        ),
        Prompt::new(
            "leader",
            Some("Plan and oversee the work as the lead: tasks, status, answers, merges."),
            None::<Vec<PromptArgument>>,
        ),
    ]
}

/// Prompt `name` with `arguments`; an unknown prompt or a missing or invalid argument is the
/// caller's error, said plainly.
pub fn get(name: &str, arguments: Option<&JsonObject>) -> Result<GetPromptResult, McpError> {
    let text = match name {
        "leader" => baton_api::prompts::leader(),
        "worker" => {
            let agent = arguments
                .and_then(|a| a.get("agent"))
                .and_then(|a| a.as_str())
                .ok_or_else(|| {
                    McpError::invalid_params(
                        "the worker prompt needs its agent's name: agent=cc1",
                        None,
                    )
                })?;
            baton_core::names::validate_agent_id(agent)
                .map_err(|e| McpError::invalid_params(e.to_string(), None))?;
            baton_api::prompts::worker(agent)
        }
        other => {
            return Err(McpError::invalid_params(
                format!("unknown prompt {other:?}; prompts/list names them (worker, leader)"),
                None,
            ));
        }
    };
    Ok(GetPromptResult::new(vec![PromptMessage::new_text(
        Role::User,
        text,
    )]))
}
