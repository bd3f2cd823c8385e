//! A hostile-input sweep of `baton mcp`, driven by `tools/list` itself so that a new tool is
//! covered without editing this test: for every tool and every string argument (nested ones
//! included, found by walking the tool's input schema), traversal, absolute paths, symlink
//! escapes, control characters, over-long and empty values, then wrong types. After each call
//! the server must still answer, a canary folder outside the project must be byte-for-byte
//! unchanged, no answer may carry a byte of a file outside the project, and a file inside the
//! project that is not a signal must be unchanged. Over stdio and over `--http`.

use baton_test_support as support;

use std::collections::BTreeMap;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};
use support::Project;
use support::mcp::RawClient;
use support::mcp_http::{HttpClient, initialize, post, served};

/// What the canary's secret file holds; no answer may contain it.
const SECRET: &str = "CANARY-7f3a9c-do-not-leak";
/// What a project file that is not a signal holds.
const PRECIOUS: &str = "precious notes, not a signal\n";

/// The project, and beside it a canary folder the server must never touch.
struct World {
    project: Project,
    canary: tempfile::TempDir,
}

impl World {
    fn new() -> World {
        let project = Project::init();
        project.ok(&["leader", "add-task", "A task to aim at"]);
        let canary = tempfile::tempdir().unwrap();
        let c = canary.path();
        std::fs::write(c.join("secret.txt"), SECRET).unwrap();
        // A signal outside the project: clearing it would be a deletion outside.
        std::fs::write(c.join(".ui-test-done"), "done\n").unwrap();
        std::fs::create_dir(c.join("sub")).unwrap();
        std::fs::write(c.join("sub/notes.md"), format!("{SECRET} in a folder\n")).unwrap();
        let p = project.path();
        std::fs::write(p.join("precious.txt"), PRECIOUS).unwrap();
        // Escapes planted inside the project.
        symlink(c, p.join("escape")).unwrap();
        symlink(c.join("secret.txt"), p.join("link.md")).unwrap();
        symlink(c.join("dangling-target"), p.join("dangling")).unwrap();
        std::fs::create_dir(p.join("src")).unwrap();
        symlink(c.join("sub"), p.join("src/vendored")).unwrap();
        World { project, canary }
    }

    /// Every entry under the canary, with its kind and bytes (links not followed).
    fn canary_snapshot(&self) -> BTreeMap<PathBuf, String> {
        let mut seen = BTreeMap::new();
        snapshot(self.canary.path(), self.canary.path(), &mut seen);
        seen
    }

    /// String values an agent might be told to pass, aimed at the canary.
    fn hostile_strings(&self) -> Vec<String> {
        let c = self.canary.path();
        let name = c.file_name().unwrap().to_str().unwrap();
        let mut values: Vec<String> = vec![
            format!("../{name}/secret.txt"),
            format!("../{name}/.ui-test-done"),
            format!("src/../../{name}/new-file"),
            "../../../../../../../../etc/passwd".into(),
            "/etc/passwd".into(),
            "escape/secret.txt".into(),
            "escape/.ui-test-done".into(),
            "escape/new-file".into(),
            "link.md".into(),
            "dangling".into(),
            "src/vendored/notes.md".into(),
            "precious.txt".into(),
            "file:///etc/passwd".into(),
            "a\u{0}b".into(),
            "\u{1b}[2J\rgotcha".into(),
            String::new(),
            "x".repeat(70_000),
        ];
        for file in [
            "secret.txt",
            ".ui-test-done",
            "new-file",
            "sub/notes.md",
            "",
        ] {
            values.push(c.join(file).to_str().unwrap().to_string());
        }
        values
    }
}

fn snapshot(root: &Path, dir: &Path, seen: &mut BTreeMap<PathBuf, String>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        let meta = std::fs::symlink_metadata(&path).unwrap();
        let key = path.strip_prefix(root).unwrap().to_path_buf();
        if meta.file_type().is_symlink() {
            seen.insert(
                key,
                format!("link {:?}", std::fs::read_link(&path).unwrap()),
            );
        } else if meta.is_dir() {
            seen.insert(key, "dir".into());
            snapshot(root, &path, seen);
        } else {
            let bytes = std::fs::read(&path).unwrap();
            seen.insert(key, format!("file {}", String::from_utf8_lossy(&bytes)));
        }
    }
}

/// Either transport, as the sweep needs it.
trait Transport {
    fn request(&mut self, method: &str, params: Value) -> Value;
}

impl Transport for RawClient {
    fn request(&mut self, method: &str, params: Value) -> Value {
        RawClient::request(self, method, params)
    }
}

