//! A benchmark's project, whole CLI processes: a folder, or a throwaway PostgreSQL server's
//! project with other "machines" (folders connected to it); and a process's CPU time.

#![allow(dead_code)] // each benchmark uses its own share

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use baton_test_support::pg::PgServer;

/// The `baton` measured: this build's, or the one `BATON_BENCH_BINARY` names (another build,
/// to compare with in the same session on the same machine).
pub fn baton() -> &'static str {
    static BINARY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    BINARY.get_or_init(|| {
        std::env::var("BATON_BENCH_BINARY").unwrap_or_else(|_| env!("CARGO_BIN_EXE_baton").into())
    })
}

/// Where a benchmark project's tasks are kept.
#[derive(Clone, Copy)]
pub enum Store<'a> {
    Folder,
    Postgres(&'a PgServer),
}

pub struct Project {
    pub dir: tempfile::TempDir,
    pub password: Option<String>,
    /// The database's URL (with its password) and the project's name there.
    pub store: Option<(String, String)>,
}

impl Project {
    pub fn new(store: Store<'_>) -> Project {
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);
        let name = format!(
            "team{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        );
        let project = Project {
            dir: tempfile::tempdir().unwrap(),
            password: match store {
                Store::Folder => None,
                Store::Postgres(server) => Some(server.password()),
            },
            store: match store {
                Store::Folder => None,
                Store::Postgres(server) => Some((server.url().to_string(), name.clone())),
            },
        };
        match store {
            Store::Folder => project.ok(&["leader", "init", "benchmark"]),
            Store::Postgres(server) => project.ok(&[
                "leader",
                "init",
                "benchmark",
                "--store",
                &server.url_without_password(),
                "--project",
                &name,
            ]),
        }
        project
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(baton());
        command
            .args(args)
            .current_dir(self.path())
            .env_remove("BATON_DIR")
            .env_remove("BATON_STORE")
            .env_remove("BATON_PROJECT")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if let Some(password) = &self.password {
            command.env("PGPASSWORD", password);
        }
        command
    }

    pub fn ok(&self, args: &[&str]) {
        let status = self.command(args).status().unwrap();
        assert!(status.success(), "baton {args:?}");
    }

    /// Runs `baton ARGS` here to its end, its stdout and stderr kept.
    pub fn output(&self, args: &[&str]) -> Output {
        self.command(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output()
            .unwrap()
    }

    pub fn spawn(&self, args: &[&str]) -> Child {
        self.command(args).spawn().unwrap()
    }

    /// Another folder connected to the same database project (another machine's).
    pub fn another_machine(&self) -> Project {
        let (url, name) = self
            .store
            .clone()
            .expect("only a database project is shared");
        let other = Project {
            dir: tempfile::tempdir().unwrap(),
            password: self.password.clone(),
            store: self.store.clone(),
        };
        let without_password = {
            let password = self.password.clone().unwrap_or_default();
            url.replacen(&format!(":{password}@"), "@", 1)
        };
        other.ok(&["connect", &without_password, "--project", &name]);
        other
    }
}

/// The CPU time (user and system) process `pid` used so far.
pub fn cpu_of(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or("", |(_, r)| r)
        .split_whitespace()
        .collect();
    let ticks: u64 = fields.get(11).and_then(|f| f.parse().ok()).unwrap_or(0)
        + fields.get(12).and_then(|f| f.parse().ok()).unwrap_or(0);
    Duration::from_millis(ticks * 10)
}
