//! The server's own log. stdout carries only the protocol, so every message goes to stderr and
//! is appended to `.coordination/mcp/mcp.log` (one line per message, with time and process id,
//! shared by every server on the project).

use std::path::PathBuf;

use baton_core::{Layout, Timestamp};

#[derive(Debug, Clone)]
pub struct Log {
    file: Option<PathBuf>,
    quiet: bool,
}

impl Log {
    /// A log for the project at `layout`; `quiet` keeps messages off stderr (file only).
    pub fn new(layout: &Layout, quiet: bool) -> Log {
        let dir = layout.root().join("mcp");
        let file = std::fs::create_dir_all(&dir)
            .ok()
            .map(|_| dir.join("mcp.log"));
        Log { file, quiet }
    }

    pub fn line(&self, message: &str) {
        let line = format!(
            "[{}] baton-mcp[{}]: {message}",
            Timestamp::now(),
            std::process::id()
        );
        if !self.quiet {
            eprintln!("{line}");
        }
        if let Some(file) = &self.file {
            let _ = baton_fs::append_line(file, &line);
        }
    }
}
