//! Claims combined when workers claim at once. A claim rewrites `tasks.json` whole under the
//! folder's lock, so workers claiming together would each wait for every other's whole read,
//! parse and durable write in turn. Instead a worker that finds the lock taken leaves its
//! request in `.coordination/.queue/` and waits for the lock; whoever takes the lock for a claim
//! applies every waiting request, in the order they came, with its own, and writes the board
//! once for all of them (as a database commits a group). The waiters it answered read their
//! answers together once it lets go (each holds the lock shared to read); one that came too late
//! for that write takes the lock and does the same for those after it.
//! The rules applied are the core's, one claim after another, so the outcome is one that the
//! claims made one by one could have had.
//!
//! What keeps it safe:
//! - A waiter holds a lock on its own request file while it waits; a request whose lock is free
//!   is a dead process's, removed unanswered (a claim nobody would receive is never made).
//! - Answers are written before the board (`.pending`) and confirmed after it (`.answer`). A
//!   waiter that finds its answer unconfirmed (the writer died between the two) checks the
//!   board for the claim itself, so a claim is neither lost nor made twice.
//! - Only a request's owner removes it, and a request that has an answer is not applied again.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use baton_core::{ClaimRequest, Claimed, Files, Result, StoreError, Task, TaskFile, Timestamp};
use baton_fs::{FileLock, TEMP_SUFFIX};
use serde::{Deserialize, Serialize};

use crate::claim_board::{ClaimBoard, Skim};
use crate::store::{Change, FolderStore};

/// At most this many waiting requests are applied with one write: a bound on how long the
/// writer holds the lock.
const BATCH: usize = 64;

/// A request is a few dozen bytes; anything larger is not one.
const MAX_REQUEST_BYTES: u64 = 4096;

/// What a waiting claim asks for (a claim of the best ready task; a named claim is never
/// combined).
#[derive(Serialize, Deserialize)]
struct Request {
    agent: String,
    ignore_reservations: bool,
}

/// What the writer left for a waiting claim.
#[derive(Serialize, Deserialize)]
struct Answer {
    task: Option<Task>,
    reclaimed_from: Option<String>,
}

impl From<Option<Claimed>> for Answer {
    fn from(claimed: Option<Claimed>) -> Self {
        match claimed {
            Some(c) => Answer {
                task: Some(c.task),
                reclaimed_from: c.reclaimed_from,
            },
            None => Answer {
                task: None,
                reclaimed_from: None,
            },
        }
    }
}

impl Answer {
    fn into_claimed(self) -> Option<Claimed> {
        let reclaimed_from = self.reclaimed_from;
        self.task.map(|task| Claimed {
            task,
            reclaimed_from,
        })
    }
}

/// Claims the best ready task for `request.agent` (`request.task` is `None`), combined with
/// the claims waiting when the lock is taken. Returns the claim and when it was made.
pub(crate) fn claim(
    store: &FolderStore,
    request: &ClaimRequest,
) -> Result<(Option<Claimed>, Timestamp)> {
    baton_core::names::validate_agent_id(&request.agent)?;
    let lock_path = store.layout().lock_file();
    let lock = match FileLock::try_exclusive(&lock_path)? {
        Some(lock) => lock,
        None => {
            // A queue that cannot be written (a read-only folder, a link in its place) only
            // loses the combining: the claim waits for the lock as any other change.
            let mut waiting = Waiting::enter(store, request).ok();
            if let Some(entered) = waiting.take() {
                // Once the writer lets go, every waiter it answered reads its answer at the
                // same time; only those it did not answer then wait for the lock in turn.
                let shared = FileLock::shared(&lock_path)?;
                let answer = entered.confirmed();
                if let Ok(None) = answer {
                    waiting = Some(entered);
                } else {
                    // The request leaves the queue before the lock is let go: a writer
                    // reading the queue after would take it for one still waiting.
                    drop(entered);
                    drop(shared);
                    if let Some(claimed) = answer? {
                        return Ok((claimed, Timestamp::now()));
                    }
                }
            }
            let lock = FileLock::exclusive(&lock_path)?;
            if let Some(waiting) = waiting
                && let Some(claimed) = waiting.answered(store)?
            {
                return Ok((claimed, Timestamp::now()));
            }
            lock
        }
    };
    write_for_all(store, &lock, request)
}

