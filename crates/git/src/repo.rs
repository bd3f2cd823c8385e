//! One git repository, reached by running `git -C DIR …` with a fixed locale (so messages
//! parse the same everywhere) and no terminal prompts (a worker has nobody to answer them).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::error::{GitError, Result};

/// The repository a project folder is in.
#[derive(Debug, Clone)]
pub struct Repo {
    project: PathBuf,
    top: PathBuf,
    prefix: String,
}

impl Repo {
    /// The repository `project_dir` is in; [`GitError::NotARepository`] when it is in none.
    pub fn discover(project_dir: &Path) -> Result<Repo> {
        let out = output(
            project_dir,
            &["rev-parse", "--show-toplevel", "--show-prefix"],
        )?;
        if !out.status.success() {
            return Err(GitError::NotARepository {
                dir: project_dir.to_path_buf(),
            });
        }
        let text = String::from_utf8_lossy(&out.stdout);
        let mut lines = text.lines();
        let top = lines.next().unwrap_or_default();
        let prefix = lines.next().unwrap_or_default();
        Ok(Repo {
            project: project_dir.to_path_buf(),
            top: PathBuf::from(top),
            prefix: prefix.to_string(),
        })
    }

    /// The project folder (where the lead's checkout is used from).
    pub fn project(&self) -> &Path {
        &self.project
    }

    /// The top of the lead's checkout.
    pub fn top(&self) -> &Path {
        &self.top
    }

    /// The project folder's path inside the repository, `sub/dir/` or empty.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// Runs git in the project folder; its stdout on success.
    pub fn git(&self, args: &[&str]) -> Result<String> {
        run(&self.project, args)
    }

    /// Runs a git command that answers yes (exit 0) or no (exit 1).
    pub fn check(&self, args: &[&str]) -> Result<bool> {
        check(&self.project, args)
    }

    /// The branch the lead's checkout is on.
    pub fn current_branch(&self) -> Result<String> {
        match self.git(&["symbolic-ref", "--quiet", "--short", "HEAD"]) {
            Ok(branch) => Ok(branch),
            Err(GitError::Failed { .. }) => Err(GitError::DetachedHead {
                dir: self.top.clone(),
            }),
            Err(e) => Err(e),
        }
    }

    pub fn has_branch(&self, name: &str) -> Result<bool> {
        self.check(&[
            "show-ref",
            "--verify",
            "--quiet",
            &format!("refs/heads/{name}"),
        ])
    }

    /// The commit `rev` names.
    pub fn commit_of(&self, rev: &str) -> Result<String> {
        self.git(&[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{rev}^{{commit}}"),
        ])
    }

    /// The local branches matching `pattern` (`baton/*`), and those of them already in the
    /// lead's checkout: two git runs, however many branches there are.
    pub fn branches(&self, pattern: &str) -> Result<(BTreeSet<String>, BTreeSet<String>)> {
        let list = |extra: &[&str]| -> Result<BTreeSet<String>> {
            let mut args = vec!["branch", "--list", "--format=%(refname:short)"];
            args.extend(extra);
            args.push(pattern);
            Ok(self.git(&args)?.lines().map(str::to_string).collect())
        };
        Ok((list(&[])?, list(&["--merged", "HEAD"])?))
    }

    /// Whether `branch` is in the lead's checkout already (merged, or never left it).
    pub fn is_merged(&self, branch: &str) -> Result<bool> {
        self.check(&["merge-base", "--is-ancestor", branch, "HEAD"])
    }

    /// The branch `branch` tracks (its upstream), if it has one.
    pub fn upstream(&self, branch: &str) -> Result<Option<String>> {
        let spec = format!("{branch}@{{upstream}}");
        let out = output(&self.project, &["rev-parse", "--abbrev-ref", &spec])?;
        Ok(out
            .status
            .success()
            .then(|| stdout_text(&out))
            .filter(|s| !s.is_empty()))
    }

    /// A path git printed (relative to the repository's top) as a project-relative one;
    /// `None` for a file outside the project folder.
    pub fn project_path<'a>(&self, repo_path: &'a str) -> Option<&'a str> {
        repo_path.strip_prefix(self.prefix.as_str())
    }
}

/// Settings every git command Baton runs is given, whatever the repository's config says:
/// what an agent could have planted there (its worktree's files, the shared `.git` when it
/// runs unsandboxed) never runs on the lead's side: no hooks (`core.hooksPath` to nowhere),
/// no file-system monitor (`core.fsmonitor` names a program to run). Diffs also refuse
/// external diff programs and text conversion (`diff.rs`).
const DISARMED: [&str; 4] = [
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.fsmonitor=false",
];

