//! The proxy's browser for async callers: `baton-browser`'s [`OnDemandBrowser`] (a CDP port
//! chosen when the server starts, Chromium launched on it at first use and again after it
//! died), each call run on a blocking thread so a launch never stalls the server's runtime.

use std::sync::Arc;

use baton_browser::BrowserRecord;
use baton_browser::on_demand::OnDemandBrowser;
use baton_core::Layout;

pub struct BrowserManager {
    browser: Arc<OnDemandBrowser>,
}

impl BrowserManager {
    /// Picks a free loopback port now; launches nothing yet. Its record goes in `layout`'s
    /// registry; `in_sandbox`: the proxy runs inside an agent's sandbox.
    pub fn new(
        layout: Layout,
        owner: String,
        headless: bool,
        in_sandbox: bool,
    ) -> std::io::Result<Arc<BrowserManager>> {
        Ok(Arc::new(BrowserManager {
            browser: Arc::new(
                OnDemandBrowser::new(layout, owner, headless)?.in_sandbox(in_sandbox),
            ),
        }))
    }

    pub fn port(&self) -> u16 {
        self.browser.port()
    }

    pub fn cdp_endpoint(&self) -> String {
        self.browser.cdp_endpoint()
    }

    /// The running browser's record, launching it first if needed (or if it died).
    pub async fn ensure(&self, headless: Option<bool>) -> Result<BrowserRecord, String> {
        let browser = self.browser.clone();
        tokio::task::spawn_blocking(move || browser.ensure(headless))
            .await
            .map_err(|e| e.to_string())?
            .map_err(|e| format!("could not launch the browser: {e}"))
    }

    /// The running browser, if any (without launching one).
    pub async fn current(&self) -> Option<BrowserRecord> {
        let browser = self.browser.clone();
        tokio::task::spawn_blocking(move || browser.current())
            .await
            .ok()
            .flatten()
    }

    /// Stops the browser; `false` when none was running.
    pub async fn stop(&self) -> bool {
        let browser = self.browser.clone();
        tokio::task::spawn_blocking(move || browser.stop())
            .await
            .unwrap_or(false)
    }
}
