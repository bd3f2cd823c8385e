//! Who is doing what: one row per agent known to a project (from its claims, its heartbeats and
//! its log), with a state a lead reads at a glance. Pure: given the board, the agents' last
//! log lines and the time, the rows and the next moment one of them changes by time alone (a
//! lease running out, an idle agent going quiet), so a view can redraw then instead of polling.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use serde::Serialize;

use crate::journal::LEAD_LOG;
use crate::journal::LogLine;
use crate::model::{Task, TaskFile, TaskStatus};
use crate::names::LEAD;
use crate::time::Timestamp;

/// What an agent is doing, as far as the store can tell.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AgentState {
    /// Holds a task under a lease with more than a quarter of it left.
    Working,
    /// Holds a task whose lease has less than a quarter left: a heartbeat is due.
    LeaseRunningOut,
    /// Holds a task whose lease has passed: presumed dead, its task can be taken over.
    Stale,
    /// Holds nothing; its last claim found nothing ready; heard from within a lease.
    WaitingForWork,
    /// Holds nothing; heard from within a lease.
    Idle,
    /// Holds nothing, and not heard from for longer than a lease.
    Gone,
}

/// The task an agent holds.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct HeldTask {
    pub id: String,
    pub description: String,
    pub status: TaskStatus,
    /// Seconds left on its lease (0 once it has passed).
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub lease_left_secs: u64,
}

/// One agent, as the lead's Agents view shows it.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct AgentRow {
    pub name: String,
    pub state: AgentState,
    /// The tasks it holds (usually one), the one whose lease ends first first.
    pub holds: Vec<HeldTask>,
    /// The last sign of life the store recorded (claim, heartbeat, any operation).
    #[cfg_attr(feature = "ts", ts(type = "string | null"))]
    pub last_seen: Option<Timestamp>,
    /// The last line of its log.
    pub last_line: Option<String>,
    /// Tasks it completed, and tasks it failed.
    pub done: usize,
    pub failed: usize,
}

/// The agents the store knows of besides their logs: those with a recorded sign of life and
/// those holding or having held a task (the leader is not one).
pub fn known_agents(file: &TaskFile) -> BTreeSet<&str> {
    let mut names: BTreeSet<&str> = file.agents.keys().map(String::as_str).collect();
    names.extend(file.tasks.iter().filter_map(|t| t.claimed_by.as_deref()));
    names.remove(LEAD);
    // Its log's name, and the lead's name in tasks a board move gave it before there was one.
    names.remove(LEAD_LOG);
    names
}

/// Every agent's row, in name order, and when a row next changes without anything being
/// written (`None`: not until something is).
pub fn team(
    file: &TaskFile,
    last_lines: &BTreeMap<String, LogLine>,
    now: Timestamp,
    lease: Duration,
) -> (Vec<AgentRow>, Option<Timestamp>) {
    let mut names = known_agents(file);
    names.extend(last_lines.keys().map(String::as_str));
    names.remove(LEAD);
    names.remove(LEAD_LOG);
    // Each agent's tasks, gathered in one pass over the board.
    let mut tasks_of: BTreeMap<&str, Vec<&Task>> = BTreeMap::new();
    for task in &file.tasks {
        if let Some(owner) = task.claimed_by.as_deref() {
            tasks_of.entry(owner).or_default().push(task);
        }
    }
    let mut next: Option<Timestamp> = None;
    let mut soonest = |at: Timestamp| {
        if at > now && next.is_none_or(|n| at < n) {
            next = Some(at);
        }
    };
    let rows = names
        .into_iter()
        .map(|name| {
            let mine = tasks_of.get(name).map(Vec::as_slice).unwrap_or_default();
            let mut holds: Vec<(HeldTask, Timestamp)> = mine
                .iter()
                .filter(|t| t.status.is_held())
                .filter_map(|t| {
                    let end = t.lease_end(lease)?;
                    Some((
                        HeldTask {
                            id: t.id.clone(),
                            description: t.description.clone(),
                            status: t.status,
                            lease_left_secs: end.remaining(now).as_secs(),
                        },
                        end,
                    ))
                })
                .collect();
            holds.sort_by_key(|(_, end)| *end);
            let last_seen = file.agents.get(name).and_then(|a| a.last_seen);
            let last_line = last_lines.get(name).map(|l| l.line.clone());
            let state = match holds.first() {
                Some((_, end)) => {
                    let warn_at = end.before(lease / 4);
                    soonest(warn_at);
                    soonest(*end);
                    if *end <= now {
                        AgentState::Stale
                    } else if warn_at <= now {
                        AgentState::LeaseRunningOut
                    } else {
                        AgentState::Working
                    }
                }
                None => match last_seen.map(|seen| seen.after(lease)) {
                    Some(quiet_at) if quiet_at > now => {
                        soonest(quiet_at);
                        if last_line.as_deref().is_some_and(found_nothing) {
                            AgentState::WaitingForWork
                        } else {
                            AgentState::Idle
                        }
                    }
                    _ => AgentState::Gone,
                },
            };
            let count = |status: TaskStatus| mine.iter().filter(|t| t.status == status).count();
            AgentRow {
                name: name.to_string(),
                state,
                holds: holds.into_iter().map(|(held, _)| held).collect(),
                last_seen,
                last_line,
                done: count(TaskStatus::Done),
                failed: count(TaskStatus::Failed),
            }
        })
        .collect();
    (rows, next)
}

