//! A browser for a sandboxed agent, on both stores: `baton mcp --proxy` run by an agent inside
//! its sandbox starts the real Playwright MCP and Debian's Chromium inside that sandbox (not on
//! the lead's side, where the door's server would have put them), browses an app the profile's
//! allow-list lets it reach on the machine's loopback, and serves Baton's own tools beside the
//! browser's, reached through the attempt's door as the agent itself. The door's server offers
//! no browser tools of its own; nothing is left in the project's browser registry.

use baton_test_support as support;

use serde_json::Value;
use support::Project;

support::on_both_stores!(a_sandboxed_agent_browses_with_a_browser_inside_its_sandbox);

fn a_sandboxed_agent_browses_with_a_browser_inside_its_sandbox(p: Project) {
    support::repository(p.path());
    let url = support::serve_page(
        "<html><head><title>Sandboxed app</title></head><body>App</body></html>",
    );
    let port = url
        .trim_end_matches('/')
        .rsplit(':')
        .next()
        .unwrap()
        .to_string();
    // Playwright MCP as the test tools installed it, under the home folder, which the sandbox
    // hides unless the profile shows it.
    let playwright = support::cached_tool("node/node_modules/.bin/playwright-mcp");
    let node_modules = playwright.parent().unwrap().parent().unwrap();
    std::fs::create_dir_all(p.coordination().join("team")).unwrap();
    std::fs::write(
        p.coordination().join("team/profiles.toml"),
        format!(
            // Chromium locks its profile with a Unix socket, which a sandbox refuses unless the
            // profile says (as `browser = true` does for Claude Code and Codex).
            "[profiles.exec.sandbox]\nallow = [\"127.0.0.1:{port}\"]\nread = [\"{}\"]\n\
             unix_sockets = true\n",
            node_modules.display()
        ),
    )
    .unwrap();
    // The agent's script in the project, which its sandbox shows: the source tree may be
    // where the sandbox's private /tmp hides it (a clone under /tmp).
    let agent = p.path().join("sandboxed_browser_agent.py");
    std::fs::copy(
        support::package_file("tests/clients/sandboxed_browser_agent.py"),
        &agent,
    )
    .unwrap();
    let script = format!(
        "PATH={}:$PATH python3 {} {url}",
        playwright.parent().unwrap().display(),
        agent.display()
    );
    p.ok(&["leader", "add-task", "Browse the app", "--id", "b1"]);
    let out = p
        .committing(&[
            "team",
            "up",
            "--sandbox",
            "--prefix",
            "bx",
            "--exec",
            &script,
        ])
        .output()
        .unwrap();
    let logs = p.json(&["team", "logs", "b1"]).to_string();
    assert!(out.status.success(), "{out:?}\n{logs}");

    let shown = p.task("b1");
    let output = shown["result"]["output"].as_str().unwrap_or_default();
    let saw: Value = output
        .lines()
        .find_map(|line| line.strip_prefix("AGENT-SAW "))
        .map(|json| serde_json::from_str(json).unwrap())
        .unwrap_or_else(|| panic!("the agent said nothing: {output}\n{logs}"));

    // The door's server, on the lead's side, has Baton's tools and no browser.
    let door_tools: Vec<&str> = saw["door_tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert!(door_tools.contains(&"message_send"), "{saw}");
    assert!(
        !door_tools.iter().any(|t| t.starts_with("coordinator_")),
        "browser tools behind the door: {saw}"
    );
    assert!(
        saw["door_launch"]
            .as_str()
            .unwrap()
            .contains("unknown tool"),
        "{saw}"
    );
    // The proxy inside serves Baton's tools under their own names, the browser's and its own.
    let proxy_tools = saw["proxy_tools"].to_string();
    for tool in [
        "\"message_send\"",
        "\"task_heartbeat\"",
        "\"browser_navigate\"",
        "\"coordinator_launch_browser\"",
    ] {
        assert!(proxy_tools.contains(tool), "{tool} not served: {saw}");
    }
    assert!(
        !proxy_tools.contains("baton__"),
        "Baton's tools renamed: {saw}"
    );
    // The page was browsed, by a Chromium the agent's own /proc shows: inside its sandbox.
    assert!(
        saw["page"]
            .as_str()
            .unwrap()
            .contains("Page Title: Sandboxed app"),
        "{saw}"
    );
    let browser = saw["browser_command"].as_str().unwrap();
    assert!(browser.contains("chromium"), "{saw}");
    assert!(browser.contains("--no-sandbox"), "{saw}");
    // Baton's tool went through the door as the agent itself.
    assert_eq!(saw["message_is_error"], false, "{saw}");
    let inbox = p.json(&["inbox", "--all"]);
    let messages = inbox["messages"].as_array().unwrap();
    assert!(
        messages
            .iter()
            .any(|m| m["subject"] == "Browsed" && m["from"] == "bx1"),
        "{inbox}"
    );
    // Nothing of the agent's browser on the lead's side.
    let registry = p.coordination().join("browsers");
    let registered: Vec<_> = std::fs::read_dir(&registry)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(registered.is_empty(), "{registered:?}");
    let listed = p.json(&["browser", "list"]);
    assert_eq!(listed, serde_json::json!([]), "{listed}");
}
