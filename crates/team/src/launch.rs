//! Exactly what each profile runs for a task: the command line (its adapter's,
//! [`crate::agent_cli`]), where, with which environment. Everything else a worker does is the
//! same for every agent CLI.

use std::path::{Path, PathBuf};

use crate::exec::TaskEnv;
use baton_core::Task;
use baton_git::Worktree;

use crate::agent_cli::{AgentRun, AgentSession};
use crate::process::Launch;
use crate::profile::Profile;

/// What every launch of a worker's agent shares.
#[derive(Debug, Clone)]
pub struct Setting {
    /// The `baton` program the agents reach Baton through (the MCP server, the CLI).
    pub baton: PathBuf,
    /// The project folder (`BATON_DIR`).
    pub project_dir: PathBuf,
    /// How this supervisor reached the project's store (`BATON_STORE`, `BATON_PROJECT`, …),
    /// passed on so agents reach the same one.
    pub store_env: Vec<(String, String)>,
}

impl Setting {
    /// The setting of a team in the project at `local`, reached as `store_env` says: agents
    /// reach Baton through [`baton_program`].
    pub fn for_project(local: &baton_core::Layout, store_env: &[(String, String)]) -> Setting {
        Setting {
            baton: baton_program(),
            project_dir: local.project_dir().to_path_buf(),
            store_env: store_env.to_vec(),
        }
    }
}

/// The `baton` program a supervisor runs as, and its agents reach Baton through: this one when
/// this process is `baton`; else the one beside this program (the package installs the desktop
/// app and the CLI side by side, and a build puts them in one target folder, its tests one
/// below); else the one on `PATH`.
pub fn baton_program() -> PathBuf {
    let Ok(exe) = std::env::current_exe() else {
        return PathBuf::from("baton");
    };
    if exe.file_name().is_some_and(|n| n == "baton") {
        return exe;
    }
    exe.ancestors()
        .skip(1)
        .take(2)
        .map(|dir| dir.join("baton"))
        .find(|path| path.is_file())
        .unwrap_or_else(|| PathBuf::from("baton"))
}

/// One attempt's launch.
pub struct Attempting<'a> {
    pub agent: &'a str,
    pub task: &'a Task,
    /// The attempt's number at the task.
    pub attempt: u32,
    pub worktree: Option<&'a Worktree>,
    pub prompt: &'a str,
    pub session: &'a AgentSession,
    /// For `exec`: where `BATON_RESULT_PATH` points.
    pub result_path: &'a Path,
    /// What is left of the task's cost cap, for an agent that can stop itself at it.
    pub budget_left_usd: Option<f64>,
    /// It runs in a sandbox: it reaches Baton through its door ([`crate::door`]), not the
    /// store the supervisor reached.
    pub sandboxed: bool,
}

/// What an attempt runs: its adapter's command line in the task's worktree (or the project),
/// with its environment, the task on stdin for a command that reads it, and the marks that
/// find its processes.
pub fn launch(profile: &Profile, setting: &Setting, attempt: &Attempting<'_>) -> Launch {
    let workdir = attempt
        .worktree
        .map_or(setting.project_dir.clone(), |w| w.workdir.clone());
    // The attempt's marks first: the project, the agent, the attempt.
    let marks = attempt_marks(
        &setting.project_dir,
        attempt.agent,
        &attempt.task.id,
        attempt.attempt,
    );
    let mut env = attempt_env(profile, setting, attempt, &marks);
    let invocation = profile.kind.invocation(&AgentRun {
        command: &profile.command,
        args: &profile.args,
        model: profile.model.as_deref(),
        allowed_tools: &profile.allowed_tools,
        permission_mode: profile.permission_mode.as_deref(),
        approvals: profile.approvals,
        max_turns: profile.max_turns,
        budget_left_usd: attempt.budget_left_usd,
        prompt: attempt.prompt,
        session: attempt.session,
        baton: &setting.baton,
        mcp_args: &mcp_args(profile),
        workdir: &workdir,
        env: &env,
    });
    env.extend(invocation.env);
    let mut stdin = None;
    if invocation.task_on_stdin {
        let task_env = TaskEnv {
            agent: attempt.agent,
            task: attempt.task,
            project_dir: &setting.project_dir,
            result_path: attempt.result_path,
            worktree: attempt.worktree,
        };
        env.extend(
            task_env
                .variables()
                .into_iter()
                .map(|(k, v)| (k.to_string(), v)),
        );
        stdin = Some(task_env.stdin_json());
    }
    env.extend(profile.env.iter().map(|(k, v)| (k.clone(), v.clone())));
    Launch {
        program: PathBuf::from(invocation.program),
        args: invocation.args,
        workdir,
        env,
        stdin,
        // An agent runs its tools in process groups of their own (Claude Code does), which
        // only the marks find when it ends; a command's processes are its process group (it
        // reports by its exit), and a search of every process after each task is a cost a
        // queue of short commands feels.
        marks: match profile.kind.reports_by_exit() {
            true => Vec::new(),
            false => marks,
        },
        sandbox: None,
        cgroup: None,
    }
}

/// The attempt's environment before its adapter's: its marks and task, how it reaches Baton
/// (its door when sandboxed, else the store the supervisor reached), and `baton` first on PATH,
/// so an agent's shell and hooks run the same Baton.
fn attempt_env(
    profile: &Profile,
    setting: &Setting,
    attempt: &Attempting<'_>,
    marks: &[String],
) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = marks
        .iter()
        .filter_map(|m| m.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    env.push(("BATON_TASK_ID".into(), attempt.task.id.clone()));
    match attempt.sandboxed {
        true => env.push((
            baton_door::DOOR_ENV.into(),
            baton_door::inside_address(profile.sandbox.network),
        )),
        false => env.extend(setting.store_env.iter().cloned()),
    }
    if let Some(dir) = setting.baton.parent() {
        let path = std::env::var_os("PATH").unwrap_or_default();
        let joined = std::env::join_paths(
            std::iter::once(dir.to_path_buf()).chain(std::env::split_paths(&path)),
        );
        if let Ok(joined) = joined {
            env.push(("PATH".into(), joined.to_string_lossy().into_owned()));
        }
    }
    env
}

/// The variables every process of one attempt carries (`KEY=VALUE`): the project, the agent
/// and the attempt. Together they find the attempt's processes, and no other's.
pub fn attempt_marks(project_dir: &Path, agent: &str, task: &str, attempt: u32) -> Vec<String> {
    vec![
        format!("BATON_DIR={}", project_dir.display()),
        format!("BATON_AGENT={agent}"),
        format!("BATON_ATTEMPT={task}/{attempt}"),
    ]
}

/// The arguments of the agent's Baton MCP server: with a browser when the profile asks.
fn mcp_args(profile: &Profile) -> Vec<&'static str> {
    let mut args = vec!["mcp", "--quiet"];
    if profile.browser {
        args.push("--proxy");
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A profile with a browser gets `baton mcp --proxy` as its Baton MCP server, in Claude
    /// Code's configuration and in Codex's alike; without, the plain server.
    #[test]
    fn a_browser_profile_s_baton_server_is_the_proxy() {
        let mut profile = crate::profile::load_profiles(&baton_core::Layout::at("/nonexistent"))
            .unwrap()["claude"]
            .clone();
        assert_eq!(mcp_args(&profile), ["mcp", "--quiet"]);
        profile.browser = true;
        assert_eq!(mcp_args(&profile), ["mcp", "--quiet", "--proxy"]);
    }
}
