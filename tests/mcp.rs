//! `baton mcp` with real clients: the official Python SDK and the MCP Inspector CLI (both
//! installed by scripts/test.sh), plus raw JSON-RPC for malformed input, several servers on one
//! project, and per-agent tool filtering.

use baton_test_support as support;

use std::process::Command;

use serde_json::{Value, json};
use support::Project;
use support::mcp::RawClient;

fn mcp(p: &Project, extra: &[&str]) -> RawClient {
    let mut args = vec!["mcp", "--quiet"];
    args.extend(extra);
    RawClient::start(p.command(&args))
}

support::on_both_stores!(the_python_sdk_lists_calls_reads_subscribes_and_waits_with_progress);

fn the_python_sdk_lists_calls_reads_subscribes_and_waits_with_progress(p: Project) {
    let python = support::cached_tool("venv/bin/python");
    let script = support::package_file("tests/clients/python_client.py");
    // The client runs `baton` itself, with the project's environment (a database's password).
    let out = p
        .command_of(
            python,
            &[
                script.to_str().unwrap(),
                support::baton_bin().to_str().unwrap(),
                p.path().to_str().unwrap(),
            ],
        )
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "python client failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let seen: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(seen["server"], "baton");
    let tools: Vec<&str> = seen["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    for tool in [
        "task_list",
        "task_add",
        "task_claim",
        "task_start",
        "task_complete",
        "task_fail",
        "task_heartbeat",
        "task_status",
        "discover",
        "aggregate",
        "signal_write",
        "signal_clear",
        "signal_list",
        "signal_wait",
        "invoke_agent",
        "complete_invocation",
        "track_handoff",
        "start_parallel_execution",
        "aggregate_parallel_results",
        "get_routing_recommendation",
    ] {
        assert!(tools.contains(&tool), "{tool} missing from {tools:?}");
    }
    assert!(
        seen["read_only"]
            .as_array()
            .unwrap()
            .contains(&json!("task_status"))
    );
    assert!(
        !seen["read_only"]
            .as_array()
            .unwrap()
            .contains(&json!("task_claim"))
    );
    assert_eq!(
        seen["task_add_description_field"],
        "What to do, for the worker who claims it."
    );
    assert_eq!(seen["added"], seen["claimed"]);
    assert_eq!(seen["claim_is_error"], false);
    assert_eq!(seen["refused_is_error"], true);
    assert!(
        seen["refused_text"]
            .as_str()
            .unwrap()
            .contains("claimed by py-worker")
    );
    assert_eq!(seen["board_total"], 1);
    assert_eq!(seen["catalog_total"], 18);
    assert!(
        seen["resources"]
            .as_array()
            .unwrap()
            .contains(&json!("agents://history"))
    );
    assert_eq!(
        seen["updates"][0], "baton://tasks",
        "a terminal's add-task reached the subscriber"
    );
    assert_eq!(seen["wait_outcome"], "signalled");
    assert_eq!(seen["signals_updated"], true);
    assert!(seen["progress_reports"].as_u64().unwrap() >= 2);
    assert!(
        seen["bad_args"]
            .as_str()
            .unwrap()
            .starts_with("protocol error"),
        "{seen}"
    );
    assert!(
        seen["unknown_tool"]
            .as_str()
            .unwrap()
            .contains("unknown tool"),
        "{seen}"
    );
    assert_eq!(seen["still_serving"], 2);
    // What the client did is in the store, as if a CLI had done it.
    assert_eq!(p.tasks_json()["tasks"][0]["claimed_by"], "py-worker");
}

fn inspector(p: &Project, args: &[&str]) -> Value {
    let bin = support::cached_tool("node/node_modules/.bin/mcp-inspector");
    let out = Command::new(bin)
        .arg("--cli")
        .arg(support::baton_bin())
        .args(["mcp", "--quiet"])
        .args(args)
        .current_dir(p.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "inspector {args:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "inspector printed no JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

#[test]
fn the_inspector_cli_lists_tools_calls_one_and_reads_a_resource() {
    let p = Project::init();
    let listed = inspector(&p, &["--method", "tools/list"]);
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"task_add") && names.contains(&"invoke_agent"),
        "{names:?}"
    );
    let added = inspector(
        &p,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "task_add",
            "--tool-arg",
            "description=From the Inspector",
        ],
    );
    assert_eq!(
        added["structuredContent"]["task"]["id"], "task-1",
        "{added}"
    );
    assert_eq!(
        p.tasks_json()["tasks"][0]["description"],
        "From the Inspector"
    );
    let board = inspector(
        &p,
        &["--method", "resources/read", "--uri", "baton://tasks"],
    );
    let text = board["contents"][0]["text"].as_str().unwrap();
    assert_eq!(serde_json::from_str::<Value>(text).unwrap()["total"], 1);
}

