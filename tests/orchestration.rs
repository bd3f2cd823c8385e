//! Orchestration end to end through the real `baton` binary: a whole standard workflow
//! (analyst → planner → implementer → qa) with a parallel review (architect + security) whose
//! conflict escalates; registry overrides and bad definitions; routing; and two processes
//! recording invocations and handoffs at once without losing any.

use baton_test_support as support;

use serde_json::Value;
use support::Project;

/// The orchestration record, from the folder's file or the database's row (exported).
fn state(p: &Project) -> Value {
    serde_json::from_slice(&std::fs::read(p.files().join("orchestration/state.json")).unwrap())
        .unwrap()
}

support::on_both_stores!(
    a_standard_workflow_with_an_escalated_parallel_review_leaves_a_full_record,
    two_processes_recording_at_once_lose_nothing,
);

/// Starts an invocation and completes it with `output`; returns the invocation id.
fn run_agent(
    p: &Project,
    agent: &str,
    prompt: &str,
    prior: Option<(&str, &str)>,
    output: &str,
) -> String {
    let mut args = vec!["invoke", "start", agent, prompt];
    if let Some((prior_agent, prior_output)) = prior {
        args.extend(["--prior-agent", prior_agent, "--prior-output", prior_output]);
    }
    let started = p.json(&args);
    let id = started["id"].as_str().unwrap().to_string();
    if let Some((_, prior_output)) = prior {
        let prompt_text = started["prompt"].as_str().unwrap();
        assert!(
            prompt_text.starts_with(&format!(
                "## Prior Agent Output\n{prior_output}\n\n## Current Task\n"
            )),
            "{prompt_text}"
        );
    }
    p.ok(&[
        "invoke",
        "complete",
        &id,
        "--output",
        output,
        "--artifact",
        &format!("{agent}.md"),
    ]);
    id
}

