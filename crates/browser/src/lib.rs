//! # baton-browser
//!
//! Everything Baton does with browsers, in one place: the registry of running browsers
//! ([`registry`]), launching Debian's Chromium for an agent or a person ([`launch`]), the
//! proxy's browser launched on first use ([`on_demand`]), the lead's manual test session and
//! the signal it writes ([`session`]), and controls for any registered browser ([`controls`],
//! over the DevTools protocol in [`cdp`]). The CLI, the MCP server and the desktop app each call
//! these; none of them keeps browser logic of its own. The change feed (`baton-live`) reads the
//! registry to report browsers coming and going.

pub mod cdp;
mod control_error;
pub mod controls;
pub mod launch;
pub mod on_demand;
pub mod registry;
pub mod session;

pub use controls::{
    BrowserControlError, PageState, SavedScreenshot, check_url, navigate, page_state, reload,
    save_screenshot, screenshot, screenshots_dir,
};
pub use launch::{BrowserError, LaunchOptions, RunningBrowser};
pub use registry::{BrowserRecord, ListedBrowser, free_port};
