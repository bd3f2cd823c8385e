//! Who runs the team on this machine: the supervisor's `supervisor.json` beside its lock in
//! `.coordination/team/`, which `team status`, `team stop` and a second `team up` read to
//! find it (a lock nobody holds means no supervisor, whatever the file says).

use std::path::PathBuf;

use baton_core::{Layout, StoreError, Timestamp};
use baton_fs::{FileLock, write_atomic};
use serde::{Deserialize, Serialize};

use crate::error::Result;

/// Who runs the team on this machine, as `supervisor.json` says.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SupervisorInfo {
    pub pid: u32,
    pub host: String,
    pub profile: String,
    /// How many workers it is asked to run.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub workers: usize,
    /// Its workers' names.
    pub names: Vec<String>,
    /// Its planner's name, when the team plans itself (`--goal`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub planner: Option<String>,
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub started_at: Timestamp,
    /// The whole team's budget (US dollars), if it has one.
    #[serde(default)]
    pub budget_usd: Option<f64>,
    /// What it was asked to run (its command, limits, merge mode): a second `team up` may
    /// change only its size.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub request: Option<crate::starting::request::TeamUp>,
}

impl SupervisorInfo {
    /// Whether `name` is one of its workers or its planner.
    pub fn has_member(&self, name: &str) -> bool {
        self.names.iter().any(|n| n == name) || self.planner.as_deref() == Some(name)
    }

    /// Its workers' names, and its planner's.
    pub fn members(&self) -> Vec<String> {
        self.names.iter().chain(&self.planner).cloned().collect()
    }
}

pub(crate) fn team_file(local: &Layout, name: &str) -> PathBuf {
    local.team_dir().join(name)
}

/// The supervisor running for this project on this machine, if one is.
pub fn running_supervisor(local: &Layout) -> Result<Option<SupervisorInfo>> {
    let lock = team_file(local, "supervisor.lock");
    if !lock.exists() || FileLock::try_exclusive(&lock)?.is_some() {
        return Ok(None);
    }
    let path = team_file(local, "supervisor.json");
    match std::fs::read(&path) {
        Ok(bytes) => Ok(serde_json::from_slice(&bytes).ok()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(StoreError::io(&path, e).into()),
    }
}

pub(crate) fn write_info(local: &Layout, info: &SupervisorInfo) -> Result<()> {
    let mut bytes = serde_json::to_vec_pretty(info).expect("the info serialises");
    bytes.push(b'\n');
    Ok(write_atomic(&team_file(local, "supervisor.json"), &bytes)?)
}
