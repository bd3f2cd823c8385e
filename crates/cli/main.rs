//! `baton`: the command line for leaders and workers. A thin shell over `baton-api`: it parses
//! words into an operation's request, runs it, and prints the operation's result for people
//! or, with `--json`, exactly as the MCP tool and the desktop app get it. No coordination logic
//! lives here.
//!
//! Modules, a tree with no circle: `args` (the clap tree of the leader and worker commands,
//! taking each other group's arguments from its module), `render` (their text), one folder or
//! file per other command group (`live/` for signals, runs, watching and the worker loop;
//! `agents/` for orchestration; `team/` for the supervised team; `claude/` for Claude Code's
//! setup and hooks; `leader.rs`, `worker.rs`, `inbox.rs`, `review.rs`, `files.rs`,
//! `browser.rs`, `store.rs`, `serve.rs`; `follow.rs` for following the board and logs;
//! `reference.rs` for the man pages and the guide's command reference), each with its own
//! arguments, handlers and text; `runs.rs` (what each command runs of the catalogue) and
//! `door.rs` (an agent behind its attempt's door); `context` (the user's context for an
//! operation), `output` and `style` (printing results and errors) serve them all.

mod agents;
mod archiving;
mod args;
mod browser;
mod claude;
mod context;
mod door;
mod files;
mod follow;
mod inbox;
mod leader;
mod live;
mod output;
mod reference;
mod render;
mod review;
mod runs;
mod serve;
mod store;
mod style;
mod team;
mod worker;

use std::process::ExitCode;

use baton_api::tasks;
use baton_api::{Choice, Error, OpenProject, exit};
use baton_core::StoreError;
use baton_folder::FolderStore;
use clap::Parser;

use args::{Cli, Command, FilesCommand, LeaderCommand, PromptCommand, SetupCommand};
use context::operate;
use output::emit;

fn main() -> ExitCode {
    // Inside a sandbox, its first command (the process limit, the bridge to the attempt's
    // network proxy), which becomes the agent's command.
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if args
        .get(1)
        .is_some_and(|a| a == baton_sandbox::inside::START_COMMAND)
    {
        let code = baton_sandbox::inside::run(&args[2..]);
        return ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    // Inside a sandbox, Baton is reached through the attempt's door only; a browser's proxy
    // runs inside with it.
    if let Some(socket) = std::env::var_os(baton_door::DOOR_ENV)
        && context::door_guest().is_none()
    {
        return door::proxy_inside().unwrap_or_else(|| door::relay(&socket));
    }
    door::keep_report_to_self();
    let cli = match parse_args(args) {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    cli.color.apply();
    let json = cli.json;
    match run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            door::report_refusal(&err);
            output::report_error(&err, json);
            ExitCode::from(exit::for_error(err.kind()).code)
        }
    }
}

/// The command line parsed; `baton help COMMAND…` read as `baton COMMAND… --help`. A usage
/// error with `--json` is said as JSON, as every other error is; help and the version are
/// printed as clap prints them.
fn parse_args(args: Vec<std::ffi::OsString>) -> Result<Cli, ExitCode> {
    let args = help_as_flag(args);
    let error = match Cli::try_parse_from(&args) {
        Ok(cli) => return Ok(cli),
        Err(error) => error,
    };
    use clap::error::ErrorKind as Clap;
    let wants_json = args
        .iter()
        .skip(1)
        .take_while(|a| *a != "--")
        .any(|a| a == "--json");
    if !wants_json || matches!(error.kind(), Clap::DisplayHelp | Clap::DisplayVersion) {
        error.exit();
    }
    let err = Error::new(
        baton_core::ErrorKind::InvalidArguments,
        error.render().to_string().trim().to_string(),
    );
    output::report_error(&err, true);
    Err(ExitCode::from(exit::for_error(err.kind()).code))
}

/// `baton help [COMMAND…]` as `baton [COMMAND…] --help`.
fn help_as_flag(mut args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    if args.get(1).is_some_and(|a| a == "help") {
        args.remove(1);
        args.push("--help".into());
    }
    args
}

