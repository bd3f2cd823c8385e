//! What coordination cost (`baton team report`, `team_report`): per task, its attempts, review
//! rounds (the lead's and the judge's), the judge's verdicts, questions, messages, the merge
//! queue's returns and the check's failures, the time it waited (for its dependencies, for the
//! lead's answers) and what its agents cost; per role (planning, work, judging) the attempts and
//! tokens; per run, what landed, the cost per landed task, how often the lead stepped in, and
//! the share of tokens spent planning and judging. Read from the records the team keeps (the
//! board, the attempts, the reviews, the inbox, the merge queue): nothing is counted twice and
//! nothing is estimated.

use std::collections::BTreeMap;

use baton_core::inbox::{Message, Question, QuestionState};
use baton_core::review::ReviewRecord;
use baton_core::{Attempt, AttemptRole, LEAD, Task, TaskKind, TaskStatus, Usage};
use baton_team::{QueueEntry, QueueState};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::operation::{Callers, Context, Operation};

/// What coordination cost, for every task on the board.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TeamReportRequest {
    /// Only the tasks of this plan (and the plan task itself).
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "PLAN"))]
    pub plan: Option<String>,
}

/// One task's share of the coordination.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct TaskCost {
    pub task: String,
    pub kind: TaskKind,
    pub status: TaskStatus,
    /// The plan it is of, when a planner added it.
    pub plan: Option<String>,
    /// Its workers' attempts (a plan's: its planner's sessions).
    pub attempts: u32,
    /// Sessions of the team's agent judge reading its work.
    pub judge_sessions: u32,
    /// Rounds of requested changes, by the lead.
    pub lead_rounds: u32,
    /// Rounds of requested changes, by the team's judge.
    pub judge_rounds: u32,
    /// The judge's verdicts on its branch.
    pub judgements: u32,
    /// Questions its agents asked (approvals included).
    pub questions: u32,
    /// Messages about it.
    pub messages: u32,
    /// Times the merge queue sent it back (a failing check, a conflict, protected files, the
    /// judge).
    pub queue_returns: u32,
    /// Runs of the project's check on it that failed.
    pub check_failures: u32,
    /// In the lead's branch through the merge queue.
    pub landed: bool,
    /// From the moment it could start (added, and its dependencies done) to its first
    /// attempt's start; none before it started.
    pub waited_for_dependencies_secs: Option<f64>,
    /// How long its settled questions waited for the lead (one still open is not counted).
    pub waited_for_lead_secs: f64,
    /// What its workers' attempts cost.
    pub usage: Usage,
    /// What judging it cost (an agent judge's sessions).
    pub judging_usage: Usage,
}

/// What one role's attempts cost.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct RoleCost {
    /// planning (attempts at plan tasks), work, or judging.
    pub role: String,
    pub attempts: u32,
    pub usage: Usage,
    /// Its tokens' share of all tokens (0 to 1), when any were counted.
    pub token_share: Option<f64>,
}

/// The run as a whole.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct RunCost {
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub tasks: usize,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub landed: usize,
    pub cost_usd: f64,
    /// The cost over the tasks landed; none when none landed.
    pub cost_per_landed_task_usd: Option<f64>,
    /// The lead's answers to agents' questions and rounds of requested changes.
    pub lead_interventions: u32,
    pub questions: u32,
    pub messages: u32,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub tokens: u64,
}

/// What coordination cost.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct CoordinationReport {
    pub tasks: Vec<TaskCost>,
    pub roles: Vec<RoleCost>,
    pub run: RunCost,
}

/// Everything the report is read from.
pub struct Records {
    pub tasks: Vec<Task>,
    pub attempts: Vec<Attempt>,
    pub reviews: BTreeMap<String, ReviewRecord>,
    pub questions: Vec<Question>,
    pub messages: Vec<Message>,
    pub queue: Vec<QueueEntry>,
}

impl Operation for TeamReportRequest {
    const NAME: &'static str = "team_report";
    const DESCRIPTION: &'static str = "What coordination cost: per task its attempts, review rounds (the lead's and the judge's), questions, messages, merge-queue returns, check failures, time waiting for dependencies and for the lead, tokens and cost; per role (planning, work, judging) attempts and tokens; per run tasks landed, cost per landed task, lead interventions.";
    const READ_ONLY: bool = true;
    const CALLERS: Callers = Callers::READERS;
    type Output = CoordinationReport;
    fn run(self, cx: &Context) -> Result<CoordinationReport> {
        let (file, _) = cx.snapshot()?;
        // A plan's whole tree: its own tasks, and its sub-plans' with theirs.
        let plans = self.plan.as_deref().map(|plan| file.plans_in(plan));
        let tasks: Vec<Task> = file
            .tasks
            .into_iter()
            .filter(|t| match &plans {
                Some(plans) => {
                    plans.contains(&t.id) || t.plan.as_ref().is_some_and(|p| plans.contains(p))
                }
                None => true,
            })
            .collect();
        let mut reviews = BTreeMap::new();
        for task in &tasks {
            let record = baton_core::review::review_of(cx.documents.as_ref(), &task.id)?;
            reviews.insert(task.id.clone(), record);
        }
        let records = Records {
            attempts: cx.team.attempts(None)?,
            reviews,
            questions: baton_core::inbox::questions(cx.documents.as_ref(), false)?.items,
            messages: baton_core::inbox::all_messages(cx.documents.as_ref())?.items,
            queue: baton_team::read_queue(cx.local),
            tasks,
        };
        Ok(tally(&records))
    }
}

