//! The lead's manual UI-test session (the source design's manual mode): a visible Chromium on
//! a CDP port in the registry (so an agent's `baton mcp --proxy` can attach), the lead tests by
//! hand, and finishing the session writes the run's signal (by default `ui-test-done`) so a
//! waiting diagnostics agent goes on. Closing the browser window finishes it too. Starting a
//! session clears the run's stale signal first.
//!
//! One session per project, whichever front end started it: the session is recorded in
//! `.coordination/manual-session.json`, so the desktop shows a session that
//! `baton browser session start` holds and either can finish the other's. The process that
//! started it (the holder) owns the browser; [`finish`] from any process writes the signal,
//! removes the record and ends the browser, and the holder then sees it gone as finished.
//! A record whose holder or browser no longer runs is stale and counts as no session.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use baton_core::LEAD;
use baton_core::{ErrorKind, ForeignFile, Layout, SignalStore, SignalTarget, StoreError};
use baton_fs::pid_alive;
use baton_fs::write_atomic;
use serde::{Deserialize, Serialize};

use crate::controls::{BrowserControlError, check_url, navigate};
use crate::launch::{BrowserError, LaunchOptions, RunningBrowser};
use crate::registry::{BrowserRecord, free_port};

/// The signal a session writes unless told otherwise.
pub const DEFAULT_SIGNAL: &str = "ui-test-done";
/// How often a holder looks for its browser window being closed: a closed window sends no
/// event that can be waited on.
pub const EXIT_CHECK: Duration = Duration::from_millis(250);

/// A running session, as recorded for every process.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionRecord {
    pub browser: BrowserRecord,
    /// The process that holds the browser (the desktop app, or `baton browser session start`).
    pub holder_pid: u32,
    /// The run whose signal the session writes, and the signal's name.
    pub run: u32,
    pub signal: String,
    /// The page the session opened.
    pub url: String,
}

/// How a session ended.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Ending {
    /// Finished on purpose (by the holder or from another process).
    Finished,
    /// The lead closed the browser window.
    WindowClosed,
}

