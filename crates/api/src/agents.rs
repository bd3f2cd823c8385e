//! The lead's view of the team: one row per agent (`baton_core::team` decides each row's
//! state), read through the seams so it is the same on every store.

use std::collections::BTreeMap;
use std::sync::Arc;

use baton_core::team::{AgentRow, known_agents, team};
use baton_core::{LogLine, Task, TaskFile, TaskStatus, Tasks, Timestamp};
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

/// What the desktop's tray shows of the project, looked at again on every change to the tasks:
/// how many tasks are in each status, and the team. A store that keeps what it read (the
/// folder: [`baton_core::TaskStore::board_again`]) shares its tasks, and of them only those an
/// agent holds are copied, which is all the team reads of the tasks. On a board of 10,000
/// tasks the tray had copied every task, and built each one's view for the board, to count
/// them.
pub struct Glance {
    /// How many tasks are in each status ([`TaskStatus::as_str`]).
    counts: BTreeMap<&'static str, usize>,
    /// The team, or why it could not be read (the counts are shown without it).
    pub team: Result<Team>,
}

impl Glance {
    /// The project now, through `cx` (a window's context, [`Context::reads_again`], shares
    /// what the store kept).
    pub fn read(cx: &Context) -> Result<Glance> {
        let (mut held, tasks, now) = match cx.board_again()? {
            Some(board) => (board.file, board.tasks, board.now),
            None => {
                let (mut file, now) = cx.snapshot()?;
                let tasks = std::mem::take(&mut file.tasks);
                (file, tasks.into_iter().map(Arc::new).collect(), now)
            }
        };
        let mut counts = BTreeMap::new();
        for task in &tasks {
            *counts.entry(task.status.as_str()).or_default() += 1;
        }
        held.tasks = Tasks::as_read(
            tasks
                .iter()
                .filter(|task| task.claimed_by.is_some())
                .map(|task| Task::clone(task))
                .collect(),
        );
        Ok(Glance {
            counts,
            team: AgentsOverview::of_board(cx, &held, now),
        })
    }

    /// How many tasks are in `status`.
    pub fn count(&self, status: TaskStatus) -> usize {
        self.counts.get(status.as_str()).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::OpenProject;
    use baton_core::{ClaimRequest, Confinement, NewTask, TaskStore};

    /// The rows a lead would compare: who, in what state, holding what, with how much done.
    fn rows(team: &Team) -> Vec<String> {
        let row = |a: &AgentRow| {
            let holds: Vec<&str> = a.holds.iter().map(|h| h.id.as_str()).collect();
            format!("{} {:?} {holds:?} {} {}", a.name, a.state, a.done, a.failed)
        };
        team.agents.iter().map(row).collect()
    }

    #[test]
    fn a_glance_counts_and_sees_the_team_as_the_board_and_the_agents_view_do() {
        let dir = tempfile::tempdir().unwrap();
        let store = baton_folder::FolderStore::init(dir.path(), "goal", None).unwrap();
        let project = OpenProject::folder(store.clone());
        let confinement = Confinement::anywhere(dir.path());
        let (window, user) = (
            project.window_context(&confinement),
            project.context(&confinement),
        );
        let same = |step: &str| {
            let whole = user.status().unwrap();
            let overview = AgentsOverview {}.run(&user).unwrap();
            for cx in [&window, &user] {
                let glance = Glance::read(cx).unwrap();
                for status in TaskStatus::ALL {
                    assert_eq!(
                        glance.count(status),
                        whole.count(status),
                        "{step}: {status:?}"
                    );
                }
                assert_eq!(
                    rows(glance.team.as_ref().unwrap()),
                    rows(&overview),
                    "{step}"
                );
            }
        };
        same("empty");
        for i in 0..8 {
            let new = NewTask {
                description: format!("task {i}"),
                ..Default::default()
            };
            store.add_task(new).unwrap();
        }
        same("added");
        let first = store.claim(&ClaimRequest::next("w1")).unwrap().unwrap();
        store.start("w1", &first.task.id).unwrap();
        store.claim(&ClaimRequest::next("w2")).unwrap().unwrap();
        let failing = store.claim(&ClaimRequest::next("w3")).unwrap().unwrap();
        store.fail("w3", &failing.task.id, "broken").unwrap();
        let done = store.claim(&ClaimRequest::next("w3")).unwrap().unwrap();
        store.start("w3", &done.task.id).unwrap();
        let report = baton_core::Completion {
            output: "written".into(),
            ..Default::default()
        };
        store.complete("w3", &done.task.id, report).unwrap();
        store.cancel("task-8", Some("not needed")).unwrap();
        same("worked on");
        assert_eq!(rows(&AgentsOverview {}.run(&user).unwrap()).len(), 3);
        // A broken board is refused, to the tray as to everyone.
        std::fs::write(store.layout().tasks_file(), b"{\"tasks\": [").unwrap();
        assert!(Glance::read(&window).is_err() && Glance::read(&user).is_err());
    }
}
