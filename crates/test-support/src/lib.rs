//! # baton-test-support
//!
//! What Baton's end-to-end tests (and benchmarks) share, as a dev-dependency: a temporary
//! project driven through the real `baton` binary ([`Project`]) and commands left running in
//! the background ([`Background`]); the one way to wait for something ([`eventually`]); an Xvfb
//! display ([`xvfb`]); a WebDriver client for the desktop app ([`webdriver`]); raw MCP clients
//! over stdio and HTTP ([`mcp`], [`mcp_http`]); a scripted Anthropic Messages API for the real
//! Claude Code CLI ([`scripted_api`]) and the CLI itself driven by it ([`claude`]); a throwaway PostgreSQL server ([`pg`]); the tool cache
//! `scripts/test.sh` fills; percentiles for the benchmarks ([`stats`]); seeded random boards ([`Dice`]); workers racing on
//! threads ([`in_parallel`]).
//!
//! The binaries under test are the ones cargo built for the test that runs: cargo sets
//! `CARGO_BIN_EXE_<name>` for an integration test and its run, and this crate reads it (no
//! guessing at `target/` paths, where a stale build could pass).

mod background;
pub mod claude;
mod dice;
mod documents;
pub mod machine;
pub mod mcp;
pub mod mcp_http;
mod paths;
pub mod pg;
pub mod pgbouncer;
pub mod scripted_api;
pub mod served;
pub mod stats;
pub mod team;
pub mod webdriver;
mod working;
pub mod xvfb;

pub use background::Background;
pub use dice::Dice;
pub use paths::{artifacts_dir, source_root};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// How long a test waits for something that should take milliseconds, before failing.
pub const PATIENCE: Duration = Duration::from_secs(20);
/// The longest a background `baton` may run while it goes on printing ([`Background::finish`]).
pub const LONGEST_RUN: Duration = Duration::from_secs(120);

/// Checks `ready` every 20 ms until it holds; panics naming `what` after [`PATIENCE`]. The
/// one poll-until-deadline loop of the tests: for things that send no event to wait on (a
/// file another process writes, a process ending, a page redrawing).
pub fn eventually(what: &str, ready: impl FnMut() -> bool) {
    eventually_within(PATIENCE, what, ready);
}

/// [`eventually`] with another deadline.
pub fn eventually_within(patience: Duration, what: &str, mut ready: impl FnMut() -> bool) {
    let deadline = Instant::now() + patience;
    while !ready() {
        assert!(
            Instant::now() < deadline,
            "timed out after {patience:?} waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(20)); // retry until the deadline
    }
}

/// Runs `work` on `threads` threads at once (each given its number) and gathers what they
/// return, thread by thread: workers racing for the same tasks.
pub fn in_parallel<T: Send>(threads: usize, work: impl Fn(usize) -> Vec<T> + Sync) -> Vec<T> {
    std::thread::scope(|s| {
        let work = &work;
        let running: Vec<_> = (0..threads).map(|n| s.spawn(move || work(n))).collect();
        running
            .into_iter()
            .flat_map(|thread| thread.join().unwrap())
            .collect()
    })
}

/// A loopback port free right now (for a server the test is about to start).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The binary `name` cargo built for the running integration test or benchmark.
pub fn cargo_bin(name: &str) -> PathBuf {
    let variable = format!("CARGO_BIN_EXE_{name}");
    let path = std::env::var_os(&variable).map(PathBuf::from).unwrap_or_else(|| {
        panic!("{variable} is not set: run this through `cargo test` (or `cargo bench`) in the package that builds {name}")
    });
    assert!(path.exists(), "{} is missing", path.display());
    path
}

/// The tool cache scripts/test.sh fills: a Python venv with the MCP SDK, and node_modules
/// with the MCP Inspector and Playwright MCP.
pub fn tool_cache() -> PathBuf {
    std::env::var_os("BATON_TEST_TOOLS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var("HOME").unwrap()).join(".cache/baton-test-tools")
        })
}

/// `relative` inside the package whose tests are running, found when the test runs: cargo
/// sets `CARGO_MANIFEST_DIR` for a test process. (The same variable read at compile time would
/// name wherever the binary was built, and a build cache shared by two checkouts keeps that.)
pub fn package_file(relative: &str) -> PathBuf {
    let dir = std::env::var_os("CARGO_MANIFEST_DIR")
        .expect("cargo sets CARGO_MANIFEST_DIR for a test; run the tests with cargo test");
    PathBuf::from(dir).join(relative)
}

/// `relative` inside the tool cache; panics with what to do when it is missing.
pub fn cached_tool(relative: &str) -> PathBuf {
    let path = tool_cache().join(relative);
    assert!(
        path.exists(),
        "{} is missing: run ./scripts/test.sh, which installs the real MCP clients and servers the tests use",
        path.display()
    );
    path
}