#[test]
fn malformed_json_rpc_gets_protocol_errors_and_the_server_keeps_serving() {
    let p = Project::init();
    let mut client = mcp(&p, &[]);
    client.send_line("this is not json");
    let error = client.next_message();
    assert_eq!(error["error"]["code"], -32700, "{error}");
    client.send_line(r#"{"jsonrpc":"2.0","id":5}"#);
    assert_eq!(client.response_to_error()["error"]["code"], -32600);
    client.send_line(r#"{"jsonrpc":"2.0","id":7,"method":"no/such/method"}"#);
    assert_eq!(client.response_to(7)["error"]["code"], -32601);
    let wrong_type = client.call("task_claim", json!({"agent": [1, 2]}));
    assert_eq!(wrong_type["error"]["code"], -32602, "{wrong_type}");
    let unknown_field = client.call("task_claim", json!({"agent": "w", "surprise": true}));
    assert_eq!(unknown_field["error"]["code"], -32602, "{unknown_field}");
    let unknown_tool = client.call("rm_rf", json!({}));
    assert_eq!(unknown_tool["error"]["code"], -32602);
    assert!(
        unknown_tool["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unknown tool")
    );
    let huge = client.call(
        "task_add",
        json!({"description": "x".repeat(5 * 1024 * 1024)}),
    );
    assert_eq!(
        huge["error"]["code"], -32602,
        "oversized arguments are refused"
    );
    let hostile = client.call("task_claim", json!({"agent": "../../etc"}));
    assert_eq!(hostile["result"]["isError"], true);
    assert!(
        hostile["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("invalid agent id")
    );
    let unknown_resource = client.request("resources/read", json!({"uri": "file:///etc/passwd"}));
    assert!(unknown_resource["error"].is_object(), "{unknown_resource}");

    // Still serving, and nothing was written by the bad calls.
    let status = client.call("task_status", json!({}));
    assert_eq!(status["result"]["structuredContent"]["total"], 0);
    assert_eq!(p.tasks_json()["tasks"].as_array().unwrap().len(), 0);
    // stdout carried only JSON-RPC messages.
    for line in &client.stdout {
        let message: Value = serde_json::from_str(line).unwrap();
        assert_eq!(message["jsonrpc"], "2.0", "{line}");
    }
    assert_eq!(
        client.close(),
        Some(0),
        "closing stdin stops the server cleanly"
    );
}

#[test]
fn several_servers_on_one_project_stay_consistent() {
    let p = Project::init();
    for i in 0..30 {
        p.ok(&["leader", "add-task", &format!("Task {i}")]);
    }
    let handles: Vec<_> = (0..3)
        .map(|n| {
            let mut client = mcp(&p, &[]);
            std::thread::spawn(move || {
                let mut claimed = Vec::new();
                loop {
                    let response =
                        client.call("task_claim", json!({"agent": format!("server-{n}")}));
                    let content = &response["result"]["structuredContent"];
                    match content["task"]["id"].as_str() {
                        Some(id) => claimed.push(id.to_string()),
                        None => break,
                    }
                }
                claimed
            })
        })
        .collect();
    let mut all: Vec<String> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    assert_eq!(all.len(), 30, "every task claimed once in all");
    all.sort();
    all.dedup();
    assert_eq!(all.len(), 30, "no task claimed twice");
    let board = p.json(&["leader", "status"]);
    assert_eq!(board["counts"]["claimed"], 30);
}

#[test]
fn agent_tool_filtering_serves_only_what_the_definition_allows() {
    let p = Project::init();
    let dir = p.path().join(".claude/agents");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("reporter.md"),
        "---\nname: reporter\ntools: Read, mcp__baton__task_status, mcp__baton__signal_*\n---\nReport.\n",
    )
    .unwrap();
    let mut client = mcp(&p, &["--agent", "reporter"]);
    let listed = client.request("tools/list", json!({}));
    let mut names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "signal_clear",
            "signal_list",
            "signal_wait",
            "signal_write",
            "task_status"
        ]
    );
    let refused = client.call("task_add", json!({"description": "sneaky"}));
    assert_eq!(
        refused["error"]["code"], -32602,
        "a tool the agent may not use is unknown to it"
    );
    assert_eq!(p.tasks_json()["tasks"].as_array().unwrap().len(), 0);

    let out = p.run(&["mcp", "--agent", "nobody"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown agent \"nobody\""));
}

