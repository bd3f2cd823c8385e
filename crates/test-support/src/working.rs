//! A worker's loop as the tests that need its branches run it.

use crate::{Project, expect_code};

impl Project {
    /// `worker loop WORKER --worktree --quiet --exec EXEC` until no task is left, committing
    /// as [`crate::GIT_IDENTITY`]; it must exit 0.
    pub fn work_in_worktrees(&self, worker: &str, exec: &str) {
        let out = self
            .committing(&[
                "worker",
                "loop",
                worker,
                "--worktree",
                "--quiet",
                "--exec",
                exec,
            ])
            .output()
            .unwrap();
        expect_code("worker loop", out, 0);
    }
}
