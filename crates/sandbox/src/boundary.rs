//! The boundary a program runs in: bubblewrap (Debian's `bubblewrap`, what Claude Code and
//! Codex use on Linux), with no namespace code of its own.
//!
//! - **Processes:** its own PID namespace, IPC and host name; no capabilities. When the
//!   program's first process dies, the kernel ends everything in the namespace: nothing
//!   outlives it, whatever group or session it made, and nothing in it sees or signals the
//!   processes outside.
//! - **Writes:** what [`Boundary`] names writable (a worktree, the binds its version control
//!   needs, folders bound where the program looks for them, `write`); a private `/tmp`.
//!   Everything else is read-only.
//! - **Reads:** the system, toolchains and the project. The home folder is replaced by an empty
//!   one: only toolchains (`~/.cargo`, `~/.rustup`, …), git's identity, the folders on `PATH`
//!   and `read` are shown in it, and credential files in what is shown are bound over with an
//!   empty file, so `~/.ssh`, `~/.aws`, `~/.config/gh`, `~/.pgpass` and the rest are not there.
//!   The host's runtime folders (`/run`, its sockets) are empty.
//! - **Network:** by default a namespace of its own with only loopback in it, and an HTTP
//!   proxy outside ([`crate::net::proxy`]) that reaches an allow-list; or none, or the
//!   machine's. Where it has a network of its own, no Unix sockets either
//!   ([`crate::seccomp`]), unless allowed.
//! - **Environment:** an allow-list of the caller's variables (the locale, the terminal, the
//!   home folder and user, git's identity, the prefixes the caller names), and the command's.

use crate::mounts::Mounts;
use std::path::{Path, PathBuf};

/// The sandbox program.
pub const BWRAP: &str = "bwrap";

/// Folders under the home folder a program reads (toolchains and git's identity), when they
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

/// What a sandbox lets its program reach.
#[derive(Debug, Clone)]
pub struct Boundary {
    pub project_dir: PathBuf,
    /// The program works in the project folder itself (no worktree), so it may change it.
    pub project_writable: bool,
    /// A folder of the project hidden from the program: empty and read-only, with what is
    /// bound into it (a worktree inside it) shown again.
    pub hidden: Option<PathBuf>,
    /// The worktree the program works in, writable, and what its version control needs.
    pub worktree: Option<PathBuf>,
    pub binds: Binds,
    pub home: Option<PathBuf>,
    /// Folders of the caller's bound writable where the program looks for them: (folder,
    /// where).
    pub own: Vec<(PathBuf, PathBuf)>,
    /// Further folders to read and to write.
    pub read: Vec<PathBuf>,
    pub write: Vec<PathBuf>,
    /// The program's network: through a proxy (with the loopback ports it forwards), none, or
    /// the machine's.
    pub network: NetworkAccess,
    /// The prefixes of further variables of the caller's the program is given (its own
    /// settings, its API key).
    pub pass_prefixes: Vec<&'static str>,
    /// Further variables of the caller's environment the program is given (by name).
    pub pass: Vec<String>,
    /// A folder shown read-only at a place inside: (folder, where). Its sockets are reached
    /// (a `connect` needs no write), and nothing can be left in it.
    pub shown: Option<(PathBuf, PathBuf)>,
    /// A socket inside bridged from a port of the sandbox's own loopback, so the program needs
    /// no Unix socket to reach it: (socket inside, port).
    pub bridge: Option<(PathBuf, u16)>,
    /// The program may make Unix sockets: off by default where the sandbox has a network of
    /// its own, since a socket shown anywhere in its view of the machine reaches a host
    /// service ([`crate::seccomp`]).
    pub unix_sockets: bool,
    /// The program whose hidden command is the first inside ([`crate::inside`]).
    pub starter: PathBuf,
    /// At most this many processes (threads count) at once: `RLIMIT_NPROC` inside, and the
    /// run's pids cgroup when it has one.
    pub max_processes: u32,
    /// The most its private `/tmp` holds (bytes) and the files a process may have open.
    pub tmp_bytes: u64,
    pub max_open_files: u32,
    /// The run's pids cgroup ([`crate::pids_cgroup`]), when it has one.
    pub cgroup: Option<CgroupEntry>,
    /// What else a reader should know of it, said after what it hides ("Baton is reached
    /// through the attempt's door").
    pub notes: Vec<String>,
}

