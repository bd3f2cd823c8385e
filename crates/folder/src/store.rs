//! [`FolderStore`]: a project kept in its `.coordination/` folder, opened. Every change is
//! one transaction ([`FolderStore::transact`]): the exclusive lock, a read of `tasks.json`,
//! the core's rules applied, an atomic write when something changed, then the files derived
//! from it (result reports, the agent's log line).

use std::fs;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use baton_core::Layout;
use baton_core::{DEFAULT_LEASE, LogEntry, Result, StoreError, Timestamp, notes};
use baton_core::{Task, TaskFile};
use baton_fs::{FileLock, write_atomic, write_atomic_parts};

use crate::claim_board::{ClaimBoard, Skim, corrupt};
use crate::reread::Reread;

/// An opened `.coordination/` folder that holds its project's tasks.
#[derive(Debug, Clone)]
pub struct FolderStore {
    layout: Layout,
    /// How long claims, starts and heartbeats hold a task (`TaskStore::lease`).
    pub(crate) lease: Duration,
    /// The tasks a window's last read of the board parsed ([`Self::load_again`]).
    reread: Arc<Mutex<Reread>>,
}

/// The file at `path` into `bytes` (cleared first), in the memory `bytes` already has: a reader
/// that reads a board of megabytes at every change (a window, the change feed) spent as long
/// faulting fresh memory in as reading the file.
pub(crate) fn read_into(path: &Path, bytes: &mut Vec<u8>) -> std::io::Result<()> {
    use std::io::Read;
    bytes.clear();
    fs::File::open(path)?.read_to_end(bytes).map(drop)
}

/// What a transaction decided: write the new state, or keep the file as it was.
pub(crate) enum Change<T> {
    Write(T),
    Keep(T),
}

impl FolderStore {
    /// Creates `.coordination/` in `dir` with a master plan for `goal`. Refuses if a task store
    /// is already there. `tasks.json` is written last, so an interrupted init can be re-run.
    pub fn init(dir: &Path, goal: &str, approach: Option<&str>) -> Result<FolderStore> {
        let goal = notes::check_goal(goal)?;
        let layout = Layout::for_project(dir);
        for folder in [
            layout.root().to_path_buf(),
            layout.context_dir(),
            layout.logs_dir(),
            layout.results_dir(),
        ] {
            fs::create_dir_all(&folder).map_err(|e| StoreError::io(&folder, e))?;
        }
        let _lock = FileLock::exclusive(&layout.lock_file())?;
        if layout.tasks_file().exists() {
            return Err(StoreError::AlreadyInitialized {
                path: layout.root().to_path_buf(),
            });
        }
        let now = Timestamp::now();
        write_atomic(
            &layout.master_plan(),
            notes::master_plan(goal, approach, now).as_bytes(),
        )?;
        if !layout.discoveries().exists() {
            write_atomic(&layout.discoveries(), notes::DISCOVERIES_HEADER.as_bytes())?;
        }
        crate::ignored::ignore_own_files(&layout)?;
        write_atomic(
            &layout.tasks_file(),
            &crate::rewrite::encode(&TaskFile::new(now))?,
        )?;
        let store = FolderStore {
            layout,
            lease: DEFAULT_LEASE,
            reread: Arc::default(),
        };
        store.log(&LogEntry::init(goal), now);
        Ok(store)
    }

    /// Opens the folder at `layout`, which must hold a `tasks.json` (a folder that points to a
    /// database instead is refused as such: `baton-api`'s `OpenProject` opens those).
    pub fn open(layout: Layout) -> Result<FolderStore> {
        if !layout.tasks_file().is_file() && layout.pointer_file().is_file() {
            return Err(StoreError::KeptInDatabase {
                path: layout.root().to_path_buf(),
            });
        }
        if !layout.tasks_file().is_file() {
            return Err(StoreError::NotInitialized {
                searched: layout.project_dir().to_path_buf(),
            });
        }
        Ok(FolderStore {
            layout,
            lease: DEFAULT_LEASE,
            reread: Arc::default(),
        })
    }

