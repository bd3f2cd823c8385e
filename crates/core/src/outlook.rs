//! What a worker waiting for work can expect from the queue: something to claim now, nothing
//! until the next write or lease expiry, or nothing ever (the queue is drained). Waiting
//! claimers (`claim --wait`, `worker loop`) use it to sleep on the right event and to stop.

use std::time::Duration;

use crate::graph::doomed_tasks;
use crate::model::TaskFile;
use crate::time::Timestamp;

/// The queue as seen by a worker looking for work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outlook {
    /// A claim now would get a task.
    Claimable,
    /// Nothing is claimable until `tasks.json` changes or, if given, a held task's lease
    /// expires at that instant (the earliest one).
    Waiting {
        next_lease_expiry: Option<Timestamp>,
    },
    /// Nothing can become claimable without new tasks: every task is finished, or waits on a
    /// failed, cancelled or missing dependency, and no worker holds one.
    Drained,
}

impl TaskFile {
    /// The queue as `agent` (`None`: anybody) sees it: a task kept back only by files another
    /// agent holds is waited for until its files are free (a change, or the end of a lease or
    /// of a reservation's time).
    pub fn outlook(&self, agent: Option<&str>, now: Timestamp, lease: Duration) -> Outlook {
        let sent_back = |agent: &str| {
            self.tasks
                .iter()
                .any(|t| t.is_sent_back_to(agent, now, lease))
        };
        if agent.is_some_and(sent_back)
            || self
                .best_claimable(agent, crate::requests::Files::Respect, now, lease)
                .is_some()
        {
            return Outlook::Claimable;
        }
        let next_lease_expiry = self
            .tasks
            .iter()
            .filter_map(|t| t.lease_end(lease))
            .chain(self.next_reservation_end(now, lease))
            .min();
        if next_lease_expiry.is_some() {
            return Outlook::Waiting { next_lease_expiry };
        }
        let doomed = doomed_tasks(self).len();
        // A plan nobody holds is its planner's to take up, not a worker's: it waits for no one.
        let unfinished = self
            .tasks
            .iter()
            .filter(|t| !t.status.is_final() && (t.kind.is_work() || t.status.is_held()))
            .count();
        if unfinished == doomed {
            Outlook::Drained
        } else {
            // Proposed tasks (a plan the lead has not approved) become claimable without new
            // tasks; otherwise unreachable with a consistent file (an unfinished task is held,
            // claimable, doomed, or waits on one of those), a safe answer for hand-edited ones.
            Outlook::Waiting {
                next_lease_expiry: None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::requests::{Completion, NewTask};
    use crate::testing::t0;

    const LEASE: Duration = Duration::from_secs(60);

    fn add(file: &mut TaskFile, deps: &[&str]) -> String {
        file.add_task(
            NewTask {
                description: "work".into(),
                priority: 1,
                dependencies: deps.iter().map(|d| d.to_string()).collect(),
                ..NewTask::default()
            },
            t0(),
        )
        .unwrap()
        .id
        .clone()
    }

    #[test]
    fn an_empty_queue_is_drained() {
        assert_eq!(
            TaskFile::new(t0()).outlook(None, t0(), LEASE),
            Outlook::Drained
        );
    }

    #[test]
    fn a_ready_task_is_claimable() {
        let mut file = TaskFile::new(t0());
        add(&mut file, &[]);
        assert_eq!(file.outlook(None, t0(), LEASE), Outlook::Claimable);
    }

    #[test]
    fn a_held_dependency_means_waiting_until_its_lease_ends() {
        let mut file = TaskFile::new(t0());
        let a = add(&mut file, &[]);
        add(&mut file, &[&a]);
        file.claim(&crate::ClaimRequest::next("w1"), t0(), LEASE)
            .unwrap();
        assert_eq!(
            file.outlook(None, t0(), LEASE),
            Outlook::Waiting {
                next_lease_expiry: Some(t0().after(LEASE))
            }
        );
        // Once the lease has passed, the held task itself is claimable again.
        assert_eq!(
            file.outlook(None, t0().after(LEASE), LEASE),
            Outlook::Claimable
        );
    }

    #[test]
    fn finished_and_doomed_tasks_leave_the_queue_drained() {
        let mut file = TaskFile::new(t0());
        let a = add(&mut file, &[]);
        let b = add(&mut file, &[]);
        add(&mut file, &[&b]);
        file.claim(&crate::ClaimRequest::next("w1"), t0(), LEASE)
            .unwrap();
        file.start("w1", &a, t0(), LEASE).unwrap();
        file.complete(
            "w1",
            &a,
            Completion {
                output: "ok".into(),
                ..Completion::default()
            },
            t0(),
        )
        .unwrap();
        file.claim(&crate::ClaimRequest::next("w1"), t0(), LEASE)
            .unwrap();
        file.fail("w1", &b, "broken", t0()).unwrap();
        assert_eq!(file.outlook(None, t0(), LEASE), Outlook::Drained);
    }
}
