//! Orchestration: invocations of agents, the handoff chain, parallel runs and routing. The
//! request types are `baton-agents`' own (they were shared from the start); this module only
//! names each operation and runs it with the context's confinement, so a steering file or an
//! artifact an agent names must lie where the context allows.

use baton_agents::Orchestrator;
use baton_agents::handoff::{HandoffRecorded, HandoffRequest};
use baton_agents::invoke::{CompletionReport, InvokeRequest};
use baton_agents::parallel::{Aggregation, ParallelRequest, ParallelStart};
use baton_agents::routing::RoutingRecommendation;
use baton_agents::state::Invocation;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::operation::{Callers, Context, Operation};

/// The orchestrator of the context's project, confined as the context says.
pub fn orchestrator(cx: &Context) -> Result<Orchestrator> {
    Ok(Orchestrator::open_on(cx.local, cx.documents.clone())?
        .with_confinement(cx.confinement.clone()))
}

impl Operation for InvokeRequest {
    const NAME: &'static str = "invoke_agent";
    const DESCRIPTION: &'static str = "Record an invocation of an agent: validates it, picks the model, builds the enriched prompt (steering, prior output, task) and returns it with an id. You run the agent.";
    const READ_ONLY: bool = false;
    const CALLERS: Callers = Callers::SHARED;
    type Output = Invocation;
    fn run(self, cx: &Context) -> Result<Invocation> {
        Ok(orchestrator(cx)?.invoke_agent(self)?)
    }
}

/// How an invocation ended.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CompleteInvocation {
    /// The invocation's id, from invoke_agent.
    pub invocation_id: String,
    #[serde(flatten)]
    #[cfg_attr(feature = "ts", ts(flatten))]
    pub report: CompletionReport,
}

impl Operation for CompleteInvocation {
    const NAME: &'static str = "complete_invocation";
    const DESCRIPTION: &'static str = "Record how an invocation ended (completed or failed, output, artifacts, handoff context); feeds its parallel run.";
    const READ_ONLY: bool = false;
    const CALLERS: Callers = Callers::SHARED;
    type Output = Invocation;
    fn run(self, cx: &Context) -> Result<Invocation> {
        Ok(orchestrator(cx)?.complete_invocation(&self.invocation_id, self.report)?)
    }
}

impl Operation for HandoffRequest {
    const NAME: &'static str = "track_handoff";
    const DESCRIPTION: &'static str = "Append a handoff to the chain; one to the orchestrator outside a parallel run rewrites HANDOFF.md.";
    const READ_ONLY: bool = false;
    const CALLERS: Callers = Callers::SHARED;
    type Output = HandoffRecorded;
    fn run(self, cx: &Context) -> Result<HandoffRecorded> {
        Ok(orchestrator(cx)?.track_handoff(self)?)
    }
}

impl Operation for ParallelRequest {
    const NAME: &'static str = "start_parallel_execution";
    const DESCRIPTION: &'static str = "Start a parallel run: one invocation per agent, aggregated later by merge, vote or escalate.";
    const READ_ONLY: bool = false;
    const CALLERS: Callers = Callers::SHARED;
    type Output = ParallelStart;
    fn run(self, cx: &Context) -> Result<ParallelStart> {
        Ok(orchestrator(cx)?.start_parallel_execution(self)?)
    }
}

/// Combine a parallel run's results.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AggregateParallel {
    /// The run's id, from start_parallel_execution.
    pub parallel_id: String,
}

impl Operation for AggregateParallel {
    const NAME: &'static str = "aggregate_parallel_results";
    const DESCRIPTION: &'static str = "Combine a parallel run's results: complete, partial (pending agents listed) or conflict (differing recommendations).";
    const READ_ONLY: bool = false;
    const CALLERS: Callers = Callers::SHARED;
    type Output = Aggregation;
    fn run(self, cx: &Context) -> Result<Aggregation> {
        Ok(orchestrator(cx)?.aggregate_parallel_results(&self.parallel_id)?)
    }
}

/// Recommend a workflow for a task.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Route {
    /// The task, in words.
    pub task: String,
    /// What has happened so far (not used by the rules; recorded for context).
    #[serde(default)]
    pub current_state: Option<String>,
}

impl Operation for Route {
    const NAME: &'static str = "get_routing_recommendation";
    const DESCRIPTION: &'static str = "Recommend a workflow and agents for a task, with confidence (0-100) and the rule that matched.";
    const READ_ONLY: bool = true;
    const CALLERS: Callers = Callers::READERS;
    type Output = RoutingRecommendation;
    fn run(self, cx: &Context) -> Result<RoutingRecommendation> {
        Ok(orchestrator(cx)?.get_routing_recommendation(&self.task)?)
    }
}
