//! The command line, as clap types: the global options and the tree of commands. An
//! operation's own arguments are its `baton-api` request type (derived with the `cli`
//! feature), so its flags, defaults and help are declared once; each command group's tree is in
//! its own module.

use std::path::PathBuf;
use std::time::Duration;

use baton_live::WatchMode;
use clap::{Parser, Subcommand};

use baton_api::durations::parse_duration;

pub use crate::agents::{AgentsCommand, HandoffCommand, InvokeCommand, ParallelCommand};
pub use crate::leader::LeaderCommand;
pub use crate::live::{RunCommand, SignalCommand};
pub use crate::worker::WorkerCommand;

// The global options are short: each is one line of `baton --help`, which fits on one 80×40
// terminal (no second paragraph anywhere here, or clap lays --help out at length). What they
// mean at length is in the README.
/// Coordinate parallel AI coding agents through one `.coordination/` folder.
#[derive(Debug, Parser)]
#[command(
    name = "baton",
    version,
    propagate_version = true,
    disable_help_subcommand = true,
    after_help = "A command's own help: `baton COMMAND --help`. Exit codes: `baton exit-codes`."
)]
pub struct Cli {
    /// The project folder (BATON_DIR; default: the nearest).
    #[arg(
        long,
        global = true,
        env = "BATON_DIR",
        value_name = "DIR",
        hide_env = true
    )]
    pub dir: Option<PathBuf>,

    /// A project kept in PostgreSQL (BATON_STORE).
    #[arg(
        long,
        global = true,
        env = "BATON_STORE",
        value_name = "URL",
        hide_env = true
    )]
    pub store: Option<String>,

    /// The project's name in the database (BATON_PROJECT).
    #[arg(
        long,
        global = true,
        env = "BATON_PROJECT",
        value_name = "NAME",
        hide_env = true
    )]
    pub project: Option<String>,

    /// Print JSON (errors too, on stderr).
    #[arg(long, global = true)]
    pub json: bool,

    /// How long a claim lasts unrenewed (BATON_LEASE, 15m).
    #[arg(
        long,
        global = true,
        env = "BATON_LEASE",
        value_name = "DURATION",
        default_value = "15m",
        value_parser = parse_duration,
        hide_env = true,
        hide_default_value = true
    )]
    pub lease: Duration,

    /// How to notice changes: auto (file-system events; polling on network file systems or
    /// when events fail), events, poll, or poll:MILLISECONDS (BATON_WATCH_MODE).
    #[arg(
        long,
        global = true,
        env = "BATON_WATCH_MODE",
        value_name = "MODE",
        default_value = "auto",
        hide = true
    )]
    pub watch_mode: WatchMode,

    /// When to colour: auto (default), always, never.
    #[arg(
        long,
        global = true,
        value_name = "WHEN",
        default_value = "auto",
        value_enum,
        hide_default_value = true,
        hide_possible_values = true
    )]
    pub color: crate::style::ColorWhen,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Plan and oversee the work (init, add-task, status, merge, …).
    ///
    /// Plan and oversee the work: init, add-task, edit, status, aggregate, cancel, reset,
    /// approve, merge, doctor.
    #[command(
        subcommand,
        after_help = "Example: baton leader add-task \"Write the lexer\" --files src/lexer.rs"
    )]
    Leader(LeaderCommand),
    /// Do the work by hand (claim, start, complete, loop, …).
    ///
    /// Do the work: list, claim, start, complete, fail, release, heartbeat; `loop` runs a
    /// command on each task.
    #[command(
        subcommand,
        after_help = "Example: baton worker claim w1 && baton worker start w1 task-1"
    )]
    Worker(WorkerCommand),
    /// Let Baton run the agents (up, status, logs, stop, …).
    ///
    /// Let Baton run the agents: `team up` starts supervised workers (Claude Code, Codex,
    /// Gemini or any command) that claim tasks, work each in its own worktree, and are
    /// restarted if they crash; `status`, `logs`, `stop`, `profiles`.
    #[command(
        subcommand,
        after_help = "Example: baton team up --workers 3 --agent claude"
    )]
    Team(crate::team::TeamCommand),
    /// What waits for the lead: questions, approvals, messages.
    ///
    /// What waits for the lead (the agents' open questions, messages to the lead) or, as an
    /// agent (BATON_AGENT or --agent), for that agent. --wait returns as soon as something
    /// arrives (exit code 5 when nothing did in time).
    #[command(after_help = "Example: baton inbox --wait --timeout 10m")]
    Inbox(baton_api::inbox::InboxRead),
    /// Ask the lead a question and wait for the answer.
    ///
    /// Ask the lead a question and wait for the answer (an agent in a terminal; the agent is
    /// BATON_AGENT or --agent). Prints the answer; exit code 5 when none came in time.
    #[command(
        after_help = "Example: baton ask \"Which database?\" --choice postgres --choice sqlite"
    )]
    Ask(baton_api::inbox::AskLead),
    /// Answer an agent's question (or approval).
    ///
    /// Answer an agent's question: `baton answer q-3 "use the v2 API"`, or a choice by its
    /// text or number.
    #[command(after_help = "Example: baton answer q-3 \"use the v2 API\"")]
    Answer(baton_api::inbox::AnswerQuestion),
    /// Whether an agent may make a tool call (Claude Code's permission prompt).
    ///
    /// Whether an agent may make a tool call, by the project's policy
    /// (.coordination/policy.toml) or the lead's answer: what Claude Code's permission prompt
    /// tool asks (`approve Bash --input '{"command":"cargo test"}' --agent cc1`). Prints the
    /// verdict; exits 1 when the call is denied.
    #[command(hide = true)]
    Approve(baton_api::approvals::ApproveToolCall),
    /// Review a task's work: its diff, comments, the check.
    ///
    /// Review a task's work before merging it: `baton review task-3` shows its branch's diff
    /// against yours with the comments; `comment`, `request-changes` (the task goes back to the
    /// worker that did it, on its branch) and `check` (the project's check command).
    #[command(
        after_help = "Example: baton review comment task-3 --file src/users.rs --line 42 \"return 404, not 500\""
    )]
    Review(crate::review::ReviewArgs),
    /// Messages between agents and the lead: send, ack.
    #[command(
        subcommand,
        after_help = "Example: baton message send cc2 \"Parser API\" \"It takes a &str now\" --as cc1"
    )]
    Message(crate::inbox::MessageCommand),
    /// Share a finding with every agent.
    ///
    /// Share a finding with every agent (appended to context/discoveries.md).
    #[command(after_help = "Example: baton discover \"The tests need PGHOST set\" --agent cc1")]
    Discover(baton_api::tasks::Discover),
    /// Files agents hold: reserve, unreserve, list, check, hooks.
    #[command(
        subcommand,
        after_help = "Example: baton files reserve 'src/parser/**' --agent cc1"
    )]
    Files(FilesCommand),
    /// Reserve files for an agent (`baton files reserve`).
    #[command(hide = true)]
    Reserve(baton_api::reservations::Reserve),
    /// Give back reserved files (`baton files unreserve`).
    #[command(hide = true)]
    Unreserve(baton_api::reservations::Unreserve),
    /// Who holds which files (`baton files list`).
    #[command(hide = true)]
    Reservations,
    /// Which of these files another agent holds (`baton files check`; the pre-commit hook).
    #[command(hide = true)]
    CheckPaths(crate::files::CheckPathsArgs),
    /// Git hooks (`baton files hooks`).
    #[command(subcommand, hide = true)]
    Hooks(crate::files::HooksCommand),
    /// Agents' logs: all merged in time order, or one's.
    ///
    /// Show agents' logs (all agents merged in time order, or one agent's).
    #[command(after_help = "Example: baton logs cc1 --follow")]
    Logs {
        #[command(flatten)]
        request: baton_api::tasks::Logs,
        /// Keep printing new lines as they are written.
        #[arg(short, long)]
        follow: bool,
    },
    /// Print ready-to-paste instructions for a coding agent in a role.
    #[command(subcommand, after_help = "Example: baton prompt worker cc1")]
    Prompt(PromptCommand),
    /// Put the project's coding agents on Baton (`setup claude`).
    ///
    /// Put the project's coding agents on Baton: `setup claude` for Claude Code.
    #[command(subcommand, after_help = "Example: baton setup claude --approve")]
    Setup(SetupCommand),
    /// What the Claude Code hooks `setup claude` installs run (reads the hook's JSON on stdin;
    /// does nothing without BATON_AGENT; always exits 0).
    #[command(hide = true)]
    ClaudeHook {
        #[arg(value_enum)]
        event: crate::claude::HookEvent,
    },
    /// Runs scope signals: start one (clearing stale signals), list them.
    #[command(subcommand, hide = true)]
    Run(RunCommand),
    /// Signals between agents: write, clear, list, wait.
    ///
    /// Signals between agents: write, clear, list, and wait for them. `baton run start|list`
    /// scopes them to a run (starting one clears the stale ones).
    #[command(
        subcommand,
        after_help = "Example: baton signal wait ui-test-done --timeout 10m"
    )]
    Signal(SignalCommand),
    /// Stream changes in .coordination/ as they happen.
    ///
    /// Stream changes in .coordination/ as they happen (tasks, signals, discoveries, results,
    /// logs); one JSON object per line with --json.
    #[command(after_help = "Example: baton --json watch")]
    Watch,
    /// The agent registry (and `invoke`, `handoff`, `parallel`, `route`).
    ///
    /// The agent registry: list, show, check definitions; write the catalog out to edit.
    /// Orchestration has commands of its own: `baton invoke` (record an agent's invocation),
    /// `handoff` (the chain between agents), `parallel` (several agents, one answer) and
    /// `route` (which workflow and agents for a task).
    #[command(subcommand, after_help = "Example: baton agents list")]
    Agents(AgentsCommand),
    /// Print the shell's completion script (bash, zsh, fish, …).
    ///
    /// Print the shell's completion script: `source <(baton completions bash)`, or save it
    /// where the shell finds it (the .deb installs them for bash, zsh and fish).
    #[command(after_help = "Example: source <(baton completions bash)")]
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// What each exit status of `baton` means, for scripts.
    ///
    /// Not in the list of `baton --help` (whose last line names it), to keep that list on one
    /// screen; the guide's "Errors and exit codes" page has the same table.
    #[command(hide = true, after_help = "Example: baton exit-codes --json")]
    ExitCodes,
    /// Write the man pages: baton.1 and one per command (baton-team-up.1, …), from the same
    /// definitions as --help, into DIR/man1/ (what the .deb installs in /usr/share/man/man1).
    #[command(
        hide = true,
        after_help = "Example: baton manpages ~/.local/share/man && man baton-team-up"
    )]
    Manpages {
        /// The man folder to write into: the pages go in its man1/, which is made.
        #[arg(value_name = "DIR")]
        out: PathBuf,
    },
    /// Write the user guide's command reference (Markdown, from the same definitions as
    /// --help) into DIR: what docs/guide/src/reference holds.
    #[command(hide = true)]
    Reference {
        #[arg(long, value_name = "DIR")]
        dir: PathBuf,
    },
    /// Record agent invocations: start one (builds the prompt), complete it, list them.
    #[command(subcommand, hide = true)]
    Invoke(InvokeCommand),
    /// The handoff chain between agents: track a handoff, show the chain.
    #[command(subcommand, hide = true)]
    Handoff(HandoffCommand),
    /// Parallel runs: several agents on one question, then one aggregated answer.
    #[command(subcommand, hide = true)]
    Parallel(ParallelCommand),
    /// Serve Baton to coding agents over MCP (stdio or HTTP).
    ///
    /// Serve Baton to coding agents over MCP (stdio): task, signal and orchestration tools,
    /// the board and agents:// resources. stdout carries only the protocol.
    ///
    /// An agent is not the user: every path a tool call names (signal files, steering files,
    /// artifacts) must resolve, symlinks followed, inside the project folder, and signal tools
    /// never overwrite or remove a file that is not a signal. --allow-path widens the first
    /// rule; so does "allow_paths" in .coordination/mcp/config.json.
    #[command(after_help = "Example: baton mcp --proxy")]
    Mcp {
        /// Serve only the tools this agent's definition allows (its `tools` list).
        #[arg(long, value_name = "AGENT")]
        agent: Option<String>,
        /// Log to .coordination/mcp/mcp.log only, not to stderr.
        #[arg(short, long)]
        quiet: bool,
        /// Also let tool calls name paths inside DIR (repeatable). Default: the project only.
        #[arg(long, value_name = "DIR")]
        allow_path: Vec<PathBuf>,
        /// Proxy a child MCP server (default: Playwright MCP attached to Baton's browser).
        #[arg(long)]
        proxy: bool,
        /// A child MCP server to proxy, as "COMMAND ARGS…" or "NAME=COMMAND ARGS…";
        /// {cdp_port} becomes the browser's DevTools port. Repeatable; implies --proxy.
        #[arg(long, value_name = "COMMAND")]
        child: Vec<String>,
        /// Also serve child tools that run arbitrary code in the child's process (Playwright
        /// MCP's browser_run_code_unsafe): they can reach every file you can.
        #[arg(long)]
        allow_unsafe_tools: bool,
        /// Do not launch a browser before child tool calls.
        #[arg(long)]
        no_browser: bool,
        /// Show the browser window (default: headless).
        #[arg(long)]
        headed: bool,
        /// Serve streamable HTTP on this loopback address (e.g. 127.0.0.1:8765) instead of
        /// stdio; a bearer token is required, written to .coordination/mcp/http.json.
        #[arg(long, value_name = "IP:PORT")]
        http: Option<String>,
        /// The bearer token for --http (default: random, 64 hex digits).
        #[arg(
            long,
            env = "BATON_MCP_TOKEN",
            hide_env_values = true,
            requires = "http"
        )]
        token: Option<String>,
        /// At most this many --http sessions live at once; a client opening one more is
        /// answered 503 (it closes one, or waits for an idle one to be closed).
        #[arg(long, value_name = "N", default_value_t = 256, requires = "http",
              value_parser = clap::value_parser!(u32).range(1..=100_000))]
        http_max_sessions: u32,
        /// Close an --http session after this long without a request (e.g. 30s, 5m).
        #[arg(long, value_name = "DURATION", default_value = "5m", requires = "http",
              value_parser = humantime::parse_duration)]
        http_idle: std::time::Duration,
    },
    /// Reach a project kept in PostgreSQL from this folder.
    ///
    /// Reach a project kept in PostgreSQL from this folder: writes .coordination/store.json
    /// (the URL without its password, and --project), so every command here, and in folders
    /// below, uses that database. For a worker machine that shares no folder with the lead.
    #[command(
        after_help = "Example: baton connect postgres://baton@db.internal/baton --project shop"
    )]
    Connect {
        /// postgres://USER@HOST[:PORT]/DB, with sslmode and sslrootcert for TLS.
        url: String,
    },
    /// Move a project between the folder and PostgreSQL.
    ///
    /// Move a project between the folder and PostgreSQL: export a database project as a
    /// .coordination/ folder, or import a folder project into a database.
    #[command(subcommand, after_help = "Example: baton store export --to ./snapshot")]
    Store(crate::store::StoreCommand),
    /// Browsers for UI tests: list, open, reload, screenshot.
    ///
    /// Browsers for UI tests: list the registry; open a URL, reload or screenshot a page.
    #[command(
        subcommand,
        after_help = "Example: baton browser screenshot 9222 --out page.png"
    )]
    Browser(crate::browser::BrowserCommand),
    /// Serve the UI to paired browsers over HTTP: a phone, another machine.
    ///
    /// Serve the desktop's UI over HTTP, with the change feed pushed, for browsers paired
    /// with a one-time link (`baton serve pair`, printed at start): as lead (everything) or
    /// responder (answer, approve, review, stop an agent). Loopback unless --listen says
    /// otherwise. While it runs, what waits for the lead (and a team's end) is pushed to the
    /// devices that turned pushes on in their Inbox, and sent to the webhooks
    /// .coordination/notify.toml names.
    #[command(after_help = "Example: baton serve --listen 127.0.0.1:8787")]
    Serve(crate::serve::ServeArgs),
    /// Recommend a workflow and agents for a task (rules in orchestration/workflows.json).
    #[command(hide = true)]
    Route {
        /// The task, in words.
        task: String,
    },
}

