//! The one request to start a team (`TeamUp`): what `baton team up`, the MCP tool `team_up`
//! and the desktop's Team view send, its checks (what no team can be), and how a second
//! request differs from the running team's. What it does is [`crate::starting::start`]'s.

use baton_core::ErrorKind;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{Result, TeamError};

/// The most workers one team runs.
pub const MAX_WORKERS: usize = 256;

/// A team to run on this machine: how many workers, which agent, and its limits. A second
/// request while a team of the same profile runs changes its size.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TeamUp {
    /// How many workers (1 to 256).
    #[serde(default = "one")]
    #[schemars(range(min = 1, max = 256))]
    #[cfg_attr(
        feature = "cli",
        arg(short, long, default_value_t = 1, value_name = "N")
    )]
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub workers: usize,
    /// The agent profile each worker runs: claude, codex, gemini, exec, or one of
    /// .coordination/team/profiles.toml. Default: claude, or exec with `exec`.
    #[serde(default)]
    #[cfg_attr(
        feature = "cli",
        arg(
            short = 'a',
            long = "agent",
            visible_alias = "profile",
            value_name = "PROFILE"
        )
    )]
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub profile: Option<String>,
    /// Run this shell command for each task (the exec profile): the task in BATON_TASK_*
    /// variables and as JSON on stdin; exit 0 completes the task, anything else fails it.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "COMMAND"))]
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub exec: Option<String>,
    /// Keep waiting for new tasks when the queue is drained.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub stay: bool,
    /// Work each task in its own git worktree and branch (the default in a git repository;
    /// refused outside one).
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, conflicts_with = "no_worktree"))]
    pub worktree: bool,
    /// Work in the project folder, not in a worktree per task.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub no_worktree: bool,
    /// Run each attempt in a sandbox (bubblewrap), the default: it writes its worktree and its
    /// own branch only, sees no secrets in the home folder, reaches Baton only as itself, and
    /// leaves no process behind. This flag overrides a profile's `sandbox.enabled = false`.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, conflicts_with = "no_sandbox"))]
    pub sandbox: bool,
    /// Run the agents without a sandbox, with everything the user can reach (where bubblewrap
    /// or user namespaces are missing; `team status` shows which workers run without).
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long))]
    pub no_sandbox: bool,
    /// Worker names are this and a number (default: the profile's, such as cc for claude;
    /// with the host in front on a database project).
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "NAME"))]
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub prefix: Option<String>,
    /// Stop the whole team when its agents together have cost this much (US dollars).
    #[serde(default)]
    #[cfg_attr(
        feature = "cli",
        arg(long, value_name = "USD", allow_negative_numbers = true)
    )]
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub budget_usd: Option<f64>,
    /// Per task: stop the agent and fail the task at this cost (US dollars).
    #[serde(default)]
    #[cfg_attr(
        feature = "cli",
        arg(long, value_name = "USD", allow_negative_numbers = true)
    )]
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub max_cost_usd: Option<f64>,
    /// Per task: stop the agent and fail the task after this many model turns (at least 1).
    #[serde(default)]
    #[cfg_attr(
        feature = "cli",
        arg(long, value_name = "N", allow_negative_numbers = true,
            value_parser = clap::value_parser!(u64).range(1..=1_000_000))
    )]
    #[cfg_attr(feature = "ts", ts(optional = nullable, type = "number | null"))]
    pub max_turns: Option<u64>,
    /// Per attempt: stop the agent and fail the task after this many minutes (more than 0,
    /// at most a week).
    #[serde(default)]
    #[cfg_attr(
        feature = "cli",
        arg(long, value_name = "MINUTES", allow_negative_numbers = true)
    )]
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub max_minutes: Option<f64>,
    /// Failed attempts at one task before it is failed (a crashed agent is restarted): 1 to 20.
    #[serde(default)]
    #[cfg_attr(
        feature = "cli",
        arg(long, value_name = "N", allow_negative_numbers = true,
            value_parser = clap::value_parser!(u32).range(1..=20))
    )]
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub max_attempts: Option<u32>,
    /// How done tasks reach the lead's branch: review (the lead merges) or auto (the team's
    /// merge queue checks each on its branch merged with the lead's and lands it). Default:
    /// review.toml's `merge`, else review.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "MODE"))]
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub merge: Option<baton_core::review::MergeMode>,
    /// A goal for the team to plan itself: a planner agent reads the project, writes the
    /// master plan and adds the tasks (proposed, for the lead to approve) before any worker
    /// claims one, and plans again when its tasks fail. The team ends when the plan is carried
    /// out.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "TEXT"))]
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub goal: Option<String>,
    /// With --goal: how the plan is approved. review (the default): the lead's inbox gets
    /// the plan as one approval (`baton inbox answer Q approve`, or words for the planner to
    /// plan again with); auto: the workers start on it at once.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "MODE", requires = "goal"))]
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub plan: Option<PlanApproval>,
    /// With --goal: the planner's profile (default: the profile named planner in
    /// .coordination/team/profiles.toml, else the workers').
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "PROFILE", requires = "goal"))]
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub planner: Option<String>,
    /// With --goal: stop planning when the planner's sessions together have cost this much (US
    /// dollars); default: the team's --budget-usd.
    #[serde(default)]
    #[cfg_attr(
        feature = "cli",
        arg(
            long,
            value_name = "USD",
            requires = "goal",
            allow_negative_numbers = true
        )
    )]
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub planner_budget_usd: Option<f64>,
    /// With --goal: the planner answers the workers' questions about its plan's tasks (never
    /// an approval of a tool call: those stay the lead's); a question it leaves waits for the
    /// lead as any does.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, requires = "goal"))]
    pub planner_answers: bool,
    /// Judge each done task before the merge queue lands it (with --merge auto), and the goal
    /// once its plan has landed: the judge's profile, an agent (claude, codex, …) that reads
    /// the work read-only and ends with its verdict, or a command (kind = "exec") given the
    /// task and its diff that exits 0 to approve and anything else to send the task back with
    /// what it printed. Default: the profile named judge in .coordination/team/profiles.toml,
    /// when there is one.
    #[serde(default)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "PROFILE"))]
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub judge: Option<String>,
}

