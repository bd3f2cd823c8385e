//! The schema of `tasks.json`.
//!
//! The source design's fields keep their names and shapes so `jq` scripts and files written by
//! its tool keep working; Baton's additions (`started_at`, `lease_expires_at`, `attempts`,
//! `failure_reason`, the top-level `agents` map) are extra fields. Fields Baton does not know
//! are kept in `extra` and written back unchanged.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use crate::time::Timestamp;
use crate::touched::TrackedList;
use crate::unknown_fields::{Sifted, keeping_unknown};

/// The board's tasks, remembering which a change was handed ([`TrackedList`]).
pub type Tasks = TrackedList<Task>;

/// The whole of `tasks.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TaskFile {
    #[serde(default = "default_version")]
    pub version: String,
    #[serde(default)]
    pub created_at: Option<Timestamp>,
    #[serde(default)]
    pub last_updated: Option<Timestamp>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub tasks: Tasks,
    /// When each agent was last seen acting on the store (claim, start, heartbeat, …).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub agents: BTreeMap<String, AgentRecord>,
    /// Paths agents reserved with `baton reserve` (a held task's files are reserved by the task
    /// itself, not listed here).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reservations: Vec<Reservation>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

fn default_version() -> String {
    "1.0".to_string()
}

impl TaskFile {
    /// An empty task list created at `now`.
    pub fn new(now: Timestamp) -> Self {
        TaskFile {
            version: default_version(),
            created_at: Some(now),
            last_updated: Some(now),
            tasks: Tasks::default(),
            agents: BTreeMap::new(),
            reservations: Vec::new(),
            extra: Map::new(),
        }
    }

    pub fn task(&self, id: &str) -> Option<&Task> {
        self.tasks.iter().find(|t| t.id == id)
    }

    pub fn task_mut(&mut self, id: &str) -> Option<&mut Task> {
        self.tasks.find_mut(|t| t.id == id)
    }

    /// Records that `agent` acted at `now`.
    pub fn touch_agent(&mut self, agent: &str, now: Timestamp) {
        self.agents.entry(agent.to_string()).or_default().last_seen = Some(now);
    }
}

/// What the store knows of an agent beyond its tasks.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct AgentRecord {
    #[serde(default)]
    pub last_seen: Option<Timestamp>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Where a task stands. `cancelled` is only ever read from files of the source design's later
/// versions; Baton treats it as final, like `failed`. `proposed` is Baton's: a task of a plan
/// the lead has not approved yet, on the board for all to read, never claimed; approving it
/// makes it available (the source design's tools, which list available tasks, pass over it).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    Proposed,
    Available,
    Claimed,
    InProgress,
    Done,
    Failed,
    Cancelled,
}

impl TaskStatus {
    pub const ALL: [TaskStatus; 7] = [
        TaskStatus::Proposed,
        TaskStatus::Available,
        TaskStatus::Claimed,
        TaskStatus::InProgress,
        TaskStatus::Done,
        TaskStatus::Failed,
        TaskStatus::Cancelled,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Proposed => "proposed",
            TaskStatus::Available => "available",
            TaskStatus::Claimed => "claimed",
            TaskStatus::InProgress => "in_progress",
            TaskStatus::Done => "done",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }

    /// Held by a worker under a lease.
    pub fn is_held(self) -> bool {
        matches!(self, TaskStatus::Claimed | TaskStatus::InProgress)
    }

    /// Will not change again without a leader's reset.
    pub fn is_final(self) -> bool {
        matches!(
            self,
            TaskStatus::Done | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }
}

/// A task status as the store names it (`in-progress` and `In Progress` are accepted for
/// `in_progress`), for the command line.
impl std::str::FromStr for TaskStatus {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let wanted = text.trim().to_ascii_lowercase().replace(['-', ' '], "_");
        TaskStatus::ALL
            .into_iter()
            .find(|status| status.as_str() == wanted)
            .ok_or_else(|| {
                let names: Vec<_> = TaskStatus::ALL.map(|s| s.as_str()).into();
                format!("not a status; use one of {}", names.join(", "))
            })
    }
}

impl fmt::Display for TaskStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a task is for.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum TaskKind {
    /// Work a worker claims and does.
    #[default]
    Work,
    /// A goal a planner agent turns into work tasks, claimed by name by its team's planner.
    Plan,
}

impl TaskKind {
    pub fn is_work(&self) -> bool {
        *self == TaskKind::Work
    }
}

