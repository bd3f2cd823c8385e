//! The handoff graph: agents, invocations and handoffs as one directed graph, so a person can
//! follow how work moved. The desktop app lays it out; `baton handoff graph` prints it (text,
//! JSON or Graphviz).
//!
//! Nodes are *steps*, not agents: an agent that receives work twice appears twice, so a chain
//! reads left to right instead of folding into cycles. The graph is rebuilt from
//! [`OrchestrationState`] in time order:
//!
//! - a handoff outside a parallel run links the sending agent's latest step to a new step of
//!   the receiving agent (the edge carries the handoff: summary, decisions, questions,
//!   artifacts);
//! - an invocation attaches to its agent's latest step if that step has none yet, else it
//!   starts a new step of its own;
//! - a parallel run forks from the latest step of the chain into one step per member and joins
//!   them again; the join carries the run's status, a conflict is flagged on the join and on
//!   the edges into it, and an escalation continues from the join to the conflict handler's
//!   step. A member's handoff inside the run labels that member's edge into the join. The agent
//!   that forked the run aggregates it, so its next handoff leaves from the join.

use std::collections::{BTreeMap, HashSet};
use std::fmt::Write;

use baton_core::Timestamp;
use serde::Serialize;

use crate::state::{
    Handoff, Invocation, InvocationStatus, OrchestrationState, ParallelRun, ParallelStatus,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum NodeKind {
    /// An agent's turn: reached by a handoff or an invocation.
    Step,
    /// The start of a parallel run.
    Fork,
    /// The aggregation of a parallel run.
    Join,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum EdgeKind {
    Handoff,
    Fork,
    Join,
    Escalation,
}

/// The invocation behind a step.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct InvocationSummary {
    pub id: String,
    pub status: InvocationStatus,
    pub model: String,
    pub task: String,
}

impl From<&Invocation> for InvocationSummary {
    fn from(i: &Invocation) -> Self {
        InvocationSummary {
            id: i.id.clone(),
            status: i.status,
            model: i.model.clone(),
            task: i.task.clone(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct GraphNode {
    /// `n1`, `n2`, … in creation order (stable while the history only grows).
    pub id: String,
    pub kind: NodeKind,
    /// The agent of a step; `None` for forks and joins.
    pub agent: Option<String>,
    pub label: String,
    pub invocation: Option<InvocationSummary>,
    pub parallel_id: Option<String>,
    pub parallel_status: Option<ParallelStatus>,
    /// A join whose members disagreed.
    pub conflict: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct GraphEdge {
    pub id: String,
    pub source: String,
    pub target: String,
    pub kind: EdgeKind,
    /// The handoff this edge stands for, with its summary, decisions, questions, artifacts.
    pub handoff: Option<Handoff>,
    /// An edge into (or out of) a conflicting join.
    pub conflict: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct HandoffGraph {
    pub nodes: Vec<GraphNode>,
    pub edges: Vec<GraphEdge>,
}

enum Event<'a> {
    Parallel(&'a ParallelRun),
    Invocation(&'a Invocation),
    Handoff(&'a Handoff),
}

impl Event<'_> {
    fn at(&self) -> Timestamp {
        match self {
            Event::Parallel(p) => p.started_at,
            Event::Invocation(i) => i.started_at,
            Event::Handoff(h) => h.at,
        }
    }
}

/// A parallel run's nodes, for its members' handoffs.
struct RunNodes {
    fork: usize,
    /// Member agent → (its step, its edge into the join).
    members: BTreeMap<String, (usize, usize)>,
}

#[derive(Default)]
struct Builder {
    graph: HandoffGraph,
    /// Each agent's latest node.
    latest: BTreeMap<String, usize>,
    /// The newest node of the chain, where a parallel run forks from.
    tail: Option<usize>,
    runs: BTreeMap<String, RunNodes>,
}

impl Builder {
    fn node(
        &mut self,
        kind: NodeKind,
        agent: Option<&str>,
        label: String,
        invocation: Option<&Invocation>,
    ) -> usize {
        let index = self.graph.nodes.len();
        self.graph.nodes.push(GraphNode {
            id: format!("n{}", index + 1),
            kind,
            agent: agent.map(str::to_string),
            label,
            invocation: invocation.map(InvocationSummary::from),
            parallel_id: None,
            parallel_status: None,
            conflict: false,
        });
        index
    }

    fn step(&mut self, agent: &str, invocation: Option<&Invocation>) -> usize {
        let index = self.node(NodeKind::Step, Some(agent), agent.to_string(), invocation);
        self.latest.insert(agent.to_string(), index);
        self.tail = Some(index);
        index
    }

    fn edge(&mut self, source: usize, target: usize, kind: EdgeKind) -> usize {
        let index = self.graph.edges.len();
        self.graph.edges.push(GraphEdge {
            id: format!("e{}", index + 1),
            source: self.graph.nodes[source].id.clone(),
            target: self.graph.nodes[target].id.clone(),
            kind,
            handoff: None,
            conflict: false,
        });
        index
    }

    /// The agent's latest step, or a new one with nothing before it.
    fn latest_or_new(&mut self, agent: &str) -> usize {
        match self.latest.get(agent) {
            Some(&index) => index,
            None => self.step(agent, None),
        }
    }

    fn handoff(&mut self, handoff: &Handoff) {
        if let Some(run) = handoff.parallel_id.as_ref().and_then(|p| self.runs.get(p)) {
            // Inside a run: a member reporting back labels its edge into the join; work sent
            // to a member labels the fork's edge to it.
            if let Some(&(_, edge)) = run.members.get(&handoff.from) {
                self.graph.edges[edge].handoff = Some(handoff.clone());
                return;
            }
            if let Some(&(member, _)) = run.members.get(&handoff.to) {
                let fork_id = &self.graph.nodes[run.fork].id;
                let member_id = &self.graph.nodes[member].id;
                if let Some(edge) = self
                    .graph
                    .edges
                    .iter_mut()
                    .find(|e| &e.source == fork_id && &e.target == member_id)
                {
                    edge.handoff = Some(handoff.clone());
                    return;
                }
            }
        }
        let source = self.latest_or_new(&handoff.from);
        let target = self.step(&handoff.to, None);
        let edge = self.edge(source, target, EdgeKind::Handoff);
        self.graph.edges[edge].handoff = Some(handoff.clone());
    }

    fn invocation(&mut self, invocation: &Invocation) {
        match self.latest.get(&invocation.agent) {
            Some(&index)
                if self.graph.nodes[index].kind == NodeKind::Step
                    && self.graph.nodes[index].invocation.is_none() =>
            {
                self.graph.nodes[index].invocation = Some(invocation.into());
            }
            _ => {
                self.step(&invocation.agent, Some(invocation));
            }
        }
    }

    fn parallel(&mut self, run: &ParallelRun, state: &OrchestrationState) {
        let origin = self.tail;
        let fork = self.node(
            NodeKind::Fork,
            None,
            format!("parallel ({})", strategy_name(run)),
            None,
        );
        self.graph.nodes[fork].parallel_id = Some(run.id.clone());
        if let Some(origin) = origin {
            self.edge(origin, fork, EdgeKind::Fork);
        }
        let conflict = run.status == ParallelStatus::Conflict;
        let join = self.node(NodeKind::Join, None, join_label(run), None);
        let join_node = &mut self.graph.nodes[join];
        join_node.parallel_id = Some(run.id.clone());
        join_node.parallel_status = Some(run.status);
        join_node.conflict = conflict;
        let mut members = BTreeMap::new();
        for member in &run.members {
            let invocation = state.invocation(&member.invocation_id);
            let step = self.step(&member.agent, invocation);
            if invocation.is_none() {
                // Aged out of the history: keep what the run itself remembers.
                self.graph.nodes[step].invocation = Some(InvocationSummary {
                    id: member.invocation_id.clone(),
                    status: member.status,
                    model: String::new(),
                    task: String::new(),
                });
            }
            self.graph.nodes[step].parallel_id = Some(run.id.clone());
            self.edge(fork, step, EdgeKind::Fork);
            let into_join = self.edge(step, join, EdgeKind::Join);
            self.graph.edges[into_join].conflict = conflict;
            members.insert(member.agent.clone(), (step, into_join));
        }
        let mut end = join;
        if let Some(escalation) = &run.escalation {
            let invocation = state.invocation(escalation);
            let handler = self.step(&run.conflict_handler, invocation);
            let edge = self.edge(join, handler, EdgeKind::Escalation);
            self.graph.edges[edge].conflict = conflict;
            end = handler;
        }
        // Whoever forked the run aggregates it, and continues from the join.
        if let Some(agent) = origin.and_then(|o| self.graph.nodes[o].agent.clone()) {
            self.latest.insert(agent, join);
        }
        self.tail = Some(end);
        self.runs.insert(run.id.clone(), RunNodes { fork, members });
    }
}

fn strategy_name(run: &ParallelRun) -> &'static str {
    match run.strategy {
        crate::state::Strategy::Merge => "merge",
        crate::state::Strategy::Vote => "vote",
        crate::state::Strategy::Escalate => "escalate",
    }
}

fn join_label(run: &ParallelRun) -> String {
    let status = match run.status {
        ParallelStatus::Running => "running",
        ParallelStatus::Complete => "complete",
        ParallelStatus::Partial => "partial",
        ParallelStatus::Conflict => "conflict",
    };
    format!("{} {status}", strategy_name(run))
}

impl HandoffGraph {
    /// Builds the graph of everything `state` remembers (see the module docs).
    pub fn build(state: &OrchestrationState) -> HandoffGraph {
        let escalations: HashSet<&str> = state
            .parallel_runs
            .iter()
            .filter_map(|p| p.escalation.as_deref())
            .collect();
        let mut events: Vec<Event> = state
            .parallel_runs
            .iter()
            .map(Event::Parallel)
            .chain(
                state
                    .history
                    .iter()
                    .chain(&state.active)
                    // Members and escalations are drawn with their run.
                    .filter(|i| i.parallel_id.is_none() && !escalations.contains(i.id.as_str()))
                    .map(Event::Invocation),
            )
            .chain(state.handoffs.iter().map(Event::Handoff))
            .collect();
        // Stable: at equal times, runs come before invocations, invocations before handoffs.
        events.sort_by_key(|e| e.at());
        let mut builder = Builder::default();
        for event in events {
            match event {
                Event::Parallel(run) => builder.parallel(run, state),
                Event::Invocation(invocation) => builder.invocation(invocation),
                Event::Handoff(handoff) => builder.handoff(handoff),
            }
        }
        builder.graph
    }

    fn node(&self, id: &str) -> Option<&GraphNode> {
        self.nodes.iter().find(|n| n.id == id)
    }

    /// One line per edge, in the order the graph grew.
    pub fn render_text(&self) -> String {
        if self.nodes.is_empty() {
            return "No invocations or handoffs yet.\n".to_string();
        }
        let name = |id: &str| {
            self.node(id)
                .map(|n| format!("{} [{}]", n.label, n.id))
                .unwrap_or_else(|| id.to_string())
        };
        let mut text = String::new();
        for edge in &self.edges {
            let kind = match edge.kind {
                EdgeKind::Handoff => "handoff",
                EdgeKind::Fork => "fork",
                EdgeKind::Join => "join",
                EdgeKind::Escalation => "escalation",
            };
            let _ = write!(
                text,
                "{} → {} ({kind}{})",
                name(&edge.source),
                name(&edge.target),
                if edge.conflict { ", CONFLICT" } else { "" }
            );
            if let Some(h) = &edge.handoff {
                let _ = write!(text, ": {}", first_line(&h.summary));
            }
            text.push('\n');
        }
        let linked: HashSet<&str> = self
            .edges
            .iter()
            .flat_map(|e| [e.source.as_str(), e.target.as_str()])
            .collect();
        for node in self
            .nodes
            .iter()
            .filter(|n| !linked.contains(n.id.as_str()))
        {
            let _ = writeln!(text, "{} [{}] (no handoffs)", node.label, node.id);
        }
        text
    }

    /// Graphviz `dot`, laid out left to right, conflicts in red.
    pub fn render_dot(&self) -> String {
        let mut dot = String::from("digraph handoffs {\n  rankdir=LR;\n  node [shape=box];\n");
        for node in &self.nodes {
            let shape = match node.kind {
                NodeKind::Step => "box",
                NodeKind::Fork | NodeKind::Join => "diamond",
            };
            let color = if node.conflict { ", color=red" } else { "" };
            let _ = writeln!(
                dot,
                "  {} [label={}, shape={shape}{color}];",
                node.id,
                dot_string(&node.label)
            );
        }
        for edge in &self.edges {
            let mut attributes = Vec::new();
            if let Some(h) = &edge.handoff {
                attributes.push(format!("label={}", dot_string(&first_line(&h.summary))));
            }
            if edge.conflict {
                attributes.push("color=red".to_string());
            }
            let attributes = if attributes.is_empty() {
                String::new()
            } else {
                format!(" [{}]", attributes.join(", "))
            };
            let _ = writeln!(dot, "  {} -> {}{attributes};", edge.source, edge.target);
        }
        dot.push_str("}\n");
        dot
    }
}

fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or("").trim();
    match line.char_indices().nth(80) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_string(),
    }
}

/// A quoted dot string: quotes and backslashes escaped, control characters dropped.
fn dot_string(text: &str) -> String {
    let mut quoted = String::from("\"");
    for c in text.chars() {
        match c {
            '"' | '\\' => {
                quoted.push('\\');
                quoted.push(c);
            }
            c if c.is_control() => quoted.push(' '),
            c => quoted.push(c),
        }
    }
    quoted.push('"');
    quoted
}
