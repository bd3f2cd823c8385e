//! `baton setup claude`: runs `baton-team`'s Claude Code setup and prints what changed.

use baton_api::Error;
use baton_team::claude::setup::{remove, setup, worker_command};

/// `baton setup claude`: runs it and prints what changed.
pub fn command(
    project: &baton_api::OpenProject,
    args: super::SetupClaude,
    json: bool,
) -> Result<u8, Error> {
    use std::fmt::Write as _;

    if let Some(agent) = &args.worker {
        baton_core::names::validate_agent_id(agent)?;
        let command = worker_command(agent);
        crate::output::emit(
            json,
            &serde_json::json!({"agent": agent, "command": command}),
            || {
                format!(
                    "Start worker {agent} in this project with:\n  {command}\n(BATON_AGENT names the \
                 worker for Baton's hooks; the prompt tells it the commands.)"
                )
            },
        );
        return Ok(0);
    }
    let layout = project.local();
    let changes = if args.remove {
        remove(layout, args.dry_run)?
    } else {
        setup(layout, args.approve, args.dry_run)?
    };
    crate::output::emit(
        json,
        &serde_json::json!({"dry_run": args.dry_run, "files": changes}),
        || {
            let mut out = String::new();
            for change in &changes {
                let verb = match (args.dry_run, change.action) {
                    (_, "unchanged") => "unchanged".to_string(),
                    (true, action) => format!("would be {action}"),
                    (false, action) => action.to_string(),
                };
                let _ = writeln!(out, "{}: {verb}", change.file);
                for line in &change.changes {
                    let _ = writeln!(out, "  - {line}");
                }
                if args.dry_run
                    && let Some(text) = &change.text
                {
                    for line in text.lines() {
                        let _ = writeln!(out, "    | {line}");
                    }
                }
            }
            if !args.remove && !args.dry_run {
                if !layout.project_dir().join(".claude/agents").exists() {
                    out.push_str(
                        "Subagents: `baton agents init --to .claude/agents` writes Baton's agent \
                     catalog where Claude Code finds it.\n",
                    );
                }
                out.push_str(
                    "Start a worker: `baton setup claude --worker NAME` prints the command.",
                );
            }
            out.trim_end().to_string()
        },
    );
    Ok(0)
}