/// Serves one HTML page on 127.0.0.1 until the test ends; returns its URL.
pub fn serve_page(html: &'static str) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut request = [0u8; 4096];
            let _ = std::io::Read::read(&mut stream, &mut request);
            let response = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{html}",
                html.len()
            );
            let _ = std::io::Write::write_all(&mut stream, response.as_bytes());
        }
    });
    url
}

/// Runs `commands` all at once (stdout discarded, stderr kept) and waits for each, which must
/// exit 0; their stderr, one after another.
pub fn run_together(commands: impl IntoIterator<Item = Command>) -> String {
    let running: Vec<(String, std::process::Child)> = commands
        .into_iter()
        .map(|mut command| {
            let what = format!("{command:?}");
            let child = command
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            (what, child)
        })
        .collect();
    let mut said = String::new();
    for (what, child) in running {
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{what}: {stderr}");
        said.push_str(&stderr);
    }
    said
}

/// The identity tests commit as, so no git configuration of the machine is needed.
pub const GIT_IDENTITY: [(&str, &str); 4] = [
    ("GIT_AUTHOR_NAME", "tester"),
    ("GIT_AUTHOR_EMAIL", "tester@example.invalid"),
    ("GIT_COMMITTER_NAME", "tester"),
    ("GIT_COMMITTER_EMAIL", "tester@example.invalid"),
];

/// Makes `dir` a git repository on `main` with one commit (its README), whose own
/// configuration names who the lead's merges are by (the machine's may name nobody).
pub fn repository(dir: &Path) {
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["config", "user.name", "lead"]);
    git(dir, &["config", "user.email", "lead@example.invalid"]);
    std::fs::write(dir.join("README.md"), "# project\n").unwrap();
    git(dir, &["add", "README.md"]);
    git(dir, &["commit", "-q", "-m", "start"]);
}

/// `git ARGS` in `dir` as [`GIT_IDENTITY`] (not yet run: add to it, or `output()` it).
pub fn git_command(dir: &Path, args: &[&str]) -> Command {
    let mut git = Command::new("git");
    git.args(args).current_dir(dir).envs(GIT_IDENTITY);
    git
}

/// `git ARGS` in `dir` as [`GIT_IDENTITY`], expected to succeed; its stdout.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = git_command(dir, args).output().unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The `baton` binary under test.
pub fn baton_bin() -> PathBuf {
    cargo_bin("baton")
}

/// A temporary project folder with commands run inside it, its tasks kept in the folder or
/// in PostgreSQL (the folder then holds the pointer, and commands get the password through
/// `PGPASSWORD`, as a user's would).
pub struct Project {
    pub dir: tempfile::TempDir,
    /// The server a database project lives on (kept running while the project is used).
    postgres: Option<std::sync::Arc<pg::PgServer>>,
}