    /// The folder at `layout` as it is, nothing checked or created: for writing a project's
    /// folder whose `tasks.json` comes last (an export from another store), so that its runs,
    /// signals and documents are written as the folder store writes them.
    pub fn unopened(layout: Layout) -> FolderStore {
        FolderStore {
            layout,
            lease: DEFAULT_LEASE,
            reread: Arc::default(),
        }
    }

    /// Finds and opens the folder: `dir` if given, else the nearest one above `cwd`.
    pub fn locate(dir: Option<&Path>, cwd: &Path) -> Result<FolderStore> {
        FolderStore::open(Layout::locate(dir, cwd)?)
    }

    /// Uses `lease` for new claims, starts and heartbeats (default 15 minutes).
    pub fn with_lease(mut self, lease: Duration) -> Self {
        self.lease = lease;
        self
    }

    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Reads `tasks.json` without locking: writes are atomic renames, so this sees a whole
    /// state, never a torn one.
    pub fn load(&self) -> Result<TaskFile> {
        Ok(self.load_keeping_bytes()?.0)
    }

    /// [`Self::load`] for a reader that reads the board again on every change (a window):
    /// only the tasks whose text changed since this store's last such read are parsed.
    pub(crate) fn load_again(&self) -> Result<TaskFile> {
        self.read_again(Reread::read, |file| file)
    }

    /// [`Self::load_again`] with the tasks apart, each shared with what this store keeps
    /// ([`Reread::read_shared`]).
    pub(crate) fn load_shared_again(&self) -> Result<(TaskFile, Vec<Arc<Task>>)> {
        self.read_again(Reread::read_shared, |mut file| {
            let tasks = std::mem::take(&mut file.tasks).into_iter().map(Arc::new);
            (file, tasks.collect())
        })
    }

    /// The board read again with `read`, or read whole and given to `whole` when it cannot
    /// be read so.
    fn read_again<T>(
        &self,
        read: impl FnOnce(&mut Reread, &[u8]) -> Option<T>,
        whole: impl FnOnce(TaskFile) -> T,
    ) -> Result<T> {
        let mut reread = self.reread.lock().unwrap_or_else(PoisonError::into_inner);
        let mut bytes = std::mem::take(&mut reread.spare);
        self.read_board_into(&mut bytes)?;
        let board = match read(&mut reread, &bytes) {
            Some(board) => Ok(board),
            None => self.parse_board(&bytes).map(whole),
        };
        reread.keep_bytes(bytes);
        board
    }

    /// [`Self::load`], and the file's bytes, from which a change copies the tasks it left
    /// alone (`rewrite`).
    fn load_keeping_bytes(&self) -> Result<(TaskFile, Vec<u8>)> {
        let bytes = self.read_board()?;
        Ok((self.parse_board(&bytes)?, bytes))
    }

    /// `tasks.json`'s bytes.
    pub(crate) fn read_board(&self) -> Result<Vec<u8>> {
        let mut bytes = Vec::new();
        self.read_board_into(&mut bytes)?;
        Ok(bytes)
    }

