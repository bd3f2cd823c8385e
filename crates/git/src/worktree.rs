//! A worktree per task: task `T` is worked in `.coordination/worktrees/T`, a git worktree on
//! the branch `baton/T`, which starts from the lead's branch and tracks it (so `git status`
//! there says how far ahead it is, and the task's commits are `baton/T@{upstream}..baton/T`),
//! with its dependencies' branches merged in ([`crate::dependencies`]).
//!
//! A task claimed again (a retry, or one taken over from a worker that died) finds its
//! worktree, or at least its branch, and goes on from there; nothing here deletes a commit. A
//! worker's next task takes over the clean checkout its last one left (moved and switched),
//! so a team holds about one checkout per worker, not one per task.
//! The worktrees folder ignores itself (`.gitignore` of `*`), so the lead's `git status` and
//! `git add -A` never see the checkouts inside it.

use std::fs;
use std::path::{Path, PathBuf};

use baton_core::review::DependencyConflicts;
use baton_core::{BranchRecord, CommitRecord, Completion, Layout, StoreError, Task};
use baton_fs::{FileLock, write_atomic};

use crate::dependencies::{DependencyWork, bring_in};
use crate::error::{GitError, Result};
use crate::repo::{Leftovers, Repo, changed_files, run};

/// The branch task `task` is worked on.
pub fn branch_name(task: &str) -> String {
    format!("baton/{task}")
}

/// A task's worktree, ready to work in.
#[derive(Debug, Clone)]
pub struct Worktree {
    pub task: String,
    pub branch: String,
    /// The checkout's top.
    pub path: PathBuf,
    /// The project folder inside it (the top, unless the project is a subfolder of its
    /// repository): where a task's command runs.
    pub workdir: PathBuf,
    /// The lead's branch it started from.
    pub base: Option<String>,
    /// It existed already (the task was worked on before).
    pub reused: bool,
    /// What its branch took from its dependencies' branches when it was made.
    pub dependencies: DependencyWork,
}

/// A task worktree found on disk.
#[derive(Debug, Clone)]
pub struct TaskWorktree {
    pub task: String,
    pub path: PathBuf,
    /// Files changed in it and not committed (removing it would lose them).
    pub uncommitted: Vec<String>,
}

/// The task worktrees of one project.
#[derive(Debug, Clone)]
pub struct Worktrees {
    repo: Repo,
    layout: Layout,
}

impl Worktrees {
    /// The worktrees of the project at `layout`, which must be in a git repository.
    pub fn open(layout: &Layout) -> Result<Worktrees> {
        Ok(Worktrees {
            repo: Repo::discover(layout.project_dir())?,
            layout: layout.clone(),
        })
    }

    pub fn repo(&self) -> &Repo {
        &self.repo
    }

    /// The project's local folder the worktrees are kept under.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Holds the project's git lock: worktrees are added and removed, and branches merged,
    /// one at a time (git's own lock files make concurrent writers fail, not wait).
    pub(crate) fn lock(&self) -> Result<FileLock> {
        let dir = self.layout.worktrees_dir();
        fs::create_dir_all(&dir).map_err(|e| StoreError::io(&dir, e))?;
        let ignore = dir.join(".gitignore");
        if !ignore.exists() {
            write_atomic(&ignore, b"*\n")?;
        }
        Ok(FileLock::exclusive(&dir.join(".lock"))?)
    }

    /// The worktree of `task`, created on its branch if it does not exist yet (the branch
    /// too, from the branch the lead's checkout is on).
    pub fn prepare(&self, task: &str) -> Result<Worktree> {
        self.make(task, &[], DependencyConflicts::Work, None)
    }

