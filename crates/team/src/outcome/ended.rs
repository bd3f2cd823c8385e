//! The run's end as the lead hears of it away from the terminal: the verdict's counts and
//! headline, recorded by the supervisor as the run ends ([`baton_core::team_end`]).

use baton_core::Timestamp;
use baton_core::team_end::TeamEnded;

use crate::planning::PlanOutcome;
use crate::supervision::info::SupervisorInfo;
use crate::supervision::supervisor::TeamReport;

impl crate::Verdict {
    /// The verdict's first line: whether every task it could reach is done, and the counts.
    pub fn counts(&self) -> String {
        format!(
            "{}: {} done, {} failed, {} handed back, {} not done.",
            if self.all_done {
                "Every task it could reach is done"
            } else {
                "Not every task is done"
            },
            self.done.len(),
            self.failed.len(),
            self.handed_back.len(),
            self.waiting.len()
        )
    }
}

impl PlanOutcome {
    /// Whether the plan was carried out, and the judge's word on the goal, in words.
    pub fn state(&self) -> &'static str {
        match (self.carried_out, self.goal_met) {
            (true, Some(true)) => "carried out, the goal met as the judge finds",
            (true, _) => "carried out",
            (false, Some(false)) => "not carried out: the judge finds the goal not met",
            (false, _) => "not carried out",
        }
    }
}

impl TeamReport {
    /// Whether the run did all it was asked: no error, every agent started, every task it could
    /// reach done and its plan (with a goal) carried out. `team up` exits 0 by it.
    pub fn succeeded(&self) -> bool {
        self.errors.is_empty()
            && self.verdict.cannot_start.is_empty()
            && self.verdict.all_done
            && self.plan.as_ref().is_none_or(|p| p.carried_out)
    }

    /// The run's end as recorded for the lead, ended now.
    pub(crate) fn ended(&self, info: &SupervisorInfo) -> TeamEnded {
        let verdict = &self.verdict;
        let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        let mut headline = String::new();
        if let Some(plan) = &self.plan {
            headline.push_str(&format!("{}: {}. ", plan.plan, plan.state()));
        }
        if let Some(cause) = verdict.cannot_start.first() {
            let cause = cause.lines().next().unwrap_or_default();
            headline.push_str(&format!("Agents could not start ({cause}). "));
        }
        if !self.errors.is_empty() {
            headline.push_str(&format!(
                "{} worker(s) stopped by an error. ",
                self.errors.len()
            ));
        }
        headline.push_str(&verdict.counts());
        TeamEnded {
            host: info.host.clone(),
            pid: info.pid,
            started_at: info.started_at,
            ended_at: Timestamp::now(),
            all_done: self.succeeded(),
            done: count(verdict.done.len()),
            failed: count(verdict.failed.len()),
            not_done: count(verdict.waiting.len()),
            merged: verdict.merged.as_ref().map(|m| count(m.len())),
            goal_met: self.plan.as_ref().and_then(|p| p.goal_met),
            headline,
        }
    }
}
