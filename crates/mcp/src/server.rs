//! [`BatonServer`]: the MCP server. Baton's own tools are `baton-api`'s catalogue (each
//! operation declared there once) and the coordinator tools (`tools.rs`); the server lists
//! them filtered per agent, merges a child server's tools behind them (the proxy), and
//! dispatches a call by looking its name up in the catalogue.
//!
//! Every operation runs the same library call the CLI makes, on a blocking thread. Many
//! servers on one project stay consistent because they share nothing but `.coordination/`.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use baton_api::{OpenProject, Operation};
use baton_core::Confinement;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorCode,
    GetPromptRequestParams, GetPromptResponse, Implementation, JsonObject, ListPromptsResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, ResourceContents,
    ResourceUpdatedNotificationParam, ServerCapabilities, ServerConfig, SubscribeRequestParams,
    UnsubscribeRequestParams,
};
use rmcp::service::{Peer, RequestContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::Value;

use crate::browsing::{Browsing, check_size, tool_result, unknown_tool};
use crate::filter::ToolFilter;
use crate::log::Log;
use crate::resources;
use crate::tools::{self, Coordinator};
use baton_api::Error;
use baton_core::ErrorKind;

/// What the server tells a client it is for.
pub const INSTRUCTIONS: &str = "Baton coordinates parallel coding agents through one .coordination/ folder. \
     Workers: task_claim, task_start, task_heartbeat while working, task_complete or task_fail. \
     Leads: task_add, task_status, aggregate. Signals: signal_write / signal_wait. \
     Orchestration: invoke_agent, complete_invocation, track_handoff, start_parallel_execution, \
     aggregate_parallel_results, get_routing_recommendation.";
/// How often `signal_wait` reports progress.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);

/// One client's view of the server. Over stdio there is one; over HTTP each session gets its
/// own ([`BatonServer::for_session`]), sharing the project, the children and the browser but
/// not subscriptions.
#[derive(Clone)]
pub struct BatonServer {
    inner: Arc<Inner>,
    session: Arc<Session>,
}

/// What belongs to one client connection.
#[derive(Default)]
struct Session {
    subscriptions: Mutex<HashSet<String>>,
    feed: Mutex<Option<FeedPump>>,
}

struct Inner {
    project: OpenProject,
    /// Where paths named in tool calls may lead (the project, widened by `--allow-path`).
    confinement: Confinement,
    filter: ToolFilter,
    log: Log,
    browsing: Arc<Browsing>,
    speaker: Speaker,
    /// Whether it offers the coordinator tools: not behind an attempt's door, on the lead's
    /// side, where a browser it launched would run outside the agent's sandbox (the agent's
    /// own proxy, inside it, has them).
    browser_tools: bool,
}

impl Inner {
    /// The context a tool call runs in.
    fn context(&self) -> baton_api::Context<'_> {
        let mut cx = self.project.context(&self.confinement);
        cx.caller = self.speaker.caller.clone();
        cx.attempt = self.speaker.attempt.clone();
        cx.reads_only = self.speaker.reads_only;
        cx
    }
}

/// Whom a server speaks for: the lead (no caller), or an agent as itself, with what the
/// catalogue needs to know of it, looked up before the server starts (a store is not read from
/// the server's async tasks).
#[derive(Debug, Clone, Default)]
pub struct Speaker {
    /// The agent (`BATON_AGENT` where it was started): it asks, sends and reads as that agent
    /// only, and acting as another is refused.
    pub caller: Option<String>,
    /// Behind an attempt's door, the task that attempt works ([`baton_api::Context::attempt`]).
    pub attempt: Option<String>,
    /// Its agent is a team's planner ([`baton_api::planning::planner_of`]): it is listed the
    /// planner's operations too (the catalogue still asks at each call).
    pub planner: bool,
    /// Its agent only reads (a team's judge, as its door says): it is listed, and may call,
    /// only operations that change nothing.
    pub reads_only: bool,
}

/// Whether an agent's server lists tool `name`: the catalogue's agent operations
/// ([`baton_api::CatalogueEntry::callers`]), a planner's too for a planner, only those that
/// read for an agent that only reads, and the server's own (the browser's).
fn for_agents(name: &str, speaker: &Speaker) -> bool {
    baton_api::find(name).is_none_or(|entry| {
        (entry.callers.agents() || (speaker.planner && entry.callers.planner))
            && (entry.read_only || !speaker.reads_only)
    })
}

/// The change feed forwarding resource updates to the client, started on first subscribe.
struct FeedPump {
    _feed_thread: std::thread::JoinHandle<()>,
}

impl BatonServer {
    /// A server on `project`; `filter` selects the tools served (`--agent`); `browsing` holds
    /// the child servers and the browser behind them.
    pub fn new(
        project: OpenProject,
        confinement: Confinement,
        filter: ToolFilter,
        log: Log,
        browsing: Browsing,
    ) -> BatonServer {
        BatonServer {
            inner: Arc::new(Inner {
                project,
                confinement,
                filter,
                log,
                browsing: Arc::new(browsing),
                speaker: Speaker::default(),
                browser_tools: true,
            }),
            session: Arc::default(),
        }
    }

