//! Reading a folder someone else may write (an agent's, read from the supervisor's side)
//! without being led out of it. Every folder and file is opened relative to its parent's open
//! descriptor with `O_NOFOLLOW`, so a symbolic link put anywhere in it, or a folder swapped for
//! a link while it is read, is refused instead of followed: what is read is what is in the
//! folder, never a file of the reader's elsewhere.

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd};
use std::path::Path;

/// Copies the regular files of `from` that `wanted` accepts (given their path under `from`
/// as names, folders first) to the same place under `to`, walking folders at most `depth`
/// levels below `from`; links and anything else are passed over. How many files it copied.
pub fn copy_files(
    from: &Path,
    to: &Path,
    depth: usize,
    wanted: &dyn Fn(&[String]) -> bool,
) -> io::Result<usize> {
    let root = open_path(from, libc::O_DIRECTORY)?;
    copy_in(&root, to, depth, &mut Vec::new(), wanted)
}

fn copy_in(
    dir: &File,
    to: &Path,
    depth: usize,
    at: &mut Vec<String>,
    wanted: &dyn Fn(&[String]) -> bool,
) -> io::Result<usize> {
    let mut copied = 0;
    for name in names(dir)? {
        at.push(name.clone());
        if let Ok(file) = open_at(dir, &name, libc::O_RDONLY | libc::O_NONBLOCK) {
            let meta = file.metadata()?;
            if meta.is_dir() && depth > 0 {
                copied += copy_in(&file, &to.join(&name), depth - 1, at, wanted)?;
            } else if meta.is_file() && wanted(at) {
                std::fs::create_dir_all(to)?;
                let mut target = File::create(to.join(&name))?;
                io::copy(&mut &file, &mut target)?;
                copied += 1;
            }
        }
        at.pop();
    }
    Ok(copied)
}

/// The names in an open folder.
fn names(dir: &File) -> io::Result<Vec<String>> {
    // The descriptor's own folder, whatever was renamed or swapped since it was opened.
    let listed = std::fs::read_dir(format!("/proc/self/fd/{}", dir.as_raw_fd()))?;
    Ok(listed
        .flatten()
        .filter_map(|entry| entry.file_name().into_string().ok())
        .collect())
}

/// `name` in `dir`, not followed if it is a link.
fn open_at(dir: &File, name: &str, flags: libc::c_int) -> io::Result<File> {
    let name = CString::new(name).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: a valid descriptor and C string; the returned descriptor is owned by the File.
    let fd = unsafe {
        libc::openat(
            dir.as_raw_fd(),
            name.as_ptr(),
            flags | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    match fd {
        -1 => Err(io::Error::last_os_error()),
        // SAFETY: a descriptor just opened, owned by nothing else.
        fd => Ok(unsafe { File::from_raw_fd(fd) }),
    }
}

/// The folder at `path` (the reader's own path; its last component is not followed).
fn open_path(path: &Path, flags: libc::c_int) -> io::Result<File> {
    use std::os::unix::ffi::OsStrExt;
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: a valid C string; the returned descriptor is owned by the File.
    let fd = unsafe { libc::open(c.as_ptr(), flags | libc::O_NOFOLLOW | libc::O_CLOEXEC) };
    match fd {
        -1 => Err(io::Error::last_os_error()),
        // SAFETY: a descriptor just opened, owned by nothing else.
        fd => Ok(unsafe { File::from_raw_fd(fd) }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_are_never_followed_and_only_wanted_files_are_copied() {
        let dir = tempfile::tempdir().unwrap();
        let (from, to, secret) = (
            dir.path().join("from"),
            dir.path().join("to"),
            dir.path().join("secret"),
        );
        std::fs::create_dir_all(from.join("ab")).unwrap();
        std::fs::create_dir_all(from.join("deep/er/still")).unwrap();
        std::fs::create_dir_all(&secret).unwrap();
        std::fs::write(secret.join("key"), "SECRET").unwrap();
        std::fs::write(from.join("ab/cdef"), "object").unwrap();
        std::fs::write(from.join("ab/skip.tmp"), "no").unwrap();
        std::fs::write(from.join("deep/er/still/x"), "too deep").unwrap();
        std::os::unix::fs::symlink(secret.join("key"), from.join("ab/link")).unwrap();
        std::os::unix::fs::symlink(&secret, from.join("cd")).unwrap();
        let copied = copy_files(&from, &to, 2, &|path: &[String]| {
            !path.last().unwrap().ends_with(".tmp")
        })
        .unwrap();
        assert_eq!(copied, 1);
        assert_eq!(
            std::fs::read_to_string(to.join("ab/cdef")).unwrap(),
            "object"
        );
        for absent in ["ab/skip.tmp", "ab/link", "cd/key", "deep/er/still/x"] {
            assert!(!to.join(absent).exists(), "{absent}");
        }
        // The folder itself a link: refused.
        let linked = dir.path().join("linked");
        std::os::unix::fs::symlink(&from, &linked).unwrap();
        assert!(copy_files(&linked, &to, 2, &|_: &[String]| true).is_err());
    }
}
