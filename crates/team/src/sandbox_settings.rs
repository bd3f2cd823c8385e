//! A profile's `[sandbox]` table: what its agents' sandbox lets them reach beyond their
//! worktree, and what bounds them there ([`crate::sandbox`] turns it into bubblewrap's
//! arguments).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use baton_core::network::Network;

/// What a profile's sandbox lets its agents reach beyond their worktree
/// (`[profiles.NAME.sandbox]`). Paths may start with `~/` for the home folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SandboxSettings {
    /// Run each attempt in a sandbox: on unless set to false here (`team up --no-sandbox` runs
    /// one team without it, `--sandbox` with it whatever this says).
    #[serde(default = "on_by_default")]
    pub enabled: bool,
    /// Further folders (or files) the agent may read.
    #[serde(default)]
    pub read: Vec<String>,
    /// Further folders (or files) the agent may change.
    #[serde(default)]
    pub write: Vec<String>,
    /// What network the agent has: its allow-list through Baton's proxy (the default), none,
    /// or the machine's whole network.
    #[serde(default)]
    pub network: Network,
    /// Hosts the agent may reach besides its model API and the package registries
    /// (`api.example.com`, `*.example.com`, `127.0.0.1:4000`, a URL), under `allow-list`.
    #[serde(default)]
    pub allow: Vec<String>,
    /// Put a connection outside the allow-list to the project's approval policy and so to the
    /// lead (tool `Network`: allow, deny, or always allow, which adds `Network(HOST:PORT)` to
    /// `.coordination/policy.toml`) instead of refusing it at once.
    #[serde(default)]
    pub ask: bool,
    /// Variables of the supervisor's environment the agent is given besides the ones every
    /// sandboxed agent gets (an API key a model provider's configuration names, say). Names
    /// only: the values stay in the environment, never in this file.
    #[serde(default)]
    pub env: Vec<String>,
    /// At most this many of the agent's processes (threads count) at once: a fork bomb stops
    /// there, and the attempt goes on.
    #[serde(default = "baton_core::review::default_max_processes")]
    pub max_processes: u32,
    /// Let the agent make Unix sockets. Off by default (unless the network is `open`): a
    /// socket anywhere in the sandbox's view of the machine would reach a host service, so
    /// the agent reaches its door over its own loopback instead. Turn on for work whose own
    /// tests need Unix sockets, on a machine whose shown folders hold no host service's. A
    /// profile with `browser = true` has them (Chromium locks its profile with one); the
    /// host's runtime folders (`/run`, `/tmp`, `/dev/shm`) stay hidden either way.
    #[serde(default)]
    pub unix_sockets: bool,
    /// The most the sandbox's private `/tmp` may hold (MiB); it is memory, not disk.
    #[serde(default = "default_tmp_mb")]
    pub tmp_mb: u32,
    /// At most this many files open at once in each of the agent's processes.
    #[serde(default = "default_max_open_files")]
    pub max_open_files: u32,
}

/// A sandbox's `/tmp` unless its settings say otherwise (MiB).
pub const DEFAULT_TMP_MB: u32 = 1024;
/// Open files per process in a sandbox unless its settings say otherwise.
pub const DEFAULT_MAX_OPEN_FILES: u32 = 65_536;

fn default_tmp_mb() -> u32 {
    DEFAULT_TMP_MB
}

fn default_max_open_files() -> u32 {
    DEFAULT_MAX_OPEN_FILES
}

fn on_by_default() -> bool {
    true
}

impl Default for SandboxSettings {
    fn default() -> SandboxSettings {
        SandboxSettings {
            enabled: true,
            read: Vec::new(),
            write: Vec::new(),
            network: Network::AllowList,
            allow: Vec::new(),
            ask: false,
            env: Vec::new(),
            max_processes: baton_core::review::DEFAULT_MAX_PROCESSES,
            unix_sockets: false,
            tmp_mb: DEFAULT_TMP_MB,
            max_open_files: DEFAULT_MAX_OPEN_FILES,
        }
    }
}

impl SandboxSettings {
    /// The most the sandbox's `/tmp` holds, in bytes.
    pub fn tmp_bytes(&self) -> u64 {
        u64::from(self.tmp_mb) * 1024 * 1024
    }

    /// `path` with a leading `~/` taken as the home folder `home`.
    pub fn expand(path: &str, home: Option<&std::path::Path>) -> PathBuf {
        match (path.strip_prefix("~/"), home) {
            (Some(rest), Some(home)) => home.join(rest),
            _ => PathBuf::from(path),
        }
    }
}