impl Transport for HttpClient {
    fn request(&mut self, method: &str, params: Value) -> Value {
        HttpClient::request(self, method, params)
    }
}

/// One step into an argument object.
#[derive(Debug, Clone)]
enum Step {
    Field(String),
    Index,
}

/// A string-valued place in a tool's arguments: a string, or the items of a list of strings.
#[derive(Debug, Clone)]
struct Leaf {
    path: Vec<Step>,
    list: bool,
}

/// Follows `$ref`, `allOf` and the `anyOf`/`oneOf` that an `Option` becomes.
fn resolve<'a>(schema: &'a Value, defs: &'a Value) -> &'a Value {
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        let name = reference.rsplit('/').next().unwrap();
        return resolve(&defs[name], defs);
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(options) = schema.get(key).and_then(Value::as_array)
            && let Some(first) = options
                .iter()
                .find(|o| o.get("type") != Some(&json!("null")))
        {
            return resolve(first, defs);
        }
    }
    schema
}

fn has_type(schema: &Value, wanted: &str) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) => t == wanted,
        Some(Value::Array(types)) => types.iter().any(|t| t == wanted),
        _ => false,
    }
}

fn leaves(schema: &Value, defs: &Value, path: Vec<Step>, out: &mut Vec<Leaf>) {
    let schema = resolve(schema, defs);
    if has_type(schema, "string") {
        out.push(Leaf { path, list: false });
    } else if has_type(schema, "array") {
        let items = resolve(&schema["items"], defs);
        if has_type(items, "string") {
            out.push(Leaf { path, list: true });
        } else {
            let mut inner = path.clone();
            inner.push(Step::Index);
            leaves(items, defs, inner, out);
        }
    } else if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        for (name, property) in properties {
            let mut inner = path.clone();
            inner.push(Step::Field(name.clone()));
            leaves(property, defs, inner, out);
        }
    }
}

/// A value a well-meaning caller would give: required fields filled, aimed at real things.
fn base(schema: &Value, defs: &Value, name: &str) -> Value {
    let schema = resolve(schema, defs);
    if let Some(first) = schema
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return first.clone();
    }
    if has_type(schema, "object") || schema.get("properties").is_some() {
        let mut object = Map::new();
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
            for (field, property) in properties {
                if required.contains(&field.as_str()) || field == "timeout_seconds" {
                    object.insert(field.clone(), base(property, defs, field));
                }
            }
        }
        return Value::Object(object);
    }
    if has_type(schema, "string") {
        return json!(match name {
            "agent" | "to_agent" => "analyst",
            "from_agent" => "user",
            "task" => "task-1",
            "status" => "completed",
            _ => "x",
        });
    }
    if has_type(schema, "integer") || has_type(schema, "number") {
        return json!(1);
    }
    if has_type(schema, "boolean") {
        return json!(false);
    }
    if has_type(schema, "array") {
        return json!([]);
    }
    Value::Null
}

/// `arguments` with `value` put at `path`, creating what is missing on the way.
fn with_value(mut arguments: Value, path: &[Step], value: Value) -> Value {
    let mut here = &mut arguments;
    for (i, step) in path.iter().enumerate() {
        let last = i == path.len() - 1;
        match step {
            Step::Field(name) => {
                if !here.is_object() {
                    *here = json!({});
                }
                let object = here.as_object_mut().unwrap();
                if last {
                    object.insert(name.clone(), value);
                    return arguments;
                }
                here = object.entry(name.clone()).or_insert(Value::Null);
            }
            Step::Index => {
                if here.as_array().is_none_or(|a| a.is_empty()) {
                    *here = json!([{}]);
                }
                here = &mut here.as_array_mut().unwrap()[0];
                if last {
                    *here = value;
                    return arguments;
                }
            }
        }
    }
    arguments
}

#[derive(Default)]
struct Tally {
    calls: usize,
    refused: usize,
    accepted: usize,
}

