//! Files under a folder, opened so that nothing leads out of it: for a path an agent named,
//! which Baton (on the lead's side) reads, writes or removes while the agent may be changing
//! the folders on the way. A path resolved and then opened by name can be redirected between
//! the two (a folder swapped for a link with `renameat2(RENAME_EXCHANGE)`); here nothing is
//! resolved first. The root is opened, and each step below it is opened relative to the open
//! folder above it with no link followed at any step: one `openat2` with `RESOLVE_BENEATH |
//! RESOLVE_NO_SYMLINKS` where the kernel has it (Linux 5.6), a component-by-component
//! `O_NOFOLLOW` walk where it does not. The file itself is then read, replaced (a temporary
//! file and `renameat` in the folder's open descriptor, synced) or removed (`unlinkat`)
//! relative to its folder's descriptor, so what is touched is in the folder that was opened.
//!
//! A link anywhere on the way is refused (`ELOOP`, said as a link in the way), as is a path
//! that is not plain names (`..`, `.`, absolute): callers give the part below the root.

use std::ffi::CString;
use std::fs::{File, Metadata};
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path};

/// A folder every path is opened beneath.
#[derive(Debug)]
pub struct Beneath {
    root: File,
}

impl Beneath {
    /// The folder `root` (the caller's own path, trusted; its last component not followed).
    pub fn open(root: &Path) -> io::Result<Beneath> {
        let c = cstring(root.as_os_str().as_bytes())?;
        // SAFETY: a valid C string; the descriptor is owned by the File.
        let fd = unsafe {
            libc::open(
                c.as_ptr(),
                libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            )
        };
        Ok(Beneath { root: owned(fd)? })
    }

    /// The bytes of the file at `relative`, at most `limit` of them (more is an error).
    pub fn read(&self, relative: &Path, limit: u64) -> io::Result<Vec<u8>> {
        let file = self.open_file(relative, libc::O_RDONLY | libc::O_NONBLOCK)?;
        if !file.metadata()?.is_file() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a regular file",
            ));
        }
        read_at_most(&file, limit)
    }

    /// What is at `relative` (a link is described, not followed).
    pub fn metadata(&self, relative: &Path) -> io::Result<Metadata> {
        let (folder, name) = self.folder_of(relative, false)?;
        let file = open_at(&folder, &name, libc::O_PATH)?;
        file.metadata()
    }

    /// Replaces the file at `relative` with `bytes`, whole or not at all, creating the folders
    /// above it: a temporary file beside it, synced, renamed over it, the folder synced. A link
    /// at its name is replaced, not followed.
    pub fn write_atomic(&self, relative: &Path, bytes: &[u8]) -> io::Result<()> {
        let (folder, name) = self.folder_of(relative, true)?;
        static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let temp = CString::new(format!(
            ".{}.{}.{}{}",
            name.to_string_lossy(),
            std::process::id(),
            WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            crate::TEMP_SUFFIX
        ))
        .map_err(|_| invalid("a name holds a NUL byte"))?;
        let mut file = open_at(
            &folder,
            &temp,
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL,
        )?;
        let written = file.write_all(bytes).and_then(|()| file.sync_all());
        // SAFETY: descriptors and C strings valid for the call.
        let renamed = written.and_then(|()| {
            check(unsafe {
                libc::renameat(
                    folder.as_raw_fd(),
                    temp.as_ptr(),
                    folder.as_raw_fd(),
                    name.as_ptr(),
                )
            })
        });
        if let Err(e) = renamed {
            // SAFETY: as above.
            unsafe { libc::unlinkat(folder.as_raw_fd(), temp.as_ptr(), 0) };
            return Err(e);
        }
        folder.sync_all()
    }

    /// Removes the file (or link) at `relative`.
    pub fn remove_file(&self, relative: &Path) -> io::Result<()> {
        let (folder, name) = self.folder_of(relative, false)?;
        // SAFETY: a valid descriptor and C string.
        check(unsafe { libc::unlinkat(folder.as_raw_fd(), name.as_ptr(), 0) })
    }

    /// The file at `relative`, opened with `flags`, no link followed on the way or at its end.
    fn open_file(&self, relative: &Path, flags: libc::c_int) -> io::Result<File> {
        let (folder, name) = self.folder_of(relative, false)?;
        open_at(&folder, &name, flags)
    }

    /// The open folder above `relative`'s last name, and that name; its folders made first
    /// when `create` says so.
    fn folder_of(&self, relative: &Path, create: bool) -> io::Result<(File, CString)> {
        let names = plain_names(relative)?;
        let (last, folders) = names.split_last().ok_or_else(|| invalid("names no file"))?;
        let folder = if folders.is_empty() {
            self.root.try_clone()?
        } else if create {
            let mut at = self.root.try_clone()?;
            for name in folders {
                at = match open_dir(&at, name) {
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {
                        // SAFETY: a valid descriptor and C string.
                        let made =
                            check(unsafe { libc::mkdirat(at.as_raw_fd(), name.as_ptr(), 0o777) });
                        match made {
                            Ok(()) => open_dir(&at, name)?,
                            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                                open_dir(&at, name)?
                            }
                            Err(e) => return Err(e),
                        }
                    }
                    other => other?,
                };
            }
            at
        } else {
            let joined: Vec<&[u8]> = folders.iter().map(|n| n.as_bytes()).collect();
            open_beneath(&self.root, &cstring(&joined.join(&b'/'))?)?
        };
        Ok((folder, last.clone()))
    }
}

