//! Agent profiles: what a worker runs for a task, declared once. Each agent CLI's adapter has
//! a built-in profile of its name (`claude`, `codex`, …, `exec`: [`crate::agent_cli::ADAPTERS`]);
//! a project adds its own or changes the built-ins in `.coordination/team/profiles.toml`, a
//! table per profile:
//!
//! ```toml
//! [profiles.claude]            # changes the built-in: only the fields given
//! allowed_tools = ["Bash", "Read", "Edit", "Write", "mcp__baton"]
//! max_cost_usd = 2.0
//!
//! [profiles.codex.price]       # USD per million tokens, for an agent that reports no cost
//! input = 1.25
//! cached_input = 0.125
//! output = 10.0
//!
//! [profiles.tests]             # a new profile
//! kind = "exec"
//! command = "cargo test --workspace"
//! ```
//!
//! A profile is checked whole before any claim: an unknown field, a bad value or a program
//! that is not installed is a clear error naming what to fix or install.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use baton_core::{ErrorKind, Layout};
use serde::{Deserialize, Serialize};

use crate::error::{Result, TeamError};
pub use baton_core::network::Network;

pub use crate::agent_cli::{AgentKind, Price};

/// One profile, with every field settled.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Profile {
    pub name: String,
    pub kind: AgentKind,
    /// The program (`claude`, a path), or for `exec` the shell command.
    pub command: String,
    /// Extra arguments after Baton's own.
    pub args: Vec<String>,
    /// The model, when the agent takes one (`--model`).
    pub model: Option<String>,
    /// Tools the agent may use without asking (Claude Code's `--allowedTools`).
    pub allowed_tools: Vec<String>,
    /// Claude Code's `--permission-mode`.
    pub permission_mode: Option<String>,
    /// Give the agent a browser: its Baton MCP server is `baton mcp --proxy`, which serves
    /// Playwright MCP's tools beside Baton's and launches Chromium at their first use (inside
    /// the agent's sandbox when it has one). Claude Code and Codex, whose MCP servers Baton
    /// configures.
    pub browser: bool,
    /// Put every tool call not in `allowed_tools` to Baton's permission prompt
    /// (`mcp__baton__approve_tool_call`): the project's policy allows or refuses it, or the
    /// lead answers. On for Claude Code when the project has a policy
    /// (`.coordination/policy.toml`).
    pub approvals: bool,
    /// Extra environment variables for the agent.
    pub env: BTreeMap<String, String>,
    /// Work each task in its own git worktree (when the project is a git repository).
    pub worktree: bool,
    /// Attempts at one task before it is failed (a crash starts another).
    pub max_attempts: u32,
    /// The wait before the first restart; doubled for each further one.
    pub backoff_secs: f64,
    /// Start another attempt when the agent exits without reporting the task, instead of
    /// failing it at once.
    pub retry_unreported: bool,
    /// Caps for one task (all attempts): crossing one stops the agent and fails the task.
    pub max_cost_usd: Option<f64>,
    pub max_turns: Option<u64>,
    pub max_minutes: Option<f64>,
    /// How long an agent may go on running once it has reported its task (done, failed or
    /// handed back) before it is stopped: the work is over, and a worker is not held by an
    /// agent that lingers.
    pub grace_after_report_secs: f64,
    /// The most one attempt's transcript keeps (MiB); later output is counted, not kept, and
    /// the transcript says so.
    pub max_transcript_mb: f64,
    /// What the model's tokens cost, for an agent that reports tokens but no cost (Codex, the
    /// Gemini CLI); without it their cost is 0 and only turns and minutes cap them.
    pub price: Option<Price>,
    /// Worker names are this and a number (`cc1`, `cc2`).
    pub name_prefix: String,
    /// The sandbox its attempts run in ([`crate::sandbox`]).
    pub sandbox: SandboxSettings,
}

pub use crate::sandbox_settings::SandboxSettings;