/// What of a shared repository a worktree's program writes or reads, beside the worktree.
#[derive(Debug, Clone, Default)]
pub struct Binds {
    /// Writable as they are.
    pub writable: Vec<PathBuf>,
    /// Writable folders shown at another path: (folder, where).
    pub private: Vec<(PathBuf, PathBuf)>,
    /// Files inside writable folders that stay read-only.
    pub read_only: Vec<PathBuf>,
    /// Folders shown read-only at another path (or the same): (folder, where), worktree or not.
    pub shown: Vec<(PathBuf, PathBuf)>,
    /// A folder made a scratch folder (a tmpfs) with these entries of it shown again
    /// read-only, before the rest: what is made there stays inside. (folder, its entries:
    /// each what is shown, and where in the folder.)
    pub scratch: Option<(PathBuf, Vec<(PathBuf, PathBuf)>)>,
}

/// A command to run inside a boundary.
#[derive(Debug, Clone)]
pub struct Command {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub workdir: PathBuf,
    /// Its variables, besides what the boundary passes on of the caller's.
    pub env: Vec<(String, String)>,
}

/// A command wrapped in its boundary: bubblewrap's, to run instead, with its whole
/// environment (nothing of the caller's is inherited), and what a reader is shown of it.
#[derive(Debug, Clone)]
pub struct Wrapped {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    /// The cgroup's `cgroup.procs` the run joins before it starts, when it joins one.
    pub cgroup: Option<PathBuf>,
    /// The boundary in words.
    pub summary: String,
    /// The command as it was given, for people (bubblewrap's options and the first command
    /// left out): its program and arguments.
    pub shown: (String, Vec<String>),
}

/// How a run comes to be in its pids cgroup.
#[derive(Debug, Clone)]
pub enum CgroupEntry {
    /// It joins it before it runs (this `cgroup.procs`).
    Join(PathBuf),
    /// It is born in it: the thread that starts it lives in it.
    Born,
}

impl Boundary {
    /// `launch` run inside this boundary: the same command, started by bubblewrap.
    pub fn wrap(&self, launch: Command) -> Wrapped {
        let mut args = self.namespaces();
        args.extend(self.mounts(&launch));
        args.extend(["--chdir".into(), launch.workdir.display().to_string()]);
        args.push("--".into());
        args.extend(self.first_command().words(&self.starter));
        let shown = (launch.program.display().to_string(), launch.args.clone());
        args.push(launch.program.display().to_string());
        args.extend(launch.args);
        let env = self.environment(launch.env);
        Wrapped {
            program: PathBuf::from(BWRAP),
            args,
            env,
            cgroup: match &self.cgroup {
                Some(CgroupEntry::Join(procs)) => Some(procs.clone()),
                _ => None,
            },
            summary: self.summary(),
            shown,
        }
    }

