//! A pids cgroup per sandboxed run, where this machine lets Baton make one: the process limit
//! that binds whoever runs Baton. The limit set inside the sandbox ([`crate::inside`],
//! `RLIMIT_NPROC`) binds every user but root, whom the kernel exempts from it; a pids cgroup's
//! `pids.max` binds root too. Baton makes one when it can write the pids hierarchy (root on a
//! machine with cgroup v1's `pids` or a cgroup v2 tree with `pids` enabled below Baton's own
//! group, or a user given such a tree); where it cannot, the run says which limit holds.
//!
//! The sandbox's first process joins it before it runs ([`crate::Wrapped::cgroup`]),
//! so everything the agent starts is counted from its first fork. It is removed when the run
//! ends (its processes are gone by then: the PID namespace's end killed them; the kernel may
//! take a millisecond to note it); one left by a supervisor killed outright is removed by the
//! next supervisor that makes one.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Runs' cgroups made by this process so far: each has a name of its own.
static MADE: AtomicU64 = AtomicU64::new(0);
/// What a run's cgroup is named after: `baton-PID-N`, PID this supervisor's.
const PREFIX: &str = "baton-";
/// How long removing a run's cgroup waits for its last processes to be gone.
const EMPTYING: Duration = Duration::from_secs(2);

/// One run's pids cgroup, removed when dropped.
#[derive(Debug)]
pub struct PidsCgroup {
    dir: PathBuf,
}

impl PidsCgroup {
    /// A cgroup that lets at most `max` processes (threads count) run in it, or `None` when
    /// this machine does not let this process make one.
    pub fn create(max: u32) -> Option<PidsCgroup> {
        let parent = writable_parent()?;
        remove_abandoned(&parent);
        let name = format!(
            "{PREFIX}{}-{}",
            std::process::id(),
            MADE.fetch_add(1, Ordering::Relaxed)
        );
        let dir = parent.join(name);
        std::fs::create_dir(&dir).ok()?;
        let made = PidsCgroup { dir };
        std::fs::write(made.dir.join("pids.max"), max.to_string()).ok()?;
        Some(made)
    }

    /// The file a process joins it through: its pid written there.
    pub fn procs(&self) -> PathBuf {
        self.dir.join("cgroup.procs")
    }
}

