//! MCP benchmark (run with `cargo bench --bench mcp`).
//!
//! Prints, in one run:
//! - the round trip of a trivial tool (`task_status` on a small board) called directly on
//!   `baton mcp`, and the same tool of a child `baton mcp` called through the proxy
//!   (`baton mcp --child …`), p50/p99 over 500 calls each, and the difference;
//! - `baton mcp` start to the answer of the first `tools/list`, plain and proxying.
//!
//! Target (issue 5): added latency through the proxy p50 ≤ 0.3 ms.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
#[path = "stats.rs"]
mod stats;

use stats::{ms, percentile};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

struct Client {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<std::process::ChildStdout>,
    id: u64,
}

impl Client {
    fn start(dir: &Path, args: &[&str]) -> Client {
        let mut child = Command::new(env!("CARGO_BIN_EXE_baton"))
            .args(args)
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut client = Client {
            child,
            stdin,
            stdout,
            id: 0,
        };
        client.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}),
        );
        writeln!(
            client.stdin,
            r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
        )
        .unwrap();
        client
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.id += 1;
        let message = json!({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params});
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
        let mut line = String::new();
        loop {
            line.clear();
            assert!(
                self.stdout.read_line(&mut line).unwrap() > 0,
                "server exited"
            );
            let value: Value = serde_json::from_str(&line).unwrap();
            if value["id"] == self.id {
                return value;
            }
        }
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn round_trips(client: &mut Client, tool: &str, calls: usize) -> Vec<Duration> {
    for _ in 0..20 {
        client.request("tools/call", json!({"name": tool, "arguments": {}})); // warm up
    }
    let mut samples: Vec<Duration> = (0..calls)
        .map(|_| {
            let started = Instant::now();
            let response = client.request("tools/call", json!({"name": tool, "arguments": {}}));
            let elapsed = started.elapsed();
            assert!(
                response["result"]["structuredContent"]["total"].is_number(),
                "{response}"
            );
            elapsed
        })
        .collect();
    samples.sort();
    samples
}

fn startup(dir: &Path, args: &[&str], trials: usize) -> Vec<Duration> {
    let mut samples: Vec<Duration> = (0..trials)
        .map(|_| {
            let started = Instant::now();
            let mut client = Client::start(dir, args);
            let listed = client.request("tools/list", json!({}));
            let elapsed = started.elapsed();
            assert!(listed["result"]["tools"].is_array());
            elapsed
        })
        .collect();
    samples.sort();
    samples
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--list") {
        return;
    }
    let quick = !args.iter().any(|a| a == "--bench");
    let (calls, trials) = if quick { (20, 2) } else { (500, 20) };

    let dir = tempfile::tempdir().unwrap();
    let baton = env!("CARGO_BIN_EXE_baton");
    assert!(
        Command::new(baton)
            .args(["leader", "init", "bench"])
            .current_dir(dir.path())
            .stdout(Stdio::null())
            .status()
            .unwrap()
            .success()
    );
    for i in 0..10 {
        let status = Command::new(baton)
            .args(["leader", "add-task", &format!("task {i}")])
            .current_dir(dir.path())
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success());
    }
    let child = format!("inner={baton} mcp --quiet");
    let proxy_args = ["mcp", "--quiet", "--no-browser", "--child", child.as_str()];

    let mut direct = Client::start(dir.path(), &["mcp", "--quiet"]);
    let mut proxied = Client::start(dir.path(), &proxy_args);
    let direct_times = round_trips(&mut direct, "task_status", calls);
    let proxied_times = round_trips(&mut proxied, "inner__task_status", calls);
    let (d50, d99) = (
        percentile(&direct_times, 0.5),
        percentile(&direct_times, 0.99),
    );
    let (p50, p99) = (
        percentile(&proxied_times, 0.5),
        percentile(&proxied_times, 0.99),
    );
    println!(
        "direct task_status:          p50 {}  p99 {}  ({calls} calls)",
        ms(d50, 3),
        ms(d99, 3)
    );
    println!(
        "through the proxy:           p50 {}  p99 {}  ({calls} calls)",
        ms(p50, 3),
        ms(p99, 3)
    );
    println!(
        "added by the proxy:          p50 {}  p99 {}",
        ms(p50.saturating_sub(d50), 3),
        ms(p99.saturating_sub(d99), 3)
    );
    drop(direct);
    drop(proxied);

    let plain = startup(dir.path(), &["mcp", "--quiet"], trials);
    println!(
        "start to first tools/list:   p50 {}  max {}  ({trials} starts, baton mcp)",
        ms(percentile(&plain, 0.5), 3),
        ms(*plain.last().unwrap(), 3)
    );
    let proxying = startup(dir.path(), &proxy_args, trials);
    println!(
        "start to first tools/list:   p50 {}  max {}  ({trials} starts, proxying a child baton mcp)",
        ms(percentile(&proxying, 0.5), 3),
        ms(*proxying.last().unwrap(), 3)
    );
}
