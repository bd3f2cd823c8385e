//! One adapter per agent CLI: everything Baton knows of one CLI (how it is launched, which of
//! the supervisor's variables it needs, how its output reads, where it keeps its state, how a
//! session resumes, whether it caps its own budget, how it gets Baton's MCP server) is in one
//! file behind the [`AgentCli`] trait, as Zed keeps a language's knowledge in one adapter.
//!
//! The rest of the team never asks which CLI it runs: it asks the profile's [`AgentKind`],
//! which is an adapter from [`ADAPTERS`]. A new CLI is a file here and a line in that list
//! (`scripts/check-layout.py` fails a comparison with a kind outside this module).

mod claude;
mod codex;
mod exec;
mod gemini;
mod opencode;
mod reading;

pub use claude::project as claude_project;
pub use reading::{OutputReader, Price, Reading};

use std::fmt;
use std::path::Path;

use baton_core::Happened;
use serde_json::Value;

use crate::prompt::Reporting;

/// Every agent CLI Baton runs, in the order the built-in profiles are listed.
#[rustfmt::skip]
pub static ADAPTERS: &[&dyn AgentCli] = &[
    &claude::Claude,
    &codex::Codex,
    &gemini::Gemini,
    &opencode::OpenCode,
    &exec::Exec,
];

/// What Baton knows of one agent CLI. The defaults are those of a CLI with none of the
/// feature a method asks about.
pub trait AgentCli: Sync {
    /// The kind's name (`kind = "claude"` in a profile), also its built-in profile's.
    fn name(&self) -> &'static str;

    /// Its built-in profile's program, worker names and the fields it sets.
    fn built_in(&self) -> BuiltIn;

    /// What to install when its program is not found, in words.
    fn install_hint(&self) -> &'static str;

    /// Make the command line of one attempt.
    fn invocation(&self, run: &AgentRun<'_>) -> CommandLine;

    /// The events and usage one line of its JSON output makes, read into `reading`.
    fn read(&self, reading: &mut Reading, line: &Value) -> Vec<Happened>;

    /// Whether its standard output is JSON to [`read`](Self::read) (else kept as lines).
    fn prints_json(&self) -> bool {
        true
    }

    /// The tools a built-in profile allows unasked in a project with an approval policy, which
    /// puts every other tool call to Baton's permission prompt: `None` for a CLI whose
    /// permission prompt Baton cannot answer.
    fn under_policy(&self) -> Option<&'static [&'static str]> {
        None
    }

    /// The hosts it reaches for its model and sign-in: on a sandboxed agent's allow-list by
    /// default ([`crate::allow_list`]).
    fn model_hosts(&self) -> &'static [&'static str] {
        &[]
    }

    /// The variables it takes its model's address from (whose hosts are allowed too).
    fn base_url_variables(&self) -> &'static [&'static str] {
        &[]
    }

    /// The model addresses the user configured in its state folder `user_state` (Codex's
    /// providers): allowed too.
    fn configured_model_urls(&self, _user_state: &Path) -> Vec<String> {
        Vec::new()
    }

    /// The files and folders in a project that configure it (its project settings, the MCP
    /// servers it starts), which could name a program the lead's own CLI would run: no landing
    /// changes them unless the lead's `review.toml` says otherwise ([`project_settings`]).
    fn project_settings(&self) -> &'static [&'static str] {
        &[]
    }

    /// The prefixes of the supervisor's variables it is given in a sandbox (its API key, its
    /// address, its settings by variable), besides what every program gets.
    fn variable_prefixes(&self) -> &'static [&'static str] {
        &[]
    }

    /// The folders it keeps its state in, and what of the user's is copied into a task's own
    /// ([`crate::agent_home`]): none for a CLI with no state.
    fn state_folders(&self) -> &'static [StateFolder] {
        &[]
    }

    /// The session an attempt starts, given the session of an attempt its supervisor's end
    /// stopped (`resumed`, when [`resumes`](Self::resumes)).
    fn session(&self, _resumed: Option<String>) -> AgentSession {
        AgentSession::Unnamed
    }

    /// Whether it can go on with an earlier session (after its supervisor stopped).
    fn resumes(&self) -> bool {
        false
    }

    /// Whether, as a planner, it plans from what it is told (a model reads the news of its
    /// plan; a command plans by script and is run again only when the plan must change).
    fn plans_from_news(&self) -> bool {
        true
    }

    /// Whether Baton gives it Baton's MCP server (and so a browser through it); without, it
    /// reports through the `baton` command in its shell.
    fn takes_mcp_servers(&self) -> bool {
        false
    }

    /// Whether it stops itself at the caps it is given (turns, cost), so it is stopped from
    /// outside only when it overruns them.
    fn caps_itself(&self) -> bool {
        false
    }

    /// Whether its exit status reports its task (a command), rather than a report through
    /// Baton; its output's last lines then say why it failed.
    fn reports_by_exit(&self) -> bool {
        false
    }

    /// Whether its profile's `command` is a shell command (run by `sh -c`, given by `--exec`)
    /// rather than a program found on `PATH`.
    fn runs_shell_command(&self) -> bool {
        false
    }
}

