//! What a server keeps in front of its child servers and the browser behind them: the
//! coordinator tools (`coordinator_status`, the browser's launch, stop and list), a child
//! tool's call forwarded with the browser launched first, and the first `tools/list`'s wait
//! for children still starting. Two servers use it: the project's ([`crate::BatonServer`])
//! and the one inside an agent's sandbox ([`crate::sandboxed`]), whose Baton tools are a
//! child of its own.

use std::sync::Arc;
use std::time::Duration;

use baton_api::Error;
use baton_core::{ErrorKind, Layout};
use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock, JsonObject, Tool};
use rmcp::service::Peer;
use rmcp::{ErrorData as McpError, RoleServer};
use serde_json::Value;

use crate::browser_manager::BrowserManager;
use crate::log::Log;
use crate::proxy::{PendingProxy, Proxy};
use crate::tools::{self, Coordinator};

/// Arguments larger than this are refused before they are parsed.
pub const MAX_ARGUMENT_BYTES: usize = 4 * 1024 * 1024;
/// How long a `tools/list` waits for child servers that are still starting before it answers
/// with the tools that are ready and announces the rest with `tools/list_changed`. Claude Code
/// gives a server about two seconds for its first list in `-p` runs (measured: a child ready
/// after 1.8 s made the first turn, one after 3 s did not, and then none of Baton's tools did).
pub const CHILDREN_WAIT: Duration = Duration::from_millis(1500);

/// The children, the browser, and where browsers are registered.
pub struct Browsing {
    pub browser: Arc<BrowserManager>,
    pub proxy: Option<PendingProxy>,
    /// Whether a child tool call first makes sure the browser runs.
    pub lazy_browser: bool,
    /// The registry `coordinator_list_browsers` reads.
    pub registry: Layout,
}

impl Browsing {
    /// Stops the browser, then disconnects and ends the children (the design's order).
    pub async fn shutdown(&self, log: &Log) {
        if self.browser.stop().await {
            log.line("browser stopped");
        }
        if let Some(proxy) = &self.proxy {
            proxy.shutdown().await;
            log.line("child servers stopped");
        }
    }

    /// The proxy once its children have started; `None` when not proxying.
    pub async fn proxy(&self) -> Option<Arc<Proxy>> {
        self.proxy.as_ref()?.ready().await
    }

    /// The children's tools that `allows` lets through, once the children have started.
    pub async fn child_tools(&self, allows: &(dyn Fn(&str) -> bool + Sync)) -> Vec<Tool> {
        match self.proxy().await {
            Some(proxy) => proxy
                .tools
                .iter()
                .filter(|t| allows(&t.name))
                .cloned()
                .collect(),
            None => Vec::new(),
        }
    }

    /// `own` and the children's tools, waiting [`CHILDREN_WAIT`] at most for children still
    /// starting (npx fetching Playwright MCP): past that, `own` now and the rest announced to
    /// `peer` with `tools/list_changed` when they are cached, rather than no tools at all for
    /// a host that stops waiting.
    pub async fn list_tools(
        self: &Arc<Self>,
        mut own: Vec<Tool>,
        allows: &(dyn Fn(&str) -> bool + Sync),
        log: &Log,
        peer: Peer<RoleServer>,
    ) -> Vec<Tool> {
        if let Ok(children) = tokio::time::timeout(CHILDREN_WAIT, self.child_tools(allows)).await {
            own.extend(children);
            return own;
        }
        log.line("children still starting; listing Baton's own tools first");
        let browsing = self.clone();
        tokio::spawn(async move {
            if browsing.proxy().await.is_some() {
                let _ = peer.notify_tool_list_changed().await;
            }
        });
        own
    }

