//! What of the shared repository an agent in a sandbox may write, so that it commits on its
//! task's branch and on nothing else, and how its commits reach the project.
//!
//! Committing in a linked worktree writes three places: the worktree's own git folder
//! (`.git/worktrees/TASK`: its `HEAD`, index and reflog), the shared object store, and the
//! branch's ref with its reflog. The first two are given to the sandbox as they are. The ref
//! is not: git updates `refs/heads/baton/TASK` through a lock file beside it, so a writable
//! `refs/heads/baton/` would let the agent move every other task's branch too. Instead the
//! sandbox sees a private folder in its place holding only its own branch (and one for the
//! branch's reflog), and Baton, outside, moves the real branch to where the agent left it
//! ([`Worktrees::publish_private_branch`]) when it reads the branch (the attempt's end, a
//! completion, the next attempt). Only a commit is taken; anything else the agent writes
//! there goes nowhere. Hooks, config, other refs and other worktrees stay read-only.
//!
//! Known gap: the object store is writable, so an agent can add objects (harmless: unreferenced
//! ones are collected) and delete or damage existing ones. An object store of its own with the
//! shared one as an alternate, fetched from after each attempt, closes it; not built yet.

use std::fs;
use std::path::{Path, PathBuf};

use baton_core::StoreError;

use crate::error::{GitError, Result};
use crate::repo::run;
use crate::worktree::{Worktrees, branch_name};

/// The folders a sandbox gives the agent working task's worktree, beside the worktree itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitAccess {
    /// Writable as they are: the worktree's own git folder and the shared object store.
    pub writable: Vec<PathBuf>,
    /// Writable folders of Baton's shown in the sandbox at another path: (folder, where). The
    /// branch's ref and reflog folders.
    pub private: Vec<(PathBuf, PathBuf)>,
    /// Files inside writable folders that stay read-only (the worktree's own config, which
    /// git reads when the repository enables per-worktree config).
    pub read_only: Vec<PathBuf>,
}

impl GitAccess {
    /// Nothing of the shared repository writable (a check reads its checkout's history, and
    /// commits nothing).
    pub fn none() -> GitAccess {
        GitAccess {
            writable: Vec::new(),
            private: Vec::new(),
            read_only: Vec::new(),
        }
    }
}

impl Worktrees {
    /// What a sandbox gives task `task`'s agent of the shared repository ([`GitAccess`]). The
    /// private ref folder starts from the branch as it is now, after taking in what an earlier
    /// attempt left there (a supervisor killed before it read the branch).
    pub fn sandbox_access(&self, task: &str) -> Result<GitAccess> {
        self.publish_private_branch(task)?;
        let worktree = self.layout().worktree_dir(task)?;
        let gitdir = worktree_gitdir(&worktree)?;
        let common = self.common_dir()?;
        let branch = branch_name(task);
        let tip = self.repo().commit_of(&branch)?;
        let (refs, logs) = self.private_dirs(task)?;
        let _ = fs::remove_dir_all(&refs);
        let _ = fs::remove_dir_all(&logs);
        create_dir(&refs)?;
        create_dir(&logs)?;
        write(&refs.join(task), format!("{tip}\n").as_bytes())?;
        let real_reflog = common.join("logs").join("refs/heads").join(&branch);
        if let Ok(text) = fs::read(&real_reflog) {
            write(&logs.join(task), &text)?;
        }
        // The folders the private ones are shown at must exist to be mounted on.
        let (refs_at, logs_at) = (
            common.join("refs/heads/baton"),
            common.join("logs/refs/heads/baton"),
        );
        create_dir(&refs_at)?;
        create_dir(&logs_at)?;
        let worktree_config = gitdir.join("config.worktree");
        if !worktree_config.exists() {
            write(&worktree_config, b"")?;
        }
        Ok(GitAccess {
            writable: vec![gitdir, common.join("objects")],
            private: vec![(refs, refs_at), (logs, logs_at)],
            read_only: vec![worktree_config],
        })
    }

    /// Moves task `task`'s branch to the commit its sandboxed agent left in the private ref
    /// folder, if it left one that differs; the commit it moved to. Anything there that is not
    /// a commit is refused, naming it, and the branch stays.
    pub fn publish_private_branch(&self, task: &str) -> Result<Option<String>> {
        let (refs, _) = self.private_dirs(task)?;
        let Ok(text) = fs::read_to_string(refs.join(task)) else {
            return Ok(None);
        };
        let left = text.trim();
        let branch = branch_name(task);
        let refused = |why: &str| GitError::Failed {
            command: format!("publish {branch}"),
            message: format!("the agent left {left:?} as its branch's tip: {why}"),
        };
        if left.len() != 40 || !left.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(refused("not a commit id"));
        }
        let now = self.repo().commit_of(&branch)?;
        if now == left {
            return Ok(None);
        }
        let kind = run(self.repo().project(), &["cat-file", "-t", left])
            .map_err(|_| refused("no such object"))?;
        if kind != "commit" {
            return Err(refused(&format!("a {kind}, not a commit")));
        }
        let full = format!("refs/heads/{branch}");
        run(
            self.repo().project(),
            &[
                "update-ref",
                "-m",
                "baton: the agent's commits",
                &full,
                left,
                &now,
            ],
        )?;
        Ok(Some(left.to_string()))
    }

    /// The private folders of task `task`'s branch ref and reflog.
    fn private_dirs(&self, task: &str) -> Result<(PathBuf, PathBuf)> {
        let dir = self.layout().worktrees_dir().join(".refs").join(task);
        self.layout().worktree_dir(task)?;
        Ok((dir.join("refs"), dir.join("logs")))
    }

    /// The shared git folder (`git rev-parse --git-common-dir`), absolute.
    fn common_dir(&self) -> Result<PathBuf> {
        let dir = self
            .repo()
            .git(&["rev-parse", "--path-format=absolute", "--git-common-dir"])?;
        Ok(PathBuf::from(dir))
    }
}

/// The git folder a worktree's `.git` file points to.
fn worktree_gitdir(worktree: &Path) -> Result<PathBuf> {
    let dot_git = worktree.join(".git");
    let text = fs::read_to_string(&dot_git).map_err(|e| StoreError::io(&dot_git, e))?;
    let pointed = text
        .lines()
        .find_map(|line| line.strip_prefix("gitdir:"))
        .map(|dir| worktree.join(dir.trim()))
        .ok_or_else(|| GitError::Failed {
            command: format!("read {}", dot_git.display()),
            message: "not a worktree's .git file (no gitdir: line)".into(),
        })?;
    fs::canonicalize(&pointed).map_err(|e| StoreError::io(&pointed, e).into())
}

fn create_dir(dir: &Path) -> Result<()> {
    fs::create_dir_all(dir).map_err(|e| StoreError::io(dir, e).into())
}

fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    fs::write(path, bytes).map_err(|e| StoreError::io(path, e).into())
}
