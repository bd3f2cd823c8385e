//! Human-readable output of the orchestration commands.

use std::fmt::Write;
use std::path::Path;

use baton_agents::catalog::Written;
use baton_agents::parallel::{Aggregation, MemberStatus, ParallelStart};
use baton_agents::state::{Handoff, OrchestrationState, ParallelRun};
use baton_agents::{AgentDefinition, Diagnostic, Registry};

use crate::render::line;

pub fn agent_table(agents: &[&AgentDefinition], diagnostics: &[Diagnostic]) -> String {
    let mut out = format!("{:<22} {:<7} {:<18} ROLE\n", "AGENT", "MODEL", "DEFINED IN");
    for a in agents {
        let source = match &a.source {
            baton_agents::definition::Source::Builtin => "built-in".to_string(),
            baton_agents::definition::Source::File { path } => path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
        };
        let _ = writeln!(
            out,
            "{:<22} {:<7} {:<18} {}",
            line(&a.name, 22),
            line(&a.model, 7),
            line(&source, 18),
            line(&a.role, 70)
        );
    }
    if !diagnostics.is_empty() {
        let _ = write!(
            out,
            "\n{} problem(s) in definitions; `baton agents check` lists them.\n",
            diagnostics.len()
        );
    }
    out
}

pub fn agent(a: &AgentDefinition) -> String {
    let list = |l: &[String]| {
        if l.is_empty() {
            "-".to_string()
        } else {
            l.join(", ")
        }
    };
    format!(
        "{}  ({} model; {})\nRole:         {}\nDescription:  {}\nTools:        {}\nDelegates to: {}\nCalled by:    {}\nArtifacts in: {}\n\n{}\n",
        a.name,
        a.model,
        a.source,
        line(&a.role, 200),
        line(&a.description, 300),
        if a.tools.is_empty() {
            "all".to_string()
        } else {
            a.tools.join(", ")
        },
        list(&a.delegates_to),
        list(&a.called_by),
        a.artifact_directory.as_deref().unwrap_or("-"),
        crate::render::clean(&a.instructions)
    )
}

pub fn diagnostics(registry: &Registry) -> String {
    if registry.diagnostics.is_empty() {
        return format!("All {} agent definitions are valid.", registry.agents.len());
    }
    let mut out = String::new();
    for d in &registry.diagnostics {
        let _ = writeln!(out, "{}", line(&d.to_string(), 400));
    }
    let _ = write!(out, "{} agents loaded.", registry.agents.len());
    out
}

pub fn init(dir: &Path, written: &[Written], workflows: bool, workflows_file: &Path) -> String {
    let new = written.iter().filter(|w| w.written).count();
    let mut out = format!(
        "Wrote {new} agent file(s) to {} ({} kept; --force overwrites)",
        dir.display(),
        written.len() - new
    );
    out += &if workflows {
        format!("\nWrote routing rules to {}", workflows_file.display())
    } else {
        format!("\nKept routing rules in {}", workflows_file.display())
    };
    out
}

pub fn invocation_started(i: &baton_agents::state::Invocation) -> String {
    format!(
        "Invocation {} started: {} on {}\nComplete it with: baton invoke complete {} --output \"…\"\n\n--- prompt ---\n{}\n",
        i.id,
        i.agent,
        i.model,
        i.id,
        crate::render::clean(&i.prompt)
    )
}

pub fn invocations(state: &OrchestrationState, active_only: bool) -> String {
    let mut out = String::new();
    let row = |out: &mut String, i: &baton_agents::state::Invocation| {
        let status = serde_json::to_value(i.status)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "{:<44} {:<20} {:<9} {}",
            line(&i.id, 44),
            line(&i.agent, 20),
            status,
            line(&i.task, 60)
        );
    };
    let _ = writeln!(out, "Active ({}):", state.active.len());
    for i in &state.active {
        row(&mut out, i);
    }
    if !active_only {
        let _ = writeln!(out, "\nRecent ({} of the last 50):", state.history.len());
        for i in state.history.iter().rev() {
            row(&mut out, i);
        }
    }
    out
}

pub fn chain(chain: &[Handoff]) -> String {
    if chain.is_empty() {
        return "No handoffs yet.".into();
    }
    let mut out = String::new();
    for (n, h) in chain.iter().enumerate() {
        let _ = writeln!(
            out,
            "{:>3}. {} → {}  {}  {}",
            n + 1,
            h.from,
            h.to,
            h.at,
            line(h.summary.lines().next().unwrap_or(""), 80)
        );
    }
    out
}

pub fn parallel_started(p: &ParallelStart) -> String {
    let mut out = format!(
        "Parallel run {} started with {}:\n",
        p.parallel_id,
        p.agents_started.join(", ")
    );
    for i in &p.invocations {
        let _ = writeln!(
            out,
            "  {} ({}): baton invoke complete {} --output \"…\"",
            i.agent, i.model, i.id
        );
    }
    let _ = write!(out, "Then: baton parallel aggregate {}", p.parallel_id);
    out
}

pub fn aggregation(a: &Aggregation) -> String {
    let status = serde_json::to_value(a.status)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default();
    let mut out = format!("Parallel run {}: {status}\n", a.parallel_id);
    for r in &a.results {
        let state = match r.status {
            MemberStatus::Completed => "completed",
            MemberStatus::Failed => "failed",
            MemberStatus::Pending => "pending",
        };
        let _ = writeln!(
            out,
            "  {:<20} {:<9} recommendation: {}",
            r.agent,
            state,
            r.recommendation.as_deref().unwrap_or("-")
        );
    }
    for c in &a.conflicts {
        let _ = writeln!(out, "Conflict: {}", line(&c.issue, 300));
    }
    if let Some(text) = &a.aggregated_output {
        let _ = write!(out, "\n{}\n", crate::render::clean(text));
    }
    out
}

pub fn parallel_runs(runs: &[ParallelRun]) -> String {
    if runs.is_empty() {
        return "No parallel runs yet.".into();
    }
    let mut out = String::new();
    for r in runs {
        let value = |v: serde_json::Value| v.as_str().map(String::from).unwrap_or_default();
        let agents: Vec<&str> = r.members.iter().map(|m| m.agent.as_str()).collect();
        let _ = writeln!(
            out,
            "{}  {:<8} {:<9} {}",
            r.id,
            value(serde_json::to_value(r.strategy).unwrap_or_default()),
            value(serde_json::to_value(r.status).unwrap_or_default()),
            agents.join(", ")
        );
    }
    out
}
