//! The project's review settings (`.coordination/review.toml`, written by the lead, never by a
//! merge: see [`crate::protected`]): the check, how a team's work lands, the check's sandbox and
//! the paths no landing may change.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Result, StoreError};
use crate::protected::ProtectedPaths;

/// The review settings' file name in `.coordination/`.
pub const REVIEW_FILE: &str = "review.toml";
/// How long a check may run by default (minutes).
pub const DEFAULT_CHECK_MINUTES: f64 = 30.0;

/// The project's review settings.
///
/// ```toml
/// check = "cargo test"          # run in the task's worktree before a merge; exit 0 passes
/// check_timeout_minutes = 30
/// dependency_conflicts = "work" # or "hold": when a dependent's dependencies' branches conflict
/// merge = "review"              # or "auto": a team lands each done task through its merge queue
/// check_sandbox = true          # the check runs in a sandbox, as agents do
/// check_write = ["~/.cargo/registry"]
/// check_network = "allow-list"  # or "off", "open"; check_allow = ["example.com"]
/// check_max_processes = 4096     # processes and threads at once, in its sandbox
/// check_unix_sockets = false    # true: the check may make Unix sockets
/// protect = [".mcp.json", ".claude/", "Makefile"]  # no landing changes these (default: the
///                                                # agent CLIs' project settings)
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReviewSettings {
    /// A shell command (`sh -c`); none: merges are not checked.
    #[serde(default)]
    pub check: Option<String>,
    #[serde(default = "default_minutes")]
    pub check_timeout_minutes: f64,
    /// What a dependent task's new branch does when its dependencies' branches conflict.
    #[serde(default)]
    pub dependency_conflicts: DependencyConflicts,
    /// How a team's done tasks reach the lead's branch (`team up --merge` overrides it).
    #[serde(default)]
    pub merge: MergeMode,
    /// Run the check in a sandbox as an agent runs (on unless false): it runs what an agent
    /// wrote. It writes only the checkout it runs in and `check_write`; reads the system,
    /// toolchains, the project and `check_read`, not the home folder's secrets or
    /// `.coordination/`; gets the variables every sandboxed program gets and `check_env`,
    /// never the store's; its network is `check_network` with `check_allow`.
    #[serde(default = "sandboxed_by_default")]
    pub check_sandbox: bool,
    /// Further folders (or files) the check may read (`~/` is the home folder).
    #[serde(default)]
    pub check_read: Vec<String>,
    /// Further folders the check may change (`~/.cargo/registry` for a check that fetches).
    #[serde(default)]
    pub check_write: Vec<String>,
    /// Further variables of the environment the check is given (names only).
    #[serde(default)]
    pub check_env: Vec<String>,
    /// The check's network: the package registries and `check_allow` through Baton's proxy
    /// (the default), none (`"off"`), or the machine's (`"open"`).
    #[serde(default)]
    pub check_network: crate::network::Network,
    /// Hosts the check may reach besides the package registries.
    #[serde(default)]
    pub check_allow: Vec<String>,
    /// At most this many of the check's processes (threads count) at once, sandboxed.
    #[serde(default = "default_max_processes")]
    pub check_max_processes: u32,
    /// Let the sandboxed check make Unix sockets (off unless `check_network = "open"`: a
    /// socket shown anywhere in its view of the machine would reach a host service).
    #[serde(default)]
    pub check_unix_sockets: bool,
    /// Paths no landing (the merge queue, `leader merge`) may add, change or remove:
    /// project-relative, a folder ends in `/`, globs allowed. `.coordination/` is protected
    /// whatever this says ([`crate::protected`]); the default also protects the agent CLIs'
    /// project settings, which the lead's own tools read and run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protect: Option<Vec<String>>,
}

/// How many processes (threads count) a sandbox lets run at once unless its settings say
/// otherwise (an agent profile's `sandbox.max_processes`, the check's `check_max_processes`):
/// ample for an agent CLI, a browser and a parallel build, and a stop for a fork bomb.
pub const DEFAULT_MAX_PROCESSES: u32 = 4096;

/// [`DEFAULT_MAX_PROCESSES`], for serde.
pub fn default_max_processes() -> u32 {
    DEFAULT_MAX_PROCESSES
}

fn sandboxed_by_default() -> bool {
    true
}

/// How a team's done tasks reach the lead's branch.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum MergeMode {
    /// The lead reviews each and merges it (`leader merge`).
    #[default]
    Review,
    /// The team's merge queue lands each as it is done: the check on its branch merged with
    /// the lead's, then a merge commit; a failure or a conflict goes back to its worker.
    Auto,
}

