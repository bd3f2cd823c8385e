//! Just enough of the W3C WebDriver protocol, over plain HTTP, to drive the desktop app through
//! `tauri-driver` (which hands the session to Debian's `WebKitWebDriver`): find elements,
//! click, type, read text and attributes, pointer drags, screenshots.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::PATIENCE;

pub struct Session {
    port: u16,
    id: String,
}

/// One request; a connection that closes before any answer (the driver proxy does that now and
/// then) is retried on a new one.
fn http(port: u16, method: &str, path: &str, body: Option<&Value>) -> Result<Value, String> {
    let mut last = String::new();
    for _ in 0..3 {
        match http_once(port, method, path, body) {
            Err(e) if e == "no answer" => last = e,
            other => return other,
        }
    }
    Err(last)
}

fn http_once(port: u16, method: &str, path: &str, body: Option<&Value>) -> Result<Value, String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).map_err(|e| e.to_string())?;
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream
        .write_all(request.as_bytes())
        .map_err(|e| e.to_string())?;
    let mut response = Vec::new();
    stream
        .read_to_end(&mut response)
        .map_err(|e| e.to_string())?;
    if response.is_empty() {
        return Err("no answer".into());
    }
    let text = String::from_utf8_lossy(&response);
    let (head, body) = text.split_once("\r\n\r\n").ok_or("no HTTP body")?;
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(body)
    } else {
        body.to_string()
    };
    let value: Value = serde_json::from_str(&body).map_err(|e| format!("{e}: {body}"))?;
    if head.starts_with("HTTP/1.1 2") {
        Ok(value["value"].clone())
    } else {
        Err(format!("{head}\n{value}"))
    }
}

fn dechunk(body: &str) -> String {
    let mut out = String::new();
    let mut rest = body;
    while let Some((size, tail)) = rest.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if size == 0 || tail.len() < size {
            break;
        }
        out.push_str(&tail[..size]);
        rest = tail[size..].trim_start_matches("\r\n");
    }
    out
}

impl Session {
    /// Opens a session on the driver at `port` for `capabilities`, retrying until the driver
    /// listens.
    pub fn start(port: u16, capabilities: Value) -> Session {
        let deadline = Instant::now() + PATIENCE;
        loop {
            match http(
                port,
                "POST",
                "/session",
                Some(&json!({"capabilities": capabilities})),
            ) {
                Ok(value) => {
                    return Session {
                        port,
                        id: value["sessionId"]
                            .as_str()
                            .expect("a session id")
                            .to_string(),
                    };
                }
                Err(e) => {
                    assert!(Instant::now() < deadline, "no WebDriver session: {e}");
                    std::thread::sleep(Duration::from_millis(100)); // retry until the deadline
                }
            }
        }
    }

    fn call(&self, method: &str, path: &str, body: Option<Value>) -> Result<Value, String> {
        http(
            self.port,
            method,
            &format!("/session/{}{path}", self.id),
            body.as_ref(),
        )
    }

