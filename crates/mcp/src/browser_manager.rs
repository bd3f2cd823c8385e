//! The proxy's browser: a CDP port chosen when the server starts, and Chromium launched on it
//! the first time a child tool is called (or on `coordinator_launch_browser`). A browser that
//! died is launched again on the next call; one that fails to launch fails that call only.

use std::sync::Arc;

use baton_live::browser::{BrowserRecord, LaunchOptions, RunningBrowser};
use baton_store::Layout;
use tokio::sync::Mutex;

pub struct BrowserManager {
    layout: Layout,
    port: u16,
    owner: String,
    headless: bool,
    running: Mutex<Option<RunningBrowser>>,
}

impl BrowserManager {
    /// Picks a free loopback port now; launches nothing yet.
    pub fn new(
        layout: Layout,
        owner: String,
        headless: bool,
    ) -> std::io::Result<Arc<BrowserManager>> {
        Ok(Arc::new(BrowserManager {
            layout,
            port: baton_live::browser::free_port()?,
            owner,
            headless,
            running: Mutex::new(None),
        }))
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn cdp_endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The running browser's record, launching it first if needed (or if it died).
    pub async fn ensure(&self, headless: Option<bool>) -> Result<BrowserRecord, String> {
        let mut running = self.running.lock().await;
        if let Some(browser) = running.as_mut() {
            if browser.is_process_running() {
                return Ok(browser.record().clone());
            }
            // It died (or was killed): clean up after it and start another.
            if let Some(dead) = running.take() {
                tokio::task::spawn_blocking(move || dead.stop()).await.ok();
            }
        }
        let mut options = LaunchOptions::new(self.port, self.owner.clone());
        options.headless = headless.unwrap_or(self.headless);
        let layout = self.layout.clone();
        let browser =
            tokio::task::spawn_blocking(move || RunningBrowser::launch(&layout, &options))
                .await
                .map_err(|e| e.to_string())?
                .map_err(|e| format!("could not launch the browser: {e}"))?;
        let record = browser.record().clone();
        *running = Some(browser);
        Ok(record)
    }

    /// The running browser, if any (without launching one).
    pub async fn current(&self) -> Option<BrowserRecord> {
        let mut running = self.running.lock().await;
        let browser = running.as_mut()?;
        browser
            .is_process_running()
            .then(|| browser.record().clone())
    }

    /// Stops the browser; `false` when none was running.
    pub async fn stop(&self) -> bool {
        let browser = self.running.lock().await.take();
        match browser {
            Some(browser) => {
                tokio::task::spawn_blocking(move || browser.stop())
                    .await
                    .ok();
                true
            }
            None => false,
        }
    }
}