/// One unit of work.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
// The derived parse reads the known fields only; `Deserialize` below keeps the others.
#[serde(remote = "Self")]
pub struct Task {
    pub id: String,
    pub description: String,
    pub status: TaskStatus,
    /// 1 is the highest priority. The source design's default is 5.
    #[serde(default = "default_priority")]
    pub priority: u32,
    #[serde(default)]
    pub claimed_by: Option<String>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub dependencies: Vec<String>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub context: TaskContext,
    #[serde(default)]
    pub result: Option<Box<TaskResult>>,
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(type = "string | null"))]
    pub created_at: Option<Timestamp>,
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(type = "string | null"))]
    pub claimed_at: Option<Timestamp>,
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(type = "string | null"))]
    pub completed_at: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(type = "string | null"))]
    pub started_at: Option<Timestamp>,
    /// A held task whose lease has passed may be claimed by another worker.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(type = "string | null"))]
    pub lease_expires_at: Option<Timestamp>,
    /// How many times the task has been claimed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub attempts: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_reason: Option<String>,
    /// When the lead last reset it or sent it back for changes: attempts that failed before
    /// count no more against a profile's `max_attempts`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(type = "string | null"))]
    pub reset_at: Option<Timestamp>,
    /// Sent back for changes to the worker that did it (`claimed_by`) and held for it: its
    /// next claim takes this task before any other. Once its lease runs out, anyone may.
    #[serde(default, skip_serializing_if = "is_false")]
    pub sent_back: bool,
    /// How whoever judges the work (a judge agent, the lead) will know it is done: what must
    /// hold when it is. Written with the task by whoever planned it; none for a task without.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acceptance: Option<String>,
    /// Work (the default), or a team's plan: the goal a planner agent turns into tasks
    /// (`team up --goal`). A plan is never claimed from the queue, only by name.
    #[serde(default, skip_serializing_if = "TaskKind::is_work")]
    pub kind: TaskKind,
    /// The plan task whose planner added this one: that planner may edit or cancel it, and the
    /// lead approves it with the rest of that plan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<String>,
    #[serde(flatten, skip_deserializing)]
    #[cfg_attr(feature = "ts", ts(skip))]
    pub extra: Map<String, Value>,
}

impl Serialize for Task {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Task::serialize(self, serializer)
    }
}

impl<'de> Deserialize<'de> for Task {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let (mut task, extra) = keeping_unknown::<D, Task>(deserializer)?;
        task.extra = extra;
        Ok(task)
    }
}

impl Sifted for Task {
    fn is_field(key: &str) -> bool {
        matches!(
            key,
            "id" | "description"
                | "status"
                | "priority"
                | "claimed_by"
                | "dependencies"
                | "context"
                | "result"
                | "created_at"
                | "claimed_at"
                | "completed_at"
                | "started_at"
                | "lease_expires_at"
                | "attempts"
                | "failure_reason"
                | "reset_at"
                | "sent_back"
                | "acceptance"
                | "kind"
                | "plan"
        )
    }

    fn parse_fields<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Task::deserialize(deserializer)
    }
}

pub const DEFAULT_PRIORITY: u32 = 5;

pub(crate) fn default_priority() -> u32 {
    DEFAULT_PRIORITY
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl Task {
    /// Claimed or in progress, by `agent`.
    pub fn is_held_by(&self, agent: &str) -> bool {
        self.status.is_held() && self.claimed_by.as_deref() == Some(agent)
    }

    /// One of the tasks plan task `plan`'s planner added ([`Task::plan`]).
    pub fn is_of_plan(&self, plan: &str) -> bool {
        self.plan.as_deref() == Some(plan)
    }

    /// When the holder's lease ends. A held task from a file without leases (the source design
    /// wrote none) is given one counted from its claim, so it cannot stay stuck forever.
    pub fn lease_end(&self, default_lease: std::time::Duration) -> Option<Timestamp> {
        if !self.status.is_held() {
            return None;
        }
        self.lease_expires_at
            .or_else(|| self.claimed_at.map(|t| t.after(default_lease)))
    }

    /// Held, and its lease has passed (or it has no way to know when it was claimed).
    pub fn lease_expired(&self, now: Timestamp, default_lease: std::time::Duration) -> bool {
        self.status.is_held() && self.lease_end(default_lease).is_none_or(|end| end <= now)
    }
}

/// What a worker needs to know beyond the description.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
// As for `Task`: the derived parse reads the known fields, `Deserialize` keeps the others.
#[serde(remote = "Self")]
pub struct TaskContext {
    #[serde(default, deserialize_with = "null_as_default")]
    pub files: Vec<String>,
    #[serde(default, deserialize_with = "text_or_lines")]
    pub hints: String,
    #[serde(flatten, skip_deserializing)]
    #[cfg_attr(feature = "ts", ts(skip))]
    pub extra: Map<String, Value>,
}

impl Serialize for TaskContext {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        TaskContext::serialize(self, serializer)
    }
}

