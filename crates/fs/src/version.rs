//! Whether a file was rewritten since it was last looked at, without reading it: what a
//! watcher compares when a file's content is not what it reports (the change feed's plan,
//! summary and orchestration files).

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::SystemTime;

/// What identifies a version of a file: modification time, inode (an atomic replace makes a
/// new one, even within one tick of the coarse file-system clock) and size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileVersion {
    modified: SystemTime,
    inode: u64,
    len: u64,
}

impl FileVersion {
    /// The version of `path` now; `None` when it cannot be read (gone, most often).
    pub fn of(path: &Path) -> Option<FileVersion> {
        let meta = fs::metadata(path).ok()?;
        Some(FileVersion {
            modified: meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
            inode: meta.ino(),
            len: meta.len(),
        })
    }
}

/// Whether `path` differs from the version `seen` (updating it); false once it is gone.
pub fn rewritten(path: &Path, seen: &mut Option<FileVersion>) -> bool {
    let now = FileVersion::of(path);
    let changed = now != *seen;
    *seen = now;
    changed && now.is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replacement_of_the_same_size_is_a_new_version_and_a_removal_is_not_reported() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plan.md");
        let mut seen = None;
        assert!(!rewritten(&path, &mut seen), "no file, nothing to report");
        fs::write(&path, "one").unwrap();
        assert!(rewritten(&path, &mut seen));
        assert!(!rewritten(&path, &mut seen), "reported once");
        let replacement = dir.path().join("plan.md.tmp");
        fs::write(&replacement, "two").unwrap();
        fs::rename(&replacement, &path).unwrap();
        assert!(rewritten(&path, &mut seen), "same size, new inode");
        fs::remove_file(&path).unwrap();
        assert!(!rewritten(&path, &mut seen));
        assert_eq!(seen, None);
    }
}
