//! The lead's plan on the board: a task added (as proposed, for a plan the lead approves, or
//! available at once) and a task's description, priority, dependencies, files, hints and
//! acceptance changed.

use baton_core::{DEFAULT_PRIORITY, NewTask, TaskEdit, TaskKind};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{TaskOutcome, default_priority};
use crate::error::{Error, Result};
use crate::operation::{Callers, Context, Operation};
use crate::planning::{check_room, own_unstarted, planning_for};

/// A task to add to the queue.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct AddTask {
    /// What to do, for the worker who claims it.
    pub description: String,
    /// 1 is the most urgent (default 5).
    #[serde(default = "default_priority")]
    #[schemars(range(min = 1, max = 1000))]
    #[cfg_attr(feature = "cli", arg(short, long, default_value_t = DEFAULT_PRIORITY))]
    pub priority: u32,
    /// Ids of tasks that must be done first.
    #[serde(default)]
    #[cfg_attr(
        feature = "cli",
        arg(short, long = "depends", value_name = "ID", num_args = 1.., value_delimiter = ',')
    )]
    pub depends: Vec<String>,
    /// Files the worker should look at.
    #[serde(default)]
    #[cfg_attr(
        feature = "cli",
        arg(short, long, value_name = "FILE", num_args = 1.., value_delimiter = ',')
    )]
    pub files: Vec<String>,
    /// Hints for the worker.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(skip))]
    // the command line takes lines: see `baton leader add-task`
    pub hints: String,
    /// Choose the id instead of the next task-N.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub id: Option<String>,
    /// How the work will be judged done: what must hold when it is (the judge and the lead
    /// review it against this; its worker is told).
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "TEXT"))]
    pub acceptance: Option<String>,
    /// Add it as proposed: one of a plan the lead approves (`task_approve`) before anyone may
    /// claim it.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub proposed: bool,
    /// A slice of the goal to plan apart (a team's planner only): a task of kind `plan`, which
    /// the team's planner plans once its dependencies are done, its tasks part of this plan.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub sub_plan: bool,
}

impl AddTask {
    /// A task with this description and every default.
    pub fn new(description: impl Into<String>) -> Self {
        AddTask {
            description: description.into(),
            priority: DEFAULT_PRIORITY,
            depends: Vec::new(),
            files: Vec::new(),
            hints: String::new(),
            id: None,
            acceptance: None,
            proposed: false,
            sub_plan: false,
        }
    }
}

impl Operation for AddTask {
    const NAME: &'static str = "task_add";
    const DESCRIPTION: &'static str = "Add a task to the queue (leader). Unknown dependencies and cycles are refused. A team's planner adds it to its plan, proposed until the lead approves the plan.";
    const READ_ONLY: bool = false;
    const CALLERS: Callers = Callers::PLANNING;
    type Output = TaskOutcome;
    fn run(self, cx: &Context) -> Result<TaskOutcome> {
        let plan = planning_for(cx)?;
        match &plan {
            Some(plan) => check_room(cx, plan, self.sub_plan)?,
            None if self.sub_plan => {
                return Err(Error::new(
                    baton_core::ErrorKind::InvalidArguments,
                    "a sub-plan is a slice of a team's plan: its planner adds it (`baton team \
                     up --goal`)",
                ));
            }
            None => {}
        }
        let task = cx.tasks.add_task(NewTask {
            id: self.id,
            description: self.description,
            priority: self.priority,
            dependencies: self.depends,
            files: self.files,
            hints: self.hints,
            acceptance: self.acceptance,
            proposed: self.proposed || plan.is_some(),
            kind: match self.sub_plan {
                true => TaskKind::Plan,
                false => TaskKind::Work,
            },
            plan: plan.map(|plan| plan.id),
        })?;
        Ok(task.into())
    }
}

/// Changes to a task; a field left out stays as it is.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(deny_unknown_fields)]
pub struct EditTask {
    /// The task's id.
    pub task: String,
    /// The new description.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub description: Option<String>,
    /// The new priority (1 is the most urgent).
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(short, long))]
    pub priority: Option<u32>,
    /// The new dependencies, replacing the old (only while the task is available; [] removes
    /// them all).
    #[serde(default)]
    #[cfg_attr(
        feature = "cli",
        arg(short, long = "depends", value_name = "ID", num_args = 1.., value_delimiter = ',')
    )]
    pub depends: Option<Vec<String>>,
    /// The new files, replacing the old.
    #[serde(default)]
    #[cfg_attr(
        feature = "cli",
        arg(short, long, value_name = "FILE", num_args = 1.., value_delimiter = ',')
    )]
    pub files: Option<Vec<String>>,
    /// The new hints.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub hints: Option<String>,
    /// The new acceptance (how the work will be judged done); "" removes it.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "TEXT"))]
    pub acceptance: Option<String>,
}

impl Operation for EditTask {
    const NAME: &'static str = "task_edit";
    const DESCRIPTION: &'static str = "Change a task's description, priority, dependencies, files, hints or acceptance (leader). Dependencies only change while it is available. A team's planner changes its own plan's tasks before anyone works them.";
    const READ_ONLY: bool = false;
    const CALLERS: Callers = Callers::PLANNING;
    type Output = TaskOutcome;
    fn run(self, cx: &Context) -> Result<TaskOutcome> {
        if let Some(plan) = planning_for(cx)? {
            own_unstarted(cx, &plan, &self.task, "edit")?;
        }
        let task = cx.tasks.edit_task(
            &self.task,
            TaskEdit {
                description: self.description,
                priority: self.priority,
                dependencies: self.depends,
                files: self.files,
                hints: self.hints,
                acceptance: self.acceptance,
            },
        )?;
        Ok(task.into())
    }
}
