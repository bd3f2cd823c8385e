//! Baton's own tools: the task store, signals and orchestration, each a thin call into the same
//! library functions the CLI uses. A tool returns a JSON object (the structured content) or a
//! [`ToolError`] that the client shows to the agent; protocol errors are for the server.

use std::sync::Arc;

use baton_agents::Orchestrator;
use baton_agents::handoff::HandoffRequest;
use baton_agents::invoke::InvokeRequest;
use baton_agents::parallel::ParallelRequest;
use baton_live::wait::{Quorum, SignalWait};
use baton_store::lifecycle::{Completion, NewTask};
use baton_store::{Confinement, ForeignFile, Project, SignalTarget};
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::args;

/// The longest a `signal_wait` may block.
pub const MAX_WAIT_SECONDS: u64 = 600;
/// The default `signal_wait` timeout.
pub const DEFAULT_WAIT_SECONDS: u64 = 60;

/// A failure the calling agent should read: what was wrong and what to do.
#[derive(Debug, Clone)]
pub struct ToolError {
    pub kind: &'static str,
    pub message: String,
}

impl ToolError {
    pub fn new(kind: &'static str, message: impl Into<String>) -> Self {
        ToolError {
            kind,
            message: message.into(),
        }
    }

    pub fn to_json(&self) -> Value {
        json!({"error": {"kind": self.kind, "message": self.message}})
    }
}

impl From<baton_store::StoreError> for ToolError {
    fn from(e: baton_store::StoreError) -> Self {
        ToolError::new(e.kind(), e.to_string())
    }
}

impl From<baton_agents::AgentError> for ToolError {
    fn from(e: baton_agents::AgentError) -> Self {
        ToolError::new(e.kind(), e.to_string())
    }
}

impl From<baton_live::LiveError> for ToolError {
    fn from(e: baton_live::LiveError) -> Self {
        ToolError::new(e.kind(), e.to_string())
    }
}

/// One of Baton's tools, as listed to clients.
pub struct ToolDef {
    pub name: &'static str,
    pub description: &'static str,
    pub read_only: bool,
    schema: fn() -> Arc<JsonObject>,
}

impl ToolDef {
    pub fn tool(&self) -> Tool {
        let annotations = if self.read_only {
            ToolAnnotations::new().read_only(true).open_world(false)
        } else {
            ToolAnnotations::new()
                .read_only(false)
                .destructive(false)
                .open_world(false)
        };
        Tool::new(self.name, self.description, (self.schema)()).with_annotations(annotations)
    }
}

fn schema<T: JsonSchema>() -> Arc<JsonObject> {
    let value = serde_json::to_value(schemars::schema_for!(T)).expect("schemas serialise");
    match value {
        Value::Object(mut object) => {
            object.remove("$schema");
            object.remove("title");
            // MCP requires an object schema even for tools without arguments.
            object
                .entry("type")
                .or_insert_with(|| Value::String("object".into()));
            Arc::new(object)
        }
        _ => unreachable!("a struct's schema is an object"),
    }
}

macro_rules! tool {
    ($name:literal, $args:ty, $read_only:expr, $description:literal) => {
        ToolDef {
            name: $name,
            description: $description,
            read_only: $read_only,
            schema: schema::<$args>,
        }
    };
}