    /// [`Self::read_board`] into `bytes`, keeping its memory ([`read_into`]).
    fn read_board_into(&self, bytes: &mut Vec<u8>) -> Result<()> {
        let path = self.layout.tasks_file();
        match read_into(&path, bytes) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(StoreError::NotInitialized {
                searched: self.layout.project_dir().to_path_buf(),
            }),
            Err(e) => Err(StoreError::io(path, e)),
        }
    }

    /// The board `bytes` (read from `tasks.json`) hold, every task whole; a board that does
    /// not parse is refused saying where.
    pub(crate) fn parse_board(&self, bytes: &[u8]) -> Result<TaskFile> {
        let path = self.layout.tasks_file();
        let corrupt = |e: serde_json::Error| corrupt(&path, &e, (e.line(), e.column()));
        // Checked as UTF-8 once, whole, rather than string by string as it is parsed.
        match std::str::from_utf8(bytes) {
            Ok(text) => serde_json::from_str(text).map_err(corrupt),
            Err(_) => serde_json::from_slice(bytes).map_err(corrupt),
        }
    }

    /// Holds the lock, reads, applies `op`, and writes the result atomically if `op` asks to.
    /// If `op` fails, nothing is written.
    pub(crate) fn transact<T>(
        &self,
        op: impl FnOnce(&mut TaskFile, Timestamp) -> Result<Change<T>>,
    ) -> Result<T> {
        let lock = FileLock::exclusive(&self.layout.lock_file())?;
        self.transact_holding(&lock, op)
    }

    /// [`Self::transact`] for a caller that holds the folder's `lock` already.
    pub(crate) fn transact_holding<T>(
        &self,
        lock: &FileLock,
        op: impl FnOnce(&mut TaskFile, Timestamp) -> Result<Change<T>>,
    ) -> Result<T> {
        self.transact_reading(lock, |file, _, now| op(file, now))
    }

    /// [`Self::transact_holding`] with `op` shown the board's bytes as they were read too (how
    /// the file is laid out, which the board read from it does not say).
    pub(crate) fn transact_reading<T>(
        &self,
        _lock: &FileLock,
        op: impl FnOnce(&mut TaskFile, &[u8], Timestamp) -> Result<Change<T>>,
    ) -> Result<T> {
        let (mut file, read) = self.load_keeping_bytes()?;
        let now = Timestamp::now();
        match op(&mut file, &read, now)? {
            Change::Keep(value) => Ok(value),
            Change::Write(value) => {
                file.last_updated = Some(now);
                let pieces = crate::rewrite::encode_after(&mut file, &read)?;
                write_atomic_parts(&self.layout.tasks_file(), &pieces.slices())?;
                Ok(value)
            }
        }
    }

    /// [`Self::transact_holding`] for claims and added tasks: `op` is given the board with its
    /// tasks read for what `skim` says ([`ClaimBoard`]), read in full only when one is taken.
    pub(crate) fn transact_skimming<T>(
        &self,
        _lock: &FileLock,
        skim: Skim,
        op: impl FnOnce(&mut ClaimBoard, Timestamp) -> Result<Change<T>>,
    ) -> Result<T> {
        let path = self.layout.tasks_file();
        let read = self.read_board()?;
        let mut board = ClaimBoard::read(path, read, skim, |b| self.parse_board(b))?;
        let now = Timestamp::now();
        match op(&mut board, now)? {
            Change::Keep(value) => Ok(value),
            Change::Write(value) => {
                let pieces = board.encode(now)?;
                write_atomic_parts(&self.layout.tasks_file(), &pieces.slices())?;
                Ok(value)
            }
        }
    }

    /// Runs `op` in a transaction that always writes, and returns a copy of task `id` after it.
    pub(crate) fn change_task(
        &self,
        id: &str,
        op: impl FnOnce(&mut TaskFile, Timestamp) -> Result<()>,
    ) -> Result<(Task, Timestamp)> {
        self.transact(|file, now| {
            // Archived work the lead changes (a reset, a review sent back) is live again.
            self.restore(file, &[id])?;
            op(file, now)?;
            let task = file
                .task(id)
                .cloned()
                .ok_or_else(|| StoreError::UnknownTask { id: id.to_string() })?;
            Ok(Change::Write((task, now)))
        })
    }

    /// Journals an operation that has already happened. Best effort: `tasks.json` holds the
    /// record, and failing an operation that is done because its log line could not be
    /// written would mislead the caller.
    pub(crate) fn log(&self, entry: &LogEntry, now: Timestamp) {
        let _ = crate::journal::record(&self.layout, entry, now);
    }
}

#[cfg(test)]
mod tests;
