//! # baton-mcp
//!
//! Baton as an MCP server: the task store, signals and orchestration as tools with typed,
//! described arguments; the board and the `agents://` resources, with update notifications
//! from the change feed; a proxy for child MCP servers (Playwright MCP by default) with a
//! browser launched on first use. Every operation calls the same library function the CLI does.
//!
//! Not here: any coordination logic (that is in `baton-core`, the stores, `baton-live`, `baton-agents`).

pub mod browser_manager;
pub mod browsing;
pub mod config;
pub mod filter;
pub mod framing;
pub mod http;
pub mod log;
pub mod prompts;
pub mod proxy;
pub mod resources;
pub mod sandboxed;
pub mod server;
pub mod sessions;
pub mod tools;

use baton_api::{Error, OpenProject};
use baton_core::{ErrorKind, Layout};
use rmcp::ServiceExt;

pub use filter::ToolFilter;
pub use log::Log;
pub use server::{BatonServer, Speaker};

/// Options of `baton mcp`.
#[derive(Debug, Clone, Default)]
pub struct McpOptions {
    /// Serve only the tools this agent's definition allows.
    pub agent: Option<String>,
    /// Whom the server speaks for: the lead (the default), or an agent as itself.
    pub speaker: Speaker,
    /// Keep log lines off stderr (the log file still has them).
    pub quiet: bool,
    /// Proxy child servers: these `--child` values, or Playwright MCP when empty.
    pub proxy: bool,
    pub children: Vec<String>,
    /// Do not launch the browser before child tool calls.
    pub no_browser: bool,
    /// Show the browser window.
    pub headed: bool,
    /// Serve streamable HTTP on this loopback address instead of stdio.
    pub http: Option<String>,
    /// The bearer token for HTTP (default: random).
    pub token: Option<String>,
    /// How many HTTP sessions may be live at once, and how long an idle one is kept.
    pub sessions: sessions::SessionLimits,
    /// Folders beyond the project that tool calls may name (`--allow-path`).
    pub allow_paths: Vec<std::path::PathBuf>,
    /// Serve child tools that run arbitrary code (`*_unsafe`).
    pub allow_unsafe_tools: bool,
    /// Tool calls' paths stay inside this folder instead of the project (an agent behind its
    /// attempt's door: its working folder).
    pub confine_to: Option<std::path::PathBuf>,
    /// It serves an agent behind its attempt's door, on the lead's side: no coordinator tools
    /// (a browser launched here would run outside the agent's sandbox).
    pub behind_door: bool,
}

/// Serves `project` until the client goes away (stdin closed) or the process is told to stop
/// (SIGTERM, Ctrl-C); then stops the browser and the children. A failure to start or serve is
/// an [`Error`] with its kind (a bad option, an unknown agent, a configuration that does not
/// parse, a port that cannot be listened on), as every other command reports.
pub fn serve(open: OpenProject, options: McpOptions) -> Result<(), Error> {
    tools::prepare(); // first, so it overlaps everything else start-up does
    let runtime = runtime()?;
    let outcome = runtime.block_on(async move {
        let http = options.http.as_deref().map(http::loopback).transpose()?;
        let project = open.local().clone();
        let server = build(open, &options).await?;
        let result = match http {
            None => serve_stdio(&server, server.log()).await,
            Some(addr) => {
                serve_http(
                    &server,
                    &project,
                    addr,
                    options.token.clone(),
                    options.sessions,
                )
                .await
            }
        };
        server.shutdown().await;
        Ok::<_, Error>((result, server))
    });
    // stdin is read on a blocking thread when it is not a pipe, and that read only returns when
    // input arrives: do not wait for it (or any other blocking task) once serving is over.
    runtime.shutdown_background();
    // The server (with its stores) is dropped here, outside the runtime: a database
    // connection says goodbye to its server with a blocking call, which a runtime's own thread
    // must not make.
    let (result, server) = outcome?;
    drop(server);
    result
}

