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
//! Objects: the shared object store is read-only to the agent. Its git writes new objects to a
//! store of the task's own (`.coordination/worktrees/.refs/TASK/objects`, shown where the shared
//! one is), which reads the shared one, shown at [`SHARED_OBJECTS`], as an alternate. When
//! Baton publishes the branch it fetches the commit from a copy of that store, with git's
//! checks of a stranger's objects (`fetch.fsckObjects`), into the shared one: an agent cannot
//! delete or damage an object of the project's, and what it adds is checked before it is
//! taken. The copy reads no link the agent left there ([`baton_fs::untrusted`]), so its store
//! cannot name a file of the lead's to be taken in.

use std::fs;
use std::path::{Path, PathBuf};

use baton_core::StoreError;

use crate::error::{GitError, Result};
use crate::repo::run;
use crate::worktree::{Worktrees, branch_name};

/// Where the shared object store is shown inside a sandbox (read-only), for the task's own
/// store to read as its alternate.
pub const SHARED_OBJECTS: &str = "/tmp/.baton-objects";

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
    /// Folders shown read-only at another path: (folder, where). The shared object store.
    pub shown: Vec<(PathBuf, PathBuf)>,
    /// The shared git folder, made a scratch folder of the sandbox's own with each of its
    /// entries shown again read-only: git may then make (and remove) its lock files there, as
    /// it does for `packed-refs.lock` when a commit deletes `AUTO_MERGE`, without an error, and
    /// nothing made there outlives the sandbox. Its folders stay live; its files (`config`,
    /// `packed-refs`, `HEAD`) are copies made when the attempt started (bubblewrap 0.8 has no
    /// overlay, and a link would have git lock beside its read-only target). (folder, its
    /// entries: each what is shown, and where.)
    pub scratch: Option<(PathBuf, Vec<(PathBuf, PathBuf)>)>,
}