/// A profile as a file declares it: every field optional, merged over a built-in.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Declared {
    kind: Option<AgentKind>,
    command: Option<String>,
    args: Option<Vec<String>>,
    model: Option<String>,
    allowed_tools: Option<Vec<String>>,
    permission_mode: Option<String>,
    browser: Option<bool>,
    approvals: Option<bool>,
    env: Option<BTreeMap<String, String>>,
    worktree: Option<bool>,
    max_attempts: Option<u32>,
    backoff_secs: Option<f64>,
    retry_unreported: Option<bool>,
    max_cost_usd: Option<f64>,
    max_turns: Option<u64>,
    max_minutes: Option<f64>,
    grace_after_report_secs: Option<f64>,
    max_transcript_mb: Option<f64>,
    price: Option<Price>,
    name_prefix: Option<String>,
    sandbox: Option<SandboxSettings>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProfilesFile {
    #[serde(default)]
    profiles: BTreeMap<String, Declared>,
}

/// The file a project's profiles are declared in.
pub fn profiles_file(layout: &Layout) -> PathBuf {
    layout.team_dir().join("profiles.toml")
}

/// The built-in profile of the agent CLI `kind`.
fn builtin(kind: AgentKind) -> Profile {
    let own = kind.built_in();
    Profile {
        name: kind.name().to_string(),
        kind,
        command: own.program.to_string(),
        args: Vec::new(),
        model: None,
        allowed_tools: own.allowed_tools.iter().map(|t| t.to_string()).collect(),
        permission_mode: own.permission_mode.map(str::to_string),
        browser: false,
        approvals: false,
        env: BTreeMap::new(),
        worktree: true,
        max_attempts: 3,
        backoff_secs: 2.0,
        retry_unreported: false,
        max_cost_usd: None,
        max_turns: None,
        // An agent that never ends is stopped after two hours, a command too (`worker loop`,
        // which the user runs, has no cap).
        max_minutes: Some(120.0),
        grace_after_report_secs: DEFAULT_GRACE_AFTER_REPORT_SECS,
        max_transcript_mb: DEFAULT_MAX_TRANSCRIPT_MB,
        price: None,
        name_prefix: own.name_prefix.to_string(),
        sandbox: SandboxSettings::default(),
    }
}

impl Profile {
    /// The profile of `baton worker loop`: `command` run once per task, its exit status the
    /// task's report (no retries, no caps), in a worktree per task when asked.
    pub fn for_command(command: &str, worktree: bool) -> Profile {
        let mut profile = builtin(AgentKind::COMMAND);
        profile.command = command.to_string();
        profile.worktree = worktree;
        profile.max_attempts = 1;
        // The user's own command in the user's own terminal (`baton worker loop`), not an
        // agent a supervisor runs unattended: as the user, like any command they start.
        profile.sandbox.enabled = false;
        // Nor capped in time: it runs as long as the user's command takes, and may go on for
        // the longest grace there is after it reported.
        profile.max_minutes = None;
        profile.grace_after_report_secs = MAX_GRACE_AFTER_REPORT_SECS;
        profile
    }
}

impl Declared {
    fn over(self, base: Profile) -> Profile {
        Profile {
            name: base.name,
            kind: self.kind.unwrap_or(base.kind),
            command: self.command.unwrap_or(base.command),
            args: self.args.unwrap_or(base.args),
            model: self.model.or(base.model),
            allowed_tools: self.allowed_tools.unwrap_or(base.allowed_tools),
            permission_mode: self.permission_mode.or(base.permission_mode),
            browser: self.browser.unwrap_or(base.browser),
            approvals: self.approvals.unwrap_or(base.approvals),
            env: self.env.unwrap_or(base.env),
            worktree: self.worktree.unwrap_or(base.worktree),
            max_attempts: self.max_attempts.unwrap_or(base.max_attempts),
            backoff_secs: self.backoff_secs.unwrap_or(base.backoff_secs),
            retry_unreported: self.retry_unreported.unwrap_or(base.retry_unreported),
            max_cost_usd: self.max_cost_usd.or(base.max_cost_usd),
            max_turns: self.max_turns.or(base.max_turns),
            max_minutes: self.max_minutes.or(base.max_minutes),
            grace_after_report_secs: self
                .grace_after_report_secs
                .unwrap_or(base.grace_after_report_secs),
            max_transcript_mb: self.max_transcript_mb.unwrap_or(base.max_transcript_mb),
            price: self.price.or(base.price),
            name_prefix: self.name_prefix.unwrap_or(base.name_prefix),
            sandbox: self.sandbox.unwrap_or(base.sandbox),
        }
    }
}

