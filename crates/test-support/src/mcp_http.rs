//! A bare client for `baton mcp --http`: one TCP connection per request, every header chosen by
//! the test (so it can also send what a hostile page would: no token, a wrong one, a foreign
//! `Host` or `Origin`), and the answer read whole, JSON or server-sent events.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};

use serde_json::{Value, json};

use crate::PATIENCE;

/// What came back for one HTTP request.
pub struct HttpAnswer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl HttpAnswer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The JSON-RPC messages in the body: the body itself, or each `data:` of an event stream.
    pub fn messages(&self) -> Vec<Value> {
        if let Ok(value) = serde_json::from_str::<Value>(&self.body) {
            return vec![value];
        }
        self.body
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .filter_map(|data| serde_json::from_str(data.trim()).ok())
            .collect()
    }
}

/// Sends one POST to `path` with `headers` and `body`, and reads the whole answer.
pub fn post(addr: SocketAddr, path: &str, headers: &[(&str, &str)], body: &str) -> HttpAnswer {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    let mut request = format!(
        "POST {path} HTTP/1.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).unwrap();
    let mut raw = Vec::new();
    stream
        .read_to_end(&mut raw)
        .unwrap_or_else(|e| panic!("reading the answer to {body}: {e}"));
    parse(&raw)
}

fn parse(raw: &[u8]) -> HttpAnswer {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("an HTTP head");
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .expect("a status line");
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_string(), v.trim().to_string()))
        .collect();
    let mut body = raw[split + 4..].to_vec();
    let chunked = headers.iter().any(|(n, v)| {
        n.eq_ignore_ascii_case("transfer-encoding") && v.eq_ignore_ascii_case("chunked")
    });
    if chunked {
        body = dechunk(&body);
    }
    HttpAnswer {
        status,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    }
}

fn dechunk(mut data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(end) = data.windows(2).position(|w| w == b"\r\n") {
        let size_text = String::from_utf8_lossy(&data[..end]);
        let size = usize::from_str_radix(size_text.split(';').next().unwrap().trim(), 16)
            .expect("a chunk size");
        if size == 0 {
            break;
        }
        let start = end + 2;
        out.extend_from_slice(&data[start..start + size]);
        data = &data[start + size + 2..];
    }
    out
}

/// Where `baton mcp --http` of the project at `coordination` listens, and its token (from
/// `.coordination/mcp/http.json`).
pub fn served(coordination: &std::path::Path) -> (SocketAddr, String) {
    let info: Value =
        serde_json::from_slice(&std::fs::read(coordination.join("mcp/http.json")).unwrap())
            .unwrap();
    let addr = info["url"]
        .as_str()
        .unwrap()
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .parse()
        .unwrap();
    (addr, info["token"].as_str().unwrap().to_string())
}

/// An `initialize` request from a client named `name`, as JSON text.
pub fn initialize(name: &str) -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": name, "version": "1"}}})
    .to_string()
}

/// An MCP session over streamable HTTP with the right token, host and origin.
pub struct HttpClient {
    pub addr: SocketAddr,
    token: String,
    session: Option<String>,
    next_id: u64,
}

impl HttpClient {
    /// Opens a session (initialize, then initialized).
    pub fn start(addr: SocketAddr, token: &str) -> HttpClient {
        let mut client = HttpClient {
            addr,
            token: token.to_string(),
            session: None,
            next_id: 0,
        };
        let init = client.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "baton-tests-http", "version": "1"}}),
        );
        assert_eq!(init["result"]["serverInfo"]["name"], "baton", "{init}");
        let answer = client
            .send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string());
        assert!(answer.status < 300, "initialized: {}", answer.status);
        client
    }

    fn send(&mut self, body: &str) -> HttpAnswer {
        let host = format!("127.0.0.1:{}", self.addr.port());
        let auth = format!("Bearer {}", self.token);
        let mut headers = vec![("Host", host.as_str()), ("Authorization", auth.as_str())];
        let session = self.session.clone();
        if let Some(session) = &session {
            headers.push(("Mcp-Session-Id", session.as_str()));
            headers.push(("MCP-Protocol-Version", "2025-06-18"));
        }
        let answer = post(self.addr, "/mcp", &headers, body);
        if self.session.is_none() {
            self.session = answer.header("mcp-session-id").map(str::to_string);
        }
        answer
    }

    /// Sends a request and returns its JSON-RPC response.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let answer = self.send(&body.to_string());
        assert_eq!(answer.status, 200, "{method}: {}", answer.body);
        answer
            .messages()
            .into_iter()
            .find(|m| m["id"] == id)
            .unwrap_or_else(|| panic!("no response to {method} in {}", answer.body))
    }

    pub fn call(&mut self, tool: &str, arguments: Value) -> Value {
        self.request("tools/call", json!({"name": tool, "arguments": arguments}))
    }
}

