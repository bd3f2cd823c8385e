//! Helpers for end-to-end tests that run the real `baton` binary.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn baton_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_baton"))
}

/// A temporary project folder with commands run inside it.
pub struct Project {
    pub dir: tempfile::TempDir,
}

impl Project {
    /// An empty folder (no .coordination/ yet).
    pub fn empty() -> Self {
        Project {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    /// A folder after `baton leader init`.
    pub fn init() -> Self {
        let project = Project::empty();
        project.ok(&["leader", "init", "Test goal"]);
        project
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn coordination(&self) -> PathBuf {
        self.path().join(".coordination")
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(baton_bin());
        cmd.args(args)
            .current_dir(self.path())
            .env_remove("BATON_DIR")
            .env_remove("BATON_LEASE");
        cmd
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }

    /// Runs and expects exit code 0; returns stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "baton {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// Runs with --json and expects exit code 0.
    pub fn json(&self, args: &[&str]) -> serde_json::Value {
        let mut all = args.to_vec();
        all.push("--json");
        serde_json::from_str(&self.ok(&all)).unwrap()
    }

    /// Runs and expects exit code `code`; returns stderr.
    pub fn fails(&self, args: &[&str], code: i32) -> String {
        let out = self.run(args);
        assert_eq!(
            out.status.code(),
            Some(code),
            "baton {args:?}: stdout {} stderr {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stderr).unwrap()
    }

    pub fn tasks_json(&self) -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(self.coordination().join("tasks.json")).unwrap())
            .unwrap()
    }

    pub fn tasks_bytes(&self) -> Vec<u8> {
        std::fs::read(self.coordination().join("tasks.json")).unwrap()
    }
}
