//! The folder's archive of landed work ([`baton_core::archive`]): `archive/YYYY-MM.jsonl`, one
//! archived task a line, appended to and never rewritten, and `archive/index.tsv`, a line per
//! archived task (its id and month), so a lookup by id, or a new task's id, reads one small
//! file rather than every month.
//!
//! Moving a task is two writes under the board's lock: its line is appended (and synced) to
//! its month and the index first, then `tasks.json` is replaced without it. A crash between
//! the two leaves the task in both places, which readers resolve for the board (a task on the
//! board is live), never in neither. A task the lead or a new task needs again (a reset, a
//! review sent back, a dependency) comes back to the board as it was; archived again later,
//! its newer line wins.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::PathBuf;

use baton_core::archive::{ARCHIVE, ArchiveReport, ArchivedTask};
use baton_core::{Result, StoreError, Task, TaskFile, Timestamp};
use baton_fs::FileLock;

use crate::store::{Change, FolderStore};

/// The index's file name in the archive folder.
const INDEX: &str = "index.tsv";

impl FolderStore {
    fn archive_dir(&self) -> Result<PathBuf> {
        self.layout().unlinked(self.layout().root().join(ARCHIVE))
    }

    /// File `name` of the archive, refused when a link lies on the way to it.
    fn archive_file(&self, name: &str) -> Result<PathBuf> {
        self.layout()
            .unlinked(self.layout().root().join(ARCHIVE).join(name))
    }

    /// Moves the tasks `choose` picks from the board (read under the lock) to the archive; with
    /// `dry_run`, says which it would move and moves none.
    pub(crate) fn move_to_archive(
        &self,
        choose: &dyn Fn(&TaskFile, Timestamp) -> Vec<String>,
        dry_run: bool,
    ) -> Result<ArchiveReport> {
        let dir = self.archive_dir()?;
        let place = dir.display().to_string();
        let lock = FileLock::exclusive(&self.layout().lock_file())?;
        self.transact_reading(&lock, |file, read, now| {
            let chosen = choose(file, now);
            let report = |archived: Vec<String>, live: usize| ArchiveReport {
                archived,
                live,
                place: place.clone(),
            };
            // A board laid out otherwise (pretty, by an earlier Baton or another tool) is
            // written whole in Baton's layout, a task a line, even when nothing leaves it.
            if !dry_run && chosen.is_empty() && !crate::rewrite::in_lines(read) {
                file.tasks.change_all();
                return Ok(Change::Write(report(chosen, file.tasks.len())));
            }
            if dry_run || chosen.is_empty() {
                let live = file.tasks.len() - if dry_run { chosen.len() } else { 0 };
                return Ok(Change::Keep(report(chosen, live)));
            }
            let (leaving, staying): (Vec<Task>, Vec<Task>) = std::mem::take(&mut file.tasks)
                .into_iter()
                .partition(|t| chosen.contains(&t.id));
            let archived: Vec<ArchivedTask> = leaving
                .into_iter()
                .map(|task| ArchivedTask {
                    task,
                    archived_at: now,
                })
                .collect();
            if let Err(e) = self.append(&dir, &archived) {
                // Nothing left the board.
                file.tasks = staying.into();
                file.tasks.extend(archived.into_iter().map(|a| a.task));
                return Err(e);
            }
            file.tasks = staying.into();
            let ids = archived.into_iter().map(|a| a.task.id).collect();
            Ok(Change::Write(report(ids, file.tasks.len())))
        })
    }

    /// Appends `archived` to their months' files and the index, each synced.
    fn append(&self, dir: &std::path::Path, archived: &[ArchivedTask]) -> Result<()> {
        fs::create_dir_all(dir).map_err(|e| StoreError::io(dir.to_path_buf(), e))?;
        let mut months: BTreeMap<String, String> = BTreeMap::new();
        let mut index = String::new();
        for task in archived {
            let month = task.month();
            let lines = months.entry(month.clone()).or_default();
            lines.push_str(&task.line()?);
            lines.push('\n');
            index.push_str(&format!("{}\t{month}\n", task.task.id));
        }
        for (month, lines) in &months {
            append_synced(&self.archive_file(&format!("{month}.jsonl"))?, lines)?;
        }
        append_synced(&self.archive_file(INDEX)?, &index)
    }

