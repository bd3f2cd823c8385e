//! A simulated machine for tests across machines: its own `HOME`, working folder and host
//! name (`BATON_HOST`), no
//! path shared with any other machine, reaching the database over TCP only, and its `baton`
//! processes each in a process group of their own, as on another host.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::baton_bin;

pub struct Machine {
    pub name: String,
    home: tempfile::TempDir,
    work: tempfile::TempDir,
    env: Vec<(String, String)>,
}

impl Machine {
    /// A machine with an empty home and working folder.
    pub fn new(name: &str) -> Machine {
        Machine {
            name: name.to_string(),
            home: tempfile::Builder::new()
                .prefix(&format!("{name}-home-"))
                .tempdir()
                .unwrap(),
            work: tempfile::Builder::new()
                .prefix(&format!("{name}-work-"))
                .tempdir()
                .unwrap(),
            env: Vec::new(),
        }
    }

    /// Sets an environment variable for every command this machine runs.
    pub fn with_env(mut self, key: &str, value: &str) -> Machine {
        self.env.push((key.to_string(), value.to_string()));
        self
    }

    /// Writes `~/.pgpass` (mode 0600) with one line, as a user keeps a password there.
    pub fn with_pgpass(self, line: &str) -> Machine {
        use std::os::unix::fs::PermissionsExt;
        let path = self.home.path().join(".pgpass");
        std::fs::write(&path, format!("{line}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        self
    }

    pub fn home(&self) -> &Path {
        self.home.path()
    }

    /// The machine's working folder (a checkout of the project, say).
    pub fn work(&self) -> &Path {
        self.work.path()
    }

    pub fn coordination(&self) -> PathBuf {
        self.work().join(".coordination")
    }

    /// `baton ARGS` on this machine: in its working folder, with its home and environment
    /// only (no `BATON_*` or `PG*` from the test's own), in a new process group.
    pub fn command(&self, args: &[&str]) -> Command {
        self.command_of(baton_bin(), args)
    }

    /// `program ARGS` on this machine, as [`Machine::command`] runs `baton`.
    pub fn command_of(&self, program: impl AsRef<std::ffi::OsStr>, args: &[&str]) -> Command {
        let mut cmd = Command::new(program);
        cmd.args(args).current_dir(self.work()).env_clear();
        for key in ["PATH", "LANG", "TMPDIR"] {
            if let Ok(value) = std::env::var(key) {
                cmd.env(key, value);
            }
        }
        cmd.env("HOME", self.home());
        // The name the machine goes by in a team (its host name on a real machine).
        cmd.env("BATON_HOST", &self.name);
        for (key, value) in &self.env {
            cmd.env(key, value);
        }
        cmd.process_group(0);
        cmd
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }

    /// Runs and expects exit code 0; returns stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let what = format!("{}: baton {args:?}", self.name);
        crate::expect_code(&what, self.run(args), 0).0
    }

    /// Runs with --json and expects exit code 0.
    pub fn json(&self, args: &[&str]) -> serde_json::Value {
        serde_json::from_str(&self.ok(&crate::with_json(args))).unwrap()
    }

    /// Runs and expects exit code `code`; returns stderr.
    pub fn fails(&self, args: &[&str], code: i32) -> String {
        let what = format!("{}: baton {args:?}", self.name);
        crate::expect_code(&what, self.run(args), code).1
    }
}
