//! The lead's view of the team: one row per agent (`baton_core::team` decides each row's
//! state), read through the seams so it is the same on every store.

use std::collections::BTreeMap;

use baton_core::team::{AgentRow, known_agents, team};
use baton_core::{LogLine, TaskFile, Timestamp};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::operation::{Callers, Context, Operation};

/// How many of the latest log lines (of all agents) are read to find each agent's last one;
/// an agent not among them has its own log's last line read.
const RECENT_LINES: usize = 200;

/// Who is doing what.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentsOverview {}

/// Every agent known to the project, and when a row next changes by time alone.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Team {
    pub agents: Vec<AgentRow>,
    /// When some row's state next changes without anything being written (a lease getting
    /// short or passing, an idle agent going quiet); null when none will.
    #[cfg_attr(feature = "ts", ts(type = "string | null"))]
    pub next_change_at: Option<Timestamp>,
    /// The store's time the rows are for.
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub at: Timestamp,
    /// What supervised agents cost, in total and per agent; none until an agent of a team
    /// has run.
    pub spend: Option<baton_core::Spend>,
}

impl Operation for AgentsOverview {
    const NAME: &'static str = "agents_overview";
    const DESCRIPTION: &'static str = "Every agent of the project (from claims, heartbeats and logs): working, lease running out, stale, waiting for work, idle or gone; the task it holds and its lease; when it was last heard from; its last log line; tasks done and failed (leader).";
    const READ_ONLY: bool = true;
    const CALLERS: Callers = Callers::READERS;
    type Output = Team;
    fn run(self, cx: &Context) -> Result<Team> {
        let (file, now) = cx.snapshot()?;
        Self::of_board(cx, &file, now)
    }
}

impl AgentsOverview {
    /// The team on `file`, the board at `now` (for a reader that has read it already: the
    /// desktop's tray reads the board once for its counts and its agents).
    pub fn of_board(cx: &Context, file: &TaskFile, now: Timestamp) -> Result<Team> {
        let mut last: BTreeMap<String, LogLine> = BTreeMap::new();
        for line in cx.tasks.logs(None, RECENT_LINES)? {
            last.insert(line.agent.clone(), line);
        }
        let missing: Vec<String> = known_agents(file)
            .into_iter()
            .filter(|a| !last.contains_key(*a))
            .map(str::to_string)
            .collect();
        for agent in missing {
            if let Some(line) = cx.tasks.logs(Some(&agent), 1)?.pop() {
                last.insert(agent, line);
            }
        }
        let (agents, next_change_at) = team(file, &last, now, cx.tasks.lease());
        Ok(Team {
            agents,
            next_change_at,
            at: now,
            spend: baton_core::attempts::read_spend(&*cx.documents)?,
        })
    }
}