    /// The worktree of `task`, as [`Worktrees::prepare`]; a branch made for it now takes its
    /// dependencies' branches too. Under [`DependencyConflicts::Hold`], dependencies that
    /// conflict leave no branch or worktree behind and are [`GitError::DependenciesConflict`].
    ///
    /// `reuse`: a finished task whose worktree the caller (a worker) left. A new branch is then
    /// made in that checkout, moved to this task's place and switched (`git worktree move`,
    /// `git checkout -B`): it costs what the change costs, not a checkout of the repository.
    /// Only a worktree with nothing uncommitted, untracked or ignored is taken, so no task sees
    /// another's leftovers; any other is left where it is and a new one made.
    pub fn prepare_task(
        &self,
        task: &Task,
        on_conflict: DependencyConflicts,
        reuse: Option<Reuse<'_>>,
    ) -> Result<Worktree> {
        self.make(&task.id, &task.dependencies, on_conflict, reuse)
    }

    fn make(
        &self,
        task: &str,
        dependencies: &[String],
        on_conflict: DependencyConflicts,
        reuse: Option<Reuse<'_>>,
    ) -> Result<Worktree> {
        let path = self.layout.worktree_dir(task)?;
        let branch = branch_name(task);
        let _lock = self.lock()?;
        let reused = is_checkout(&path);
        let mut brought = DependencyWork::default();
        if reused {
            let on = run(&path, &["symbolic-ref", "--quiet", "--short", "HEAD"]).ok();
            if on.as_deref() != Some(branch.as_str()) {
                return Err(GitError::Failed {
                    command: format!("worktree add {}", path.display()),
                    message: format!(
                        "{} is there already but not on {branch} (on {}); move it away",
                        path.display(),
                        on.as_deref().unwrap_or("no branch")
                    ),
                });
            }
        } else {
            // A worktree folder deleted by hand is still registered until pruned.
            self.repo.git(&["worktree", "prune"])?;
            let at = path.to_string_lossy();
            if self.repo.has_branch(&branch)? {
                self.repo
                    .git(&["worktree", "add", "--quiet", &at, &branch])?;
                crate::pinned::remember(&path)?;
            } else {
                let base = self.repo.current_branch()?;
                let switched = match reuse {
                    Some(previous) if previous.task != task => {
                        self.switch_from(previous, &path, &branch, &base)?
                    }
                    _ => false,
                };
                if !switched {
                    self.repo.git(&[
                        "worktree", "add", "--quiet", "--track", "-b", &branch, &at, &base,
                    ])?;
                    crate::pinned::remember(&path)?;
                }
                let branches: Vec<String> = dependencies.iter().map(|d| branch_name(d)).collect();
                brought = bring_in(&path, task, &branches, on_conflict)?;
                if let Some(conflict) = brought.conflict.as_ref().filter(|c| !c.in_progress) {
                    // Held: nothing of the task's own is there yet, so a later claim (after
                    // the lead merged the dependencies) starts afresh.
                    self.repo.git(&["worktree", "remove", "--force", &at])?;
                    self.repo.git(&["branch", "-D", &branch])?;
                    return Err(GitError::DependenciesConflict {
                        task: task.to_string(),
                        branch: conflict.branch.clone(),
                        files: conflict.files.clone(),
                    });
                }
                if !brought.merged.is_empty() || brought.conflict.is_some() {
                    // Where the task's own work starts: its commits and changed files are
                    // counted from here, not from the lead's branch.
                    run(&path, &["update-ref", &start_ref(task), "HEAD"])?;
                }
            }
        }
        Ok(Worktree {
            task: task.to_string(),
            workdir: path.join(self.repo.prefix()),
            base: self.repo.upstream(&branch)?,
            branch,
            path,
            reused,
            dependencies: brought,
        })
    }

