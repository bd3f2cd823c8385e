//! The orchestration commands. Each change runs the catalogue operation the MCP tool runs
//! (invoke_agent, complete_invocation, track_handoff, start_parallel_execution,
//! aggregate_parallel_results, get_routing_recommendation) as the user; the command line builds
//! its request from flags of its own shape (text from `@FILE` or stdin, `NAME=PROMPT` pairs,
//! `DECISION :: RATIONALE`). Reading the registry and the record is `baton-agents`' directly.

use std::io::Read;
use std::path::Path;

use baton_agents::handoff::{HandoffContext, HandoffRequest};
use baton_agents::invoke::{CompletionReport, InvokeContext, InvokeRequest};
use baton_agents::parallel::{ParallelAgent, ParallelRequest};
use baton_agents::state::{Decision, InvocationStatus};
use baton_agents::{Orchestrator, catalog};
use baton_api::orchestration::{AggregateParallel, CompleteInvocation, Route};
use baton_api::{OpenProject, Operation};

mod args;
mod render;

use crate::output::emit;
pub use args::{AgentsCommand, HandoffCommand, InvokeCommand, ParallelCommand};
use baton_api::Error as CliError;

const EXIT_PROBLEMS: u8 = 4;

/// A text argument: `@FILE` reads the file (relative to `cwd`), `-` reads stdin, anything
/// else is the text itself.
fn text_arg(cwd: &Path, value: &str) -> Result<String, CliError> {
    if value == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| baton_core::StoreError::io("stdin", e))?;
        return Ok(text);
    }
    match value.strip_prefix('@') {
        Some(path) => {
            let path = cwd.join(path);
            std::fs::read_to_string(&path).map_err(|e| baton_core::StoreError::io(path, e).into())
        }
        None => Ok(value.to_string()),
    }
}

/// Runs the catalogue operation `op` as the user (paths anywhere the user names), as the MCP
/// server runs it for an agent.
fn run<O: Operation>(project: &OpenProject, op: O) -> Result<O::Output, CliError> {
    crate::context::as_user(
        project,
        baton_live::WatchMode::default(),
        baton_core::ForeignFile::Keep,
        |cx| op.run(cx),
    )
}

/// The orchestrator for the user's own commands: steering files and artifacts may be anywhere
/// the user names (the MCP server's agents get the project only).
fn orchestrator(project: &OpenProject) -> Result<Orchestrator, CliError> {
    Ok(
        Orchestrator::open_on(project.local(), project.documents.clone())?
            .with_confinement(crate::context::user_confinement(project.local())?),
    )
}

pub fn agents(project: &OpenProject, command: AgentsCommand, json: bool) -> Result<u8, CliError> {
    let orchestrator = orchestrator(project)?;
    let registry = orchestrator.registry();
    match command {
        AgentsCommand::List => {
            let agents: Vec<_> = registry.agents.values().collect();
            emit(json, &agents, || {
                render::agent_table(&agents, &registry.diagnostics)
            });
        }
        AgentsCommand::Show { name } => {
            let agent = registry.require(&name)?;
            emit(json, agent, || render::agent(agent));
        }
        AgentsCommand::Check => {
            emit(json, &registry.diagnostics, || {
                render::diagnostics(registry)
            });
            if !registry.diagnostics.is_empty() {
                return Ok(EXIT_PROBLEMS);
            }
        }
        AgentsCommand::Init { to, force } => {
            let dir = project.local().project_dir().join(&to);
            let written = catalog::write_catalog(&dir, force)?;
            let workflows = orchestrator.write_workflows(force)?;
            emit(
                json,
                &serde_json::json!({"agents": written, "workflows_written": workflows,
                    "workflows": orchestrator.workflows_file()}),
                || render::init(&dir, &written, workflows, &orchestrator.workflows_file()),
            );
        }
    }
    Ok(0)
}

pub fn invoke(
    project: &OpenProject,
    cwd: &Path,
    command: InvokeCommand,
    json: bool,
) -> Result<u8, CliError> {
    match command {
        InvokeCommand::Start {
            agent,
            prompt,
            model,
            prior_agent,
            prior_output,
            steering,
            artifact,
            parallel_id,
        } => {
            let invocation = run(
                project,
                InvokeRequest {
                    agent,
                    prompt: text_arg(cwd, &prompt)?,
                    context: InvokeContext {
                        prior_agent,
                        prior_output: prior_output.map(|p| text_arg(cwd, &p)).transpose()?,
                        artifacts: artifact,
                        steering,
                    },
                    model_override: model,
                    parallel_id,
                },
            )?;
            emit(json, &invocation, || {
                render::invocation_started(&invocation)
            });
        }
        InvokeCommand::Complete {
            id,
            output,
            failed,
            artifact,
            handoff_context,
        } => {
            let invocation = run(
                project,
                CompleteInvocation {
                    invocation_id: id,
                    report: CompletionReport {
                        status: if failed {
                            InvocationStatus::Failed
                        } else {
                            InvocationStatus::Completed
                        },
                        output: text_arg(cwd, &output)?,
                        artifacts_created: artifact,
                        handoff_context: handoff_context.map(|h| text_arg(cwd, &h)).transpose()?,
                    },
                },
            )?;
            emit(json, &invocation, || {
                format!(
                    "Recorded {} as {}",
                    invocation.id,
                    if failed { "failed" } else { "completed" }
                )
            });
        }
        InvokeCommand::List { active } => {
            let state = orchestrator(project)?.state()?;
            let value = if active {
                serde_json::json!({"active": state.active})
            } else {
                serde_json::json!({"active": state.active, "history": state.history})
            };
            emit(json, &value, || render::invocations(&state, active));
        }
    }
    Ok(0)
}