fn a_standard_workflow_with_an_escalated_parallel_review_leaves_a_full_record(p: Project) {
    let route = p.json(&["route", "Implement rate limiting for the API"]);
    assert_eq!(route["recommended_workflow"], "standard");
    assert_eq!(
        route["recommended_agents"],
        serde_json::json!(["analyst", "planner", "implementer", "qa"])
    );

    // analyst → planner → implementer → qa, each handing off to the next.
    let chain = [
        (
            "analyst",
            "Limits must be per API key.\nRecommendation: token bucket",
        ),
        ("planner", "Three steps: middleware, config, tests."),
        ("implementer", "Middleware written with tests."),
        ("qa", "All 14 tests pass; load test ok."),
    ];
    let mut prior: Option<(&str, &str)> = None;
    for (i, (agent, output)) in chain.iter().enumerate() {
        run_agent(
            &p,
            agent,
            &format!("Step {} of rate limiting", i + 1),
            prior,
            output,
        );
        let next = chain.get(i + 1).map_or("orchestrator", |(a, _)| a);
        let decision = format!("{agent} step done :: evidence in {agent}.md");
        let question = format!("{agent}: anything left?");
        p.ok(&[
            "handoff",
            "track",
            agent,
            next,
            "--summary",
            output,
            "--artifact",
            &format!("{agent}.md"),
            "--decision",
            &decision,
            "--question",
            &question,
        ]);
        prior = Some((agent, output));
    }
    // A database project keeps the record in the database; HANDOFF.md is written where the
    // handoff was recorded, from that record.
    assert_eq!(
        p.coordination().join("orchestration/state.json").exists(),
        !p.on_postgres()
    );
    let handoff_md = std::fs::read_to_string(p.coordination().join("HANDOFF.md")).unwrap();
    assert!(
        handoff_md.contains("## Latest: qa → orchestrator\n\nAll 14 tests pass"),
        "{handoff_md}"
    );
    for agent in ["analyst", "planner", "implementer", "qa"] {
        assert!(
            handoff_md.contains(&format!(
                "**{agent} step done** ({agent}): evidence in {agent}.md"
            )),
            "{handoff_md}"
        );
        assert!(
            handoff_md.contains(&format!("- {agent}.md")),
            "{handoff_md}"
        );
    }

    // A parallel review that disagrees and escalates to the high-level advisor.
    let started = p.json(&[
        "parallel",
        "start",
        "--strategy",
        "escalate",
        "--agent",
        "architect=Review the middleware design",
        "--agent",
        "security=Review the middleware for abuse",
    ]);
    let run = started["parallel_id"].as_str().unwrap().to_string();
    let partial = p.json(&["parallel", "aggregate", &run]);
    assert_eq!(partial["status"], "partial");
    assert_eq!(
        partial["pending"],
        serde_json::json!(["architect", "security"])
    );
    for invocation in started["invocations"].as_array().unwrap() {
        let id = invocation["id"].as_str().unwrap();
        let output = if invocation["agent"] == "architect" {
            "Design is sound.\nRecommendation: ship as is"
        } else {
            "Keys can be rotated to dodge limits.\nRecommendation: add per-IP limits first"
        };
        p.ok(&["invoke", "complete", id, "--output", output]);
    }
    let aggregated = p.json(&["parallel", "aggregate", &run]);
    assert_eq!(aggregated["status"], "conflict");
    assert_eq!(
        aggregated["conflicts"][0]["recommendations"]["security"],
        "add per-ip limits first"
    );
    let escalation = &aggregated["escalation"];
    assert_eq!(escalation["agent"], "high-level-advisor");
    assert_eq!(escalation["model"], "opus");
    assert!(
        escalation["prompt"]
            .as_str()
            .unwrap()
            .contains("Recommendation: ship as is")
    );
    // Inside the run, a handoff to the orchestrator does not touch HANDOFF.md.
    p.ok(&[
        "handoff",
        "track",
        "security",
        "orchestrator",
        "--summary",
        "Per-IP first",
        "--parallel-id",
        &run,
    ]);
    assert_eq!(
        std::fs::read_to_string(p.coordination().join("HANDOFF.md")).unwrap(),
        handoff_md
    );
    // The advisor decides, and hands back to the orchestrator.
    let escalation_id = escalation["id"].as_str().unwrap();
    p.ok(&[
        "invoke",
        "complete",
        escalation_id,
        "--output",
        "Recommendation: add per-IP limits first",
    ]);
    p.ok(&[
        "handoff",
        "track",
        "high-level-advisor",
        "orchestrator",
        "--summary",
        "Add per-IP limits, then ship",
        "--decision",
        "Per-IP limits before release :: key rotation defeats per-key limits",
    ]);

    // The record afterwards.
    let s = state(&p);
    assert!(s["active"].as_array().unwrap().is_empty(), "{s}");
    let history = s["history"].as_array().unwrap();
    let agents: Vec<&str> = history
        .iter()
        .map(|i| i["agent"].as_str().unwrap())
        .collect();
    assert_eq!(
        agents,
        [
            "analyst",
            "planner",
            "implementer",
            "qa",
            "architect",
            "security",
            "high-level-advisor"
        ]
    );
    assert!(history.iter().all(|i| i["status"] == "completed"));
    assert_eq!(history[3]["prior_agent"], "implementer");
    let handoffs = s["handoffs"].as_array().unwrap();
    let links: Vec<String> = handoffs
        .iter()
        .map(|h| {
            format!(
                "{}>{}",
                h["from"].as_str().unwrap(),
                h["to"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        links,
        [
            "analyst>planner",
            "planner>implementer",
            "implementer>qa",
            "qa>orchestrator",
            "security>orchestrator",
            "high-level-advisor>orchestrator"
        ]
    );
    assert_eq!(handoffs[4]["parallel_id"], run.as_str());
    assert_eq!(s["conflicts"].as_array().unwrap().len(), 1);
    assert!(
        s["conflicts"][0]["resolution"]
            .as_str()
            .unwrap()
            .starts_with("escalated to high-level-advisor")
    );
    assert_eq!(s["parallel_runs"][0]["status"], "conflict");
    let final_md = std::fs::read_to_string(p.coordination().join("HANDOFF.md")).unwrap();
    assert!(
        final_md.contains(
            "## Latest: high-level-advisor → orchestrator\n\nAdd per-IP limits, then ship"
        )
    );
    assert!(final_md.contains(
        "**Per-IP limits before release** (high-level-advisor): key rotation defeats per-key limits"
    ));
    assert!(
        final_md.contains("| 5 | security | orchestrator ("),
        "{final_md}"
    );

    let listed = p.ok(&["invoke", "list"]);
    assert!(listed.contains("Recent (7 of the last 50)"), "{listed}");
    let chain_text = p.ok(&["handoff", "chain"]);
    assert!(
        chain_text.contains("6. high-level-advisor → orchestrator"),
        "{chain_text}"
    );

    // The same history as a graph: the chain left to right, the review as fork and join,
    // the conflict flagged, each handoff on its edge.
    let graph = p.json(&["handoff", "graph"]);
    let label = |id: &Value| {
        graph["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["id"] == *id)
            .unwrap()["label"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let edges: Vec<String> = graph["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| format!("{}>{}", label(&e["source"]), label(&e["target"])))
        .collect();
    assert_eq!(
        edges,
        [
            "analyst>planner",
            "planner>implementer",
            "implementer>qa",
            "qa>orchestrator",
            "orchestrator>parallel (escalate)",
            "parallel (escalate)>architect",
            "architect>escalate conflict",
            "parallel (escalate)>security",
            "security>escalate conflict",
            "escalate conflict>high-level-advisor",
            "high-level-advisor>orchestrator"
        ]
    );
    let into_join = &graph["edges"][8];
    assert_eq!(into_join["conflict"], true);
    assert_eq!(into_join["handoff"]["from"], "security");
    assert_eq!(graph["edges"][0]["handoff"]["to"], "planner");
    let dot = p.ok(&["handoff", "graph", "--dot"]);
    assert!(
        dot.contains("rankdir=LR") && dot.contains("color=red"),
        "{dot}"
    );
    let err = p.fails(&["--json", "handoff", "graph", "--dot"], 1);
    assert!(err.contains("pick one"), "{err}");
}

#[test]
fn registry_overrides_and_bad_definitions_through_the_cli() {
    let p = Project::init();
    let written = p.json(&["agents", "init"]);
    assert_eq!(written["agents"].as_array().unwrap().len(), 18);
    assert!(p.path().join(".claude/agents/security.md").exists());
    assert!(
        p.coordination()
            .join("orchestration/workflows.json")
            .exists()
    );
    assert_eq!(
        p.ok(&["agents", "check"]).trim(),
        "All 18 agent definitions are valid."
    );

    // Edit one, add a bad one and a good one.
    let qa = p.path().join(".claude/agents/qa.md");
    let text = std::fs::read_to_string(&qa)
        .unwrap()
        .replace("model: sonnet", "model: haiku");
    std::fs::write(&qa, text).unwrap();
    std::fs::write(
        p.path().join(".claude/agents/zz-bad.md"),
        "---\nname: broken\nmodel: gpt-4\n---\n",
    )
    .unwrap();
    std::fs::create_dir_all(p.path().join("src/claude")).unwrap();
    std::fs::write(
        p.path().join("src/claude/docs-writer.md"),
        "---\nname: docs-writer\ndescription: Writes docs\ndelegates_to: [nobody]\n---\nWrite docs.\n",
    )
    .unwrap();
    let out = p.run(&["agents", "check"]);
    assert_eq!(out.status.code(), Some(4));
    let report = String::from_utf8(out.stdout).unwrap();
    assert!(
        report.contains("zz-bad.md:3: unknown model \"gpt-4\""),
        "{report}"
    );
    assert!(
        report.contains("docs-writer.md:4: docs-writer lists unknown agent \"nobody\""),
        "{report}"
    );
    assert!(report.contains("19 agents loaded"), "{report}");
    assert_eq!(p.json(&["agents", "show", "qa"])["model"], "haiku");
    let invocation = p.json(&["invoke", "start", "docs-writer", "Document the API"]);
    assert_eq!(invocation["model"], "sonnet");
    let err = p.fails(&["invoke", "start", "broken", "x"], 1);
    assert!(err.contains("unknown agent \"broken\""), "{err}");
}

#[test]
fn bad_input_is_refused_with_a_clear_message() {
    let p = Project::init();
    let err = p.fails(&["parallel", "start", "--agent", "qa=x"], 1);
    assert!(err.contains("at least two agents"), "{err}");
    let err = p.fails(
        &["parallel", "start", "--agent", "qa", "--agent", "critic=y"],
        1,
    );
    assert!(err.contains("is not NAME=PROMPT"), "{err}");
    let err = p.fails(
        &[
            "parallel",
            "start",
            "--agent",
            "qa=x",
            "--agent",
            "critic=y",
            "--strategy",
            "dice",
        ],
        2,
    );
    assert!(err.contains("unknown strategy"), "{err}");
    let err = p.fails(
        &[
            "handoff",
            "track",
            "qa",
            "orchestrator",
            "--summary",
            "s",
            "--decision",
            "no rationale",
        ],
        1,
    );
    assert!(err.contains("DECISION :: RATIONALE"), "{err}");
    let err = p.fails(&["invoke", "complete", "inv-missing", "--output", "x"], 1);
    assert!(err.contains("no invocation"), "{err}");
    let out = p.run(&["invoke", "start", "ghost", "x", "--json"]);
    let body: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(body["error"]["kind"], "unknown_agent");
    std::fs::create_dir_all(p.coordination().join("orchestration")).unwrap();
    std::fs::write(
        p.coordination().join("orchestration/state.json"),
        "{\"active\": [",
    )
    .unwrap();
    let err = p.fails(&["invoke", "start", "qa", "x"], 1);
    assert!(err.contains("state.json is not valid JSON"), "{err}");
    assert_eq!(
        std::fs::read_to_string(p.coordination().join("orchestration/state.json")).unwrap(),
        "{\"active\": [",
        "a corrupt file is left alone"
    );
}

fn two_processes_recording_at_once_lose_nothing(p: Project) {
    const EACH: usize = 25;
    let script = |who: &str| {
        format!(
            "for i in $(seq 1 {EACH}); do \
               \"$BATON\" invoke start qa \"{who} check $i\" >/dev/null || exit 1; \
               \"$BATON\" handoff track qa orchestrator --summary \"{who} handoff $i\" >/dev/null || exit 1; \
             done"
        )
    };
    let spawn = |who: &str| {
        p.command_of("sh", &["-c", &script(who)])
            .env("BATON", support::baton_bin())
            .spawn()
            .unwrap()
    };
    let (mut a, mut b) = (spawn("a"), spawn("b"));
    assert!(a.wait().unwrap().success());
    assert!(b.wait().unwrap().success());
    let s = state(&p);
    let tasks: Vec<&str> = s["active"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["task"].as_str().unwrap())
        .collect();
    assert_eq!(tasks.len(), 2 * EACH, "invocations lost");
    let handoffs = s["handoffs"].as_array().unwrap();
    assert_eq!(handoffs.len(), 2 * EACH, "handoffs lost");
    let mut ids: Vec<&str> = s["active"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].as_str().unwrap())
        .collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 2 * EACH, "invocation ids collided");
    for who in ["a", "b"] {
        for i in 1..=EACH {
            assert!(tasks.contains(&format!("{who} check {i}").as_str()));
        }
    }
    let md = std::fs::read_to_string(p.coordination().join("HANDOFF.md")).unwrap();
    assert!(md.contains(&format!("({} handoffs)", 2 * EACH)), "{md}");
}