#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error(
        "a manual session is already running (browser on port {port}, held by process {holder}); finish it first (`baton browser session finish`)"
    )]
    AlreadyRunning { port: u16, holder: u32 },
    #[error("no manual session is running; start one with `baton browser session start URL`")]
    NotRunning,
    #[error(transparent)]
    Launch(#[from] BrowserError),
    #[error(transparent)]
    Control(#[from] BrowserControlError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<baton_fs::FileError> for SessionError {
    fn from(e: baton_fs::FileError) -> Self {
        SessionError::Store(e.into())
    }
}

impl SessionError {
    /// A stable name for scripts and the UI.
    pub fn kind(&self) -> ErrorKind {
        match self {
            SessionError::AlreadyRunning { .. } => ErrorKind::SessionRunning,
            SessionError::NotRunning => ErrorKind::NoSession,
            SessionError::Launch(e) => e.kind(),
            SessionError::Control(e) => e.kind(),
            SessionError::Store(e) => e.kind(),
        }
    }
}

type Result<T> = std::result::Result<T, SessionError>;

fn record_file(layout: &Layout) -> PathBuf {
    layout.root().join("manual-session.json")
}

fn read_record(layout: &Layout) -> Option<SessionRecord> {
    let bytes = std::fs::read(record_file(layout)).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// The project's running session, if any (whichever process holds it). A record whose holder
/// is gone is stale and removed; one whose browser just exited is left to its holder, which
/// writes the signal.
pub fn current(layout: &Layout) -> Option<SessionRecord> {
    let record = read_record(layout)?;
    if !pid_alive(record.holder_pid) {
        let _ = std::fs::remove_file(record_file(layout));
        return None;
    }
    pid_alive(record.browser.pid).then_some(record)
}

/// Finishes the project's session from any process: writes its signal ("manual session
/// finished"), removes the record, and ends the browser (its holder cleans up after it).
pub fn finish(layout: &Layout, signals: &dyn SignalStore) -> Result<SessionRecord> {
    let record = current(layout).ok_or(SessionError::NotRunning)?;
    end(layout, signals, &record, "manual session finished")?;
    // The browser leads its own process group (see `launch`); its holder reaps it.
    baton_fs::ProcessGroup::led_by(record.browser.pid).signal(libc::SIGTERM);
    Ok(record)
}

/// Writes the session's signal, saying why, and removes its record.
fn end(
    layout: &Layout,
    signals: &dyn SignalStore,
    record: &SessionRecord,
    why: &str,
) -> Result<()> {
    let target = SignalTarget::named(record.run, &record.signal)?;
    signals.write_signal(&target, Some(LEAD), Some(why), ForeignFile::Keep)?;
    let _ = std::fs::remove_file(record_file(layout));
    Ok(())
}

/// A session this process holds. Dropping it stops the browser without writing the signal.
pub struct ManualSession {
    /// The project's folder on this machine, where the browser and the session's record are.
    layout: Layout,
    /// Where the session's signal is written: the project's store (a database, for a waiter
    /// on another machine).
    signals: Arc<dyn SignalStore>,
    record: SessionRecord,
    browser: RunningBrowser,
    /// Why the first page did not open, if it did not (the dev server is not up yet): the
    /// browser shows its error page and the session goes on.
    pub page_error: Option<String>,
}

impl ManualSession {
    /// Starts a session on `url` for `owner` (shown in the registry): clears the run's signal
    /// `signal`, launches a visible browser and opens the page.
    pub fn start(
        layout: &Layout,
        signals: Arc<dyn SignalStore>,
        url: &str,
        signal: &str,
        owner: &str,
    ) -> Result<Self> {
        check_url(url)?;
        if let Some(running) = current(layout) {
            return Err(SessionError::AlreadyRunning {
                port: running.browser.port,
                holder: running.holder_pid,
            });
        }
        let run = signals.resolve_run(None)?;
        let target = SignalTarget::named(run, signal)?;
        signals.clear_signal(&target, Some(LEAD), ForeignFile::Keep)?;
        let port = free_port().map_err(|e| StoreError::io("a free loopback port", e))?;
        let mut options = LaunchOptions::new(port, owner);
        options.headless = false;
        let browser = RunningBrowser::launch(layout, &options)?;
        let record = SessionRecord {
            browser: browser.record().clone(),
            holder_pid: std::process::id(),
            run,
            signal: signal.to_string(),
            url: url.to_string(),
        };
        let mut bytes = serde_json::to_vec_pretty(&record).expect("serialises");
        bytes.push(b'\n');
        write_atomic(&record_file(layout), &bytes)?;
        // Opened through CDP rather than on the command line, so the session starts with the
        // page loaded.
        let page_error = navigate(port, url).err().map(|e| e.to_string());
        Ok(ManualSession {
            layout: layout.clone(),
            signals,
            record,
            browser,
            page_error,
        })
    }

    pub fn record(&self) -> &SessionRecord {
        &self.record
    }

    /// Whether the session has ended: `None` while its browser runs. When the window was
    /// closed, this writes the signal; when another process finished the session, it had.
    pub fn ended(&mut self) -> Option<Ending> {
        if self.browser.is_process_running() {
            return None;
        }
        let ours = read_record(&self.layout).is_some_and(|r| r == self.record);
        if !ours {
            return Some(Ending::Finished);
        }
        if let Err(e) = end(
            &self.layout,
            &*self.signals,
            &self.record,
            "browser window closed",
        ) {
            eprintln!("baton: manual session: {e}");
        }
        Some(Ending::WindowClosed)
    }

    /// Finishes the session: writes the signal, removes the record and stops the browser.
    pub fn finish(self) -> Result<SessionRecord> {
        end(
            &self.layout,
            &*self.signals,
            &self.record,
            "manual session finished",
        )?;
        Ok(self.record.clone()) // dropping `self` stops the browser
    }
}

impl Drop for ManualSession {
    fn drop(&mut self) {
        // The record goes with the browser (which `RunningBrowser`'s drop stops), unless it
        // is another session's by now.
        if read_record(&self.layout).is_some_and(|r| r == self.record) {
            let _ = std::fs::remove_file(record_file(&self.layout));
        }
    }
}
