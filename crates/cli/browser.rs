//! `baton browser …`: the browsers in the registry, and the manual-session controls the
//! desktop app has (open a URL, reload, screenshot), each one `baton-browser` call.

use std::path::{Path, PathBuf};

use baton_browser::{navigate, page_state, reload, save_screenshot};
use baton_store::Project;
use clap::Subcommand;

use crate::output::emit;
use baton_api::Error as CliError;

#[derive(Debug, Subcommand)]
pub enum BrowserCommand {
    /// List the browsers in .coordination/browsers/ (port, owner, headless, alive).
    List,
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

pub fn browser(
    project: &Project,
    cwd: &Path,
    command: BrowserCommand,
    json: bool,
) -> Result<u8, CliError> {
    match command {
        BrowserCommand::List => {
            let browsers = baton_live::browser::list(project.layout())?;
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
            let saved = save_screenshot(project.layout(), port, out.as_deref())?;
            emit(json, &saved, || {
                format!("Saved {} ({} bytes)", saved.path.display(), saved.bytes)
            });
        }
    }
    Ok(0)
}
