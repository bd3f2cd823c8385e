//! A browser launched the first time someone needs it: the MCP proxy picks a CDP port when it
//! starts (its Playwright child is told that endpoint up front) and launches Chromium on it at
//! the first browser tool call. A browser that died is launched again on the next call; one
//! that fails to launch fails that call only.
//!
//! Blocking, like the rest of the crate: an async host calls it on a blocking thread. The lock
//! is held across a launch, so two first calls at once start one browser.

use std::sync::Mutex;

use baton_core::Layout;

use crate::launch::{BrowserError, LaunchOptions, RunningBrowser};
use crate::registry::{BrowserRecord, free_port};

pub struct OnDemandBrowser {
    layout: Layout,
    port: u16,
    owner: String,
    headless: bool,
    in_sandbox: bool,
    running: Mutex<Option<RunningBrowser>>,
}

impl OnDemandBrowser {
    /// Picks a free loopback port now; launches nothing yet.
    pub fn new(layout: Layout, owner: String, headless: bool) -> std::io::Result<OnDemandBrowser> {
        Ok(OnDemandBrowser {
            layout,
            port: free_port()?,
            owner,
            headless,
            in_sandbox: false,
            running: Mutex::new(None),
        })
    }

    /// The same, for a proxy that runs inside an agent's sandbox ([`LaunchOptions::in_sandbox`]).
    pub fn in_sandbox(mut self, in_sandbox: bool) -> OnDemandBrowser {
        self.in_sandbox = in_sandbox;
        self
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn cdp_endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The running browser's record, launching it first if needed (or if it died);
    /// `headless` overrides the default for a launch.
    pub fn ensure(&self, headless: Option<bool>) -> Result<BrowserRecord, BrowserError> {
        let mut running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(browser) = running.as_mut()
            && browser.is_process_running()
        {
            return Ok(browser.record().clone());
        }
        // It died (or was killed): clean up after it and start another.
        if let Some(dead) = running.take() {
            dead.stop();
        }
        let mut options = LaunchOptions::new(self.port, self.owner.clone());
        options.headless = headless.unwrap_or(self.headless);
        options.in_sandbox = self.in_sandbox;
        let browser = RunningBrowser::launch(&self.layout, &options)?;
        let record = browser.record().clone();
        *running = Some(browser);
        Ok(record)
    }

    /// The running browser, if any (without launching one).
    pub fn current(&self) -> Option<BrowserRecord> {
        let mut running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        let browser = running.as_mut()?;
        browser
            .is_process_running()
            .then(|| browser.record().clone())
    }

    /// Stops the browser; `false` when none was running.
    pub fn stop(&self) -> bool {
        let browser = self
            .running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        match browser {
            Some(browser) => {
                browser.stop();
                true
            }
            None => false,
        }
    }
}
