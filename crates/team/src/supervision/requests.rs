//! Requests to a running supervisor: files in `.coordination/team/requests/` (more or fewer
//! workers; stop, pause or resume some or all), left by `baton team`, the catalogue's team
//! operations and a second `team up`, each taken once, in the order they were left, and
//! answered by the supervisor's thread ([`Running::answer`]).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use baton_core::{Layout, StoreError};
use baton_fs::write_atomic;
use serde::{Deserialize, Serialize};

use crate::error::{Result, TeamError};
use crate::starting::request::MAX_WORKERS;
use crate::supervision::crew::Crew;
use crate::supervision::info::{SupervisorInfo, running_supervisor, team_file, write_info};

/// A change asked of a running supervisor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Request {
    /// Run this many workers.
    Workers(usize),
    /// Stop these workers (none named: all), now or after their current task.
    Stop { names: Vec<String>, now: bool },
    /// Pause these workers (none named: all, and the planner), or resume them.
    Pause { names: Vec<String>, paused: bool },
}

pub fn requests_dir(local: &Layout) -> PathBuf {
    team_file(local, "requests")
}

/// Leaves `request` for the running supervisor; refused when none runs.
pub fn send_request(local: &Layout, request: &Request) -> Result<SupervisorInfo> {
    let Some(info) = running_supervisor(local)? else {
        return Err(TeamError::new(
            baton_core::ErrorKind::NoTeam,
            "no team runs for this project on this machine: start one with `baton team up`",
        ));
    };
    let dir = requests_dir(local);
    std::fs::create_dir_all(&dir).map_err(|e| StoreError::io(&dir, e))?;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let path = dir.join(format!("{nanos:032}-{}.json", std::process::id()));
    write_atomic(
        &path,
        &serde_json::to_vec(request).expect("requests serialise"),
    )?;
    Ok(info)
}

/// The names of workers `range` of a team.
pub(crate) fn worker_names(prefix: &str, range: std::ops::RangeInclusive<usize>) -> Vec<String> {
    range.map(|i| format!("{prefix}{i}")).collect()
}

/// A running team as a request changes it: its workers, its record, and how it starts one.
pub(crate) struct Running<'t, 'a> {
    pub(crate) crew: &'t Crew<'a>,
    /// The planner's crew, when the team plans itself: stopped with the team, or by its name.
    pub(crate) planner: Option<&'t Crew<'a>>,
    /// The workers whose threads run.
    pub(crate) names: &'t mut BTreeSet<String>,
    pub(crate) info: &'t mut SupervisorInfo,
    pub(crate) prefix: &'t str,
    pub(crate) start: &'t dyn Fn(String),
}

impl Running<'_, '_> {
    /// Does what `request` asks: stop the team or some of its workers, or resize it.
    pub(crate) fn answer(self, request: Request) {
        let crew = self.crew;
        match request {
            Request::Stop { names, now } if names.is_empty() => {
                crew.stop_all(now);
                if let Some(planner) = self.planner {
                    planner.stop_all(now);
                }
            }
            Request::Stop { names, now } => {
                for name in names.iter().filter(|n| self.names.contains(*n)) {
                    // The planner's flags are its crew's; stopping it ends the plan, and the
                    // team with it once the tasks in hand are done.
                    match self.planner.and_then(|planner| planner.flags_of(name)) {
                        Some(flags) => flags.stop(now),
                        None => crew.flags(name).stop(now),
                    }
                }
            }
            Request::Pause { names, paused } => {
                let everyone = names.is_empty();
                for name in self.names.iter().filter(|n| everyone || names.contains(*n)) {
                    match self.planner.and_then(|planner| planner.flags_of(name)) {
                        Some(flags) => flags.pause(paused),
                        None => crew.flags(name).pause(paused),
                    }
                }
            }
            Request::Workers(count) => {
                let count = count.clamp(1, MAX_WORKERS);
                let have = self.info.names.len();
                if count > have {
                    for name in worker_names(self.prefix, have + 1..=count) {
                        self.names.insert(name.clone());
                        self.info.names.push(name.clone());
                        (self.start)(name);
                    }
                } else {
                    for name in self.info.names.drain(count..) {
                        crew.flags(&name).stop(false);
                    }
                }
                self.info.workers = count;
                let _ = write_info(crew.local, self.info);
            }
        }
    }
}

fn request_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

/// The waiting requests, oldest first, each removed once read. A file that is not a request
/// is removed too (nothing else writes there).
pub(crate) fn take_requests(local: &Layout) -> Vec<Request> {
    request_files(&requests_dir(local))
        .into_iter()
        .filter_map(|path| {
            let request = std::fs::read(&path)
                .ok()
                .and_then(|bytes| serde_json::from_slice(&bytes).ok());
            let _ = std::fs::remove_file(&path);
            request
        })
        .collect()
}

pub(crate) fn clear_requests(local: &Layout) {
    for path in request_files(&requests_dir(local)) {
        let _ = std::fs::remove_file(path);
    }
    let _ = std::fs::remove_file(requests_dir(local).join(".done"));
}

#[cfg(test)]
mod tests {
    use super::worker_names;

    #[test]
    fn workers_are_named_by_prefix_and_number() {
        assert_eq!(worker_names("cc", 1..=3), ["cc1", "cc2", "cc3"]);
        assert_eq!(worker_names("a-ex", 4..=4), ["a-ex4"]);
    }
}
