//! Tests of the orchestration operations over a real temporary project.

use baton_folder::FolderStore;

use crate::handoff::{HandoffContext, HandoffRequest};
use crate::invoke::{CompletionReport, InvokeContext, InvokeRequest};
use crate::parallel::{ParallelAgent, ParallelRequest};
use crate::state::{self, Decision, InvocationStatus, ParallelStatus, Strategy};
use crate::{AgentError, Orchestrator};

fn setup() -> (tempfile::TempDir, Orchestrator) {
    let dir = tempfile::tempdir().unwrap();
    let project = FolderStore::init(dir.path(), "orchestrate", None).unwrap();
    let orchestrator = Orchestrator::open(&project).unwrap();
    (dir, orchestrator)
}

fn invoke(o: &Orchestrator, agent: &str, prompt: &str) -> crate::state::Invocation {
    o.invoke_agent(InvokeRequest {
        agent: agent.into(),
        prompt: prompt.into(),
        ..InvokeRequest::default()
    })
    .unwrap()
}

fn done(output: &str) -> CompletionReport {
    CompletionReport {
        status: InvocationStatus::Completed,
        output: output.into(),
        artifacts_created: vec![],
        handoff_context: None,
    }
}

#[test]
fn invoke_picks_the_model_builds_the_prompt_and_records_the_invocation() {
    let (dir, o) = setup();
    std::fs::write(dir.path().join("STYLE.md"), "Small modules.\n").unwrap();
    let inv = o
        .invoke_agent(InvokeRequest {
            agent: "security".into(),
            prompt: "Review the login flow".into(),
            context: InvokeContext {
                prior_agent: Some("analyst".into()),
                prior_output: Some("Login uses JWT".into()),
                artifacts: vec!["docs/login.md".into()],
                steering: vec!["STYLE.md".into()],
            },
            ..InvokeRequest::default()
        })
        .unwrap();
    assert_eq!(inv.model, "opus");
    assert!(
        inv.id.starts_with("inv-") && inv.id.ends_with("-security"),
        "{}",
        inv.id
    );
    assert_eq!(
        inv.prompt,
        "## Steering Guidance\n### STYLE.md\nSmall modules.\n\n## Prior Agent Output\nLogin uses JWT\n\n## Current Task\nReview the login flow"
    );
    let state = o.state().unwrap();
    assert_eq!(state.active, vec![inv.clone()]);

    let over = o
        .invoke_agent(InvokeRequest {
            agent: "security".into(),
            prompt: "Again".into(),
            model_override: Some("haiku".into()),
            ..InvokeRequest::default()
        })
        .unwrap();
    assert_eq!(over.model, "haiku");
    assert_ne!(
        over.id, inv.id,
        "ids never collide, even within a millisecond"
    );
}

#[test]
fn invoke_refuses_bad_requests_and_records_nothing() {
    let (_dir, o) = setup();
    let cases: Vec<(InvokeRequest, &str)> = vec![
        (
            InvokeRequest {
                agent: "ghost".into(),
                prompt: "x".into(),
                ..Default::default()
            },
            "unknown agent \"ghost\"",
        ),
        (
            InvokeRequest {
                agent: "qa".into(),
                prompt: " ".into(),
                ..Default::default()
            },
            "invalid prompt",
        ),
        (
            InvokeRequest {
                agent: "qa".into(),
                prompt: "x".into(),
                model_override: Some("gpt".into()),
                ..Default::default()
            },
            "unknown model",
        ),
        (
            InvokeRequest {
                agent: "qa".into(),
                prompt: "x".into(),
                context: InvokeContext {
                    steering: vec!["missing.md".into()],
                    ..Default::default()
                },
                ..Default::default()
            },
            "cannot read steering file",
        ),
        (
            InvokeRequest {
                agent: "qa".into(),
                prompt: "x".into(),
                parallel_id: Some("par-x".into()),
                ..Default::default()
            },
            "no parallel run",
        ),
    ];
    for (request, message) in cases {
        let err = o.invoke_agent(request).unwrap_err().to_string();
        assert!(err.contains(message), "{err}");
    }
    assert!(o.state().unwrap().active.is_empty());
}