    /// bubblewrap's namespaces and the system's folders: everything read-only but a bounded
    /// `/tmp`, the host's runtime folders empty, its own network unless it has the machine's.
    fn namespaces(&self) -> Vec<String> {
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
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        // Its /tmp is memory: bounded.
        args.extend([
            "--size".to_string(),
            self.tmp_bytes.to_string(),
            "--tmpfs".to_string(),
            "/tmp".to_string(),
        ]);
        // The host's runtime folders hold its services' sockets (a database's, a container
        // engine's, the session's bus): not shown. What the system's name lookup needs of them
        // is shown again.
        for dir in crate::hidden::RUNTIME_DIRS {
            if std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir()) {
                args.extend(["--tmpfs".to_string(), dir.to_string()]);
            }
        }
        for file in crate::hidden::runtime_files_needed() {
            args.extend([
                "--ro-bind".to_string(),
                file.display().to_string(),
                file.display().to_string(),
            ]);
        }
        if !matches!(self.network, NetworkAccess::Machine) {
            args.push("--unshare-net".into());
        }
        args
    }

    /// What it shows, hides and binds, in order: a later mount covers an earlier one.
    fn mounts(&self, launch: &Command) -> Vec<String> {
        let mut mounts = Mounts::default();
        if let Some(home) = &self.home {
            mounts.add("--tmpfs", None, home);
            for name in HOME_READS {
                mounts.read(&home.join(name));
            }
            for dir in std::env::split_paths(&path_of(launch)) {
                if dir.starts_with(home) {
                    mounts.read(&dir);
                }
            }
        }
        // The caller's folders, where the program looks for them.
        for (folder, at) in &self.own {
            mounts.add("--bind", Some(folder), at);
        }
        for path in &self.read {
            mounts.read(path);
        }
        for path in &self.write {
            mounts.write(path);
        }
        // The program itself, when it lives somewhere hidden: before the project, so a folder
        // it shares with the project (a program beside it) does not make the project read-only.
        if let Some(installed) = installed_at(launch, self.home.as_deref()) {
            mounts.read(&installed);
        }
        // The project again, whatever hid it (it may be under /tmp or the home folder), then
        // what of it the program may change.
        match self.project_writable {
            true => mounts.write(&self.project_dir),
            false => mounts.read(&self.project_dir),
        }
        // The hidden folder: an empty folder, with the worktree shown again when it is there.
        let hidden = self.hidden.as_ref().filter(|dir| dir.is_dir());
        if let Some(hidden) = hidden {
            mounts.add("--tmpfs", None, hidden);
        }
        if let Some(worktree) = &self.worktree {
            let git = &self.binds;
            mounts.write(worktree);
            if let Some((folder, entries)) = git.scratch.as_ref().filter(|(f, _)| f.is_dir()) {
                mounts.add("--tmpfs", None, folder);
                // A git of the lead's side may remove an entry before bubblewrap binds it.
                for (entry, at) in entries {
                    mounts.add("--ro-bind-try", Some(entry), at);
                }
            }
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
        // Shown read-only, with a worktree or without (a checkout a judge reads).
        for (dir, at) in &self.binds.shown {
            mounts.add("--ro-bind", Some(dir), at);
        }
        if let Some(hidden) = hidden {
            // Read-only too, so nothing can be left there for a later reader (the folders
            // shown again in it are mounts of their own, and stay writable).
            mounts.add("--remount-ro", None, hidden);
        }
        // Read-only: its sockets are reached (a `connect` needs no write), and nothing can be
        // left in a folder on the caller's disk.
        if let Some((folder, at)) = &self.shown {
            mounts.read_at(folder, at);
        }
        // The first command inside, wherever it lives.
        mounts.read(&self.starter);
        // Credentials in a folder it was shown: empty in its place.
        if let Some(home) = &self.home {
            for file in crate::hidden::CREDENTIAL_FILES.map(|name| home.join(name)) {
                if file.is_file() && mounts.shows(&file) {
                    mounts.add("--ro-bind", Some(Path::new("/dev/null")), &file);
                }
            }
        }
        mounts.args
    }

    /// What its first command is told to do before it becomes the program.
    fn first_command(&self) -> crate::inside::Start {
        let seal = !self.unix_sockets && !matches!(self.network, NetworkAccess::Machine);
        crate::inside::Start {
            bridge: self.bridge.clone(),
            seal,
            max_processes: Some(self.max_processes),
            max_open_files: Some(self.max_open_files),
            network: match &self.network {
                NetworkAccess::Proxied {
                    socket, forward, ..
                } => Some((socket.clone(), forward.clone())),
                _ => None,
            },
        }
    }

    /// Its whole environment: the caller's variables it passes on, the command's own (which
    /// win), and the proxy's where it reaches the network through one.
    fn environment(&self, own: Vec<(String, String)>) -> Vec<(String, String)> {
        // The command's own variables come after, and win over the caller's.
        let mut env: Vec<(String, String)> = std::env::vars()
            .filter(|(key, _)| passed_on(key, &self.pass_prefixes) || self.pass.contains(key))
            .collect();
        env.extend(own);
        // A variable given twice: the later one (the command's own over the caller's).
        let mut seen = std::collections::HashSet::new();
        env.reverse();
        env.retain(|(key, _)| seen.insert(key.clone()));
        env.reverse();
        if let NetworkAccess::Proxied { .. } = &self.network {
            // Out through the bridge to the proxy; its own loopback stays its own.
            let proxy = format!("http://127.0.0.1:{}", crate::net::proxy::INSIDE_PORT);
            env.retain(|(key, _)| {
                !PROXY_VARIABLES.contains(&key.as_str()) && key != "NO_PROXY" && key != "no_proxy"
            });
            for variable in PROXY_VARIABLES {
                env.push((variable.into(), proxy.clone()));
            }
            for variable in ["NO_PROXY", "no_proxy"] {
                env.push((variable.into(), "localhost,127.0.0.1,::1".into()));
            }
        }

        env
    }

    /// The boundary in words, for the attempt's transcript.
    pub fn summary(&self) -> String {
        let hidden = match self.hidden.as_ref().and_then(|h| h.file_name()) {
            Some(name) => format!(" and {}/", name.to_string_lossy()),
            None => String::new(),
        };
        let notes: String = self.notes.iter().map(|n| format!(", {n}")).collect();
        let writes = match (&self.worktree, self.project_writable) {
            (Some(_), _) => "its worktree and its own branch",
            (None, true) => "the project folder",
            (None, false) => "nothing of the project",
        };
        format!(
            "in a sandbox (bubblewrap): it writes {writes}{}; the home folder's secrets{hidden} \
             are hidden{notes}; {}; {}; nothing it starts outlives the attempt",
            match self.write.is_empty() {
                true => String::new(),
                false => format!(" and {} more (sandbox.write)", self.write.len()),
            },
            match &self.network {
                NetworkAccess::Machine => "the machine's network".to_string(),
                NetworkAccess::Nothing if self.unix_sockets => "no network".to_string(),
                NetworkAccess::Nothing => "no network and no Unix sockets".to_string(),
                NetworkAccess::Proxied { allowed, .. } if !self.unix_sockets => format!(
                    "no Unix sockets, and its network reaches only, through Baton's proxy: {}",
                    allowed.join(", ")
                ),
                NetworkAccess::Proxied { allowed, .. } => format!(
                    "its network reaches only, through Baton's proxy: {}",
                    allowed.join(", ")
                ),
            },
            self.process_limit()
        )
    }

    /// The process limit in words, with what holds it: the kernel exempts root from the
    /// limit set inside, so under root without a pids cgroup there is none.
    fn process_limit(&self) -> String {
        let max = self.max_processes;
        match (&self.cgroup, running_as_root()) {
            (Some(CgroupEntry::Join(_)), _) => format!("at most {max} processes (a pids cgroup)"),
            (Some(CgroupEntry::Born), _) => format!(
                "at most {max} processes (a pids cgroup, its worker's: Baton's own commands for \
                 the attempt count too)"
            ),
            (None, false) => format!("at most {max} processes (RLIMIT_NPROC in its namespace)"),
            (None, true) => "its processes are not limited in number (Baton runs as root, \
                             which RLIMIT_NPROC does not bind, and cannot make a pids cgroup)"
                .to_string(),
        }
    }
}