    /// A coordinator tool's result; `own_tools` is how many tools the server offers itself.
    pub async fn coordinator(
        &self,
        tool: Coordinator,
        arguments: &JsonObject,
        own_tools: usize,
    ) -> Result<Value, Error> {
        let browser = &self.browser;
        Ok(match tool {
            Coordinator::Status => {
                let _: tools::NoArgs = tools::parse(arguments)?;
                let proxy = self.proxy().await;
                let mut children = Vec::new();
                if let Some(proxy) = &proxy {
                    for child in &proxy.children {
                        children.push(child.status().await);
                    }
                }
                serde_json::json!({
                    "children": children,
                    "browser": {
                        "cdp_port": browser.port(),
                        "cdp_endpoint": browser.cdp_endpoint(),
                        "lazy": self.lazy_browser,
                        "running": browser.current().await,
                    },
                    "tools": { "baton": own_tools, "children": proxy.as_ref().map_or(0, |p| p.tools.len()) },
                })
            }
            Coordinator::ListBrowsers => {
                let _: tools::NoArgs = tools::parse(arguments)?;
                let layout = self.registry.clone();
                let browsers =
                    tokio::task::spawn_blocking(move || baton_browser::registry::list(&layout))
                        .await
                        .map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))??;
                serde_json::json!({ "browsers": browsers })
            }
            Coordinator::LaunchBrowser => {
                let a: tools::LaunchBrowser = tools::parse(arguments)?;
                let record = browser
                    .ensure(Some(!a.headed))
                    .await
                    .map_err(|e| Error::new(ErrorKind::BrowserError, e))?;
                serde_json::json!({ "browser": record })
            }
            Coordinator::StopBrowser => {
                let _: tools::NoArgs = tools::parse(arguments)?;
                serde_json::json!({ "stopped": browser.stop().await })
            }
        })
    }

    /// Forwards `request` (served name `name`) to its child, launching the browser first when
    /// calls do; an unknown name is the caller's error.
    pub async fn forward(
        &self,
        name: &str,
        request: CallToolRequestParams,
        log: &Log,
    ) -> Result<CallToolResult, McpError> {
        let proxy = self.proxy().await;
        let Some((child, original)) = proxy.as_ref().and_then(|p| p.route(name)) else {
            return Err(unknown_tool(name));
        };
        if self.lazy_browser
            && let Err(reason) = self.browser.ensure(None).await
        {
            log.line(&reason);
            return Ok(CallToolResult::error(vec![ContentBlock::text(format!(
                "{name} needs the browser, and {reason}; the next call tries again"
            ))]));
        }
        let mut params = CallToolRequestParams::new(original.to_string());
        params.arguments = request.arguments;
        params.meta = request.meta;
        child.call(original, params, log).await
    }
}

/// Arguments over [`MAX_ARGUMENT_BYTES`] are refused before anything looks at them.
pub fn check_size(arguments: &JsonObject) -> Result<(), McpError> {
    let size = serde_json::to_vec(arguments).map_or(0, |b| b.len());
    if size > MAX_ARGUMENT_BYTES {
        return Err(McpError::invalid_params(
            format!("arguments of {size} bytes are over the {MAX_ARGUMENT_BYTES}-byte limit"),
            None,
        ));
    }
    Ok(())
}

pub fn unknown_tool(name: &str) -> McpError {
    McpError::invalid_params(
        format!("unknown tool {name:?}; tools/list names the tools this server offers"),
        None,
    )
}

/// A tool's outcome as MCP content: structured JSON plus text; failures the agent can act on
/// are tool errors, malformed arguments are protocol errors.
pub fn tool_result(outcome: Result<Value, Error>) -> Result<CallToolResult, McpError> {
    match outcome {
        Ok(value) => Ok(CallToolResult::structured(value)),
        Err(e) if e.kind() == ErrorKind::InvalidArguments => {
            Err(McpError::invalid_params(e.to_string(), None))
        }
        Err(e) => {
            let mut result = CallToolResult::error(vec![ContentBlock::text(e.to_string())]);
            result.structured_content = Some(e.to_json());
            Ok(result)
        }
    }
}
