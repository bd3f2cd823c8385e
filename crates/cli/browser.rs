//! `baton browser …`: the browsers in the registry, the manual test session the desktop app
//! offers (start, finish, status), and its controls (open a URL, reload, screenshot), each one
//! `baton-browser` call.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use baton_api::OpenProject;
use baton_browser::session::{self, DEFAULT_SIGNAL, EXIT_CHECK, Ending, ManualSession};
use baton_browser::{navigate, page_state, reload, save_screenshot};
use baton_core::ErrorKind;
use clap::Subcommand;
use serde_json::json;

use crate::output::{emit, emit_line};
use baton_api::Error as CliError;

#[derive(Debug, Subcommand)]
pub enum BrowserCommand {
    /// List the browsers in .coordination/browsers/ (port, owner, headless, alive).
    List,
    /// The manual test session, as the desktop app's "Start session": a visible browser for
    /// testing by hand, whose end writes the run's signal for a waiting diagnostics agent.
    #[command(subcommand)]
    Session(SessionCommand),
    /// Show the URL and title of a browser's page.
    Show {
        /// The browser's DevTools port (see `baton browser list`).
        port: u16,
    },
    /// Open URL in a browser's page and wait until it has loaded.
    Navigate {
        port: u16,
        /// An http://, https:// or about: URL (file:, chrome: and other schemes are refused).
        url: String,
    },
    /// Reload a browser's page and wait until it has loaded again.
    Reload { port: u16 },
    /// Save a PNG of a browser's page (default: .coordination/screenshots/port-PORT-TIME.png).
    Screenshot {
        port: u16,
        /// Where to write the PNG instead.
        #[arg(long, short, value_name = "FILE")]
        out: Option<PathBuf>,
    },
}

#[derive(Debug, Subcommand)]
pub enum SessionCommand {
    /// Clear the latest run's signal, open URL in a visible Chromium (recorded in the registry
    /// for agents to attach to), and stay until the session ends: `baton browser session finish`
    /// (from any terminal, or the desktop), Ctrl-C, or closing the browser window. Each writes
    /// the signal. Needs a display.
    Start {
        /// An http://, https:// or about: URL.
        url: String,
        /// The signal to write when the session ends.
        #[arg(long, default_value = DEFAULT_SIGNAL)]
        signal: String,
    },
    /// Finish the project's running session (whoever started it): write its signal and close
    /// its browser.
    Finish,
    /// Show the project's running session, if any (exit code 1 when none).
    Status,
}

pub fn browser(
    open: &OpenProject,
    cwd: &Path,
    command: BrowserCommand,
    json: bool,
) -> Result<u8, CliError> {
    // Browsers are this machine's: their registry is in the local folder.
    let project = open.local();
    match command {
        BrowserCommand::Session(command) => return manual_session(open, command, json),
        BrowserCommand::List => {
            let browsers = baton_browser::registry::list(project)?;
            emit(json, &browsers, || {
                if browsers.is_empty() {
                    return "No browsers are registered.".to_string();
                }
                browsers
                    .iter()
                    .map(|b| {
                        format!(
                            "{}  {}  pid {}  {}{}",
                            b.record.port,
                            b.record.owner,
                            b.record.pid,
                            if b.record.headless {
                                "headless"
                            } else {
                                "visible"
                            },
                            if b.alive { "" } else { "  (gone)" }
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            });
        }
        BrowserCommand::Show { port } => {
            let state = page_state(port)?;
            emit(json, &state, || format!("{}  {}", state.url, state.title));
        }
        BrowserCommand::Navigate { port, url } => {
            let state = navigate(port, &url)?;
            emit(json, &state, || {
                format!("Opened {} ({})", state.url, state.title)
            });
        }
        BrowserCommand::Reload { port } => {
            let state = reload(port)?;
            emit(json, &state, || {
                format!("Reloaded {} ({})", state.url, state.title)
            });
        }
        BrowserCommand::Screenshot { port, out } => {
            let out = out.map(|o| cwd.join(o));
            let saved = save_screenshot(project, port, out.as_deref())?;
            emit(json, &saved, || {
                format!("Saved {} ({} bytes)", saved.path.display(), saved.bytes)
            });
        }
    }
    Ok(0)
}

/// A manual session: the browser is this machine's, the signal goes to the project's store.
fn manual_session(
    project: &OpenProject,
    command: SessionCommand,
    json: bool,
) -> Result<u8, CliError> {
    let layout = project.local();
    match command {
        SessionCommand::Start { url, signal } => {
            let stop = Arc::new(AtomicBool::new(false));
            let handler_stop = stop.clone();
            ctrlc::set_handler(move || handler_stop.store(true, Ordering::Relaxed)).map_err(
                |e| CliError::new(ErrorKind::Spawn, format!("cannot handle Ctrl-C: {e}")),
            )?;
            let owner = format!("baton browser session [{}]", std::process::id());
            let mut held =
                ManualSession::start(layout, project.signals.clone(), &url, &signal, &owner)?;
            let record = held.record().clone();
            if let Some(e) = &held.page_error {
                eprintln!("baton: the page did not open ({e}); the session goes on");
            }
            emit_line(json, &record, || {
                format!(
                    "Manual session on {} (CDP {}); it writes {} in run {} when it ends. \
                     Finish with `baton browser session finish`, Ctrl-C or by closing the window.",
                    record.url, record.browser.cdp_endpoint, record.signal, record.run
                )
            });
            let ending = loop {
                if stop.load(Ordering::Relaxed) {
                    held.finish()?;
                    break Ending::Finished;
                }
                if let Some(ending) = held.ended() {
                    break ending;
                }
                std::thread::sleep(EXIT_CHECK); // a closed window sends no event to wait on
            };
            let ended = json!({"ended": ending, "run": record.run, "signal": record.signal});
            emit_line(json, &ended, || match ending {
                Ending::Finished => format!("Session finished; wrote {}", record.signal),
                Ending::WindowClosed => {
                    format!("Browser window closed; wrote {}", record.signal)
                }
            });
        }
        SessionCommand::Finish => {
            let record = session::finish(layout, &*project.signals)?;
            emit(json, &record, || {
                format!(
                    "Finished the session on port {}; wrote {} in run {}",
                    record.browser.port, record.signal, record.run
                )
            });
        }
        SessionCommand::Status => {
            let Some(record) = session::current(layout) else {
                return Err(session::SessionError::NotRunning.into());
            };
            emit(json, &record, || {
                format!(
                    "Session on {} (port {}, held by process {}); writes {} in run {}",
                    record.url, record.browser.port, record.holder_pid, record.signal, record.run
                )
            });
        }
    }
    Ok(0)
}