/// A loopback proxy in front of `baton mcp --http` that adds `Authorization: Bearer TOKEN` to
/// every request, for clients that cannot send a header of their own (the official MCP
/// conformance suite takes only a URL). Everything else passes through as it is, both ways,
/// streamed (server-sent events included); each request on a kept-alive connection gets the
/// header. Stops accepting when dropped.
pub struct BearerProxy {
    pub addr: SocketAddr,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl BearerProxy {
    pub fn start(server: SocketAddr, token: &str) -> BearerProxy {
        use std::sync::atomic::{AtomicBool, Ordering};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let header = format!("Authorization: Bearer {token}\r\n");
        std::thread::spawn(move || {
            for client in listener.incoming() {
                if stopped.load(Ordering::Relaxed) {
                    break;
                }
                let Ok(client) = client else { continue };
                let header = header.clone();
                std::thread::spawn(move || {
                    let Ok(upstream) = TcpStream::connect(server) else {
                        return;
                    };
                    let (mut from_server, mut to_client) =
                        (upstream.try_clone().unwrap(), client.try_clone().unwrap());
                    std::thread::spawn(move || {
                        let _ = std::io::copy(&mut from_server, &mut to_client);
                        let _ = to_client.shutdown(std::net::Shutdown::Both);
                    });
                    let _ = forward_requests(client, upstream, header.as_bytes());
                });
            }
        });
        BearerProxy { addr, stop }
    }
}

impl Drop for BearerProxy {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let _ = TcpStream::connect(self.addr); // wakes the accept loop to see the stop
    }
}

/// Copies HTTP/1.1 requests from `client` to `upstream`, `header` added after each request
/// line; bodies by `Content-Length` or chunked, as they come.
fn forward_requests(
    client: TcpStream,
    mut upstream: TcpStream,
    header: &[u8],
) -> std::io::Result<()> {
    use std::io::BufRead;
    let mut reader = std::io::BufReader::new(client);
    loop {
        let mut head = Vec::new();
        let mut line = Vec::new();
        let mut length = 0usize;
        let mut chunked = false;
        loop {
            line.clear();
            if reader.read_until(b'\n', &mut line)? == 0 {
                let _ = upstream.shutdown(std::net::Shutdown::Write);
                return Ok(());
            }
            let text = String::from_utf8_lossy(&line).to_ascii_lowercase();
            if let Some(value) = text.strip_prefix("content-length:") {
                length = value.trim().parse().unwrap_or(0);
            }
            if text.starts_with("transfer-encoding:") && text.contains("chunked") {
                chunked = true;
            }
            let first = head.is_empty();
            head.extend_from_slice(&line);
            if first {
                head.extend_from_slice(header);
            }
            if line == b"\r\n" {
                break;
            }
        }
        upstream.write_all(&head)?;
        if chunked {
            loop {
                line.clear();
                reader.read_until(b'\n', &mut line)?;
                upstream.write_all(&line)?;
                let size_text = String::from_utf8_lossy(&line);
                let size =
                    usize::from_str_radix(size_text.trim().split(';').next().unwrap_or("0"), 16)
                        .unwrap_or(0);
                let mut chunk = vec![0; size + 2];
                reader.read_exact(&mut chunk)?;
                upstream.write_all(&chunk)?;
                if size == 0 {
                    break;
                }
            }
        } else {
            let mut body = vec![0; length];
            reader.read_exact(&mut body)?;
            upstream.write_all(&body)?;
        }
    }
}
