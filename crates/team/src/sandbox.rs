//! The boundary every supervised attempt runs in: bubblewrap (Debian's `bubblewrap`, what
//! Claude Code and Codex use on Linux), with no namespace code of Baton's own.
//!
//! - **Processes:** its own PID namespace, IPC and host name; no capabilities. When the attempt
//!   ends, is stopped or crosses its budget, the namespace's first process dies and the kernel
//!   ends everything in it: no process outlives the attempt, whatever group or session it
//!   made, and nothing in it sees or signals the supervisor, other agents or other processes.
//! - **Writes:** the task's worktree; of the shared repository only what committing on the
//!   task's own branch needs ([`baton_git::GitAccess`]: never hooks, config, other refs or
//!   other worktrees); a private `/tmp`; the agent CLI's own state folders; and what the
//!   profile's `sandbox.write` names. Everything else is read-only.
//! - **Reads:** the system, toolchains and the project. The home folder is replaced by an empty
//!   one: only the agent CLI's state, toolchains (`~/.cargo`, `~/.rustup`, …), git's identity,
//!   the folders on `PATH` and the profile's `sandbox.read` are shown in it, so `~/.ssh`,
//!   `~/.aws`, `~/.config/gh`, `~/.pgpass` and the rest are not there.
//! - **Network:** shared with the machine, or none (`sandbox.network = false`).
//!
//! Not yet: `.coordination/` stays writable in the sandbox (the agent's `baton` reaches the
//! folder store there; a socket per attempt that speaks for the agent replaces it), and the
//! network has no allow-list proxy.

use std::path::{Path, PathBuf};
use std::process::Command;

use baton_git::GitAccess;

use crate::process::Launch;
use crate::profile::AgentKind;

/// The sandbox program.
pub const BWRAP: &str = "bwrap";

/// Folders under the home folder an agent reads (toolchains and git's identity), when they
/// exist.
const HOME_READS: [&str; 12] = [
    ".cargo",
    ".rustup",
    ".local/bin",
    ".local/lib",
    ".local/share/pnpm",
    ".nvm",
    ".volta",
    ".pyenv",
    ".bun",
    "go",
    ".gitconfig",
    ".config/git",
];

/// What one attempt's sandbox lets its agent reach.
#[derive(Debug, Clone)]
pub struct Boundary {
    pub project_dir: PathBuf,
    /// The agent works in the project folder itself (no worktree), so it may change it.
    pub project_writable: bool,
    /// The project's `.coordination/` (writable for now; other tasks' worktrees are not).
    pub coordination: PathBuf,
    /// The task's worktree and what committing there needs, when it has one.
    pub worktree: Option<(PathBuf, GitAccess)>,
    pub kind: AgentKind,
    pub home: Option<PathBuf>,
    /// Further folders to read and to write (the profile's `sandbox.read`, `sandbox.write`).
    pub read: Vec<PathBuf>,
    pub write: Vec<PathBuf>,
    /// The machine's network, or none.
    pub network: bool,
    /// The project is kept in PostgreSQL: the agent's `baton` reaches it with the libpq
    /// variables (`PGPASSWORD`, `PGPASSFILE`, …) until a socket per attempt speaks for it.
    pub database: bool,
}