/// Files agents hold (`baton files`).
#[derive(Debug, Subcommand)]
pub enum FilesCommand {
    /// Reserve files (paths or globs) for an agent: others' claims pass over tasks touching
    /// them, and the pre-commit hook refuses their commits. Exit code 7 when another agent
    /// holds any of them (nothing is reserved then).
    Reserve(baton_api::reservations::Reserve),
    /// Give back reserved files (all of the agent's when none are named).
    Unreserve(baton_api::reservations::Unreserve),
    /// Who holds which files: held tasks' files and reserved paths.
    List,
    /// Say which of these files another agent holds exclusively: exit code 0 when none, 7
    /// when some (listed). For scripts and the git pre-commit hook.
    Check(crate::files::CheckPathsArgs),
    /// Git hooks: `install` adds the pre-commit hook that runs `baton check-paths`.
    #[command(subcommand)]
    Hooks(crate::files::HooksCommand),
}

#[derive(Debug, Subcommand)]
pub enum SetupCommand {
    /// Claude Code: the baton MCP server in .mcp.json and hooks in .claude/settings.json
    /// that keep a worker's leases, tell it what it holds, and stop it from stopping while
    /// it holds an unfinished task.
    Claude(crate::claude::SetupClaude),
}

#[derive(Debug, Subcommand)]
pub enum PromptCommand {
    /// Instructions for the lead agent that plans the work.
    Leader,
    /// Instructions for a worker agent named AGENT.
    Worker { agent: String },
}

#[cfg(test)]
mod tests {
    use super::*;

    /// clap's own check of the whole tree (argument and group ids unique, requirements and
    /// conflicts naming arguments that exist, …), which it otherwise makes only when a
    /// command is parsed: a request type flattened into a command cannot break another.
    #[test]
    fn the_command_tree_is_well_formed() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
