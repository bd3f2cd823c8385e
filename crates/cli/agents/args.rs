//! The command line of orchestration: agents, invocations, handoffs, parallel runs, routing.
//! Long texts (prompts, outputs) can come from a file with `@PATH`, or from stdin with `-`.

use std::path::PathBuf;

use clap::Subcommand;

#[derive(Debug, Subcommand)]
pub enum AgentsCommand {
    /// List the agents: name, model, role, and where each is defined.
    List,
    /// Show one agent's definition and instructions.
    Show { name: String },
    /// Check every definition; reports problems with file and line (exit code 4 if any).
    Check,
    /// Write the built-in catalog as editable files (default .claude/agents/) and the default
    /// routing rules to .coordination/orchestration/workflows.json.
    Init {
        /// Where to write the agent files, relative to the project.
        #[arg(long, default_value = ".claude/agents")]
        to: PathBuf,
        /// Overwrite files that exist.
        #[arg(long)]
        force: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum InvokeCommand {
    /// Record an invocation and print its id, model and enriched prompt (the host runs it).
    Start {
        agent: String,
        /// The task (`@FILE` reads a file, `-` reads stdin).
        prompt: String,
        /// Use this model instead of the agent's default.
        #[arg(long)]
        model: Option<String>,
        /// The agent whose output this builds on.
        #[arg(long, value_name = "AGENT")]
        prior_agent: Option<String>,
        /// That agent's output (`@FILE` reads a file).
        #[arg(long, value_name = "TEXT")]
        prior_output: Option<String>,
        /// Steering files put first in the prompt (repeatable).
        #[arg(long, value_name = "FILE")]
        steering: Vec<String>,
        /// Artifacts the agent should read (repeatable).
        #[arg(long, value_name = "PATH")]
        artifact: Vec<String>,
        /// Add the invocation to this parallel run.
        #[arg(long, value_name = "ID")]
        parallel_id: Option<String>,
    },
    /// Record how an invocation ended; feeds its parallel run, if any.
    Complete {
        id: String,
        /// The agent's output (`@FILE` reads a file, `-` reads stdin).
        #[arg(long, default_value = "")]
        output: String,
        /// It failed (default: completed).
        #[arg(long)]
        failed: bool,
        /// Files the agent created (repeatable).
        #[arg(long, value_name = "PATH")]
        artifact: Vec<String>,
        /// What the next agent should know.
        #[arg(long, value_name = "TEXT")]
        handoff_context: Option<String>,
    },
    /// List active invocations and the recent history (last 50).
    List {
        /// Only the active ones.
        #[arg(long)]
        active: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum HandoffCommand {
    /// Record a handoff; one to the orchestrator (outside a parallel run) rewrites HANDOFF.md.
    Track {
        from: String,
        to: String,
        /// What was done and what the next agent needs (`@FILE` reads a file).
        #[arg(long)]
        summary: String,
        /// Files produced (repeatable).
        #[arg(long, value_name = "PATH")]
        artifact: Vec<String>,
        /// A decision and its rationale, as "DECISION :: RATIONALE" (repeatable).
        #[arg(long, value_name = "TEXT")]
        decision: Vec<String>,
        /// A question left open (repeatable).
        #[arg(long, value_name = "TEXT")]
        question: Vec<String>,
        /// The parallel run this handoff belongs to.
        #[arg(long, value_name = "ID")]
        parallel_id: Option<String>,
    },
    /// Show the handoff chain.
    Chain,
    /// Show invocations, handoffs and parallel runs as a graph: one line per edge, the graph
    /// as JSON with --json, or Graphviz with --dot (`baton handoff graph --dot | dot -Tsvg`).
    Graph {
        /// Print Graphviz dot, laid out left to right, conflicts in red (not with --json).
        #[arg(long)]
        dot: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum ParallelCommand {
    /// Start a parallel run: one invocation per --agent NAME=PROMPT.
    Start {
        /// An agent and its prompt, as NAME=PROMPT (repeat, at least twice).
        #[arg(long = "agent", value_name = "NAME=PROMPT", required = true)]
        agents: Vec<String>,
        /// How to combine the results: merge, vote or escalate.
        #[arg(long, default_value = "merge")]
        strategy: baton_agents::state::Strategy,
        /// Who resolves conflicts when escalating (default high-level-advisor).
        #[arg(long, value_name = "AGENT")]
        handler: Option<String>,
    },
    /// Combine the results of a run so far: complete, partial (pending listed) or conflict.
    Aggregate { id: String },
    /// List parallel runs.
    List,
}