/// The report the records make.
pub fn tally(records: &Records) -> CoordinationReport {
    let by_id: BTreeMap<&str, &Task> = records.tasks.iter().map(|t| (t.id.as_str(), t)).collect();
    let tasks: Vec<TaskCost> = records
        .tasks
        .iter()
        .map(|task| task_cost(task, records, &by_id))
        .collect();
    let mut roles: Vec<RoleCost> = ["planning", "work", "judging"]
        .iter()
        .map(|role| RoleCost {
            role: role.to_string(),
            attempts: 0,
            usage: Usage::default(),
            token_share: None,
        })
        .collect();
    for attempt in &records.attempts {
        let Some(task) = by_id.get(attempt.task.as_str()) else {
            continue;
        };
        let role = match (attempt.role, task.kind) {
            (AttemptRole::Judging, _) => 2,
            (AttemptRole::Work, TaskKind::Plan) => 0,
            (AttemptRole::Work, TaskKind::Work) => 1,
        };
        roles[role].attempts += 1;
        roles[role].usage.add(&attempt.usage);
    }
    let total = roles.iter().fold(Usage::default(), |mut sum, r| {
        sum.add(&r.usage);
        sum
    });
    let tokens = tokens(&total);
    for role in &mut roles {
        role.token_share = (tokens > 0).then(|| self::tokens(&role.usage) as f64 / tokens as f64);
    }
    let landed = tasks.iter().filter(|t| t.landed).count();
    let lead_answers = records
        .questions
        .iter()
        .filter(|q| in_report(q.task.as_deref(), &by_id))
        .filter(|q| matches!(&q.state, QuestionState::Answered { by, .. } if by == LEAD))
        .count() as u32;
    let lead_rounds: u32 = tasks.iter().map(|t| t.lead_rounds).sum();
    let run = RunCost {
        tasks: tasks.len(),
        landed,
        cost_usd: total.cost_usd,
        cost_per_landed_task_usd: (landed > 0).then(|| total.cost_usd / landed as f64),
        lead_interventions: lead_answers + lead_rounds,
        questions: tasks.iter().map(|t| t.questions).sum(),
        messages: tasks.iter().map(|t| t.messages).sum(),
        tokens,
    };
    CoordinationReport { tasks, roles, run }
}

/// Whether something about `task` belongs to the report's tasks.
fn in_report(task: Option<&str>, by_id: &BTreeMap<&str, &Task>) -> bool {
    task.is_some_and(|t| by_id.contains_key(t))
}

fn tokens(usage: &Usage) -> u64 {
    usage.input_tokens + usage.output_tokens + usage.cache_read_tokens + usage.cache_creation_tokens
}

fn task_cost(task: &Task, records: &Records, by_id: &BTreeMap<&str, &Task>) -> TaskCost {
    let id = task.id.as_str();
    let (attempts, judging): (Vec<&Attempt>, Vec<&Attempt>) = records
        .attempts
        .iter()
        .filter(|a| a.task == id)
        .partition(|a| a.is_work());
    let usage_of = |attempts: &[&Attempt]| {
        attempts.iter().fold(Usage::default(), |mut sum, a| {
            sum.add(&a.usage);
            sum
        })
    };
    let review = records.reviews.get(id);
    let rounds_by = |lead: bool| {
        review.map_or(0, |r| {
            r.rounds
                .iter()
                .filter(|round| (round.by == LEAD) == lead)
                .count() as u32
        })
    };
    let questions: Vec<&Question> = records
        .questions
        .iter()
        .filter(|q| q.task.as_deref() == Some(id))
        .collect();
    let waited_for_lead_secs = questions
        .iter()
        .filter_map(|q| {
            match &q.state {
                QuestionState::Answered { at, .. } | QuestionState::Closed { at, .. } => Some(*at),
                QuestionState::Open => None,
            }
            .map(|settled| {
                settled
                    .0
                    .signed_duration_since(q.asked_at.0)
                    .num_milliseconds() as f64
                    / 1000.0
            })
        })
        .fold(0.0, |sum, secs| sum + secs);
    let entry = records.queue.iter().find(|e| e.task == id);
    TaskCost {
        task: task.id.clone(),
        kind: task.kind,
        status: task.status,
        plan: task.plan.clone(),
        attempts: attempts.len() as u32,
        judge_sessions: judging.len() as u32,
        lead_rounds: rounds_by(true),
        judge_rounds: rounds_by(false),
        judgements: review.map_or(0, |r| r.judgements.len() as u32),
        questions: questions.len() as u32,
        messages: records
            .messages
            .iter()
            .filter(|m| m.task.as_deref() == Some(id))
            .count() as u32,
        queue_returns: entry.map_or(0, |e| e.returns),
        check_failures: review.map_or(0, |r| r.checks.iter().filter(|c| !c.passed).count() as u32),
        landed: entry.is_some_and(|e| e.state == QueueState::Landed),
        waited_for_dependencies_secs: waited_for_dependencies(task, &attempts, by_id),
        waited_for_lead_secs,
        usage: usage_of(&attempts),
        judging_usage: usage_of(&judging),
    }
}

/// From when `task` could start (added, its dependencies done) to its first attempt.
fn waited_for_dependencies(
    task: &Task,
    attempts: &[&Attempt],
    by_id: &BTreeMap<&str, &Task>,
) -> Option<f64> {
    let first = attempts.iter().map(|a| a.started_at).min()?;
    let ready = task
        .dependencies
        .iter()
        .filter_map(|d| by_id.get(d.as_str()).and_then(|t| t.completed_at))
        .chain(task.created_at)
        .max()?;
    let waited = first.0.signed_duration_since(ready.0).num_milliseconds();
    Some(waited.max(0) as f64 / 1000.0)
}
