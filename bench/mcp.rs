//! MCP benchmark (run with `cargo bench --bench mcp`).
//!
//! Prints, in one run:
//! - the round trip of a trivial tool (`task_status` on a small board) called directly on
//!   `baton mcp`, and the same tool of a child `baton mcp` called through the proxy
//!   (`baton mcp --child …`), p50/p99 over 500 calls each, and the difference;
//! - `baton mcp` start to the answer of the first `tools/list`, plain and proxying;
//! - proxying the real Playwright MCP (the installed one scripts/test.sh puts in the tool
//!   cache, found on PATH as `baton mcp --proxy` finds it): start to the answer of `initialize`
//!   and start to the first `tools/list` with the browser tools in it. With
//!   `BATON_BENCH_BASELINE=/path/to/an/older/baton` the same is measured for that binary in the
//!   same run, side by side.
//!
//! - HTTP sessions (`BATON_BENCH_ONLY=sessions` runs only this): `baton mcp --http` with its
//!   cap at `BATON_BENCH_SESSIONS` (10,000), that many sessions opened and dropped without
//!   closing, the server's resident memory before, with all of them open, and after they were
//!   idle for `--http-idle 10s` and closed; and the time to open them.
//!
//! Target (issue 5): added latency through the proxy p50 ≤ 0.3 ms.

use baton_test_support::stats;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};

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
        Client::start_with(env!("CARGO_BIN_EXE_baton"), dir, args, None).0
    }

    /// Starts `baton` (with `path` as PATH when given) and completes the handshake; returns
    /// the client and how long `initialize` took to be answered.
    fn start_with(
        baton: &str,
        dir: &Path,
        args: &[&str],
        path: Option<&str>,
    ) -> (Client, Duration) {
        let started = Instant::now();
        let mut command = Command::new(baton);
        if let Some(path) = path {
            command.env("PATH", path);
        }
        let mut child = command
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
        let initialized = started.elapsed();
        writeln!(
            client.stdin,
            r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
        )
        .unwrap();
        (client, initialized)
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

fn startup(baton: &str, dir: &Path, args: &[&str], trials: usize) -> Vec<Duration> {
    startup_after(baton, dir, args, trials, Duration::ZERO)
}

/// Start to the first `tools/list` answered, for a client that waits `pause` after the
/// `initialize` handshake before asking (as hosts do while they set up).
fn startup_after(
    baton: &str,
    dir: &Path,
    args: &[&str],
    trials: usize,
    pause: Duration,
) -> Vec<Duration> {
    let mut samples: Vec<Duration> = (0..trials)
        .map(|_| {
            let started = Instant::now();
            let mut client = Client::start_with(baton, dir, args, None).0;
            std::thread::sleep(pause); // the client's own pace, part of what is measured
            let listed = client.request("tools/list", json!({}));
            let elapsed = started.elapsed();
            assert!(listed["result"]["tools"].is_array());
            elapsed
        })
        .collect();
    samples.sort();
    samples
}

/// Start to `initialize` answered, and start to the first `tools/list` holding Playwright
/// MCP's `browser_navigate`, for `baton mcp --proxy --no-browser`, with the installed
/// Playwright MCP on PATH when `installed` (otherwise baton falls back to npx).
fn playwright_startup(
    baton: &str,
    dir: &Path,
    trials: usize,
    installed: bool,
) -> (Vec<Duration>, Vec<Duration>) {
    let tools = std::env::var_os("BATON_TEST_TOOLS")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::PathBuf::from(std::env::var("HOME").unwrap()).join(".cache/baton-test-tools")
        })
        .join("node/node_modules/.bin");
    assert!(
        tools.join("playwright-mcp").exists(),
        "run ./scripts/test.sh first: it installs Playwright MCP in {}",
        tools.display()
    );
    let path = format!("{}:{}", tools.display(), std::env::var("PATH").unwrap());
    let mut initialize = Vec::new();
    let mut listed = Vec::new();
    for _ in 0..trials {
        let started = Instant::now();
        let (mut client, init) = Client::start_with(
            baton,
            dir,
            &["mcp", "--quiet", "--proxy", "--no-browser"],
            installed.then_some(path.as_str()),
        );
        let list = client.request("tools/list", json!({}));
        let names = list["result"]["tools"].to_string();
        if names.contains("browser_navigate") {
            listed.push(started.elapsed());
        }
        initialize.push(init);
    }
    initialize.sort();
    listed.sort();
    (initialize, listed)
}