#[test]
fn complete_moves_an_invocation_to_the_history_once() {
    let (_dir, o) = setup();
    let inv = invoke(&o, "implementer", "Write it");
    let report = CompletionReport {
        status: InvocationStatus::Completed,
        output: "Written".into(),
        artifacts_created: vec!["src/lib.rs".into()],
        handoff_context: Some("qa should check errors".into()),
    };
    let finished = o.complete_invocation(&inv.id, report.clone()).unwrap();
    assert_eq!(finished.status, InvocationStatus::Completed);
    assert_eq!(finished.artifacts_created, ["src/lib.rs"]);
    assert!(finished.duration_ms.is_some());
    let state = o.state().unwrap();
    assert!(state.active.is_empty());
    assert_eq!(state.history, vec![finished]);

    let again = o.complete_invocation(&inv.id, report.clone()).unwrap_err();
    assert!(
        matches!(again, AgentError::AlreadyFinished { .. }),
        "{again}"
    );
    let unknown = o.complete_invocation("inv-nope", report).unwrap_err();
    assert!(
        matches!(unknown, AgentError::UnknownInvocation { .. }),
        "{unknown}"
    );
}

#[test]
fn the_history_keeps_the_last_fifty_invocations() {
    let (_dir, o) = setup();
    let ids: Vec<String> = (0..55)
        .map(|i| {
            let inv = invoke(&o, "qa", &format!("check {i}"));
            o.complete_invocation(&inv.id, done("ok")).unwrap();
            inv.id
        })
        .collect();
    let history = o.state().unwrap().history;
    assert_eq!(history.len(), state::HISTORY_LIMIT);
    assert_eq!(history[0].id, ids[5]);
    assert_eq!(history.last().unwrap().id, ids[54]);
}

fn handoff(from: &str, to: &str, summary: &str, parallel_id: Option<String>) -> HandoffRequest {
    HandoffRequest {
        from_agent: from.into(),
        to_agent: to.into(),
        context: HandoffContext {
            summary: summary.into(),
            artifacts: vec![format!("{from}.md")],
            decisions: vec![Decision {
                decision: format!("{from} decided"),
                rationale: "because".into(),
            }],
            open_questions: vec![format!("{from} wonders")],
        },
        parallel_id,
    }
}

#[test]
fn handoffs_build_the_chain_and_returns_to_the_orchestrator_rewrite_handoff_md() {
    let (_dir, o) = setup();
    let file = state::handoff_file(o.layout());
    let first = o
        .track_handoff(handoff("analyst", "planner", "Analysed", None))
        .unwrap();
    assert!(!first.consolidated);
    assert!(!file.exists());
    let back = o
        .track_handoff(handoff(
            "planner",
            "orchestrator",
            "Planned in 3 steps",
            None,
        ))
        .unwrap();
    assert!(back.consolidated);
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.contains("## Latest: planner → orchestrator\n\nPlanned in 3 steps"),
        "{text}"
    );
    assert!(
        text.contains("**analyst decided** (analyst): because"),
        "{text}"
    );
    assert!(text.contains("- planner wonders (planner)"), "{text}");
    assert!(text.contains("- analyst.md"), "{text}");
    assert!(text.contains("| 2 | planner | orchestrator |"), "{text}");
    assert_eq!(o.state().unwrap().handoffs.len(), 2);

    // Inside a parallel run, a return to the orchestrator does not consolidate.
    let run = start(&o, Strategy::Merge);
    let inside = o
        .track_handoff(handoff(
            "security",
            "orchestrator",
            "Parallel part",
            Some(run),
        ))
        .unwrap();
    assert!(!inside.consolidated);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);

    for bad in [
        handoff("ghost", "qa", "x", None),
        handoff("qa", "orchestrator", " ", None),
        handoff("qa", "orchestrator", "x", Some("par-none".into())),
    ] {
        assert!(o.track_handoff(bad).is_err());
    }
    assert_eq!(o.state().unwrap().handoffs.len(), 3);
}

fn start(o: &Orchestrator, strategy: Strategy) -> String {
    start_with(o, strategy, &["architect", "security"])
}

fn start_with(o: &Orchestrator, strategy: Strategy, agents: &[&str]) -> String {
    o.start_parallel_execution(ParallelRequest {
        agents: agents
            .iter()
            .map(|a| ParallelAgent {
                agent: a.to_string(),
                prompt: format!("Review as {a}"),
                context: InvokeContext::default(),
            })
            .collect(),
        aggregation_strategy: strategy,
        conflict_handler: None,
    })
    .unwrap()
    .parallel_id
}