/// A claim that found nothing ready, as the journal writes it (`… CLAIM: nothing ready`).
fn found_nothing(line: &str) -> bool {
    line.contains("] CLAIM: nothing ready")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::AgentRecord;
    use crate::testing::{t0, task};

    const LEASE: Duration = Duration::from_secs(100);

    fn secs(n: u64) -> Duration {
        Duration::from_secs(n)
    }

    fn held(id: &str, agent: &str, status: TaskStatus, lease_end: Timestamp) -> crate::model::Task {
        let mut t = task(id, status, &[]);
        t.status = status;
        t.claimed_by = Some(agent.into());
        t.claimed_at = Some(t0());
        t.lease_expires_at = Some(lease_end);
        t
    }

    fn seen(file: &mut TaskFile, agent: &str, at: Timestamp) {
        file.agents.insert(
            agent.into(),
            AgentRecord {
                last_seen: Some(at),
                ..AgentRecord::default()
            },
        );
    }

    #[test]
    fn each_agent_gets_the_state_its_tasks_lease_and_last_words_say() {
        let now = t0().after(secs(1000));
        let mut file = TaskFile::new(t0());
        file.tasks = vec![
            held("a", "working", TaskStatus::InProgress, now.after(secs(60))),
            held("b", "hurrying", TaskStatus::Claimed, now.after(secs(10))),
            held("c", "dead", TaskStatus::InProgress, now.before(secs(5))),
        ]
        .into();
        let mut done = task("d", TaskStatus::Done, &[]);
        done.status = TaskStatus::Done;
        done.claimed_by = Some("working".into());
        let mut failed = task("e", TaskStatus::Failed, &[]);
        failed.status = TaskStatus::Failed;
        failed.claimed_by = Some("idle".into());
        file.tasks.extend([done, failed]);
        seen(&mut file, "idle", now.before(secs(30)));
        seen(&mut file, "waiting", now.before(secs(20)));
        seen(&mut file, "gone", now.before(secs(500)));
        seen(&mut file, LEAD_LOG, now);
        seen(&mut file, LEAD, now);
        let mut lines = BTreeMap::new();
        lines.insert(
            "waiting".to_string(),
            LogLine {
                agent: "waiting".into(),
                line: "[2026-11-23T10:00:00Z] CLAIM: nothing ready".into(),
            },
        );
        lines.insert(
            "logger".to_string(),
            LogLine {
                agent: "logger".into(),
                line: "[2026-11-23T09:00:00Z] DISCOVERY: found it".into(),
            },
        );

        let (rows, next) = team(&file, &lines, now, LEASE);
        let state = |name: &str| rows.iter().find(|r| r.name == name).unwrap().state;
        assert_eq!(
            rows.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(),
            [
                "dead", "gone", "hurrying", "idle", "logger", "waiting", "working"
            ],
            "every agent known from claims, heartbeats or logs, but the leader"
        );
        assert_eq!(state("working"), AgentState::Working);
        assert_eq!(state("hurrying"), AgentState::LeaseRunningOut);
        assert_eq!(state("dead"), AgentState::Stale);
        assert_eq!(state("idle"), AgentState::Idle);
        assert_eq!(state("waiting"), AgentState::WaitingForWork);
        assert_eq!(state("gone"), AgentState::Gone);
        assert_eq!(state("logger"), AgentState::Gone, "never seen alive");
        let working = rows.iter().find(|r| r.name == "working").unwrap();
        assert_eq!(working.holds[0].id, "a");
        assert_eq!(working.holds[0].lease_left_secs, 60);
        assert_eq!((working.done, working.failed), (1, 0));
        assert_eq!(rows.iter().find(|r| r.name == "idle").unwrap().failed, 1);
        assert_eq!(
            rows.iter().find(|r| r.name == "dead").unwrap().holds[0].lease_left_secs,
            0
        );
        // The next change by time alone: hurrying's lease passes in 10 s (the others later).
        assert_eq!(next, Some(now.after(secs(10))));
    }

    #[test]
    fn the_next_change_is_when_a_lease_gets_short_or_an_idle_agent_goes_quiet() {
        let now = t0().after(secs(1000));
        let mut file = TaskFile::new(t0());
        file.tasks = vec![held("a", "w", TaskStatus::InProgress, now.after(secs(90)))].into();
        seen(&mut file, "i", now.before(secs(40)));
        let (_, next) = team(&file, &BTreeMap::new(), now, LEASE);
        // w's lease is short in 65 s (90 − a quarter of 100); i goes quiet in 60 s.
        assert_eq!(next, Some(now.after(secs(60))));
        let (rows, next) = team(&file, &BTreeMap::new(), now.after(secs(61)), LEASE);
        assert_eq!(rows[0].state, AgentState::Gone);
        assert_eq!(next, Some(now.after(secs(65))));
    }
}
