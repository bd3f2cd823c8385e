//! A team's planner as a caller: the agent whose attempt, through its door, is on the plan
//! task it holds (`team up --goal`). Where the catalogue says a planner may call an operation
//! ([`crate::Callers::planner`]), it does so on its own plan only: the tasks it adds wait,
//! proposed, for the plan's approval and say which plan they are of; it edits and cancels only
//! those, and only before anyone works them; it adds at most [`MAX_PLAN_TASKS`]. It never
//! approves, merges, resets, answers an approval or changes the team: those stay the lead's,
//! and the catalogue refuses them to every agent. And [`PlanWrite`]: the master plan, which is
//! the planner's scratchpad between its sessions.

use baton_core::{ErrorKind, Task};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::operation::{Callers, Context, Operation};

pub use baton_core::MAX_PLAN_TASKS;
pub use baton_core::plans::MAX_PLAN_DEPTH;

/// The plan task `cx`'s caller plans for: an agent speaking through the door of an attempt on
/// a plan task it holds. `None` for the lead and for every other agent.
pub fn planner_of(cx: &Context) -> Result<Option<Task>> {
    cx.plan_held()
}

/// What a planning operation does for its caller: the lead's will as asked, a planner's within
/// its plan. `None` for the lead.
pub(crate) fn planning_for(cx: &Context) -> Result<Option<Task>> {
    match &cx.caller {
        None => Ok(None),
        Some(agent) => planner_of(cx)?.map(Some).ok_or_else(|| {
            Error::new(
                ErrorKind::NotYou,
                format!("agent {agent} is not a team's planner: planning is the lead's"),
            )
        }),
    }
}

/// Task `id` for `plan`'s planner to change: one of its plan's, not yet worked.
pub(crate) fn own_unstarted(cx: &Context, plan: &Task, id: &str, what: &str) -> Result<Task> {
    let task = cx.tasks.task(id)?.ok_or_else(|| {
        Error::new(
            ErrorKind::UnknownTask,
            format!("no task {id:?}; baton leader status lists the tasks"),
        )
    })?;
    if !task.is_of_plan(&plan.id) {
        return Err(Error::new(
            ErrorKind::NotYou,
            format!(
                "{id} is not of your plan ({}): a planner may {what} only the tasks it added",
                plan.id
            ),
        ));
    }
    use baton_core::TaskStatus::{Available, Proposed};
    if !matches!(task.status, Proposed | Available) {
        return Err(Error::new(
            ErrorKind::NotYou,
            format!(
                "{id} is {} already: a planner may {what} a task only before anyone works it \
                 (ask the lead)",
                task.status
            ),
        ));
    }
    Ok(task)
}

/// Refuses a task more than `plan`'s goal may have: [`MAX_PLAN_TASKS`] in the whole tree of
/// its goal's plan (its sub-plans' tasks count too), or as many more as the lead allowed
/// since; and, for a sub-plan (`sub_plan`), one deeper than [`MAX_PLAN_DEPTH`]. At the limit
/// the lead is asked (once) whether the plan may have more, unless the team plans on its own
/// (`--plan auto`): nobody is there to ask.
pub(crate) fn check_room(cx: &Context, plan: &Task, sub_plan: bool) -> Result<()> {
    let (file, _) = cx.snapshot()?;
    let root = file.plan_root(&plan.id);
    let planned = file.plan_tree(&root).len();
    let allowed = baton_core::plans::allowance(cx.documents.as_ref(), &root)?.tasks;
    if planned >= allowed {
        let what = format!("plan {root} has {planned} tasks, the most it may have ({allowed})");
        let why = match ask_for_room(cx, &root, planned)? {
            Some(question) => format!(
                "{what}: the lead is asked whether it may have more ({question}), and you will \
                 hear the answer in a session of its own; end this one with the plan as it \
                 stands, or split the goal"
            ),
            None => format!("{what}: ask the lead, or split the goal"),
        };
        return Err(Error::new(ErrorKind::NotYou, why));
    }
    if sub_plan && file.plan_depth(&plan.id) + 1 > MAX_PLAN_DEPTH {
        return Err(Error::new(
            ErrorKind::NotYou,
            format!(
                "{} is a plan {} deep already, the deepest plans go ({MAX_PLAN_DEPTH}): plan \
                 this slice's tasks yourself",
                plan.id,
                file.plan_depth(&plan.id)
            ),
        ));
    }
    Ok(())
}

