//! The proxy: child MCP servers (default: Playwright MCP attached to the browser's CDP port)
//! started over stdio, their tools cached at start and served beside Baton's own from the first
//! `tools/list` (see Start-up below for children that are slow to start).
//!
//! Routing: Baton's own tools are handled locally; a child tool is forwarded to its child; any
//! other name is an "unknown tool" error. Name clashes: Baton's names always win; a child tool
//! whose name is already taken (by Baton or an earlier child) is served as
//! `<child>__<tool>`, where `<child>` is the child's name (`--child NAME=COMMAND`, or
//! `child1`, `child2`, … in order). Child failures: a child that does not start leaves Baton
//! serving its own tools (`coordinator_status` says why); a child that crashes is detected on
//! the call that fails, which gets a descriptive error, and is restarted on the next call.
//!
//! Start-up: the children start in the background ([`PendingProxy`]), so `initialize` is
//! answered at once (hosts such as Claude Code give a server only a few seconds); the first
//! `tools/list` and any child call wait until the children's tools are cached, so the first
//! list is already the whole, merged list. A list only waits so long
//! ([`crate::browsing::CHILDREN_WAIT`]): past that it has Baton's own tools and the children's
//! follow with `notifications/tools/list_changed`.
//!
//! Files: a child runs in the project folder, which Playwright MCP takes as its workspace root
//! (it refuses files outside it and its output folder, and `file:` URLs); Baton never passes
//! it `--allow-unrestricted-file-access` and removes that setting's environment variable.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rmcp::model::{CallToolRequestParams, CallToolResult, Tool};
use rmcp::service::{RunningService, ServiceError};
use rmcp::transport::TokioChildProcess;
use rmcp::{ErrorData as McpError, RoleClient, ServiceExt};
use serde::Serialize;
use tokio::sync::Mutex;

use crate::log::Log;

/// The placeholder in a child command that becomes the browser's CDP port.
pub const CDP_PORT_PLACEHOLDER: &str = "{cdp_port}";
/// The placeholder that becomes the project's `.coordination/` folder, so a child's files
/// stay inside it.
pub const COORDINATION_PLACEHOLDER: &str = "{coordination}";

/// The Playwright MCP release Baton is tested with, fetched by `npx` when none is installed.
pub const PLAYWRIGHT_MCP_PACKAGE: &str = "@playwright/mcp@0.0.83";
/// The command an installed Playwright MCP provides.
const PLAYWRIGHT_MCP_BIN: &str = "playwright-mcp";

/// The default child: Playwright MCP attached to Baton's browser. An installed one is used
/// when found (`node_modules/.bin` in the project folder or above, then `PATH`), which starts
/// in about a second; otherwise `npx` fetches the tested release, which takes several.
pub fn default_child(project_dir: &Path) -> ChildSpec {
    let (program, mut args) = match installed_playwright_mcp(project_dir) {
        Some(bin) => (bin.display().to_string(), Vec::new()),
        None => (
            "npx".to_string(),
            vec!["-y".to_string(), PLAYWRIGHT_MCP_PACKAGE.to_string()],
        ),
    };
    args.extend(
        [
            "--cdp-endpoint",
            "http://127.0.0.1:{cdp_port}",
            "--output-dir",
            "{coordination}/mcp/playwright",
        ]
        .map(String::from),
    );
    ChildSpec {
        name: "playwright".into(),
        program,
        args,
    }
}

/// An installed `playwright-mcp`: the project's `node_modules/.bin` (or an enclosing
/// folder's), then `PATH`.
pub fn installed_playwright_mcp(project_dir: &Path) -> Option<PathBuf> {
    let local = project_dir
        .ancestors()
        .map(|dir| dir.join("node_modules/.bin").join(PLAYWRIGHT_MCP_BIN))
        .find(|bin| baton_fs::is_executable(bin));
    local.or_else(|| baton_fs::find_program(PLAYWRIGHT_MCP_BIN, None))
}