    /// Moves finished task `previous`'s worktree to `to` and makes `branch` there from `base`,
    /// if it is clean (nothing uncommitted, untracked or ignored); false when it is not there
    /// or not clean (it is left as it is). Called under the project's git lock.
    fn switch_from(
        &self,
        previous: Reuse<'_>,
        to: &Path,
        branch: &str,
        base: &str,
    ) -> Result<bool> {
        let from = self.layout.worktree_dir(previous.task)?;
        if !is_checkout(&from) {
            return Ok(false);
        }
        if !previous.seen_clean && !Leftovers::of(&from)?.none() {
            return Ok(false);
        }
        let (from_at, to_at) = (from.to_string_lossy(), to.to_string_lossy());
        self.repo.git(&["worktree", "move", &from_at, &to_at])?;
        crate::pinned::moved(&from, to)?;
        // The finished task's branch was published with its objects; what its sandbox kept
        // (its private branch copy, its object store) goes with its checkout.
        self.forget_private(previous.task);
        let switched = run(to, &["checkout", "--quiet", "--track", "-B", branch, base]);
        if switched.is_err() {
            // Not half switched: the checkout goes, and a new one is made the usual way.
            self.repo.git(&["worktree", "remove", "--force", &to_at])?;
            return Ok(false);
        }
        Ok(true)
    }

    /// What `task`'s branch holds now (its commits beyond its base, and what its worktree has
    /// not committed); `None` when the task has no branch.
    pub fn branch_record(&self, task: &str) -> Result<Option<BranchRecord>> {
        Ok(self.record_and_leftovers(task)?.map(|(record, _)| record))
    }

    /// [`Worktrees::branch_record`], and whether the worktree held nothing else at all (nothing
    /// uncommitted, untracked or ignored): one walk of the checkout answers both.
    fn record_and_leftovers(&self, task: &str) -> Result<Option<(BranchRecord, bool)>> {
        let name = branch_name(task);
        if !self.repo.has_branch(&name)? {
            return Ok(None);
        }
        let base = self.repo.upstream(&name)?;
        let from = match self.own_work_start(task)? {
            Some(start) => Some(start),
            None => base.clone(),
        };
        let commits = match &from {
            Some(from) => self
                .repo
                .git(&[
                    "log",
                    "--reverse",
                    "--format=%H%x1f%s",
                    &format!("{from}..{name}"),
                ])?
                .lines()
                .filter_map(|line| line.split_once('\u{1f}'))
                .map(|(id, subject)| CommitRecord {
                    id: id.to_string(),
                    subject: subject.to_string(),
                })
                .collect(),
            None => Vec::new(),
        };
        let path = self.layout.worktree_dir(task)?;
        let left = match is_checkout(&path) {
            true => Leftovers::of(&path)?,
            false => Leftovers {
                uncommitted: Vec::new(),
                ignored: false,
            },
        };
        let clean = left.none();
        let record = BranchRecord {
            name,
            base,
            commits,
            uncommitted: left.uncommitted,
        };
        Ok(Some((record, clean)))
    }

    /// The project files the branch changed since it left its base: (modified or deleted,
    /// created).
    pub fn changed_files(&self, record: &BranchRecord) -> Result<(Vec<String>, Vec<String>)> {
        let task = record.name.strip_prefix("baton/").unwrap_or(&record.name);
        let Some(base) = self.own_work_start(task)?.or_else(|| record.base.clone()) else {
            return Ok((Vec::new(), Vec::new()));
        };
        let diff = self.repo.git(&[
            "diff",
            "--name-status",
            "--no-renames",
            "-z",
            &format!("{base}...{}", record.name),
        ])?;
        let (mut modified, mut created) = (Vec::new(), Vec::new());
        let mut fields = diff.split('\0');
        while let (Some(status), Some(path)) = (fields.next(), fields.next()) {
            let Some(path) = self.repo.project_path(path) else {
                continue;
            };
            if status.starts_with('A') {
                created.push(path.to_string());
            } else {
                modified.push(path.to_string());
            }
        }
        Ok((modified, created))
    }

    /// Where `task`'s own work starts on its branch, when it is not where the branch left the
    /// lead's: after the dependencies' work Baton merged into it. A mark left by an earlier
    /// branch of the same name (not in this one's history) is not taken.
    pub fn own_work_start(&self, task: &str) -> Result<Option<String>> {
        let Ok(start) = self.repo.commit_of(&start_ref(task)) else {
            return Ok(None);
        };
        let branch = branch_name(task);
        Ok(self
            .repo
            .check(&["merge-base", "--is-ancestor", &start, &branch])?
            .then_some(start))
    }