/// Runs the sweep over `client`; panics on the first call that touched or leaked the outside.
fn sweep(world: &World, client: &mut impl Transport) -> Tally {
    let before = world.canary_snapshot();
    let listed = client.request("tools/list", json!({}));
    let tools = listed["result"]["tools"].as_array().unwrap().clone();
    assert!(tools.len() >= 20, "{listed}");
    let mut tally = Tally::default();
    let mut check = |tool: &str, arguments: &Value, response: Value| {
        tally.calls += 1;
        let text = response.to_string();
        let shown: String = arguments.to_string().chars().take(200).collect();
        assert!(
            response.get("result").is_some() || response.get("error").is_some(),
            "{tool} {shown}: not a JSON-RPC response: {text}"
        );
        assert!(
            !text.contains(SECRET) && !text.contains("root:x:0:0"),
            "{tool} {shown} leaked a file from outside the project: {text}"
        );
        let refused =
            response.get("error").is_some() || response["result"]["isError"] == json!(true);
        if refused {
            tally.refused += 1;
        } else {
            tally.accepted += 1;
        }
        assert_eq!(
            world.canary_snapshot(),
            before,
            "{tool} {shown} changed the canary outside the project; answer: {text}"
        );
        assert_eq!(
            std::fs::read_to_string(world.project.path().join("precious.txt")).unwrap(),
            PRECIOUS,
            "{tool} {shown} changed a project file that is not a signal"
        );
    };
    let hostile = world.hostile_strings();
    let wrong_types = [
        json!(12345),
        json!(true),
        json!(null),
        json!({"path": "/etc/passwd"}),
        json!([["/etc/passwd"]]),
    ];
    for tool in &tools {
        let name = tool["name"].as_str().unwrap();
        let schema = &tool["inputSchema"];
        let defs = schema.get("$defs").cloned().unwrap_or(json!({}));
        let base_arguments = base(schema, &defs, "");
        let mut found = Vec::new();
        leaves(schema, &defs, Vec::new(), &mut found);
        for leaf in &found {
            let values = hostile
                .iter()
                .map(|s| if leaf.list { json!([s]) } else { json!(s) })
                .chain(wrong_types.iter().cloned());
            for value in values {
                let arguments = with_value(base_arguments.clone(), &leaf.path, value);
                let response = client.request(
                    "tools/call",
                    json!({"name": name, "arguments": arguments.clone()}),
                );
                check(name, &arguments, response);
            }
        }
        // The whole argument object of the wrong type, too.
        for value in &wrong_types {
            let response = client.request("tools/call", json!({"name": name, "arguments": value}));
            check(name, value, response);
        }
    }
    // Resources take URIs: none reaches a file.
    for uri in [
        "file:///etc/passwd",
        "agents://../../etc/passwd",
        "board://x",
    ] {
        let response = client.request("resources/read", json!({"uri": uri}));
        check("resources/read", &json!(uri), response);
    }
    // Still serving.
    let again = client.request("tools/list", json!({}));
    assert_eq!(
        again["result"]["tools"].as_array().unwrap().len(),
        tools.len()
    );
    tally
}

fn report(transport: &str, tally: &Tally) {
    eprintln!(
        "hostile sweep over {transport}: {} calls, {} refused (tool error or JSON-RPC error), {} accepted without touching the outside",
        tally.calls, tally.refused, tally.accepted
    );
    assert!(tally.calls >= 500, "the sweep found too few arguments");
    assert!(tally.refused > tally.accepted);
}

#[test]
fn every_tool_and_string_argument_over_stdio_stays_inside_the_project() {
    let world = World::new();
    let mut client = RawClient::start(world.project.command(&["mcp", "--quiet"]));
    let tally = sweep(&world, &mut client);
    report("stdio", &tally);
    assert_eq!(client.close(), Some(0));
}

#[test]
fn every_tool_and_string_argument_over_http_stays_inside_the_project() {
    let world = World::new();
    let mut server = world
        .project
        .spawn(&["mcp", "--quiet", "--http", "127.0.0.1:0"]);
    server.wait_stderr("listening on http://127.0.0.1:");
    let (addr, token) = served(&world.project.coordination());
    let token = token.as_str();

    // What a page in a browser, or another local user without the token, would send.
    let host = format!("127.0.0.1:{}", addr.port());
    let auth = format!("Bearer {token}");
    let init = initialize("hostile");
    let refused = [
        ("no token", vec![("Host", host.as_str())], 401),
        (
            "wrong token",
            vec![
                ("Host", host.as_str()),
                (
                    "Authorization",
                    "Bearer 0000000000000000000000000000000000000000",
                ),
            ],
            401,
        ),
        (
            "foreign Host",
            vec![
                ("Host", "evil.example:80"),
                ("Authorization", auth.as_str()),
            ],
            403,
        ),
        (
            "foreign Origin",
            vec![
                ("Host", host.as_str()),
                ("Authorization", auth.as_str()),
                ("Origin", "http://evil.example"),
            ],
            403,
        ),
    ];
    for (what, headers, status) in refused {
        let answer = post(addr, "/mcp", &headers, &init);
        assert_eq!(answer.status, status, "{what}: {}", answer.body);
        assert!(
            answer.header("mcp-session-id").is_none(),
            "{what} opened a session"
        );
    }

    let mut client = HttpClient::start(addr, token);
    let tally = sweep(&world, &mut client);
    report("HTTP", &tally);
    server.signal("TERM");
    let (code, _, _) = server.finish();
    assert_eq!(code, Some(0));
}

