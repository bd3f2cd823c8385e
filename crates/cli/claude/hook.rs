//! `baton claude-hook EVENT`: what Claude Code runs at a worker's session start, around its
//! tool calls, and when it wants to stop. The worker is `BATON_AGENT`; without it (a session
//! that is not a Baton worker) every hook does nothing. A hook never fails the agent: it exits
//! 0 whatever happens, and writes what went wrong to `.coordination/hooks.log`.

use std::io::Read;
use std::path::Path;

use baton_api::tasks::Heartbeat;
use baton_api::{Choice, Error, OpenProject, Operation};
use baton_core::names::validate_agent_id;
use baton_core::{ForeignFile, Timestamp};
use baton_fs::append_line;
use baton_fs::proc_stat;
use baton_live::WatchMode;
use baton_live::keepalive::keeper_running;
use baton_team::claude::hooks;
use serde_json::Value;

use super::HookEvent;
use crate::context::as_user;

/// Runs the hook for `event`; always exit code 0 (what to tell Claude Code is on stdout).
pub fn run(event: HookEvent, choice: &Choice, cwd: &Path, lease: std::time::Duration) -> u8 {
    let Some(agent) = std::env::var("BATON_AGENT")
        .ok()
        .filter(|a| validate_agent_id(a).is_ok())
    else {
        return 0;
    };
    // A team's judge holds no task and no lease, and is sent no messages.
    if crate::context::door_reads_only() {
        return 0;
    }
    let mut input = String::new();
    let _ = std::io::stdin().read_to_string(&mut input);
    let input: Value = serde_json::from_str(&input).unwrap_or(Value::Null);
    // Claude Code says where the project is; a worker may have changed folder since.
    let dir = std::env::var_os("CLAUDE_PROJECT_DIR").map(std::path::PathBuf::from);
    let from = dir.as_deref().unwrap_or(cwd);
    let Ok(project) = OpenProject::open(choice, from, lease) else {
        return 0; // not a Baton project: nothing to do
    };
    if let Err(e) = answer(event, &project, &agent, &input) {
        let line = format!("[{}] {agent} {event:?}: {e}", Timestamp::now());
        let _ = append_line(&project.local().root().join("hooks.log"), &line);
    }
    0
}

fn answer(
    event: HookEvent,
    project: &OpenProject,
    agent: &str,
    input: &Value,
) -> Result<(), Error> {
    let (mode, keep) = (WatchMode::default(), ForeignFile::Keep);
    match event {
        HookEvent::ToolUse => {
            keep_leases(project, agent);
            as_user(project, mode, keep, |cx| {
                Heartbeat {
                    agent: agent.to_string(),
                }
                .run(cx)
            })?;
            if input["hook_event_name"] == "PostToolUse" {
                deliver_messages(project, agent)?;
            }
        }
        HookEvent::Messages => deliver_messages(project, agent)?,
        HookEvent::SessionStart => {
            keep_leases(project, agent);
            println!("{}", hooks::at_session_start(&*project.tasks, agent)?);
        }
        HookEvent::Stop => {
            let going_on = input["stop_hook_active"] == true;
            if let Some(answer) = hooks::at_stop(&*project.tasks, agent, going_on)? {
                println!("{answer}");
            }
        }
    }
    Ok(())
}

/// Prints `agent`'s unread messages for Claude Code to put into its context.
fn deliver_messages(project: &OpenProject, agent: &str) -> Result<(), Error> {
    if let Some(answer) = hooks::deliver_messages(&*project.documents, agent)? {
        println!("{answer}");
    }
    Ok(())
}

/// Makes sure a keeper renews `agent`'s leases while this Claude Code session lives: starts
/// `baton worker keepalive` (its own process group, so it outlives the hook) unless one runs.
fn keep_leases(project: &OpenProject, agent: &str) {
    let layout = project.local();
    if keeper_running(layout, agent).unwrap_or(true) {
        return;
    }
    let Some(session) = session_pid() else {
        return;
    };
    let Ok(baton) = std::env::current_exe() else {
        return;
    };
    use std::os::unix::process::CommandExt;
    let _ = std::process::Command::new(baton)
        .arg("--dir")
        .arg(layout.project_dir())
        .args([
            "worker",
            "keepalive",
            agent,
            "--while-pid",
            &session.to_string(),
        ])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .spawn();
}

/// The Claude Code process this hook runs for: the nearest ancestor that is not a shell.
fn session_pid() -> Option<u32> {
    let mut pid = std::os::unix::process::parent_id();
    for _ in 0..8 {
        let stat = proc_stat(pid)?;
        if !matches!(stat.name.as_str(), "sh" | "bash" | "dash" | "zsh" | "baton") {
            return Some(pid);
        }
        pid = stat.parent;
    }
    None
}
