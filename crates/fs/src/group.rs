//! A child process that leads a process group of its own, and how Baton ends one: the team's
//! agents, the browsers it launches and the MCP proxy's child servers are all started this way
//! and all stopped this way, so "ask the group to stop, wait, then kill it" is written once.
//!
//! Why a group: a child's own children (npx's node, Chromium's renderers, an agent's tools)
//! join its group, so one signal to the group reaches them all. Why a parent-death signal: a
//! child must not outlive a Baton process that was killed without the chance to stop it.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// How often [`ProcessGroup::terminate`] looks whether the group has gone.
const POLL: Duration = Duration::from_millis(20);

/// util-linux's `setpriv`, which sets the parent-death signal and executes the program
/// (Debian's `util-linux`, an essential package; looked for at this path only).
const SETPRIV: &str = "/usr/bin/setpriv";

/// A command for `program` that starts a process group of its own (its pid is the group's
/// id) and, on Linux, is sent `on_parent_death` (`SIGKILL` or `SIGTERM`) when the thread that
/// started it ends (std's spawn and tokio's alike run on a thread that lives as long as the
/// process, or the caller keeps one alive: see `baton-browser`'s launcher). `path` is the
/// `PATH` the child will be given, where a bare program name is looked up (this process's when
/// `None`).
///
/// Where it can, the death signal is set by `setpriv --pdeathsig` between the spawn and the
/// program, so std spawns with `posix_spawn` (a vfork): a supervisor of a hundred workers no
/// longer copies its page tables for every agent it starts, which took half its CPU. Without
/// `setpriv`, or for a program it cannot find first (so that spawning reports a missing
/// program as it always did), the signal is set in a `pre_exec` hook (a fork).
pub fn command_in_own_group(
    program: impl AsRef<OsStr>,
    path: Option<&OsStr>,
    on_parent_death: libc::c_int,
) -> Command {
    use std::os::unix::process::CommandExt;

    let program = program.as_ref();
    let wrapped = signal_name(on_parent_death)
        .filter(|_| setpriv_installed())
        .zip(resolve(program, path));
    let mut command = match wrapped {
        Some((signal, resolved)) => {
            let mut command = Command::new(SETPRIV);
            command.args(["--pdeathsig", signal, "--"]).arg(resolved);
            command
        }
        None => {
            let mut command = Command::new(program);
            set_death_signal_on_fork(&mut command, on_parent_death);
            command
        }
    };
    command.process_group(0);
    command
}

/// [`command_in_own_group`] for a program that ends itself when its parent dies (bubblewrap
/// with `--die-with-parent` sets its own parent-death signal first thing): no `setpriv` in
/// front of it, one program fewer to start.
pub fn command_in_own_group_ending_itself(program: impl AsRef<OsStr>) -> Command {
    use std::os::unix::process::CommandExt;
    let mut command = Command::new(program);
    command.process_group(0);
    command
}

/// The name `setpriv` knows a death signal by (the two Baton uses).
fn signal_name(signal: libc::c_int) -> Option<&'static str> {
    match signal {
        libc::SIGKILL => Some("KILL"),
        libc::SIGTERM => Some("TERM"),
        _ => None,
    }
}

/// The absolute path `program` runs from, found in `path` as the child's `execvp` would find
/// it. `None` for a relative path (the child's working folder decides it), a program found
/// through a relative folder of `path`, or one not found (spawning says so).
fn resolve(program: &OsStr, path: Option<&OsStr>) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    if !Path::new(program).is_absolute() && program.as_bytes().contains(&b'/') {
        return None;
    }
    crate::find_program(program, path).filter(|found| found.is_absolute())
}

/// Whether `setpriv` is there to set a death signal (looked at once).
fn setpriv_installed() -> bool {
    static INSTALLED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *INSTALLED.get_or_init(|| crate::is_executable(Path::new(SETPRIV)))
}

/// Sets the parent-death signal in the child between fork and exec.
fn set_death_signal_on_fork(command: &mut Command, on_parent_death: libc::c_int) {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl only sets this process's parent-death signal; it allocates nothing and is
    // async-signal-safe, as a pre_exec closure must be.
    unsafe {
        use std::os::unix::process::CommandExt;
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, on_parent_death) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (command, on_parent_death);
}

/// The process group a child leads (started with [`command_in_own_group`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessGroup {
    leader: u32,
}

impl ProcessGroup {
    /// The group led by process `pid`.
    pub fn led_by(pid: u32) -> ProcessGroup {
        ProcessGroup { leader: pid }
    }

    /// The group's id (its leader's pid).
    pub fn id(self) -> u32 {
        self.leader
    }

    /// Sends `signal` to every process of the group; false if there was none to send it to.
    pub fn signal(self, signal: libc::c_int) -> bool {
        let Ok(pid) = libc::pid_t::try_from(self.leader) else {
            return false;
        };
        if pid <= 0 {
            return false; // 0 and negatives would name this process's group or every process
        }
        // SAFETY: killpg only sends a signal, to the group this child leads.
        unsafe { libc::killpg(pid, signal) == 0 }
    }

    /// Whether any process of the group is left (a zombie leader not yet reaped counts).
    pub fn alive(self) -> bool {
        self.signal(0)
    }

    /// Kills every process of the group at once.
    pub fn kill(self) {
        self.signal(libc::SIGKILL);
    }