impl Boundary {
    /// `launch` run inside this boundary: the same command, started by bubblewrap.
    pub fn wrap(&self, launch: Launch) -> Launch {
        let mut args: Vec<String> = [
            "--die-with-parent",
            "--unshare-user",
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup-try",
            "--cap-drop",
            "ALL",
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--tmpfs",
            "/tmp",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        if !self.network {
            args.push("--unshare-net".into());
        }
        let mut mounts = Mounts::default();
        if let Some(home) = &self.home {
            mounts.add("--tmpfs", None, home);
            for name in HOME_READS {
                mounts.read(&home.join(name));
            }
            for dir in std::env::split_paths(&path_of(&launch)) {
                if dir.starts_with(home) {
                    mounts.read(&dir);
                }
            }
            for name in state_folders(self.kind) {
                mounts.write(&home.join(name));
            }
        }
        for path in &self.read {
            mounts.read(path);
        }
        for path in &self.write {
            mounts.write(path);
        }
        // The project again, whatever hid it (it may be under /tmp or the home folder), then
        // what of it the agent may change.
        match self.project_writable {
            true => mounts.write(&self.project_dir),
            false => mounts.read(&self.project_dir),
        }
        mounts.write(&self.coordination);
        mounts.read(&self.coordination.join("worktrees"));
        if let Some((worktree, git)) = &self.worktree {
            mounts.write(worktree);
            for dir in &git.writable {
                mounts.write(dir);
            }
            for (dir, at) in &git.private {
                mounts.add("--bind", Some(dir), at);
            }
            for file in &git.read_only {
                mounts.read(file);
            }
        }
        // The program itself, when it lives somewhere hidden.
        if let Some(installed) = installed_at(&launch) {
            mounts.read(&installed);
        }
        args.extend(mounts.args);
        args.extend(["--chdir".into(), launch.workdir.display().to_string()]);
        args.push("--".into());
        args.push(launch.program.display().to_string());
        args.extend(launch.args);
        let mut env: Vec<(String, String)> = std::env::vars()
            .filter(|(key, _)| passed_on(key, self.kind) || self.database && key.starts_with("PG"))
            .collect();
        env.extend(launch.env);
        Launch {
            program: PathBuf::from(BWRAP),
            args,
            env,
            sandbox: Some(self.summary()),
            ..launch
        }
    }

    /// The boundary in words, for the attempt's transcript.
    pub fn summary(&self) -> String {
        let writes = match (&self.worktree, self.project_writable) {
            (Some(_), _) => "its worktree and its own branch",
            (None, true) => "the project folder",
            (None, false) => "nothing of the project",
        };
        format!(
            "in a sandbox (bubblewrap): it writes {writes}{}; the home folder's secrets are hidden; {}; nothing it starts outlives the attempt",
            match self.write.is_empty() {
                true => String::new(),
                false => format!(" and {} more (sandbox.write)", self.write.len()),
            },
            match self.network {
                true => "the machine's network",
                false => "no network",
            }
        )
    }
}

/// Whether the supervisor's variable `key` reaches a sandboxed agent: what any program needs
/// (the locale, the terminal, the home folder and user), git's identity, Baton's own, and the
/// agent CLI's own (its API key and address). Nothing else: not `PGPASSWORD`, not a cloud's
/// keys, not tokens the user exported for themselves. A profile's `env` adds to these.
fn passed_on(key: &str, kind: AgentKind) -> bool {
    const ALWAYS: [&str; 12] = [
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "SHELL",
        "LANG",
        "TERM",
        "TZ",
        "COLORTERM",
        "NO_COLOR",
        "EDITOR",
        "PAGER",
    ];
    const PREFIXES: [&str; 4] = ["LC_", "BATON_", "GIT_AUTHOR_", "GIT_COMMITTER_"];
    let own: &[&str] = match kind {
        AgentKind::Claude => &["ANTHROPIC_", "CLAUDE_"],
        AgentKind::Codex => &["OPENAI_", "CODEX_"],
        AgentKind::Gemini => &["GEMINI_", "GOOGLE_"],
        AgentKind::Exec => &[],
    };
    ALWAYS.contains(&key)
        || PREFIXES
            .iter()
            .chain(own)
            .any(|prefix| key.starts_with(prefix))
}

/// The agent CLI's own state under the home folder, writable so its sessions resume.
fn state_folders(kind: AgentKind) -> &'static [&'static str] {
    match kind {
        AgentKind::Claude => &[".claude", ".claude.json", ".config/claude"],
        AgentKind::Codex => &[".codex"],
        AgentKind::Gemini => &[".gemini"],
        AgentKind::Exec => &[],
    }
}

