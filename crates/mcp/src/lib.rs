//! # baton-mcp
//!
//! Baton as an MCP server: the task store, signals and orchestration as tools with typed,
//! described arguments; the board and the `agents://` resources, with update notifications
//! from the change feed. Every operation calls the same library function the CLI does.
//!
//! Not here: any coordination logic (that is in `baton-store`, `baton-live`, `baton-agents`).

pub mod args;
pub mod browser_manager;
pub mod filter;
pub mod framing;
pub mod log;
pub mod proxy;
pub mod resources;
pub mod server;
pub mod tools;

use baton_store::Project;
use rmcp::ServiceExt;

pub use filter::ToolFilter;
pub use log::Log;
pub use server::BatonServer;

/// Options of `baton mcp`.
#[derive(Debug, Clone, Default)]
pub struct McpOptions {
    /// Serve only the tools this agent's definition allows.
    pub agent: Option<String>,
    /// Keep log lines off stderr (the log file still has them).
    pub quiet: bool,
    /// Proxy child servers: these `--child` values, or Playwright MCP when empty.
    pub proxy: bool,
    pub children: Vec<String>,
    /// Do not launch the browser before child tool calls.
    pub no_browser: bool,
    /// Show the browser window.
    pub headed: bool,
}

/// Serves `project` over stdio until the client closes stdin or the process is told to stop
/// (SIGTERM, Ctrl-C).
pub fn serve_stdio(project: Project, options: McpOptions) -> Result<(), String> {
    // One thread drives the protocol (store operations run on blocking threads): request and
    // response hops then need no cross-thread wake-ups, which is most of a proxied call's cost.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let outcome = runtime.block_on(async move {
        let log = Log::new(project.layout(), options.quiet);
        let filter = match &options.agent {
            Some(agent) => {
                let orchestrator =
                    baton_agents::Orchestrator::open(&project).map_err(|e| e.to_string())?;
                let definition = orchestrator
                    .registry()
                    .require(agent)
                    .map_err(|e| e.to_string())?;
                ToolFilter::new(&definition.tools)
            }
            None => ToolFilter::new(&[]),
        };
        let owner = match &options.agent {
            Some(agent) => format!("{agent} (baton-mcp[{}])", std::process::id()),
            None => format!("baton-mcp[{}]", std::process::id()),
        };
        let browser =
            browser_manager::BrowserManager::new(project.layout().clone(), owner, !options.headed)
                .map_err(|e| format!("cannot reserve a port for the browser: {e}"))?;
        let proxying = options.proxy || !options.children.is_empty();
        let proxy = if proxying {
            let specs = if options.children.is_empty() {
                vec![proxy::default_child()]
            } else {
                options
                    .children
                    .iter()
                    .enumerate()
                    .map(|(i, c)| proxy::ChildSpec::parse(c, i + 1))
                    .collect::<Result<Vec<_>, _>>()?
            };
            let taken: Vec<String> = tools::catalogue()
                .iter()
                .map(|t| t.name.to_string())
                .collect();
            let coordination = project.layout().root().to_path_buf();
            Some(proxy::Proxy::start(specs, browser.port(), &coordination, &taken, &log).await)
        } else {
            None
        };
        let lazy_browser = proxying && !options.no_browser;
        let server = BatonServer::new(project, filter, log.clone(), browser, proxy, lazy_browser);
        log.line(&format!(
            "serving {} tools over stdio{}",
            server.all_tools().len(),
            options
                .agent
                .as_deref()
                .map(|a| format!(" for agent {a}"))
                .unwrap_or_default()
        ));
        let handle = server.clone();
        let transport = framing::StdioTransport::stdio();
        let service = match server.serve(transport).await {
            Ok(service) => service,
            Err(e) => {
                handle.shutdown().await;
                return Err(format!("MCP handshake failed: {e}"));
            }
        };
        let cancel = service.cancellation_token();
        tokio::select! {
            result = service.waiting() => {
                if let Err(e) = result {
                    log.line(&format!("the connection ended with an error: {e}"));
                }
                log.line("client closed the connection; stopping");
            }
            _ = shutdown_signal() => {
                log.line("asked to stop; shutting down");
                cancel.cancel();
            }
        }
        handle.shutdown().await;
        Ok(())
    });
    // stdin is read on a blocking thread that only returns when input arrives: do not wait for
    // it (or any other blocking task) once serving is over.
    runtime.shutdown_background();
    outcome
}

async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).expect("SIGTERM handler");
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
}
