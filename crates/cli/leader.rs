//! `baton leader …`: the lead's commands. Each is a `baton-api` operation whose arguments are
//! its request type (flags, defaults and help declared once, there), a renderer for people,
//! and an exit rule; `init` (which opens no project) is `main`'s, `status --watch` `follow`'s.

use baton_api::{Error, OpenProject, Operation, agents, exit, tasks, worktrees};
use baton_core::ForeignFile;
use baton_live::WatchMode;
use clap::{Args, Subcommand};

use crate::context::{as_user, operate};
use crate::output::emit;
use crate::{follow, render};

#[derive(Debug, Subcommand)]
pub enum LeaderCommand {
    /// Create .coordination/ in the current folder (or --dir) with a master plan for GOAL; with
    /// --store URL, create the project in that PostgreSQL database instead (named by
    /// --project, default the folder's name) and leave a pointer to it in .coordination/.
    Init {
        /// The goal of the whole effort, one line.
        goal: String,
        /// How to get there, for master-plan.md.
        #[arg(long)]
        approach: Option<String>,
    },
    /// Add a task to the queue.
    AddTask(AddArgs),
    /// Change a task's description, priority, dependencies, files or hints.
    Edit(EditArgs),
    /// Rewrite the master plan (.coordination/master-plan.md) from TEXT or, with --stdin, from
    /// standard input: a team's planner keeps its plan there between sessions.
    #[command(after_help = "Example: baton leader write-plan --stdin < plan.md")]
    WritePlan(WritePlanArgs),
    /// Show every task with counts by status.
    Status {
        /// Redraw whenever tasks.json changes (Ctrl-C to stop).
        #[arg(long)]
        watch: bool,
        /// With the landed work archived off the board (`leader archive`).
        #[arg(long, conflicts_with = "watch")]
        all: bool,
    },
    /// Write summary.md from every task's result.
    Aggregate,
    /// Cancel a task that is not finished (available, claimed or in progress): its holder
    /// loses it, and tasks that wait on it cannot start until it is reset.
    Cancel(tasks::Cancel),
    /// Bring a task to another status as on the desktop board: claims as the leader, and
    /// starts, completes, fails or releases in its holder's name; resets or cancels as the
    /// leader. Says which, or why the lifecycle refuses it.
    Move(tasks::MoveTask),
    /// Put a failed, cancelled or stale task back to available.
    Reset(tasks::Reset),
    /// Approve proposed tasks (a plan's, added with `add-task --proposed`): available to claim
    /// from now on. All or none.
    Approve(tasks::Approve),
    /// Who is doing what: one row per agent (working, lease running out, stale, waiting for
    /// work, idle, gone), the task it holds with the lease left, when it was last heard from,
    /// its last log line, and how many tasks it finished and failed.
    Agents,
    /// Merge done tasks' branches (worked with --worktree) into the branch your checkout is on,
    /// each with a merge commit. A conflicting merge is aborted, leaving your checkout as it
    /// was, and its files are named (exit code 8); the tasks after it are not tried.
    #[command(after_help = "\
Only a done task's branch (baton/TASK-ID) is merged, and only while your checkout has no
uncommitted changes to tracked files (.coordination/ aside). A branch merged already is
reported as such. Nothing is pushed; worktrees stay until `leader doctor --fix` removes them.")]
    Merge(worktrees::Merge),
    /// Find stale leases, tasks that can never finish, a stalled queue, crash debris and the
    /// worktrees of finished tasks.
    Doctor(tasks::Doctor),
    /// Move landed work off the live board to .coordination/archive/ (one file per month):
    /// done tasks whose branch is in your checkout (or that had none) and cancelled ones, that
    /// no live task depends on. Baton does this by itself for what has been quiet an hour.
    #[command(after_help = "\
`leader status --all` (and task_status all=true) lists the archived tasks with the board's; a
task you reset or send back, or that a new task depends on, returns to the board. Results and
transcripts stay where they are. A project kept in PostgreSQL keeps its rows: its cost does not
grow with the board.

Example: baton leader archive --older-than 7d --dry-run")]
    Archive(tasks::Archive),
}

/// `leader add-task`: the `task_add` request, its hints as lines.
#[derive(Debug, Args)]
pub struct AddArgs {
    #[command(flatten)]
    pub request: tasks::AddTask,
    /// Hints for the worker (repeat for several lines).
    #[arg(long = "hints", value_name = "TEXT")]
    pub hints: Vec<String>,
}

/// `leader write-plan`: the `plan_write` request, its text given or read.
#[derive(Debug, Args)]
pub struct WritePlanArgs {
    /// The whole master plan (Markdown).
    #[arg(required_unless_present = "stdin", conflicts_with = "stdin")]
    pub text: Option<String>,
    /// Read the master plan from standard input.
    #[arg(long)]
    pub stdin: bool,
}

/// `leader edit`: the `task_edit` request, and removing every dependency.
#[derive(Debug, Args)]
pub struct EditArgs {
    #[command(flatten)]
    pub request: tasks::EditTask,
    /// Remove all dependencies.
    #[arg(long, conflicts_with = "depends")]
    pub no_depends: bool,
}