    /// Every archived task id with its month (the last line for an id wins).
    fn index(&self) -> Result<HashMap<String, String>> {
        let path = self.archive_file(INDEX)?;
        let text = match fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(HashMap::new()),
            Err(e) => return Err(StoreError::io(path, e)),
        };
        Ok(text
            .lines()
            .filter_map(|line| line.split_once('\t'))
            .map(|(id, month)| (id.to_string(), month.to_string()))
            .collect())
    }

    /// Whether id `id` was ever archived, and the highest `task-N` number archived.
    pub(crate) fn archived_ids(&self) -> Result<ArchivedIds> {
        Ok(ArchivedIds(self.index()?))
    }

    /// The archived tasks of month file `month` (each id's last line).
    fn month(&self, month: &str) -> Result<Vec<ArchivedTask>> {
        if month.len() != 7 || !month.chars().all(|c| c.is_ascii_digit() || c == '-') {
            return Err(StoreError::invalid(
                "archive",
                format!("{month:?} is not a month of the archive's index; fix or remove the line"),
            ));
        }
        let path = self.archive_file(&format!("{month}.jsonl"))?;
        let text = match fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(StoreError::io(path, e)),
        };
        let mut by_id: BTreeMap<String, ArchivedTask> = BTreeMap::new();
        for (n, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            let task = ArchivedTask::parse(line, &format!("{} line {}", path.display(), n + 1))?;
            by_id.insert(task.task.id.clone(), task);
        }
        Ok(by_id.into_values().collect())
    }

    /// Every archived task, oldest month first.
    pub(crate) fn archived_tasks(&self) -> Result<Vec<ArchivedTask>> {
        let mut months: Vec<String> = self.index()?.into_values().collect();
        months.sort();
        months.dedup();
        let mut all = Vec::new();
        for month in months {
            all.extend(self.month(&month)?);
        }
        Ok(all)
    }

    /// The archived tasks the board `live` does not hold (one brought back to it is the
    /// board's), oldest month first.
    pub(crate) fn archived_beside(&self, live: &TaskFile) -> Result<Vec<Task>> {
        let on_board: HashSet<&str> = live.tasks.iter().map(|t| t.id.as_str()).collect();
        Ok(self
            .archived_tasks()?
            .into_iter()
            .map(|a| a.task)
            .filter(|t| !on_board.contains(t.id.as_str()))
            .collect())
    }

    /// Archived task `id`, if it is one.
    pub(crate) fn archived_task(&self, id: &str) -> Result<Option<ArchivedTask>> {
        let Some(month) = self.index()?.remove(id) else {
            return Ok(None);
        };
        Ok(self.month(&month)?.into_iter().find(|t| t.task.id == id))
    }

    /// Brings the archived ones of `ids` that `file` lacks back to it, as they were, with the
    /// archived tasks each depends on or is of the plan of (the board holds what a task on it
    /// needs).
    pub(crate) fn restore(&self, file: &mut TaskFile, ids: &[&str]) -> Result<()> {
        let missing: Vec<&str> = ids
            .iter()
            .copied()
            .filter(|id| file.task(id).is_none())
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        let index = self.index()?;
        // (id, whether what it needs comes too): a task asked for brings its dependencies and
        // plans; a dependency is done, so what it depended on does not matter; a plan brings
        // the plan it is of.
        let mut wanted: Vec<(String, bool)> =
            missing.iter().map(|id| (id.to_string(), true)).collect();
        while let Some((id, with_needs)) = wanted.pop() {
            let Some(month) = index.get(&id).filter(|_| file.task(&id).is_none()) else {
                continue;
            };
            if let Some(archived) = self.month(month)?.into_iter().find(|t| t.task.id == id) {
                let task = archived.task;
                if with_needs {
                    wanted.extend(task.dependencies.iter().map(|d| (d.clone(), false)));
                }
                wanted.extend(task.plan.iter().map(|p| (p.clone(), true)));
                file.tasks.push(task);
            }
        }
        Ok(())
    }
}

/// The ids the archive holds.
pub(crate) struct ArchivedIds(HashMap<String, String>);

impl ArchivedIds {
    pub fn contains(&self, id: &str) -> bool {
        self.0.contains_key(id)
    }

    /// The next `task-N` id after every one on `file` and in the archive.
    pub fn next_task_id(&self, file: &TaskFile) -> String {
        let number = |id: &str| id.strip_prefix("task-")?.parse::<u64>().ok();
        let highest = file
            .tasks
            .iter()
            .filter_map(|t| number(&t.id))
            .chain(self.0.keys().filter_map(|id| number(id)))
            .max()
            .unwrap_or(0);
        format!("task-{}", highest + 1)
    }
}