/// What network an attempt's sandbox has.
#[derive(Debug, Clone)]
pub enum NetworkAccess {
    /// The machine's (`sandbox.network = "open"`).
    Machine,
    /// None (`"off"`).
    Nothing,
    /// An allow-list, through a proxy outside (`"allow-list"`).
    Proxied {
        /// The proxy's socket, as the program's side sees it.
        socket: PathBuf,
        /// Loopback ports the list names, reached at the same address inside.
        forward: Vec<u16>,
        /// The list, in words, for the transcript.
        allowed: Vec<String>,
    },
}

/// Whether this process runs as root, whom the kernel's per-user process limit does not bind.
fn running_as_root() -> bool {
    // SAFETY: getuid cannot fail.
    unsafe { libc::getuid() == 0 }
}

/// The home folder a sandbox replaces: `HOME`, when it is an absolute path other than `/`.
pub fn user_home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute() && h != Path::new("/"))
}

/// The variables that point programs at a proxy: the program's name the boundary's proxy.
const PROXY_VARIABLES: [&str; 6] = [
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "http_proxy",
    "https_proxy",
    "ALL_PROXY",
    "all_proxy",
];

/// Whether the caller's variable `key` reaches the sandboxed program: what any program needs
/// (the locale, the terminal, the home folder and user), git's identity, and the program's
/// own (its API key and address). Nothing else: not `PGPASSWORD`, not `BATON_STORE`, not a
/// cloud's keys, not tokens the user exported for themselves. Baton's own variables for the
/// attempt (`BATON_TASK_ID`, …) and a profile's `env` are added to these.
fn passed_on(key: &str, own: &[&str]) -> bool {
    const ALWAYS: [&str; 21] = [
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
        // Reaching the network as the machine does: its proxy and its certificates.
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "NO_PROXY",
        "http_proxy",
        "https_proxy",
        "no_proxy",
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
        "NODE_EXTRA_CA_CERTS",
    ];
    const PREFIXES: [&str; 3] = ["LC_", "GIT_AUTHOR_", "GIT_COMMITTER_"];
    ALWAYS.contains(&key)
        || PREFIXES
            .iter()
            .chain(own)
            .any(|prefix| key.starts_with(prefix))
}