/// Where the program `launch` runs is installed: its whole `node_modules` when it is an npm
/// package's (Claude Code's and Codex's launchers load files beside them), else its folder.
fn installed_at(launch: &Launch) -> Option<PathBuf> {
    let program = if launch.program.components().count() > 1 {
        launch.program.clone()
    } else {
        std::env::split_paths(&path_of(launch))
            .map(|dir| dir.join(&launch.program))
            .find(|candidate| candidate.is_file())?
    };
    let real = std::fs::canonicalize(program).ok()?;
    real.ancestors()
        .find(|dir| dir.file_name().is_some_and(|n| n == "node_modules"))
        .or_else(|| real.parent())
        .map(Path::to_path_buf)
}

/// The `PATH` the agent is given.
fn path_of(launch: &Launch) -> std::ffi::OsString {
    launch
        .env
        .iter()
        .rev()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.into())
        .or_else(|| std::env::var_os("PATH"))
        .unwrap_or_default()
}

/// bubblewrap's mount options, each only for a path that exists (a mount needs its source),
/// in order: a later one covers an earlier one.
#[derive(Default)]
struct Mounts {
    args: Vec<String>,
}

impl Mounts {
    fn read(&mut self, path: &Path) {
        if path.is_absolute() && path.exists() {
            self.add("--ro-bind", Some(path), path);
        }
    }

    fn write(&mut self, path: &Path) {
        if path.is_absolute() && path.exists() {
            self.add("--bind", Some(path), path);
        }
    }

    fn add(&mut self, option: &str, from: Option<&Path>, at: &Path) {
        self.args.push(option.into());
        if let Some(from) = from {
            self.args.push(from.display().to_string());
        }
        self.args.push(at.display().to_string());
    }
}

/// Whether sandboxes can be made here: bubblewrap is installed and may make the namespaces it
/// needs. The error says what to install or enable.
pub fn check_available() -> Result<(), String> {
    let out = Command::new(BWRAP)
        .args([
            "--unshare-user",
            "--unshare-pid",
            "--die-with-parent",
            "--ro-bind",
            "/",
            "/",
            "--proc",
            "/proc",
            "true",
        ])
        .output();
    match out {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(
            "bubblewrap (bwrap) is not installed: `sudo apt-get install bubblewrap` (Debian, \
             Ubuntu), or run without a sandbox: `--no-sandbox`"
                .into(),
        ),
        Err(e) => Err(format!("cannot run bwrap: {e}")),
        Ok(out) if out.status.success() => Ok(()),
        Ok(out) => Err(format!(
            "bwrap cannot make a sandbox here: {}. Enable unprivileged user namespaces \
             (`sysctl kernel.unprivileged_userns_clone=1`; on Ubuntu 24.04 also \
             `kernel.apparmor_restrict_unprivileged_userns=0`), or run without a sandbox: \
             `--no-sandbox`",
            String::from_utf8_lossy(&out.stderr).trim()
        )),
    }
}

/// `launch` for task `task` worked by `crew` (in `worktree`, when it has one): inside the
/// profile's sandbox when it has one on, as it is otherwise.
pub(crate) fn contain(
    crew: &crate::crew::Crew<'_>,
    task: &str,
    worktree: Option<&baton_git::Worktree>,
    launch: Launch,
) -> crate::error::Result<Launch> {
    let settings = &crew.profile.sandbox;
    if !settings.enabled {
        return Ok(launch);
    }
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute() && h != Path::new("/"));
    let expand = |paths: &[String]| -> Vec<PathBuf> {
        paths
            .iter()
            .map(|p| crate::profile::SandboxSettings::expand(p, home.as_deref()))
            .collect()
    };
    let worktree = match (worktree, &crew.worktrees) {
        (Some(worktree), Some(worktrees)) => {
            Some((worktree.path.clone(), worktrees.sandbox_access(task)?))
        }
        _ => None,
    };
    let boundary = Boundary {
        project_dir: crew.local.project_dir().to_path_buf(),
        project_writable: worktree.is_none(),
        coordination: crew.local.root().to_path_buf(),
        worktree,
        kind: crew.profile.kind,
        read: expand(&settings.read),
        write: expand(&settings.write),
        home,
        network: settings.network,
        database: crew.local.pointer_file().is_file()
            || crew
                .setting
                .store_env
                .iter()
                .any(|(k, _)| k == "BATON_STORE"),
    };
    Ok(boundary.wrap(launch))
}
