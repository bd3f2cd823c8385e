//! `invoke_agent` and `complete_invocation`. Baton does not run agents: the host does (Claude
//! Code's Task tool, a terminal). Invoking validates the agent, picks the model, builds the
//! enriched prompt and records the invocation; completing records the outcome, which the
//! source design had no way to report, and feeds parallel results.

use baton_core::{Placed, Timestamp};
use serde::{Deserialize, Serialize};

use crate::error::{AgentError, Result, check_text};
use crate::orchestrator::Orchestrator;
use crate::state::{self, Invocation, InvocationStatus, OrchestrationState, ParallelMember};

/// The longest prompt, prior output or report accepted, in bytes.
pub const MAX_TEXT: usize = 1024 * 1024;
/// The longest steering file read, in bytes.
pub const MAX_STEERING_FILE: u64 = 256 * 1024;

/// What the caller knows from earlier steps.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct InvokeContext {
    /// The agent whose output this invocation builds on.
    #[serde(default)]
    pub prior_agent: Option<String>,
    /// That agent's output, put before the task in the prompt.
    #[serde(default)]
    pub prior_output: Option<String>,
    /// Files the agent should read.
    #[serde(default)]
    pub artifacts: Vec<String>,
    /// Files of guidance to put first in the prompt (paths relative to the project).
    #[serde(default)]
    pub steering: Vec<String>,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct InvokeRequest {
    /// The agent to invoke (a name from agents://catalog).
    pub agent: String,
    /// The task for the agent.
    pub prompt: String,
    /// What earlier steps produced.
    #[serde(default)]
    pub context: InvokeContext,
    /// Use this model instead of the agent's default (sonnet, opus, haiku or a claude-… id).
    #[serde(default)]
    pub model_override: Option<String>,
    /// Add the invocation to this parallel run.
    #[serde(default)]
    pub parallel_id: Option<String>,
}

/// The outcome an agent reports.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CompletionReport {
    /// `completed` or `failed`.
    pub status: InvocationStatus,
    /// The agent's output.
    #[serde(default)]
    pub output: String,
    /// Files the agent created.
    #[serde(default)]
    pub artifacts_created: Vec<String>,
    /// What the next agent should know.
    #[serde(default)]
    pub handoff_context: Option<String>,
}

/// The enriched prompt, in the source design's order: steering first, then the prior agent's
/// output, then the task.
pub fn enrich_prompt(
    task: &str,
    prior_output: Option<&str>,
    steering: &[(String, String)],
) -> String {
    let mut prompt = match prior_output {
        Some(prior) => format!("## Prior Agent Output\n{prior}\n\n## Current Task\n{task}"),
        None => task.to_string(),
    };
    if !steering.is_empty() {
        let guidance = steering
            .iter()
            .map(|(path, text)| format!("### {path}\n{}", text.trim_end()))
            .collect::<Vec<_>>()
            .join("\n\n");
        prompt = format!("## Steering Guidance\n{guidance}\n\n{prompt}");
    }
    prompt
}

/// Reads the steering file at `full` (already resolved inside the confinement).
fn read_steering(file: &Placed) -> Result<String> {
    let fail = |message: String| AgentError::Steering {
        path: file.full().to_path_buf(),
        message,
    };
    // Opened beneath the project, no link followed, however the folders changed since the
    // path was checked.
    let bytes = file.read(MAX_STEERING_FILE).map_err(|e| match e.kind() {
        std::io::ErrorKind::FileTooLarge => {
            fail(format!("it is larger than {MAX_STEERING_FILE} bytes"))
        }
        _ if baton_fs::beneath::is_link_refusal(&e) => {
            fail("a symbolic link is in the way, and links are not followed here".into())
        }
        _ => fail(e.to_string()),
    })?;
    String::from_utf8(bytes).map_err(|_| fail("it is not UTF-8 text".into()))
}