/// What `file` holds, at most `limit` bytes of it: more is an error (`FileTooLarge`), not a
/// cut, so nobody reads half a file as if it were whole.
pub fn read_at_most(file: &File, limit: u64) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    file.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!("larger than {limit} bytes"),
        ));
    }
    Ok(bytes)
}

/// Whether `e` says a link stood in the way (so a caller can say so).
pub fn is_link_refusal(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ELOOP) | Some(libc::EXDEV))
}

/// `relative`'s names, each checked to be a plain name.
fn plain_names(relative: &Path) -> io::Result<Vec<CString>> {
    relative
        .components()
        .map(|part| match part {
            Component::Normal(name) => cstring(name.as_bytes()),
            _ => Err(invalid("only plain names may lead below the folder")),
        })
        .collect()
}

/// The folder `path` (plain names joined by `/`) below `dir`, no link followed.
fn open_beneath(dir: &File, path: &CString) -> io::Result<File> {
    #[repr(C)]
    struct OpenHow {
        flags: u64,
        mode: u64,
        resolve: u64,
    }
    const RESOLVE_NO_MAGICLINKS: u64 = 0x02;
    const RESOLVE_NO_SYMLINKS: u64 = 0x04;
    const RESOLVE_BENEATH: u64 = 0x08;
    let how = OpenHow {
        flags: (libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC) as u64,
        mode: 0,
        resolve: RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
    };
    // SAFETY: a valid descriptor, C string and open_how of the size given.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            dir.as_raw_fd(),
            path.as_ptr(),
            &how as *const OpenHow,
            std::mem::size_of::<OpenHow>(),
        )
    };
    match owned(fd as libc::c_int) {
        Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => {
            // No openat2 (before Linux 5.6): the same, one name at a time.
            let mut at = dir.try_clone()?;
            for name in path.as_bytes().split(|b| *b == b'/') {
                at = open_dir(&at, &cstring(name)?)?;
            }
            Ok(at)
        }
        other => other,
    }
}

/// The folder `name` in `dir`, not followed if it is a link (said as `ELOOP`, as `openat2`
/// says it, where the kernel says the link is not a folder).
fn open_dir(dir: &File, name: &CString) -> io::Result<File> {
    open_at(dir, name, libc::O_RDONLY | libc::O_DIRECTORY).map_err(|e| {
        if e.raw_os_error() != Some(libc::ENOTDIR) {
            return e;
        }
        let mut stat = std::mem::MaybeUninit::<libc::stat>::uninit();
        // SAFETY: a valid descriptor, C string and stat buffer.
        let found = unsafe {
            libc::fstatat(
                dir.as_raw_fd(),
                name.as_ptr(),
                stat.as_mut_ptr(),
                libc::AT_SYMLINK_NOFOLLOW,
            )
        };
        // SAFETY: filled in by fstatat when it returned 0.
        match found == 0 && unsafe { stat.assume_init() }.st_mode & libc::S_IFMT == libc::S_IFLNK {
            true => io::Error::from_raw_os_error(libc::ELOOP),
            false => e,
        }
    })
}

/// `name` in `dir`, not followed if it is a link.
fn open_at(dir: &File, name: &CString, flags: libc::c_int) -> io::Result<File> {
    // SAFETY: a valid descriptor and C string; the descriptor is owned by the File.
    let fd = unsafe {
        libc::openat(
            dir.as_raw_fd(),
            name.as_ptr(),
            flags | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            0o644 as libc::c_uint,
        )
    };
    owned(fd)
}

fn owned(fd: libc::c_int) -> io::Result<File> {
    match fd {
        -1 => Err(io::Error::last_os_error()),
        // SAFETY: a descriptor just opened, owned by nothing else.
        fd => Ok(unsafe { File::from_raw_fd(fd) }),
    }
}

