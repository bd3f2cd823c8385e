//! Controls for a browser that is already running with its DevTools protocol on a loopback
//! port, as every browser in the registry is: open a URL, reload, take a screenshot. The
//! desktop app's manual-session controls and `baton browser …` call these functions, so both
//! behave the same.
//!
//! Each call opens a DevTools session on the browser's first page ([`crate::cdp`]), acts, reads
//! the page's URL and title, and closes the session: no call holds a connection that could keep
//! a closed browser alive or get in the way of an agent's Playwright attached to the same port.
//! The API is blocking, so the CLI and the desktop's command threads call it directly.

use std::path::{Path, PathBuf};
use std::time::Instant;

use base64::Engine;
use baton_core::{Layout, StoreError, Timestamp};
use serde::Serialize;
use serde_json::json;

use crate::cdp::PageSession;
pub use crate::control_error::{BrowserControlError, CONTROL_TIMEOUT, Result};

/// What Baton's browser controls open: web pages and `about:` pages. Not `file:` (a page could
/// then show any file the user can read), `chrome:`, `javascript:` or other schemes.
const SCHEMES: [&str; 3] = ["http://", "https://", "about:"];

/// What the page shows after a control.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PageState {
    pub port: u16,
    pub url: String,
    pub title: String,
}

/// A screenshot written into `.coordination/screenshots/`.
#[derive(Debug, Clone, Serialize)]
pub struct SavedScreenshot {
    pub port: u16,
    pub path: PathBuf,
    pub bytes: usize,
    #[serde(skip)]
    pub png: Vec<u8>,
}

/// Refuses URLs a manual session has no business opening (`javascript:`, `chrome:`, …).
pub fn check_url(url: &str) -> Result<()> {
    let bad = |reason: &str| {
        Err(BrowserControlError::BadUrl {
            url: url.chars().take(200).collect(),
            reason: reason.into(),
        })
    };
    if url.len() > 8192 {
        return bad("longer than 8192 bytes");
    }
    if url.chars().any(char::is_control) {
        return bad("it contains control characters");
    }
    let lower = url.to_ascii_lowercase();
    if !SCHEMES.iter().any(|s| lower.starts_with(s)) {
        return bad(
            "use an http://, https:// or about: URL (file:, chrome: and other schemes are refused)",
        );
    }
    Ok(())
}

/// Opens `url` in the browser's page and waits until it has loaded.
pub fn navigate(port: u16, url: &str) -> Result<PageState> {
    check_url(url)?;
    control(port, |page| {
        page.call("Page.enable", json!({}))?;
        page.clear_events();
        let answer = page.call("Page.navigate", json!({"url": url}))?;
        if let Some(error) = answer["errorText"].as_str() {
            return Err(BrowserControlError::BadUrl {
                url: url.to_string(),
                reason: format!("the browser could not open it ({error})"),
            });
        }
        // A move within the same document (a #fragment) loads nothing.
        if answer.get("loaderId").is_some() {
            page.wait_for_event("Page.loadEventFired")?;
        }
        Ok(())
    })
    .map(|(_, state)| state)
}

/// Reloads the browser's page and waits until it has loaded again.
pub fn reload(port: u16) -> Result<PageState> {
    control(port, |page| {
        page.call("Page.enable", json!({}))?;
        page.clear_events();
        page.call("Page.reload", json!({}))?;
        page.wait_for_event("Page.loadEventFired")?;
        Ok(())
    })
    .map(|(_, state)| state)
}

/// The page's URL and title.
pub fn page_state(port: u16) -> Result<PageState> {
    control(port, |_| Ok(())).map(|(_, state)| state)
}

/// A PNG of what the page shows.
pub fn screenshot(port: u16) -> Result<(Vec<u8>, PageState)> {
    control(port, |page| {
        let shot = page.call("Page.captureScreenshot", json!({"format": "png"}))?;
        base64::engine::general_purpose::STANDARD
            .decode(shot["data"].as_str().unwrap_or_default())
            .map_err(|e| BrowserControlError::Protocol {
                port,
                message: format!("the screenshot is not base64: {e}"),
            })
    })
}

/// Where screenshots go unless the user names a file.
pub fn screenshots_dir(layout: &Layout) -> PathBuf {
    layout.root().join("screenshots")
}

/// Takes a screenshot and writes it to `out`, or to
/// `.coordination/screenshots/port-PORT-TIME.png` when `out` is `None`.
pub fn save_screenshot(layout: &Layout, port: u16, out: Option<&Path>) -> Result<SavedScreenshot> {
    let (png, _) = screenshot(port)?;
    let path = match out {
        Some(path) => path.to_path_buf(),
        None => {
            let dir = screenshots_dir(layout);
            std::fs::create_dir_all(&dir).map_err(|e| StoreError::io(&dir, e))?;
            let stamp = Timestamp::now().0.format("%Y%m%dT%H%M%S%3f");
            dir.join(format!("port-{port}-{stamp}.png"))
        }
    };
    baton_fs::write_atomic(&path, &png)?;
    Ok(SavedScreenshot {
        port,
        bytes: png.len(),
        path,
        png,
    })
}

/// Opens a session on the browser's first page, runs `act`, reads the page's state.
fn control<T>(
    port: u16,
    act: impl FnOnce(&mut PageSession) -> Result<T>,
) -> Result<(T, PageState)> {
    let mut page = PageSession::connect(port, Instant::now() + CONTROL_TIMEOUT)?;
    let value = act(&mut page)?;
    let read = page.call(
        "Runtime.evaluate",
        json!({"expression": "[location.href, document.title]", "returnByValue": true}),
    )?;
    let pair = &read["result"]["value"];
    let state = PageState {
        port,
        url: pair[0].as_str().unwrap_or_default().to_string(),
        title: pair[1].as_str().unwrap_or_default().to_string(),
    };
    Ok((value, state))
}