    /// The same server speaking for `speaker` (set before it is shared with a session).
    pub fn with_speaker(mut self, speaker: Speaker) -> BatonServer {
        Arc::get_mut(&mut self.inner)
            .expect("the speaker is set before the server is shared")
            .speaker = speaker;
        self
    }

    /// The same server without the coordinator tools (behind an attempt's door).
    pub fn without_browser_tools(mut self) -> BatonServer {
        Arc::get_mut(&mut self.inner)
            .expect("set before the server is shared")
            .browser_tools = false;
        self
    }

    /// The same server for a new client connection, with its own subscriptions.
    pub fn for_session(&self) -> BatonServer {
        BatonServer {
            inner: self.inner.clone(),
            session: Arc::default(),
        }
    }

    /// Stops the browser, then disconnects and ends the children (the design's order).
    pub async fn shutdown(&self) {
        self.inner.browsing.shutdown(&self.inner.log).await;
    }

    /// Every tool served: Baton's own, then the children's, as this agent may use them. Waits
    /// for the children to start, so the first list is complete.
    pub async fn all_tools(&self) -> Vec<rmcp::model::Tool> {
        let mut tools = self.own_tools();
        let filter = &self.inner.filter;
        tools.extend(
            self.inner
                .browsing
                .child_tools(&|name| filter.allows(name))
                .await,
        );
        tools
    }

    pub fn log(&self) -> &Log {
        &self.inner.log
    }

    /// How many of Baton's own tools this server offers (without building their schemas).
    pub fn own_tool_count(&self) -> usize {
        tools::own_tool_names()
            .filter(|name| self.offers(name))
            .count()
    }

    /// Whether this server offers its own tool `name`: the agent's filter (`--agent`) allows
    /// it, and an agent's server (`BATON_AGENT`) offers agent operations only.
    fn offers(&self, name: &str) -> bool {
        self.inner.filter.allows(name)
            && (self.inner.speaker.caller.is_none() || for_agents(name, &self.inner.speaker))
            && (self.inner.browser_tools || Coordinator::named(name).is_none())
    }

    pub fn own_tools(&self) -> Vec<rmcp::model::Tool> {
        tools::own_tools()
            .iter()
            .filter(|tool| self.offers(&tool.name))
            .cloned()
            .collect()
    }

    async fn call_own(
        &self,
        name: String,
        arguments: JsonObject,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let started = Instant::now();
        let outcome = if name == baton_api::signals::WaitSignals::NAME {
            self.signal_wait(arguments, context).await?
        } else if let Some(tool) = Coordinator::named(&name) {
            if !self.offers(&name) {
                return Err(unknown_tool(&name));
            }
            let own = self.own_tool_count();
            self.inner.browsing.coordinator(tool, &arguments, own).await
        } else {
            let Some(entry) = baton_api::find(&name) else {
                return Err(unknown_tool(&name));
            };
            let inner = self.inner.clone();
            let task = tokio::task::spawn_blocking(move || {
                entry.call(&inner.context(), Value::Object(arguments))
            });
            // A call that waits (ask_lead, inbox_read with wait) says so every second.
            let outcome = with_progress(task, context, None, format!("{name} waiting"))
                .await
                .map_err(|e| {
                    McpError::internal_error(format!("tool {name} panicked: {e}"), None)
                })?;
            if entry.text_only
                && let Ok(value) = &outcome
            {
                return Ok(CallToolResult::success(vec![ContentBlock::text(
                    value.to_string(),
                )]));
            }
            outcome
        };
        self.inner.log.line(&format!(
            "tool {name}: {} in {} ms",
            if outcome.is_ok() { "ok" } else { "error" },
            started.elapsed().as_millis()
        ));
        tool_result(outcome)
    }

    /// `signal_wait`, with a progress notification every second while it waits (when the
    /// client asked for progress).
    async fn signal_wait(
        &self,
        arguments: JsonObject,
        context: &RequestContext<RoleServer>,
    ) -> Result<Result<Value, Error>, McpError> {
        // Planning reads the store (which run a name means): a blocking call, like the wait.
        let inner = self.inner.clone();
        let planned = tokio::task::spawn_blocking(move || {
            tools::signal_wait_plan(&inner.context(), &arguments)
        })
        .await
        .map_err(|e| McpError::internal_error(format!("signal_wait panicked: {e}"), None))?;
        let wait = match planned {
            Ok(wait) => wait,
            Err(e) => return Ok(Err(e)),
        };
        let project = self.inner.project.clone();
        let total = wait.timeout.map(|t| t.as_secs_f64());
        let labels: Vec<String> = wait.targets.iter().map(|t| t.label()).collect();
        let task = tokio::task::spawn_blocking(move || {
            baton_live::wait::wait_for_signals(&*project.signals, &*project.tasks, &wait, |_| {})
                .map(|outcome| serde_json::to_value(outcome).expect("serialises"))
                .map_err(Error::from)
        });
        with_progress(
            task,
            context,
            total,
            format!("waiting for {}", labels.join(", ")),
        )
        .await
        .map_err(|e| McpError::internal_error(format!("signal_wait panicked: {e}"), None))
    }

