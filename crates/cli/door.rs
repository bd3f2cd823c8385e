//! `baton` behind an attempt's door (`baton-door`), on both sides of it.
//!
//! Inside a sandbox (`BATON_DOOR` set) `baton` is a relay: it sends its command line to the
//! supervisor and prints what comes back, and opens no project itself (it could not: the
//! sandbox hides `.coordination/` and the store's credentials).
//!
//! On the supervisor's side (`BATON_DOOR_AGENT` set by the door) the same `baton` runs the
//! command as that agent: an agent's commands only ([`check`], which reads the catalogue's word
//! on who may call each operation), every operation with the agent as its caller (so `--agent`
//! naming another, or the lead's operations, are refused by the catalogue again), paths
//! confined to the project, and no other store or project.

use std::ffi::OsStr;
use std::process::ExitCode;

use baton_api::Error;
use baton_core::ErrorKind;

use crate::args::Command;
use crate::live::SignalCommand;
use crate::runs::CommandRuns;

/// Inside a sandbox: `baton mcp --proxy` (or `--child`) runs here, not behind the door, so
/// that its children and the browser they drive run inside the sandbox too
/// ([`baton_mcp::sandboxed`]); `None` for any other command, which is relayed. Options that
/// need the project (`--agent`, `--http`, `--allow-path`, another store) are left to
/// the door, which refuses them as it refuses them for any agent.
pub fn proxy_inside() -> Option<ExitCode> {
    let cli = <crate::args::Cli as clap::Parser>::try_parse().ok()?;
    let Command::Mcp {
        agent: None,
        quiet,
        proxy,
        child,
        no_browser,
        headed,
        http: None,
        token: None,
        allow_path,
        allow_unsafe_tools,
        ..
    } = cli.command
    else {
        return None;
    };
    // `--dir` (or `BATON_DIR`, which an agent has) names the project the door serves anyway.
    let elsewhere = cli.store.is_some() || cli.project.is_some();
    let proxying = proxy || !child.is_empty();
    if !proxying || !allow_path.is_empty() || elsewhere {
        return None;
    }
    let (Ok(baton), Ok(workdir)) = (std::env::current_exe(), std::env::current_dir()) else {
        return Some(refuse(
            "cannot tell where this baton or its working folder is".into(),
        ));
    };
    let options = baton_mcp::sandboxed::SandboxOptions {
        baton,
        workdir,
        children: child,
        no_browser,
        headed,
        quiet,
        allow_unsafe_tools,
    };
    Some(match baton_mcp::sandboxed::serve(options) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let code = baton_api::exit::for_error(e.kind()).code;
            eprintln!("baton: {e}");
            ExitCode::from(code)
        }
    })
}

/// Says why `baton` inside a sandbox cannot go on, and exits as an error.
fn refuse(message: String) -> ExitCode {
    eprintln!("baton: {message}");
    ExitCode::from(baton_api::exit::ERROR.code)
}

/// Inside a sandbox: relays this command to the door at `socket` and exits as it did.
pub fn relay(socket: &OsStr) -> ExitCode {
    let argv: Result<Vec<String>, _> = std::env::args_os()
        .skip(1)
        .map(|arg| arg.into_string())
        .collect();
    let Ok(argv) = argv else {
        return refuse("an argument is not valid UTF-8".into());
    };
    let cwd = std::env::current_dir()
        .map(|dir| dir.display().to_string())
        .unwrap_or_default();
    let reads_input = reads_input(&argv);
    match baton_door::client::relay(socket, argv, cwd, reads_input) {
        Ok(code) => ExitCode::from(code.clamp(0, 255) as u8),
        Err(message) => refuse(message),
    }
}

/// Whether a command reads its standard input: the MCP server, Claude Code's hooks, and
/// `--stdin`.
fn reads_input(argv: &[String]) -> bool {
    let first = argv.iter().find(|arg| !arg.starts_with('-'));
    matches!(first.map(String::as_str), Some("mcp" | "claude-hook"))
        || argv.iter().any(|arg| arg == "--stdin")
}