impl std::str::FromStr for MergeMode {
    type Err = String;
    fn from_str(text: &str) -> std::result::Result<MergeMode, String> {
        match text.to_ascii_lowercase().as_str() {
            "review" => Ok(MergeMode::Review),
            "auto" => Ok(MergeMode::Auto),
            _ => Err(format!("{text:?} is not a merge mode: review or auto")),
        }
    }
}

/// What a dependent task's new branch does when merging its dependencies' branches into it
/// conflicts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DependencyConflicts {
    /// Leave the merge in progress in the task's worktree: resolving it is the agent's first
    /// job, and its prompt names the files.
    #[default]
    Work,
    /// Abort the merge and fail the task naming the files, for the lead to merge the
    /// dependencies by hand (then `leader reset` the task).
    Hold,
}

fn default_minutes() -> f64 {
    DEFAULT_CHECK_MINUTES
}

impl Default for ReviewSettings {
    fn default() -> Self {
        ReviewSettings {
            check: None,
            check_timeout_minutes: DEFAULT_CHECK_MINUTES,
            dependency_conflicts: DependencyConflicts::Work,
            merge: MergeMode::Review,
            check_sandbox: true,
            check_read: Vec::new(),
            check_write: Vec::new(),
            check_env: Vec::new(),
            check_network: crate::network::Network::AllowList,
            check_allow: Vec::new(),
            check_max_processes: DEFAULT_MAX_PROCESSES,
            check_unix_sockets: false,
            protect: None,
        }
    }
}

impl ReviewSettings {
    /// The settings in `path`; the defaults (no check) when there is no such file.
    pub fn load(path: &Path) -> Result<ReviewSettings> {
        let settings: ReviewSettings = crate::text::settings_file(path, |e| {
            StoreError::invalid(
                "review.toml",
                format!("{} cannot be read: {}", path.display(), e.message()),
            )
        })?;
        if settings
            .check
            .as_deref()
            .is_some_and(|c| c.trim().is_empty())
        {
            return Err(StoreError::invalid(
                "check",
                "it is empty; remove the line for no check",
            ));
        }
        if !(settings.check_timeout_minutes > 0.0 && settings.check_timeout_minutes <= 24.0 * 60.0)
        {
            return Err(StoreError::invalid(
                "check_timeout_minutes",
                "it must be more than 0 and at most a day (1440)",
            ));
        }
        settings.protected(&[])?;
        Ok(settings)
    }

    /// The paths no landing may change: `.coordination/` and [`ReviewSettings::protect`], or
    /// when it does not say, `agent_settings` (the agent CLIs' project settings, which their
    /// adapters in `baton-team` name).
    pub fn protected(&self, agent_settings: &[String]) -> Result<ProtectedPaths> {
        ProtectedPaths::new(self.protect.as_deref().unwrap_or(agent_settings))
    }
}

/// The review settings file of the project whose `.coordination/` is `root`.
pub fn review_settings_path(root: &Path) -> PathBuf {
    root.join(REVIEW_FILE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_refuse_an_empty_check_and_a_silly_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(REVIEW_FILE);
        assert_eq!(ReviewSettings::load(&path).unwrap().check, None);
        std::fs::write(&path, "check = \"cargo test\"\n").unwrap();
        assert_eq!(
            ReviewSettings::load(&path).unwrap().check.as_deref(),
            Some("cargo test")
        );
        std::fs::write(&path, "check = \" \"\n").unwrap();
        assert!(ReviewSettings::load(&path).is_err());
        std::fs::write(&path, "check_timeout_minutes = 0\n").unwrap();
        assert!(ReviewSettings::load(&path).is_err());
        std::fs::write(&path, "chek = \"x\"\n").unwrap();
        let err = ReviewSettings::load(&path).unwrap_err().to_string();
        assert!(err.contains("chek"), "{err}");
    }

    #[test]
    fn settings_protect_coordination_whatever_they_say() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(REVIEW_FILE);
        let agents = [".claude/".to_string()];
        let defaults = ReviewSettings::load(&path)
            .unwrap()
            .protected(&agents)
            .unwrap();
        assert!(defaults.covers(".coordination/review.toml"));
        assert!(defaults.covers(".claude/settings.json"));
        std::fs::write(&path, "protect = []\n").unwrap();
        let none = ReviewSettings::load(&path)
            .unwrap()
            .protected(&agents)
            .unwrap();
        assert!(none.covers(".coordination/team/profiles.toml"));
        assert!(!none.covers(".claude/settings.json"));
        std::fs::write(&path, "protect = [\"../x\"]\n").unwrap();
        let err = ReviewSettings::load(&path).unwrap_err().to_string();
        assert!(err.contains("../x"), "{err}");
    }
}