impl dyn AgentCli {
    /// How the agent reaches Baton, as its prompt says.
    pub fn reporting(&self) -> Reporting {
        match self.takes_mcp_servers() || self.reports_by_exit() {
            true => Reporting::Mcp,
            false => Reporting::Cli,
        }
    }
}

/// Every agent CLI's project settings: what `review.toml`'s `protect` is when it does not say.
pub fn project_settings() -> Vec<String> {
    let mut paths: Vec<String> = Vec::new();
    for path in ADAPTERS.iter().flat_map(|a| a.project_settings()) {
        if !paths.iter().any(|p| p == path) {
            paths.push(path.to_string());
        }
    }
    paths
}

/// `names` as a sentence lists them: `a, b and c` (with `joining` "and").
pub fn in_words(names: &[&str], joining: &str) -> String {
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} {joining} {last}", rest.join(", ")),
        _ => names.join(""),
    }
}

/// A built-in profile's own values.
#[derive(Debug, Clone, Copy)]
pub struct BuiltIn {
    /// The program (`claude`), empty for a command given by the profile.
    pub program: &'static str,
    /// Workers are named this and a number (`cc1`).
    pub name_prefix: &'static str,
    /// Tools it may use without asking.
    pub allowed_tools: &'static [&'static str],
    /// Its permission mode.
    pub permission_mode: Option<&'static str>,
}

/// What of a CLI's state folder is the user's to give an agent: files and folders copied in.
#[derive(Debug, Clone, Copy)]
pub struct StateFolder {
    /// The folder's path under the home folder (`.claude`, `.config/x`), where the CLI looks
    /// by default.
    pub folder: &'static str,
    /// The variable that moves it (`CLAUDE_CONFIG_DIR`), when the CLI has one.
    pub variable: Option<&'static str>,
    /// Names in the user's folder that are copied: credentials, settings, instructions.
    pub names: &'static [&'static str],
    /// A file the CLI keeps beside the folder (in the home folder, or inside the folder when
    /// the variable moved it), given to the agent inside its folder.
    pub beside: Option<&'static str>,
}

/// Where the agent's own session is, when it has one Baton can name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentSession {
    /// A new session with this id (Claude Code's `--session-id`).
    New(String),
    /// Go on with this earlier session (Claude Code's `--resume`).
    Resume(String),
    /// The agent names its own (or has none).
    Unnamed,
}

