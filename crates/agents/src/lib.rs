//! # baton-agents
//!
//! Agent orchestration that survives context loss: the source design's orchestration tools
//! (`invoke_agent`, `track_handoff`, `start_parallel_execution`, `aggregate_parallel_results`,
//! `get_routing_recommendation`) as a persistent library. The host runs the agents; Baton
//! records who was asked what, what they answered, what they handed on and what was decided,
//! in `.coordination/` with the task store's locking and atomic writes.
//!
//! - [`registry`]: agent definitions (markdown with YAML front matter, the format coding
//!   agents use for subagents) over the built-in [`catalog`] of 18 agents;
//! - [`invoke`], [`parallel`], [`handoff`], [`routing`]: the operations, as methods of
//!   [`Orchestrator`], the service the CLI, the MCP server and the desktop app share;
//! - [`state`]: the persisted history; [`graph`]: the history as a directed graph.
//!
//! Not here: running agents, and anything async.

pub mod catalog;
pub mod definition;
pub mod error;
pub mod graph;
pub mod handoff;
pub mod invoke;
pub mod orchestrator;
pub mod parallel;
pub mod registry;
pub mod routing;
pub mod state;

#[cfg(test)]
mod tests;

pub use definition::{AgentDefinition, Diagnostic};
pub use error::{AgentError, Result};
pub use orchestrator::Orchestrator;
pub use registry::Registry;