/// Appends `text` to `path` in one write, and syncs it.
fn append_synced(path: &std::path::Path, text: &str) -> Result<()> {
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| StoreError::io(path.to_path_buf(), e))?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(|e| StoreError::io(path.to_path_buf(), e))
}

#[cfg(test)]
mod tests {
    use baton_core::{ClaimRequest, Completion, NewTask, TaskStatus, TaskStore};

    use super::*;

    fn new_task(id: &str, deps: &[&str]) -> NewTask {
        NewTask {
            id: Some(id.into()),
            description: format!("Part {id}"),
            dependencies: deps.iter().map(|d| d.to_string()).collect(),
            ..NewTask::default()
        }
    }

    /// A project with `done` (finished) and `live` (which depends on `kept`, done too).
    fn project() -> (tempfile::TempDir, FolderStore) {
        let dir = tempfile::tempdir().unwrap();
        let store = FolderStore::init(dir.path(), "goal", None).unwrap();
        for (id, deps) in [("done", &[][..]), ("kept", &[]), ("live", &["kept"])] {
            store.add_task(new_task(id, deps)).unwrap();
        }
        for id in ["done", "kept"] {
            store.claim(&ClaimRequest::task("w1", id)).unwrap();
            store.start("w1", id).unwrap();
            let report = Completion {
                output: format!("{id} is done"),
                ..Completion::default()
            };
            store.complete("w1", id, report).unwrap();
        }
        (dir, store)
    }

    fn archive_done(store: &FolderStore) -> ArchiveReport {
        store
            .archive(
                &|file, now| {
                    baton_core::archive::archivable(file, now, std::time::Duration::ZERO, &|_| true)
                },
                false,
            )
            .unwrap()
    }

    fn ready(store: &FolderStore, id: &str) -> bool {
        store.ready_tasks().unwrap().iter().any(|t| t.task.id == id)
    }

    fn ids(tasks: &[Task]) -> Vec<&str> {
        tasks.iter().map(|t| t.id.as_str()).collect()
    }

    #[test]
    fn landed_work_leaves_the_board_and_is_still_found() {
        let (dir, store) = project();
        let before = store.load().unwrap().task("done").cloned().unwrap();
        let report = archive_done(&store);
        assert_eq!(
            (report.archived.as_slice(), report.live),
            (&["done".to_string()][..], 2)
        );
        // The board keeps what a live task depends on.
        assert_eq!(ids(&store.load().unwrap().tasks), ["kept", "live"]);
        assert_eq!(ids(&store.archived().unwrap()), ["done"]);
        let found = store.task("done").unwrap().unwrap();
        assert_eq!(
            serde_json::to_value(found).unwrap(),
            serde_json::to_value(&before).unwrap()
        );
        let all = store.status_all().unwrap();
        assert_eq!(all.tasks.len(), 3);
        assert_eq!(store.status().unwrap().tasks.len(), 2);
        // One line in the month's file, readable as the board's task.
        let month = dir.path().join(".coordination/archive");
        let files: Vec<String> = fs::read_dir(&month)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(files.iter().any(|f| f.ends_with(".jsonl")), "{files:?}");
        assert!(files.contains(&INDEX.to_string()), "{files:?}");
        // Nothing more to move: the board is not written again.
        let written = fs::metadata(store.layout().tasks_file())
            .unwrap()
            .modified()
            .unwrap();
        assert!(archive_done(&store).archived.is_empty());
        let after = fs::metadata(store.layout().tasks_file())
            .unwrap()
            .modified()
            .unwrap();
        assert_eq!(written, after);
    }

    #[test]
    fn an_archived_id_is_taken_and_new_ids_count_past_it() {
        let (_dir, store) = project();
        store
            .add_task(NewTask {
                description: "numbered".into(),
                ..NewTask::default()
            })
            .unwrap();
        store.claim(&ClaimRequest::task("w1", "task-1")).unwrap();
        store.cancel("task-1", Some("not wanted")).unwrap();
        assert_eq!(archive_done(&store).archived, ["done", "task-1"]);
        let err = store.add_task(new_task("done", &[])).unwrap_err();
        assert!(matches!(err, StoreError::DuplicateTask { .. }), "{err}");
        let next = store
            .add_task(NewTask {
                description: "next".into(),
                ..NewTask::default()
            })
            .unwrap();
        assert_eq!(next.id, "task-2");
    }

