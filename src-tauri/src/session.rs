//! The open project and its change feed (the folder's files, or a database's notifications
//! when the folder points to one). The feed's batches (what one command changed) go to the
//! window as `baton-changes` events, so a change made by a worker's CLI in a terminal shows
//! on the board without polling or reloading, and then to the session's followers (the tray,
//! the notifications), which know nothing of the session: they are handed the project and
//! each event.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use baton_api::OpenProject;
use baton_live::feed::ChangeEvent;
use tauri::{AppHandle, Emitter};

/// The event name the UI listens to: its payload is one batch, an array of changes.
pub const CHANGE_EVENT: &str = "baton-changes";

/// Something that follows the open project's changes besides the window.
pub trait Follower: Send + Sync {
    /// A project was opened: show its state now.
    fn opened(&self, app: &AppHandle, project: &OpenProject);
    /// One change, after the window has been sent it.
    fn changed(&self, app: &AppHandle, project: &OpenProject, event: &ChangeEvent);
}

pub struct Session {
    open: Mutex<Option<Open>>,
    followers: Arc<[Arc<dyn Follower>]>,
}

struct Open {
    project: OpenProject,
    /// Set to stop the thread that owns this project's feed.
    stop: Arc<AtomicBool>,
}

impl Drop for Open {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

impl Session {
    /// A session with no project open yet; `followers` hear of every project and change.
    pub fn new(followers: Vec<Arc<dyn Follower>>) -> Self {
        Session {
            open: Mutex::new(None),
            followers: followers.into(),
        }
    }

    pub fn project(&self) -> Option<OpenProject> {
        self.open
            .lock()
            .expect("session lock")
            .as_ref()
            .map(|o| o.project.clone())
    }

    /// Opens `project` (a folder, or a database through a folder's pointer), replacing any
    /// open one, and starts forwarding its changes.
    pub fn open(
        &self,
        app: &AppHandle,
        project: OpenProject,
    ) -> Result<(), baton_core::StoreError> {
        let feed = project
            .feed(baton_live::WatchMode::default())
            .map_err(|e| baton_core::StoreError::InvalidInput {
                field: "project",
                reason: format!("cannot watch it: {e}"),
            })?;
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let followers = self.followers.clone();
        let feed_project = project.clone();
        let app = app.clone();
        let opened_app = app.clone();
        // For `bench/desktop.rs`: when the feed's events reach the window.
        let timing = std::env::var_os("BATON_DESKTOP_TIMING").is_some();
        std::thread::Builder::new()
            .name("baton-desktop-feed".into())
            .spawn(move || {
                // Ends when the session lets go of the project (another one opened, app closing).
                while !stopped.load(Ordering::Relaxed) {
                    match feed.recv_batch_timeout(std::time::Duration::from_millis(250)) {
                        Ok(batch) => {
                            if timing {
                                eprintln!("baton-desktop: change event at {} us", unix_micros());
                            }
                            // The window first: the tray and notifications may read the store.
                            let _ = app.emit(CHANGE_EVENT, &batch);
                            for event in &batch {
                                for follower in followers.iter() {
                                    follower.changed(&app, &feed_project, event);
                                }
                            }
                        }
                        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
                    }
                }
            })
            .map_err(|e| baton_core::StoreError::io("feed thread", e))?;
        for follower in self.followers.iter() {
            follower.opened(&opened_app, &project);
        }
        *self.open.lock().expect("session lock") = Some(Open { project, stop });
        Ok(())
    }
}

fn unix_micros() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_micros()
}