    /// The element matching a CSS selector, waiting for it to appear.
    pub fn find(&self, css: &str) -> String {
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(id) = self.find_now(css) {
                return id;
            }
            if Instant::now() >= deadline {
                let _ = self.screenshot_to_target(&format!("find {css}"));
                panic!("no element matches {css}");
            }
            std::thread::sleep(Duration::from_millis(50)); // retry until the deadline
        }
    }

    /// Runs `script` in the page and returns its value.
    pub fn execute(&self, script: &str) -> Value {
        self.call(
            "POST",
            "/execute/sync",
            Some(json!({"script": script, "args": []})),
        )
        .unwrap_or(Value::Null)
    }

    /// The element that has the focus.
    pub fn active(&self) -> Option<String> {
        element_id(&self.call("GET", "/element/active", None).ok()?)
    }

    /// The element matching a CSS selector if there is one now (no waiting).
    pub fn find_now(&self, css: &str) -> Option<String> {
        element_id(
            &self
                .call(
                    "POST",
                    "/element",
                    Some(json!({"using": "css selector", "value": css})),
                )
                .ok()?,
        )
    }

    /// Clicks an element; one that went away meanwhile is not an error.
    pub fn click(&self, element: &str) {
        let _ = self.call(
            "POST",
            &format!("/element/{element}/click"),
            Some(json!({})),
        );
    }

    pub fn type_text(&self, element: &str, text: &str) {
        self.call(
            "POST",
            &format!("/element/{element}/value"),
            Some(json!({"text": text})),
        )
        .unwrap();
    }

    /// The text of the element matching `css` (found afresh each time).
    pub fn text(&self, css: &str) -> String {
        let element = self.find(css);
        self.call("GET", &format!("/element/{element}/text"), None)
            .map(|v| v.as_str().unwrap_or_default().to_string())
            .unwrap_or_default()
    }

    /// The text of the element matching `css` now, or `None` when there is none or it went
    /// away before its text was read: the one read to use while waiting for an element that
    /// may come and go (`find_now` then [`Session::text`] would wait out [`PATIENCE`] for an
    /// element removed between the two).
    pub fn text_now(&self, css: &str) -> Option<String> {
        let element = self.find_now(css)?;
        self.call("GET", &format!("/element/{element}/text"), None)
            .ok()
            .map(|v| v.as_str().unwrap_or_default().to_string())
    }

    /// A DOM property of the element matching `css` (`value` of a text field, say): a string
    /// as it is, any other value as JSON (`disabled` is `"false"` or `"true"`), `""` when the
    /// driver could not read it.
    pub fn property(&self, css: &str, name: &str) -> String {
        let element = self.find(css);
        match self.call("GET", &format!("/element/{element}/property/{name}"), None) {
            Ok(Value::String(text)) => text,
            Ok(other) => other.to_string(),
            Err(_) => String::new(),
        }
    }

    pub fn attribute(&self, css: &str, name: &str) -> Option<String> {
        let element = self.find(css);
        self.call("GET", &format!("/element/{element}/attribute/{name}"), None)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
    }

    /// The centre of the element matching `css`, found afresh (the UI re-renders on every
    /// change, which makes older element references stale).
    fn center(&self, css: &str) -> (i64, i64) {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let element = self.find(css);
            if let Ok(rect) = self.call("GET", &format!("/element/{element}/rect"), None) {
                let f = |k: &str| rect[k].as_f64().unwrap_or_default();
                return (
                    (f("x") + f("width") / 2.0) as i64,
                    (f("y") + f("height") / 2.0) as i64,
                );
            }
            assert!(Instant::now() < deadline, "cannot locate {css}");
        }
    }

    /// Clicks with the mouse at the centre of the element matching `css`: for shapes such as a
    /// straight SVG line, whose box has no area for an element click.
    pub fn click_at(&self, css: &str) {
        let (x, y) = self.center(css);
        let actions = vec![
            json!({"type": "pointerMove", "duration": 0, "x": x, "y": y}),
            json!({"type": "pointerDown", "button": 0}),
            json!({"type": "pointerUp", "button": 0}),
        ];
        self.perform(json!({"type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"}, "actions": actions}));
    }

    /// Presses keys one after another, as a keyboard user does: WebDriver key values, e.g.
    /// `"\u{E00D}"` (Space) or `"\u{E014}"` (arrow right).
    pub fn press_keys(&self, keys: &[&str]) {
        let mut actions = Vec::new();
        for key in keys {
            actions.push(json!({"type": "keyDown", "value": key}));
            actions.push(json!({"type": "keyUp", "value": key}));
            actions.push(json!({"type": "pause", "duration": 30}));
        }
        self.perform(json!({"type": "key", "id": "keyboard", "actions": actions}));
    }

    /// Drags the element matching `from` onto the one matching `to` with the mouse, in small
    /// steps (drag libraries wait for movement).
    pub fn drag(&self, from: &str, to: &str) {
        let (x0, y0) = self.center(from);
        let (x1, y1) = self.center(to);
        let mut actions = vec![
            json!({"type": "pointerMove", "duration": 0, "x": x0, "y": y0}),
            json!({"type": "pointerDown", "button": 0}),
        ];
        for step in 1..=10 {
            let x = x0 + (x1 - x0) * step / 10;
            let y = y0 + (y1 - y0) * step / 10;
            actions.push(json!({"type": "pointerMove", "duration": 30, "x": x, "y": y}));
        }
        actions.push(json!({"type": "pointerUp", "button": 0}));
        self.perform(json!({"type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"}, "actions": actions}));
    }

    /// Performs one input source's actions, then releases everything it holds.
    fn perform(&self, source: Value) {
        self.call("POST", "/actions", Some(json!({ "actions": [source] })))
            .unwrap();
        let _ = self.call("DELETE", "/actions", None);
    }

    fn screenshot_to_target(&self, what: &str) -> Option<()> {
        let dir = crate::artifacts_dir().join("desktop-e2e");
        let name: String = what
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        self.screenshot(&dir.join(format!("failed-{name}.png")));
        Some(())
    }

    /// Saves a PNG of the window.
    /// Resizes the window (the app's own, in a Tauri session).
    pub fn set_window_size(&self, width: u32, height: u32) {
        let _ = self.call(
            "POST",
            "/window/rect",
            Some(json!({"width": width, "height": height})),
        );
    }

    pub fn screenshot(&self, path: &std::path::Path) {
        let data = self.call("GET", "/screenshot", None).unwrap();
        let bytes = base64_decode(data.as_str().unwrap());
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }

    /// Waits until `check` holds (panics after [`PATIENCE`] with `what`).
    pub fn wait_for(&self, what: &str, mut check: impl FnMut(&Session) -> bool) {
        let deadline = Instant::now() + PATIENCE;
        while !check(self) {
            if Instant::now() >= deadline {
                let _ = self.screenshot_to_target(what);
                panic!("timed out waiting for {what}");
            }
            std::thread::sleep(Duration::from_millis(25)); // retry until the deadline
        }
    }

    pub fn close(self) {
        let _ = self.call("DELETE", "", None);
    }
}

/// The id in a WebDriver element reference (`{"element-6066-…": "ID"}`).
fn element_id(reference: &Value) -> Option<String> {
    reference
        .as_object()?
        .values()
        .next()?
        .as_str()
        .map(str::to_string)
}

fn base64_decode(text: &str) -> Vec<u8> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut buffer, mut bits) = (0u32, 0u32);
    for c in text.bytes() {
        let Some(value) = ALPHABET.iter().position(|a| *a == c) else {
            continue;
        };
        buffer = (buffer << 6) | value as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((buffer >> bits) as u8);
        }
    }
    out
}
