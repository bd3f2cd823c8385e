//! The permission prompt: Claude Code in headless mode (`--permission-prompt-tool
//! mcp__baton__approve_tool_call`) asks Baton whether its agent may make a tool call. The
//! project's policy (`baton_core::policy`) allows what stays inside the project and matches its
//! allow list, refuses what leaves it or matches its deny list, and puts the rest to the lead
//! as a question with the choices allow, deny and always allow (which adds the call's rule to
//! the policy). Every decision is recorded with the agent's task.

use std::time::Duration;

use baton_core::inbox::{self, About, ApprovalDecision, NewQuestion};
use baton_core::policy::{Policy, Protected, Ruling, policy_path, rule_for};
use baton_core::{Confinement, Timestamp};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::Result;
use crate::inbox::{acting_as, ask_and_wait};
use crate::operation::{Callers, Context, Operation};

/// The lead's choices for an approval.
pub const ALLOW: &str = "allow";
pub const DENY: &str = "deny";
pub const ALWAYS: &str = "always allow";

/// Whether an agent may make a tool call (what Claude Code sends its permission prompt tool).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct ApproveToolCall {
    /// The tool the agent wants to call (Bash, Edit, mcp__server__tool).
    pub tool_name: String,
    /// What it would be given.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(type = "unknown"))]
    #[cfg_attr(feature = "cli", arg(long, value_parser = parse_json, default_value = "{}"))]
    pub input: Value,
    /// The tool call's id.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub tool_use_id: Option<String>,
    /// The agent asking (a server started with BATON_AGENT knows it already).
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub agent: Option<String>,
    /// How long to wait for the lead when the policy asks, in seconds (default: the policy's
    /// ask_timeout_seconds; at most 3600).
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long = "timeout", value_name = "SECONDS"))]
    pub timeout_seconds: Option<u64>,
}

#[cfg(feature = "cli")]
fn parse_json(text: &str) -> std::result::Result<Value, String> {
    serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))
}

/// The answer in the shape Claude Code reads: allow (with the input to use) or deny (with why).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolVerdict {
    /// `allow` or `deny`.
    pub behavior: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(type = "unknown"))]
    pub updated_input: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl ToolVerdict {
    fn allow(input: Value) -> ToolVerdict {
        ToolVerdict {
            behavior: ALLOW.into(),
            updated_input: Some(input),
            message: None,
        }
    }

    fn deny(message: String) -> ToolVerdict {
        ToolVerdict {
            behavior: DENY.into(),
            updated_input: None,
            message: Some(message),
        }
    }
}

impl Operation for ApproveToolCall {
    const NAME: &'static str = "approve_tool_call";
    const DESCRIPTION: &'static str = "Claude Code's permission prompt (--permission-prompt-tool mcp__baton__approve_tool_call): whether the agent may make a tool call. The project's policy (.coordination/policy.toml) allows, refuses, or asks the lead, who answers allow, deny or always allow; every decision is recorded with the agent's task.";
    const READ_ONLY: bool = false;
    const CALLERS: Callers = Callers::OWN_WORK;
    // Claude Code reads the verdict from one text block, and refuses any other shape.
    const TEXT_ONLY: bool = true;
    type Output = ToolVerdict;
    fn run(self, cx: &Context) -> Result<ToolVerdict> {
        let agent = acting_as(cx, self.agent.as_deref(), false)?;
        let task = held_task(cx, &agent)?;
        let policy = Policy::load(&policy_path(cx.local.root()))?;
        let call = one_line(&describe(&self.tool_name, &self.input), 300);
        let within = agent_confinement(cx)?;
        let own_worktree = match task.as_deref() {
            Some(task) => Some(cx.local.worktree_dir(task)?),
            None => None,
        };
        let protected = Protected::new(cx.local.root(), own_worktree.as_deref());
        let verdict = policy.decide(&self.tool_name, &self.input, &within, &protected);
        let (allowed, why) = match verdict {
            Ruling::Allow(why) => (true, why),
            Ruling::Deny(why) => (false, why),
            Ruling::Ask => {
                let seconds = self.timeout_seconds.unwrap_or(policy.ask_timeout_seconds);
                let limit = Duration::from_secs(seconds.clamp(1, crate::inbox::MAX_WAIT_SECONDS));
                ask_the_lead(cx, &agent, task.as_deref(), &self, &call, limit)?
            }
        };
        inbox::record_decision(
            &*cx.documents,
            &ApprovalDecision {
                at: Timestamp::now(),
                agent,
                task,
                tool: self.tool_name.clone(),
                call,
                allowed,
                why: why.clone(),
            },
        )?;
        Ok(if allowed {
            ToolVerdict::allow(self.input)
        } else {
            ToolVerdict::deny(format!("Not allowed: {why}"))
        })
    }
}