/// Where children run and keep their files.
#[derive(Debug, Clone)]
pub struct ChildHome {
    /// Their working folder, which Playwright MCP takes as its workspace root (files outside
    /// it are refused): the project, or in a sandbox the agent's working folder.
    pub workspace: PathBuf,
    /// What [`COORDINATION_PLACEHOLDER`] becomes: the project's `.coordination/`, or in a
    /// sandbox a private folder of the proxy's.
    pub files: PathBuf,
}

impl ChildHome {
    /// The project's: its folder, and its `.coordination/` for files.
    pub fn project(coordination: &Path) -> ChildHome {
        ChildHome {
            workspace: coordination.parent().unwrap_or(coordination).to_path_buf(),
            files: coordination.to_path_buf(),
        }
    }
}

/// How to start a child server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChildSpec {
    pub name: String,
    pub program: String,
    pub args: Vec<String>,
}

impl ChildSpec {
    /// Parses `--child` values: `COMMAND ARGS…` or `NAME=COMMAND ARGS…` (shell-style quoting).
    pub fn parse(value: &str, index: usize) -> Result<ChildSpec, String> {
        let (name, command) = match value.split_once('=') {
            Some((name, command))
                if !name.is_empty()
                    && !name.contains(char::is_whitespace)
                    && baton_core::names::validate_name("child name", name).is_ok() =>
            {
                (name.to_string(), command)
            }
            _ => (format!("child{index}"), value),
        };
        let words = shell_words::split(command).map_err(|e| format!("--child {value:?}: {e}"))?;
        let (program, args) = words
            .split_first()
            .ok_or_else(|| format!("--child {value:?} names no command"))?;
        Ok(ChildSpec {
            name,
            program: program.clone(),
            args: args.to_vec(),
        })
    }

    fn command(&self, cdp_port: u16, home: &ChildHome, temp: &Path) -> tokio::process::Command {
        // Its own process group (npx starts node under it), ended as a whole on shutdown;
        // and it dies with us if we are killed.
        let mut command = baton_fs::command_in_own_group(&self.program, None, libc::SIGTERM);
        command.args(self.args.iter().map(|a| {
            a.replace(CDP_PORT_PLACEHOLDER, &cdp_port.to_string())
                .replace(COORDINATION_PLACEHOLDER, &home.files.display().to_string())
        }));
        // The child's workspace: Playwright MCP confines files to it.
        command.current_dir(&home.workspace);
        command.env_remove("PLAYWRIGHT_MCP_ALLOW_UNRESTRICTED_FILE_ACCESS");
        // Its temporary files stay in the child's home too, not in the machine's /tmp.
        command.env("TMPDIR", temp);
        tokio::process::Command::from(command)
    }
}

type Connection = RunningService<RoleClient, ()>;

enum State {
    Running {
        service: Connection,
        pid: Option<u32>,
    },
    /// Could not start, or died; `reason` says why.
    Down { reason: String },
}

