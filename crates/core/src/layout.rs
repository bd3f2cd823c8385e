//! Where things live in `.coordination/`, and how a command finds that folder.
//!
//! ```text
//! .coordination/
//!   master-plan.md          the goal and approach (leader init)
//!   tasks.json              source of truth for tasks
//!   store.json              instead of tasks.json: where the tasks are kept (a database URL
//!                           without its password, and the project's name there)
//!   context/discoveries.md  findings shared between agents
//!   logs/<agent>.log        one journal per agent
//!   results/<task-id>.md    each finished task's report
//!   summary.md              written by leader aggregate
//!   runs/runs.json          numbered runs (baton run new)
//!   runs/<n>/signals/<name> signals of run n
//!   transcripts/<task>/<n>.json   attempt n at a task: who, how it ended, what it cost
//!   transcripts/<task>/<n>.jsonl  its transcript, one event per line
//!   team/workers/<name>.json      each supervised worker's last record
//!   team/profiles.toml            the project's agent profiles (`baton team profiles`)
//! ```

use std::path::{Path, PathBuf};

use crate::error::{Result, StoreError};
use crate::names::{validate_agent_id, validate_task_id};

/// The folder's name inside a project.
pub const DIR_NAME: &str = ".coordination";

/// Paths inside one `.coordination/` folder. Paths built from names are validated first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    root: PathBuf,
}

impl Layout {
    /// The layout of the `.coordination/` folder at `root`.
    pub fn at(root: impl Into<PathBuf>) -> Self {
        Layout { root: root.into() }
    }

    /// The layout for a project folder (`<project>/.coordination`), or for the
    /// `.coordination` folder itself when given that.
    pub fn for_project(dir: &Path) -> Self {
        if dir.file_name().is_some_and(|n| n == DIR_NAME) {
            Layout::at(dir)
        } else {
            Layout::at(dir.join(DIR_NAME))
        }
    }

    /// Finds the folder like git finds `.git`: the explicit `dir` (from `--dir` or
    /// `BATON_DIR`) when given, otherwise the nearest `.coordination/` from `cwd` upwards.
    pub fn locate(dir: Option<&Path>, cwd: &Path) -> Result<Layout> {
        if let Some(dir) = dir {
            let dir = if dir.is_absolute() {
                dir.to_path_buf()
            } else {
                cwd.join(dir)
            };
            let layout = Layout::for_project(&dir);
            if layout.holds_project() {
                return Ok(layout);
            }
            return Err(layout.missing_or(dir));
        }
        let mut nearest = None;
        for ancestor in cwd.ancestors() {
            let layout = Layout::at(ancestor.join(DIR_NAME));
            if layout.holds_project() {
                return Ok(layout);
            }
            if nearest.is_none() && layout.root.is_dir() {
                nearest = Some(layout);
            }
        }
        // A `.coordination/` without its task list is a project whose file went missing, not
        // a folder that never had one.
        Err(match nearest {
            Some(layout) => layout.missing_or(cwd.to_path_buf()),
            None => StoreError::NotInitialized {
                searched: cwd.to_path_buf(),
            },
        })
    }