fn check(result: libc::c_int) -> io::Result<()> {
    match result {
        -1 => Err(io::Error::last_os_error()),
        _ => Ok(()),
    }
}

fn cstring(bytes: &[u8]) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| invalid("a name holds a NUL byte"))
}

fn invalid(why: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, why.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn setup() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("project");
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(root.join("d")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("secret"), "SECRET").unwrap();
        (dir, root, outside)
    }

    #[test]
    fn writes_reads_and_removes_below_the_root_creating_folders() {
        let (_dir, root, _) = setup();
        let beneath = Beneath::open(&root).unwrap();
        beneath.write_atomic(Path::new("a/b/sig"), b"done").unwrap();
        assert_eq!(std::fs::read(root.join("a/b/sig")).unwrap(), b"done");
        assert_eq!(beneath.read(Path::new("a/b/sig"), 100).unwrap(), b"done");
        beneath
            .write_atomic(Path::new("a/b/sig"), b"again")
            .unwrap();
        assert_eq!(beneath.read(Path::new("a/b/sig"), 100).unwrap(), b"again");
        assert!(beneath.read(Path::new("a/b/sig"), 2).is_err());
        assert!(beneath.metadata(Path::new("a/b/sig")).unwrap().is_file());
        beneath.remove_file(Path::new("a/b/sig")).unwrap();
        assert!(!root.join("a/b/sig").exists());
        let leftovers: Vec<_> = std::fs::read_dir(root.join("a/b")).unwrap().collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }

    #[test]
    fn a_link_anywhere_on_the_way_is_refused_never_followed() {
        let (_dir, root, outside) = setup();
        symlink(&outside, root.join("link")).unwrap();
        symlink(outside.join("secret"), root.join("d/secret")).unwrap();
        let beneath = Beneath::open(&root).unwrap();
        for path in ["link/secret", "d/secret"] {
            let e = beneath.read(Path::new(path), 100).unwrap_err();
            assert!(is_link_refusal(&e), "{path}: {e}");
        }
        let e = beneath
            .write_atomic(Path::new("link/new/sig"), b"x")
            .unwrap_err();
        assert!(is_link_refusal(&e), "{e}");
        let e = beneath
            .write_atomic(Path::new("link/sig"), b"x")
            .unwrap_err();
        assert!(is_link_refusal(&e), "{e}");
        assert!(beneath.remove_file(Path::new("link/secret")).is_err());
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 1);
        assert_eq!(std::fs::read(outside.join("secret")).unwrap(), b"SECRET");
        // A link at the file's own name is replaced by the write, its target untouched.
        beneath
            .write_atomic(Path::new("d/secret"), b"done")
            .unwrap();
        assert_eq!(std::fs::read(outside.join("secret")).unwrap(), b"SECRET");
        assert!(root.join("d/secret").is_file());
    }

    #[test]
    fn only_plain_names_lead_below_the_root() {
        let (_dir, root, _) = setup();
        let beneath = Beneath::open(&root).unwrap();
        for path in [
            "../outside/secret",
            "/etc/passwd",
            "d/../../outside/secret",
            "",
        ] {
            assert!(beneath.read(Path::new(path), 100).is_err(), "{path}");
            assert!(
                beneath.write_atomic(Path::new(path), b"x").is_err(),
                "{path}"
            );
        }
    }

    #[test]
    fn a_folder_swapped_for_a_link_in_a_loop_never_leads_a_write_out() {
        let (_dir, root, outside) = setup();
        std::fs::create_dir_all(root.join("real")).unwrap();
        symlink(&outside, root.join("bait")).unwrap();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let swapper = {
            let (stop, root) = (stop.clone(), root.clone());
            std::thread::spawn(move || {
                let (a, b) = (
                    CString::new(root.join("d").as_os_str().as_bytes()).unwrap(),
                    CString::new(root.join("bait").as_os_str().as_bytes()).unwrap(),
                );
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    // SAFETY: valid C strings.
                    unsafe {
                        libc::renameat2(
                            libc::AT_FDCWD,
                            a.as_ptr(),
                            libc::AT_FDCWD,
                            b.as_ptr(),
                            libc::RENAME_EXCHANGE,
                        )
                    };
                }
            })
        };
        let beneath = Beneath::open(&root).unwrap();
        for _ in 0..2000 {
            let _ = beneath.write_atomic(Path::new("d/x"), b"note");
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        swapper.join().unwrap();
        let names: Vec<_> = std::fs::read_dir(&outside)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["secret"], "a write landed outside");
    }
}