fn run(cli: Cli) -> Result<u8, Error> {
    if let Some(agent) = context::door_guest() {
        let raw: Vec<String> = std::env::args().skip(1).collect();
        door::check(&agent, &cli.command, &raw)?;
    }
    let cwd = std::env::current_dir().map_err(|e| StoreError::io(".", e))?;
    let json = cli.json;
    let mode = cli.watch_mode;
    let choice = Choice {
        dir: cli.dir.as_deref(),
        store: cli.store.as_deref(),
        project: cli.project.as_deref(),
        password: None,
    };
    // A folder project's quiet landed work leaves its board now and then.
    let open = || OpenProject::open(&choice, &cwd, cli.lease).inspect(archiving::now_and_then);
    // The folder a new project or pointer goes in: --dir (from the working folder), or here.
    let named_dir = || {
        cli.dir
            .as_deref()
            .map_or_else(|| cwd.clone(), |d| cwd.join(d))
    };

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
        Command::Completions { shell } => {
            use clap::CommandFactory;
            let mut tree = reference::completion_tree(&Cli::command());
            clap_complete::generate(shell, &mut tree, "baton", &mut std::io::stdout());
            Ok(0)
        }
        Command::Manpages { out } => {
            let dir = reference::manpages(&cwd.join(out))?;
            emit(json, &serde_json::json!({"dir": dir}), || {
                format!("man pages written to {}", dir.display())
            });
            Ok(0)
        }
        Command::Reference { dir } => {
            let dir = cwd.join(dir);
            let files = reference::write_pages(&dir)?;
            emit(
                json,
                &serde_json::json!({"dir": dir, "files": files}),
                || {
                    format!(
                        "{} reference pages written to {}",
                        files.len(),
                        dir.display()
                    )
                },
            );
            Ok(0)
        }
        Command::Leader(command) => leader::run(&open()?, command, mode, json),
        Command::Worker(command) => worker::run(&open()?, command, mode, json),
        Command::Setup(SetupCommand::Claude(args)) => claude::setup::command(&open()?, args, json),
        Command::ClaudeHook { event } => Ok(claude::hook::run(event, &choice, &cwd, cli.lease)),
        Command::Files(FilesCommand::Reserve(args)) | Command::Reserve(args) => {
            files::reserve(&open()?, args, mode, json)
        }
        Command::Files(FilesCommand::Unreserve(op)) => files::unreserve(&open()?, op, mode, json),
        Command::Files(FilesCommand::List) => files::list(&open()?, mode, json),
        Command::Files(FilesCommand::Check(args)) => files::check_paths(&open()?, args, mode, json),
        Command::Files(FilesCommand::Hooks(files::HooksCommand::Install)) => {
            files::install_hook(&open()?, json)
        }
        Command::ExitCodes => {
            let table = baton_api::exit::help_text();
            emit(json, &baton_api::exit::table_json(), || table.clone());
            Ok(0)
        }
        Command::Unreserve(op) => files::unreserve(&open()?, op, mode, json),
        Command::Reservations => files::list(&open()?, mode, json),
        Command::CheckPaths(args) => files::check_paths(&open()?, args, mode, json),
        Command::Hooks(files::HooksCommand::Install) => files::install_hook(&open()?, json),
        Command::Discover(op) => operate(&open()?, mode, json, op, |out| {
            format!("Added to {}", out.path)
        }),
        Command::Logs {
            request: tasks::Logs { agent, lines },
            follow: true,
        } => {
            // Behind a door an agent follows its own log, as the `logs` operation reads it.
            let agent = tasks::whose_log(context::door_guest().as_deref(), agent)?;
            follow::follow_logs(&open()?, agent.as_deref(), lines, mode, json)?;
            Ok(0)
        }
        Command::Logs {
            request,
            follow: false,
        } => {
            let every_agent = request.agent.is_none();
            operate(&open()?, mode, json, request, |out| {
                render::log_lines(&out.lines, every_agent)
            })
        }
        Command::Run(command) => live::run_command(&open()?, command, json),
        Command::Signal(command) => live::signal_command(&open()?, &cwd, command, mode, json),
        Command::Watch => Ok(live::watch(&open()?, mode, json)?),
        Command::Team(command) => team::run(&open()?, command, mode, json),
        Command::Ask(request) => inbox::ask(&open()?, request, mode, json),
        Command::Inbox(request) => inbox::inbox(&open()?, request, mode, json),
        Command::Answer(request) => inbox::answer(&open()?, request, mode, json),
        Command::Message(command) => inbox::message(&open()?, command, mode, json),
        Command::Approve(request) => inbox::approve(&open()?, request, mode, json),
        Command::Review(args) => review::review(&open()?, args, mode, json),
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
        Command::Serve(args) => serve::serve(&open()?, args, json),
        Command::Mcp {
            agent,
            quiet,
            proxy,
            child,
            no_browser,
            headed,
            http,
            token,
            http_max_sessions,
            http_idle,
            allow_path,
            allow_unsafe_tools,
        } => {
            let caller = inbox::terminal_agent();
            if let Some(agent) = &caller {
                baton_core::names::validate_agent_id(agent)?;
            }
            if http_idle < std::time::Duration::from_secs(1) {
                return Err(Error::new(
                    baton_core::ErrorKind::InvalidArguments,
                    "--http-idle must be at least 1s: a session is closed after that long \
                     without a request",
                ));
            }
            let project = open()?;
            let attempt = caller.as_ref().and(context::attempt_task());
            let planner = context::is_planner(&project, caller.as_deref(), attempt.as_deref());
            let options = baton_mcp::McpOptions {
                confine_to: context::door_workdir(project.local()),
                behind_door: context::door_guest().is_some(),
                speaker: baton_mcp::Speaker {
                    planner,
                    attempt,
                    caller,
                    reads_only: context::door_reads_only(),
                },
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
                sessions: baton_mcp::sessions::SessionLimits {
                    max: http_max_sessions as usize,
                    idle: http_idle,
                },
            };
            baton_mcp::serve(project, options)?;
            Ok(0)
        }
        Command::Prompt(prompt) => {
            let (role, text) = match prompt {
                PromptCommand::Leader => ("leader", baton_api::prompts::leader()),
                PromptCommand::Worker { agent } => {
                    baton_core::names::validate_agent_id(&agent)?;
                    ("worker", baton_api::prompts::worker(&agent))
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