/// Runs a lead's command on `project` (not `init`: see `main`); the exit code.
pub fn run(
    project: &OpenProject,
    command: LeaderCommand,
    mode: WatchMode,
    json: bool,
) -> Result<u8, Error> {
    let keep = ForeignFile::Keep;
    match command {
        LeaderCommand::Init { .. } => Err(Error::invalid_arguments(
            "`leader init` creates a project; it is not run on an opened one",
        )),
        LeaderCommand::AddTask(AddArgs { mut request, hints }) => {
            request.hints = hints.join("\n");
            operate(project, mode, json, request, |out| render::added(&out.task))
        }
        LeaderCommand::Edit(EditArgs {
            mut request,
            no_depends,
        }) => {
            if no_depends {
                request.depends = Some(Vec::new());
            }
            operate(project, mode, json, request, |out| {
                format!(
                    "Edited {}: {}",
                    out.task.id,
                    render::clean(&out.task.description)
                )
            })
        }
        LeaderCommand::WritePlan(WritePlanArgs { text, stdin }) => {
            let text = match (text, stdin) {
                (Some(text), _) => text,
                (None, _) => {
                    let mut text = String::new();
                    std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
                        .map_err(|e| Error::input("stdin", format!("cannot read the plan: {e}")))?;
                    text
                }
            };
            let request = baton_api::planning::PlanWrite { text };
            operate(project, mode, json, request, |out| {
                format!("Wrote the master plan ({} bytes)", out.bytes)
            })
        }
        LeaderCommand::Status { watch: true, .. } => {
            follow::watch_status(project, mode, json)?;
            Ok(0)
        }
        LeaderCommand::Status { watch: false, all } => as_user(project, mode, keep, |cx| {
            let report = tasks::Status { all }.run(cx)?;
            emit(json, &report, || {
                // This machine's merge queue, when a team ran one: each task's place.
                let queue = baton_team::read_queue(project.local());
                let mut text = render::status(&report);
                for line in crate::team::queue_lines(&queue) {
                    text.push('\n');
                    text.push_str(&line);
                }
                text
            });
            Ok(0)
        }),
        LeaderCommand::Aggregate => as_user(project, mode, keep, |cx| {
            let agg = tasks::AggregateResults {}.run(cx)?;
            emit(json, &agg, || {
                let cancelled = match agg.cancelled {
                    0 => String::new(),
                    n => format!(", {n} cancelled"),
                };
                format!(
                    "Wrote {}: {} done, {} failed{cancelled}, {} unfinished of {} tasks",
                    agg.path, agg.done, agg.failed, agg.unfinished, agg.total
                )
            });
            Ok(0)
        }),
        LeaderCommand::Cancel(op) => operate(project, mode, json, op, |out| {
            format!(
                "Cancelled {}; `baton leader reset {}` makes it available again",
                out.task.id, out.task.id
            )
        }),
        LeaderCommand::Move(op) => {
            let to = op.to;
            operate(project, mode, json, op, |out| render::moved(out, to))
        }
        LeaderCommand::Reset(op) => operate(project, mode, json, op, |out| {
            changed(
                &out.tasks,
                "Nothing to reset: no task is failed",
                "Reset {}: available again",
            )
        }),
        LeaderCommand::Approve(op) => operate(project, mode, json, op, |out| {
            changed(
                &out.tasks,
                "Nothing to approve: no task is proposed",
                "Approved {}: available to claim",
            )
        }),
        LeaderCommand::Agents => {
            operate(project, mode, json, agents::AgentsOverview {}, render::team)
        }
        LeaderCommand::Merge(op) => as_user(project, mode, keep, |cx| {
            let report = op.run(cx)?;
            emit(json, &report, || render::merged(&report));
            Ok(match (&report.conflict, &report.check_failed) {
                (Some(conflict), _) => {
                    if !json {
                        eprintln!("baton: {}", conflict.message);
                    }
                    exit::MERGE_CONFLICT.code
                }
                (None, Some(_)) => exit::CHECK_FAILED.code,
                (None, None) => 0,
            })
        }),
        LeaderCommand::Archive(op) => operate(project, mode, json, op, render::archived),
        LeaderCommand::Doctor(op) => as_user(project, mode, keep, |cx| {
            let fix = op.fix;
            let report = op.run(cx)?;
            emit(json, &report, || render::doctor(&report, fix));
            let remaining = report
                .findings
                .iter()
                .filter(|f| !(fix && f.fixable))
                .count();
            Ok(if remaining > 0 {
                exit::DOCTOR_FINDINGS.code
            } else {
                0
            })
        }),
    }
}

/// What the lead's change of several tasks did: `none` when there were none, else `done` with
/// the ids in the place of its `{}`.
fn changed(tasks: &[baton_core::Task], none: &str, done: &str) -> String {
    match tasks.is_empty() {
        true => none.to_string(),
        false => {
            let ids: Vec<&str> = tasks.iter().map(|t| t.id.as_str()).collect();
            done.replacen("{}", &ids.join(", "), 1)
        }
    }
}