    /// Starts forwarding change-feed events as `resources/updated` to `peer`, once.
    fn ensure_feed(&self, peer: Peer<RoleServer>) -> Result<(), McpError> {
        let mut feed = self.session.feed.lock().expect("feed lock");
        if feed.is_some() {
            return Ok(());
        }
        let changes = self
            .inner
            .project
            .feed(baton_live::WatchMode::default())
            .map_err(|e| {
                McpError::internal_error(format!("cannot watch the project: {e}"), None)
            })?;
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let thread = std::thread::Builder::new()
            .name("baton-mcp-feed".into())
            .spawn(move || {
                while let Some(event) = changes.recv() {
                    if tx.send(event).is_err() {
                        break;
                    }
                }
            })
            .map_err(|e| McpError::internal_error(e.to_string(), None))?;
        let session = self.session.clone();
        tokio::spawn(async move {
            while let Some(event) = rx.recv().await {
                let uris: Vec<String> = {
                    let subscribed = session.subscriptions.lock().expect("subscriptions lock");
                    resources::affected(&event)
                        .iter()
                        .filter(|uri| subscribed.contains(**uri))
                        .map(|uri| uri.to_string())
                        .collect()
                };
                for uri in uris {
                    if peer
                        .notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
                        .await
                        .is_err()
                    {
                        return; // the client went away
                    }
                }
            }
        });
        *feed = Some(FeedPump {
            _feed_thread: thread,
        });
        Ok(())
    }
}

/// Waits for `task`, sending a progress notification every [`PROGRESS_EVERY`] while it runs
/// when the client asked for progress (a token), saying `message` and the seconds so far of
/// `total`.
async fn with_progress<T>(
    mut task: tokio::task::JoinHandle<T>,
    context: &RequestContext<RoleServer>,
    total: Option<f64>,
    message: String,
) -> Result<T, tokio::task::JoinError> {
    let token = context.meta.get_progress_token();
    let started = Instant::now();
    let mut ticker = tokio::time::interval(PROGRESS_EVERY);
    ticker.tick().await; // the first tick is immediate
    loop {
        tokio::select! {
            done = &mut task => return done,
            _ = ticker.tick() => {
                if let Some(token) = &token {
                    let mut progress =
                        ProgressNotificationParam::new(token.clone(), started.elapsed().as_secs_f64());
                    progress.total = total;
                    progress.message = Some(message.clone());
                    let _ = context.peer.notify_progress(progress).await;
                }
            }
        }
    }
}

impl ServerHandler for BatonServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_resources()
                .enable_resources_subscribe()
                .enable_prompts()
                .build(),
        )
        .with_server_info(Implementation::new("baton", env!("CARGO_PKG_VERSION")))
        .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let filter = &self.inner.filter;
        let tools = self
            .inner
            .browsing
            .list_tools(
                self.own_tools(),
                &|name| filter.allows(name),
                &self.inner.log,
                context.peer,
            )
            .await;
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = request.name.to_string();
        let arguments = request.arguments.unwrap_or_default();
        check_size(&arguments)?;
        if !self.inner.filter.allows(&name) {
            return Err(unknown_tool(&name));
        }
        if tools::is_own(&name) {
            return Ok(self.call_own(name, arguments, &context).await?.into());
        }
        let mut forwarded = CallToolRequestParams::new(name.clone());
        forwarded.arguments = Some(arguments);
        forwarded.meta = request.meta;
        Ok(self
            .inner
            .browsing
            .forward(&name, forwarded, &self.inner.log)
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

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        Ok(ListResourcesResult::with_all_items(resources::list()))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let inner = self.inner.clone();
        let uri = request.uri.clone();
        let value = tokio::task::spawn_blocking(move || resources::read(&inner.context(), &uri))
            .await
            .map_err(|e| McpError::internal_error(e.to_string(), None))?;
        match value {
            Ok(value) => {
                let text = serde_json::to_string_pretty(&value).expect("serialises");
                Ok(ReadResourceResult::new(vec![
                    ResourceContents::text(text, request.uri).with_mime_type("application/json"),
                ])
                .into())
            }
            Err(e) if e.kind() == ErrorKind::UnknownResource => Err(McpError::new(
                ErrorCode::RESOURCE_NOT_FOUND,
                e.to_string(),
                None,
            )),
            Err(e) => Err(McpError::internal_error(e.to_string(), None)),
        }
    }

    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        if !resources::list().iter().any(|r| r.uri == request.uri) {
            return Err(McpError::new(
                ErrorCode::RESOURCE_NOT_FOUND,
                format!("unknown resource {:?}", request.uri),
                None,
            ));
        }
        self.ensure_feed(context.peer.clone())?;
        self.session
            .subscriptions
            .lock()
            .expect("subscriptions lock")
            .insert(request.uri);
        Ok(())
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.session
            .subscriptions
            .lock()
            .expect("subscriptions lock")
            .remove(&request.uri);
        Ok(())
    }
}