#[test]
fn streamable_http_is_loopback_only_and_needs_the_token_and_a_local_origin() {
    let p = Project::init();
    let err = p.fails(&["mcp", "--http", "0.0.0.0:8765"], 1);
    assert!(err.contains("loopback only"), "{err}");
    let err = p.fails(&["mcp", "--http", "127.0.0.1:0", "--token", "short"], 1);
    assert!(err.contains("at least 16 characters"), "{err}");

    let mut server = p.spawn(&["mcp", "--quiet", "--http", "127.0.0.1:0"]);
    let line = server.wait_stderr("listening on http://127.0.0.1:");
    let info_file = p.coordination().join("mcp/http.json");
    let info: Value = serde_json::from_slice(&std::fs::read(&info_file).unwrap()).unwrap();
    let token = info["token"].as_str().unwrap();
    assert!(!line.contains(token), "the token is not printed");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&info_file).unwrap().permissions().mode() & 0o777,
        0o600
    );

    let python = support::cached_tool("venv/bin/python");
    let script = support::package_file("tests/clients/python_http_client.py");
    let out = Command::new(python)
        .args([
            script.to_str().unwrap(),
            info["url"].as_str().unwrap(),
            token,
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let seen: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(seen["no_token"], 401);
    assert_eq!(seen["wrong_token"], 401);
    assert_eq!(seen["foreign_origin"], 403);
    assert_eq!(
        seen["loopback_origin"], 200,
        "a loopback page on another port"
    );
    assert!(seen["tools"].as_u64().unwrap() >= 20);
    assert_eq!(seen["added"], "task-1");
    assert_eq!(p.tasks_json()["tasks"][0]["description"], "Over HTTP");

    server.signal("TERM");
    let (code, _, _) = server.finish();
    assert_eq!(code, Some(0));
    assert!(!info_file.exists(), "the token file is removed on shutdown");
}

/// Baton's prompts as MCP prompts (what hosts show as slash commands): listed with their
/// arguments, the worker's naming its agent in every command, the same text `baton prompt`
/// prints; a missing, hostile or unknown name is a protocol error.
#[test]
fn the_worker_and_leader_prompts_are_served_as_mcp_prompts() {
    let p = Project::init();
    let mut client = mcp(&p, &[]);
    let listed = client.request("prompts/list", json!({}));
    let prompts = listed["result"]["prompts"].as_array().unwrap();
    let names: Vec<&str> = prompts
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["worker", "leader"], "{listed}");
    assert_eq!(prompts[0]["arguments"][0]["name"], "agent");
    assert_eq!(prompts[0]["arguments"][0]["required"], true);

    let worker = client.request(
        "prompts/get",
        json!({"name": "worker", "arguments": {"agent": "cc1"}}),
    );
    let text = worker["result"]["messages"][0]["content"]["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(worker["result"]["messages"][0]["role"], "user");
    assert!(text.contains("baton worker claim cc1"), "{text}");
    let printed = p.json(&["prompt", "worker", "cc1"]);
    assert_eq!(printed["text"], text.as_str(), "the same as baton prompt");
    let leader = client.request("prompts/get", json!({"name": "leader"}));
    assert!(
        leader["result"]["messages"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("baton leader add-task")
    );
    for (params, says) in [
        (json!({"name": "worker"}), "needs its agent's name"),
        (
            json!({"name": "worker", "arguments": {"agent": "../x"}}),
            "invalid agent id",
        ),
        (json!({"name": "deploy"}), "unknown prompt"),
    ] {
        let refused = client.request("prompts/get", params);
        assert_eq!(refused["error"]["code"], -32602, "{refused}");
        assert!(refused.to_string().contains(says), "{refused}");
    }
    assert_eq!(client.close(), Some(0));
}