/// What an adapter is given to make one attempt's command line: the profile's fields it may
/// use and the attempt's own.
#[derive(Debug, Clone, Copy)]
pub struct AgentRun<'a> {
    /// The program (found on `PATH`), or the shell command.
    pub command: &'a str,
    /// The profile's extra arguments, after Baton's own.
    pub args: &'a [String],
    pub model: Option<&'a str>,
    pub allowed_tools: &'a [String],
    pub permission_mode: Option<&'a str>,
    /// Tool calls not allowed go to Baton's permission prompt.
    pub approvals: bool,
    pub max_turns: Option<u64>,
    /// What is left of the task's cost cap.
    pub budget_left_usd: Option<f64>,
    pub prompt: &'a str,
    pub session: &'a AgentSession,
    /// The `baton` program and the arguments of the agent's Baton MCP server.
    pub baton: &'a Path,
    pub mcp_args: &'a [&'static str],
    pub workdir: &'a Path,
    /// The attempt's environment so far (Baton's variables for it).
    pub env: &'a [(String, String)],
}

/// One attempt's command line, as an adapter makes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandLine {
    pub program: String,
    pub args: Vec<String>,
    /// Variables the CLI is given for the run (before the profile's `env`, which may change
    /// them).
    pub env: Vec<(String, String)>,
    /// The task is given as `worker loop` gives a command: in its environment
    /// (`BATON_TASK_*`) and as JSON on its standard input.
    pub task_on_stdin: bool,
}

impl CommandLine {
    /// `program` with `args`, nothing on its standard input.
    fn of(program: &str, args: Vec<String>) -> CommandLine {
        CommandLine {
            program: program.to_string(),
            args,
            env: Vec::new(),
            task_on_stdin: false,
        }
    }
}

/// A profile's agent CLI: one of [`ADAPTERS`], named in profiles by its name.
#[derive(Clone, Copy)]
pub struct AgentKind(&'static dyn AgentCli);

impl AgentKind {
    /// A shell command, as `worker loop` runs one: the kind of a profile made for a command.
    pub const COMMAND: AgentKind = AgentKind(&exec::Exec);

    /// The adapter named `name`.
    pub fn named(name: &str) -> Option<AgentKind> {
        ADAPTERS
            .iter()
            .find(|a| a.name() == name)
            .map(|a| AgentKind(*a))
    }

    /// Every kind, in [`ADAPTERS`]' order.
    pub fn all() -> impl Iterator<Item = AgentKind> {
        ADAPTERS.iter().map(|a| AgentKind(*a))
    }

    /// The names of every kind, as a profile's error lists them (`claude, codex or exec`).
    pub fn names_in_words() -> String {
        let names: Vec<&str> = ADAPTERS.iter().map(|a| a.name()).collect();
        in_words(&names, "or")
    }
}

impl std::ops::Deref for AgentKind {
    type Target = dyn AgentCli;

    fn deref(&self) -> &Self::Target {
        self.0
    }
}

impl PartialEq for AgentKind {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name()
    }
}

impl Eq for AgentKind {}

impl fmt::Debug for AgentKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for AgentKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl serde::Serialize for AgentKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for AgentKind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        AgentKind::named(&name).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "unknown agent kind {name:?}: it is {}",
                AgentKind::names_in_words()
            ))
        })
    }
}

impl schemars::JsonSchema for AgentKind {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "AgentKind".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let names: Vec<&str> = ADAPTERS.iter().map(|a| a.name()).collect();
        schemars::json_schema!({
            "type": "string",
            "enum": names,
            "description": "The agent CLI a profile runs.",
        })
    }
}

