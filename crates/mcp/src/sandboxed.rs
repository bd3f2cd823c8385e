//! `baton mcp --proxy` inside an agent's sandbox: the browser where the agent is.
//!
//! Everything else an agent runs as `baton` inside its sandbox goes through its attempt's door
//! to the lead's side. A proxy there would start Playwright MCP and Chromium on the lead's side,
//! outside the sandbox, with the machine's network and files. So the proxy runs inside instead:
//! its children (Playwright MCP by default) and the browser they drive start in the sandbox,
//! with the attempt's network (its allow-list; the app under test is a loopback port the
//! profile allows) and Chromium without a sandbox of its own (bubblewrap is its sandbox). Their
//! files (the browser's registry, Playwright's output, this server's log) go in a private folder
//! of the sandbox's own `/tmp`, gone with the attempt.
//!
//! Baton's own tools come from a child too: `baton mcp`, which reaches the project through the
//! door as this agent, like any `baton` inside, and whose tools keep their names. What it does
//! not serve here: resources (`baton mcp` without `--proxy` has them) and `--agent`'s tool
//! filter (the agents' definitions are in the project, which the sandbox does not show).

use std::path::PathBuf;
use std::sync::Arc;

use baton_api::Error;
use baton_core::{ErrorKind, Layout};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, GetPromptRequestParams, GetPromptResponse,
    Implementation, ListPromptsResult, ListToolsResult, PaginatedRequestParams, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};

use crate::browser_manager::BrowserManager;
use crate::browsing::{Browsing, check_size, tool_result};
use crate::log::Log;
use crate::proxy::{ChildHome, ChildSpec, PendingProxy};
use crate::tools::Coordinator;

/// Options of `baton mcp --proxy` inside a sandbox.
#[derive(Debug, Clone)]
pub struct SandboxOptions {
    /// This `baton`, started again as the child that serves Baton's own tools.
    pub baton: PathBuf,
    /// The agent's working folder: the children's workspace.
    pub workdir: PathBuf,
    /// `--child` values, or Playwright MCP when empty.
    pub children: Vec<String>,
    pub no_browser: bool,
    pub headed: bool,
    pub quiet: bool,
    /// Serve child tools that run arbitrary code: inside the sandbox, they reach no more than
    /// the agent's own shell does.
    pub allow_unsafe_tools: bool,
}

/// The name Baton's own child is served under (its tools keep their names).
pub const BATON_CHILD: &str = "baton";

/// The proxy inside a sandbox.
#[derive(Clone)]
struct SandboxProxy {
    browsing: Arc<Browsing>,
    log: Log,
}

/// Serves the proxy over stdio until the client goes away or the process is told to stop;
/// then stops the browser and the children, and removes its private folder.
pub fn serve(options: SandboxOptions) -> Result<(), Error> {
    let files = tempfile::Builder::new()
        .prefix("baton-mcp-")
        .tempdir()
        .map_err(|e| {
            Error::new(
                ErrorKind::Io,
                format!("cannot make the proxy's folder in the sandbox's temporary folder: {e}"),
            )
        })?;
    let registry = Layout::at(files.path());
    let log = Log::new(&registry, options.quiet);
    let runtime = crate::runtime()?;
    let outcome = runtime.block_on(async {
        let proxy = SandboxProxy::start(&options, &registry, &log)?;
        let result = crate::serve_stdio(&proxy, &log).await;
        proxy.browsing.shutdown(&log).await;
        result
    });
    runtime.shutdown_background();
    outcome
}

/// The children in the order they are served: Baton's own first, then `children` (or
/// Playwright MCP), numbered from 1 as `baton mcp --child` numbers them.
fn child_specs(options: &SandboxOptions) -> Result<Vec<ChildSpec>, Error> {
    let mut specs = vec![ChildSpec {
        name: BATON_CHILD.into(),
        program: options.baton.display().to_string(),
        args: vec!["mcp".into(), "--quiet".into()],
    }];
    if options.children.is_empty() {
        specs.push(crate::proxy::default_child(&options.workdir));
    }
    for (i, child) in options.children.iter().enumerate() {
        specs.push(
            ChildSpec::parse(child, i + 1).map_err(|e| Error::new(ErrorKind::InvalidInput, e))?,
        );
    }
    if let Some(clash) = specs.iter().skip(1).find(|s| s.name == BATON_CHILD) {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!(
                "--child {}=…: {BATON_CHILD:?} names Baton's own tools here; name the child \
                 otherwise",
                clash.name
            ),
        ));
    }
    Ok(specs)
}