impl GitAccess {
    /// Nothing of the shared repository writable (a check reads its checkout's history, and
    /// commits nothing).
    pub fn none() -> GitAccess {
        GitAccess {
            writable: Vec::new(),
            private: Vec::new(),
            read_only: Vec::new(),
            scratch: None,
            shown: Vec::new(),
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
        // Where Baton made it, not where the checkout's `.git` file (the agent's to write)
        // says: a file pointing elsewhere would have the next attempt's sandbox write there.
        let pinned = crate::pinned::git_dirs(&worktree)?.ok_or_else(|| GitError::Failed {
            command: "sandbox".into(),
            message: format!("{} is not a checkout of Baton's", worktree.display()),
        })?;
        let (gitdir, common) = (pinned.git_dir, pinned.common_dir);
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
        // Git's pointers between the checkout and the repository stay as git wrote them.
        let mut read_only = vec![worktree_config];
        read_only.extend(
            ["commondir", "gitdir"]
                .map(|name| gitdir.join(name))
                .into_iter()
                .filter(|file| file.is_file()),
        );
        // The task's own object store, kept across attempts (its index may name objects only
        // it has), reading the shared one as its alternate.
        let objects = self.own_objects(task)?;
        create_dir(&objects.join("info"))?;
        create_dir(&objects.join("pack"))?;
        write(
            &objects.join("info/alternates"),
            format!("{SHARED_OBJECTS}\n").as_bytes(),
        )?;
        let shared = common.join("objects");
        // The shared folder's files are shown as copies of this attempt's: the lead's git
        // replaces them by renaming a new one over them (`config` as a worktree is added with
        // `--track`, `index`, `HEAD`), and a file replaced while bubblewrap binds it fails the
        // sandbox's start. Nobody replaces a copy of Baton's. Links are not copied, nor shown;
        // nor is the lead's checkout's index, which a worktree's git never reads (each has its
        // own) and which may be large.
        let files = self.shared_files(task)?;
        let _ = fs::remove_dir_all(&files);
        create_dir(&files)?;
        let wanted = |name: &[String]| match name {
            [name] => name != "index" && !is_lock(Path::new(name)),
            _ => false,
        };
        baton_fs::untrusted::copy_files(&common, &files, 0, &wanted).map_err(|e| {
            GitError::Failed {
                command: "sandbox".into(),
                message: format!("cannot copy the files of {}: {e}", common.display()),
            }
        })?;
        let entries = fs::read_dir(&common)
            .map_err(|e| GitError::Failed {
                command: "sandbox".into(),
                message: format!("cannot list {}: {e}", common.display()),
            })?
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            // A lock another git holds now: inside, it would stay held for good.
            .filter(|path| !is_lock(path))
            .filter_map(|path| {
                if fs::symlink_metadata(&path).ok()?.is_dir() {
                    return Some((path.clone(), path));
                }
                let copy = files.join(path.file_name()?);
                copy.is_file().then_some((copy, path))
            })
            .collect();
        Ok(GitAccess {
            writable: vec![gitdir],
            private: vec![(refs, refs_at), (logs, logs_at), (objects, shared.clone())],
            read_only,
            shown: vec![(shared, PathBuf::from(SHARED_OBJECTS))],
            scratch: Some((common, entries)),
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
        self.take_in_objects(task, left)
            .map_err(|e| refused(&format!("its objects could not be taken in: {e}")))?;
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

    /// Fetches commit `tip` and what it needs from task `task`'s own object store into the
    /// shared one, checked as objects from a stranger are (`fetch.fsckObjects`); nothing when
    /// the shared store has it already or the task has no store of its own.
    fn take_in_objects(&self, task: &str, tip: &str) -> Result<()> {
        let own = self.own_objects(task)?;
        let project = self.repo().project();
        let has = |tip: &str| run(project, &["cat-file", "-e", &format!("{tip}^{{commit}}")]);
        if !own.is_dir() || has(tip).is_ok() {
            return Ok(());
        }
        // A repository made of a copy of the store (its loose objects and packs, never a link),
        // the tip as its one branch, and the shared store as its alternate.
        let staging = own.with_file_name("staging");
        let _ = fs::remove_dir_all(&staging);
        let copied = baton_fs::untrusted::copy_files(
            &own,
            &staging.join("objects"),
            1,
            &|path: &[String]| is_object_file(path),
        );
        let fetched = copied
            .map_err(|e| GitError::from(StoreError::io(&own, e)))
            .and_then(|_| {
                let common = crate::pinned::common_dir_of(project)?;
                create_dir(&staging.join("objects/info"))?;
                create_dir(&staging.join("refs/heads"))?;
                write(
                    &staging.join("objects/info/alternates"),
                    format!("{}\n", common.join("objects").display()).as_bytes(),
                )?;
                write(&staging.join("HEAD"), b"ref: refs/heads/tip\n")?;
                write(
                    &staging.join("refs/heads/tip"),
                    format!("{tip}\n").as_bytes(),
                )?;
                run(
                    project,
                    &[
                        "-c",
                        "fetch.fsckObjects=true",
                        "fetch",
                        "--quiet",
                        "--no-tags",
                        "--no-write-fetch-head",
                        "--no-recurse-submodules",
                        &staging.to_string_lossy(),
                        "refs/heads/tip",
                    ],
                )
            });
        let _ = fs::remove_dir_all(&staging);
        fetched.map(drop)
    }

    /// Removes what a sandbox kept for task `task` (its private branch copy and its object
    /// store), once its worktree is gone.
    pub(crate) fn forget_private(&self, task: &str) {
        if let Ok((refs, _)) = self.private_dirs(task)
            && let Some(dir) = refs.parent()
        {
            let _ = fs::remove_dir_all(dir);
        }
    }

    /// Where task `task`'s attempt keeps its copies of the shared git folder's files.
    fn shared_files(&self, task: &str) -> Result<PathBuf> {
        let (refs, _) = self.private_dirs(task)?;
        Ok(refs.with_file_name("shared-files"))
    }

    /// Task `task`'s own object store, which a sandboxed agent's git writes.
    fn own_objects(&self, task: &str) -> Result<PathBuf> {
        let (refs, _) = self.private_dirs(task)?;
        Ok(refs.with_file_name("objects"))
    }

    /// The private folders of task `task`'s branch ref and reflog.
    fn private_dirs(&self, task: &str) -> Result<(PathBuf, PathBuf)> {
        let dir = self.layout().worktrees_dir().join(".refs").join(task);
        self.layout().worktree_dir(task)?;
        Ok((dir.join("refs"), dir.join("logs")))
    }
}

/// Whether `path` is a lock file git holds (`config.lock`).
fn is_lock(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "lock")
}

/// A file of an object store worth taking: a loose object (`ab/cdef…`) or a pack and its
/// index (`pack/pack-….pack`, `.idx`), named as git names them.
fn is_object_file(path: &[String]) -> bool {
    let hex = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_hexdigit());
    match path {
        [dir, file] if dir == "pack" => file
            .strip_prefix("pack-")
            .and_then(|f| f.strip_suffix(".pack").or_else(|| f.strip_suffix(".idx")))
            .is_some_and(hex),
        [dir, file] => dir.len() == 2 && hex(dir) && file.len() >= 38 && hex(file),
        _ => false,
    }
}

fn create_dir(dir: &Path) -> Result<()> {
    fs::create_dir_all(dir).map_err(|e| StoreError::io(dir, e).into())
}

fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    fs::write(path, bytes).map_err(|e| StoreError::io(path, e).into())
}