fn command(dir: &Path, args: &[&str]) -> Result<Command> {
    let mut command = Command::new("git");
    command
        .arg("-C")
        .arg(dir)
        .args(DISARMED)
        .args(args)
        .env("LC_ALL", "C")
        .env("GIT_TERMINAL_PROMPT", "0")
        // No lock git may skip (`git status` refreshing the index): Baton reads worktrees
        // agents are committing in, and a lock taken for a read fails their `git commit`.
        .env("GIT_OPTIONAL_LOCKS", "0")
        .stdin(Stdio::null());
    if let Some(pinned) = crate::pinned::git_dirs(dir)? {
        command
            .env("GIT_DIR", pinned.git_dir)
            .env("GIT_COMMON_DIR", pinned.common_dir)
            .env("GIT_WORK_TREE", dir);
    }
    Ok(command)
}

/// Runs git and returns how it ended, whatever that was.
pub(crate) fn output(dir: &Path, args: &[&str]) -> Result<Output> {
    command(dir, args)?
        .output()
        .map_err(|e| GitError::NotInstalled(e.to_string()))
}

/// Runs git; its stdout (without the final newline) when it succeeds.
pub(crate) fn run(dir: &Path, args: &[&str]) -> Result<String> {
    let out = output(dir, args)?;
    if out.status.success() {
        Ok(stdout_text(&out))
    } else {
        Err(failed(args, &out))
    }
}

/// Runs a git command that answers yes (exit 0) or no (exit 1); anything else is a failure.
pub(crate) fn check(dir: &Path, args: &[&str]) -> Result<bool> {
    let out = output(dir, args)?;
    match out.status.code() {
        Some(0) => Ok(true),
        Some(1) => Ok(false),
        _ => Err(failed(args, &out)),
    }
}

pub(crate) fn failed(args: &[&str], out: &Output) -> GitError {
    let stderr = String::from_utf8_lossy(&out.stderr).trim().to_string();
    let message = if stderr.is_empty() {
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    } else {
        stderr
    };
    GitError::Failed {
        command: args.join(" "),
        message: if message.is_empty() {
            format!("it exited with {}", out.status)
        } else {
            message
        },
    }
}

fn stdout_text(out: &Output) -> String {
    let text = String::from_utf8_lossy(&out.stdout);
    text.strip_suffix('\n').unwrap_or(&text).to_string()
}

/// The files changed (staged or not) in the checkout at `dir`, as paths from its top; with
/// `untracked`, new files git does not track yet too.
pub(crate) fn changed_files(dir: &Path, untracked: bool) -> Result<Vec<String>> {
    let untracked = if untracked {
        "--untracked-files=all"
    } else {
        "--untracked-files=no"
    };
    let status = run(
        dir,
        &["status", "--porcelain", "-z", "--no-renames", untracked],
    )?;
    Ok(status_entries(&status)
        .map(|(_, path)| path.to_string())
        .collect())
}

/// What the checkout at `dir` holds beside its commits, from one walk of it.
pub(crate) struct Leftovers {
    /// Files changed, staged or untracked, as paths from its top.
    pub uncommitted: Vec<String>,
    /// Whether anything git ignores is there too (a build's output, a log).
    pub ignored: bool,
}

impl Leftovers {
    pub fn of(dir: &Path) -> Result<Leftovers> {
        // `matching` names an ignored folder without walking into it (a `target/` of its own
        // 100,000 files costs one entry).
        let status = run(
            dir,
            &[
                "status",
                "--porcelain",
                "-z",
                "--no-renames",
                "--untracked-files=all",
                "--ignored=matching",
            ],
        )?;
        let mut found = Leftovers {
            uncommitted: Vec::new(),
            ignored: false,
        };
        for (code, path) in status_entries(&status) {
            match code {
                "!!" => found.ignored = true,
                _ => found.uncommitted.push(path.to_string()),
            }
        }
        Ok(found)
    }

    /// Nothing at all: no task that takes the checkout over sees another's leftovers.
    pub fn none(&self) -> bool {
        self.uncommitted.is_empty() && !self.ignored
    }
}

/// The entries of `git status --porcelain -z --no-renames`: each `XY PATH`, as (`XY`, path).
fn status_entries(status: &str) -> impl Iterator<Item = (&str, &str)> {
    status
        .split('\0')
        .filter(|entry| entry.len() > 3)
        .map(|entry| (&entry[..2], &entry[3..]))
}

/// Whether a merge is in progress in the checkout at `dir` (git stopped it on a conflict),
/// rather than refused before it began.
pub(crate) fn merging(dir: &Path) -> Result<bool> {
    check(dir, &["rev-parse", "-q", "--verify", "MERGE_HEAD"])
}

/// The files a merge in progress left conflicted in the checkout at `dir`, from its top.
pub(crate) fn conflicted_files(dir: &Path) -> Result<Vec<String>> {
    let names = run(dir, &["diff", "--name-only", "-z", "--diff-filter=U"])?;
    Ok(nul_list(&names).map(str::to_string).collect())
}

/// The paths of a `-z` listing (`git diff --name-only -z`).
pub(crate) fn nul_list(listing: &str) -> impl Iterator<Item = &str> {
    listing.split('\0').filter(|path| !path.is_empty())
}