impl Drop for PidsCgroup {
    fn drop(&mut self) {
        // A cgroup is removed once its last process is gone, which the kernel notes a moment
        // (about a millisecond) after the PID namespace's end. Waited for here, not in the
        // background: a process that exits next (`baton review check`) would leave it behind.
        let until = Instant::now() + EMPTYING;
        while std::fs::remove_dir(&self.dir).is_err() && self.dir.exists() && Instant::now() < until
        {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

thread_local! {
    /// Whether this thread lives in a [`ThreadCgroup`]: what it starts is limited already.
    static IN_THREAD_CGROUP: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// A pids cgroup the calling thread lives in while this is held, so that every process it
/// starts is born in it: cgroup v1 keeps a cgroup per thread, and a child starts in the cgroup
/// of the thread that made it. A worker's thread enters one once, and its agents need no move
/// into a cgroup of their own at each start (a move makes the kernel wait out a grace period:
/// milliseconds on every attempt). Counted in it: the agent's processes, and the threads and
/// commands the worker starts for the attempt (its door's, its transcript's). cgroup v1 only.
pub struct ThreadCgroup {
    group: PidsCgroup,
    /// Its thread's, which only that thread may take back out.
    _thread: std::marker::PhantomData<*const ()>,
}

impl ThreadCgroup {
    /// Moves the calling thread into a new pids cgroup of `max`; `None` where this machine
    /// has no cgroup v1 pids hierarchy Baton may write.
    pub fn enter(max: u32) -> Option<ThreadCgroup> {
        let group = PidsCgroup::create(max)?;
        let tasks = group.dir.join("tasks");
        // SAFETY: gettid cannot fail.
        let thread = unsafe { libc::gettid() };
        (tasks.exists() && std::fs::write(&tasks, thread.to_string()).is_ok()).then_some(())?;
        IN_THREAD_CGROUP.with(|inside| inside.set(true));
        Some(ThreadCgroup {
            group,
            _thread: std::marker::PhantomData,
        })
    }

    /// Whether the calling thread lives in one.
    pub fn current() -> bool {
        IN_THREAD_CGROUP.with(|inside| inside.get())
    }
}

impl Drop for ThreadCgroup {
    fn drop(&mut self) {
        // Back to where it was, so the group can be removed.
        if let Some(parent) = self.group.dir.parent() {
            // SAFETY: gettid cannot fail.
            let thread = unsafe { libc::gettid() };
            let _ = std::fs::write(parent.join("tasks"), thread.to_string());
        }
        IN_THREAD_CGROUP.with(|inside| inside.set(false));
    }
}

/// The folder of this process's own pids cgroup, when Baton may make groups in it.
fn writable_parent() -> Option<PathBuf> {
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let parent = own_pids_group(&own, &mounts)?;
    let probe = parent.join("pids.max");
    // cgroup v2 offers `pids.max` in a child only with `pids` enabled below the parent.
    let enabled = match std::fs::read_to_string(parent.join("cgroup.subtree_control")) {
        Ok(controllers) => controllers.split_whitespace().any(|c| c == "pids"),
        Err(_) => true,
    };
    let writable = || {
        use std::os::unix::ffi::OsStrExt;
        let path = std::ffi::CString::new(parent.as_os_str().as_bytes()).ok()?;
        // SAFETY: a valid C string; access only asks.
        (unsafe { libc::access(path.as_ptr(), libc::W_OK) } == 0).then_some(())
    };
    (enabled && (probe.exists() || parent.join("cgroup.procs").exists()))
        .then(writable)
        .flatten()
        .map(|()| parent)
}

/// Where this process's pids cgroup is, from `/proc/self/cgroup` (`own`) and
/// `/proc/self/mountinfo` (`mounts`): a cgroup v1 hierarchy with the `pids` controller, else
/// the cgroup v2 tree.
fn own_pids_group(own: &str, mounts: &str) -> Option<PathBuf> {
    let mut v2 = None;
    for line in own.lines() {
        let mut fields = line.splitn(3, ':');
        let (id, controllers, path) = (fields.next()?, fields.next()?, fields.next()?);
        if controllers.split(',').any(|c| c == "pids") {
            let (root, at) = mount_of(mounts, |fs, options| {
                fs == "cgroup" && options.split(',').any(|o| o == "pids")
            })?;
            return Some(under(&at, &root, path));
        }
        if id == "0" && controllers.is_empty() {
            v2 = Some(path.to_string());
        }
    }
    let path = v2?;
    let (root, at) = mount_of(mounts, |fs, _| fs == "cgroup2")?;
    Some(under(&at, &root, &path))
}

/// The root and mount point of the first mount `wanted(fstype, super options)` accepts.
fn mount_of(mounts: &str, wanted: impl Fn(&str, &str) -> bool) -> Option<(String, PathBuf)> {
    mounts.lines().find_map(|line| {
        let (before, after) = line.split_once(" - ")?;
        let fields: Vec<&str> = before.split(' ').collect();
        let mut rest = after.split(' ');
        let (fs, _source, options) = (rest.next()?, rest.next()?, rest.next()?);
        (fields.len() >= 5 && wanted(fs, options))
            .then(|| (fields[3].to_string(), PathBuf::from(fields[4])))
    })
}

/// The folder of cgroup `path` in a hierarchy whose `root` is mounted at `at`.
fn under(at: &Path, root: &str, path: &str) -> PathBuf {
    let relative = path.strip_prefix(root).unwrap_or(path);
    at.join(relative.trim_start_matches('/'))
}

/// Removes the runs' cgroups in `parent` that supervisors no longer running left behind.
fn remove_abandoned(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(PREFIX))
            .and_then(|n| n.split('-').next())
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new("/proc").join(pid.to_string()).exists() {
            // Refused while a process is still in it: then it is not abandoned yet.
            let _ = std::fs::remove_dir(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTS_V1: &str = "\
35 25 0:31 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
38 25 0:34 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
40 25 0:36 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw";
    const MOUNTS_V2: &str = "\
30 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate";

    #[test]
    fn its_own_group_is_found_in_either_hierarchy() {
        let v1 = "8:pids:/ci/job\n4:memory:/x\n0::/";
        assert_eq!(
            own_pids_group(v1, MOUNTS_V1),
            Some(PathBuf::from("/sys/fs/cgroup/pids/ci/job"))
        );
        let v2 = "0::/user.slice/baton.service";
        assert_eq!(
            own_pids_group(v2, MOUNTS_V2),
            Some(PathBuf::from("/sys/fs/cgroup/user.slice/baton.service"))
        );
        // A v1 machine without the pids hierarchy mounted, and nothing: none.
        assert_eq!(own_pids_group("8:pids:/", MOUNTS_V2), None);
        assert_eq!(own_pids_group("", ""), None);
    }

    #[test]
    fn a_mount_of_a_subtree_is_read_from_its_root() {
        let mounts = "38 25 0:34 /ci /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids";
        assert_eq!(
            own_pids_group("8:pids:/ci/job", mounts),
            Some(PathBuf::from("/sys/fs/cgroup/pids/job"))
        );
    }
}