pub fn handoff(project: &OpenProject, command: HandoffCommand, json: bool) -> Result<u8, CliError> {
    let cwd = std::env::current_dir().map_err(|e| baton_core::StoreError::io(".", e))?;
    match command {
        HandoffCommand::Track {
            from,
            to,
            summary,
            artifact,
            decision,
            question,
            parallel_id,
        } => {
            let decisions = decision
                .iter()
                .map(|d| match d.split_once("::") {
                    Some((decision, rationale)) => Ok(Decision {
                        decision: decision.trim().to_string(),
                        rationale: rationale.trim().to_string(),
                    }),
                    None => Err(CliError::input(
                        "decision",
                        format!("{d:?} has no rationale; write \"DECISION :: RATIONALE\""),
                    )),
                })
                .collect::<Result<Vec<_>, _>>()?;
            let recorded = run(
                project,
                HandoffRequest {
                    from_agent: from,
                    to_agent: to,
                    context: HandoffContext {
                        summary: text_arg(&cwd, &summary)?,
                        artifacts: artifact,
                        decisions,
                        open_questions: question,
                    },
                    parallel_id,
                },
            )?;
            emit(json, &recorded, || {
                let h = &recorded.handoff;
                let mut text = format!("Recorded handoff {} ({} → {})", h.id, h.from, h.to);
                if recorded.consolidated {
                    text += "; HANDOFF.md updated";
                }
                text
            });
        }
        HandoffCommand::Chain => {
            let chain = orchestrator(project)?.state()?.handoffs;
            emit(json, &chain, || render::chain(&chain));
        }
        HandoffCommand::Graph { dot } => {
            if dot && json {
                return Err(CliError::input(
                    "dot",
                    "--dot and --json are two formats: pick one",
                ));
            }
            let graph = project.handoff_graph()?;
            emit(json, &graph, || {
                if dot {
                    graph.render_dot()
                } else {
                    graph.render_text()
                }
            });
        }
    }
    Ok(0)
}

pub fn parallel(
    project: &OpenProject,
    cwd: &Path,
    command: ParallelCommand,
    json: bool,
) -> Result<u8, CliError> {
    match command {
        ParallelCommand::Start {
            agents,
            strategy,
            handler,
        } => {
            let agents = agents
                .iter()
                .map(|spec| match spec.split_once('=') {
                    Some((agent, prompt)) => Ok(ParallelAgent {
                        agent: agent.trim().to_string(),
                        prompt: text_arg(cwd, prompt)?,
                        context: InvokeContext::default(),
                    }),
                    None => Err(CliError::input(
                        "agent",
                        format!("{spec:?} is not NAME=PROMPT"),
                    )),
                })
                .collect::<Result<Vec<_>, _>>()?;
            let started = run(
                project,
                ParallelRequest {
                    agents,
                    aggregation_strategy: strategy,
                    conflict_handler: handler,
                },
            )?;
            emit(json, &started, || render::parallel_started(&started));
        }
        ParallelCommand::Aggregate { id } => {
            let aggregation = run(project, AggregateParallel { parallel_id: id })?;
            emit(json, &aggregation, || render::aggregation(&aggregation));
        }
        ParallelCommand::List => {
            let runs = orchestrator(project)?.state()?.parallel_runs;
            emit(json, &runs, || render::parallel_runs(&runs));
        }
    }
    Ok(0)
}

pub fn route(project: &OpenProject, task: &str, json: bool) -> Result<u8, CliError> {
    let recommendation = run(
        project,
        Route {
            task: task.to_string(),
            current_state: None,
        },
    )?;
    emit(json, &recommendation, || {
        format!(
            "Workflow: {} ({}% confidence)\nAgents:   {}\nWhy:      {}",
            recommendation.recommended_workflow,
            recommendation.confidence,
            recommendation.recommended_agents.join(" → "),
            recommendation.reasoning
        )
    });
    Ok(0)
}