/// Completes every pending member of `run` with the output `outputs[agent]`.
fn answer(o: &Orchestrator, run: &str, outputs: &[(&str, &str)]) {
    let state = o.state().unwrap();
    let members = &state
        .parallel_runs
        .iter()
        .find(|p| p.id == run)
        .unwrap()
        .members;
    for (agent, output) in outputs {
        let member = members.iter().find(|m| m.agent == *agent).unwrap();
        o.complete_invocation(&member.invocation_id, done(output))
            .unwrap();
    }
}

#[test]
fn a_run_with_pending_agents_is_partial_and_lists_them() {
    let (_dir, o) = setup();
    let run = start(&o, Strategy::Merge);
    answer(&o, &run, &[("architect", "Fine.\nRecommendation: approve")]);
    let agg = o.aggregate_parallel_results(&run).unwrap();
    assert_eq!(agg.status, ParallelStatus::Partial);
    assert_eq!(agg.pending, ["security"]);
    assert!(agg.aggregated_output.is_none());
}

#[test]
fn merge_writes_a_section_per_agent_and_flags_differing_recommendations() {
    let (_dir, o) = setup();
    let agreed = start(&o, Strategy::Merge);
    answer(
        &o,
        &agreed,
        &[
            ("architect", "Layers ok.\nRecommendation: approve"),
            ("security", "No issues.\nRecommendation: Approve."),
        ],
    );
    let agg = o.aggregate_parallel_results(&agreed).unwrap();
    assert_eq!(agg.status, ParallelStatus::Complete);
    let text = agg.aggregated_output.unwrap();
    assert!(
        text.contains("### From: architect\nLayers ok.")
            && text.contains("### From: security\nNo issues."),
        "{text}"
    );

    let split = start(&o, Strategy::Merge);
    answer(
        &o,
        &split,
        &[
            ("architect", "Recommendation: approve"),
            ("security", "Recommendation: revise"),
        ],
    );
    let agg = o.aggregate_parallel_results(&split).unwrap();
    assert_eq!(agg.status, ParallelStatus::Conflict);
    assert_eq!(agg.conflicts[0].recommendations["security"], "revise");
    assert!(agg.conflicts[0].issue.contains("approve vs revise"));
    let log = o.state().unwrap().conflicts;
    assert_eq!(log.len(), 1);
    assert_eq!(log[0].parallel_id, split);
}

#[test]
fn vote_takes_the_majority_with_counts_and_a_tie_is_a_conflict() {
    let (_dir, o) = setup();
    let run = start_with(&o, Strategy::Vote, &["architect", "security", "critic"]);
    answer(
        &o,
        &run,
        &[
            ("architect", "Recommendation: ship"),
            ("security", "Recommendation: hold"),
            ("critic", "**Recommendation:** Ship"),
        ],
    );
    let agg = o.aggregate_parallel_results(&run).unwrap();
    assert_eq!(agg.status, ParallelStatus::Complete);
    let tally = agg.tally.unwrap();
    assert_eq!(tally.counts["ship"], 2);
    assert_eq!(tally.counts["hold"], 1);
    assert_eq!(tally.winner.as_deref(), Some("ship"));
    assert_eq!(
        agg.aggregated_output.as_deref(),
        Some("Recommendation: ship (2/3 votes)")
    );
    assert!(
        o.state().unwrap().conflicts[0]
            .resolution
            .contains("resolved by vote: ship")
    );

    let tie = start(&o, Strategy::Vote);
    answer(
        &o,
        &tie,
        &[
            ("architect", "Recommendation: ship"),
            ("security", "Recommendation: hold"),
        ],
    );
    let agg = o.aggregate_parallel_results(&tie).unwrap();
    assert_eq!(agg.status, ParallelStatus::Conflict);
    assert!(agg.tally.unwrap().winner.is_none());
}