impl<'de> Deserialize<'de> for TaskContext {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let (mut context, extra) = keeping_unknown::<D, TaskContext>(deserializer)?;
        context.extra = extra;
        Ok(context)
    }
}

impl Sifted for TaskContext {
    fn is_field(key: &str) -> bool {
        matches!(key, "files" | "hints")
    }

    fn parse_fields<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        TaskContext::deserialize(deserializer)
    }
}

/// What a worker reported when it finished (or failed) a task.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct TaskResult {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    #[serde(default)]
    pub files_modified: Vec<String>,
    #[serde(default)]
    pub files_created: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The git branch the task was worked on, when it had a worktree of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<BranchRecord>,
    #[serde(flatten)]
    #[cfg_attr(feature = "ts", ts(skip))]
    pub extra: Map<String, Value>,
}

/// A task's own git branch (`baton/TASK-ID`, worked in a worktree of its own), as it stood when
/// the task finished: what the lead merges with `baton leader merge`.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BranchRecord {
    /// The branch, `baton/TASK-ID`.
    pub name: String,
    /// The lead's branch it was started from (its upstream), if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
    /// The commits on it that its base does not have, oldest first.
    #[serde(default)]
    pub commits: Vec<CommitRecord>,
    /// Files changed in the worktree but not committed when the task finished (they are not
    /// on the branch, so a merge does not bring them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub uncommitted: Vec<String>,
}

/// One commit on a task's branch.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CommitRecord {
    /// The full commit id.
    pub id: String,
    /// Its subject line.
    pub subject: String,
}

/// A result is an object in the source design's files, but other tools wrote a bare string.
impl<'de> Deserialize<'de> for TaskResult {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Object {
            #[serde(default)]
            output: Option<String>,
            #[serde(default, deserialize_with = "null_as_default")]
            files_modified: Vec<String>,
            #[serde(default, deserialize_with = "null_as_default")]
            files_created: Vec<String>,
            #[serde(default)]
            error: Option<String>,
            #[serde(default)]
            branch: Option<BranchRecord>,
            #[serde(flatten)]
            extra: Map<String, Value>,
        }
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Shape {
            Text(String),
            Object(Box<Object>),
        }
        Ok(match Shape::deserialize(deserializer)? {
            Shape::Text(output) => TaskResult {
                output: Some(output),
                ..TaskResult::default()
            },
            Shape::Object(o) => TaskResult {
                output: o.output,
                files_modified: o.files_modified,
                files_created: o.files_created,
                error: o.error,
                branch: o.branch,
                extra: o.extra,
            },
        })
    }
}

/// Reads `null` as the type's default, as the source design's optional fields may be null.
pub(crate) fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

/// Reads hints written as one string, a list of strings, or null (read as they come, not
/// buffered to try one shape and then the other).
fn text_or_lines<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    struct Hints;
    impl<'de> serde::de::Visitor<'de> for Hints {
        type Value = String;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("hints: a string, a list of strings, or null")
        }
        fn visit_str<E>(self, text: &str) -> Result<String, E> {
            Ok(text.to_string())
        }
        fn visit_string<E>(self, text: String) -> Result<String, E> {
            Ok(text)
        }
        fn visit_unit<E>(self) -> Result<String, E> {
            Ok(String::new())
        }
        fn visit_none<E>(self) -> Result<String, E> {
            Ok(String::new())
        }
        fn visit_some<D: Deserializer<'de>>(self, inner: D) -> Result<String, D::Error> {
            inner.deserialize_any(Hints)
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut lines: A) -> Result<String, A::Error> {
            let mut text = String::new();
            let mut first = true;
            while let Some(line) = lines.next_element::<String>()? {
                if !first {
                    text.push('\n');
                }
                first = false;
                text.push_str(&line);
            }
            Ok(text)
        }
    }
    deserializer.deserialize_any(Hints)
}