impl SandboxProxy {
    fn start(options: &SandboxOptions, registry: &Layout, log: &Log) -> Result<Self, Error> {
        let specs = child_specs(options)?;
        let owner = format!("baton-mcp[{}] in a sandbox", std::process::id());
        let browser =
            BrowserManager::new(registry.clone(), owner, !options.headed, true).map_err(|e| {
                Error::new(
                    ErrorKind::Io,
                    format!("cannot reserve a port for the browser: {e}"),
                )
            })?;
        let taken = Coordinator::ALL
            .into_iter()
            .map(|c| c.name().to_string())
            .collect();
        let home = ChildHome {
            workspace: options.workdir.clone(),
            files: registry.root().to_path_buf(),
        };
        let proxy = PendingProxy::spawn(
            specs,
            browser.port(),
            home,
            taken,
            options.allow_unsafe_tools,
            log,
        );
        log.line(&format!(
            "serving in a sandbox: Baton's tools through its door, the browser here (files in {})",
            registry.root().display()
        ));
        Ok(SandboxProxy {
            browsing: Arc::new(Browsing {
                browser,
                proxy: Some(proxy),
                lazy_browser: !options.no_browser,
                registry: registry.clone(),
            }),
            log: log.clone(),
        })
    }

    fn own_tools() -> Vec<rmcp::model::Tool> {
        Coordinator::ALL
            .into_iter()
            .map(Coordinator::tool)
            .collect()
    }
}

impl ServerHandler for SandboxProxy {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_prompts()
                .build(),
        )
        .with_server_info(Implementation::new("baton", env!("CARGO_PKG_VERSION")))
        .with_instructions(crate::server::INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let tools = self
            .browsing
            .list_tools(Self::own_tools(), &|_| true, &self.log, context.peer)
            .await;
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = request.name.to_string();
        check_size(request.arguments.as_ref().unwrap_or(&Default::default()))?;
        if let Some(tool) = Coordinator::named(&name) {
            let arguments = request.arguments.unwrap_or_default();
            let outcome = self
                .browsing
                .coordinator(tool, &arguments, Coordinator::ALL.len())
                .await;
            return Ok(tool_result(outcome)?.into());
        }
        Ok(self
            .browsing
            .forward(&name, request, &self.log)
            .await?
            .into())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        Ok(ListPromptsResult::with_all_items(crate::prompts::list()))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        crate::prompts::get(&request.name, request.arguments.as_ref()).map(Into::into)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(children: &[&str]) -> SandboxOptions {
        SandboxOptions {
            baton: PathBuf::from("/usr/bin/baton"),
            workdir: PathBuf::from("/work/app"),
            children: children.iter().map(|c| c.to_string()).collect(),
            no_browser: false,
            headed: false,
            quiet: true,
            allow_unsafe_tools: false,
        }
    }

    /// Baton's tools come from this `baton` through its door, served first; the browser's
    /// child follows, Playwright MCP unless the agent names others.
    #[test]
    fn baton_is_the_first_child_and_playwright_the_default_second() {
        let specs = child_specs(&options(&[])).unwrap();
        assert_eq!(specs[0].name, BATON_CHILD);
        assert_eq!(specs[0].program, "/usr/bin/baton");
        assert_eq!(specs[0].args, ["mcp", "--quiet"]);
        assert_eq!(specs[1].name, "playwright");
        assert_eq!(specs.len(), 2);
        let named = child_specs(&options(&["files=srv --root x", "other"])).unwrap();
        let names: Vec<_> = named.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, [BATON_CHILD, "files", "child2"]);
    }

    #[test]
    fn a_child_may_not_take_baton_s_name_or_be_empty() {
        let err = child_specs(&options(&["baton=sh -c id"])).unwrap_err();
        assert!(err.to_string().contains("Baton's own tools"), "{err}");
        assert!(child_specs(&options(&["  "])).is_err());
    }
}