#[test]
fn escalate_records_one_invocation_of_the_conflict_handler_with_the_results() {
    let (_dir, o) = setup();
    let run = start(&o, Strategy::Escalate);
    answer(
        &o,
        &run,
        &[
            ("architect", "Split the service.\nRecommendation: split"),
            ("security", "Keep one boundary.\nRecommendation: keep"),
        ],
    );
    let agg = o.aggregate_parallel_results(&run).unwrap();
    assert_eq!(agg.status, ParallelStatus::Conflict);
    let escalation = agg.escalation.unwrap();
    assert_eq!(escalation.agent, "high-level-advisor");
    assert_eq!(escalation.model, "opus");
    assert!(
        escalation
            .prompt
            .contains("### architect (completed)\nRecommendation: split\nSplit the service."),
        "{}",
        escalation.prompt
    );
    assert!(
        escalation
            .prompt
            .contains("### security (completed)\nRecommendation: keep")
    );

    // Aggregating again reuses the escalation instead of asking twice.
    let again = o.aggregate_parallel_results(&run).unwrap();
    assert_eq!(again.escalation.unwrap().id, escalation.id);
    let state = o.state().unwrap();
    assert_eq!(
        state
            .active
            .iter()
            .filter(|i| i.agent == "high-level-advisor")
            .count(),
        1
    );
    let stored = state.parallel_runs.iter().find(|p| p.id == run).unwrap();
    assert_eq!(stored.status, ParallelStatus::Conflict);
    assert_eq!(stored.escalation.as_deref(), Some(escalation.id.as_str()));
    assert_eq!(state.conflicts.len(), 1);
}

#[test]
fn parallel_runs_refuse_bad_requests() {
    let (_dir, o) = setup();
    let one = ParallelRequest {
        agents: vec![ParallelAgent {
            agent: "qa".into(),
            prompt: "x".into(),
            context: Default::default(),
        }],
        aggregation_strategy: Strategy::Merge,
        conflict_handler: None,
    };
    assert!(
        o.start_parallel_execution(one)
            .unwrap_err()
            .to_string()
            .contains("at least two")
    );
    let mut bad_handler = ParallelRequest {
        agents: ["qa", "critic"]
            .map(|a| ParallelAgent {
                agent: a.into(),
                prompt: "x".into(),
                context: Default::default(),
            })
            .to_vec(),
        aggregation_strategy: Strategy::Escalate,
        conflict_handler: Some("ghost".into()),
    };
    assert!(o.start_parallel_execution(bad_handler.clone()).is_err());
    bad_handler.conflict_handler = None;
    bad_handler.agents[1].agent = "ghost".into();
    assert!(o.start_parallel_execution(bad_handler).is_err());
    assert!(
        o.state().unwrap().parallel_runs.is_empty(),
        "refusals record nothing"
    );
    assert!(matches!(
        o.aggregate_parallel_results("par-none"),
        Err(AgentError::UnknownParallel { .. })
    ));
}

#[test]
fn routing_reads_an_edited_workflows_file() {
    let (_dir, o) = setup();
    assert_eq!(
        o.get_routing_recommendation("fix the bug")
            .unwrap()
            .recommended_workflow,
        "quick-fix"
    );
    assert!(o.write_workflows(false).unwrap());
    assert!(
        !o.write_workflows(false).unwrap(),
        "an existing file is kept"
    );
    let path = o.workflows_file();
    let mut workflows: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    workflows["rules"][0]["pattern"] = "^docs:".into();
    workflows["rules"][0]["workflow"] = "docs".into();
    workflows["rules"][0]["agents"] = serde_json::json!(["explainer"]);
    std::fs::write(&path, workflows.to_string()).unwrap();
    let r = o
        .get_routing_recommendation("docs: explain the store")
        .unwrap();
    assert_eq!(r.recommended_workflow, "docs");
    assert_eq!(r.recommended_agents, ["explainer"]);
    assert!(r.reasoning.contains("\"docs\""));
}

