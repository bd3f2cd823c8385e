//! `baton`: the command line for leaders and workers. A thin shell over `baton-store` and
//! `baton-live`: it parses arguments, calls one library operation, and prints the outcome for
//! people or, with `--json`, for scripts. No coordination logic lives here.

mod agents;
mod agents_args;
mod args;
mod browser;
mod error;
mod follow;
mod live;
mod live_args;
mod prompts;
mod render;
mod render_agents;
mod render_live;

use std::io::Write;
use std::process::ExitCode;

use baton_store::lifecycle::{Completion, NewTask, TaskEdit};
use baton_store::{Project, StoreError};
use clap::Parser;
use serde::Serialize;

use args::{Cli, Command, LeaderCommand, PromptCommand, WorkerCommand};
use error::CliError;

const EXIT_ERROR: u8 = 1;
const EXIT_NOTHING_TO_CLAIM: u8 = 3;
const EXIT_DOCTOR_FINDINGS: u8 = 4;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let json = cli.json;
    match run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            report_error(&err, json);
            ExitCode::from(EXIT_ERROR)
        }
    }
}

fn report_error(err: &CliError, json: bool) {
    let mut stderr = std::io::stderr().lock();
    if json {
        let body = serde_json::json!({"error": {"kind": err.kind(), "message": err.to_string()}});
        let _ = writeln!(stderr, "{body}");
    } else {
        let _ = writeln!(stderr, "baton: {err}");
    }
}

/// Prints `value` as JSON when asked, otherwise the human text `human` produces.
fn emit<T: Serialize>(json: bool, value: &T, human: impl FnOnce() -> String) {
    let text = if json {
        serde_json::to_string_pretty(value).expect("serialisable output")
    } else {
        human()
    };
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{}", text.trim_end_matches('\n'));
}