    /// Asks the group to stop (SIGTERM), waits up to `grace` for it to go, then kills what is
    /// left (SIGKILL). `gone` says whether the caller saw its child exit (a parent that must
    /// reap its child says so through it, since an unreaped leader still counts as alive).
    /// Returns true if the group went within `grace`.
    pub fn terminate(self, grace: Duration, mut gone: impl FnMut() -> bool) -> bool {
        self.signal(libc::SIGTERM);
        let deadline = Instant::now() + grace;
        let went = loop {
            if gone() || !self.alive() {
                break true;
            }
            if Instant::now() >= deadline {
                break false;
            }
            std::thread::sleep(POLL); // retry until the deadline
        };
        // The leader may be gone while what it started lingers in the group.
        self.kill();
        went
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::process::Stdio;

    fn spawn(script: &str) -> std::process::Child {
        let mut command = command_in_own_group("sh", None, libc::SIGKILL);
        command.args(["-c", script]).stdout(Stdio::piped());
        command.spawn().unwrap()
    }

    fn wait_gone(group: ProcessGroup) -> bool {
        let deadline = Instant::now() + Duration::from_secs(10);
        while group.alive() && Instant::now() < deadline {
            std::thread::sleep(POLL);
        }
        !group.alive()
    }

    #[test]
    fn a_child_leads_its_own_group() {
        let mut child = spawn("sleep 30");
        let group = ProcessGroup::led_by(child.id());
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", child.id())).unwrap();
        let after_name = &stat[stat.rfind(')').unwrap() + 2..];
        let pgrp: u32 = after_name
            .split_whitespace()
            .nth(2)
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(pgrp, child.id(), "the child's group is its own");
        assert!(group.alive());
        group.kill();
        child.wait().unwrap();
        assert!(wait_gone(group));
    }

    #[test]
    fn terminate_ends_a_group_that_obeys_sigterm_within_the_grace() {
        let mut child = spawn("sleep 300 & wait");
        let group = ProcessGroup::led_by(child.id());
        let mut reaped = false;
        let went = group.terminate(Duration::from_secs(20), || {
            reaped = reaped || matches!(child.try_wait(), Ok(Some(_)));
            reaped
        });
        assert!(went, "sh and its sleep stop at SIGTERM");
        assert!(wait_gone(group));
    }

    #[test]
    fn terminate_kills_what_ignores_sigterm_after_the_grace() {
        // The child and its own child both ignore SIGTERM; it says when they are set up.
        let mut child = spawn("trap '' TERM; sh -c \"trap '' TERM; sleep 300\" & echo ready; wait");
        let mut line = String::new();
        use std::io::BufRead;
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line.trim(), "ready");
        let group = ProcessGroup::led_by(child.id());
        let went = group.terminate(Duration::from_millis(200), || {
            matches!(child.try_wait(), Ok(Some(_)))
        });
        assert!(!went, "SIGTERM was ignored");
        child.wait().unwrap();
        assert!(wait_gone(group), "SIGKILL reached the grandchild too");
    }

    #[test]
    fn a_child_dies_with_the_thread_that_started_it() {
        for signal in [libc::SIGKILL, libc::SIGTERM] {
            let pid = std::thread::spawn(move || {
                let mut command = command_in_own_group("sleep", None, signal);
                command.arg("300");
                let child = command.spawn().unwrap();
                let pid = child.id();
                // The program runs, not a wrapper waiting to run it.
                let deadline = Instant::now() + Duration::from_secs(10);
                while std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap() != "sleep\n" {
                    assert!(Instant::now() < deadline, "sleep never ran");
                    std::thread::sleep(POLL);
                }
                std::mem::forget(child); // not reaped here: the thread ends with it running
                pid
            })
            .join()
            .unwrap();
            let group = ProcessGroup::led_by(pid);
            let deadline = Instant::now() + Duration::from_secs(10);
            // Gone, or a zombie this test process has not reaped.
            let exited = || {
                std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |stat| {
                    stat[stat.rfind(')').unwrap() + 2..].starts_with('Z')
                })
            };
            while !exited() && Instant::now() < deadline {
                std::thread::sleep(POLL);
            }
            assert!(
                exited(),
                "signal {signal}: the child outlived its parent thread"
            );
            // SAFETY: reaps the child this test started (waitpid on its own child).
            unsafe { libc::waitpid(pid as libc::pid_t, std::ptr::null_mut(), 0) };
            assert!(!group.alive());
        }
    }

    #[test]
    fn a_missing_program_is_refused_at_spawn_as_std_refuses_it() {
        let error = command_in_own_group("baton-no-such-program", None, libc::SIGKILL)
            .spawn()
            .unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::NotFound);
        let error = command_in_own_group("/nonexistent/program", None, libc::SIGKILL)
            .spawn()
            .unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::NotFound);
    }

    #[test]
    fn a_program_is_looked_up_in_the_path_the_child_is_given() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("baton-test-tool");
        std::fs::write(&script, "#!/bin/sh\necho from the given path\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let path =
            std::env::join_paths([dir.path(), Path::new("/usr/bin"), Path::new("/bin")]).unwrap();
        let out = command_in_own_group("baton-test-tool", Some(&path), libc::SIGKILL)
            .env("PATH", &path)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "from the given path\n"
        );
    }

    #[test]
    fn no_group_is_signalled_for_a_zero_or_huge_leader() {
        assert!(!ProcessGroup::led_by(0).signal(0));
        assert!(!ProcessGroup::led_by(u32::MAX).alive());
    }
}
