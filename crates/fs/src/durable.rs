//! Durable file operations: exclusive lock files and crash-safe writes.
//!
//! A reader of a file written with [`write_atomic`] sees the old content or the new, never a
//! mix: the bytes go to a temporary file in the same folder, are flushed to disk, and are
//! renamed over the target; the folder is then flushed so the rename itself survives a crash.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::{FileError, Result};

/// Marks temporary files, so `leader doctor` can find those a crash left behind.
pub const TEMP_SUFFIX: &str = ".baton-tmp";

/// An exclusive advisory lock on a lock file, released when dropped (or when the process
/// dies, which is what makes it safe against crashed writers).
#[derive(Debug)]
pub struct FileLock {
    _file: File,
}

impl FileLock {
    /// Blocks until this process holds the lock on `path`, creating the file if needed.
    pub fn exclusive(path: &Path) -> Result<FileLock> {
        let file = lock_file(path)?;
        file.lock().map_err(|e| FileError::new(path, e))?;
        Ok(FileLock { _file: file })
    }

    /// Blocks until this process holds `path`'s lock shared: until no one holds it exclusively
    /// (for a reader that must not see a writer's work half done; others may share it).
    pub fn shared(path: &Path) -> Result<FileLock> {
        let file = lock_file(path)?;
        file.lock_shared().map_err(|e| FileError::new(path, e))?;
        Ok(FileLock { _file: file })
    }

    /// The lock on `path` if no one holds it now; `None` if someone does.
    pub fn try_exclusive(path: &Path) -> Result<Option<FileLock>> {
        let file = lock_file(path)?;
        match file.try_lock() {
            Ok(()) => Ok(Some(FileLock { _file: file })),
            Err(std::fs::TryLockError::WouldBlock) => Ok(None),
            Err(std::fs::TryLockError::Error(e)) => Err(FileError::new(path, e)),
        }
    }
}

/// Opens (creating it if needed) a lock file, leaving its content alone.
fn lock_file(path: &Path) -> Result<File> {
    OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(|e| FileError::new(path, e))
}

/// Replaces `path` with `bytes` so that a crash at any instant leaves the old or new content.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic_with(path, &[bytes], None)
}

/// [`write_atomic`] of the bytes of `parts`, one after another (a large file made mostly of
/// pieces of another is not put together in memory first).
pub fn write_atomic_parts(path: &Path, parts: &[&[u8]]) -> Result<()> {
    write_atomic_with(path, parts, None)
}

/// [`write_atomic`] for a file only its owner may read (mode 0600 from its creation, so it is
/// never readable by others, not even before the rename): for a file with someone's secrets.
pub fn write_atomic_private(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic_with(path, &[bytes], Some(0o600))
}

fn write_atomic_with(path: &Path, parts: &[&[u8]], mode: Option<u32>) -> Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let dir = path.parent().unwrap_or(Path::new("."));
    let temp = temp_path(path);
    let written = (|| {
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        if let Some(mode) = mode {
            options.mode(mode);
        }
        // Small parts gathered, large ones written as they are.
        let mut out = std::io::BufWriter::new(options.open(&temp)?);
        for part in parts {
            out.write_all(part)?;
        }
        let file = out.into_inner().map_err(|e| e.into_error())?;
        // Data and size reach the disk before the rename can publish the file.
        file.sync_data()?;
        drop(file);
        fs::rename(&temp, path)
    })();
    if let Err(e) = written {
        let _ = fs::remove_file(&temp);
        return Err(FileError::new(path, e));
    }
    sync_dir(dir)
}

/// Flushes a folder's entries (new names, renames) to disk.
pub fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| FileError::new(dir, e))
}

/// Appends one line in a single `write` to a file opened for appending, so lines from
/// concurrent writers never interleave.
pub fn append_line(path: &Path, line: &str) -> Result<()> {
    let mut buf = String::with_capacity(line.len() + 1);
    buf.push_str(line);
    if !buf.ends_with('\n') {
        buf.push('\n');
    }
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut f| f.write_all(buf.as_bytes()))
        .map_err(|e| FileError::new(path, e))
}

/// Temporary files left in `dir` by interrupted writes.
pub fn leftover_temp_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    for entry in fs::read_dir(dir).map_err(|e| FileError::new(dir, e))? {
        let entry = entry.map_err(|e| FileError::new(dir, e))?;
        if entry.file_name().to_string_lossy().ends_with(TEMP_SUFFIX) {
            found.push(entry.path());
        }
    }
    found.sort();
    Ok(found)
}

fn temp_path(path: &Path) -> PathBuf {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let unique = format!(
        ".{name}.{}.{}{TEMP_SUFFIX}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    );
    path.with_file_name(unique)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_private_file_is_its_owners_alone_from_the_start() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("secret.json");
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        write_atomic_private(&path, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        write_atomic(&dir.path().join("plain"), b"x").unwrap();
    }

    #[test]
    fn write_atomic_replaces_content_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.json");
        write_atomic(&path, b"old").unwrap();
        write_atomic(&path, b"new").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"new");
        assert!(leftover_temp_files(dir.path()).unwrap().is_empty());
    }

    #[test]
    fn write_atomic_into_a_missing_folder_fails_cleanly() {
        let dir = tempfile::tempdir().unwrap();
        let err = write_atomic(&dir.path().join("nope/f.json"), b"x").unwrap_err();
        assert!(err.to_string().contains("nope/f.json"), "{err}");
    }

    #[test]
    fn leftover_temp_files_finds_only_baton_temp_files() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(
            dir.path().join(format!(".tasks.json.1.0{TEMP_SUFFIX}")),
            "x",
        )
        .unwrap();
        fs::write(dir.path().join("tasks.json"), "x").unwrap();
        assert_eq!(leftover_temp_files(dir.path()).unwrap().len(), 1);
    }

    #[test]
    fn append_line_adds_exactly_one_newline() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.log");
        append_line(&path, "one").unwrap();
        append_line(&path, "two\n").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "one\ntwo\n");
    }

    #[test]
    fn the_lock_excludes_a_second_holder_until_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".lock");
        let held = FileLock::exclusive(&path).unwrap();
        let other = File::options().write(true).open(&path).unwrap();
        assert!(matches!(
            other.try_lock(),
            Err(std::fs::TryLockError::WouldBlock)
        ));
        drop(held);
        other.try_lock().unwrap();
    }
}
