//! `baton`: the command line for leaders and workers. A thin shell over `baton-api`: it parses
//! words into an operation's request, runs it, and prints the operation's result for people
//! or, with `--json`, exactly as the MCP tool and the desktop app get it. No coordination logic
//! lives here.
//!
//! Modules, a tree with no circle: `args` (the clap tree of the leader and worker commands,
//! taking each other group's arguments from its module), `render` (their text), one folder or
//! file per other command group (`live/` for signals, runs, watching and the worker loop;
//! `agents/` for orchestration; `browser.rs`; `follow.rs`; `prompts.rs`), each with its own
//! arguments, handlers and text; `context` (the user's context for an operation), `values`
//! (argument parsers) and `output` (printing results and errors) serve them all.

mod agents;
mod args;
mod browser;
mod claude;
mod context;
mod files;
mod follow;
mod live;
mod output;
mod prompts;
mod render;
mod store;
mod values;

use std::process::ExitCode;

use baton_api::{Choice, Error, OpenProject, Operation, exit};
use baton_api::{tasks, team, worktrees};
use baton_core::{ForeignFile, StoreError};
use baton_folder::FolderStore;
use clap::Parser;

use args::{Cli, Command, LeaderCommand, PromptCommand, SetupCommand, WorkerCommand};
use context::as_user;
use output::emit;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let json = cli.json;
    match run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            output::report_error(&err, json);
            ExitCode::from(exit::for_error(err.kind()).code)
        }
    }
}