/// One child server and its cached tools.
pub struct Child {
    pub spec: ChildSpec,
    cdp_port: u16,
    home: ChildHome,
    state: Mutex<State>,
    /// Its tools as listed at start: (served name, the child's own tool).
    pub tools: Vec<(String, Tool)>,
    restarts: std::sync::atomic::AtomicUsize,
    /// Its temporary files' folder ([`temporary_folder`]), or why there is none; last, so
    /// it is removed after the child's connection is dropped.
    temp: Result<tempfile::TempDir, String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ChildStatus {
    pub name: String,
    pub command: String,
    pub running: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    pub tools: usize,
    pub restarts: usize,
}

/// A child's folder for temporary files, given to it as `TMPDIR`: inside its home's files
/// (`mcp/tmp/NAME-…`), removed with the child, so what a child ended by a signal leaves
/// (Node's and Playwright's temporary files) is not left in the machine's /tmp.
fn temporary_folder(spec: &ChildSpec, home: &ChildHome) -> Result<tempfile::TempDir, String> {
    let parent = home.files.join("mcp").join("tmp");
    std::fs::create_dir_all(&parent)
        .and_then(|()| {
            tempfile::Builder::new()
                .prefix(&format!("{}-", spec.name))
                .tempdir_in(&parent)
        })
        .map_err(|e| {
            format!(
                "cannot make its temporary folder in {}: {e}",
                parent.display()
            )
        })
}

async fn connect(
    spec: &ChildSpec,
    cdp_port: u16,
    home: &ChildHome,
    temp: &Result<tempfile::TempDir, String>,
) -> Result<(Connection, Option<u32>), String> {
    let temp = temp.as_ref().map_err(Clone::clone)?;
    let (transport, _) = TokioChildProcess::builder(spec.command(cdp_port, home, temp.path()))
        .stderr(std::process::Stdio::inherit())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", spec.program))?;
    let pid = transport.id();
    let service = ().serve(transport).await.map_err(|e| {
        format!(
            "{} started but did not complete the MCP handshake: {e}",
            spec.program
        )
    })?;
    Ok((service, pid))
}

impl Child {
    /// Starts the child and caches its tools; a child that fails is kept, down, with why.
    pub async fn start(spec: ChildSpec, cdp_port: u16, home: &ChildHome, log: &Log) -> Child {
        let temp = temporary_folder(&spec, home);
        let (state, tools) = match connect(&spec, cdp_port, home, &temp).await {
            Ok((service, pid)) => match service.list_all_tools().await {
                Ok(tools) => {
                    log.line(&format!(
                        "child {} started (pid {pid:?}) with {} tools",
                        spec.name,
                        tools.len()
                    ));
                    (State::Running { service, pid }, tools)
                }
                Err(e) => (
                    State::Down {
                        reason: format!("child {} did not list its tools: {e}", spec.name),
                    },
                    Vec::new(),
                ),
            },
            Err(reason) => (State::Down { reason }, Vec::new()),
        };
        if let State::Down { reason } = &state {
            log.line(&format!("child {} is down: {reason}", spec.name));
        }
        Child {
            tools: tools.into_iter().map(|t| (t.name.to_string(), t)).collect(),
            spec,
            cdp_port,
            home: home.clone(),
            state: Mutex::new(state),
            restarts: Default::default(),
            temp,
        }
    }

    pub async fn status(&self) -> ChildStatus {
        let state = self.state.lock().await;
        let (running, pid, problem) = match &*state {
            State::Running { service, pid } if !service.is_transport_closed() => (true, *pid, None),
            State::Running { pid, .. } => (false, *pid, Some("the child exited".to_string())),
            State::Down { reason } => (false, None, Some(reason.clone())),
        };
        ChildStatus {
            name: self.spec.name.clone(),
            command: std::iter::once(self.spec.program.as_str())
                .chain(self.spec.args.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" "),
            running,
            pid,
            problem,
            tools: self.tools.len(),
            restarts: self.restarts.load(std::sync::atomic::Ordering::Relaxed),
        }
    }

    /// Forwards a call; the child's result (tool errors included) comes back unchanged.
    pub async fn call(
        &self,
        tool: &str,
        params: CallToolRequestParams,
        log: &Log,
    ) -> Result<CallToolResult, McpError> {
        let mut state = self.state.lock().await;
        let needs_start = match &*state {
            State::Running { service, .. } => service.is_transport_closed(),
            State::Down { .. } => true,
        };
        if needs_start {
            // Crashed or never started: try again now.
            match connect(&self.spec, self.cdp_port, &self.home, &self.temp).await {
                Ok((service, pid)) => {
                    self.restarts
                        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    log.line(&format!("child {} restarted (pid {pid:?})", self.spec.name));
                    *state = State::Running { service, pid };
                }
                Err(reason) => {
                    *state = State::Down {
                        reason: reason.clone(),
                    };
                    return Ok(tool_error(format!("{tool} is unavailable: {reason}")));
                }
            }
        }
        let State::Running { service, .. } = &*state else {
            unreachable!("started above")
        };
        let mut forwarded = params;
        forwarded.name = tool.to_string().into();
        match service.call_tool(forwarded).await {
            Ok(result) => Ok(result),
            Err(ServiceError::McpError(error)) => Err(error),
            Err(e) => {
                let reason = format!(
                    "child {} stopped while handling {tool} ({e}); it will be restarted on the next call",
                    self.spec.name
                );
                log.line(&reason);
                *state = State::Down {
                    reason: reason.clone(),
                };
                Ok(tool_error(reason))
            }
        }
    }