    #[test]
    fn archived_work_needed_again_comes_back_as_it_was() {
        let (_dir, store) = project();
        archive_done(&store);
        // A new task that depends on it: back on the board, still done, and the new task
        // is ready at once.
        store.add_task(new_task("follow-up", &["done"])).unwrap();
        let board = store.load().unwrap();
        assert_eq!(board.task("done").unwrap().status, TaskStatus::Done);
        assert!(ready(&store, "follow-up"));
        // Listed once, though its old line is still in the archive.
        assert_eq!(store.status_all().unwrap().tasks.len(), 4);
        assert!(store.archived().unwrap().is_empty());
        // The lead resets an archived task: back on the board, available.
        store.cancel("follow-up", None).unwrap();
        archive_done(&store);
        assert!(store.load().unwrap().task("done").is_none());
        let reset = store.reset("follow-up", false).unwrap();
        assert_eq!(reset.status, TaskStatus::Available);
        // With what it depends on, so it is ready.
        assert!(ready(&store, "follow-up"));
        // Archived again later, its newer line wins.
        store.cancel("follow-up", Some("again")).unwrap();
        archive_done(&store);
        let back = store.task("follow-up").unwrap().unwrap();
        assert_eq!(back.failure_reason.as_deref(), Some("again"));
    }

    #[test]
    fn a_task_in_both_places_after_a_crash_is_the_boards() {
        let (_dir, store) = project();
        let on_board = store.load().unwrap().task("done").cloned().unwrap();
        // The archive written, the board not (a crash between the two).
        let archived = ArchivedTask {
            task: on_board.clone(),
            archived_at: Timestamp::now(),
        };
        store
            .append(&store.archive_dir().unwrap(), &[archived])
            .unwrap();
        assert!(store.archived().unwrap().is_empty());
        assert_eq!(store.status_all().unwrap().tasks.len(), 3);
        assert_eq!(archive_done(&store).archived, ["done"]);
        assert_eq!(store.status_all().unwrap().tasks.len(), 3);
    }

    #[test]
    fn a_corrupt_line_or_a_link_is_refused_with_where_it_is() {
        let (dir, store) = project();
        archive_done(&store);
        let root = dir.path().join(".coordination/archive");
        let month = fs::read_dir(&root)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.extension().is_some_and(|e| e == "jsonl"))
            .unwrap();
        fs::write(&month, "{\"id\": \"done\"\n").unwrap();
        let err = store.status_all().unwrap_err();
        assert!(err.to_string().contains("line 1"), "{err}");
        // The live board still works.
        assert_eq!(store.status().unwrap().tasks.len(), 2);
        fs::remove_dir_all(&root).unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), &root).unwrap();
        let err = store.status_all().unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{err}");
        let err = store
            .archive(&|_, _| vec!["kept".into()], false)
            .unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{err}");
        assert_eq!(fs::read_dir(elsewhere.path()).unwrap().count(), 0);
        assert_eq!(
            store.load().unwrap().tasks.len(),
            2,
            "nothing left the board"
        );
    }

    #[test]
    fn a_board_laid_out_pretty_is_written_a_task_a_line_by_the_sweep() {
        let (dir, store) = project();
        let path = dir.path().join(".coordination/tasks.json");
        let before = store.load().unwrap();
        let mut pretty = serde_json::to_vec_pretty(&before).unwrap();
        pretty.push(b'\n');
        fs::write(&path, &pretty).unwrap();
        assert!(!crate::rewrite::in_lines(&pretty));
        // A dry run writes nothing; a sweep that moves nothing writes the board whole anew.
        let nothing = |_: &TaskFile, _: Timestamp| Vec::new();
        store.archive(&nothing, true).unwrap();
        assert_eq!(fs::read(&path).unwrap(), pretty);
        let report = store.archive(&nothing, false).unwrap();
        assert!(report.archived.is_empty());
        let written = fs::read(&path).unwrap();
        assert!(crate::rewrite::in_lines(&written));
        let after: TaskFile = serde_json::from_slice(&written).unwrap();
        assert_eq!(
            serde_json::to_value(&after.tasks[..]).unwrap(),
            serde_json::to_value(&before.tasks[..]).unwrap()
        );
        // In Baton's layout already: the next sweep leaves the file alone.
        store.archive(&nothing, false).unwrap();
        assert_eq!(fs::read(&path).unwrap(), written);
    }
}
