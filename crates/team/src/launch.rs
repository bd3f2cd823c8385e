//! Exactly what each profile runs for a task: the command line, where, with which
//! environment. The agent kinds differ only here and in how their output is read
//! ([`crate::output`]); everything else a worker does is the same for all of them.

use std::path::{Path, PathBuf};

use crate::exec::TaskEnv;
use baton_core::Task;
use baton_git::Worktree;
use serde_json::json;

use crate::process::Launch;
use crate::profile::{AgentKind, Profile};

/// Where the agent's own session is, when it has one Baton can name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Session {
    /// A new session with this id (Claude Code's `--session-id`).
    New(String),
    /// Go on with this earlier session (Claude Code's `--resume`).
    Resume(String),
    /// The agent names its own (or has none).
    Unnamed,
}

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
    pub session: &'a Session,
    /// For `exec`: where `BATON_RESULT_PATH` points.
    pub result_path: &'a Path,
    /// What is left of the task's cost cap, for an agent that can stop itself at it.
    pub budget_left_usd: Option<f64>,
    /// It runs in a sandbox: it reaches Baton through its door ([`crate::door`]), not the
    /// store the supervisor reached.
    pub sandboxed: bool,
}

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
    let mut env: Vec<(String, String)> = marks
        .iter()
        .filter_map(|m| m.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    env.push(("BATON_TASK_ID".into(), attempt.task.id.clone()));
    match attempt.sandboxed {
        true => env.push((
            crate::door::DOOR_ENV.into(),
            crate::door::inside_address(profile.sandbox.network),
        )),
        false => env.extend(setting.store_env.iter().cloned()),
    }
    // `baton` first on PATH, so an agent's shell and hooks run the same Baton.
    if let Some(dir) = setting.baton.parent() {
        let path = std::env::var_os("PATH").unwrap_or_default();
        let joined = std::env::join_paths(
            std::iter::once(dir.to_path_buf()).chain(std::env::split_paths(&path)),
        );
        if let Ok(joined) = joined {
            env.push(("PATH".into(), joined.to_string_lossy().into_owned()));
        }
    }
    let (program, mut args, stdin) = match profile.kind {
        AgentKind::Claude => (
            profile.command.clone(),
            claude_args(profile, setting, attempt),
            None,
        ),
        AgentKind::Codex => (
            profile.command.clone(),
            codex_args(profile, setting, attempt, &workdir, &env),
            None,
        ),
        AgentKind::Gemini => (profile.command.clone(), gemini_args(profile, attempt), None),
        AgentKind::Exec => {
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
            (
                "sh".to_string(),
                vec!["-c".to_string(), profile.command.clone()],
                Some(task_env.stdin_json()),
            )
        }
    };
    if matches!(profile.kind, AgentKind::Claude | AgentKind::Gemini) {
        args.extend(profile.args.iter().cloned());
    }
    env.extend(profile.env.iter().map(|(k, v)| (k.clone(), v.clone())));
    Launch {
        program: PathBuf::from(program),
        args,
        workdir,
        env,
        stdin,
        // An agent runs its tools in process groups of their own (Claude Code does), which
        // only the marks find when it ends; a command's processes are its process group, and
        // a search of every process after each task is a cost a queue of short commands
        // feels.
        marks: match profile.kind {
            AgentKind::Exec => Vec::new(),
            _ => marks,
        },
        sandbox: None,
        cgroup: None,
    }
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

/// The MCP configuration that gives an agent Baton's tools.
fn mcp_servers(profile: &Profile, setting: &Setting) -> serde_json::Value {
    json!({"mcpServers": {"baton": {
        "type": "stdio",
        "command": setting.baton.display().to_string(),
        "args": mcp_args(profile),
    }}})
}

/// Claude Code settings whose PostToolUse hook puts the agent's unread messages into its
/// context.
fn message_hooks(setting: &Setting) -> serde_json::Value {
    let command = format!(
        "'{}' claude-hook messages",
        setting.baton.display().to_string().replace('\'', "'\\''")
    );
    json!({"hooks": {"PostToolUse": [{"matcher": "*", "hooks": [
        {"type": "command", "command": command}
    ]}]}})
}

fn claude_args(profile: &Profile, setting: &Setting, attempt: &Attempting<'_>) -> Vec<String> {
    // The prompt right after -p: the tool list that follows takes several values.
    let mut args = vec![
        "-p".to_string(),
        attempt.prompt.to_string(),
        "--output-format".into(),
        "stream-json".into(),
        "--verbose".into(),
        "--mcp-config".into(),
        mcp_servers(profile, setting).to_string(),
    ];
    match attempt.session {
        Session::New(id) => args.extend(["--session-id".into(), id.clone()]),
        Session::Resume(id) => args.extend(["--resume".into(), id.clone()]),
        Session::Unnamed => {}
    }
    if let Some(model) = &profile.model {
        args.extend(["--model".into(), model.clone()]);
    }
    if let Some(mode) = &profile.permission_mode {
        args.extend(["--permission-mode".into(), mode.clone()]);
    }
    if let Some(turns) = profile.max_turns {
        args.extend(["--max-turns".into(), turns.to_string()]);
    }
    if let Some(left) = attempt.budget_left_usd {
        args.extend(["--max-budget-usd".into(), format!("{left:.4}")]);
    }
    // Messages for the agent reach it after its next tool call (a hook, not polling).
    args.extend(["--settings".into(), message_hooks(setting).to_string()]);
    if profile.approvals {
        args.extend([
            "--permission-prompt-tool".into(),
            "mcp__baton__approve_tool_call".into(),
        ]);
    }
    if !profile.allowed_tools.is_empty() {
        args.push("--allowedTools".into());
        args.extend(profile.allowed_tools.iter().cloned());
    }
    args
}

/// Codex runs without its sandbox and never asks (`danger-full-access`, `never`): its
/// `workspace-write` sandbox keeps `.git` read-only, so an agent could not commit on its task's
/// branch, and nobody is at a headless run's terminal to approve. A profile's `args` come after
/// and may set either back (`-c sandbox_mode="workspace-write"`). Codex gives an MCP server
/// only the environment its configuration names, so Baton's server gets the attempt's
/// variables spelled out.
fn codex_args(
    profile: &Profile,
    setting: &Setting,
    attempt: &Attempting<'_>,
    workdir: &Path,
    env: &[(String, String)],
) -> Vec<String> {
    let server_env: Vec<String> = env
        .iter()
        .filter(|(k, _)| k.starts_with("BATON_") || k.starts_with("PG"))
        .map(|(k, v)| format!("{k}={}", toml_string(v)))
        .collect();
    let mut args = vec!["exec".to_string()];
    if let Session::Resume(_) = attempt.session {
        args.push("resume".into());
    }
    args.extend([
        "--json".to_string(),
        "--skip-git-repo-check".into(),
        "-c".into(),
        "sandbox_mode=\"danger-full-access\"".into(),
        "-c".into(),
        "approval_policy=\"never\"".into(),
        "-c".into(),
        format!(
            "mcp_servers.baton.command={}",
            toml_string(&setting.baton.display().to_string())
        ),
        "-c".into(),
        format!(
            "mcp_servers.baton.args=[{}]",
            mcp_args(profile)
                .iter()
                .map(|a| format!("\"{a}\""))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        "-c".into(),
        format!(
            "mcp_servers.baton.cwd={}",
            toml_string(&workdir.display().to_string())
        ),
        "-c".into(),
        format!("mcp_servers.baton.env={{{}}}", server_env.join(", ")),
    ]);
    if let Some(model) = &profile.model {
        args.extend(["--model".into(), model.clone()]);
    }
    args.extend(profile.args.iter().cloned());
    if let Session::Resume(id) = attempt.session {
        args.push(id.clone());
    }
    args.push(attempt.prompt.to_string());
    args
}

/// `text` as a TOML basic string (what Codex's `-c key=value` parses).
fn toml_string(text: &str) -> String {
    // JSON's string escapes are TOML's, for everything JSON escapes.
    serde_json::Value::String(text.to_string()).to_string()
}

/// The Gemini CLI has no option that adds an MCP server for one run (its system settings must
/// belong to root, and a workspace's would be written into the task's worktree), so a Gemini
/// agent reports through the `baton` command in its shell, which is first on its PATH; its
/// prompt says how. `--skip-trust`: the lead who started the team trusts the project.
fn gemini_args(profile: &Profile, attempt: &Attempting<'_>) -> Vec<String> {
    let mut args = vec![
        "-p".to_string(),
        attempt.prompt.to_string(),
        "--output-format".into(),
        "stream-json".into(),
        "--yolo".into(),
        "--skip-trust".into(),
    ];
    if let Some(model) = &profile.model {
        args.extend(["--model".into(), model.clone()]);
    }
    args
}

/// A random version 4 UUID, for a new agent session's id.
pub fn new_session_id() -> String {
    use std::io::Read;
    let mut bytes = [0u8; 16];
    if std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .is_err()
    {
        // No /dev/urandom: the clock and the process id, still unique enough for a name.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        bytes = (nanos ^ (u128::from(std::process::id()) << 64)).to_le_bytes();
    }
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
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

    #[test]
    fn session_ids_are_version_4_uuids_and_differ() {
        let a = new_session_id();
        let b = new_session_id();
        assert_ne!(a, b);
        assert_eq!(a.len(), 36);
        assert_eq!(&a[14..15], "4", "{a}");
        assert!("89ab".contains(&a[19..20]), "{a}");
    }
}