    /// Disconnects and ends the child's process group.
    pub async fn shutdown(&self) {
        let mut state = self.state.lock().await;
        if let State::Running { service, pid } = std::mem::replace(
            &mut *state,
            State::Down {
                reason: "stopped".into(),
            },
        ) {
            let _ = tokio::time::timeout(std::time::Duration::from_secs(5), service.cancel()).await;
            if let Some(pid) = pid {
                baton_fs::ProcessGroup::led_by(pid).kill();
            }
        }
        // What the child left there (it was ended by a signal); the folder itself goes with
        // the child.
        if let Ok(temp) = &self.temp {
            empty_folder(temp.path());
        }
    }
}

/// Removes what `folder` holds, keeping the folder.
fn empty_folder(folder: &Path) {
    for entry in std::fs::read_dir(folder).into_iter().flatten().flatten() {
        let path = entry.path();
        let _ = match entry.file_type() {
            Ok(kind) if kind.is_dir() => std::fs::remove_dir_all(&path),
            _ => std::fs::remove_file(&path),
        };
    }
}

fn tool_error(message: String) -> CallToolResult {
    let mut result = CallToolResult::error(vec![rmcp::model::ContentBlock::text(message.clone())]);
    result.structured_content =
        Some(serde_json::json!({"error": {"kind": "child_unavailable", "message": message}}));
    result
}

/// Every child, and where each served tool name goes.
pub struct Proxy {
    pub children: Vec<Arc<Child>>,
    routes: HashMap<String, (usize, String)>,
    /// Served names in order, with their tool definitions (renamed where they clashed).
    pub tools: Vec<Tool>,
}

impl Proxy {
    /// Starts every child and builds the routing table; `taken` are Baton's own tool names.
    pub async fn start(
        specs: Vec<ChildSpec>,
        cdp_port: u16,
        home: &ChildHome,
        taken: &[String],
        allow_unsafe: bool,
        log: &Log,
    ) -> Proxy {
        // Side by side: the first list waits for the slowest child, not for their sum (in a
        // sandbox, Baton's own child before Playwright MCP).
        let starting: Vec<_> = specs
            .into_iter()
            .map(|spec| {
                let (home, log) = (home.clone(), log.clone());
                tokio::spawn(async move { Child::start(spec, cdp_port, &home, &log).await })
            })
            .collect();
        let mut children = Vec::new();
        for start in starting {
            match start.await {
                Ok(child) => children.push(Arc::new(child)),
                Err(e) => log.line(&format!("a child's start was abandoned: {e}")),
            }
        }
        let mut routes = HashMap::new();
        let mut tools = Vec::new();
        let mut used: std::collections::HashSet<String> = taken.iter().cloned().collect();
        for (index, child) in children.iter().enumerate() {
            for (original, tool) in &child.tools {
                if is_unsafe(original) && !allow_unsafe {
                    log.line(&format!(
                        "child {} tool {original} not served: it runs arbitrary code (--allow-unsafe-tools serves it)",
                        child.spec.name
                    ));
                    continue;
                }
                let served = if used.contains(original) {
                    format!("{}__{original}", child.spec.name)
                } else {
                    original.clone()
                };
                if !used.insert(served.clone()) {
                    log.line(&format!(
                        "child {} tool {original} clashes twice; not served",
                        child.spec.name
                    ));
                    continue;
                }
                let mut tool = tool.clone();
                tool.name = served.clone().into();
                tools.push(tool);
                routes.insert(served, (index, original.clone()));
            }
        }
        Proxy {
            children,
            routes,
            tools,
        }
    }

    /// The child and its own name for a served tool name.
    pub fn route(&self, served: &str) -> Option<(&Arc<Child>, &str)> {
        self.routes
            .get(served)
            .map(|(index, original)| (&self.children[*index], original.as_str()))
    }

