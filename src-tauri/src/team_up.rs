//! Starting the team from the desktop: the Team view's "Start" runs `baton team up --detach`,
//! the same supervisor a terminal starts, so the desktop holds no agents of its own (closing
//! the window does not stop them) and `baton team status` and `stop` reach them. The `baton`
//! it runs is the one beside this program (the package installs both to /usr/bin; a build puts
//! both in its target folder), else the one on `PATH`.

use std::path::PathBuf;
use std::process::Command;

use baton_core::ErrorKind;
use baton_team::SupervisorInfo;
use serde::Deserialize;
use tauri::State;

use crate::commands::{CommandError, off_main_thread, project};
use crate::session::Session;

/// What the Team view asks for.
#[derive(Debug, Deserialize, ts_rs::TS)]
pub struct TeamUp {
    /// The agent profile: claude, codex, gemini, exec or one of the project's.
    pub profile: String,
    #[ts(type = "number")]
    pub workers: u32,
    /// The command each task runs, for the exec profile.
    pub exec: Option<String>,
    /// Stop the team when its agents together have cost this much (US dollars).
    pub budget_usd: Option<f64>,
    /// Keep waiting for new tasks when the queue is drained.
    pub stay: bool,
}

/// The `baton` program to run.
fn baton_program() -> PathBuf {
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.join("baton")));
    match beside {
        Some(path) if path.is_file() => path,
        _ => PathBuf::from("baton"),
    }
}

/// The arguments of `baton team up` for `request`.
fn arguments(request: &TeamUp) -> Vec<String> {
    let mut args = vec![
        "--json".to_string(),
        "team".into(),
        "up".into(),
        "--detach".into(),
        "--workers".into(),
        request.workers.to_string(),
        "--agent".into(),
        request.profile.clone(),
    ];
    if let Some(exec) = request.exec.as_ref().filter(|e| !e.trim().is_empty()) {
        args.extend(["--exec".into(), exec.clone()]);
    }
    if let Some(budget) = request.budget_usd {
        args.extend(["--budget-usd".into(), budget.to_string()]);
    }
    if request.stay {
        args.push("--stay".into());
    }
    args
}

/// Starts (or resizes) this machine's team for the open project; its supervisor as it says.
#[tauri::command]
pub async fn team_up(
    session: State<'_, Session>,
    request: TeamUp,
) -> Result<SupervisorInfo, CommandError> {
    let project = project(&session)?;
    off_main_thread(move || {
        let dir = project.local().project_dir().to_path_buf();
        let out = Command::new(baton_program())
            .args(arguments(&request))
            .current_dir(&dir)
            .env("BATON_DIR", &dir)
            .output()
            .map_err(|e| CommandError {
                kind: ErrorKind::Spawn,
                message: format!("cannot run baton to start the team: {e}"),
            })?;
        if !out.status.success() {
            let said = String::from_utf8_lossy(&out.stderr);
            let message = said.trim().trim_start_matches("baton: ").to_string();
            return Err(CommandError {
                kind: ErrorKind::Spawn,
                message: if message.is_empty() {
                    format!("baton team up failed ({})", out.status)
                } else {
                    message
                },
            });
        }
        serde_json::from_slice(&out.stdout).map_err(|e| CommandError {
            kind: ErrorKind::Internal,
            message: format!("baton team up answered what the desktop cannot read: {e}"),
        })
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_becomes_team_up_arguments() {
        let request = TeamUp {
            profile: "exec".into(),
            workers: 2,
            exec: Some("make".into()),
            budget_usd: Some(1.5),
            stay: true,
        };
        let args = arguments(&request).join(" ");
        assert_eq!(
            args,
            "--json team up --detach --workers 2 --agent exec --exec make --budget-usd 1.5 --stay"
        );
    }
}
