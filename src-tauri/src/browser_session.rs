//! Manual UI-test sessions (the source design's manual mode): the lead starts a visible
//! Chromium on a CDP port recorded in the browser registry (so an agent's `baton mcp --proxy`
//! can attach), tests by hand, and finishes the session, which writes the run's signal (by
//! default `ui-test-done`) so a waiting diagnostics agent goes on. Closing the browser window
//! writes the signal too. Starting a session clears the run's stale signal first.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use baton_live::browser::{BrowserRecord, LaunchOptions, RunningBrowser};
use baton_store::{Project, SignalTarget};

/// The signal a session writes unless told otherwise.
pub const DEFAULT_SIGNAL: &str = "ui-test-done";
/// How often the session notices that its browser window was closed.
const EXIT_CHECK: Duration = Duration::from_millis(250);

#[derive(Default, Clone)]
pub struct BrowserSessions {
    active: Arc<Mutex<Option<Active>>>,
}

struct Active {
    browser: RunningBrowser,
    project: Project,
    signal: SignalTarget,
}

/// Writes the session's signal, saying why.
fn finish_signal(project: &Project, signal: &SignalTarget, why: &str) -> baton_store::Result<()> {
    project
        .write_signal(
            signal,
            Some(baton_store::project::LEADER),
            Some(why),
            baton_store::ForeignFile::Keep,
        )
        .map(drop)
}

impl BrowserSessions {
    /// Starts a session on `url`: clears the run's signal, launches a visible browser.
    pub fn start(
        &self,
        project: &Project,
        url: &str,
        signal: &str,
    ) -> Result<BrowserRecord, String> {
        let mut active = self.active.lock().expect("session lock");
        if let Some(running) = active.as_ref() {
            return Err(format!(
                "a session is already running (browser on port {}); finish it first",
                running.browser.record().port
            ));
        }
        baton_browser::check_url(url).map_err(|e| e.to_string())?;
        let run = project.resolve_run(None).map_err(|e| e.to_string())?;
        let target = SignalTarget::named(run, signal).map_err(|e| e.to_string())?;
        project
            .clear_signal(
                &target,
                Some(baton_store::project::LEADER),
                baton_store::ForeignFile::Keep,
            )
            .map_err(|e| e.to_string())?;
        let port = baton_live::browser::free_port().map_err(|e| e.to_string())?;
        let mut options = LaunchOptions::new(port, "baton-desktop (manual session)");
        options.headless = false;
        let browser =
            RunningBrowser::launch(project.layout(), &options).map_err(|e| e.to_string())?;
        let record = browser.record().clone();
        // Opened through CDP rather than on the command line, so the session starts with the
        // page loaded; a page that cannot be opened (the dev server is not up yet) shows the
        // browser's error page, and the session goes on.
        if let Err(e) = baton_browser::navigate(port, url) {
            eprintln!("baton-desktop: manual session: {e}");
        }
        *active = Some(Active {
            browser,
            project: project.clone(),
            signal: target,
        });
        drop(active);
        self.watch_for_close();
        Ok(record)
    }

    /// Finishes the session: writes the signal and stops the browser.
    pub fn finish(&self) -> Result<(), String> {
        let active = self
            .active
            .lock()
            .expect("session lock")
            .take()
            .ok_or("no session is running")?;
        finish_signal(&active.project, &active.signal, "manual session finished")
            .map_err(|e| e.to_string())?;
        active.browser.stop();
        Ok(())
    }

    /// The running session's browser, if any.
    pub fn current(&self) -> Option<BrowserRecord> {
        self.active
            .lock()
            .expect("session lock")
            .as_ref()
            .map(|a| a.browser.record().clone())
    }

    /// When the user closes the browser window, the session ends as if finished.
    fn watch_for_close(&self) {
        let sessions = self.active.clone();
        std::thread::spawn(move || {
            loop {
                std::thread::sleep(EXIT_CHECK); // a closed window sends no event we can wait on
                let mut guard = sessions.lock().expect("session lock");
                let Some(active) = guard.as_mut() else { return };
                if active.browser.is_process_running() {
                    continue;
                }
                let active = guard.take().expect("checked above");
                let _ = finish_signal(&active.project, &active.signal, "browser window closed");
                active.browser.stop();
                return;
            }
        });
    }
}
