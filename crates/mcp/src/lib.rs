//! # baton-mcp
//!
//! Baton as an MCP server: the task store, signals and orchestration as tools with typed,
//! described arguments; the board and the `agents://` resources, with update notifications
//! from the change feed. Every operation calls the same library function the CLI does.
//!
//! Not here: any coordination logic (that is in `baton-store`, `baton-live`, `baton-agents`).

pub mod args;
pub mod filter;
pub mod framing;
pub mod log;
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
}

/// Serves `project` over stdio until the client closes stdin or the process is told to stop
/// (SIGTERM, Ctrl-C).
pub fn serve_stdio(project: Project, options: McpOptions) -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    runtime.block_on(async move {
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
        let server = BatonServer::new(project, filter, log.clone());
        log.line(&format!(
            "serving {} tools over stdio{}",
            server.own_tools().len(),
            options
                .agent
                .as_deref()
                .map(|a| format!(" for agent {a}"))
                .unwrap_or_default()
        ));
        let transport = framing::guard(tokio::io::stdin(), tokio::io::stdout());
        let service = server
            .serve(transport)
            .await
            .map_err(|e| format!("MCP handshake failed: {e}"))?;
        let cancel = service.cancellation_token();
        tokio::select! {
            result = service.waiting() => {
                result.map_err(|e| e.to_string())?;
                log.line("client closed the connection; stopping");
            }
            _ = shutdown_signal() => {
                log.line("asked to stop; shutting down");
                cancel.cancel();
            }
        }
        Ok(())
    })
}

async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).expect("SIGTERM handler");
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
}