#[test]
fn the_graph_reads_the_chain_left_to_right_with_runs_as_fork_and_join() {
    use crate::graph::{EdgeKind, HandoffGraph, NodeKind};
    let (_dir, o) = setup();
    invoke(&o, "analyst", "Study the login flow");
    o.track_handoff(handoff("analyst", "architect", "Analysed", None))
        .unwrap();
    invoke(&o, "architect", "Design it");
    o.track_handoff(handoff("architect", "orchestrator", "Designed", None))
        .unwrap();
    let run = start(&o, Strategy::Escalate);
    o.track_handoff(handoff(
        "architect",
        "orchestrator",
        "Split it",
        Some(run.clone()),
    ))
    .unwrap();
    answer(
        &o,
        &run,
        &[
            ("architect", "Recommendation: split"),
            ("security", "Recommendation: keep"),
        ],
    );
    o.aggregate_parallel_results(&run).unwrap();
    o.track_handoff(handoff("orchestrator", "implementer", "Build it", None))
        .unwrap();

    let graph = HandoffGraph::build(&o.state().unwrap());
    let label = |id: &str| {
        graph
            .nodes
            .iter()
            .find(|n| n.id == id)
            .unwrap()
            .label
            .clone()
    };
    let edges: Vec<(String, String, EdgeKind)> = graph
        .edges
        .iter()
        .map(|e| (label(&e.source), label(&e.target), e.kind))
        .collect();
    let e = |a: &str, b: &str, k| (a.to_string(), b.to_string(), k);
    assert_eq!(
        edges,
        vec![
            e("analyst", "architect", EdgeKind::Handoff),
            e("architect", "orchestrator", EdgeKind::Handoff),
            e("orchestrator", "parallel (escalate)", EdgeKind::Fork),
            e("parallel (escalate)", "architect", EdgeKind::Fork),
            e("architect", "escalate conflict", EdgeKind::Join),
            e("parallel (escalate)", "security", EdgeKind::Fork),
            e("security", "escalate conflict", EdgeKind::Join),
            e(
                "escalate conflict",
                "high-level-advisor",
                EdgeKind::Escalation
            ),
            e("escalate conflict", "implementer", EdgeKind::Handoff),
        ]
    );
    // Invocations sit on their steps; the architect appears once per turn.
    let steps: Vec<_> = graph
        .nodes
        .iter()
        .filter(|n| n.kind == NodeKind::Step)
        .map(|n| (n.label.as_str(), n.invocation.as_ref().map(|i| i.status)))
        .collect();
    assert_eq!(
        steps,
        vec![
            ("analyst", Some(InvocationStatus::Started)),
            ("architect", Some(InvocationStatus::Started)),
            ("orchestrator", None),
            ("architect", Some(InvocationStatus::Completed)),
            ("security", Some(InvocationStatus::Completed)),
            ("high-level-advisor", Some(InvocationStatus::Started)),
            ("implementer", None),
        ]
    );
    // The conflict is flagged on the join and the edges into and out of it.
    let join = graph
        .nodes
        .iter()
        .find(|n| n.kind == NodeKind::Join)
        .unwrap();
    assert!(join.conflict);
    assert_eq!(join.parallel_status, Some(ParallelStatus::Conflict));
    assert_eq!(graph.edges.iter().filter(|e| e.conflict).count(), 3);
    // A member's handoff inside the run labels its edge into the join.
    let member_edge = &graph.edges[4];
    assert_eq!(member_edge.handoff.as_ref().unwrap().summary, "Split it");
    assert_eq!(
        graph.edges[0].handoff.as_ref().unwrap().decisions[0].decision,
        "analyst decided"
    );

    let dot = graph.render_dot();
    assert!(
        dot.starts_with("digraph handoffs {\n  rankdir=LR;"),
        "{dot}"
    );
    assert!(
        dot.contains("[label=\"escalate conflict\", shape=diamond, color=red]"),
        "{dot}"
    );
    let text = graph.render_text();
    assert!(
        text.contains("analyst [n1] → architect [n2] (handoff): Analysed"),
        "{text}"
    );
    assert!(text.contains("(join, CONFLICT)"), "{text}");
}

#[test]
fn the_graph_of_an_empty_history_is_empty_and_hostile_labels_are_quoted() {
    use crate::graph::HandoffGraph;
    let (_dir, o) = setup();
    let graph = HandoffGraph::build(&o.state().unwrap());
    assert!(graph.nodes.is_empty() && graph.edges.is_empty());
    assert_eq!(graph.render_text(), "No invocations or handoffs yet.\n");
    o.track_handoff(handoff(
        "analyst",
        "qa",
        "say \"hi\" \\ -> x\nsecond line",
        None,
    ))
    .unwrap();
    let dot = HandoffGraph::build(&o.state().unwrap()).render_dot();
    assert!(
        dot.contains("  n1 -> n2 [label=\"say \\\"hi\\\" \\\\ -> x\"];\n"),
        "{dot}"
    );
}