/// Every tool Baton serves itself, in the order they are listed.
pub fn catalogue() -> Vec<ToolDef> {
    vec![
        tool!(
            "task_status",
            args::NoArgs,
            true,
            "The task board: every task with its status, owner, lease and what it waits for, with counts."
        ),
        tool!(
            "task_list",
            args::TaskList,
            true,
            "Tasks that can be claimed now, best first (or every task with all=true)."
        ),
        tool!(
            "task_add",
            args::TaskAdd,
            false,
            "Add a task to the queue (leader). Unknown dependencies and cycles are refused."
        ),
        tool!(
            "task_claim",
            args::Agent,
            false,
            "Claim the best ready task (priority 1 first, then oldest). Returns task null when nothing is ready, with the reason."
        ),
        tool!(
            "task_start",
            args::AgentTask,
            false,
            "Start work on a task you claimed."
        ),
        tool!(
            "task_complete",
            args::TaskComplete,
            false,
            "Complete a task you started; writes its result report."
        ),
        tool!(
            "task_fail",
            args::TaskFail,
            false,
            "Give up on a task you hold, saying why."
        ),
        tool!(
            "task_release",
            args::AgentTask,
            false,
            "Hand a task you hold back to the queue, untouched."
        ),
        tool!(
            "task_heartbeat",
            args::Agent,
            false,
            "Renew the lease on every task you hold; call it every few minutes while working."
        ),
        tool!(
            "discover",
            args::Discover,
            false,
            "Share a finding with every agent (appended to context/discoveries.md)."
        ),
        tool!(
            "aggregate",
            args::NoArgs,
            false,
            "Write summary.md from every task's result (leader)."
        ),
        tool!(
            "signal_write",
            args::SignalWrite,
            false,
            "Write a signal (e.g. ui-test-done) so a waiting agent can go on."
        ),
        tool!(
            "signal_clear",
            args::SignalClear,
            false,
            "Remove a signal, or every signal of the run."
        ),
        tool!(
            "signal_list",
            args::SignalList,
            true,
            "The signals present in a run."
        ),
        tool!(
            "signal_wait",
            args::SignalWait,
            true,
            "Wait until signals are written, with progress notifications while waiting. Ends early when a writer it is tied to is gone. Bounded by timeout_seconds (at most 600)."
        ),
        tool!(
            "invoke_agent",
            InvokeRequest,
            false,
            "Record an invocation of an agent: validates it, picks the model, builds the enriched prompt (steering, prior output, task) and returns it with an id. You run the agent."
        ),
        tool!(
            "complete_invocation",
            args::CompleteInvocation,
            false,
            "Record how an invocation ended (completed or failed, output, artifacts, handoff context); feeds its parallel run."
        ),
        tool!(
            "track_handoff",
            HandoffRequest,
            false,
            "Append a handoff to the chain; one to the orchestrator outside a parallel run rewrites HANDOFF.md."
        ),
        tool!(
            "start_parallel_execution",
            ParallelRequest,
            false,
            "Start a parallel run: one invocation per agent, aggregated later by merge, vote or escalate."
        ),
        tool!(
            "aggregate_parallel_results",
            args::AggregateParallel,
            false,
            "Combine a parallel run's results: complete, partial (pending agents listed) or conflict (differing recommendations)."
        ),
        tool!(
            "get_routing_recommendation",
            args::Route,
            true,
            "Recommend a workflow and agents for a task, with confidence (0-100) and the rule that matched."
        ),
        tool!(
            "coordinator_status",
            args::NoArgs,
            true,
            "The proxy's state: each child server (running, pid, tools, restarts, what went wrong) and the browser (CDP port, running or not)."
        ),
        tool!(
            "coordinator_list_browsers",
            args::NoArgs,
            true,
            "Every browser in the project's registry (port, pid, owner, headless), with whether it still runs."
        ),
        tool!(
            "coordinator_launch_browser",
            args::LaunchBrowser,
            false,
            "Launch the browser on the proxy's CDP port now (child tools launch it on first use anyway)."
        ),
        tool!(
            "coordinator_stop_browser",
            args::NoArgs,
            false,
            "Stop the proxy's browser; the next child tool call launches a new one."
        ),
    ]
}

fn parse<T: DeserializeOwned>(arguments: &JsonObject) -> Result<T, ToolError> {
    serde_json::from_value(Value::Object(arguments.clone()))
        .map_err(|e| ToolError::new("invalid_arguments", format!("invalid arguments: {e}")))
}

fn to_object(value: impl serde::Serialize, key: &str) -> Value {
    let value = serde_json::to_value(value).expect("results serialise");
    match value {
        Value::Object(_) => value,
        other => json!({ key: other }),
    }
}

/// Where a tool call may act: the project, and the paths its agent may name.
pub struct Scope<'a> {
    pub project: &'a Project,
    pub confinement: &'a Confinement,
}

fn signal_target(
    scope: &Scope,
    name: Option<&str>,
    path: Option<&str>,
    run: Option<u32>,
) -> Result<SignalTarget, ToolError> {
    let project = scope.project;
    match (name, path) {
        (_, Some(path)) => Ok(SignalTarget::Path(scope.confinement.resolve("path", path)?)),
        (Some(name), None) => Ok(SignalTarget::named(project.resolve_run(run)?, name)?),
        (None, None) => Err(ToolError::new(
            "invalid_arguments",
            "give a signal name or a path",
        )),
    }
}

/// The wait `signal_wait`'s arguments describe, checked.
pub fn signal_wait_request(scope: &Scope, arguments: &JsonObject) -> Result<SignalWait, ToolError> {
    let project = scope.project;
    let a: args::SignalWait = parse(arguments)?;
    let timeout = a.timeout_seconds.unwrap_or(DEFAULT_WAIT_SECONDS);
    if timeout == 0 || timeout > MAX_WAIT_SECONDS {
        return Err(ToolError::new(
            "invalid_arguments",
            format!("timeout_seconds must be between 1 and {MAX_WAIT_SECONDS}"),
        ));
    }
    let mut targets = Vec::new();
    if !a.names.is_empty() {
        let run = project.resolve_run(a.run)?;
        for name in &a.names {
            targets.push(SignalTarget::named(run, name)?);
        }
    }
    for path in &a.paths {
        targets.push(SignalTarget::Path(
            scope.confinement.resolve("paths", path)?,
        ));
    }
    Ok(SignalWait {
        targets,
        quorum: if a.any { Quorum::Any } else { Quorum::All },
        timeout: Some(std::time::Duration::from_secs(timeout)),
        while_pids: a.while_pid,
        while_agents: a.while_agent,
        mode: baton_live::WatchMode::default(),
    })
}