/// Where the program `launch` runs is installed: its whole `node_modules` when it is an npm
/// package's (Claude Code's and Codex's launchers load files beside them), else its folder;
/// the program alone when that folder is the home folder, one above it or a temporary folder
/// (showing one of those would show what the sandbox hides: `~/.ssh`, other users' files).
fn installed_at(launch: &Command, home: Option<&Path>) -> Option<PathBuf> {
    let program = if launch.program.components().count() > 1 {
        launch.program.clone()
    } else {
        std::env::split_paths(&path_of(launch))
            .map(|dir| dir.join(&launch.program))
            .find(|candidate| candidate.is_file())?
    };
    let real = std::fs::canonicalize(program).ok()?;
    let folder = real
        .ancestors()
        .find(|dir| dir.file_name().is_some_and(|n| n == "node_modules"))
        .or_else(|| real.parent())?;
    let home = home.map(|h| std::fs::canonicalize(h).unwrap_or_else(|_| h.to_path_buf()));
    let too_wide = home.is_some_and(|home| home.starts_with(folder))
        || folder == Path::new("/")
        || folder == Path::new("/tmp")
        || folder == std::env::temp_dir();
    Some(match too_wide {
        true => real.clone(),
        false => folder.to_path_buf(),
    })
}

/// The `PATH` the program is given.
fn path_of(launch: &Command) -> std::ffi::OsString {
    launch
        .env
        .iter()
        .rev()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.into())
        .or_else(|| std::env::var_os("PATH"))
        .unwrap_or_default()
}

