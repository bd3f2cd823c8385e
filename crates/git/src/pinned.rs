//! Where the git folders of a Baton checkout are, found without reading anything in it.
//!
//! A task's worktree (`.coordination/worktrees/TASK`) is its agent's to write, `.git` file
//! included, and so is its git folder (`.git/worktrees/TASK`, with its `commondir` file). Git
//! finds a checkout's repository through those files: an agent that points them at a
//! repository of its own making (its config naming a `filter.*.clean` program, say) would have
//! every git command Baton runs in its checkout, on the lead's side, run that program. So
//! Baton never lets git look: in a checkout of `.coordination/worktrees/`, its commands get
//! `GIT_DIR`, `GIT_COMMON_DIR` and `GIT_WORK_TREE` from the project's own repository (found
//! from the project folder, whose `.git` no agent writes), and git reads neither file.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use crate::error::{GitError, Result};

/// A checkout's git folders, as Baton made them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GitDirs {
    /// The checkout's own: `COMMON/worktrees/NAME`.
    pub git_dir: PathBuf,
    /// The repository's shared one.
    pub common_dir: PathBuf,
}

/// The git folders of the checkout at `dir` when it is one of Baton's (a folder of a
/// `.coordination/worktrees/`); `None` for any other folder (the lead's checkout: git finds
/// its repository as usual). An error when the repository has no git folder for it where
/// Baton made one (`COMMON/worktrees/NAME`, NAME the checkout's folder name).
pub(crate) fn git_dirs(dir: &Path) -> Result<Option<GitDirs>> {
    let Some((project, name)) = baton_checkout(dir) else {
        return Ok(None);
    };
    let common_dir = common_dir_of(project)?;
    // Git names a worktree's folder after the checkout's (made safe, or numbered when taken),
    // and keeps that name when the checkout moves: what it was named is remembered when Baton
    // made it, from the `.git` file git had just written.
    let named = std::fs::read_to_string(record_of(dir)?)
        .ok()
        .map(|n| n.trim().to_string())
        .filter(|n| valid_name(n))
        .unwrap_or_else(|| name.to_string());
    let git_dir = common_dir.join("worktrees").join(named);
    match std::fs::symlink_metadata(&git_dir) {
        Ok(meta) if meta.is_dir() => Ok(Some(GitDirs {
            git_dir,
            common_dir,
        })),
        _ => Err(GitError::Failed {
            command: format!("git in {}", dir.display()),
            message: format!(
                "the repository has no git folder for this checkout at {}, where git makes it \
                 for a worktree of that name: remove the checkout (`git worktree prune`) and \
                 claim the task again",
                git_dir.display()
            ),
        }),
    }
}

/// Remembers the name of the git folder git just made for the Baton checkout at `dir` (read
/// from the `.git` file it wrote, before anything else ran there); called under the project's
/// git lock right after `git worktree add`.
pub(crate) fn remember(dir: &Path) -> Result<()> {
    let dot_git = dir.join(".git");
    let text =
        std::fs::read_to_string(&dot_git).map_err(|e| baton_core::StoreError::io(&dot_git, e))?;
    let pointed = text
        .lines()
        .find_map(|line| line.strip_prefix("gitdir:"))
        .map(|d| PathBuf::from(d.trim()))
        .unwrap_or_default();
    let name = pointed
        .file_name()
        .and_then(|n| n.to_str())
        .filter(|n| valid_name(n))
        .ok_or_else(|| GitError::Failed {
            command: format!("worktree add {}", dir.display()),
            message: format!(
                "git wrote no worktree folder Baton can read in {}",
                dot_git.display()
            ),
        })?;
    let record = record_of(dir)?;
    if let Some(parent) = record.parent() {
        std::fs::create_dir_all(parent).map_err(|e| baton_core::StoreError::io(parent, e))?;
    }
    baton_fs::write_atomic(&record, name.as_bytes())?;
    Ok(())
}

/// Moves what [`remember`] recorded for the checkout at `from` to `to` (git keeps a moved
/// worktree's folder name).
pub(crate) fn moved(from: &Path, to: &Path) -> Result<()> {
    let (old, new) = (record_of(from)?, record_of(to)?);
    match std::fs::rename(&old, &new) {
        Ok(()) => Ok(()),
        // Made before Baton remembered names: its folder is named after it, as `git_dirs`
        // assumes when nothing is remembered.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let name = from
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            baton_fs::write_atomic(&new, name.as_bytes()).map_err(Into::into)
        }
        Err(e) => Err(baton_core::StoreError::io(&old, e).into()),
    }
}

/// Forgets what [`remember`] recorded for the checkout at `dir`, once it is removed.
pub(crate) fn forget(dir: &Path) {
    if let Ok(record) = record_of(dir) {
        let _ = std::fs::remove_file(record);
    }
}

/// Where the name of a Baton checkout's git folder is remembered: beside the checkouts, in
/// `.coordination/worktrees/.git-folders/NAME` (no agent writes there: `.coordination/` is
/// hidden from every sandbox).
fn record_of(dir: &Path) -> Result<PathBuf> {
    let (Some(worktrees), Some(name)) = (dir.parent(), dir.file_name()) else {
        return Err(GitError::Failed {
            command: "worktree".into(),
            message: format!("{} is not a checkout of Baton's", dir.display()),
        });
    };
    Ok(worktrees.join(".git-folders").join(name))
}

/// A worktree folder's name as git makes them: one path component, no `..`.
fn valid_name(name: &str) -> bool {
    !name.is_empty() && name != "." && name != ".." && !name.contains('/') && !name.contains('\0')
}

/// The project folder and the checkout's name, for a folder `PROJECT/.coordination/worktrees/NAME`.
fn baton_checkout(dir: &Path) -> Option<(&Path, &str)> {
    let name = dir.file_name()?.to_str()?;
    let worktrees = dir.parent()?;
    let coordination = worktrees.parent()?;
    (worktrees.file_name()? == "worktrees" && coordination.file_name()? == ".coordination")
        .then_some(())?;
    Some((coordination.parent()?, name))
}

/// The repository's shared git folder, from the project folder (remembered: it does not move
/// while Baton runs).
pub(crate) fn common_dir_of(project: &Path) -> Result<PathBuf> {
    static KNOWN: OnceLock<Mutex<HashMap<PathBuf, PathBuf>>> = OnceLock::new();
    let known = KNOWN.get_or_init(Default::default);
    if let Some(found) = known.lock().expect("git dirs lock").get(project) {
        return Ok(found.clone());
    }
    // Asked of the project folder, whose repository is the user's; not through `repo`, which
    // asks this module where a checkout's repository is.
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(project)
        .args(["-c", "core.fsmonitor=false"])
        .args(["rev-parse", "--path-format=absolute", "--git-common-dir"])
        .env("LC_ALL", "C")
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| GitError::NotInstalled(e.to_string()))?;
    if !out.status.success() {
        return Err(GitError::NotARepository {
            dir: project.to_path_buf(),
        });
    }
    let found = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    known
        .lock()
        .expect("git dirs lock")
        .insert(project.to_path_buf(), found.clone());
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_folder_of_coordination_worktrees_is_a_baton_checkout() {
        assert_eq!(
            baton_checkout(Path::new("/p/.coordination/worktrees/task-1")),
            Some((Path::new("/p"), "task-1"))
        );
        assert_eq!(baton_checkout(Path::new("/p")), None);
        assert_eq!(baton_checkout(Path::new("/p/worktrees/task-1")), None);
        assert_eq!(baton_checkout(Path::new("/p/.coordination/task-1")), None);
    }
}