/// Asks the lead whether goal's plan `root`, at its limit with `planned` tasks, may have
/// more (the question already open for it, if there is one); `None` when nobody is asked:
/// no team of this machine's plans it, or it plans on its own (`--plan auto`).
fn ask_for_room(cx: &Context, root: &str, planned: usize) -> Result<Option<String>> {
    use baton_core::inbox::{self, About, PlanLimit};
    let Some(team) = baton_team::running_supervisor(cx.local)? else {
        return Ok(None);
    };
    let reviewed = team.request.as_ref().is_some_and(|r| {
        r.goal.is_some() && r.plan.unwrap_or_default() == baton_team::PlanApproval::Review
    });
    if !reviewed {
        return Ok(None);
    }
    let asking = |q: &inbox::Question| matches!(&q.about, About::Limit { plan, limit: PlanLimit::Tasks } if plan == root);
    let open = inbox::questions(cx.documents.as_ref(), true)?.items;
    if let Some(asked) = open.iter().find(|q| asking(q)) {
        return Ok(Some(asked.id.clone()));
    }
    let asked = inbox::ask(
        cx.documents.as_ref(),
        inbox::NewQuestion {
            agent: cx.caller.clone().unwrap_or_default(),
            task: Some(root.to_string()),
            text: format!(
                "The planner's plan {root} has {planned} tasks, the most it may have, and it \
                 would add more. May the plan have {MAX_PLAN_TASKS} more tasks? Anything but \
                 `go on` keeps the limit, and your words are the planner's to plan with."
            ),
            choices: vec!["go on".into(), "keep the limit".into()],
            about: About::Limit {
                plan: root.to_string(),
                limit: PlanLimit::Tasks,
            },
        },
    )?;
    Ok(Some(asked.id))
}

/// Refuses question `id` to `plan`'s planner unless the lead told it to answer the workers'
/// questions (`team up --planner-answers`, as this machine's running team was asked), the
/// question is one in words (an approval of a tool call, or a plan, stays the lead's), and it
/// is about a task of the plan's tree.
pub(crate) fn may_answer(cx: &Context, plan: &Task, id: &str) -> Result<()> {
    let refuse = |why: String| Err(Error::new(ErrorKind::NotYou, why));
    let told = baton_team::running_supervisor(cx.local)?
        .and_then(|team| team.request)
        .is_some_and(|request| request.planner_answers);
    if !told {
        return refuse(
            "the lead answers the workers' questions: the team was not asked to let its planner \
             (`team up --planner-answers`)"
                .into(),
        );
    }
    let question = baton_core::inbox::question(cx.documents.as_ref(), id)?;
    match question.about {
        baton_core::inbox::About::Question => {}
        baton_core::inbox::About::Limit { .. } => {
            return refuse(format!(
                "{id} asks whether your plan may go past a limit: only the lead answers it"
            ));
        }
        _ => {
            return refuse(format!(
                "{id} asks the lead to approve something: approvals stay the lead's"
            ));
        }
    }
    let (file, _) = cx.snapshot()?;
    let root = file.plan_root(&plan.id);
    let ours = question
        .task
        .as_deref()
        .is_some_and(|task| file.plan_tree(&root).iter().any(|t| t.id == task));
    if !ours {
        return refuse(format!(
            "{id} is not about a task of your plan ({root}): it is the lead's to answer"
        ));
    }
    Ok(())
}

/// Rewrites the master plan.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlanWrite {
    /// The whole master plan, in Markdown (at most 256 KiB).
    #[cfg_attr(feature = "cli", arg(skip))]
    pub text: String,
}

/// The master plan as written.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PlanWritten {
    /// Its size in bytes.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub bytes: usize,
    /// Who wrote it: the lead, or the planner.
    pub by: String,
}

impl Operation for PlanWrite {
    const NAME: &'static str = "plan_write";
    const DESCRIPTION: &'static str = "Rewrite the master plan (.coordination/master-plan.md): the goal, the approach, what is done and what is next. The lead's, and a team's planner's (its scratchpad: a new planning session starts from it).";
    const READ_ONLY: bool = false;
    const CALLERS: Callers = Callers::PLANNING;
    type Output = PlanWritten;
    fn run(self, cx: &Context) -> Result<PlanWritten> {
        planning_for(cx)?;
        let by = cx.caller.clone().unwrap_or_else(|| baton_core::LEAD.into());
        cx.tasks.write_master_plan(&by, &self.text)?;
        Ok(PlanWritten {
            bytes: self.text.len(),
            by,
        })
    }
}