    /// Why this layout holds no project: its folder is there without its files, or there is
    /// no folder (searched from `searched`).
    fn missing_or(&self, searched: PathBuf) -> StoreError {
        match self.root.is_dir() {
            true => StoreError::ProjectFileMissing {
                dir: self.root.clone(),
            },
            false => StoreError::NotInitialized { searched },
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The project folder that holds `.coordination/`.
    pub fn project_dir(&self) -> &Path {
        self.root.parent().unwrap_or(&self.root)
    }

    pub fn tasks_file(&self) -> PathBuf {
        self.root.join("tasks.json")
    }

    /// The pointer to a project kept elsewhere (a database), instead of `tasks.json`.
    pub fn pointer_file(&self) -> PathBuf {
        self.root.join("store.json")
    }

    /// Whether this folder is a project's: it holds the tasks, or points to where they are.
    pub fn holds_project(&self) -> bool {
        self.tasks_file().is_file() || self.pointer_file().is_file()
    }

    /// `path` when no symbolic link lies on the way to it from this folder (the folder itself
    /// may be one): the store never follows a link out of `.coordination/`, for reads and
    /// writes alike, so a link planted there cannot make Baton write, or show, a file
    /// elsewhere. A path outside this folder is returned as it is.
    pub fn unlinked(&self, path: PathBuf) -> Result<PathBuf> {
        let Ok(rest) = path.strip_prefix(&self.root) else {
            return Ok(path);
        };
        let mut at = self.root.clone();
        for part in rest.components() {
            at.push(part);
            match std::fs::symlink_metadata(&at) {
                Ok(meta) if meta.file_type().is_symlink() => {
                    return Err(crate::error::StoreError::invalid(
                        "path",
                        format!(
                            "{} is a symbolic link; Baton does not follow links in \
                             .coordination/ (remove it: `baton leader doctor` lists them)",
                            at.display()
                        ),
                    ));
                }
                Ok(_) => {}
                // Not there (yet): nothing further on to follow.
                Err(_) => break,
            }
        }
        Ok(path)
    }

    pub fn lock_file(&self) -> PathBuf {
        self.root.join(".lock")
    }

    /// Where claims waiting for the lock leave their requests, answered together by whoever
    /// holds it (the folder store's combining).
    pub fn claims_queue(&self) -> PathBuf {
        self.root.join(Self::CLAIMS_QUEUE)
    }

    /// [`Self::claims_queue`]'s name in `.coordination/`.
    pub const CLAIMS_QUEUE: &str = ".queue";

    pub fn master_plan(&self) -> PathBuf {
        self.root.join("master-plan.md")
    }

    pub fn context_dir(&self) -> PathBuf {
        self.root.join("context")
    }

    pub fn discoveries(&self) -> PathBuf {
        self.context_dir().join("discoveries.md")
    }

    pub fn logs_dir(&self) -> PathBuf {
        self.root.join("logs")
    }

    pub fn log_file(&self, agent: &str) -> Result<PathBuf> {
        validate_agent_id(agent)?;
        Ok(self.logs_dir().join(format!("{agent}.log")))
    }

    pub fn results_dir(&self) -> PathBuf {
        self.root.join("results")
    }

    pub fn result_file(&self, task: &str) -> Result<PathBuf> {
        validate_task_id(task)?;
        Ok(self.results_dir().join(format!("{task}.md")))
    }

    /// Where a task's own git worktree is checked out (`worker loop --worktree`).
    pub fn worktrees_dir(&self) -> PathBuf {
        self.root.join("worktrees")
    }

    pub fn worktree_dir(&self, task: &str) -> Result<PathBuf> {
        validate_task_id(task)?;
        Ok(self.worktrees_dir().join(task))
    }

    /// Each task's agents' transcripts and attempt records (`baton team`).
    pub fn transcripts_dir(&self) -> PathBuf {
        self.root.join("transcripts")
    }

    /// Task `task`'s attempt records and transcripts: `ATTEMPT.json` and `ATTEMPT.jsonl`.
    pub fn task_transcripts_dir(&self, task: &str) -> Result<PathBuf> {
        validate_task_id(task)?;
        Ok(self.transcripts_dir().join(task))
    }

    /// The team's supervisor and workers on this machine (`baton team`).
    pub fn team_dir(&self) -> PathBuf {
        self.root.join("team")
    }

    /// Each worker's last record, whichever machine it runs on.
    pub fn worker_file(&self, name: &str) -> Result<PathBuf> {
        validate_agent_id(name)?;
        Ok(self.team_dir().join("workers").join(format!("{name}.json")))
    }

    pub fn summary(&self) -> PathBuf {
        self.root.join("summary.md")
    }

    /// Runs scope signals: `runs/runs.json` numbers them, `runs/<n>/signals/` holds each
    /// run's signal files.
    pub fn runs_dir(&self) -> PathBuf {
        self.root.join("runs")
    }

    pub fn runs_file(&self) -> PathBuf {
        self.runs_dir().join("runs.json")
    }

    pub fn signals_dir(&self, run: u32) -> PathBuf {
        self.runs_dir().join(run.to_string()).join("signals")
    }

    pub fn signal_file(&self, run: u32, name: &str) -> Result<PathBuf> {
        crate::names::validate_name("signal name", name)?;
        Ok(self.signals_dir(run).join(name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kind::ErrorKind;

    fn project() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".coordination")).unwrap();
        std::fs::write(dir.path().join(".coordination/tasks.json"), "{}").unwrap();
        dir
    }

    #[test]
    fn locate_walks_up_from_a_subfolder() {
        let dir = project();
        let deep = dir.path().join("src/a/b");
        std::fs::create_dir_all(&deep).unwrap();
        let layout = Layout::locate(None, &deep).unwrap();
        assert_eq!(layout.root(), dir.path().join(".coordination"));
        assert_eq!(layout.project_dir(), dir.path());
    }

    #[test]
    fn locate_takes_an_explicit_project_or_coordination_folder() {
        let dir = project();
        let elsewhere = tempfile::tempdir().unwrap();
        for explicit in [dir.path().to_path_buf(), dir.path().join(".coordination")] {
            let layout = Layout::locate(Some(&explicit), elsewhere.path()).unwrap();
            assert_eq!(layout.root(), dir.path().join(".coordination"));
        }
    }

    #[test]
    fn locate_outside_any_project_says_to_run_init() {
        let elsewhere = tempfile::tempdir().unwrap();
        let err = Layout::locate(None, elsewhere.path())
            .unwrap_err()
            .to_string();
        assert!(err.contains("run `baton leader init"), "{err}");
        let err = Layout::locate(Some(elsewhere.path()), Path::new("/")).unwrap_err();
        assert!(matches!(err, StoreError::NotInitialized { .. }));
    }

    #[test]
    fn a_project_whose_task_list_was_deleted_is_told_so() {
        let project = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(project.path().join(".coordination/worktrees")).unwrap();
        let inside = project.path().join("src");
        std::fs::create_dir_all(&inside).unwrap();
        for err in [
            Layout::locate(None, &inside).unwrap_err(),
            Layout::locate(Some(project.path()), Path::new("/")).unwrap_err(),
        ] {
            assert!(
                matches!(err, StoreError::ProjectFileMissing { .. }),
                "{err}"
            );
            let said = err.to_string();
            assert!(
                said.contains("tasks.json") && said.contains("deleted"),
                "{said}"
            );
            assert_eq!(err.kind(), ErrorKind::NotInitialized);
        }
    }

    #[test]
    fn paths_from_names_are_validated() {
        let layout = Layout::at("/p/.coordination");
        assert!(layout.log_file("../../etc/passwd").is_err());
        assert!(layout.result_file("a/b").is_err());
        assert_eq!(
            layout.log_file("w1").unwrap(),
            Path::new("/p/.coordination/logs/w1.log")
        );
    }
}