/// The server for these options: the agent's tool filter, the browser's reserved port, and
/// the children started (so the first `tools/list` already has their tools).
async fn build(open: OpenProject, options: &McpOptions) -> Result<BatonServer, Error> {
    let project = open.local();
    let log = Log::new(project, options.quiet);
    let confinement = match &options.confine_to {
        Some(dir) => baton_core::Confinement::project(dir)?,
        None => config::confinement(project, &options.allow_paths)?,
    };
    let filter = match &options.agent {
        Some(agent) => {
            let orchestrator =
                baton_agents::Orchestrator::open_on(project, open.documents.clone())?;
            let definition = orchestrator.registry().require(agent)?;
            ToolFilter::new(&definition.tools)
        }
        None => ToolFilter::new(&[]),
    };
    let owner = match &options.agent {
        Some(agent) => format!("{agent} (baton-mcp[{}])", std::process::id()),
        None => format!("baton-mcp[{}]", std::process::id()),
    };
    let browser =
        browser_manager::BrowserManager::new(project.clone(), owner, !options.headed, false)
            .map_err(|e| {
                Error::new(
                    ErrorKind::Io,
                    format!("cannot reserve a port for the browser: {e}"),
                )
            })?;
    let proxying = options.proxy || !options.children.is_empty();
    let proxy = if proxying {
        let specs = if options.children.is_empty() {
            vec![proxy::default_child(project.project_dir())]
        } else {
            options
                .children
                .iter()
                .enumerate()
                .map(|(i, c)| proxy::ChildSpec::parse(c, i + 1))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| Error::new(ErrorKind::InvalidInput, e))?
        };
        let taken: Vec<String> = tools::own_tool_names().map(str::to_string).collect();
        Some(proxy::PendingProxy::spawn(
            specs,
            browser.port(),
            proxy::ChildHome::project(project.root()),
            taken,
            options.allow_unsafe_tools,
            &log,
        ))
    } else {
        None
    };
    log.line(&format!(
        "tool calls may name paths inside {}",
        confinement
            .roots()
            .iter()
            .map(|r| r.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    ));
    let browsing = browsing::Browsing {
        browser,
        proxy,
        lazy_browser: proxying && !options.no_browser,
        registry: project.clone(),
    };
    let mut server = BatonServer::new(open.clone(), confinement, filter, log.clone(), browsing)
        .with_speaker(options.speaker.clone());
    if options.behind_door {
        server = server.without_browser_tools();
    }
    log.line(&format!(
        "serving {} tools{}{}",
        server.own_tool_count(),
        if proxying {
            " and the children's once they have started"
        } else {
            ""
        },
        options
            .agent
            .as_deref()
            .map(|a| format!(" for agent {a}"))
            .unwrap_or_default()
    ));
    Ok(server)
}

/// Serves `server` over stdio until the client goes away or the process is told to stop.
async fn serve_stdio<S: rmcp::ServerHandler + Clone>(server: &S, log: &Log) -> Result<(), Error> {
    let stop = shutdown_signal()?;
    let service = server
        .clone()
        .serve(framing::StdioTransport::stdio())
        .await
        .map_err(|e| Error::new(ErrorKind::Io, format!("MCP handshake failed: {e}")))?;
    let cancel = service.cancellation_token();
    tokio::select! {
        result = service.waiting() => {
            if let Err(e) = result {
                log.line(&format!("the connection ended with an error: {e}"));
            }
            log.line("client closed the connection; stopping");
        }
        _ = stop => {
            log.line("asked to stop; shutting down");
            cancel.cancel();
        }
    }
    Ok(())
}

async fn serve_http(
    server: &BatonServer,
    project: &Layout,
    addr: std::net::SocketAddr,
    token: Option<String>,
    sessions: sessions::SessionLimits,
) -> Result<(), Error> {
    let log = server.log().clone();
    let token = match token {
        Some(token) if token.len() >= 16 => token,
        Some(_) => {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                "the HTTP token must be at least 16 characters",
            ));
        }
        None => http::random_token()
            .map_err(|e| Error::new(ErrorKind::Io, format!("cannot make a token: {e}")))?,
    };
    let cancel = tokio_util::sync::CancellationToken::new();
    let info_file = project.root().join("mcp").join("http.json");
    let token_for_file = token.clone();
    let info = info_file.clone();
    let announce = move |bound: std::net::SocketAddr| {
        let url = format!("http://{bound}{}", http::ENDPOINT);
        let body =
            serde_json::json!({"url": url, "token": token_for_file, "pid": std::process::id()});
        if let Err(e) = write_private(&info, body.to_string().as_bytes()) {
            log.line(&format!("cannot write {}: {e}", info.display()));
        }
        // The URL and where the token is, never the token itself, on stderr.
        eprintln!(
            "baton mcp: listening on {url} (bearer token in {})",
            info.display()
        );
    };
    let stop = shutdown_signal()?;
    let serving = http::serve(
        server.clone(),
        addr,
        token,
        server.log().clone(),
        cancel.clone(),
        sessions,
        announce,
    );
    let result = tokio::select! {
        result = serving => result,
        _ = stop => {
            server.log().line("asked to stop; shutting down");
            cancel.cancel();
            Ok(())
        }
    };
    let _ = std::fs::remove_file(&info_file);
    result
}

/// Writes `bytes` to a new file only its owner can read.
fn write_private(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let _ = std::fs::remove_file(path);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

/// A runtime on this thread: one thread drives the protocol (store operations run on blocking
/// threads), so request and response hops need no cross-thread wake-ups, which is most of a
/// proxied call's cost.
fn runtime() -> Result<tokio::runtime::Runtime, Error> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            Error::new(
                ErrorKind::Internal,
                format!("cannot start the runtime: {e}"),
            )
        })
}

/// SIGTERM or SIGINT (Ctrl-C), caught from this call on: installed before the server is
/// announced, a stop sent the moment a client sees it ends the server cleanly instead of
/// killing it.
fn shutdown_signal() -> Result<impl std::future::Future<Output = ()>, Error> {
    use tokio::signal::unix::{SignalKind, signal};
    let catch = |kind| {
        signal(kind)
            .map_err(|e| Error::new(ErrorKind::Internal, format!("cannot catch signals: {e}")))
    };
    let mut term = catch(SignalKind::terminate())?;
    let mut interrupt = catch(SignalKind::interrupt())?;
    Ok(async move {
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = term.recv() => {}
        }
    })
}