fn print_playwright(label: &str, initialize: &[Duration], listed: &[Duration], trials: usize) {
    println!(
        "{label}: initialize p50 {}  max {}; first tools/list with browser tools p50 {}  max {}  ({} of {trials} starts listed them at once)",
        ms(percentile(initialize, 0.5), 1),
        ms(*initialize.last().unwrap(), 1),
        if listed.is_empty() {
            "-".into()
        } else {
            ms(percentile(listed, 0.5), 1)
        },
        if listed.is_empty() {
            "-".into()
        } else {
            ms(*listed.last().unwrap(), 1)
        },
        listed.len()
    );
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
    let only = std::env::var("BATON_BENCH_ONLY").unwrap_or_default();
    let sessions = match quick {
        true => 50,
        false => std::env::var("BATON_BENCH_SESSIONS")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(10_000),
    };
    if only == "sessions" {
        http_sessions(baton, dir.path(), sessions);
        return;
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
    if let Ok(baseline) = std::env::var("BATON_BENCH_BASELINE") {
        let mut old = Client::start_with(&baseline, dir.path(), &["mcp", "--quiet"], None).0;
        let old_times = round_trips(&mut old, "task_status", calls);
        println!(
            "direct task_status, baseline: p50 {}  p99 {}  ({calls} calls)",
            ms(percentile(&old_times, 0.5), 3),
            ms(percentile(&old_times, 0.99), 3)
        );
    }

    let plain = startup(baton, dir.path(), &["mcp", "--quiet"], trials);
    println!(
        "start to first tools/list:   p50 {}  max {}  ({trials} starts, baton mcp)",
        ms(percentile(&plain, 0.5), 3),
        ms(*plain.last().unwrap(), 3)
    );
    let pause = Duration::from_millis(3);
    let paced = startup_after(baton, dir.path(), &["mcp", "--quiet"], trials, pause);
    println!(
        "start to first tools/list, client pausing 3 ms after initialize: p50 {}  max {}",
        ms(percentile(&paced, 0.5), 3),
        ms(*paced.last().unwrap(), 3)
    );
    if let Ok(baseline) = std::env::var("BATON_BENCH_BASELINE") {
        let old = startup(&baseline, dir.path(), &["mcp", "--quiet"], trials);
        println!(
            "start to first tools/list, baseline: p50 {}  max {}  ({trials} starts)",
            ms(percentile(&old, 0.5), 3),
            ms(*old.last().unwrap(), 3)
        );
        let old = startup_after(&baseline, dir.path(), &["mcp", "--quiet"], trials, pause);
        println!(
            "start to first tools/list, baseline, client pausing 3 ms: p50 {}  max {}",
            ms(percentile(&old, 0.5), 3),
            ms(*old.last().unwrap(), 3)
        );
    }
    let proxying = startup(baton, dir.path(), &proxy_args, trials);
    println!(
        "start to first tools/list:   p50 {}  max {}  ({trials} starts, proxying a child baton mcp)",
        ms(percentile(&proxying, 0.5), 3),
        ms(*proxying.last().unwrap(), 3)
    );

    let pw_trials = if quick { 1 } else { 10 };
    let (init, listed) = playwright_startup(baton, dir.path(), pw_trials, true);
    print_playwright(
        "proxying Playwright MCP, this baton, installed one on PATH",
        &init,
        &listed,
        pw_trials,
    );
    if !quick {
        let (init, listed) = playwright_startup(baton, dir.path(), pw_trials, false);
        print_playwright(
            "proxying Playwright MCP, this baton, none installed (npx)",
            &init,
            &listed,
            pw_trials,
        );
    }
    if let Ok(baseline) = std::env::var("BATON_BENCH_BASELINE") {
        let (init, listed) = playwright_startup(&baseline, dir.path(), pw_trials, true);
        print_playwright(
            "proxying Playwright MCP, baseline baton (npx)",
            &init,
            &listed,
            pw_trials,
        );
    }
}

/// `baton mcp --http` capped at `count` sessions: its resident memory with none, with `count`
/// opened and dropped, and after they were closed for being idle.
fn http_sessions(baton: &str, dir: &Path, count: usize) {
    use baton_test_support::mcp_http::{HttpClient, initialize, post, served};
    println!("== HTTP sessions: {count} opened and dropped ==");
    let mut server = Command::new(baton)
        .args([
            "mcp",
            "--quiet",
            "--http",
            "127.0.0.1:0",
            "--http-idle",
            "3s",
        ])
        .args(["--http-max-sessions", &count.to_string()])
        .current_dir(dir)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut said = BufReader::new(server.stderr.take().unwrap());
    let mut line = String::new();
    while !line.contains("listening on") {
        line.clear();
        assert!(said.read_line(&mut line).unwrap() > 0, "the server ended");
    }
    let (addr, token) = served(&dir.join(".coordination"));
    let rss = || {
        let status = std::fs::read_to_string(format!("/proc/{}/status", server.id())).unwrap();
        let kb: u64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
            .unwrap();
        kb as f64 / 1024.0
    };
    // One session first, so the figure before is a serving server's.
    drop(HttpClient::start(addr, &token));
    let before = rss();
    let started = Instant::now();
    for _ in 0..count - 1 {
        drop(HttpClient::start(addr, &token));
    }
    let took = started.elapsed();
    let full = rss();
    let host = format!("127.0.0.1:{}", addr.port());
    let auth = format!("Bearer {token}");
    let headers = [("Host", host.as_str()), ("Authorization", auth.as_str())];
    let init = initialize("bench");
    let refused = post(addr, "/mcp", &headers, &init).status;
    // The span measured: the sessions' idle limit passing, and the server's sweep after it.
    std::thread::sleep(Duration::from_secs(21));
    let reopened = post(addr, "/mcp", &headers, &init).status;
    let after = rss();
    println!(
        "resident memory: {before:.1} MB with one session, {full:.1} MB with {count} open \
         ({:.1} KB each), {after:.1} MB after they were closed for being idle",
        (full - before) * 1024.0 / count as f64
    );
    println!(
        "opened {count} sessions in {:.1} s ({:.2} ms each); one more was answered {refused}, \
         and {reopened} once they were closed",
        took.as_secs_f64(),
        took.as_secs_f64() * 1000.0 / count as f64
    );
    let _ = server.kill();
    let _ = server.wait();
}
