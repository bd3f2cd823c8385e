//! A benchmark's git repository: git run as a committing user, and `baton` run so.

#![allow(dead_code)] // each benchmark uses its own share

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::project::{Project, Store};

pub fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "bench")
        .env("GIT_AUTHOR_EMAIL", "bench@example.invalid")
        .env("GIT_COMMITTER_NAME", "bench")
        .env("GIT_COMMITTER_EMAIL", "bench@example.invalid")
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

/// `baton ARGS` with `binary`, in project `p`, as a committing user; true if it succeeded.
pub fn baton_with(binary: &str, p: &Project, args: &[&str]) -> bool {
    Command::new(binary)
        .args(args)
        .current_dir(p.path())
        .env_remove("BATON_DIR")
        .env_remove("BATON_STORE")
        .env_remove("BATON_PROJECT")
        .env("GIT_AUTHOR_NAME", "bench")
        .env("GIT_AUTHOR_EMAIL", "bench@example.invalid")
        .env("GIT_COMMITTER_NAME", "bench")
        .env("GIT_COMMITTER_EMAIL", "bench@example.invalid")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap()
        .success()
}

/// A git project whose check is `true`, with `n` tasks to write a file each.
pub fn landing_project(n: usize) -> Project {
    let p = Project::new(Store::Folder);
    git(p.path(), &["init", "-q", "-b", "main"]);
    std::fs::write(p.path().join(".gitignore"), ".coordination/\n").unwrap();
    git(p.path(), &["add", "-A"]);
    git(p.path(), &["commit", "-qm", "start"]);
    std::fs::write(
        p.path().join(".coordination/review.toml"),
        "check = \"true\"\n",
    )
    .unwrap();
    for i in 0..n {
        p.ok(&["leader", "add-task", &format!("write file {i}")]);
    }
    p
}

/// A one-worker team (`extra` its further arguments) writing and committing each task's file:
/// its wall time.
pub fn team_of_one(p: &Project, extra: &[&str]) -> Duration {
    let mut args = vec![
        "team",
        "up",
        "--exec",
        "echo \"$BATON_TASK_ID\" > \"$BATON_TASK_ID.txt\" && git add -A && git commit -qm \"$BATON_TASK_ID\"",
    ];
    args.extend(extra);
    let clock = std::time::Instant::now();
    assert!(
        baton_with(crate::project::baton(), p, &args),
        "team up {extra:?}"
    );
    clock.elapsed()
}
