//! Waking a reader that follows one task's transcript as it grows (`team logs --follow`): the
//! folder's transcript files of that task, watched, or the database's notifications. A wake
//! is a hint; the reader reads the store again either way, and looks at least as often as it
//! asks to be woken.

use std::time::Instant;

use baton_core::{Changes, Layout, Listener, TaskStore};

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
                let dir = local.task_transcripts_dir(task)?;
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