/// Holding `lock`: applies the waiting requests, then `request`, and writes the board once.
fn write_for_all(
    store: &FolderStore,
    lock: &FileLock,
    request: &ClaimRequest,
) -> Result<(Option<Claimed>, Timestamp)> {
    let lease = store.lease;
    let queue = queue_dir(store);
    let mut answered: Vec<(PathBuf, Answer)> = Vec::new();
    let mut unanswerable = false;
    let outcome = store.transact_skimming(lock, Skim::Choosing, |board, now| {
        let mut changed = false;
        for (path, waiting) in waiting_requests(queue.as_deref()) {
            let files = match waiting.ignore_reservations {
                true => Files::Ignore,
                false => Files::Respect,
            };
            let theirs = ClaimRequest {
                agent: waiting.agent,
                task: None,
                files,
            };
            // A request the rules refuse gets no answer: its owner claims for itself and
            // hears why.
            let Ok(claimed) = board.claim(&theirs, now, lease) else {
                continue;
            };
            changed |= claimed.is_some();
            answered.push((path, Answer::from(claimed)));
        }
        let mine = board.claim(request, now, lease)?;
        changed |= mine.is_some();
        // Written before the board: a waiter whose answer is never confirmed checks the board.
        let failed = answered
            .iter()
            .position(|(path, answer)| leave(&answer_path(path, PENDING), answer).is_err());
        if let Some(written) = failed {
            // A claim made for a waiter who cannot be told must not be written.
            unanswerable = true;
            answered.truncate(written);
            return Err(StoreError::invalid("claim", "a waiting claim's answer"));
        }
        Ok(match changed {
            true => Change::Write((mine, now)),
            false => Change::Keep((mine, now)),
        })
    });
    for (path, _) in &answered {
        let pending = answer_path(path, PENDING);
        match outcome {
            Ok(_) => {
                let _ = fs::rename(&pending, answer_path(path, CONFIRMED));
            }
            Err(_) => {
                let _ = fs::remove_file(&pending);
            }
        }
    }
    if unanswerable {
        // Nothing was written: this claim alone, as any change is made.
        return store.transact_skimming(lock, Skim::Choosing, |board, now| {
            alone(board, request, now, lease)
        });
    }
    outcome
}

/// `request` applied by itself to `board`: a claim written, or nothing to write.
pub(crate) fn alone(
    board: &mut ClaimBoard,
    request: &ClaimRequest,
    now: Timestamp,
    lease: Duration,
) -> Result<Change<(Option<Claimed>, Timestamp)>> {
    Ok(match board.claim(request, now, lease)? {
        Some(claimed) => Change::Write((Some(claimed), now)),
        None => Change::Keep((None, now)),
    })
}

const PENDING: &str = "pending";
const CONFIRMED: &str = "answer";
const REQUEST: &str = "claim";

/// The queue folder if it is there and is a folder of this project: a link in its place is
/// never followed, and no claim waits there (`Waiting::enter` refuses it).
fn queue_dir(store: &FolderStore) -> Option<PathBuf> {
    let dir = store
        .layout()
        .unlinked(store.layout().claims_queue())
        .ok()?;
    dir.is_dir().then_some(dir)
}

/// The requests waiting in `queue`, oldest first, that have no answer yet and whose owners
/// still wait. A dead owner's request is removed, with any answer it was left.
fn waiting_requests(queue: Option<&Path>) -> Vec<(PathBuf, Request)> {
    let Some(queue) = queue else {
        return Vec::new();
    };
    let Ok(entries) = fs::read_dir(queue) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = Vec::new();
    for path in entries.filter_map(|e| e.ok().map(|e| e.path())) {
        if path.extension().is_some_and(|x| x == REQUEST) {
            paths.push(path);
        } else if path.to_string_lossy().ends_with(TEMP_SUFFIX) && !locked(&path) {
            // A request being made is locked; an answer's is written under the folder's
            // lock, which the caller holds: an unlocked one is a dead process's.
            let _ = fs::remove_file(&path);
        }
    }
    // Names start with the time the request was made, zero-padded: oldest first.
    paths.sort();
    let mut waiting = Vec::new();
    for path in paths {
        if waiting.len() == BATCH {
            break;
        }
        let Ok(mut file) = File::open(&path) else {
            continue;
        };
        if file.try_lock_shared().is_ok() {
            // Its owner is gone (the lock dies with the process): nobody would receive it.
            let _ = fs::remove_file(answer_path(&path, PENDING));
            let _ = fs::remove_file(answer_path(&path, CONFIRMED));
            let _ = fs::remove_file(&path);
            continue;
        }
        if answer_path(&path, PENDING).exists() || answer_path(&path, CONFIRMED).exists() {
            continue;
        }
        let mut text = String::new();
        if (&mut file)
            .take(MAX_REQUEST_BYTES)
            .read_to_string(&mut text)
            .is_err()
        {
            continue;
        }
        if let Ok(request) = serde_json::from_str::<Request>(&text) {
            waiting.push((path, request));
        }
    }
    waiting
}

/// Whether a live process holds a lock on the file at `path`.
fn locked(path: &Path) -> bool {
    File::open(path).is_ok_and(|file| file.try_lock_shared().is_err())
}

/// `request`'s path with its `kind` of answer's extension.
fn answer_path(request: &Path, kind: &str) -> PathBuf {
    request.with_extension(kind)
}

