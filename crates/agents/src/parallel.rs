//! Parallel runs: several agents on one question at once, then one answer. `start` records
//! the run and an invocation per agent; each agent's `complete_invocation` fills in its part;
//! `aggregate` combines what is there.
//!
//! Statuses: `partial` while any agent is pending (they are listed); `conflict` when the agents'
//! recommendations differ and the strategy did not settle it; `complete` otherwise.
//! Strategies: `merge` writes one document with a section per agent (differing
//! recommendations are a conflict); `vote` takes the recommendation most agents gave, with
//! counts (a tie is a conflict); `escalate` records an invocation of the conflict handler
//! (default high-level-advisor) whose prompt summarises every result, and is a conflict when
//! the recommendations differ.
//!
//! A recommendation is read from an agent's output as the text after the last line that starts
//! with `Recommendation:` (case-insensitive; markdown bold, list bullets and quotes around the
//! label are allowed). It is compared trimmed, lower-cased, with trailing punctuation removed.
//! An output without such a line casts no vote and cannot conflict.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

use crate::error::{AgentError, Result};
use crate::invoke::{InvokeContext, InvokeRequest};
use crate::orchestrator::Orchestrator;
use crate::state::{self, ConflictRecord, InvocationStatus, ParallelRun, ParallelStatus, Strategy};