impl Project {
    /// `postgres` or `folder`: where the project is kept, for names of test artifacts.
    pub fn store_name(&self) -> &'static str {
        if self.postgres.is_some() {
            "postgres"
        } else {
            "folder"
        }
    }

    /// An empty folder (no .coordination/ yet).
    pub fn empty() -> Self {
        Project {
            dir: tempfile::tempdir().unwrap(),
            postgres: None,
        }
    }

    /// A folder after `baton leader init`.
    pub fn init() -> Self {
        let project = Project::empty();
        project.ok(&["leader", "init", "Test goal"]);
        project
    }

    /// A folder after `baton leader init --store URL --project NAME` on the run's shared
    /// PostgreSQL server, with a project name of its own.
    pub fn init_on_postgres() -> Self {
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);
        let server = pg::PgServer::shared();
        let mut project = Project::empty();
        project.postgres = Some(server.clone());
        let name = format!(
            "p{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        );
        project.ok(&[
            "leader",
            "init",
            "Test goal",
            "--store",
            &server.url_without_password(),
            "--project",
            &name,
        ]);
        project
    }

    /// Whether the tasks are kept in PostgreSQL.
    pub fn on_postgres(&self) -> bool {
        self.postgres.is_some()
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn coordination(&self) -> PathBuf {
        self.path().join(".coordination")
    }

    /// The project as `.coordination/` files to read: the folder itself, or, for a database
    /// project, a fresh `baton store export` of it (tasks.json, results, logs, discoveries,
    /// master plan, summary).
    pub fn files(&self) -> Files {
        if !self.on_postgres() {
            return Files {
                root: self.coordination(),
                _export: None,
            };
        }
        let to = tempfile::tempdir().unwrap();
        self.ok(&["store", "export", "--to", to.path().to_str().unwrap()]);
        Files {
            root: to.path().join(".coordination"),
            _export: Some(to),
        }
    }

    pub fn command(&self, args: &[&str]) -> Command {
        self.command_of(baton_bin(), args)
    }

    /// `program ARGS` in the project's folder with the environment `baton` gets there (a
    /// database's password; none of the test's own `BATON_*`).
    pub fn command_of(&self, program: impl AsRef<std::ffi::OsStr>, args: &[&str]) -> Command {
        let mut cmd = Command::new(program);
        cmd.args(args)
            .current_dir(self.path())
            .env_remove("BATON_DIR")
            .env_remove("BATON_LEASE")
            .env_remove("BATON_STORE")
            .env_remove("BATON_PROJECT");
        if let Some(server) = &self.postgres {
            cmd.env("PGPASSWORD", server.password());
        }
        cmd
    }

    /// What a command in a clean environment needs to reach this project's store (a
    /// database's password; nothing for the folder).
    pub fn store_env(&self) -> Vec<(&'static str, String)> {
        match &self.postgres {
            Some(server) => vec![("PGPASSWORD", server.password())],
            None => Vec::new(),
        }
    }

    /// `baton ARGS` with the git identity the commands it runs commit as
    /// ([`GIT_IDENTITY`]).
    pub fn committing(&self, args: &[&str]) -> Command {
        let mut command = self.command(args);
        command.envs(GIT_IDENTITY);
        command
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }

    /// Runs and expects exit code 0; returns stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        expect_code(&format!("baton {args:?}"), self.run(args), 0).0
    }

    /// Runs with --json and expects exit code 0.
    pub fn json(&self, args: &[&str]) -> serde_json::Value {
        serde_json::from_str(&self.ok(&with_json(args))).unwrap()
    }

    /// Task `id` as `leader status --json` shows it.
    pub fn task(&self, id: &str) -> serde_json::Value {
        let board = self.json(&["leader", "status"]);
        board["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("no {id} in {board}"))
    }

    /// Runs and expects exit code `code`; returns stderr.
    pub fn fails(&self, args: &[&str], code: i32) -> String {
        expect_code(&format!("baton {args:?}"), self.run(args), code).1
    }

    /// `tasks.json` as JSON (for a database project, as exported).
    pub fn tasks_json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.tasks_bytes()).unwrap()
    }

    /// `tasks.json`'s bytes (for a database project, as exported).
    pub fn tasks_bytes(&self) -> Vec<u8> {
        std::fs::read(self.files().join("tasks.json")).unwrap()
    }
}

/// A project's `.coordination/` files to read (an export is removed when this is dropped).
pub struct Files {
    root: PathBuf,
    _export: Option<tempfile::TempDir>,
}

impl std::ops::Deref for Files {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.root
    }
}

/// `args` with `--json` added.
pub fn with_json<'a>(args: &[&'a str]) -> Vec<&'a str> {
    let mut all = args.to_vec();
    all.push("--json");
    all
}

/// A finished command's stdout and stderr, after asserting it exited with `code` (`what`
/// names it in the failure, with both outputs).
pub fn expect_code(what: &str, out: Output, code: i32) -> (String, String) {
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        out.status.code(),
        Some(code),
        "{what}: stdout {stdout} stderr {stderr}"
    );
    (stdout, stderr)
}

/// The ids in a `{"tasks": […]}` answer (`worker list --json`, `leader status --json`).
pub fn task_ids(value: &serde_json::Value) -> Vec<String> {
    value["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect()
}

/// Runs each scenario (a `fn(Project)` in the calling test file) twice, on a folder project
/// and on a PostgreSQL one (the run's shared server): one suite, two stores, the same
/// commands, answers and exit codes expected. Each becomes a module with tests `folder` and
/// `postgres`.
#[macro_export]
macro_rules! on_both_stores {
    ($($scenario:ident),* $(,)?) => {$(
        mod $scenario {
            #[test]
            fn folder() {
                super::$scenario($crate::Project::init())
            }
            #[test]
            fn postgres() {
                super::$scenario($crate::Project::init_on_postgres())
            }
        }
    )*};
}

/// Sends `signal` (a name, such as `KILL`, or a number) to process `pid`, which must exist.
pub fn kill(pid: u32, signal: &str) {
    let status = Command::new("kill")
        .args([&format!("-{signal}"), &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "kill -{signal} {pid}");
}

impl Project {
    /// `baton ask QUESTION --choice …` as agent `agent` (BATON_AGENT), in the background: it
    /// waits for the lead's answer and prints it.
    pub fn ask_as(&self, agent: &str, question: &str, choices: &[&str]) -> Background {
        let mut args = vec!["ask", question];
        for choice in choices {
            args.extend(["--choice", choice]);
        }
        let mut command = self.command(&args);
        command.env("BATON_AGENT", agent);
        Background::from_command(command)
    }

    /// Starts `baton ARGS` in the background.
    pub fn spawn(&self, args: &[&str]) -> Background {
        Background::from_command(self.command(args))
    }
}
