//! The tools Baton serves itself: every operation in `baton-api`'s catalogue (declared there
//! once, with its arguments, result and handler), and the proxy's coordinator tools, declared
//! here once each. A tool's input schema is its request type's, its output schema its result
//! type's; a failure the agent can act on is a tool error carrying `{"error": {kind,
//! message}}`, malformed arguments are a protocol error.

use baton_api::signals::WaitSignals;
use baton_api::{CatalogueEntry, Context, Error};
use baton_live::wait::SignalWait;
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

/// The longest a `signal_wait` may block: a tool call holds the agent's turn.
pub const MAX_WAIT_SECONDS: u64 = 600;

fn annotations(read_only: bool) -> ToolAnnotations {
    if read_only {
        ToolAnnotations::new().read_only(true).open_world(false)
    } else {
        ToolAnnotations::new()
            .read_only(false)
            .destructive(false)
            .open_world(false)
    }
}

/// An operation as an MCP tool.
pub fn operation_tool(entry: &CatalogueEntry) -> Tool {
    let tool = Tool::new(entry.name, entry.description, entry.input_schema())
        .with_annotations(annotations(entry.read_only));
    if entry.text_only {
        return tool;
    }
    tool.with_raw_output_schema(entry.output_schema())
}

/// The proxy's own tools: the child servers and the browser behind them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coordinator {
    Status,
    ListBrowsers,
    LaunchBrowser,
    StopBrowser,
}

/// `coordinator_launch_browser`'s arguments.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LaunchBrowser {
    /// Show the browser window instead of running headless.
    #[serde(default)]
    pub headed: bool,
}

/// No arguments.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

impl Coordinator {
    pub const ALL: [Coordinator; 4] = [
        Coordinator::Status,
        Coordinator::ListBrowsers,
        Coordinator::LaunchBrowser,
        Coordinator::StopBrowser,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Coordinator::Status => "coordinator_status",
            Coordinator::ListBrowsers => "coordinator_list_browsers",
            Coordinator::LaunchBrowser => "coordinator_launch_browser",
            Coordinator::StopBrowser => "coordinator_stop_browser",
        }
    }

    pub fn named(name: &str) -> Option<Coordinator> {
        Coordinator::ALL.into_iter().find(|c| c.name() == name)
    }

    pub fn tool(self) -> Tool {
        let (description, read_only, schema) = match self {
            Coordinator::Status => (
                "The proxy's state: each child server (running, pid, tools, restarts, what went wrong) and the browser (CDP port, running or not).",
                true,
                baton_api::operation::object_schema::<NoArgs>(),
            ),
            Coordinator::ListBrowsers => (
                "Every browser in the project's registry (port, pid, owner, headless), with whether it still runs.",
                true,
                baton_api::operation::object_schema::<NoArgs>(),
            ),
            Coordinator::LaunchBrowser => (
                "Launch the browser on the proxy's CDP port now (child tools launch it on first use anyway).",
                false,
                baton_api::operation::object_schema::<LaunchBrowser>(),
            ),
            Coordinator::StopBrowser => (
                "Stop the proxy's browser; the next child tool call launches a new one.",
                false,
                baton_api::operation::object_schema::<NoArgs>(),
            ),
        };
        Tool::new(self.name(), description, schema).with_annotations(annotations(read_only))
    }
}

/// Every tool Baton serves itself, in the order they are listed: the catalogue's operations,
/// then the coordinator tools. Built once per process: the schemas (about 70 KB of JSON, input
/// and output) take a couple of milliseconds in a fresh process; see [`prepare`].
pub fn own_tools() -> &'static [Tool] {
    static TOOLS: std::sync::OnceLock<Vec<Tool>> = std::sync::OnceLock::new();
    TOOLS.get_or_init(|| {
        baton_api::catalogue()
            .iter()
            .map(operation_tool)
            .chain(Coordinator::ALL.into_iter().map(Coordinator::tool))
            .collect()
    })
}

/// The names of Baton's own tools, in the order they are listed (cheap: no schemas).
pub fn own_tool_names() -> impl Iterator<Item = &'static str> {
    baton_api::catalogue()
        .iter()
        .map(|entry| entry.name)
        .chain(Coordinator::ALL.into_iter().map(Coordinator::name))
}

/// Starts building the tool list on a thread of its own when a server starts, so the work
/// overlaps the client's `initialize` round trip instead of following its first `tools/list`.
pub fn prepare() {
    let _ = std::thread::Builder::new()
        .name("baton-mcp-tools".into())
        .spawn(|| {
            own_tools();
        });
}

/// Whether `name` is one of Baton's own tools (not a child's).
pub fn is_own(name: &str) -> bool {
    baton_api::find(name).is_some() || Coordinator::named(name).is_some()
}

/// The wait `signal_wait`'s arguments describe, checked, within the tool's time bound.
pub fn signal_wait_plan(cx: &Context, arguments: &JsonObject) -> Result<SignalWait, Error> {
    let request: WaitSignals = baton_api::operation::parse(Value::Object(arguments.clone()))?;
    if request
        .timeout_seconds
        .is_some_and(|t| t > MAX_WAIT_SECONDS)
    {
        return Err(Error::invalid_arguments(format!(
            "timeout_seconds must be between 1 and {MAX_WAIT_SECONDS}"
        )));
    }
    request.plan(cx)
}

/// Parses arguments of a coordinator tool.
pub fn parse<T: serde::de::DeserializeOwned>(arguments: &JsonObject) -> Result<T, Error> {
    baton_api::operation::parse(Value::Object(arguments.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coordinator_names_round_trip_and_do_not_shadow_operations() {
        for tool in Coordinator::ALL {
            assert_eq!(Coordinator::named(tool.name()), Some(tool));
            assert!(baton_api::find(tool.name()).is_none(), "{}", tool.name());
        }
    }

    #[test]
    fn every_tool_has_an_object_input_schema() {
        for tool in own_tools() {
            assert_eq!(tool.input_schema["type"], "object", "{}", tool.name);
        }
    }

    #[test]
    fn no_tool_schema_carries_a_format_json_schema_does_not_define() {
        fn formats(value: &serde_json::Value, out: &mut Vec<String>) {
            match value {
                serde_json::Value::Object(map) => {
                    if let Some(serde_json::Value::String(f)) = map.get("format") {
                        out.push(f.clone());
                    }
                    map.values().for_each(|v| formats(v, out));
                }
                serde_json::Value::Array(items) => items.iter().for_each(|v| formats(v, out)),
                _ => {}
            }
        }
        let mut seen = Vec::new();
        let mut integers = 0;
        for tool in own_tools() {
            let schema = serde_json::Value::Object((*tool.input_schema).clone());
            formats(&schema, &mut seen);
            integers += schema.to_string().matches("\"integer\"").count();
            if let Some(output) = &tool.output_schema {
                formats(&serde_json::Value::Object((**output).clone()), &mut seen);
            }
        }
        assert!(integers > 0, "the catalogue has integer arguments to check");
        let standard = [
            "date-time",
            "date",
            "time",
            "duration",
            "email",
            "uri",
            "uuid",
            "hostname",
            "ipv4",
            "ipv6",
            "regex",
        ];
        seen.retain(|f| !standard.contains(&f.as_str()));
        assert!(seen.is_empty(), "non-standard formats: {seen:?}");
    }
}
