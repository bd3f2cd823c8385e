//! The browser registry: one file per running browser in `.coordination/browsers/PORT.json`
//! (port, pid, owner, headless or not, its DevTools endpoints), so the desktop app, the MCP
//! proxy, the CLI and the change feed can list the browsers of a project and attach to them,
//! whichever process started them. Also the two questions asked of a DevTools port over plain
//! HTTP: does it answer, and what does `/json/...` say.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::time::Duration;

use baton_core::{Layout, StoreError, Timestamp};
use baton_fs::pid_alive;
use serde::{Deserialize, Serialize};

/// A browser as the registry records it.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BrowserRecord {
    pub port: u16,
    pub pid: u32,
    /// Who started it (an agent, `baton-mcp[PID]`, the desktop app).
    pub owner: String,
    pub headless: bool,
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub started_at: Timestamp,
    /// `http://127.0.0.1:PORT`, what `--cdp-endpoint` options take.
    pub cdp_endpoint: String,
    /// The browser-level WebSocket debugger URL.
    pub websocket_url: String,
}

/// A registry entry with whether its process still runs.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize)]
pub struct ListedBrowser {
    #[serde(flatten)]
    #[cfg_attr(feature = "ts", ts(flatten))]
    pub record: BrowserRecord,
    pub alive: bool,
}

/// A free loopback port, for a browser's DevTools endpoint.
pub fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?
        .local_addr()?
        .port())
}

pub fn registry_dir(layout: &Layout) -> PathBuf {
    layout.root().join("browsers")
}

/// Every browser in the registry, with whether it still runs.
pub fn list(layout: &Layout) -> Result<Vec<ListedBrowser>, StoreError> {
    Ok(records(layout)?
        .into_iter()
        .map(|record| {
            let alive = pid_alive(record.pid) && cdp_answers(record.port);
            ListedBrowser { record, alive }
        })
        .collect())
}

/// The registry's records as written, without checking that the browsers still run.
pub fn records(layout: &Layout) -> Result<Vec<BrowserRecord>, StoreError> {
    let dir = registry_dir(layout);
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(StoreError::io(dir, e)),
    };
    let mut records = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|x| x != "json") {
            continue;
        }
        let Ok(bytes) = std::fs::read(&path) else {
            continue;
        };
        // A record that does not parse is not a browser anyone can attach to; skip it.
        if let Ok(record) = serde_json::from_slice::<BrowserRecord>(&bytes) {
            records.push(record);
        }
    }
    records.sort_by_key(|r| r.port);
    Ok(records)
}

/// Whether something answers CDP's `/json/version` on `port` right now.
pub fn cdp_answers(port: u16) -> bool {
    version(port, Duration::from_millis(500)).is_some()
}

/// The browser's `/json/version` document, if it answers within `timeout`.
pub(crate) fn version(port: u16, timeout: Duration) -> Option<serde_json::Value> {
    devtools_json(port, "/json/version", timeout)
}

/// A JSON document of the DevTools HTTP endpoint (`/json/version`, `/json/list`), if the
/// browser answers within `timeout`.
pub fn devtools_json(port: u16, path: &str, timeout: Duration) -> Option<serde_json::Value> {
    let mut stream =
        TcpStream::connect_timeout(&(Ipv4Addr::LOCALHOST, port).into(), timeout).ok()?;
    stream.set_read_timeout(Some(timeout)).ok()?;
    stream.set_write_timeout(Some(timeout)).ok()?;
    let request =
        format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).ok()?;
    // Chromium keeps the connection open: read the headers, then exactly Content-Length bytes.
    let mut response = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        let n = stream.read(&mut buffer).ok()?;
        if n == 0 {
            break;
        }
        response.extend_from_slice(&buffer[..n]);
        let text = String::from_utf8_lossy(&response);
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length = head
                .lines()
                .find_map(|l| {
                    let (name, value) = l.split_once(':')?;
                    name.eq_ignore_ascii_case("content-length")
                        .then(|| value.trim().parse::<usize>().ok())?
                })
                .unwrap_or(usize::MAX);
            if body.len() >= length {
                return serde_json::from_str(&body[..length]).ok();
            }
        }
        if response.len() > 1024 * 1024 {
            return None;
        }
    }
    let text = String::from_utf8_lossy(&response);
    serde_json::from_str(text.split_once("\r\n\r\n")?.1).ok()
}
