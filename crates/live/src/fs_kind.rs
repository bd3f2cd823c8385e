//! Which file systems deliver no change events to a watcher on this machine: network and
//! user-space mounts (NFS, SMB/CIFS, 9p, FUSE such as sshfs) report local changes at best and
//! never other machines' writes, so watchers on them fall back to polling.

use std::path::Path;

/// True when `path` lies on a file system known to deliver no (or only local) change events.
#[cfg(target_os = "linux")]
pub fn delivers_no_events(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;

    // Magic numbers from linux/magic.h and statfs(2).
    const NFS: i64 = 0x6969;
    const SMB: i64 = 0x517b;
    const SMB2: i64 = 0xfe53_4d42;
    const CIFS: i64 = 0xff53_4d42;
    const V9FS: i64 = 0x0102_1997;
    const FUSE: i64 = 0x6573_5546;
    const CODA: i64 = 0x7375_7245;
    const AFS: i64 = 0x5346_414f;
    const CEPH: i64 = 0x00c3_6400;

    let Ok(c_path) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `c_path` is a valid NUL-terminated string and `stat` a valid out-pointer.
    let mut stat: libc::statfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statfs(c_path.as_ptr(), &mut stat) } != 0 {
        return false;
    }
    #[allow(clippy::unnecessary_cast)] // f_type's width differs between targets
    let kind = stat.f_type as i64;
    matches!(
        kind,
        NFS | SMB | SMB2 | CIFS | V9FS | FUSE | CODA | AFS | CEPH
    )
}

#[cfg(not(target_os = "linux"))]
pub fn delivers_no_events(_path: &Path) -> bool {
    false
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_local_temp_folder_delivers_events() {
        let dir = tempfile::tempdir().unwrap();
        assert!(!super::delivers_no_events(dir.path()));
    }
}