#[test]
fn the_reported_escapes_are_tool_errors_that_name_the_argument_and_the_rule() {
    let world = World::new();
    let outside = world.canary.path();
    let mut client = RawClient::start(world.project.command(&["mcp", "--quiet"]));
    let calls = [
        (
            "signal_write",
            json!({"path": outside.join("secret.txt")}),
            "path",
        ),
        (
            "signal_clear",
            json!({"path": outside.join(".ui-test-done")}),
            "path",
        ),
        (
            "invoke_agent",
            json!({"agent": "analyst", "prompt": "x",
                   "context": {"steering": [outside.join("secret.txt")]}}),
            "steering",
        ),
        (
            "track_handoff",
            json!({"from_agent": "user", "to_agent": "analyst",
                   "context": {"summary": "x", "artifacts": ["link.md"]}}),
            "artifacts",
        ),
    ];
    for (tool, arguments, argument) in calls {
        let response = client.call(tool, arguments);
        assert_eq!(response["result"]["isError"], true, "{tool}: {response}");
        let error = &response["result"]["structuredContent"]["error"];
        assert_eq!(error["kind"], "outside_project", "{tool}: {response}");
        let message = error["message"].as_str().unwrap();
        assert!(message.starts_with(argument), "{message}");
        assert!(message.contains("--allow-path"), "{message}");
    }
    assert_eq!(
        std::fs::read_to_string(outside.join(".ui-test-done")).unwrap(),
        "done\n"
    );
    // Inside the project, a file that is not a signal is neither overwritten nor removed.
    let response = client.call("signal_clear", json!({"path": "precious.txt"}));
    assert_eq!(
        response["result"]["structuredContent"]["error"]["kind"],
        "not_a_signal"
    );
    drop(client);

    // The user widens it on the command line, and then the same call goes through.
    let outside_arg = outside.to_str().unwrap();
    let mut widened =
        RawClient::start(
            world
                .project
                .command(&["mcp", "--quiet", "--allow-path", outside_arg]),
        );
    let response = widened.call(
        "signal_clear",
        json!({"path": outside.join(".ui-test-done")}),
    );
    assert_eq!(
        response["result"]["structuredContent"]["cleared"]
            .as_array()
            .map(Vec::len),
        Some(1),
        "{response}"
    );
    let response = widened.call(
        "invoke_agent",
        json!({"agent": "analyst", "prompt": "x",
               "context": {"steering": [outside.join("secret.txt")]}}),
    );
    assert!(
        response["result"]["structuredContent"]["prompt"]
            .as_str()
            .unwrap()
            .contains(SECRET),
        "{response}"
    );
    // Still no overwriting of what is not a signal, even where paths are allowed.
    let response = widened.call("signal_write", json!({"path": outside.join("secret.txt")}));
    assert_eq!(
        response["result"]["structuredContent"]["error"]["kind"],
        "not_a_signal"
    );
}

/// A client that opens sessions and drops them without closing them: at the cap a new one is
/// refused with a 503 that says why, a live session still works, and once the dropped ones
/// have been idle for `--http-idle` they are closed and new sessions open again.
#[test]
fn http_sessions_are_capped_and_idle_ones_are_closed() {
    let world = World::new();
    let mut server = world.project.spawn(&[
        "mcp",
        "--quiet",
        "--http",
        "127.0.0.1:0",
        "--http-max-sessions",
        "20",
        "--http-idle",
        "2s",
    ]);
    server.wait_stderr("listening on http://127.0.0.1:");
    let (addr, token) = served(&world.project.coordination());
    let token = token.as_str();
    let host = format!("127.0.0.1:{}", addr.port());
    let auth = format!("Bearer {token}");
    let headers = [("Host", host.as_str()), ("Authorization", auth.as_str())];
    let init = initialize("flood");

    let mut kept = HttpClient::start(addr, token);
    for _ in 1..20 {
        drop(HttpClient::start(addr, token));
    }
    let refused = post(addr, "/mcp", &headers, &init);
    assert_eq!(refused.status, 503, "{}", refused.body);
    assert!(
        refused.body.contains("--http-max-sessions"),
        "{}",
        refused.body
    );
    assert!(refused.header("mcp-session-id").is_none());
    let tools = kept.request("tools/list", json!({}));
    assert!(tools["result"]["tools"].is_array(), "{tools}");

    // The dropped sessions are closed once idle; the one in use is not.
    support::eventually("an idle session to be closed", || {
        kept.request("tools/list", json!({}));
        post(addr, "/mcp", &headers, &init).status == 200
    });
    let tools = kept.request("tools/list", json!({}));
    assert!(tools["result"]["tools"].is_array(), "{tools}");
}
