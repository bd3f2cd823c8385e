//! The desktop's hold on a manual UI-test session (`baton-browser`'s [`ManualSession`], where
//! the rules live): the session this app started, and a thread that notices when its browser
//! window is closed. A session started elsewhere (`baton browser session start`) shows and
//! finishes here too, through the project's session record.

use std::sync::{Arc, Mutex};

use baton_api::Error;
use baton_api::OpenProject;
use baton_browser::session::{self, EXIT_CHECK, ManualSession, SessionRecord};

/// Who the registry says started the browser.
const OWNER: &str = "baton-desktop (manual session)";

#[derive(Default, Clone)]
pub struct BrowserSessions {
    held: Arc<Mutex<Option<ManualSession>>>,
}

impl BrowserSessions {
    /// Starts a session on `url` that writes `signal` when it ends.
    pub fn start(
        &self,
        project: &OpenProject,
        url: &str,
        signal: &str,
    ) -> Result<SessionRecord, Error> {
        let mut held = self.held.lock().expect("session lock");
        let started =
            ManualSession::start(project.local(), project.signals.clone(), url, signal, OWNER)?;
        if let Some(e) = &started.page_error {
            eprintln!("baton-desktop: manual session: {e}");
        }
        let record = started.record().clone();
        *held = Some(started);
        drop(held);
        self.watch_for_end();
        Ok(record)
    }

    /// Finishes the project's session, whoever holds it: writes the signal, stops the browser.
    pub fn finish(&self, project: &OpenProject) -> Result<SessionRecord, Error> {
        let own = self.held.lock().expect("session lock").take();
        Ok(match own {
            Some(own) => own.finish()?,
            None => session::finish(project.local(), &*project.signals)?,
        })
    }

    /// The project's running session on this machine, whoever holds it.
    pub fn current(&self, project: &OpenProject) -> Option<SessionRecord> {
        session::current(project.local())
    }

    /// Lets go of the session when it ends: the window was closed (the session writes the
    /// signal) or another process finished it.
    fn watch_for_end(&self) {
        let held = self.held.clone();
        std::thread::spawn(move || {
            loop {
                std::thread::sleep(EXIT_CHECK); // a closed window sends no event to wait on
                let mut guard = held.lock().expect("session lock");
                let Some(own) = guard.as_mut() else { return };
                if own.ended().is_some() {
                    guard.take();
                    return;
                }
            }
        });
    }
}
