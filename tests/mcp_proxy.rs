//! The MCP proxy end to end: the real Playwright MCP (npm) driving Debian's Chromium, launched
//! by Baton on first use, browsing a page served on 127.0.0.1; the child and the browser killed
//! mid-session and recovered; a child that cannot start; name clashes; and shutdown leaving no
//! process behind.

use baton_test_support as support;

use std::time::Instant;

use serde_json::{Value, json};
use support::mcp::RawClient;
use support::{PATIENCE, Project};

fn playwright_mcp() -> std::path::PathBuf {
    support::cached_tool("node/node_modules/.bin/playwright-mcp")
}

fn proxy(p: &Project, child: &str) -> RawClient {
    RawClient::start(p.command(&["mcp", "--quiet", "--child", child]))
}

fn playwright_child() -> String {
    format!(
        "{} --cdp-endpoint http://127.0.0.1:{{cdp_port}} --output-dir {{coordination}}/mcp/playwright",
        playwright_mcp().display()
    )
}

fn tool_names(listed: &Value) -> Vec<&str> {
    listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect()
}

fn text_of(response: &Value) -> String {
    response["result"]["content"]
        .as_array()
        .map(|c| {
            c.iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

fn alive(pid: u64) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => false,
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .unwrap()
            .trim_start()
            .starts_with('Z'),
    }
}

fn wait_gone(pid: u64) {
    support::eventually(&format!("process {pid} to end"), || !alive(pid));
}

fn kill(pid: u64) {
    assert!(
        std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status()
            .unwrap()
            .success()
    );
}

/// Calls `tool` until it succeeds (the recovery after a kill); returns the errors seen first.
fn call_until_ok(client: &mut RawClient, tool: &str, arguments: Value) -> (Value, Vec<String>) {
    let deadline = Instant::now() + PATIENCE;
    let mut errors = Vec::new();
    loop {
        let response = client.call(tool, arguments.clone());
        if response["result"]["isError"] != true && response.get("error").is_none() {
            return (response, errors);
        }
        errors.push(format!("{}{}", text_of(&response), response["error"]));
        assert!(
            Instant::now() < deadline,
            "{tool} never recovered: {errors:#?}"
        );
    }
}

#[test]
fn playwright_mcp_browses_a_local_page_through_the_proxy_and_survives_kills() {
    let p = Project::init();
    let url = support::serve_page(
        "<html><head><title>Baton test page</title></head><body><h1>Hello from the board</h1><button>Press me</button></body></html>",
    );
    // The machine's temporary folder, as the server sees it: nothing is to be left there.
    let machine_tmp = tempfile::tempdir().unwrap();
    let mut command = p.command(&["mcp", "--quiet", "--child", &playwright_child()]);
    command.env("TMPDIR", machine_tmp.path());
    let mut client = RawClient::start(command);

    let listed = client.tools_listing("browser_navigate");
    let names = tool_names(&listed);
    for name in [
        "browser_navigate",
        "browser_snapshot",
        "task_claim",
        "coordinator_status",
    ] {
        assert!(
            names.contains(&name),
            "{name} missing from the first tools/list: {names:?}"
        );
    }
    let status = client.call("coordinator_status", json!({}));
    let status = &status["result"]["structuredContent"];
    assert_eq!(status["children"][0]["running"], true, "{status}");
    assert!(
        status["browser"]["running"].is_null(),
        "no browser before the first child call"
    );

    // First child call: the browser is launched on the reserved port, then the call forwarded.
    let navigated = client.call("browser_navigate", json!({"url": url}));
    assert!(
        text_of(&navigated).contains("Baton test page"),
        "{navigated}"
    );
    let snapshot = client.call("browser_snapshot", json!({}));
    assert!(
        text_of(&snapshot).contains("Hello from the board"),
        "{snapshot}"
    );
    let browsers = client.call("coordinator_list_browsers", json!({}));
    let browser = &browsers["result"]["structuredContent"]["browsers"][0];
    assert_eq!(browser["alive"], true, "{browsers}");
    assert_eq!(browser["headless"], true);
    assert!(browser["owner"].as_str().unwrap().starts_with("baton-mcp["));
    assert_eq!(browser["port"], status["browser"]["cdp_port"]);
    let browser_pid = browser["pid"].as_u64().unwrap();
    // Playwright's files stay inside .coordination/, its temporary ones too.
    assert!(!p.path().join(".playwright-mcp").exists());
    let status = client.call("coordinator_status", json!({}));
    let child_pid = status["result"]["structuredContent"]["children"][0]["pid"]
        .as_u64()
        .unwrap();
    let children_tmp = p.coordination().join("mcp/tmp");
    let environ = std::fs::read(format!("/proc/{child_pid}/environ")).unwrap();
    let tmpdir: Vec<&[u8]> = environ
        .split(|b| *b == 0)
        .filter_map(|v| v.strip_prefix(b"TMPDIR="))
        .collect();
    assert_eq!(tmpdir.len(), 1);
    let tmpdir = std::path::Path::new(std::str::from_utf8(tmpdir[0]).unwrap());
    assert!(
        tmpdir.parent() == Some(children_tmp.as_path()) && tmpdir.is_dir(),
        "{tmpdir:?}"
    );

    // Kill the child mid-session: a descriptive error at most once, then a restarted child.
    kill(child_pid);
    wait_gone(child_pid);
    let (again, errors) = call_until_ok(&mut client, "browser_navigate", json!({"url": url}));
    assert!(text_of(&again).contains("Baton test page"), "{again}");
    assert!(errors.len() <= 1, "{errors:#?}");
    for error in &errors {
        assert!(
            error.contains("child") && error.contains("restarted"),
            "{error}"
        );
    }
    let status = client.call("coordinator_status", json!({}));
    assert_eq!(
        status["result"]["structuredContent"]["children"][0]["restarts"],
        1
    );

    // Kill the browser: the next calls launch a new one and work again.
    kill(browser_pid);
    wait_gone(browser_pid);
    let (after, _) = call_until_ok(&mut client, "browser_navigate", json!({"url": url}));
    assert!(text_of(&after).contains("Baton test page"), "{after}");
    let browsers = client.call("coordinator_list_browsers", json!({}));
    let new_pid = browsers["result"]["structuredContent"]["browsers"][0]["pid"]
        .as_u64()
        .unwrap();
    assert_ne!(new_pid, browser_pid);

    // Shutdown: stdin closed → browser, child and profile gone, registry empty.
    let status = client.call("coordinator_status", json!({}));
    let child_pid = status["result"]["structuredContent"]["children"][0]["pid"]
        .as_u64()
        .unwrap();
    assert_eq!(client.close(), Some(0));
    wait_gone(new_pid);
    wait_gone(child_pid);
    let registry = p.coordination().join("browsers");
    let left: Vec<_> = std::fs::read_dir(&registry)
        .map(|d| d.flatten().collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "registry entries left: {left:?}");
    // Nothing is left in the machine's temporary folder (Chromium's profiles and locks, the
    // killed browser's too) or the children's.
    let machine = entries(machine_tmp.path());
    assert!(
        machine.is_empty(),
        "left in the machine's /tmp: {machine:?}"
    );
    let children = entries(&children_tmp);
    assert!(
        children.is_empty(),
        "left in {children_tmp:?}: {children:?}"
    );
}

/// The names of what `folder` holds (nothing when it is not there).
fn entries(folder: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(folder)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[test]
fn a_child_that_cannot_start_leaves_baton_serving_and_says_why() {
    let p = Project::init();
    let mut client = proxy(&p, "/nonexistent/mcp-server --flag");
    let listed = client.request("tools/list", json!({}));
    let names = tool_names(&listed);
    assert!(names.contains(&"task_add"));
    let status = client.call("coordinator_status", json!({}));
    let child = &status["result"]["structuredContent"]["children"][0];
    assert_eq!(child["running"], false);
    assert!(
        child["problem"]
            .as_str()
            .unwrap()
            .contains("cannot start /nonexistent/mcp-server"),
        "{child}"
    );
    let added = client.call("task_add", json!({"description": "Still works"}));
    assert_eq!(added["result"]["structuredContent"]["task"]["id"], "task-1");
    assert_eq!(client.close(), Some(0));
}

#[test]
fn clashing_child_tools_are_renamed_and_routed() {
    let p = Project::init();
    // Baton itself as the child: every one of its tool names clashes with the proxy's own.
    let child = format!(
        "inner={} mcp --quiet --dir {}",
        support::baton_bin().display(),
        p.path().display()
    );
    let mut client =
        RawClient::start(p.command(&["mcp", "--quiet", "--no-browser", "--child", &child]));
    let listed = client.tools_listing("inner__task_add");
    let names = tool_names(&listed);
    assert!(
        names.contains(&"task_add") && names.contains(&"inner__task_add"),
        "{names:?}"
    );
    let added = client.call(
        "inner__task_add",
        json!({"description": "Through the child"}),
    );
    assert_eq!(
        added["result"]["structuredContent"]["task"]["id"], "task-1",
        "{added}"
    );
    // A tool error from the child comes back unchanged.
    let refused = client.call("inner__task_start", json!({"agent": "w", "task": "task-1"}));
    assert_eq!(refused["result"]["isError"], true);
    assert!(
        text_of(&refused).contains("cannot start task task-1: it is available"),
        "{refused}"
    );
    assert_eq!(client.close(), Some(0));
}

/// A child `baton mcp` (served as `inner__…`) that cannot start before the test writes to the
/// FIFO returned: the `--child` value and the gate.
fn gated_child(p: &Project) -> (std::path::PathBuf, String) {
    let gate = p.path().join("gate");
    let made = std::process::Command::new("mkfifo")
        .arg(&gate)
        .status()
        .unwrap();
    assert!(made.success());
    let child = format!(
        "inner=sh -c 'read go < {}; exec {} mcp --quiet --dir {}'",
        gate.display(),
        support::baton_bin().display(),
        p.path().display()
    );
    (gate, child)
}

#[test]
fn initialize_is_answered_while_the_children_are_still_starting() {
    let p = Project::init();
    let (gate, child) = gated_child(&p);
    // `start` completes the handshake: initialize was answered while the child was blocked.
    let mut client =
        RawClient::start(p.command(&["mcp", "--quiet", "--no-browser", "--child", &child]));
    std::fs::write(&gate, "go\n").unwrap();
    // Child calls wait for the children (so does coordinator_status), and then every list has
    // their tools.
    let status = client.call("coordinator_status", json!({}));
    assert_eq!(
        status["result"]["structuredContent"]["children"][0]["running"], true,
        "{status}"
    );
    let listed = client.request("tools/list", json!({}));
    let names = tool_names(&listed);
    assert!(names.contains(&"inner__task_status"), "{names:?}");
    assert!(names.contains(&"task_status"), "{names:?}");
    assert_eq!(client.close(), Some(0));
}

#[test]
fn a_child_slow_to_start_leaves_baton_s_own_tools_listed_and_is_announced_when_ready() {
    let p = Project::init();
    let (gate, child) = gated_child(&p);
    let mut client =
        RawClient::start(p.command(&["mcp", "--quiet", "--no-browser", "--child", &child]));
    // The child is blocked: the list comes anyway, with Baton's own tools.
    let listed = client.request("tools/list", json!({}));
    let names = tool_names(&listed);
    assert!(names.contains(&"task_status"), "{names:?}");
    assert!(!names.contains(&"inner__task_status"), "{names:?}");
    std::fs::write(&gate, "go\n").unwrap();
    loop {
        let message = client.next_message();
        if message["method"] == "notifications/tools/list_changed" {
            break;
        }
    }
    let listed = client.request("tools/list", json!({}));
    assert!(tool_names(&listed).contains(&"inner__task_status"));
    assert_eq!(client.close(), Some(0));
}

#[test]
fn the_default_child_runs_in_the_project_and_cannot_read_files_outside_it() {
    let p = Project::init();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.html"), "<p>CANARY-outside</p>").unwrap();
    std::fs::write(p.path().join("inside.html"), "<p>inside</p>").unwrap();
    // An installed Playwright MCP on PATH is used instead of npx.
    let bin = playwright_mcp();
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap()
    );
    // Started from the folder outside, as a host may do: the child still works in the project.
    let mut command = p.command(&[
        "mcp",
        "--quiet",
        "--proxy",
        "--dir",
        p.path().to_str().unwrap(),
    ]);
    command.env("PATH", path).current_dir(outside.path());
    let mut client = RawClient::start(command);
    // Code that runs in the child's process could read anything: not served by default.
    let listed = client.tools_listing("browser_navigate");
    let names = tool_names(&listed);
    assert!(names.contains(&"browser_navigate"), "{names:?}");
    assert!(!names.contains(&"browser_run_code_unsafe"), "{names:?}");
    let hidden = client.call("browser_run_code_unsafe", json!({"code": "1"}));
    assert!(
        hidden["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unknown tool"),
        "{hidden}"
    );
    let status = client.call("coordinator_status", json!({}));
    let command_line = status["result"]["structuredContent"]["children"][0]["command"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        command_line.starts_with(bin.to_str().unwrap()),
        "{command_line}"
    );
    // file: URLs are refused by the child, so nothing outside is read through the browser.
    let url = format!("file://{}", outside.path().join("secret.html").display());
    let refused = client.call("browser_navigate", json!({"url": url}));
    let text = text_of(&refused);
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    assert!(!text.contains("CANARY-outside"), "{text}");
    // Files it writes by name stay in the project: a screenshot to a path outside is refused.
    let page = support::serve_page("<h1>Hello</h1>");
    let opened = client.call("browser_navigate", json!({"url": page}));
    assert_ne!(opened["result"]["isError"], true, "{opened}");
    let target = outside.path().join("shot.png");
    let shot = client.call(
        "browser_take_screenshot",
        json!({"filename": target.display().to_string(), "type": "png"}),
    );
    assert!(
        !target.exists(),
        "the child wrote outside the project: {shot}"
    );
    assert!(text_of(&shot).contains("outside allowed roots"), "{shot}");
    assert_eq!(client.close(), Some(0));
}

#[test]
fn sigterm_stops_the_browser_and_the_child_with_no_orphans() {
    let p = Project::init();
    let mut client = proxy(&p, &playwright_child());
    let launched = client.call("coordinator_launch_browser", json!({}));
    let browser_pid = launched["result"]["structuredContent"]["browser"]["pid"]
        .as_u64()
        .unwrap();
    let status = client.call("coordinator_status", json!({}));
    let child_pid = status["result"]["structuredContent"]["children"][0]["pid"]
        .as_u64()
        .unwrap();
    let server_pid = client.pid();
    assert!(
        std::process::Command::new("kill")
            .args(["-TERM", &server_pid.to_string()])
            .status()
            .unwrap()
            .success()
    );
    wait_gone(server_pid as u64);
    wait_gone(browser_pid);
    wait_gone(child_pid);
    // Nothing of Chromium's is left in the process table with our profile.
    let ps = std::process::Command::new("ps")
        .args(["-eo", "pid,args"])
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&ps.stdout);
    let port = status["result"]["structuredContent"]["browser"]["cdp_port"]
        .as_u64()
        .unwrap();
    let orphans: Vec<&str> = table
        .lines()
        .filter(|l| l.contains(&format!("--remote-debugging-port={port}")))
        .collect();
    assert!(orphans.is_empty(), "orphans: {orphans:#?}");
}