    pub async fn shutdown(&self) {
        for child in &self.children {
            child.shutdown().await;
        }
    }
}

/// Whether a child tool declares itself able to run arbitrary code in the child's process
/// (Playwright MCP's `browser_run_code_unsafe`): such a tool reaches every file the user can,
/// so it is served only when the user asks for it.
pub fn is_unsafe(tool: &str) -> bool {
    tool.ends_with("_unsafe")
}

/// The proxy while its children start in the background: [`PendingProxy::ready`] waits for
/// them.
pub struct PendingProxy {
    ready: tokio::sync::watch::Receiver<Option<Arc<Proxy>>>,
    starting: std::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl PendingProxy {
    /// Starts the children on the current runtime and returns at once.
    pub fn spawn(
        specs: Vec<ChildSpec>,
        cdp_port: u16,
        home: ChildHome,
        taken: Vec<String>,
        allow_unsafe: bool,
        log: &Log,
    ) -> PendingProxy {
        let (tx, ready) = tokio::sync::watch::channel(None);
        let log = log.clone();
        let task = tokio::spawn(async move {
            let started = std::time::Instant::now();
            let proxy = Proxy::start(specs, cdp_port, &home, &taken, allow_unsafe, &log).await;
            log.line(&format!(
                "children ready with {} tools in {} ms",
                proxy.tools.len(),
                started.elapsed().as_millis()
            ));
            let _ = tx.send(Some(Arc::new(proxy)));
        });
        PendingProxy {
            ready,
            starting: std::sync::Mutex::new(Some(task)),
        }
    }

    /// The proxy once every child has started (or failed to); `None` if the start was
    /// abandoned at shutdown.
    pub async fn ready(&self) -> Option<Arc<Proxy>> {
        let mut ready = self.ready.clone();
        let proxy = ready.wait_for(Option::is_some).await.ok()?;
        proxy.clone()
    }

    /// Stops the children: waits a little for a start under way, then abandons it (a child
    /// still starting dies with Baton: it was started with a parent-death signal).
    pub async fn shutdown(&self) {
        match tokio::time::timeout(std::time::Duration::from_secs(2), self.ready()).await {
            Ok(Some(proxy)) => proxy.shutdown().await,
            _ => {
                if let Some(task) = self.starting.lock().expect("start lock").take() {
                    task.abort();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn child_commands_parse_with_names_and_quotes() {
        let spec = ChildSpec::parse(
            "npx -y @playwright/mcp --cdp-endpoint http://127.0.0.1:{cdp_port}",
            1,
        )
        .unwrap();
        assert_eq!(spec.name, "child1");
        assert_eq!(spec.program, "npx");
        assert_eq!(spec.args.last().unwrap(), "http://127.0.0.1:{cdp_port}");
        let named = ChildSpec::parse("files=python3 -m server --root 'my dir'", 2).unwrap();
        assert_eq!(named.name, "files");
        assert_eq!(named.args, ["-m", "server", "--root", "my dir"]);
        // An '=' inside the command is not a name.
        let plain = ChildSpec::parse("env A=1 server", 3).unwrap();
        assert_eq!(plain.program, "env");
        assert!(ChildSpec::parse("  ", 4).is_err());
        assert!(ChildSpec::parse("x 'unclosed", 5).is_err());
    }

    #[test]
    fn an_installed_playwright_mcp_in_the_project_is_preferred_to_npx() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("app");
        std::fs::create_dir_all(&project).unwrap();
        let bin = dir.path().join("node_modules/.bin");
        std::fs::create_dir_all(&bin).unwrap();
        let script = bin.join("playwright-mcp");
        std::fs::write(&script, "#!/bin/sh\n").unwrap();
        // Not executable: not a command.
        assert_ne!(installed_playwright_mcp(&project), Some(script.clone()));
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let spec = default_child(&project);
        assert_eq!(spec.program, script.display().to_string());
        assert_eq!(spec.args[0], "--cdp-endpoint");
    }
}
