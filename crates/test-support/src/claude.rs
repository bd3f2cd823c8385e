//! The real agent CLIs (npm `@anthropic-ai/claude-code`, `@openai/codex`,
//! `@google/gemini-cli`, pinned in scripts/lib.sh, from the tool cache) driven by a
//! [`ScriptedApi`](crate::scripted_api::ScriptedApi) in place of their model: a [`Host`] is one
//! installation of each with a HOME of its own, working in a project.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::scripted_api::{Reply, ScriptedApi, prompt_text};

/// How long one `claude -p` run may take.
pub const RUN_LIMIT: Duration = Duration::from_secs(180);

pub fn claude_bin() -> PathBuf {
    crate::cached_tool("node/node_modules/.bin/claude")
}

/// One Claude Code installation: its own HOME (so its configuration is the test's), working in
/// `project`, talking to `api`.
pub struct Host {
    home: tempfile::TempDir,
    project: PathBuf,
    api: String,
    /// Variables every `claude` run gets beside the clean environment (`BATON_AGENT`, …).
    env: Vec<(String, String)>,
}

impl Host {
    pub fn new(project: &Path, api: &ScriptedApi) -> Host {
        let home = tempfile::tempdir().unwrap();
        // Codex and the Gemini CLI read their model's address from their own configuration;
        // both are pointed at the same scripted API, which speaks each one's dialect.
        let codex = home.path().join(".codex");
        std::fs::create_dir_all(&codex).unwrap();
        std::fs::write(
            codex.join("config.toml"),
            format!(
                "model_provider = \"scripted\"\nmodel = \"scripted-model\"\n\
                 [model_providers.scripted]\nname = \"scripted\"\n\
                 base_url = \"{}/v1\"\nenv_key = \"SCRIPTED_API_KEY\"\n\
                 wire_api = \"responses\"\n",
                api.url()
            ),
        )
        .unwrap();
        let gemini = home.path().join(".gemini");
        std::fs::create_dir_all(&gemini).unwrap();
        std::fs::write(
            gemini.join("settings.json"),
            r#"{"security": {"auth": {"selectedType": "gemini-api-key"}}}"#,
        )
        .unwrap();
        // OpenCode: the scripted API as an OpenAI-compatible provider.
        let opencode = home.path().join(".config/opencode");
        std::fs::create_dir_all(&opencode).unwrap();
        std::fs::write(
            opencode.join("opencode.json"),
            serde_json::json!({
                "provider": {"scripted": {
                    "npm": "@ai-sdk/openai-compatible",
                    "name": "Scripted",
                    "options": {"baseURL": format!("{}/v1", api.url()),
                                "apiKey": "{env:SCRIPTED_API_KEY}"},
                    "models": {"scripted-model": {"name": "Scripted model"}},
                }},
                "model": "scripted/scripted-model",
                "autoupdate": false,
                "share": "disabled",
            })
            .to_string(),
        )
        .unwrap();
        Host {
            home,
            project: project.to_path_buf(),
            api: api.url(),
            env: Vec::new(),
        }
    }

    /// This installation's HOME: the user's own `~/.claude`, `~/.codex` and `~/.gemini`.
    pub fn home(&self) -> &Path {
        self.home.path()
    }

    /// Gives every later `claude` run (and what it starts: MCP servers, hooks) `key=value`.
    pub fn with_env(mut self, key: &str, value: &str) -> Host {
        self.env.push((key.to_string(), value.to_string()));
        self
    }

