//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned in
//! scripts/lib.sh, on the Node it needs) against `baton mcp --http`, every scenario of every
//! suite: those that apply to a server of Baton's kind pass; the rest, listed with why in
//! `tests/mcp-conformance-baseline.yml`, fail for exactly the reason given there (a fixture of
//! the suite's reference server Baton does not have, or a capability it does not declare).
//! The suite takes only a URL, so a loopback proxy adds Baton's bearer token to its requests.

use baton_test_support as support;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use support::Project;
use support::mcp_http::BearerProxy;

/// The suite's Node and its entry point, from the tool cache.
fn suite() -> (PathBuf, PathBuf) {
    let arch = match std::env::consts::ARCH {
        "aarch64" => "arm64",
        _ => "x64",
    };
    (
        support::cached_tool(&format!(
            "conformance/node_modules/node-linux-{arch}/bin/node"
        )),
        support::cached_tool(
            "conformance/node_modules/@modelcontextprotocol/conformance/dist/index.js",
        ),
    )
}

/// Every scenario's checks the suite saved under `dir`, by scenario name.
fn results(dir: &Path) -> Vec<(String, Vec<Value>)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        // server-<scenario>-<ISO time>
        let rest = name.strip_prefix("server-").unwrap_or(&name);
        // The time the suite appends: -YYYY-MM-DDT…
        let is_time = |t: &[u8]| {
            t.len() > 11
                && t.iter().enumerate().take(11).all(|(i, b)| match i {
                    4 | 7 => *b == b'-',
                    10 => *b == b'T',
                    _ => b.is_ascii_digit(),
                })
        };
        let time = (0..rest.len())
            .find(|&i| rest.as_bytes()[i] == b'-' && is_time(&rest.as_bytes()[i + 1..]))
            .unwrap_or(rest.len());
        let scenario = rest[..time].to_string();
        let checks: Vec<Value> =
            serde_json::from_slice(&std::fs::read(path.join("checks.json")).unwrap()).unwrap();
        found.push((scenario, checks));
    }
    found.sort_by(|a, b| a.0.cmp(&b.0));
    found
}

fn failed(checks: &[Value]) -> Vec<String> {
    checks
        .iter()
        .filter(|c| c["status"] == "FAILURE" || c["status"] == "WARNING")
        .map(|c| c["errorMessage"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// Whether `checks` show the scenario asked for a fixture of the suite's reference server
/// (or a capability Baton does not declare) and Baton said it has none.
fn asked_for_what_baton_has_not(checks: &[Value]) -> bool {
    // Unescaped: a message may sit in a JSON string inside a JSON string (an SSE event's data).
    let said = serde_json::to_string(checks).unwrap().replace('\\', "");
    [
        r#"unknown tool "test_"#,
        r#"unknown prompt "test_"#,
        r#"unknown resource "test://"#,
        "Tool 'json_schema_2020_12_tool' not found",
        "-32601: logging/setLevel",
        "-32601: completion/complete",
    ]
    .iter()
    .any(|reason| said.contains(reason))
}

fn check<'a>(checks: &'a [Value], id: &str) -> &'a Value {
    checks
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("no check {id}: {checks:?}"))
}

#[test]
fn the_official_conformance_suite_passes_every_scenario_that_applies() {
    let p = Project::init();
    p.ok(&["leader", "add-task", "Something to list"]);
    let mut server = p.spawn(&["mcp", "--quiet", "--http", "127.0.0.1:0"]);
    server.wait_stderr("listening on http://127.0.0.1:");
    let info: Value =
        serde_json::from_slice(&std::fs::read(p.coordination().join("mcp/http.json")).unwrap())
            .unwrap();
    let addr: std::net::SocketAddr = info["url"]
        .as_str()
        .unwrap()
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let proxy = BearerProxy::start(addr, info["token"].as_str().unwrap());
    let (node, suite) = suite();
    let baseline = support::package_file("tests/mcp-conformance-baseline.yml");
    let saved = tempfile::tempdir().unwrap();
    let out = Command::new(node)
        .arg(suite)
        .args(["server", "--suite", "all", "--url"])
        .arg(format!("http://127.0.0.1:{}/mcp", proxy.addr.port()))
        .arg("--expected-failures")
        .arg(&baseline)
        .arg("--output-dir")
        .arg(saved.path())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    // The suite's own verdict: every failure is in the baseline and every entry still fails.
    assert!(
        out.status.success(),
        "{said}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let results = results(saved.path());
    let listed: Vec<String> = std::fs::read_to_string(&baseline)
        .unwrap()
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- "))
        .map(str::to_string)
        .collect();
    let mut passed = Vec::new();
    for (scenario, checks) in &results {
        let failures = failed(checks);
        if !listed.contains(scenario) {
            assert!(failures.is_empty(), "{scenario}: {failures:?}");
            passed.push(scenario.as_str());
            continue;
        }
        // A listed scenario fails on the fixture it asks for or the capability Baton lacks.
        assert!(!failures.is_empty(), "{scenario} is listed but passed");
        assert!(
            asked_for_what_baton_has_not(checks),
            "{scenario} failed for another reason: {failures:?}"
        );
    }
    // Resumable SSE: a stream starts with a priming event that has an event id, and says when
    // to reconnect.
    let polling = &results
        .iter()
        .find(|(s, _)| s == "server-sse-polling")
        .expect("the SSE polling scenario ran")
        .1;
    for id in ["server-sse-priming-event", "server-sse-retry-field"] {
        assert_eq!(check(polling, id)["status"], "SUCCESS", "{id}: {polling:?}");
    }
    // What applies to Baton: the handshake, ping, listing, several streams, DNS rebinding.
    for scenario in [
        "server-initialize",
        "ping",
        "tools-list",
        "resources-list",
        "prompts-list",
        "server-sse-multiple-streams",
        "dns-rebinding-protection",
    ] {
        assert!(
            passed.contains(&scenario),
            "{scenario} did not pass: {passed:?}"
        );
    }
    assert_eq!(
        results.len(),
        passed.len() + listed.len(),
        "every scenario run is accounted for: {said}"
    );
}