    /// Every task worktree in `.coordination/worktrees/`.
    pub fn list(&self) -> Result<Vec<TaskWorktree>> {
        let dir = self.layout.worktrees_dir();
        let entries = match fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(StoreError::io(&dir, e).into()),
        };
        let mut found = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| StoreError::io(&dir, e))?;
            let path = entry.path();
            // A dot-folder is Baton's own (the merge queue's scratch checkout), not a task's.
            if !is_checkout(&path) || entry.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            found.push(TaskWorktree {
                task: entry.file_name().to_string_lossy().into_owned(),
                uncommitted: uncommitted(&path)?,
                path,
            });
        }
        found.sort_by(|a, b| a.task.cmp(&b.task));
        Ok(found)
    }

    /// What `task`'s worktree has not committed; `None` when it has no worktree.
    pub fn uncommitted_in(&self, task: &str) -> Result<Option<Vec<String>>> {
        let path = self.layout.worktree_dir(task)?;
        if !is_checkout(&path) {
            return Ok(None);
        }
        uncommitted(&path).map(Some)
    }

    /// Removes `task`'s worktree; git refuses (and this fails) when it has uncommitted or
    /// untracked files. Its branch stays.
    pub fn remove(&self, task: &str) -> Result<()> {
        let path = self.layout.worktree_dir(task)?;
        let _lock = self.lock()?;
        self.repo
            .git(&["worktree", "remove", &path.to_string_lossy()])?;
        // What Baton kept beside it: a sandboxed agent's private branch copy and object store
        // (its branch was published before it was merged), and its git folder's name.
        self.forget_private(task);
        crate::pinned::forget(&path);
        Ok(())
    }
}

/// Adds to a completion of `task` what its worktree holds: its branch with its commits, and
/// the files the branch changed (beside those the worker listed). Does nothing (and runs no
/// git) for a task that has no worktree. True when its worktree held nothing beside its
/// commits (nothing uncommitted, untracked or ignored), which a worker that made the record
/// after its agent's processes ended passes on as [`Reuse::seen_clean`].
pub fn record_branch(layout: &Layout, task: &str, completion: &mut Completion) -> Result<bool> {
    if !is_checkout(&layout.worktree_dir(task)?) {
        return Ok(false);
    }
    let worktrees = Worktrees::open(layout)?;
    // A sandboxed agent that reports before its attempt ends committed on a private copy of
    // its branch: the branch moves there first.
    worktrees.publish_private_branch(task)?;
    let Some((record, clean)) = worktrees.record_and_leftovers(task)? else {
        return Ok(false);
    };
    let (modified, created) = worktrees.changed_files(&record)?;
    for (listed, found) in [
        (&mut completion.files_modified, modified),
        (&mut completion.files_created, created),
    ] {
        for path in found {
            // The agent named its files: what they hold is recorded written out (a control
            // character or an override in a name would reach the lead's screen).
            let path = baton_core::text::inert_line(&path).into_owned();
            if !listed.contains(&path) {
                listed.push(path);
            }
        }
    }
    completion.branch = Some(record);
    Ok(clean)
}

/// A finished task's checkout a worker offers its next task ([`Worktrees::prepare_task`]).
#[derive(Debug, Clone, Copy)]
pub struct Reuse<'a> {
    /// The finished task.
    pub task: &'a str,
    /// Found with nothing beside its commits after every process of its agent had ended
    /// ([`record_branch`]), so it is not walked again before it is taken; otherwise it is.
    pub seen_clean: bool,
}

/// The ref marking where task `task`'s own work starts ([`Worktrees::own_work_start`]).
fn start_ref(task: &str) -> String {
    format!("refs/baton/start/{task}")
}

/// A git checkout (a worktree has a `.git` file).
fn is_checkout(path: &Path) -> bool {
    path.join(".git").exists()
}

/// Files changed, staged or untracked in the checkout at `path`.
fn uncommitted(path: &Path) -> Result<Vec<String>> {
    changed_files(path, true)
}