fn run(cli: Cli) -> Result<u8, CliError> {
    let cwd = std::env::current_dir().map_err(|e| StoreError::io(".", e))?;
    let json = cli.json;
    let mode = cli.watch_mode;
    let open = || Project::locate(cli.dir.as_deref(), &cwd).map(|p| p.with_lease(cli.lease));

    match cli.command {
        Command::Leader(LeaderCommand::Init { goal, approach }) => {
            let dir = match &cli.dir {
                Some(dir) if dir.is_absolute() => dir.clone(),
                Some(dir) => cwd.join(dir),
                None => cwd.clone(),
            };
            let project = Project::init(&dir, &goal, approach.as_deref())?;
            let root = project.layout().root().display().to_string();
            emit(
                json,
                &serde_json::json!({"path": root, "goal": goal.trim()}),
                || render::initialised(&root, &goal),
            );
        }
        Command::Leader(LeaderCommand::AddTask(add)) => {
            let task = open()?.add_task(NewTask {
                id: add.id,
                description: add.description,
                priority: add.priority,
                dependencies: add.depends,
                files: add.files,
                hints: add.hints.join("\n"),
            })?;
            emit(json, &task, || render::added(&task));
        }
        Command::Leader(LeaderCommand::Edit(edit)) => {
            let dependencies = if edit.no_depends {
                Some(Vec::new())
            } else {
                edit.depends
            };
            let task = open()?.edit_task(
                &edit.task,
                TaskEdit {
                    description: edit.description,
                    priority: edit.priority,
                    dependencies,
                    files: edit.files,
                    hints: edit.hints,
                },
            )?;
            emit(json, &task, || {
                format!("Edited {}: {}", task.id, render::clean(&task.description))
            });
        }
        Command::Leader(LeaderCommand::Status { watch }) => {
            let project = open()?;
            if watch {
                follow::watch_status(&project, mode, json)?;
            } else {
                let report = project.status()?;
                emit(json, &report, || render::status(&report));
            }
        }
        Command::Leader(LeaderCommand::Aggregate) => {
            let agg = open()?.aggregate()?;
            emit(json, &agg, || {
                format!(
                    "Wrote {}: {} done, {} failed, {} unfinished of {} tasks",
                    agg.path.display(),
                    agg.done,
                    agg.failed,
                    agg.unfinished,
                    agg.total
                )
            });
        }
        Command::Leader(LeaderCommand::Reset { task, force }) => {
            let task = open()?.reset(&task, force)?;
            emit(json, &task, || {
                format!("Reset {}: available again", task.id)
            });
        }
        Command::Leader(LeaderCommand::Doctor { fix }) => {
            let report = open()?.doctor(fix)?;
            emit(json, &report, || render::doctor(&report, fix));
            let remaining = report
                .findings
                .iter()
                .filter(|f| !(fix && f.fixable))
                .count();
            if remaining > 0 {
                return Ok(EXIT_DOCTOR_FINDINGS);
            }
        }
        Command::Worker(WorkerCommand::List { all }) => {
            let project = open()?;
            let tasks = if all {
                project.status()?.tasks
            } else {
                project.ready_tasks()?
            };
            emit(json, &tasks, || render::task_list(&tasks, all));
        }
        Command::Worker(WorkerCommand::Claim {
            agent,
            wait: true,
            timeout,
        }) => return Ok(live::claim_wait(&open()?, &agent, timeout, mode, json)?),
        Command::Worker(WorkerCommand::Loop(args)) => {
            return Ok(live::worker_loop(&open()?, args, mode, json)?);
        }
        Command::Run(command) => return Ok(live::run_command(&open()?, command, json)?),
        Command::Signal(command) => {
            return Ok(live::signal_command(&open()?, &cwd, command, mode, json)?);
        }
        Command::Watch => return Ok(live::watch(&open()?, mode, json)?),
        Command::Agents(command) => return agents::agents(&open()?, command, json),
        Command::Invoke(command) => return agents::invoke(&open()?, &cwd, command, json),
        Command::Handoff(command) => return agents::handoff(&open()?, command, json),
        Command::Parallel(command) => return agents::parallel(&open()?, &cwd, command, json),
        Command::Route { task } => return agents::route(&open()?, &task, json),
        Command::Browser(command) => return browser::browser(&open()?, &cwd, command, json),
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
            baton_mcp::serve(open()?, options).map_err(|e| CliError::input("mcp", e))?;
        }
        Command::Worker(WorkerCommand::Claim { agent, .. }) => {
            let project = open()?;
            match project.claim(&agent)? {
                Some(claim) => emit(json, &claim, || {
                    render::claimed(&claim, &agent, project.lease())
                }),
                None => {
                    let report = project.status()?;
                    let why = report.nothing_ready_reason();
                    if json {
                        emit(
                            json,
                            &serde_json::json!({"task": null, "reason": why}),
                            String::new,
                        );
                    } else {
                        eprintln!("baton: nothing to claim: {why}");
                    }
                    return Ok(EXIT_NOTHING_TO_CLAIM);
                }
            }
        }
        Command::Worker(WorkerCommand::Start { agent, task }) => {
            let task = open()?.start(&agent, &task)?;
            emit(json, &task, || {
                format!(
                    "Started {}. When done: baton worker complete {agent} {} \"SUMMARY\" --modified FILE…",
                    task.id, task.id
                )
            });
        }
        Command::Worker(WorkerCommand::Complete {
            agent,
            task,
            summary,
            modified,
            created,
        }) => {
            let project = open()?;
            let task = project.complete(
                &agent,
                &task,
                Completion {
                    output: summary,
                    files_modified: modified,
                    files_created: created,
                },
            )?;
            emit(json, &task, || {
                format!("Completed {}; report in results/{}.md", task.id, task.id)
            });
        }
        Command::Worker(WorkerCommand::Fail {
            agent,
            task,
            reason,
        }) => {
            let task = open()?.fail(&agent, &task, &reason)?;
            emit(json, &task, || {
                format!(
                    "Marked {} failed; the leader can `baton leader reset {}` to retry it",
                    task.id, task.id
                )
            });
        }
        Command::Worker(WorkerCommand::Release { agent, task }) => {
            let task = open()?.release(&agent, &task)?;
            emit(json, &task, || {
                format!("Released {}; it is available again", task.id)
            });
        }
        Command::Worker(WorkerCommand::Heartbeat { agent }) => {
            let project = open()?;
            let renewed = project.heartbeat(&agent)?;
            let lease = humantime::format_duration(project.lease()).to_string();
            emit(
                json,
                &serde_json::json!({"agent": agent, "renewed": renewed, "lease": lease}),
                || {
                    if renewed.is_empty() {
                        format!("{agent} holds no tasks; recorded as alive")
                    } else {
                        format!("Renewed {lease} lease on {}", renewed.join(", "))
                    }
                },
            );
        }
        Command::Discover { text, agent } => {
            let project = open()?;
            project.discover(&agent, &text)?;
            let path = project.layout().discoveries().display().to_string();
            emit(
                json,
                &serde_json::json!({"agent": agent, "path": path}),
                || format!("Added to {path}"),
            );
        }
        Command::Logs {
            agent,
            follow,
            lines,
        } => {
            let project = open()?;
            if let Some(agent) = &agent {
                baton_store::names::validate_agent_id(agent)?;
            }
            if follow {
                follow::follow_logs(&project, agent.as_deref(), lines, mode, json)?;
            } else {
                let log = project.logs(agent.as_deref(), lines)?;
                emit(json, &log, || render::log_lines(&log, agent.is_none()));
            }
        }
        Command::Prompt(prompt) => {
            let (role, text) = match prompt {
                PromptCommand::Leader => ("leader", prompts::leader()),
                PromptCommand::Worker { agent } => {
                    baton_store::names::validate_agent_id(&agent)?;
                    ("worker", prompts::worker(&agent))
                }
            };
            emit(
                json,
                &serde_json::json!({"role": role, "text": text}),
                || text.clone(),
            );
        }
    }
    Ok(0)
}
