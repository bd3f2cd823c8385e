//! File reservations: an agent holds paths so that others do not edit them at the same time
//! (`baton_core::reservations` has the rules: what overlaps, what is in force, when one ends).
//! A claimed task holds its own files; these operations reserve more, give them back, list
//! who holds what, and check a set of files before a commit.

use std::time::Duration;

use baton_core::{Hold, NewReservation, Reservation};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::operation::{Callers, Context, Operation};

/// Reserve paths or globs for an agent.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct Reserve {
    /// Your agent name.
    #[cfg_attr(feature = "cli", arg(long))]
    pub agent: String,
    /// Paths or globs relative to the project folder (`src/api/users.ts`, `src/api/`,
    /// `src/api/**`); a trailing `/` means the folder and everything in it.
    #[cfg_attr(feature = "cli", arg(required = true, value_name = "PATH|GLOB"))]
    pub paths: Vec<String>,
    /// The task they are for: the reservation ends with it.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub task: Option<String>,
    /// Only reading: conflicts with exclusive reservations only.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub shared: bool,
    /// End it after this long at the latest: seconds in a tool call, a duration such as 30m
    /// on the command line (it also ends when you stop sending heartbeats for a lease).
    #[serde(default)]
    #[cfg_attr(
        feature = "cli",
        arg(long = "ttl", value_name = "DURATION", value_parser = crate::durations::parse_seconds)
    )]
    pub ttl_seconds: Option<u64>,
    /// Why, for the others.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub reason: Option<String>,
}

impl Operation for Reserve {
    const NAME: &'static str = "paths_reserve";
    const DESCRIPTION: &'static str = "Reserve files (paths or globs) so other agents' claims pass over tasks touching them and their commits are refused. Refused, changing nothing, when another agent holds any of them.";
    const READ_ONLY: bool = false;
    const CALLERS: Callers = Callers::OWN_WORK;
    type Output = Reservation;
    fn run(self, cx: &Context) -> Result<Reservation> {
        Ok(cx.tasks.reserve(NewReservation {
            agent: crate::inbox::as_agent(cx, &self.agent)?,
            paths: self.paths,
            task: self.task,
            shared: self.shared,
            ttl: self.ttl_seconds.map(Duration::from_secs),
            reason: self.reason,
        })?)
    }
}

/// Give back reserved paths.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct Unreserve {
    /// Your agent name.
    #[cfg_attr(feature = "cli", arg(long))]
    pub agent: String,
    /// The reservations naming any of these paths (as they were reserved); every one of
    /// yours when empty.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(value_name = "PATH|GLOB"))]
    pub paths: Vec<String>,
}

/// The reservations given back.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Unreserved {
    pub released: Vec<Reservation>,
}

impl Operation for Unreserve {
    const NAME: &'static str = "paths_release";
    const DESCRIPTION: &'static str = "Give back reserved paths (all of yours when none are named); tasks waiting on them can be claimed.";
    const READ_ONLY: bool = false;
    const CALLERS: Callers = Callers::OWN_WORK;
    type Output = Unreserved;
    fn run(self, cx: &Context) -> Result<Unreserved> {
        Ok(Unreserved {
            released: cx
                .tasks
                .unreserve(&crate::inbox::as_agent(cx, &self.agent)?, &self.paths)?,
        })
    }
}

/// Which of these files another agent holds.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct CheckPaths {
    /// Files relative to the project folder (e.g. the ones a commit touches).
    #[cfg_attr(feature = "cli", arg(value_name = "FILE"))]
    pub paths: Vec<String>,
    /// Who asks: their own reservations do not count.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub agent: Option<String>,
}

/// Who holds which of the files asked about.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PathCheck {
    /// None held by another agent.
    pub free: bool,
    pub held: Vec<Hold>,
}

impl Operation for CheckPaths {
    const NAME: &'static str = "paths_check";
    const DESCRIPTION: &'static str =
        "Say which of the given files another agent holds exclusively (who, for which task).";
    const READ_ONLY: bool = true;
    const CALLERS: Callers = Callers::READERS;
    type Output = PathCheck;
    fn run(self, cx: &Context) -> Result<PathCheck> {
        let held = cx.tasks.check_paths(&self.paths, self.agent.as_deref())?;
        Ok(PathCheck {
            free: held.is_empty(),
            held,
        })
    }
}

/// Every reservation in force.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListReservations {}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Reservations {
    pub reservations: Vec<Reservation>,
}

impl Operation for ListReservations {
    const NAME: &'static str = "reservations_list";
    const DESCRIPTION: &'static str =
        "Who holds which files: held tasks' files and reserved paths, with since and until when.";
    const READ_ONLY: bool = true;
    const CALLERS: Callers = Callers::READERS;
    type Output = Reservations;
    fn run(self, cx: &Context) -> Result<Reservations> {
        Ok(Reservations {
            reservations: cx.tasks.reservations()?,
        })
    }
}