/// Refuses, behind a door, what is not an agent's to run. A command that runs operations of
/// the catalogue ([`crate::runs`]) is the agent's when each of them is, as the catalogue
/// declares ([`baton_api::Callers`]); of the commands that do work of their own, an agent runs
/// only its MCP server (over its own input and output), Claude Code's hooks, the printed
/// prompts, the exit codes, `watch` (which shows it its own) and the board as it changes. `raw` is the command line as
/// given (an option that picks another project or store is refused even when its variable
/// would set it).
pub fn check(agent: &str, command: &Command, raw: &[String]) -> Result<(), Error> {
    const ELSEWHERE: [&str; 3] = ["--dir", "--store", "--project"];
    if let Some(option) = raw.iter().find(|arg| {
        ELSEWHERE
            .iter()
            .any(|o| *arg == o || arg.starts_with(&format!("{o}=")))
    }) {
        return Err(refused(
            agent,
            &format!("{option} (another project or store)"),
        ));
    }
    let reads_only = crate::context::door_reads_only();
    match crate::runs::runs(command) {
        CommandRuns::Operations(names) => {
            for name in names {
                let entry = baton_api::find(name);
                if reads_only && !entry.is_some_and(|e| e.read_only) {
                    return Err(Error::new(
                        ErrorKind::NotYou,
                        format!(
                            "this is agent {agent}, a team's judge, in a sandbox: it only reads, \
                             and this command ({name}) changes the project"
                        ),
                    ));
                }
                let callers = entry.map(|entry| entry.callers);
                // A planner's operations are refused here to no agent: the catalogue asks
                // the store whether this one is its team's planner.
                if !callers.is_some_and(|c| c.agents() || c.planner) {
                    return Err(refused(agent, &format!("this command ({name})")));
                }
            }
            refuse_force(agent, command)
        }
        CommandRuns::Local => local(agent, command),
    }
}

/// `--force` (replace or remove a file at `--path` that is not a signal) is the user's word
/// alone: through the door it would change the lead's files from outside the agent's sandbox.
fn refuse_force(agent: &str, command: &Command) -> Result<(), Error> {
    match command {
        Command::Signal(SignalCommand::Write(change)) if change.force => {
            Err(refused(agent, "--force"))
        }
        Command::Signal(SignalCommand::Clear(change)) if change.force => {
            Err(refused(agent, "--force"))
        }
        _ => Ok(()),
    }
}

/// The commands outside the catalogue an agent may run behind its door.
fn local(agent: &str, command: &Command) -> Result<(), Error> {
    match command {
        Command::Prompt(_)
        | Command::ClaudeHook { .. }
        | Command::ExitCodes
        | Command::Watch
        | Command::Leader(crate::args::LeaderCommand::Status { watch: true, .. }) => Ok(()),
        Command::Mcp {
            proxy,
            child,
            http,
            token,
            allow_path,
            allow_unsafe_tools,
            ..
        } => {
            // Inside the sandbox they run there (`proxy_inside`); here they would run on the
            // lead's side.
            if *proxy || !child.is_empty() {
                return Err(refused(
                    agent,
                    "a browser or a child MCP server on the lead's side (--proxy, --child with \
                     --agent, --allow-path or another store)",
                ));
            }
            if http.is_some() || token.is_some() {
                return Err(refused(agent, "an HTTP server (--http)"));
            }
            if !allow_path.is_empty() || *allow_unsafe_tools {
                return Err(refused(
                    agent,
                    "widening what it may reach (--allow-path, --allow-unsafe-tools)",
                ));
            }
            Ok(())
        }
        _ => Err(refused(agent, "this command")),
    }
}

/// Behind a door: the door's report pipe kept from the programs this command starts.
pub fn keep_report_to_self() {
    if crate::context::door_guest().is_some() {
        baton_door::keep_report_from_children();
    }
}

/// Behind a door: a refusal (an agent asking for what is not its own: a lead's command,
/// another agent's task, a path outside its folder) said to the door, for the attempt's
/// transcript. Other errors are the agent's own business.
pub fn report_refusal(err: &Error) {
    if crate::context::door_guest().is_some()
        && matches!(err.kind(), ErrorKind::NotYou | ErrorKind::OutsideProject)
    {
        baton_door::report_refusal(&err.to_string());
    }
}

fn refused(agent: &str, what: &str) -> Error {
    Error::new(
        ErrorKind::NotYou,
        format!(
            "this is agent {agent} in a sandbox: {what} is the lead's to run, not an agent's. \
             An agent works its own task, reserves files, asks the lead, reads and sends its \
             messages, adds discoveries and uses signals"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_mcp_server_hooks_and_stdin_readers_get_the_agents_input() {
        let words = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
        assert!(reads_input(&words("mcp")));
        assert!(reads_input(&words("--json mcp")));
        assert!(reads_input(&words("claude-hook tool-use")));
        assert!(reads_input(&words("check-paths --stdin")));
        assert!(!reads_input(&words("worker heartbeat a1")));
        assert!(!reads_input(&words("ask why")));
    }
}