    /// `claude ARGS…` in the project, with nothing of this machine's own Claude setup: a clean
    /// environment, `baton` and the installed Playwright MCP on PATH.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(claude_bin());
        command.args(args).stdin(Stdio::null());
        self.environment(&mut command);
        command
    }

    /// Gives `command` the environment a `claude` run of this host gets, and the project as
    /// its folder: for a program that starts Claude Code itself (`baton team up`).
    pub fn environment(&self, command: &mut Command) {
        self.environment_with(command, &crate::baton_bin());
    }

    /// [`environment`](Self::environment) with `baton` as the Baton on `PATH` (for a package
    /// whose tests cargo gives no `baton` binary of its own: the desktop's).
    pub fn environment_with(&self, command: &mut Command, baton: &Path) {
        let baton_dir = baton.parent().unwrap().to_path_buf();
        let tools_bin = crate::tool_cache().join("node/node_modules/.bin");
        let path = std::env::join_paths([baton_dir, tools_bin].into_iter().chain(
            std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
        ))
        .unwrap();
        command
            .current_dir(&self.project)
            .env_clear()
            .env("PATH", path)
            .env("HOME", self.home.path())
            .env("LANG", "C.UTF-8")
            .env("ANTHROPIC_BASE_URL", &self.api)
            .env("ANTHROPIC_API_KEY", "sk-ant-test-not-a-real-key")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .env("ENABLE_TOOL_SEARCH", "false")
            .env("CODEX_HOME", self.home.path().join(".codex"))
            .env("SCRIPTED_API_KEY", "not-a-real-key")
            .env("GEMINI_API_KEY", "not-a-real-key")
            .env("GOOGLE_GEMINI_BASE_URL", &self.api)
            // OpenCode's model list is fetched from the web, which a test does not reach.
            .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
            .envs(self.env.iter().map(|(k, v)| (k, v)));
    }

    /// `baton ARGS` in this host's environment (so what it starts finds the agents and the
    /// scripted API), committing as the tests' git identity.
    /// Whether a session an agent saved under this installation's HOME or, sandboxed, in its
    /// task's own state folder (`.coordination/team/homes/`) holds `text` (Claude Code's
    /// `.claude/projects/…/*.jsonl`, Codex's `.codex/sessions/…/*.jsonl`).
    pub fn saved_session_holds(&self, text: &str) -> bool {
        fn holds(dir: &Path, text: &str) -> bool {
            let Ok(entries) = std::fs::read_dir(dir) else {
                return false;
            };
            entries.flatten().any(|entry| {
                let path = entry.path();
                if path.is_dir() {
                    holds(&path, text)
                } else {
                    path.extension().is_some_and(|e| e == "jsonl")
                        && std::fs::read_to_string(&path).is_ok_and(|s| s.contains(text))
                }
            })
        }
        holds(self.home.path(), text) || holds(&self.project.join(".coordination/team/homes"), text)
    }

    pub fn baton(&self, args: &[&str]) -> Command {
        let mut command = Command::new(crate::baton_bin());
        command.args(args);
        self.environment(&mut command);
        command.envs(crate::GIT_IDENTITY);
        command
    }

    /// `baton ARGS` (with `--json` among them) expected to succeed; its answer.
    pub fn baton_json(&self, args: &[&str]) -> Value {
        let out = self.baton(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {out:?}");
        serde_json::from_slice(&out.stdout).unwrap()
    }

    /// Runs `claude ARGS…` to the end (bounded) and expects success.
    pub fn ok(&self, args: &[&str]) -> String {
        let child = self
            .command(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        run(child)
    }

    /// `claude mcp add baton -- baton mcp EXTRA…`, checked with `claude mcp list`.
    pub fn add_baton(&self, extra: &[&str]) {
        let mut args = vec!["mcp", "add", "baton", "--", "baton", "mcp"];
        args.extend(extra);
        self.ok(&args);
        self.expect_baton_connected();
    }

    /// Checks with `claude mcp list` that Claude Code has Baton's server, connected (not
    /// missing, failed or pending approval).
    pub fn expect_baton_connected(&self) {
        let listed = self.ok(&["mcp", "list"]);
        let line = listed
            .lines()
            .find(|l| l.starts_with("baton:"))
            .unwrap_or_else(|| panic!("baton missing from `claude mcp list`: {listed}"));
        assert!(line.contains("Connected"), "{listed}");
    }

    /// A worker session: `claude -p` with Baton's tools allowed.
    pub fn work(&self, agent: &str) -> std::process::Child {
        let prompt = format!("Work the Baton queue as agent {agent} until it is empty.");
        self.command(&[
            "-p",
            &prompt,
            "--allowedTools",
            "mcp__baton",
            "--max-turns",
            "60",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
    }
}

/// Waits for `child` within [`RUN_LIMIT`], killing it past that.
pub fn finish(mut child: std::process::Child) -> Output {
    let deadline = Instant::now() + RUN_LIMIT;
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "claude did not finish in {RUN_LIMIT:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits for a `claude` run with piped output and expects success; returns its stdout.
pub fn run(child: std::process::Child) -> String {
    let out = finish(child);
    assert!(
        out.status.success(),
        "claude failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The agent named in the prompt ("… as agent NAME …").
pub fn agent_of(request: &Value) -> String {
    let prompt = prompt_text(request);
    let rest = prompt
        .split("as agent ")
        .nth(1)
        .expect("the prompt names the agent");
    rest.split_whitespace().next().unwrap().to_string()
}

pub fn tool(name: &str, input: Value) -> Reply {
    Reply::Tool {
        name: format!("mcp__baton__{name}"),
        input,
    }
}

/// A turn of a worker's conversation: the agent its prompt names and the tool calls made so
/// far; `None` for Claude Code's own side requests, which scripts answer with plain text.
pub fn worker_turn(request: &Value) -> Option<(String, Vec<crate::scripted_api::Exchange>)> {
    is_worker_turn(request).then(|| (agent_of(request), crate::scripted_api::exchanges(request)))
}

/// Whether `request` is of a worker's conversation (Baton's tools offered), not one of Claude
/// Code's own side requests (titles, summaries), which scripts answer with plain text.
pub fn is_worker_turn(request: &Value) -> bool {
    crate::scripted_api::tool_names(request)
        .iter()
        .any(|n| n == "mcp__baton__task_claim")
}

/// The task and agent a team prompt names ("Baton has claimed task T for you … as agent A.").
pub fn assignment(request: &Value) -> Option<(String, String)> {
    let prompt = prompt_text(request);
    let word_after = |marker: &str| {
        let rest = prompt.split(marker).nth(1)?;
        let word = rest.split_whitespace().next()?;
        Some(word.trim_end_matches(['.', ',', ':']).to_string())
    };
    Some((word_after("claimed task ")?, word_after("as agent ")?))
}

/// Whether a process whose command line starts with `name` runs (one an agent started with
/// `exec -a NAME`).
pub fn process_runs(name: &str) -> bool {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok())
        .any(|e| {
            std::fs::read(e.path().join("cmdline"))
                .map(|c| String::from_utf8_lossy(&c).starts_with(name))
                .unwrap_or(false)
        })
}