/// The conflict handler when none is named.
pub const DEFAULT_CONFLICT_HANDLER: &str = "high-level-advisor";
/// How much of each output an escalation prompt quotes.
const ESCALATION_EXCERPT: usize = 1500;

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ParallelAgent {
    /// The agent to invoke.
    pub agent: String,
    /// Its task.
    pub prompt: String,
    /// What earlier steps produced.
    #[serde(default)]
    pub context: InvokeContext,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ParallelRequest {
    /// The agents to run in parallel (at least two).
    pub agents: Vec<ParallelAgent>,
    /// How to combine the results: merge, vote or escalate.
    pub aggregation_strategy: Strategy,
    /// Who resolves conflicts when escalating (default high-level-advisor).
    #[serde(default)]
    pub conflict_handler: Option<String>,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ParallelStart {
    pub parallel_id: String,
    pub agents_started: Vec<String>,
    pub invocations: Vec<crate::state::Invocation>,
    pub status: ParallelStatus,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MemberStatus {
    Completed,
    Failed,
    Pending,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct MemberResult {
    pub agent: String,
    pub invocation_id: String,
    pub status: MemberStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recommendation: Option<String>,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Conflict {
    pub agents: Vec<String>,
    /// Each agent's recommendation.
    pub recommendations: BTreeMap<String, String>,
    pub issue: String,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Tally {
    /// Votes per recommendation.
    pub counts: BTreeMap<String, usize>,
    pub votes: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub winner: Option<String>,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Aggregation {
    pub parallel_id: String,
    pub strategy: Strategy,
    pub status: ParallelStatus,
    pub results: Vec<MemberResult>,
    pub pending: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aggregated_output: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tally: Option<Tally>,
    pub conflicts: Vec<Conflict>,
    /// The conflict handler's invocation (escalate).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub escalation: Option<crate::state::Invocation>,
}

static RECOMMENDATION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?im)^[ \t]*(?:[-*>][ \t]*)?(?:\*\*|__)?recommendation(?:\*\*|__)?[ \t]*:[ \t]*(?:\*\*|__)?(.*?)(?:\*\*|__)?[ \t]*$")
        .expect("valid pattern")
});

/// The recommendation in an output (see the module docs), normalised for comparison.
pub fn extract_recommendation(output: &str) -> Option<String> {
    let text = RECOMMENDATION
        .captures_iter(output)
        .last()?
        .get(1)?
        .as_str();
    let normal = text
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .trim_end_matches(['.', '!', ';', ','])
        .to_lowercase();
    (!normal.is_empty()).then_some(normal)
}

impl Orchestrator {
    /// `start_parallel_execution`: records the run and invokes every agent in it.
    pub fn start_parallel_execution(&self, request: ParallelRequest) -> Result<ParallelStart> {
        if request.agents.len() < 2 {
            return Err(AgentError::InvalidInput {
                field: "agents",
                reason: "a parallel run needs at least two agents".into(),
            });
        }
        let handler = request
            .conflict_handler
            .clone()
            .unwrap_or_else(|| DEFAULT_CONFLICT_HANDLER.to_string());
        self.registry.require(&handler)?;
        for agent in &request.agents {
            self.registry.require(&agent.agent)?;
        }
        let parallel_id = state::transact(&*self.documents, |state, now| {
            let id = state.fresh_id("par", None, now);
            state.parallel_runs.push(ParallelRun {
                id: id.clone(),
                strategy: request.aggregation_strategy,
                conflict_handler: handler.clone(),
                members: Vec::new(),
                status: ParallelStatus::Running,
                started_at: now,
                aggregated_at: None,
                escalation: None,
            });
            Ok::<_, AgentError>(id)
        })?;
        let mut invocations = Vec::new();
        for agent in request.agents {
            invocations.push(self.invoke_agent(InvokeRequest {
                agent: agent.agent,
                prompt: agent.prompt,
                context: agent.context,
                model_override: None,
                parallel_id: Some(parallel_id.clone()),
            })?);
        }
        Ok(ParallelStart {
            agents_started: invocations.iter().map(|i| i.agent.clone()).collect(),
            parallel_id,
            invocations,
            status: ParallelStatus::Running,
        })
    }

    /// `aggregate_parallel_results`: combines the results so far by the run's strategy.
    pub fn aggregate_parallel_results(&self, parallel_id: &str) -> Result<Aggregation> {
        let run = self
            .state()?
            .parallel_runs
            .into_iter()
            .find(|p| p.id == parallel_id)
            .ok_or_else(|| AgentError::UnknownParallel {
                id: parallel_id.to_string(),
            })?;
        let results: Vec<MemberResult> = run
            .members
            .iter()
            .map(|m| MemberResult {
                agent: m.agent.clone(),
                invocation_id: m.invocation_id.clone(),
                status: match m.status {
                    InvocationStatus::Started => MemberStatus::Pending,
                    InvocationStatus::Completed => MemberStatus::Completed,
                    InvocationStatus::Failed => MemberStatus::Failed,
                },
                recommendation: (m.status == InvocationStatus::Completed)
                    .then(|| m.output.as_deref().and_then(extract_recommendation))
                    .flatten(),
                output: m.output.clone(),
            })
            .collect();
        let mut aggregation = Aggregation {
            parallel_id: run.id.clone(),
            strategy: run.strategy,
            status: ParallelStatus::Partial,
            pending: results
                .iter()
                .filter(|r| r.status == MemberStatus::Pending)
                .map(|r| r.agent.clone())
                .collect(),
            results,
            aggregated_output: None,
            tally: None,
            conflicts: Vec::new(),
            escalation: None,
        };
        if !aggregation.pending.is_empty() {
            self.record_outcome(&run.id, ParallelStatus::Partial, None, None)?;
            return Ok(aggregation);
        }

        let recommendations: BTreeMap<String, String> = aggregation
            .results
            .iter()
            .filter_map(|r| Some((r.agent.clone(), r.recommendation.clone()?)))
            .collect();
        let mut counts: BTreeMap<String, usize> = BTreeMap::new();
        for rec in recommendations.values() {
            *counts.entry(rec.clone()).or_default() += 1;
        }
        let differ = counts.len() > 1;
        let conflict = differ.then(|| Conflict {
            agents: recommendations.keys().cloned().collect(),
            recommendations: recommendations.clone(),
            issue: format!(
                "conflicting recommendations: {}",
                counts.keys().cloned().collect::<Vec<_>>().join(" vs ")
            ),
        });

        let (status, resolution) = match run.strategy {
            Strategy::Merge => {
                aggregation.aggregated_output = Some(merge(&aggregation.results));
                if differ {
                    (
                        ParallelStatus::Conflict,
                        "unresolved: merged for review".to_string(),
                    )
                } else {
                    (ParallelStatus::Complete, String::new())
                }
            }
            Strategy::Vote => {
                let votes = recommendations.len();
                let best = counts.values().copied().max().unwrap_or(0);
                let leaders: Vec<&String> = counts
                    .iter()
                    .filter(|(_, c)| **c == best)
                    .map(|(r, _)| r)
                    .collect();
                let winner = (leaders.len() == 1).then(|| leaders[0].clone());
                aggregation.aggregated_output = Some(match &winner {
                    Some(w) => format!("Recommendation: {w} ({best}/{votes} votes)"),
                    None if votes == 0 => "No agent gave a recommendation.".to_string(),
                    None => format!(
                        "No majority: {} tied at {best} vote(s) each",
                        leaders
                            .iter()
                            .map(|s| s.as_str())
                            .collect::<Vec<_>>()
                            .join(" and ")
                    ),
                });
                aggregation.tally = Some(Tally {
                    counts: counts.clone(),
                    votes,
                    winner: winner.clone(),
                });
                match winner {
                    Some(w) if differ => (
                        ParallelStatus::Complete,
                        format!("resolved by vote: {w} ({best}/{votes})"),
                    ),
                    Some(_) => (ParallelStatus::Complete, String::new()),
                    None if votes == 0 => (ParallelStatus::Complete, String::new()),
                    None => (
                        ParallelStatus::Conflict,
                        "unresolved: tied vote".to_string(),
                    ),
                }
            }
            Strategy::Escalate => {
                let escalation = match &run.escalation {
                    Some(existing) => {
                        self.state()?.invocation(existing).cloned().ok_or_else(|| {
                            AgentError::UnknownInvocation {
                                id: existing.clone(),
                            }
                        })?
                    }
                    None => self.invoke_agent(InvokeRequest {
                        agent: run.conflict_handler.clone(),
                        prompt: escalation_prompt(&aggregation.results),
                        ..InvokeRequest::default()
                    })?,
                };
                aggregation.aggregated_output = Some(format!(
                    "Escalated to {} as invocation {}",
                    escalation.agent, escalation.id
                ));
                let resolution = format!("escalated to {} ({})", escalation.agent, escalation.id);
                aggregation.escalation = Some(escalation);
                if differ {
                    (ParallelStatus::Conflict, resolution)
                } else {
                    (ParallelStatus::Complete, String::new())
                }
            }
        };
        aggregation.status = status;
        let record = conflict.as_ref().map(|c| ConflictRecord {
            parallel_id: run.id.clone(),
            at: baton_core::Timestamp::now(),
            recommendations: c.recommendations.clone(),
            resolution,
        });
        let escalation_id = aggregation.escalation.as_ref().map(|e| e.id.clone());
        self.record_outcome(&run.id, status, record, escalation_id)?;
        aggregation.conflicts.extend(conflict);
        Ok(aggregation)
    }

    /// Stores a run's status, its conflict (once) and its escalation.
    fn record_outcome(
        &self,
        id: &str,
        status: ParallelStatus,
        conflict: Option<ConflictRecord>,
        escalation: Option<String>,
    ) -> Result<()> {
        state::transact(&*self.documents, |state, now| {
            if let Some(run) = state.parallel_runs.iter_mut().find(|p| p.id == id) {
                run.status = status;
                run.aggregated_at = Some(now);
                if escalation.is_some() {
                    run.escalation = escalation.clone();
                }
            }
            if let Some(conflict) = conflict.clone()
                && !state.conflicts.iter().any(|c| c.parallel_id == id)
            {
                state.conflicts.push(conflict);
            }
            Ok::<_, AgentError>(())
        })
    }
}

fn merge(results: &[MemberResult]) -> String {
    let mut out = String::from("## Aggregated Analysis\n");
    for r in results {
        let body = match (r.status, &r.output) {
            (MemberStatus::Failed, Some(o)) => format!("(failed)\n{o}"),
            (MemberStatus::Failed, None) => "(failed)".to_string(),
            (_, Some(o)) => o.clone(),
            (_, None) => "(no output)".to_string(),
        };
        out.push_str(&format!("\n### From: {}\n{}\n", r.agent, body.trim_end()));
    }
    out
}

fn escalation_prompt(results: &[MemberResult]) -> String {
    let mut prompt = String::from(
        "Resolve these parallel analyses. Weigh the evidence, decide, and end with a `Recommendation:` line.\n",
    );
    for r in results {
        let output = r.output.as_deref().unwrap_or("(no output)");
        let excerpt: String = output.chars().take(ESCALATION_EXCERPT).collect();
        let cut = if excerpt.len() < output.len() {
            "\n[…]"
        } else {
            ""
        };
        prompt.push_str(&format!(
            "\n### {} ({})\nRecommendation: {}\n{}{cut}\n",
            r.agent,
            match r.status {
                MemberStatus::Completed => "completed",
                MemberStatus::Failed => "failed",
                MemberStatus::Pending => "pending",
            },
            r.recommendation.as_deref().unwrap_or("none given"),
            excerpt.trim_end()
        ));
    }
    prompt
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recommendations_are_read_from_the_last_recommendation_line() {
        let cases = [
            (
                "Analysis…\nRecommendation: Use Postgres.\n",
                Some("use postgres"),
            ),
            ("**Recommendation:** Ship it!", Some("ship it")),
            ("- Recommendation:   keep   SQLite", Some("keep sqlite")),
            ("> **Recommendation**: Revise", Some("revise")),
            ("Recommendation: a\nmore\nrecommendation: B", Some("b")),
            ("No verdict here. My recommendation is unclear.", None),
            ("Recommendation:   ", None),
        ];
        for (output, expected) in cases {
            assert_eq!(
                extract_recommendation(output).as_deref(),
                expected,
                "{output:?}"
            );
        }
    }
}
