//! Waking a reader that follows one task's transcript as it grows (`team logs --follow`): the
//! folder's transcript files of that task, watched, or the database's notifications. A wake
//! is a hint; the reader reads the store again either way, and looks at least as often as it
//! asks to be woken.

use std::time::Instant;

use baton_core::{Changes, Confinement, Layout, Listener, TaskStore};

use crate::error::{LiveError, Result};
use crate::watcher::{Wake, Watch, WatchMode};

/// What wakes the reader of one task's transcript.
pub struct TranscriptWait {
    waker: Waker,
}

enum Waker {
    Files(Watch),
    Store(Box<dyn Listener>),
}

impl TranscriptWait {
    /// Starts watching `task`'s transcripts in the store `tasks` keeps them in (a folder's
    /// under `local`, whose folder for the task is made if it is not there yet).
    pub fn start(
        tasks: &dyn TaskStore,
        local: &Layout,
        task: &str,
        mode: WatchMode,
    ) -> Result<TranscriptWait> {
        let waker = match tasks.changes() {
            Changes::Files(_) => {
                // Made if it is not there yet; an agent may have planted a symlink in its
                // place, so what is made is where it leads, and only inside the project.
                let dir = local.task_transcripts_dir(task)?;
                let dir = Confinement::project(local.project_dir())?
                    .resolve("task", &dir.to_string_lossy())?;
                std::fs::create_dir_all(&dir).map_err(|e| baton_core::StoreError::io(&dir, e))?;
                let mut watch = Watch::new(mode, &dir)?;
                watch.add(&dir, false)?;
                Waker::Files(watch)
            }
            Changes::Notifications => match tasks.listen_for_changes()? {
                Some(listener) => Waker::Store(listener),
                None => {
                    return Err(LiveError::Watch {
                        path: local.root().to_path_buf(),
                        message: "the store offers no notifications".into(),
                    });
                }
            },
        };
        Ok(TranscriptWait { waker })
    }

    /// Waits until the transcript may have changed (`true`) or until `until` (`false`).
    pub fn wait(&mut self, until: Option<Instant>) -> Result<bool> {
        match &mut self.waker {
            Waker::Files(watch) => Ok(!matches!(watch.wait(until)?, Wake::Deadline)),
            Waker::Store(listener) => Ok(listener.wait(until)?),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use baton_folder::FolderStore;

    #[test]
    fn a_symlink_planted_for_a_tasks_transcripts_makes_nothing_outside_the_project() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let store = FolderStore::init(dir.path(), "follow", None).unwrap();
        let transcripts = store.layout().transcripts_dir();
        std::fs::create_dir_all(&transcripts).unwrap();
        let target = outside.path().join("made");
        std::os::unix::fs::symlink(&target, transcripts.join("task-1")).unwrap();
        let refused = TranscriptWait::start(&store, store.layout(), "task-1", WatchMode::Events);
        assert!(
            matches!(
                refused,
                Err(LiveError::Store(
                    baton_core::StoreError::OutsideProject { .. }
                ))
            ),
            "{:?}",
            refused.err()
        );
        assert!(!target.exists(), "nothing was made outside the project");
        // Its own folder, once there, is watched.
        let mut wait =
            TranscriptWait::start(&store, store.layout(), "task-2", WatchMode::Events).unwrap();
        assert!(transcripts.join("task-2").is_dir());
        std::fs::write(transcripts.join("task-2").join("1.jsonl"), "{}\n").unwrap();
        let deadline = Instant::now() + std::time::Duration::from_secs(30);
        assert!(
            wait.wait(Some(deadline)).unwrap(),
            "woken by the new transcript"
        );
    }
}
