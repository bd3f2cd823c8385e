//! A bare JSON-RPC client for `baton mcp` over stdio, for tests that need to send exactly the
//! bytes they choose (malformed input included) and to see every line the server writes.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};

use serde_json::{Value, json};

use crate::PATIENCE;

pub struct RawClient {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    /// Every line the server wrote to stdout, in order.
    pub stdout: Vec<String>,
    next_id: u64,
}

impl RawClient {
    /// Starts `command` (a `baton mcp …` invocation) and completes the handshake.
    pub fn start(mut command: Command) -> RawClient {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut client = RawClient {
            child,
            stdin,
            lines,
            stdout: Vec::new(),
            next_id: 100,
        };
        let init = client.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "baton-tests", "version": "1"}}),
        );
        assert_eq!(init["result"]["serverInfo"]["name"], "baton", "{init}");
        client.send_line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        client
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn send_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    /// The next line from the server, parsed (panics after [`PATIENCE`]).
    pub fn next_message(&mut self) -> Value {
        let line = self
            .lines
            .recv_timeout(PATIENCE)
            .unwrap_or_else(|_| panic!("no answer from baton mcp; saw {:#?}", self.stdout));
        self.stdout.push(line.clone());
        serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"))
    }

    /// A fresh request id, for a request sent by hand whose response is read later
    /// ([`RawClient::response_to`]).
    pub fn request_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// Sends a request and returns its response, skipping notifications in between.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send_line(&message.to_string());
        self.response_to(id)
    }

    /// `tools/list`'s answer once it lists the tool `name`. A proxy answers with what it has
    /// while a child server is still starting (by design) and announces the child's tools with
    /// `notifications/tools/list_changed`: this waits for that announcement, not for a moment.
    pub fn tools_listing(&mut self, name: &str) -> Value {
        loop {
            let seen = self.stdout.len();
            let listed = self.request("tools/list", json!({}));
            let tools = listed["result"]["tools"].as_array();
            if tools.is_some_and(|tools| tools.iter().any(|tool| tool["name"] == name)) {
                return listed;
            }
            // The announcement may have come while the answer was awaited (and been skipped).
            let announced = self.stdout[seen..]
                .iter()
                .any(|line| line.contains("notifications/tools/list_changed"));
            if !announced {
                while self.next_message()["method"] != "notifications/tools/list_changed" {}
            }
        }
    }

    pub fn response_to(&mut self, id: u64) -> Value {
        loop {
            let message = self.next_message();
            if message["id"] == id {
                return message;
            }
        }
    }

    /// The next error response with no id (answers to unparseable or invalid messages).
    pub fn response_to_error(&mut self) -> Value {
        loop {
            let message = self.next_message();
            if message.get("error").is_some() {
                return message;
            }
        }
    }

    /// Calls a tool and returns the JSON-RPC response.
    pub fn call(&mut self, tool: &str, arguments: Value) -> Value {
        self.request("tools/call", json!({"name": tool, "arguments": arguments}))
    }

    /// Closes stdin and waits for the server to exit; returns its exit code.
    pub fn close(mut self) -> Option<i32> {
        drop(self.stdin.take());
        let deadline = std::time::Instant::now() + PATIENCE;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            assert!(
                std::time::Instant::now() < deadline,
                "baton mcp did not exit after stdin closed"
            );
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }
}

impl Drop for RawClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