impl Orchestrator {
    /// `invoke_agent`: records a started invocation and returns it with its enriched prompt.
    pub fn invoke_agent(&self, request: InvokeRequest) -> Result<Invocation> {
        let agent = self.registry.require(&request.agent)?;
        check_text("prompt", &request.prompt, MAX_TEXT, true)?;
        if let Some(prior) = &request.context.prior_output {
            check_text("prior output", prior, MAX_TEXT, false)?;
        }
        if let Some(prior_agent) = &request.context.prior_agent {
            self.registry.require(prior_agent)?;
        }
        let model = match &request.model_override {
            Some(model) => {
                let ok = crate::definition::MODEL_ALIASES.contains(&model.as_str())
                    || model.starts_with("claude-");
                if !ok {
                    return Err(AgentError::InvalidInput {
                        field: "model",
                        reason: format!(
                            "unknown model {model:?}: use sonnet, opus, haiku or a claude-… id"
                        ),
                    });
                }
                model.clone()
            }
            None => agent.model.clone(),
        };
        self.confinement
            .resolve_all("artifacts", &request.context.artifacts)?;
        let steering = request
            .context
            .steering
            .iter()
            .map(|path| {
                let full = self.confinement.place("steering", path)?;
                Ok((path.clone(), read_steering(&full)?))
            })
            .collect::<Result<Vec<_>>>()?;
        let prompt = enrich_prompt(
            &request.prompt,
            request.context.prior_output.as_deref(),
            &steering,
        );
        let agent_name = agent.name.clone();
        state::transact(&*self.documents, |state, now| {
            let invocation = Invocation {
                id: state.fresh_id("inv", Some(&agent_name), now),
                agent: agent_name.clone(),
                model: model.clone(),
                task: request.prompt.clone(),
                prompt: prompt.clone(),
                status: InvocationStatus::Started,
                started_at: now,
                completed_at: None,
                duration_ms: None,
                parallel_id: request.parallel_id.clone(),
                prior_agent: request.context.prior_agent.clone(),
                steering: request.context.steering.clone(),
                artifacts: request.context.artifacts.clone(),
                output: None,
                artifacts_created: Vec::new(),
                handoff_context: None,
            };
            if let Some(parallel_id) = &request.parallel_id {
                let run = state
                    .parallel_runs
                    .iter_mut()
                    .find(|p| &p.id == parallel_id)
                    .ok_or_else(|| AgentError::UnknownParallel {
                        id: parallel_id.clone(),
                    })?;
                run.members.push(ParallelMember {
                    agent: agent_name.clone(),
                    invocation_id: invocation.id.clone(),
                    status: InvocationStatus::Started,
                    output: None,
                });
            }
            state.active.push(invocation.clone());
            Ok(invocation)
        })
    }

    /// `complete_invocation`: records how a started invocation ended.
    pub fn complete_invocation(&self, id: &str, report: CompletionReport) -> Result<Invocation> {
        if report.status == InvocationStatus::Started {
            return Err(AgentError::InvalidInput {
                field: "status",
                reason: "use completed or failed".into(),
            });
        }
        check_text("output", &report.output, MAX_TEXT, false)?;
        if let Some(context) = &report.handoff_context {
            check_text("handoff context", context, MAX_TEXT, false)?;
        }
        state::transact(&*self.documents, |state, now| {
            complete(state, id, report.clone(), now)
        })
    }
}

fn complete(
    state: &mut OrchestrationState,
    id: &str,
    report: CompletionReport,
    now: Timestamp,
) -> Result<Invocation> {
    let Some(index) = state.active.iter().position(|i| i.id == id) else {
        return Err(match state.invocation(id) {
            Some(done) => AgentError::AlreadyFinished {
                id: id.to_string(),
                status: serde_json::to_value(done.status)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default(),
            },
            None => AgentError::UnknownInvocation { id: id.to_string() },
        });
    };
    let mut invocation = state.active.remove(index);
    invocation.status = report.status;
    invocation.completed_at = Some(now);
    invocation.duration_ms = Some(invocation.started_at.age(now).as_millis() as u64);
    invocation.output = Some(report.output);
    invocation.artifacts_created = report.artifacts_created;
    invocation.handoff_context = report.handoff_context;
    if let Some(parallel_id) = &invocation.parallel_id
        && let Some(run) = state
            .parallel_runs
            .iter_mut()
            .find(|p| &p.id == parallel_id)
        && let Some(member) = run
            .members
            .iter_mut()
            .find(|m| m.invocation_id == invocation.id)
    {
        member.status = invocation.status;
        member.output = invocation.output.clone();
    }
    state.retire(invocation.clone());
    Ok(invocation)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prompt_puts_steering_first_then_prior_output_then_the_task() {
        let prompt = enrich_prompt(
            "Write the parser",
            Some("The grammar is LL(1)"),
            &[("steering/rust.md".into(), "Use thiserror\n".into())],
        );
        assert_eq!(
            prompt,
            "## Steering Guidance\n### steering/rust.md\nUse thiserror\n\n## Prior Agent Output\nThe grammar is LL(1)\n\n## Current Task\nWrite the parser"
        );
        assert_eq!(enrich_prompt("Just this", None, &[]), "Just this");
    }
}