/// Writes `answer` at `path` whole (a temporary file renamed), not synced: an answer matters
/// only to a process that is still waiting, and a crash ends both. Whatever is at the
/// temporary name (a dead writer's leftover, a link someone planted) is removed, never written
/// through: the temporary file is made new.
fn leave(path: &Path, answer: &Answer) -> std::io::Result<()> {
    let temp = path.with_extension(format!("tmp{TEMP_SUFFIX}"));
    let bytes = serde_json::to_vec(answer).map_err(std::io::Error::other)?;
    match fs::remove_file(&temp) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temp)?;
    file.write_all(&bytes)?;
    drop(file);
    fs::rename(&temp, path)
}

/// A request left in the queue by a claim that waits for the lock, locked while it waits and
/// removed when dropped.
struct Waiting {
    path: PathBuf,
    _locked: File,
}

impl Waiting {
    /// Leaves `request` in the queue, locked, under a name that sorts by when it was made.
    fn enter(store: &FolderStore, request: &ClaimRequest) -> Result<Waiting> {
        let queue = store.layout().unlinked(store.layout().claims_queue())?;
        let io = |path: &Path, e| StoreError::io(path, e);
        if !queue.is_dir() {
            fs::create_dir(&queue)
                .or_else(|e| match e.kind() {
                    std::io::ErrorKind::AlreadyExists => Ok(()),
                    _ => Err(e),
                })
                .map_err(|e| io(&queue, e))?;
            // A folder of an earlier version does not ignore the queue yet. Best effort: the
            // claim does not depend on it.
            let _ = crate::ignored::ignore_own_files(store.layout());
        }
        let since = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos();
        let nonce = baton_fs::random_hex::<4>().map_err(|e| io(&queue, e))?;
        let stem = format!("{since:024}-{}-{nonce}", std::process::id());
        let temp = queue.join(format!("{stem}{TEMP_SUFFIX}"));
        let path = queue.join(format!("{stem}.{REQUEST}"));
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)
            .map_err(|e| io(&temp, e))?;
        // Locked before it is visible under its name, so it is never taken for a dead one's.
        file.lock().map_err(|e| io(&temp, e))?;
        let body = serde_json::to_vec(&Request {
            agent: request.agent.clone(),
            ignore_reservations: request.files == Files::Ignore,
        })
        .map_err(|e| StoreError::invalid("claim", e.to_string()))?;
        let written = file
            .write_all(&body)
            .and_then(|()| fs::rename(&temp, &path));
        if let Err(e) = written {
            let _ = fs::remove_file(&temp);
            return Err(io(&path, e));
        }
        Ok(Waiting {
            path,
            _locked: file,
        })
    }

    /// The claim a writer made for this request and confirmed, if one did (read holding the
    /// folder's lock, shared or not, so no writer is between its answer and the board).
    fn confirmed(&self) -> Result<Option<Option<Claimed>>> {
        Ok(read_answer(&answer_path(&self.path, CONFIRMED))?.map(Answer::into_claimed))
    }

    /// Holding the folder's lock: the claim made for this request, if one was. `None`: it
    /// was not answered (it came after the last write), and the caller claims for itself.
    fn answered(self, store: &FolderStore) -> Result<Option<Option<Claimed>>> {
        if let Some(claimed) = self.confirmed()? {
            return Ok(Some(claimed));
        }
        let pending = answer_path(&self.path, PENDING);
        let Some(answer) = read_answer(&pending)? else {
            return Ok(None);
        };
        // The writer died between the answer and the board, or after both: the board says.
        let _ = fs::remove_file(&pending);
        let Some(task) = &answer.task else {
            return Ok(Some(None));
        };
        let board = store.load()?;
        Ok(made(&board, task).then(|| answer.into_claimed()))
    }
}

impl Drop for Waiting {
    /// Removes the request, then its answer: a request is never seen without the answer that
    /// keeps a writer from applying it again. (Dropped holding the folder's lock, so no writer
    /// reads the queue meanwhile.)
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
        let _ = fs::remove_file(answer_path(&self.path, CONFIRMED));
    }
}

/// Whether the board holds the claim `claimed` records: the same holder since the same moment.
fn made(board: &TaskFile, claimed: &Task) -> bool {
    board.task(&claimed.id).is_some_and(|t| {
        t.status.is_held()
            && t.claimed_by == claimed.claimed_by
            && t.claimed_at == claimed.claimed_at
    })
}

/// The answer at `path`, `None` if there is none; one that cannot be read is an error, since
/// a claim may have been made for it.
fn read_answer(path: &Path) -> Result<Option<Answer>> {
    let text = match fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(StoreError::io(path, e)),
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| StoreError::Corrupt {
            path: path.to_path_buf(),
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        })
}

#[cfg(test)]
mod tests;
