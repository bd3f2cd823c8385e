//! Moving a task to another status the way a lead does on the board: which lifecycle operation
//! that takes, in whose name, and whether the lifecycle allows it now.
//!
//! The rules are not restated here. A target status picks one candidate operation (done means
//! complete, available means release or reset, ...), and the candidate is tried on a copy of
//! the task file: a refusal is the lifecycle's own error, and a move the lifecycle accepts is
//! never refused. The desktop asks this instead of keeping its own table; the CLI offers the
//! same as `baton leader move`.
//!
//! The lead acts for a task's holder (a claimed task is started, completed or released in its
//! owner's name), as that worker would with the CLI, and claims in its own name.

use std::time::Duration;

use schemars::JsonSchema;
use serde::Serialize;

use crate::error::{Result, StoreError};
use crate::model::{TaskFile, TaskStatus};
use crate::names::LEAD;
use crate::requests::Completion;
use crate::time::Timestamp;

/// The operation that brings a task to the status asked for.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Move {
    /// The task is there already (cancelled counts as failed): nothing to do.
    Stay,
    /// Claim this task for the agent.
    Claim { agent: String },
    /// Start it in its holder's name.
    Start { agent: String },
    /// Complete it in its holder's name; needs a summary.
    Complete { agent: String },
    /// Fail it in its holder's name; needs a reason.
    Fail { agent: String },
    /// Hand it back in its holder's name.
    Release { agent: String },
    /// The leader puts a failed or cancelled (or stale) task back to available.
    Reset,
    /// The lead approves a proposed task: it becomes available.
    Approve,
    /// The leader cancels an unfinished task (its holder loses it); a reason is optional.
    Cancel,
}

impl Move {
    /// The text the move needs before it can be made: "summary" or "reason".
    pub fn needs(&self) -> Option<&'static str> {
        match self {
            Move::Complete { .. } => Some("summary"),
            Move::Fail { .. } => Some("reason"),
            _ => None,
        }
    }
}

/// Statuses that share a place on the board: cancelled tasks stand with the failed ones.
fn place(status: TaskStatus) -> TaskStatus {
    match status {
        TaskStatus::Cancelled => TaskStatus::Failed,
        other => other,
    }
}

impl TaskFile {
    /// The move that brings task `id` to `to`, or the lifecycle's refusal.
    pub fn plan_move(
        &self,
        id: &str,
        to: TaskStatus,
        now: Timestamp,
        lease: Duration,
    ) -> Result<Move> {
        let task = self.task(id).ok_or_else(|| StoreError::UnknownTask {
            id: id.chars().take(80).collect(),
        })?;
        if place(task.status) == place(to) && (to != TaskStatus::Cancelled || task.status == to) {
            return Ok(Move::Stay);
        }
        let owner = task.claimed_by.clone().unwrap_or_else(|| LEAD.to_string());
        let candidate = match to {
            TaskStatus::Available if task.status.is_held() => Move::Release { agent: owner },
            TaskStatus::Available if task.status == TaskStatus::Proposed => Move::Approve,
            TaskStatus::Available => Move::Reset,
            TaskStatus::Claimed => Move::Claim {
                agent: LEAD.to_string(),
            },
            TaskStatus::InProgress => Move::Start { agent: owner },
            TaskStatus::Done => Move::Complete { agent: owner },
            TaskStatus::Failed if task.status.is_held() => Move::Fail { agent: owner },
            TaskStatus::Failed | TaskStatus::Cancelled => Move::Cancel,
            // Nothing becomes proposed again: only a new task is added as proposed.
            TaskStatus::Proposed => {
                return Err(crate::rules::illegal(
                    task,
                    "propose",
                    "; only a new task is added as proposed (`add-task --proposed`)",
                ));
            }
        };
        let mut trial = self.clone();
        trial.apply(id, &candidate, "-", now, lease)?;
        Ok(candidate)
    }