/// Every profile the project has: the built-ins with the file's changes, and the file's own.
pub fn load_profiles(layout: &Layout) -> Result<BTreeMap<String, Profile>> {
    let path = profiles_file(layout);
    let declared = match std::fs::read_to_string(&path) {
        Ok(text) => {
            toml::from_str::<ProfilesFile>(&text)
                .map_err(|e| TeamError::profile(&path, e.to_string()))?
                .profiles
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => BTreeMap::new(),
        Err(e) => return Err(baton_core::StoreError::io(&path, e).into()),
    };
    let governed = baton_core::policy::policy_path(layout.root()).is_file();
    let base_of = |kind: AgentKind| under_policy(builtin(kind), governed);
    let mut profiles: BTreeMap<String, Profile> = AgentKind::all()
        .map(|kind| (kind.name().to_string(), base_of(kind)))
        .collect();
    for (name, declared) in declared {
        baton_core::names::validate_name("profile name", &name)?;
        let base = match profiles.remove(&name) {
            Some(base) => base,
            None => {
                let Some(kind) = declared.kind else {
                    return Err(TeamError::profile(
                        &path,
                        format!(
                            "profile {name:?} is not built in, so it needs a `kind` ({})",
                            AgentKind::names_in_words()
                        ),
                    ));
                };
                let mut base = base_of(kind);
                base.name = name.clone();
                base
            }
        };
        let profile = declared.over(base);
        check(&profile).map_err(|message| TeamError::profile(&path, message))?;
        profiles.insert(name, profile);
    }
    Ok(profiles)
}

/// A built-in profile in a project with an approval policy: an agent whose permission prompt
/// Baton answers may use what its adapter allows unasked, and everything else goes to the
/// prompt.
fn under_policy(mut profile: Profile, governed: bool) -> Profile {
    if let Some(tools) = profile.kind.under_policy().filter(|_| governed) {
        profile.approvals = true;
        // A mode that passes commands unasked (Claude Code's acceptEdits would pass `touch`,
        // `rm`, `mv` in the working folder): under a policy, the policy decides them.
        profile.permission_mode = None;
        profile.allowed_tools = tools.iter().map(|t| t.to_string()).collect();
    }
    profile
}

/// The values a profile may not have, in words.
fn check(profile: &Profile) -> std::result::Result<(), String> {
    let name = &profile.name;
    baton_sandbox::net::AllowList::parse(&profile.sandbox.allow)
        .map_err(|e| format!("profile {name:?}: {e}"))?;
    if profile.max_attempts == 0 || profile.max_attempts > 20 {
        return Err(format!(
            "profile {name:?}: max_attempts must be 1 to 20 (it is {})",
            profile.max_attempts
        ));
    }
    if !(0.0..=MAX_GRACE_AFTER_REPORT_SECS).contains(&profile.grace_after_report_secs) {
        return Err(format!(
            "profile {name:?}: grace_after_report_secs must be 0 to 3600 (it is {})",
            profile.grace_after_report_secs
        ));
    }
    if !(0.0..=3600.0).contains(&profile.backoff_secs) {
        return Err(format!(
            "profile {name:?}: backoff_secs must be 0 to 3600 (it is {})",
            profile.backoff_secs
        ));
    }
    for (field, value) in [
        ("max_cost_usd", profile.max_cost_usd),
        ("max_minutes", profile.max_minutes),
        ("max_transcript_mb", Some(profile.max_transcript_mb)),
    ] {
        if value.is_some_and(|v| !(v > 0.0 && v.is_finite())) {
            return Err(format!(
                "profile {name:?}: {field} must be a positive number"
            ));
        }
    }
    if let Some(price) = &profile.price {
        let rates = [Some(price.input), Some(price.output), price.cached_input];
        if rates
            .into_iter()
            .flatten()
            .any(|r| !(r >= 0.0 && r.is_finite()))
        {
            return Err(format!(
                "profile {name:?}: price rates (USD per million tokens) must be numbers of 0 or more"
            ));
        }
    }
    if profile.browser && !profile.kind.takes_mcp_servers() {
        let configured: Vec<&str> = AgentKind::all()
            .filter(|k| k.takes_mcp_servers())
            .map(|k| k.name())
            .collect();
        return Err(format!(
            "profile {name:?}: browser = true configures the agent's Baton MCP server, which \
             Baton does for kinds {} only (this one is {}); its agent can start \
             `baton mcp --proxy` itself",
            crate::agent_cli::in_words(&configured, "and"),
            profile.kind
        ));
    }
    if profile.max_turns == Some(0) {
        return Err(format!("profile {name:?}: max_turns must be at least 1"));
    }
    baton_core::names::validate_agent_id(&format!("{}1", profile.name_prefix)).map_err(|_| {
        format!(
            "profile {name:?}: name_prefix {:?} does not make a valid agent name",
            profile.name_prefix
        )
    })?;
    Ok(())
}

/// The profile `name`, with an `exec` command given on the command line, checked and with its
/// program found on `PATH`: everything that can be wrong with it is said before any claim.
pub fn resolve(layout: &Layout, name: &str, exec: Option<&str>) -> Result<Profile> {
    let profiles = load_profiles(layout)?;
    let mut profile = profiles.get(name).cloned().ok_or_else(|| {
        let known: Vec<&str> = profiles.keys().map(String::as_str).collect();
        TeamError::new(
            ErrorKind::UnknownProfile,
            format!(
                "no agent profile {name:?}; known: {} (declare others in {})",
                known.join(", "),
                profiles_file(layout).display()
            ),
        )
    })?;
    if let Some(exec) = exec {
        if !profile.kind.runs_shell_command() {
            return Err(TeamError::new(
                ErrorKind::InvalidArguments,
                format!(
                    "--exec runs a command; profile {name:?} runs {}",
                    profile.kind
                ),
            ));
        }
        profile.command = exec.to_string();
    }
    if profile.command.trim().is_empty() {
        return Err(TeamError::new(
            ErrorKind::InvalidArguments,
            format!("profile {name:?} has no command: give one with --exec 'COMMAND'"),
        ));
    }
    if !profile.kind.runs_shell_command() {
        let found = baton_fs::find_program(&profile.command, None).ok_or_else(|| {
            TeamError::new(
                ErrorKind::AgentNotInstalled,
                format!(
                    "profile {name:?} runs `{}`, which is not installed or not on PATH: {} (or set `command` in {})",
                    profile.command,
                    profile.kind.install_hint(),
                    profiles_file(layout).display()
                ),
            )
        })?;
        profile.command = found.display().to_string();
    }
    Ok(profile)
}

/// How long an agent may run on after it reported its task, unless its profile says.
pub const DEFAULT_GRACE_AFTER_REPORT_SECS: f64 = 60.0;
/// The longest grace a profile may give.
pub const MAX_GRACE_AFTER_REPORT_SECS: f64 = 3600.0;
/// What one attempt's transcript keeps at most unless its profile says (MiB).
pub const DEFAULT_MAX_TRANSCRIPT_MB: f64 = 64.0;

impl Profile {
    /// How long an agent may run on after it reported its task.
    pub fn grace_after_report(&self) -> Duration {
        Duration::from_secs_f64(self.grace_after_report_secs)
    }

    /// The most one attempt's transcript keeps, in bytes.
    pub fn max_transcript_bytes(&self) -> u64 {
        (self.max_transcript_mb * 1024.0 * 1024.0) as u64
    }

    /// The longest an attempt may run, from `max_minutes`.
    pub fn max_wall(&self) -> Option<Duration> {
        self.max_minutes.map(|m| Duration::from_secs_f64(m * 60.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout_with(text: &str) -> (tempfile::TempDir, Layout) {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::for_project(dir.path());
        std::fs::create_dir_all(layout.team_dir()).unwrap();
        std::fs::write(profiles_file(&layout), text).unwrap();
        (dir, layout)
    }

    #[test]
    fn a_file_changes_a_built_in_field_by_field_and_adds_its_own() {
        let (_dir, layout) = layout_with(
            "[profiles.claude]\nmax_cost_usd = 2.5\n\n[profiles.tests]\nkind = \"exec\"\ncommand = \"make test\"\n",
        );
        let profiles = load_profiles(&layout).unwrap();
        let claude = &profiles["claude"];
        assert_eq!(claude.max_cost_usd, Some(2.5));
        assert_eq!(claude.permission_mode.as_deref(), Some("acceptEdits"));
        assert!(claude.allowed_tools.contains(&"mcp__baton".to_string()));
        assert_eq!(profiles["tests"].kind, AgentKind::COMMAND);
        assert_eq!(profiles["tests"].command, "make test");
        assert_eq!(profiles["tests"].name_prefix, "ex");
    }

    #[test]
    fn a_policy_puts_claude_under_approvals_unless_a_profile_says_otherwise() {
        let (_dir, layout) = layout_with("[profiles.free]\nkind = \"claude\"\napprovals = false\n");
        assert!(
            !load_profiles(&layout).unwrap()["claude"].approvals,
            "no policy, no approvals"
        );
        std::fs::write(layout.root().join("policy.toml"), "allow = []\n").unwrap();
        let profiles = load_profiles(&layout).unwrap();
        let claude = &profiles["claude"];
        assert!(claude.approvals);
        assert_eq!(
            claude.permission_mode, None,
            "acceptEdits would pass rm and touch unasked"
        );
        assert!(
            !claude.allowed_tools.contains(&"Bash".to_string()),
            "{:?}",
            claude.allowed_tools
        );
        assert!(!profiles["free"].approvals);
        assert!(!profiles["exec"].approvals);
    }

    #[test]
    fn bad_profiles_are_refused_naming_the_file_and_the_field() {
        for (text, expected) in [
            (
                "[profiles.claude]\nmax_atempts = 2\n",
                "unknown field `max_atempts`",
            ),
            (
                "[profiles.claude]\nmax_attempts = 0\n",
                "max_attempts must be 1 to 20",
            ),
            ("[profiles.mine]\ncommand = \"x\"\n", "needs a `kind`"),
            (
                "[profiles.claude]\nmax_cost_usd = -1.0\n",
                "max_cost_usd must be a positive",
            ),
            ("[profiles.claude]\nname_prefix = \"a b\"\n", "name_prefix"),
            (
                "[profiles.exec]\nbrowser = true\n",
                "only (this one is exec)",
            ),
            ("[profiles\n", "profiles.toml"),
        ] {
            let (_dir, layout) = layout_with(text);
            let err = load_profiles(&layout).unwrap_err().to_string();
            assert!(err.contains(expected), "{text:?}: {err}");
            assert!(err.contains("profiles.toml"), "{err}");
        }
    }

    #[test]
    fn an_unknown_profile_and_a_missing_program_say_what_to_do() {
        let (_dir, layout) = layout_with("[profiles.claude]\ncommand = \"/nonexistent/claude\"\n");
        let err = resolve(&layout, "cluade", None).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::UnknownProfile);
        assert!(
            err.to_string()
                .contains("known: claude, codex, exec, gemini"),
            "{err}"
        );
        let err = resolve(&layout, "claude", None).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::AgentNotInstalled);
        assert!(
            err.to_string()
                .contains("npm install -g @anthropic-ai/claude-code"),
            "{err}"
        );
        let err = resolve(&layout, "exec", None).unwrap_err();
        assert!(err.to_string().contains("--exec"), "{err}");
        assert_eq!(
            resolve(&layout, "exec", Some("true")).unwrap().command,
            "true"
        );
    }
}
