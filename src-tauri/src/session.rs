//! The open project and its change feed. The feed's events go to the window as
//! `baton-change` events, so a change made by a worker's CLI in a terminal shows on the board
//! without polling or reloading.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use baton_live::feed::{ChangeEvent, ChangeFeed};
use baton_store::Project;
use tauri::{AppHandle, Emitter};

/// The event name the UI listens to.
pub const CHANGE_EVENT: &str = "baton-change";

#[derive(Default)]
pub struct Session {
    open: Mutex<Option<Open>>,
}

struct Open {
    project: Project,
    /// Set to stop the thread that owns this project's feed.
    stop: Arc<AtomicBool>,
}

impl Drop for Open {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

impl Session {
    pub fn project(&self) -> Option<Project> {
        self.open
            .lock()
            .expect("session lock")
            .as_ref()
            .map(|o| o.project.clone())
    }

    /// Opens `project`, replacing any open one, and starts forwarding its changes.
    pub fn open(&self, app: &AppHandle, project: Project) -> Result<(), baton_store::StoreError> {
        let feed = ChangeFeed::start(&project, baton_live::WatchMode::default()).map_err(|e| {
            baton_store::StoreError::InvalidInput {
                field: "project",
                reason: format!("cannot watch it: {e}"),
            }
        })?;
        let tray_project = project.clone();
        if let Ok(report) = project.status() {
            crate::tray::update(app, &report);
        }
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let tray_app = app.clone();
        let app = app.clone();
        std::thread::Builder::new()
            .name("baton-desktop-feed".into())
            .spawn(move || {
                // Ends when the session lets go of the project (another one opened, app closing).
                while !stopped.load(Ordering::Relaxed) {
                    match feed.recv_timeout(std::time::Duration::from_millis(250)) {
                        Ok(event) => {
                            let _ = app.emit(CHANGE_EVENT, &event);
                            match &event {
                                ChangeEvent::TasksChanged { changes } => {
                                    if let Ok(report) = tray_project.status() {
                                        crate::tray::update(&app, &report);
                                        for notice in crate::notices::notices(changes, &report) {
                                            crate::notices::show(&app, &notice);
                                        }
                                    }
                                }
                                ChangeEvent::BrowserAdded { .. }
                                | ChangeEvent::BrowserRemoved { .. } => {
                                    crate::tray::refresh_browsers(&app);
                                }
                                _ => {}
                            }
                        }
                        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
                    }
                }
            })
            .map_err(|e| baton_store::StoreError::io("feed thread", e))?;
        *self.open.lock().expect("session lock") = Some(Open { project, stop });
        crate::tray::refresh_browsers(&tray_app);
        Ok(())
    }
}