    /// Makes `step` on task `id`; `text` is the summary, the reason, or nothing.
    fn apply(
        &mut self,
        id: &str,
        step: &Move,
        text: &str,
        now: Timestamp,
        lease: Duration,
    ) -> Result<()> {
        match step {
            Move::Stay => Ok(()),
            Move::Claim { agent } => self
                .claim(&crate::ClaimRequest::task(agent.as_str(), id), now, lease)
                .map(drop),
            Move::Start { agent } => self.start(agent, id, now, lease).map(drop),
            Move::Complete { agent } => {
                let report = Completion {
                    output: text.to_string(),
                    ..Completion::default()
                };
                self.complete(agent, id, report, now).map(drop)
            }
            Move::Fail { agent } => self.fail(agent, id, text, now).map(drop),
            Move::Release { agent } => self.release(agent, id, now).map(drop),
            Move::Reset => self.reset(id, now, lease, false).map(drop),
            Move::Approve => self.approve(id).map(drop),
            Move::Cancel => self.cancel(id, Some(text), now).map(drop),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::requests::NewTask;
    use crate::testing::t0;

    const LEASE: Duration = Duration::from_secs(60);

    /// a (available), b after a (blocked), c claimed by w1, d in progress by w2, e failed.
    fn board() -> TaskFile {
        let mut file = TaskFile::new(t0());
        for (id, deps) in [("a", vec![]), ("b", vec!["a".to_string()]), ("c", vec![])] {
            let new = NewTask {
                id: Some(id.into()),
                description: id.into(),
                dependencies: deps,
                ..NewTask::default()
            };
            file.add_task(new, t0()).unwrap();
        }
        for id in ["d", "e"] {
            let new = NewTask {
                id: Some(id.into()),
                description: id.into(),
                ..NewTask::default()
            };
            file.add_task(new, t0()).unwrap();
        }
        file.claim(&crate::ClaimRequest::task("w1", "c"), t0(), LEASE)
            .unwrap();
        file.claim(&crate::ClaimRequest::task("w2", "d"), t0(), LEASE)
            .unwrap();
        file.start("w2", "d", t0(), LEASE).unwrap();
        file.claim(&crate::ClaimRequest::task("w3", "e"), t0(), LEASE)
            .unwrap();
        file.fail("w3", "e", "broke", t0()).unwrap();
        file
    }

    fn plan(file: &TaskFile, id: &str, to: TaskStatus) -> std::result::Result<Move, String> {
        file.plan_move(id, to, t0(), LEASE)
            .map_err(|e| e.to_string())
    }

    fn agent(name: &str) -> String {
        name.to_string()
    }

    #[test]
    fn legal_moves_act_for_the_holder_and_claim_as_the_leader() {
        use TaskStatus::*;
        let file = board();
        let leader = agent(LEAD);
        assert_eq!(plan(&file, "a", Claimed), Ok(Move::Claim { agent: leader }));
        assert_eq!(
            plan(&file, "c", InProgress),
            Ok(Move::Start { agent: agent("w1") })
        );
        assert_eq!(
            plan(&file, "c", Available),
            Ok(Move::Release { agent: agent("w1") })
        );
        assert_eq!(
            plan(&file, "c", Failed),
            Ok(Move::Fail { agent: agent("w1") })
        );
        assert_eq!(
            plan(&file, "d", Done),
            Ok(Move::Complete { agent: agent("w2") })
        );
        assert_eq!(plan(&file, "e", Available), Ok(Move::Reset));
        assert_eq!(plan(&file, "a", Failed), Ok(Move::Cancel));
        assert_eq!(plan(&file, "c", Cancelled), Ok(Move::Cancel));
        assert_eq!(plan(&file, "d", InProgress), Ok(Move::Stay));
        assert_eq!(plan(&file, "e", Failed), Ok(Move::Stay));
    }

    #[test]
    fn refusals_are_the_lifecycles_own_words() {
        use TaskStatus::*;
        let file = board();
        let refused = |id, to| plan(&file, id, to).unwrap_err();
        assert!(
            refused("b", Claimed).contains("waits for a"),
            "{}",
            refused("b", Claimed)
        );
        assert!(
            refused("c", Done).contains("start it first"),
            "{}",
            refused("c", Done)
        );
        assert!(refused("a", InProgress).contains("claim it first"));
        assert!(refused("a", Done).contains("it is available"));
        assert!(refused("e", Claimed).contains("only available tasks"));
        assert!(refused("e", Done).contains("it is failed"));
        assert!(refused("d", Claimed).contains("lease is still running"));
        assert!(refused("e", Cancelled).contains("only unfinished tasks"));
        assert!(refused("ghost", Done).contains("ghost"));
    }

    #[test]
    fn planning_changes_nothing() {
        let file = board();
        let before = serde_json::to_string(&file).unwrap();
        for to in [TaskStatus::Available, TaskStatus::Done, TaskStatus::Failed] {
            let _ = file.plan_move("c", to, t0(), LEASE);
        }
        assert_eq!(serde_json::to_string(&file).unwrap(), before);
    }

    #[test]
    fn a_held_task_on_an_expired_lease_can_be_claimed_by_the_leader() {
        let file = board();
        let later = t0().after(LEASE * 2);
        let step = file
            .plan_move("d", TaskStatus::Claimed, later, LEASE)
            .unwrap();
        assert_eq!(step, Move::Claim { agent: agent(LEAD) });
    }
}