/// Runs one of Baton's tools (not `signal_wait`, which the server runs with progress). Blocking:
/// call it off the async runtime.
pub fn call(scope: &Scope, name: &str, arguments: &JsonObject) -> Result<Value, ToolError> {
    let project = scope.project;
    let orchestrator = || {
        Orchestrator::open(project)
            .map(|o| o.with_confinement(scope.confinement.clone()))
            .map_err(ToolError::from)
    };
    Ok(match name {
        "task_status" => to_object(project.status()?, "status"),
        "task_list" => {
            let a: args::TaskList = parse(arguments)?;
            let tasks = if a.all {
                project.status()?.tasks
            } else {
                project.ready_tasks()?
            };
            json!({ "tasks": tasks })
        }
        "task_add" => {
            let a: args::TaskAdd = parse(arguments)?;
            let task = project.add_task(NewTask {
                description: a.description,
                priority: a.priority.unwrap_or(5),
                dependencies: a.depends,
                files: a.files,
                hints: a.hints,
                id: a.id,
            })?;
            json!({ "task": task })
        }
        "task_claim" => {
            let a: args::Agent = parse(arguments)?;
            match project.claim(&a.agent)? {
                Some(claim) => to_object(claim, "claim"),
                None => {
                    let report = project.status()?;
                    json!({ "task": null, "reason": report.nothing_ready_reason() })
                }
            }
        }
        "task_start" => {
            let a: args::AgentTask = parse(arguments)?;
            json!({ "task": project.start(&a.agent, &a.task)? })
        }
        "task_complete" => {
            let a: args::TaskComplete = parse(arguments)?;
            let task = project.complete(
                &a.agent,
                &a.task,
                Completion {
                    output: a.summary,
                    files_modified: a.modified,
                    files_created: a.created,
                },
            )?;
            json!({ "task": task })
        }
        "task_fail" => {
            let a: args::TaskFail = parse(arguments)?;
            json!({ "task": project.fail(&a.agent, &a.task, &a.reason)? })
        }
        "task_release" => {
            let a: args::AgentTask = parse(arguments)?;
            json!({ "task": project.release(&a.agent, &a.task)? })
        }
        "task_heartbeat" => {
            let a: args::Agent = parse(arguments)?;
            json!({ "agent": a.agent, "renewed": project.heartbeat(&a.agent)? })
        }
        "discover" => {
            let a: args::Discover = parse(arguments)?;
            project.discover(&a.agent, &a.text)?;
            json!({ "added": true, "path": project.layout().discoveries() })
        }
        "aggregate" => {
            let _: args::NoArgs = parse(arguments)?;
            to_object(project.aggregate()?, "aggregate")
        }
        "signal_write" => {
            let a: args::SignalWrite = parse(arguments)?;
            let target = signal_target(scope, a.name.as_deref(), a.path.as_deref(), a.run)?;
            to_object(
                project.write_signal(
                    &target,
                    a.agent.as_deref(),
                    a.note.as_deref(),
                    ForeignFile::Keep,
                )?,
                "signal",
            )
        }
        "signal_clear" => {
            let a: args::SignalClear = parse(arguments)?;
            if a.all {
                let run = project.resolve_run(a.run)?;
                json!({ "run": run, "cleared": project.clear_signals(run)? })
            } else {
                let target = signal_target(scope, a.name.as_deref(), a.path.as_deref(), a.run)?;
                let removed = project.clear_signal(&target, None, ForeignFile::Keep)?;
                json!({ "signal": target.label(), "removed": removed })
            }
        }
        "signal_list" => {
            let a: args::SignalList = parse(arguments)?;
            let run = project.resolve_run(a.run)?;
            json!({ "run": run, "signals": project.list_signals(run)? })
        }
        "invoke_agent" => to_object(
            orchestrator()?.invoke_agent(parse(arguments)?)?,
            "invocation",
        ),
        "complete_invocation" => {
            let a: args::CompleteInvocation = parse(arguments)?;
            to_object(
                orchestrator()?.complete_invocation(&a.invocation_id, a.report)?,
                "invocation",
            )
        }
        "track_handoff" => to_object(orchestrator()?.track_handoff(parse(arguments)?)?, "handoff"),
        "start_parallel_execution" => to_object(
            orchestrator()?.start_parallel_execution(parse(arguments)?)?,
            "parallel",
        ),
        "aggregate_parallel_results" => {
            let a: args::AggregateParallel = parse(arguments)?;
            to_object(
                orchestrator()?.aggregate_parallel_results(&a.parallel_id)?,
                "aggregation",
            )
        }
        "get_routing_recommendation" => {
            let a: args::Route = parse(arguments)?;
            to_object(
                orchestrator()?.get_routing_recommendation(&a.task)?,
                "recommendation",
            )
        }
        other => {
            return Err(ToolError::new(
                "unknown_tool",
                format!("unknown tool {other:?}"),
            ));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_has_an_object_schema_with_described_fields() {
        for def in catalogue() {
            let tool = def.tool();
            assert_eq!(tool.input_schema["type"], "object", "{}", def.name);
            if let Some(Value::Object(properties)) = tool.input_schema.get("properties") {
                for (field, schema) in properties {
                    let described = schema.get("description").is_some()
                        || schema.get("$ref").is_some()
                        || schema.get("allOf").is_some();
                    assert!(
                        described,
                        "{}.{field} has no description: {schema}",
                        def.name
                    );
                }
            }
        }
    }
}