/// `text` on one line (line breaks and other control characters as spaces), at most `max`
/// bytes.
fn one_line(text: &str, max: usize) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    baton_core::text::prefix(&flat, max).to_string()
}

/// Where the agent's files may be: the project and the folders the user widened it by
/// (`baton mcp --allow-path`), never everywhere, even when the user runs this for an agent.
fn agent_confinement(cx: &Context) -> Result<Confinement> {
    let mut within = Confinement::project(cx.confinement.base())?;
    for root in cx.confinement.roots() {
        if root.as_path() != std::path::Path::new("/") {
            within = within.allow(root)?;
        }
    }
    Ok(within)
}

/// The task `agent` holds now, if any.
fn held_task(cx: &Context, agent: &str) -> Result<Option<String>> {
    Ok(cx.tasks.held_by(agent)?.into_iter().next().map(|t| t.id))
}

/// The call in words: the command for Bash, the path for a file tool, the input otherwise.
fn describe(tool: &str, input: &Value) -> String {
    let field = [
        "command",
        "file_path",
        "notebook_path",
        "url",
        "path",
        "target",
    ]
    .iter()
    .find_map(|f| input.get(*f).and_then(Value::as_str));
    match field {
        Some(what) => format!("{tool}: {what}"),
        None => format!("{tool}: {input}"),
    }
}

/// Puts the call to the lead and waits; (allowed, why).
fn ask_the_lead(
    cx: &Context,
    agent: &str,
    task: Option<&str>,
    request: &ApproveToolCall,
    call: &str,
    limit: Duration,
) -> Result<(bool, String)> {
    let reason = request
        .input
        .get("description")
        .and_then(Value::as_str)
        .map(|d| format!(" ({d})"))
        .unwrap_or_default();
    let settled = ask_and_wait(
        cx,
        NewQuestion {
            agent: agent.to_string(),
            task: task.map(str::to_string),
            text: match request.tool_name.as_str() {
                baton_core::policy::NETWORK_TOOL => format!(
                    "May I connect to {}? It is outside my sandbox's allow-list.",
                    call.trim_start_matches("Network: ")
                ),
                _ => format!("May I run {call}{reason}?"),
            },
            choices: vec![ALLOW.into(), DENY.into(), ALWAYS.into()],
            about: About::Approval {
                tool: request.tool_name.clone(),
                input: request.input.clone(),
            },
        },
        limit,
        "no answer from the lead",
        |_, _| {},
    )?;
    let by = match &settled.state {
        inbox::QuestionState::Answered { by, .. } => by.clone(),
        _ => String::new(),
    };
    Ok(match settled.answer() {
        Some(ALLOW) => (true, format!("{by} allowed it ({})", settled.id)),
        Some(ALWAYS) => match rule_for(&request.tool_name, &request.input) {
            Some(rule) => {
                Policy::allow_always(&policy_path(cx.local.root()), &rule)?;
                (
                    true,
                    format!(
                        "{by} allowed it always ({}): {rule} added to the policy",
                        settled.id
                    ),
                )
            }
            None => (
                true,
                format!(
                    "{by} allowed it always ({}), but the call names nothing a rule can hold \
                     (a command, a path, a URL): allowed this once, no rule added",
                    settled.id
                ),
            ),
        },
        Some(_) => (false, format!("{by} said no ({})", settled.id)),
        None => match &settled.state {
            inbox::QuestionState::Closed { reason, .. } => (false, reason.clone()),
            _ => (false, "the question is still open".into()),
        },
    })
}
