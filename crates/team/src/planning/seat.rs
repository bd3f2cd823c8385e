//! A team's planner as its supervisor holds it: the planner's crew (its own profile and budget,
//! the project read-only), its name, its plan task, how the plan is approved, and what the plan
//! came to at the end.

use baton_live::WatchMode;

use crate::Progress;
use crate::error::Result;
use crate::launch::Setting;
use crate::planning::planner::{PlannerRun, run_planner};
use crate::planning::{
    PlanApproval, PlanOutcome, Planning, carried_out, plan_task, planner_name, tasks_of,
};
use crate::supervision::crew::{Crew, TeamStores};

/// A team's planner.
pub(crate) struct PlannerSeat<'a> {
    pub crew: Crew<'a>,
    pub name: String,
    pub plan: String,
    pub approval: PlanApproval,
    pub answers: bool,
}

impl<'a> PlannerSeat<'a> {
    /// The planner of a team with a goal, and the goal's plan task (new, or the one a team on
    /// the same goal left unfinished). `budget_usd`: the team's, which its planning counts
    /// against unless it has one of its own.
    pub fn new(
        stores: TeamStores<'a>,
        setting: &Setting,
        planning: &Planning,
        mode: WatchMode,
        budget_usd: Option<f64>,
        host: &str,
        progress: &'a (dyn Fn(Progress) + Sync),
    ) -> Result<PlannerSeat<'a>> {
        let mut crew = Crew::new(
            stores,
            setting.clone(),
            planning.profile.clone(),
            host.to_string(),
            mode,
            progress,
        )?;
        crew.reads_only = true;
        crew.spend.cap_usd = planning.budget_usd.or(budget_usd);
        let name = planner_name(stores.tasks, host);
        baton_core::names::validate_agent_id(&name)?;
        let task = plan_task(stores.tasks, &planning.goal)?;
        Ok(PlannerSeat {
            crew,
            name,
            plan: task.id,
            approval: planning.approval,
            answers: planning.answers_questions,
        })
    }

    /// Runs the planner beside the workers of `team` (stopped when planning ends).
    pub fn run(&self, team: &Crew<'_>) -> Result<crate::supervision::worker::WorkerReport> {
        run_planner(&PlannerRun {
            planner: &self.crew,
            team,
            name: &self.name,
            plan: &self.plan,
            approval: self.approval,
            answers: self.answers,
        })
    }

    /// What the plan came to, as the board says now.
    pub fn outcome(&self) -> PlanOutcome {
        let tasks = tasks_of(self.crew.tasks, &self.plan).unwrap_or_default();
        let sessions = self
            .crew
            .team
            .attempts(Some(&self.plan))
            .map(|attempts| attempts.len() as u32)
            .unwrap_or_default();
        let goal_met = baton_core::review::review_of(self.crew.documents, &self.plan)
            .ok()
            .and_then(|record| record.judgements.last().map(|j| j.approved));
        PlanOutcome {
            plan: self.plan.clone(),
            carried_out: carried_out(&tasks) && goal_met != Some(false),
            goal_met,
            tasks: tasks.into_iter().map(|t| t.id).collect(),
            sessions,
        }
    }
}
