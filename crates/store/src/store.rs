//! [`TaskStore`]: the task operations every store offers, with the same rules, results and
//! refusals: the folder ([`crate::Project`]) and a database (`baton-pg`). Front ends reach a
//! project's tasks through this seam without knowing which store holds them; one conformance
//! suite (`crates/pg/tests/conformance.rs`) runs the same scenarios on both and compares.

use crate::error::Result;
use crate::lifecycle::{Claim, Completion, NewTask, TaskEdit};
use crate::model::Task;
use crate::status::{StatusReport, TaskView};

/// A project's tasks, wherever they are kept. Each call is one atomic change (or one
/// consistent read); a refusal changes nothing.
pub trait TaskStore: Send + Sync {
    /// Adds a task (unknown dependencies and duplicate ids refused).
    fn add_task(&self, new: NewTask) -> Result<Task>;
    /// Edits a task (dependencies only while it is available; cycles refused).
    fn edit_task(&self, id: &str, edit: TaskEdit) -> Result<Task>;
    /// Claims the best ready task; `None` when nothing is ready.
    fn claim(&self, agent: &str) -> Result<Option<Claim>>;
    /// Claims the task `id` if it is ready.
    fn claim_task(&self, agent: &str, id: &str) -> Result<Claim>;
    fn start(&self, agent: &str, id: &str) -> Result<Task>;
    fn complete(&self, agent: &str, id: &str, report: Completion) -> Result<Task>;
    fn fail(&self, agent: &str, id: &str, reason: &str) -> Result<Task>;
    fn release(&self, agent: &str, id: &str) -> Result<Task>;
    /// Renews `agent`'s leases; the ids of the tasks it holds.
    fn heartbeat(&self, agent: &str) -> Result<Vec<String>>;
    fn reset(&self, id: &str, force: bool) -> Result<Task>;
    fn cancel(&self, id: &str, reason: Option<&str>) -> Result<Task>;
    /// The board now.
    fn status(&self) -> Result<StatusReport>;

    /// Tasks a worker could claim now, best first (the order `claim` takes them in).
    fn ready_tasks(&self) -> Result<Vec<TaskView>> {
        let mut ready: Vec<TaskView> = self
            .status()?
            .tasks
            .into_iter()
            .filter(|t| t.ready)
            .collect();
        ready.sort_by_key(|t| (t.task.priority, t.task.created_at));
        Ok(ready)
    }
}

impl TaskStore for crate::Project {
    fn add_task(&self, new: NewTask) -> Result<Task> {
        crate::Project::add_task(self, new)
    }
    fn edit_task(&self, id: &str, edit: TaskEdit) -> Result<Task> {
        crate::Project::edit_task(self, id, edit)
    }
    fn claim(&self, agent: &str) -> Result<Option<Claim>> {
        crate::Project::claim(self, agent)
    }
    fn claim_task(&self, agent: &str, id: &str) -> Result<Claim> {
        crate::Project::claim_task(self, agent, id)
    }
    fn start(&self, agent: &str, id: &str) -> Result<Task> {
        crate::Project::start(self, agent, id)
    }
    fn complete(&self, agent: &str, id: &str, report: Completion) -> Result<Task> {
        crate::Project::complete(self, agent, id, report)
    }
    fn fail(&self, agent: &str, id: &str, reason: &str) -> Result<Task> {
        crate::Project::fail(self, agent, id, reason)
    }
    fn release(&self, agent: &str, id: &str) -> Result<Task> {
        crate::Project::release(self, agent, id)
    }
    fn heartbeat(&self, agent: &str) -> Result<Vec<String>> {
        crate::Project::heartbeat(self, agent)
    }
    fn reset(&self, id: &str, force: bool) -> Result<Task> {
        crate::Project::reset(self, id, force)
    }
    fn cancel(&self, id: &str, reason: Option<&str>) -> Result<Task> {
        crate::Project::cancel(self, id, reason)
    }
    fn status(&self) -> Result<StatusReport> {
        crate::Project::status(self)
    }
}
