//! A child process that leads a process group of its own, and how Baton ends one: the team's
//! agents, the browsers it launches and the MCP proxy's child servers are all started this way
//! and all stopped this way, so "ask the group to stop, wait, then kill it" is written once.
//!
//! Why a group: a child's own children (npx's node, Chromium's renderers, an agent's tools)
//! join its group, so one signal to the group reaches them all. Why a parent-death signal: a
//! child must not outlive a Baton process that was killed without the chance to stop it.

use std::process::Command;
use std::time::{Duration, Instant};

/// How often [`ProcessGroup::terminate`] looks whether the group has gone.
const POLL: Duration = Duration::from_millis(20);

/// Sets `command` up to start a process group of its own (its pid is the group's id) and,
/// on Linux, to be sent `on_parent_death` when the thread that started it ends (std's spawn
/// and tokio's alike run on a thread that lives as long as the process, or the caller keeps
/// one alive: see `baton-browser`'s launcher).
pub fn own_group(command: &mut Command, on_parent_death: libc::c_int) {
    use std::os::unix::process::CommandExt;

    command.process_group(0);
    #[cfg(target_os = "linux")]
    // SAFETY: prctl only sets this process's parent-death signal; it allocates nothing and is
    // async-signal-safe, as a pre_exec closure must be.
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, on_parent_death) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    #[cfg(not(target_os = "linux"))]
    let _ = on_parent_death;
}

/// The process group a child leads (started with [`own_group`]).
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
        let mut command = Command::new("sh");
        command.args(["-c", script]).stdout(Stdio::piped());
        own_group(&mut command, libc::SIGKILL);
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
    fn no_group_is_signalled_for_a_zero_or_huge_leader() {
        assert!(!ProcessGroup::led_by(0).signal(0));
        assert!(!ProcessGroup::led_by(u32::MAX).alive());
    }
}