/// A random version 4 UUID, for a new agent session's id.
pub fn new_session_id() -> String {
    use std::io::Read;
    let mut bytes = [0u8; 16];
    if std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .is_err()
    {
        // No /dev/urandom: the clock and the process id, still unique enough for a name.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        bytes = (nanos ^ (u128::from(std::process::id()) << 64)).to_le_bytes();
    }
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

#[cfg(test)]
pub(crate) mod testing {
    //! What the adapters' tests share: a reader fed lines, and a launch to vary.

    use std::path::Path;

    pub use super::AgentRun;
    use super::{AgentKind, AgentSession, OutputReader};
    use baton_core::Happened;
    use baton_core::transcript::Stream;

    /// The reader of kind `kind` after `lines` on standard output, and the events they made.
    pub fn read(kind: &str, lines: &[&str]) -> (OutputReader, Vec<Happened>) {
        let mut reader = OutputReader::new(AgentKind::named(kind).unwrap());
        let events = lines
            .iter()
            .flat_map(|l| reader.line(l, Stream::Stdout))
            .collect();
        (reader, events)
    }

    /// Each event's kind, in a word.
    pub fn kinds_of(events: &[Happened]) -> Vec<&'static str> {
        events
            .iter()
            .map(|e| match e {
                Happened::Session { .. } => "session",
                Happened::ToolCall { .. } => "call",
                Happened::ToolResult { .. } => "result",
                Happened::Text { .. } => "text",
                Happened::Line { .. } => "line",
                Happened::Result { .. } => "final",
                _ => "other",
            })
            .collect()
    }

    /// A new attempt's launch with nothing in it but a prompt.
    pub fn run() -> AgentRun<'static> {
        AgentRun {
            command: "/usr/bin/agent",
            args: &[],
            model: None,
            allowed_tools: &[],
            permission_mode: None,
            approvals: false,
            max_turns: None,
            budget_left_usd: None,
            prompt: "the prompt",
            session: &AgentSession::Unnamed,
            baton: Path::new("/usr/bin/baton"),
            mcp_args: &["mcp", "--quiet"],
            workdir: Path::new("/work"),
            env: &[],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_are_version_4_uuids_and_differ() {
        let a = new_session_id();
        let b = new_session_id();
        assert_ne!(a, b);
        assert_eq!(a.len(), 36);
        assert_eq!(&a[14..15], "4", "{a}");
        assert!("89ab".contains(&a[19..20]), "{a}");
    }

    /// Until `review.toml` says otherwise, no landing changes the CLIs' project settings.
    #[test]
    fn the_clis_project_settings_are_protected_by_default() {
        let defaults = project_settings();
        for path in [".mcp.json", ".claude/", ".codex/", ".gemini/"] {
            assert!(defaults.iter().any(|p| p == path), "{path} in {defaults:?}");
        }
        let protected = baton_core::review::ReviewSettings::default()
            .protected(&defaults)
            .unwrap();
        assert!(protected.covers(".claude/settings.json"));
        assert!(protected.covers(".coordination/review.toml"));
        assert!(!protected.covers("src/main.rs"));
    }

    #[test]
    fn every_adapter_is_named_once_and_found_by_its_name() {
        let mut names: Vec<&str> = ADAPTERS.iter().map(|a| a.name()).collect();
        for name in &names {
            assert_eq!(AgentKind::named(name).map(|k| k.name()), Some(*name));
        }
        names.sort();
        names.dedup();
        assert_eq!(names.len(), ADAPTERS.len(), "two adapters share a name");
        assert!(AgentKind::named("cobol").is_none());
    }

    #[test]
    fn a_kind_reads_and_writes_as_its_name_and_an_unknown_one_is_named() {
        let kind: AgentKind = serde_json::from_str("\"codex\"").unwrap();
        assert_eq!(serde_json::to_string(&kind).unwrap(), "\"codex\"");
        let error = serde_json::from_str::<AgentKind>("\"cobol\"").unwrap_err();
        assert!(
            error.to_string().contains("unknown agent kind \"cobol\""),
            "{error}"
        );
        assert!(error.to_string().contains("claude, codex"), "{error}");
    }

    /// The Gemini CLI, which Baton gives no MCP server, reports through the `baton` command;
    /// Claude Code through its MCP tools.
    #[test]
    fn an_adapter_without_mcp_servers_reports_through_the_cli() {
        assert_eq!(
            AgentKind::named("gemini").unwrap().reporting(),
            Reporting::Cli
        );
        assert_eq!(
            AgentKind::named("claude").unwrap().reporting(),
            Reporting::Mcp
        );
    }
}