/// Whether sandboxes can be made here: bubblewrap is installed and may make the namespaces it
/// needs. The error says what to install or enable.
pub fn check_available() -> Result<(), String> {
    let out = std::process::Command::new(BWRAP)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A boundary around a project in `dir`, with a home folder of its own there.
    fn boundary(dir: &Path) -> Boundary {
        let project = dir.join("project");
        let home = dir.join("home");
        std::fs::create_dir_all(project.join(".coordination")).unwrap();
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::create_dir_all(home.join(".cargo")).unwrap();
        Boundary {
            project_dir: project.clone(),
            project_writable: false,
            hidden: Some(project.join(".coordination")),
            worktree: None,
            binds: Binds::default(),
            home: Some(home),
            own: Vec::new(),
            read: Vec::new(),
            write: Vec::new(),
            network: NetworkAccess::Nothing,
            pass_prefixes: Vec::new(),
            pass: Vec::new(),
            shown: None,
            bridge: None,
            unix_sockets: false,
            starter: PathBuf::from("/usr/bin/true"),
            max_processes: 64,
            tmp_bytes: 1 << 20,
            max_open_files: 1024,
            cgroup: None,
            notes: Vec::new(),
        }
    }

    fn command(dir: &Path) -> Command {
        Command {
            program: PathBuf::from("/bin/sh"),
            args: vec!["-c".into(), "echo hi".into()],
            workdir: dir.join("project"),
            env: vec![("MINE".into(), "1".into())],
        }
    }

    /// `option from at` in `args`, as bubblewrap reads its options.
    fn has(args: &[String], option: &str, from: &Path, at: &Path) -> bool {
        let (from, at) = (from.display().to_string(), at.display().to_string());
        args.windows(3)
            .any(|w| w[0] == option && w[1] == from && w[2] == at)
    }

    #[test]
    fn the_program_runs_last_under_its_first_command_and_is_shown_as_given() {
        let dir = tempfile::tempdir().unwrap();
        let wrapped = boundary(dir.path()).wrap(command(dir.path()));
        assert_eq!(wrapped.program, PathBuf::from(BWRAP));
        let tail = &wrapped.args[wrapped.args.len() - 3..];
        assert_eq!(tail, ["/bin/sh", "-c", "echo hi"]);
        let separator = wrapped.args.iter().position(|a| a == "--").unwrap();
        assert_eq!(wrapped.args[separator + 1], "/usr/bin/true");
        assert_eq!(wrapped.args[separator + 2], crate::inside::START_COMMAND);
        assert_eq!(
            wrapped.shown,
            (
                "/bin/sh".to_string(),
                vec!["-c".to_string(), "echo hi".to_string()]
            )
        );
        assert!(wrapped.args.contains(&"--unshare-net".to_string()));
    }

    #[test]
    fn the_home_folder_is_empty_but_for_toolchains_and_the_hidden_folder_is_read_only() {
        let dir = tempfile::tempdir().unwrap();
        let b = boundary(dir.path());
        let home = b.home.clone().unwrap();
        let args = b.wrap(command(dir.path())).args;
        let hidden = dir.path().join("project/.coordination");
        let at = |option: &str, path: &Path| {
            args.windows(2)
                .position(|w| w[0] == option && w[1] == path.display().to_string())
        };
        assert!(at("--tmpfs", &home).is_some(), "{args:?}");
        assert!(has(
            &args,
            "--ro-bind",
            &home.join(".cargo"),
            &home.join(".cargo")
        ));
        assert!(!args.iter().any(|a| a.ends_with(".ssh")), "{args:?}");
        // The project read-only, then its hidden folder made empty, then read-only too.
        assert!(has(&args, "--ro-bind", &b.project_dir, &b.project_dir));
        let emptied = at("--tmpfs", &hidden).unwrap();
        let sealed = at("--remount-ro", &hidden).unwrap();
        assert!(emptied < sealed);
    }

    #[test]
    fn a_credential_file_in_a_shown_folder_is_bound_over_with_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let b = boundary(dir.path());
        let home = b.home.clone().unwrap();
        std::fs::write(home.join(".cargo/credentials.toml"), "token = \"secret\"").unwrap();
        let args = b.wrap(command(dir.path())).args;
        assert!(
            has(
                &args,
                "--ro-bind",
                Path::new("/dev/null"),
                &home.join(".cargo/credentials.toml")
            ),
            "{args:?}"
        );
    }

    /// Only the variables it passes on reach the program, its own win over the caller's, and
    /// behind a proxy every proxy variable names the proxy's bridge.
    #[test]
    fn the_environment_is_an_allow_list_and_a_proxied_program_is_pointed_at_its_proxy() {
        let dir = tempfile::tempdir().unwrap();
        let mut b = boundary(dir.path());
        b.network = NetworkAccess::Proxied {
            socket: PathBuf::from("/tmp/baton/proxy"),
            forward: vec![4000],
            allowed: vec!["example.com".into()],
        };
        b.pass_prefixes = vec!["CARGO_"];
        let mut launch = command(dir.path());
        launch.env.push(("PATH".into(), "/only/this".into()));
        let env = b.wrap(launch).env;
        let value = |key: &str| {
            env.iter()
                .rev()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(value("MINE"), Some("1"));
        assert_eq!(value("PATH"), Some("/only/this"));
        assert_eq!(env.iter().filter(|(k, _)| k == "PATH").count(), 1);
        let proxy = format!("http://127.0.0.1:{}", crate::net::proxy::INSIDE_PORT);
        assert_eq!(value("HTTPS_PROXY"), Some(proxy.as_str()));
        assert_eq!(value("NO_PROXY"), Some("localhost,127.0.0.1,::1"));
        assert!(passed_on("CARGO_HOME", &b.pass_prefixes));
        assert!(!passed_on("PGPASSWORD", &b.pass_prefixes));
        assert!(!passed_on("AWS_SECRET_ACCESS_KEY", &b.pass_prefixes));
    }

    #[test]
    fn the_summary_says_what_it_writes_hides_and_reaches() {
        let dir = tempfile::tempdir().unwrap();
        let mut b = boundary(dir.path());
        b.notes = vec!["Baton is reached through the attempt's door as this agent".into()];
        let said = b.summary();
        assert!(
            said.starts_with("in a sandbox (bubblewrap): it writes nothing of the project"),
            "{said}"
        );
        assert!(
            said.contains(
                "the home folder's secrets and .coordination/ are hidden, Baton is reached"
            ),
            "{said}"
        );
        assert!(said.contains("no network and no Unix sockets"), "{said}");
    }
}