fn run(cli: Cli) -> Result<u8, Error> {
    let cwd = std::env::current_dir().map_err(|e| StoreError::io(".", e))?;
    let json = cli.json;
    let mode = cli.watch_mode;
    let choice = Choice {
        dir: cli.dir.as_deref(),
        store: cli.store.as_deref(),
        project: cli.project.as_deref(),
        password: None,
    };
    let open = || OpenProject::open(&choice, &cwd, cli.lease);
    // The folder a new project or pointer goes in: --dir (from the working folder), or here.
    let named_dir = || {
        cli.dir
            .as_deref()
            .map_or_else(|| cwd.clone(), |d| cwd.join(d))
    };
    let keep = ForeignFile::Keep;

    match cli.command {
        Command::Leader(LeaderCommand::Init { goal, approach }) => {
            let dir = named_dir();
            if let Some(url) = &cli.store {
                return store::init(&dir, url, cli.project.as_deref(), &goal, approach, json);
            }
            let project = FolderStore::init(&dir, &goal, approach.as_deref())?;
            let root = project.layout().root().display().to_string();
            emit(
                json,
                &serde_json::json!({"path": root, "goal": goal.trim()}),
                || render::initialised(&root, &goal),
            );
            Ok(0)
        }
        Command::Leader(LeaderCommand::AddTask(add)) => as_user(&open()?, mode, keep, |cx| {
            let out = tasks::AddTask {
                id: add.id,
                description: add.description,
                priority: add.priority,
                depends: add.depends,
                files: add.files,
                hints: add.hints.join("\n"),
            }
            .run(cx)?;
            emit(json, &out, || render::added(&out.task));
            Ok(0)
        }),
        Command::Leader(LeaderCommand::Edit(edit)) => as_user(&open()?, mode, keep, |cx| {
            let out = tasks::EditTask {
                task: edit.task,
                description: edit.description,
                priority: edit.priority,
                depends: if edit.no_depends {
                    Some(Vec::new())
                } else {
                    edit.depends
                },
                files: edit.files,
                hints: edit.hints,
            }
            .run(cx)?;
            emit(json, &out, || {
                format!(
                    "Edited {}: {}",
                    out.task.id,
                    render::clean(&out.task.description)
                )
            });
            Ok(0)
        }),
        Command::Leader(LeaderCommand::Status { watch: true }) => {
            follow::watch_status(&open()?, mode, json)?;
            Ok(0)
        }
        Command::Leader(LeaderCommand::Status { watch: false }) => {
            as_user(&open()?, mode, keep, |cx| {
                let report = tasks::Status {}.run(cx)?;
                emit(json, &report, || render::status(&report));
                Ok(0)
            })
        }
        Command::Leader(LeaderCommand::Aggregate) => as_user(&open()?, mode, keep, |cx| {
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
        Command::Leader(LeaderCommand::Cancel { task, reason }) => {
            as_user(&open()?, mode, keep, |cx| {
                let out = tasks::Cancel { task, reason }.run(cx)?;
                emit(json, &out, || {
                    format!(
                        "Cancelled {}; `baton leader reset {}` makes it available again",
                        out.task.id, out.task.id
                    )
                });
                Ok(0)
            })
        }
        Command::Leader(LeaderCommand::Move {
            task,
            to,
            text,
            dry_run,
        }) => as_user(&open()?, mode, keep, |cx| {
            let out = tasks::MoveTask {
                task,
                to,
                text,
                dry_run,
            }
            .run(cx)?;
            emit(json, &out, || render::moved(&out, to));
            Ok(0)
        }),
        Command::Leader(LeaderCommand::Reset { task, force }) => {
            as_user(&open()?, mode, keep, |cx| {
                let out = tasks::Reset { task, force }.run(cx)?;
                emit(json, &out, || {
                    format!("Reset {}: available again", out.task.id)
                });
                Ok(0)
            })
        }
        Command::Leader(LeaderCommand::Agents) => as_user(&open()?, mode, keep, |cx| {
            let out = team::AgentsOverview {}.run(cx)?;
            emit(json, &out, || render::team(&out));
            Ok(0)
        }),
        Command::Leader(LeaderCommand::Merge { tasks, all }) => {
            as_user(&open()?, mode, keep, |cx| {
                let report = worktrees::Merge { tasks, all }.run(cx)?;
                emit(json, &report, || render::merged(&report));
                Ok(match &report.conflict {
                    Some(conflict) => {
                        if !json {
                            eprintln!("baton: {}", conflict.message);
                        }
                        exit::MERGE_CONFLICT.code
                    }
                    None => 0,
                })
            })
        }
        Command::Leader(LeaderCommand::Doctor { fix }) => as_user(&open()?, mode, keep, |cx| {
            let report = tasks::Doctor { fix }.run(cx)?;
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
        Command::Worker(WorkerCommand::List { all }) => as_user(&open()?, mode, keep, |cx| {
            let out = tasks::ListTasks { all }.run(cx)?;
            emit(json, &out, || render::task_list(&out.tasks, all));
            Ok(0)
        }),
        Command::Worker(WorkerCommand::Claim {
            agent,
            task,
            ignore_reservations,
            wait,
            timeout,
            worktree,
        }) => {
            let project = open()?;
            let outcome = if wait {
                let claimed = live::claim_wait(&project, &agent, timeout, mode)?;
                match worktree {
                    true => as_user(&project, mode, keep, |cx| claimed.in_worktree(cx, &agent))?,
                    false => claimed,
                }
            } else {
                let request = tasks::Claim {
                    agent: agent.clone(),
                    task,
                    ignore_reservations,
                    worktree,
                };
                as_user(&project, mode, keep, |cx| request.run(cx))?
            };
            let Some(task) = &outcome.task else {
                let reason = outcome.reason.clone().unwrap_or_default();
                if json {
                    emit(json, &outcome, String::new);
                } else {
                    eprintln!("baton: nothing to claim: {reason}");
                }
                return Ok(if wait {
                    exit::TIMED_OUT.code
                } else {
                    exit::NOTHING_TO_CLAIM.code
                });
            };
            emit(json, &outcome, || {
                render::claimed(
                    task,
                    outcome.reclaimed_from.as_deref(),
                    outcome.worktree.as_ref(),
                    &agent,
                    project.lease(),
                )
            });
            Ok(0)
        }
        Command::Worker(WorkerCommand::Loop(args)) => live::worker_loop(&open()?, args, mode, json),
        Command::Worker(WorkerCommand::Start { agent, task }) => {
            as_user(&open()?, mode, keep, |cx| {
                let out = tasks::Start {
                    agent: agent.clone(),
                    task,
                }
                .run(cx)?;
                emit(json, &out, || {
                    format!(
                        "Started {}. When done: baton worker complete {agent} {} \"SUMMARY\" --modified FILE…",
                        out.task.id, out.task.id
                    )
                });
                Ok(0)
            })
        }
        Command::Worker(WorkerCommand::Complete {
            agent,
            task,
            summary,
            modified,
            created,
        }) => as_user(&open()?, mode, keep, |cx| {
            let out = tasks::Complete {
                agent,
                task,
                summary,
                modified,
                created,
            }
            .run(cx)?;
            emit(json, &out, || {
                format!(
                    "Completed {}; report in results/{}.md",
                    out.task.id, out.task.id
                )
            });
            Ok(0)
        }),
        Command::Worker(WorkerCommand::Fail {
            agent,
            task,
            reason,
        }) => as_user(&open()?, mode, keep, |cx| {
            let out = tasks::Fail {
                agent,
                task,
                reason,
            }
            .run(cx)?;
            emit(json, &out, || {
                format!(
                    "Marked {} failed; the leader can `baton leader reset {}` to retry it",
                    out.task.id, out.task.id
                )
            });
            Ok(0)
        }),
        Command::Worker(WorkerCommand::Release { agent, task }) => {
            as_user(&open()?, mode, keep, |cx| {
                let out = tasks::Release { agent, task }.run(cx)?;
                emit(json, &out, || {
                    format!("Released {}; it is available again", out.task.id)
                });
                Ok(0)
            })
        }
        Command::Worker(WorkerCommand::Heartbeat { agent }) => {
            as_user(&open()?, mode, keep, |cx| {
                let out = tasks::Heartbeat { agent }.run(cx)?;
                emit(json, &out, || {
                    if let Some(note) = &out.note {
                        note.clone()
                    } else {
                        format!("Renewed {} lease on {}", out.lease, out.renewed.join(", "))
                    }
                });
                Ok(0)
            })
        }
        Command::Worker(WorkerCommand::Keepalive { agent, while_pid }) => {
            let project = open()?;
            let stop = std::sync::atomic::AtomicBool::new(false);
            baton_live::keepalive::keep_alive(
                &*project.tasks,
                project.local(),
                &agent,
                while_pid,
                &stop,
            )?;
            Ok(0)
        }
        Command::Setup(SetupCommand::Claude(args)) => claude::setup::command(&open()?, args, json),
        Command::ClaudeHook { event } => Ok(claude::hook::run(event, &choice, &cwd, cli.lease)),
        Command::Reserve(args) => files::reserve(&open()?, args, mode, json),
        Command::Unreserve { paths, agent } => files::unreserve(&open()?, agent, paths, mode, json),
        Command::Reservations => files::list(&open()?, mode, json),
        Command::CheckPaths(args) => files::check_paths(&open()?, args, mode, json),
        Command::Hooks(files::HooksCommand::Install) => files::install_hook(&open()?, json),
        Command::Discover { text, agent } => as_user(&open()?, mode, keep, |cx| {
            let out = tasks::Discover { agent, text }.run(cx)?;
            emit(json, &out, || format!("Added to {}", out.path));
            Ok(0)
        }),
        Command::Logs {
            agent,
            follow: true,
            lines,
        } => {
            if let Some(agent) = &agent {
                baton_core::names::validate_agent_id(agent)?;
            }
            follow::follow_logs(&open()?, agent.as_deref(), lines, mode, json)?;
            Ok(0)
        }
        Command::Logs {
            agent,
            follow: false,
            lines,
        } => as_user(&open()?, mode, keep, |cx| {
            let every_agent = agent.is_none();
            let out = tasks::Logs { agent, lines }.run(cx)?;
            emit(json, &out, || render::log_lines(&out.lines, every_agent));
            Ok(0)
        }),
        Command::Run(command) => live::run_command(&open()?, command, json),
        Command::Signal(command) => live::signal_command(&open()?, &cwd, command, mode, json),
        Command::Watch => Ok(live::watch(&open()?, mode, json)?),
        Command::Agents(command) => agents::agents(&open()?, command, json),
        Command::Invoke(command) => agents::invoke(&open()?, &cwd, command, json),
        Command::Handoff(command) => agents::handoff(&open()?, command, json),
        Command::Parallel(command) => agents::parallel(&open()?, &cwd, command, json),
        Command::Route { task } => agents::route(&open()?, &task, json),
        Command::Browser(command) => browser::browser(&open()?, &cwd, command, json),
        Command::Connect { url } => {
            store::connect(&named_dir(), &url, cli.project.as_deref(), cli.lease, json)
        }
        Command::Store(command) => store::command(&choice, &cwd, command, json),
        Command::Mcp {
            agent,
            quiet,
            proxy,
            child,
            no_browser,
            headed,
            http,
            token,
            allow_path,
            allow_unsafe_tools,
        } => {
            let options = baton_mcp::McpOptions {
                allow_unsafe_tools,
                allow_paths: allow_path.iter().map(|dir| cwd.join(dir)).collect(),
                agent,
                quiet,
                proxy,
                children: child,
                no_browser,
                headed,
                http,
                token,
            };
            baton_mcp::serve(open()?, options)?;
            Ok(0)
        }
        Command::Prompt(prompt) => {
            let (role, text) = match prompt {
                PromptCommand::Leader => ("leader", prompts::leader()),
                PromptCommand::Worker { agent } => {
                    baton_core::names::validate_agent_id(&agent)?;
                    ("worker", prompts::worker(&agent))
                }
            };
            emit(
                json,
                &serde_json::json!({"role": role, "text": text}),
                || text.clone(),
            );
            Ok(0)
        }
    }
}
