//! `track_handoff`: the handoff chain, so context survives an agent's context window. Each
//! handoff (from, to, summary, artifacts, decisions with rationale, open questions, parallel
//! id) is appended to the chain; when work returns to the orchestrator outside a parallel run,
//! `.coordination/HANDOFF.md` is rewritten atomically with the consolidated context, the file
//! the orchestrator reads first in a new session.

use std::fmt::Write;

use serde::{Deserialize, Serialize};

use crate::error::{AgentError, Result, check_text};
use crate::orchestrator::Orchestrator;
use crate::registry::USER;
use crate::state::{self, Decision, Handoff};

/// The agent whose incoming handoffs consolidate `HANDOFF.md`.
pub const ORCHESTRATOR: &str = "orchestrator";

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HandoffContext {
    /// What was done and what the next agent needs to know.
    pub summary: String,
    /// Files produced.
    #[serde(default)]
    pub artifacts: Vec<String>,
    /// Decisions taken, each with its rationale.
    #[serde(default)]
    pub decisions: Vec<Decision>,
    /// Questions left open.
    #[serde(default)]
    pub open_questions: Vec<String>,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HandoffRequest {
    /// The agent handing off (or `user`).
    pub from_agent: String,
    /// The agent receiving the work; `orchestrator` consolidates HANDOFF.md.
    pub to_agent: String,
    /// The context handed on.
    pub context: HandoffContext,
    /// The parallel run this handoff belongs to, if any.
    #[serde(default)]
    pub parallel_id: Option<String>,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct HandoffRecorded {
    pub handoff: Handoff,
    /// Whether `HANDOFF.md` was rewritten.
    pub consolidated: bool,
}

impl Orchestrator {
    pub fn track_handoff(&self, request: HandoffRequest) -> Result<HandoffRecorded> {
        for name in [&request.from_agent, &request.to_agent] {
            if name != USER {
                self.registry.require(name)?;
            }
        }
        let context = &request.context;
        check_text("summary", &context.summary, 256 * 1024, true)?;
        self.confinement
            .resolve_all("artifacts", &context.artifacts)?;
        for text in context
            .artifacts
            .iter()
            .chain(&context.open_questions)
            .chain(
                context
                    .decisions
                    .iter()
                    .flat_map(|d| [&d.decision, &d.rationale]),
            )
        {
            check_text("handoff context", text, 64 * 1024, false)?;
        }
        let consolidate = request.to_agent == ORCHESTRATOR && request.parallel_id.is_none();
        let layout = self.layout.clone();
        state::transact(&*self.documents, |state, now| {
            if let Some(parallel_id) = &request.parallel_id
                && !state.parallel_runs.iter().any(|p| &p.id == parallel_id)
            {
                return Err(AgentError::UnknownParallel {
                    id: parallel_id.clone(),
                });
            }
            let handoff = Handoff {
                id: state.fresh_id("hnd", None, now),
                from: request.from_agent.clone(),
                to: request.to_agent.clone(),
                at: now,
                summary: context.summary.clone(),
                artifacts: context.artifacts.clone(),
                decisions: context.decisions.clone(),
                open_questions: context.open_questions.clone(),
                parallel_id: request.parallel_id.clone(),
            };
            state.handoffs.push(handoff.clone());
            if consolidate {
                // Written under the same lock, so concurrent handoffs cannot interleave it.
                let text = render_handoff_md(&state.handoffs);
                baton_fs::write_atomic(&state::handoff_file(&layout), text.as_bytes())?;
            }
            Ok(HandoffRecorded {
                handoff,
                consolidated: consolidate,
            })
        })
    }
}

/// `HANDOFF.md`: the latest return to the orchestrator, then everything the chain decided,
/// left open and produced, then the chain itself.
pub fn render_handoff_md(chain: &[Handoff]) -> String {
    let mut out = String::from("# Handoff\n\n");
    let Some(latest) = chain.last() else {
        out.push_str("No handoffs yet.\n");
        return out;
    };
    let _ = writeln!(
        out,
        "Updated {} from the handoff chain in `.coordination/orchestration/state.json` ({} handoffs).\n",
        latest.at,
        chain.len()
    );
    let _ = writeln!(
        out,
        "## Latest: {} → {}\n\n{}\n",
        latest.from,
        latest.to,
        latest.summary.trim()
    );

    let decisions: Vec<(&Handoff, &Decision)> = chain
        .iter()
        .flat_map(|h| h.decisions.iter().map(move |d| (h, d)))
        .collect();
    out.push_str("## Decisions\n\n");
    if decisions.is_empty() {
        out.push_str("None recorded.\n");
    }
    for (h, d) in decisions {
        let _ = writeln!(
            out,
            "- **{}** ({}): {}",
            d.decision.trim(),
            h.from,
            d.rationale.trim()
        );
    }

    let mut questions: Vec<(&str, &str)> = Vec::new();
    for h in chain {
        for q in &h.open_questions {
            if !questions.iter().any(|(_, seen)| seen == q) {
                questions.push((&h.from, q));
            }
        }
    }
    out.push_str("\n## Open questions\n\n");
    if questions.is_empty() {
        out.push_str("None.\n");
    }
    for (from, q) in questions {
        let _ = writeln!(out, "- {} ({from})", q.trim());
    }

    let mut artifacts: Vec<&str> = Vec::new();
    for a in chain.iter().flat_map(|h| &h.artifacts) {
        if !artifacts.contains(&a.as_str()) {
            artifacts.push(a);
        }
    }
    out.push_str("\n## Artifacts\n\n");
    if artifacts.is_empty() {
        out.push_str("None.\n");
    }
    for a in artifacts {
        let _ = writeln!(out, "- {a}");
    }

    out.push_str(
        "\n## Chain\n\n| # | from | to | at | summary |\n| --- | --- | --- | --- | --- |\n",
    );
    for (i, h) in chain.iter().enumerate() {
        let first = h.summary.lines().next().unwrap_or("").replace('|', "\\|");
        let parallel = h
            .parallel_id
            .as_deref()
            .map(|p| format!(" ({p})"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "| {} | {} | {}{parallel} | {} | {first} |",
            i + 1,
            h.from,
            h.to,
            h.at
        );
    }
    out
}
