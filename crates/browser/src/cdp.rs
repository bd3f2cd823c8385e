//! A small, blocking client of the Chrome DevTools Protocol for one page: connect to the
//! page's own WebSocket (listed by the browser's `/json/list`), send commands, wait for
//! replies and events, all under one deadline.
//!
//! Why not chromiumoxide (the design's choice for CDP): attached to a browser it did not
//! launch, its `Page::goto` never returns when the page moves to another site's renderer
//! process (mattsse/chromiumoxide#191; reproduced here with Debian's Chromium, every
//! cross-origin navigation hung for the full timeout), and its evaluations then fail with
//! "Cannot find context with specified id". A page-level session survives such moves, and
//! the four commands Baton needs fit in this module.

use std::net::{Ipv4Addr, TcpStream};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tungstenite::{Message, WebSocket};

use crate::control_error::{BrowserControlError, Result};

pub struct PageSession {
    port: u16,
    socket: WebSocket<TcpStream>,
    next_id: u64,
    deadline: Instant,
    /// Events read while waiting for a reply, kept for a later `wait_for_event`.
    events: Vec<Value>,
}

impl PageSession {
    /// Connects to the first page of the browser on `port`; every later call must finish
    /// before `deadline`.
    pub fn connect(port: u16, deadline: Instant) -> Result<PageSession> {
        let remaining = || deadline.saturating_duration_since(Instant::now());
        let targets = crate::registry::devtools_json(port, "/json/list", remaining())
            .ok_or(BrowserControlError::NotRunning { port })?;
        let url = targets
            .as_array()
            .into_iter()
            .flatten()
            .find(|t| t["type"] == "page")
            .and_then(|t| t["webSocketDebuggerUrl"].as_str())
            .ok_or(BrowserControlError::NoPage { port })?
            .to_string();
        let stream = TcpStream::connect_timeout(&(Ipv4Addr::LOCALHOST, port).into(), remaining())
            .map_err(|_| BrowserControlError::NotRunning { port })?;
        stream
            .set_write_timeout(Some(remaining().max(Duration::from_millis(1))))
            .map_err(|e| io(port, e))?;
        stream
            .set_read_timeout(Some(remaining().max(Duration::from_millis(1))))
            .map_err(|e| io(port, e))?;
        let (socket, _) = tungstenite::client(url.as_str(), stream).map_err(|e| {
            BrowserControlError::Protocol {
                port,
                message: format!("cannot open the page's DevTools session: {e}"),
            }
        })?;
        Ok(PageSession {
            port,
            socket,
            next_id: 1,
            deadline,
            events: Vec::new(),
        })
    }

    /// Sends `method` and returns its result; a protocol error becomes `Protocol`.
    pub fn call(&mut self, method: &str, params: Value) -> Result<Value> {
        let id = self.next_id;
        self.next_id += 1;
        let request = json!({"id": id, "method": method, "params": params});
        self.socket
            .send(Message::text(request.to_string()))
            .map_err(|e| self.failed(e))?;
        loop {
            let message = self.read()?;
            if message["id"].as_u64() == Some(id) {
                if let Some(error) = message.get("error") {
                    return Err(BrowserControlError::Protocol {
                        port: self.port,
                        message: format!(
                            "{method}: {}",
                            error["message"].as_str().unwrap_or("unknown error")
                        ),
                    });
                }
                return Ok(message["result"].clone());
            }
            if message.get("method").is_some() {
                self.events.push(message);
            }
        }
    }

    /// Waits for the event `method` (one that already arrived counts).
    pub fn wait_for_event(&mut self, method: &str) -> Result<Value> {
        if let Some(i) = self.events.iter().position(|e| e["method"] == method) {
            return Ok(self.events.remove(i)["params"].clone());
        }
        loop {
            let message = self.read()?;
            if message["method"] == method {
                return Ok(message["params"].clone());
            }
        }
    }

    /// Forgets the events read so far.
    pub fn clear_events(&mut self) {
        self.events.clear();
    }

    /// The next JSON message, within the deadline.
    fn read(&mut self) -> Result<Value> {
        loop {
            let remaining = self.deadline.saturating_duration_since(Instant::now());
            if remaining.is_zero() {
                return Err(BrowserControlError::Timeout { port: self.port });
            }
            let _ = self.socket.get_mut().set_read_timeout(Some(remaining));
            match self.socket.read() {
                Ok(Message::Text(text)) => {
                    if let Ok(value) = serde_json::from_str(text.as_str()) {
                        return Ok(value);
                    }
                }
                Ok(Message::Close(_)) => {
                    return Err(BrowserControlError::Protocol {
                        port: self.port,
                        message: "the page closed its DevTools session".into(),
                    });
                }
                Ok(_) => {}
                Err(e) => return Err(self.failed(e)),
            }
        }
    }

    fn failed(&self, e: tungstenite::Error) -> BrowserControlError {
        match e {
            tungstenite::Error::Io(io)
                if matches!(
                    io.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                BrowserControlError::Timeout { port: self.port }
            }
            e => BrowserControlError::Protocol {
                port: self.port,
                message: e.to_string(),
            },
        }
    }
}

impl Drop for PageSession {
    fn drop(&mut self) {
        let _ = self.socket.close(None);
        let _ = self.socket.flush();
    }
}

fn io(port: u16, e: std::io::Error) -> BrowserControlError {
    BrowserControlError::Protocol {
        port,
        message: e.to_string(),
    }
}