/// How a planner's plan is approved before the workers start on it.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PlanApproval {
    /// The lead approves it, as one approval in the inbox.
    #[default]
    Review,
    /// Approved as soon as the planner has written it.
    Auto,
}

fn one() -> usize {
    1
}

impl TeamUp {
    /// The profile asked for: the one named, else exec with a command, else claude.
    pub fn profile_name(&self) -> &str {
        match (&self.profile, &self.exec) {
            (Some(name), _) => name,
            (None, Some(_)) => "exec",
            (None, None) => "claude",
        }
    }

    /// Refuses what no team can be, before anything else happens.
    pub fn check(&self) -> Result<()> {
        if self.workers == 0 || self.workers > MAX_WORKERS {
            return Err(TeamError::new(
                ErrorKind::InvalidArguments,
                format!(
                    "--workers must be 1 to {MAX_WORKERS} (it is {})",
                    self.workers
                ),
            ));
        }
        let positive = |flag: &str, value: Option<f64>, most: f64| -> Result<()> {
            match value {
                Some(v) if !(v > 0.0 && v <= most) => Err(TeamError::new(
                    ErrorKind::InvalidArguments,
                    format!("{flag} must be more than 0 and at most {most} (it is {v})"),
                )),
                _ => Ok(()),
            }
        };
        positive("--max-minutes", self.max_minutes, 7.0 * 24.0 * 60.0)?;
        positive("--max-cost-usd", self.max_cost_usd, 1_000_000.0)?;
        positive("--budget-usd", self.budget_usd, 1_000_000.0)?;
        positive("--planner-budget-usd", self.planner_budget_usd, 1_000_000.0)?;
        positive("--max-turns", self.max_turns.map(|t| t as f64), 1_000_000.0)?;
        if let Some(n) = self.max_attempts
            && !(1..=20).contains(&n)
        {
            return Err(TeamError::new(
                ErrorKind::InvalidArguments,
                format!("--max-attempts must be 1 to 20 (it is {n})"),
            ));
        }
        if let Some(goal) = &self.goal {
            baton_core::notes::check_goal(goal)
                .map_err(|e| TeamError::new(ErrorKind::InvalidArguments, format!("--goal: {e}")))?;
        } else if self.plan.is_some()
            || self.planner.is_some()
            || self.planner_budget_usd.is_some()
            || self.planner_answers
        {
            return Err(TeamError::new(
                ErrorKind::InvalidArguments,
                "--plan, --planner, --planner-budget-usd and --planner-answers go with --goal",
            ));
        }
        if let Some(prefix) = &self.prefix {
            // The last worker's name is the longest: if it is a valid agent name, all are.
            let last = format!("{prefix}{}", self.workers);
            baton_core::names::validate_agent_id(&last).map_err(|e| {
                TeamError::new(
                    ErrorKind::InvalidArguments,
                    format!("--prefix {prefix:?} does not make valid worker names ({last}: {e})"),
                )
            })?;
        }
        Ok(())
    }
}

impl TeamUp {
    /// The options this request sets to something else than the running team's `before`
    /// (those it leaves out keep the running team's): their flags.
    pub(crate) fn differences(&self, before: &TeamUp) -> Vec<&'static str> {
        fn set_and_differs<T: PartialEq>(asked: &Option<T>, had: &Option<T>) -> bool {
            asked.is_some() && asked != had
        }
        let mut differ = Vec::new();
        if set_and_differs(&self.exec, &before.exec) {
            differ.push("--exec");
        }
        if set_and_differs(&self.planner_budget_usd, &before.planner_budget_usd) {
            differ.push("--planner-budget-usd");
        }
        if set_and_differs(&self.goal, &before.goal) {
            differ.push("--goal");
        }
        if set_and_differs(&self.judge, &before.judge) {
            differ.push("--judge");
        }
        if set_and_differs(&self.merge, &before.merge) {
            differ.push("--merge");
        }
        if set_and_differs(&self.prefix, &before.prefix) {
            differ.push("--prefix");
        }
        if set_and_differs(&self.budget_usd, &before.budget_usd) {
            differ.push("--budget-usd");
        }
        if set_and_differs(&self.max_cost_usd, &before.max_cost_usd) {
            differ.push("--max-cost-usd");
        }
        if set_and_differs(&self.max_turns, &before.max_turns) {
            differ.push("--max-turns");
        }
        if set_and_differs(&self.max_minutes, &before.max_minutes) {
            differ.push("--max-minutes");
        }
        if set_and_differs(&self.max_attempts, &before.max_attempts) {
            differ.push("--max-attempts");
        }
        if (self.worktree && before.no_worktree) || (self.no_worktree && !before.no_worktree) {
            differ.push("--worktree/--no-worktree");
        }
        if self.stay && !before.stay {
            differ.push("--stay");
        }
        if (self.sandbox && !before.sandbox) || (self.no_sandbox && !before.no_sandbox) {
            differ.push("--sandbox/--no-sandbox");
        }
        differ
    }
}
