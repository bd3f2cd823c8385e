//! # baton-team
//!
//! Baton runs the team: a supervisor per machine and project starts an agent on each task a
//! worker claims (Claude Code, Codex, Gemini CLI, OpenCode, or any command), keeps its lease while its
//! process lives, stores its transcript and what it cost with the task, restarts it after a
//! crash in the same worktree, stops it at its budget, and, started again after it was killed,
//! takes up every task its workers held. Claims, leases, reservations and worktrees are the
//! ones every worker uses (`baton-live`, `baton-git`); this crate adds the agents' processes.
//!
//! Modules, by job:
//!
//! | job | modules |
//! | --- | --- |
//! | the agent CLIs | `agent_cli` (one adapter per CLI: command line, output, state folders, sessions; Claude Code's project setup beside its adapter), `agent_home` (a CLI's state, the task's own), `profile` and `sandbox_settings` (what each profile runs, and in what bounds) |
//! | starting an attempt | `launch` (its environment and its adapter's command line), `prompt` (what the agent is told), `attempt_sandbox` (its sandbox, in `baton-sandbox`'s terms: the task's binds, its door, its network), the door itself is `baton-door` |
//! | running it | `process` (a process group, its output as lines), `exec` and `report` (a command's environment, and its exit as its task's report) |
//! | supervision | `supervision`: `supervisor` (the workers, the lock, the requests), `worker` (one worker's tasks: the engine `team up` and `baton worker loop` both run), `attempt` (one agent process at one task, to its end), `crew` (what the workers share), `store_outage` (a worker's changes riding out a store that went away) |
//! | landing | `landing`: `merge_queue`, `merger`, `check` (the project's check, sandboxed) |
//! | starting a team | `starting`: `request`, `start` (the team-up request: checked, resized, or a supervisor started) |
//! | planning | `planning`: the goal's plan task, the planner's `seat` and its `planner` thread, the plan's `approval`; `plan_prompt` (what the planner is told) |
//! | its outcome | `outcome`: `board_summary` (the board at a glance), `verdict` |
//!
//! The sandbox itself (bubblewrap, the first command inside, cgroups, the network proxy) is
//! `baton-sandbox`, which knows nothing of agents.

mod agent_cli;
mod agent_home;
mod attempt_sandbox;
mod error;
mod exec;
mod judge_prompt;
mod landing;
mod launch;
mod outcome;
mod plan_prompt;
mod planning;
mod process;
mod profile;
mod prompt;
mod report;
mod roles;
mod sandbox_settings;
mod starting;
mod supervision;

use std::time::Duration;

use baton_core::AttemptEnd;

pub use agent_cli::claude_project as claude;
pub use agent_cli::{AgentCli, AgentKind, project_settings as agent_project_settings};
pub use error::{Result, TeamError};
pub use exec::TaskEnv;
pub use landing::check::run_check_command;
pub use landing::merge_queue::{QueueEntry, QueueState, read_queue};
pub use launch::{Setting, baton_program};
pub use outcome::board_summary::BoardSummary;
pub use outcome::verdict::{TaskWhy, Verdict};
pub use planning::PlanApproval;
pub use planning::planner::PlanStep;
pub use profile::{Profile, load_profiles, profiles_file};
pub use starting::start::{TeamStarted, TeamUp, resize_if_running, start_detached};
pub use supervision::attempt::STOP_GRACE;
pub use supervision::crew::{Crew, TeamStores};
pub use supervision::supervisor::{
    Controller, Controls, Request, SupervisorInfo, TeamPlan, TeamReport, host_name, run_team,
    running_supervisor, send_request, wait_stopped,
};
pub use supervision::worker::{WorkerEnd, WorkerReport, run_worker};

/// What a team is doing, for progress output (one JSON object per event with `--json`).
#[derive(Debug, Clone, serde::Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Progress {
    Waiting {
        worker: String,
        /// How the wait learns of a ready task ("file-system events", "polling every 100 ms").
        how: String,
    },
    Resumed {
        worker: String,
        task: String,
    },
    Started {
        worker: String,
        task: String,
        attempt: u32,
        pid: u32,
    },
    Ended {
        worker: String,
        task: String,
        attempt: u32,
        end: AttemptEnd,
        reason: Option<String>,
    },
    Restarting {
        worker: String,
        task: String,
        #[serde(with = "seconds")]
        after: Duration,
    },
    /// The task is worked in its own worktree.
    InWorktree {
        worker: String,
        task: String,
        path: std::path::PathBuf,
        branch: String,
        /// Left by an earlier attempt, and taken up as it was.
        reused: bool,
    },
    /// The worker failed the task: its attempts ran out or its budget was reached.
    GaveUp {
        worker: String,
        task: String,
        reason: String,
    },
    /// The worker took the task over from `from`, whose lease had expired.
    TookOver {
        worker: String,
        task: String,
        from: String,
    },
    /// The worker's agents could not start `attempts` times in a row: it stops (its circuit
    /// breaker), having handed their tasks back.
    Tripped {
        worker: String,
        attempts: u32,
        cause: String,
    },
    /// The merge queue's word on a task: landed in the lead's branch, or not (sent back to its
    /// worker, or left for the lead), and why.
    Merge {
        task: String,
        /// The worker that did it (and gets it back).
        worker: String,
        state: crate::landing::merge_queue::QueueState,
        note: String,
    },
    /// The task was handed back to the queue untouched (the worker was stopped).
    Released {
        worker: String,
        task: String,
    },
    Stopped {
        worker: String,
    },
    /// The lead paused the worker (or the planner), or resumed it: paused, it starts nothing
    /// new.
    Paused {
        worker: String,
        paused: bool,
    },
    /// The team's judge on a done task, before the merge queue lands it: approved, or changes
    /// asked for (the task goes back to its worker with them).
    Judged {
        task: String,
        judge: String,
        approved: bool,
        comment: String,
    },
    /// A step of the team's plan (`team up --goal`): proposed, approved, sent back to the
    /// planner, carried out.
    Plan {
        planner: String,
        plan: String,
        step: crate::planning::planner::PlanStep,
        detail: String,
    },
    /// Something went wrong that did not stop the worker.
    Trouble {
        worker: String,
        message: String,
    },
}

mod seconds {
    pub fn serialize<S: serde::Serializer>(
        d: &std::time::Duration,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }
}