/// Paths held by one agent: an explicit reservation (`baton reserve`), or a held task's
/// files while it is held.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Reservation {
    /// `r-N` for one made with `baton reserve`; `task:ID` for the files of a held task.
    pub id: String,
    pub agent: String,
    /// The task it is for: it ends when the task is no longer held.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    /// Project-relative paths and globs.
    pub paths: Vec<String>,
    /// Shared reservations conflict only with exclusive ones.
    #[serde(default)]
    pub shared: bool,
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub since: Timestamp,
    /// When it ends at the latest (its `--ttl`, or its task's lease); it also ends when its
    /// holder shows no sign of life for a lease.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(type = "string | null"))]
    pub expires_at: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file as the source design's `coordination.py` writes it.
    const SOURCE_DESIGN_FILE: &str = r#"{
  "version": "1.0",
  "created_at": "2026-01-19T20:54:25.282933",
  "last_updated": "2026-01-19T20:55:10.876378",
  "tasks": [
    {
      "id": "task-20260119205434-ad93",
      "description": "Design User model",
      "status": "done",
      "priority": 1,
      "dependencies": [],
      "context": {"files": ["prisma/schema.prisma"], "hints": ""},
      "created_at": "2026-01-19T20:54:34.535021",
      "claimed_by": "terminal-2",
      "claimed_at": "2026-01-19T20:54:47.583093",
      "completed_at": "2026-01-19T20:55:10.572059",
      "result": {"output": "Created User model", "files_modified": ["prisma/schema.prisma"], "files_created": []},
      "tags": ["backend"]
    },
    {
      "id": "task-20260119205435-5dbc",
      "description": "Create endpoints",
      "status": "available",
      "created_at": "2026-01-19T20:54:35.090928"
    },
    {
      "id": "t3", "description": "old style", "status": "cancelled", "priority": 2,
      "dependencies": null, "context": null, "result": "plain text result"
    }
  ]
}"#;

    #[test]
    fn loads_a_file_written_by_the_source_design() {
        let file: TaskFile = serde_json::from_str(SOURCE_DESIGN_FILE).unwrap();
        assert_eq!(file.tasks.len(), 3);
        let done = &file.tasks[0];
        assert_eq!(done.status, TaskStatus::Done);
        assert_eq!(done.context.files, ["prisma/schema.prisma"]);
        let result = done.result.as_ref().unwrap();
        assert_eq!(result.output.as_deref(), Some("Created User model"));
        assert_eq!(result.files_modified, ["prisma/schema.prisma"]);
        let available = &file.tasks[1];
        assert_eq!(available.priority, DEFAULT_PRIORITY);
        assert!(available.dependencies.is_empty());
        assert_eq!(file.tasks[2].status, TaskStatus::Cancelled);
        assert_eq!(
            file.tasks[2].result.as_ref().unwrap().output.as_deref(),
            Some("plain text result")
        );
    }

    #[test]
    fn keeps_fields_it_does_not_know() {
        let file: TaskFile = serde_json::from_str(SOURCE_DESIGN_FILE).unwrap();
        let written = serde_json::to_value(&file).unwrap();
        assert_eq!(written["tasks"][0]["tags"], serde_json::json!(["backend"]));
    }

    #[test]
    fn always_writes_the_source_schema_fields() {
        let file: TaskFile = serde_json::from_str(SOURCE_DESIGN_FILE).unwrap();
        let written = serde_json::to_value(&file).unwrap();
        let available = written["tasks"][1].as_object().unwrap();
        for field in [
            "id",
            "description",
            "status",
            "priority",
            "claimed_by",
            "dependencies",
            "context",
            "result",
            "created_at",
            "claimed_at",
            "completed_at",
        ] {
            assert!(available.contains_key(field), "missing {field}");
        }
        assert_eq!(written["tasks"][1]["context"]["hints"], "");
    }

    #[test]
    fn hints_may_be_a_list() {
        let ctx: TaskContext =
            serde_json::from_str(r#"{"files": null, "hints": ["a", "b"]}"#).unwrap();
        assert_eq!(ctx.hints, "a\nb");
        assert!(ctx.files.is_empty());
    }

    #[test]
    fn a_held_task_without_a_lease_expires_from_its_claim_time() {
        let lease = std::time::Duration::from_secs(60);
        let claimed = Timestamp::parse("2026-01-01T00:00:00Z").unwrap();
        let mut task: Task = serde_json::from_value(serde_json::json!({
            "id": "t", "description": "d", "status": "claimed", "claimed_at": claimed.to_string()
        }))
        .unwrap();
        assert!(!task.lease_expired(claimed.after(std::time::Duration::from_secs(59)), lease));
        assert!(task.lease_expired(claimed.after(lease), lease));
        task.claimed_at = None;
        assert!(task.lease_expired(claimed, lease), "no claim time: stale");
        task.status = TaskStatus::Done;
        assert!(!task.lease_expired(claimed.after(lease), lease));
    }
}
