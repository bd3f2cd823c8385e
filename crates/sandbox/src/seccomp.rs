//! The sandbox's syscall filter (seccomp, through `seccompiler` as Firecracker builds its own),
//! installed by the sandbox's first command ([`crate::inside`]) just before it becomes the
//! agent, so the agent and everything it starts carry it and cannot take it off.
//!
//! Why: a Unix socket is reached by its path, and `connect` is allowed on a read-only mount, so
//! whatever socket the sandbox's view of the machine shows (a database's under `/run`, a
//! container engine's, the desktop session's, one in any folder shown) would let the agent
//! speak to a host service as the user. Hiding the known places (`/run`, `/tmp`) is not enough
//! to be sure, and a filter cannot read the address a `connect` names, so the agent may not
//! make Unix sockets at all: `socket(AF_UNIX, …)` fails with `EPERM` (pairs made with
//! `socketpair`, which reach nothing outside, still work). Its one way to Baton, the door, is
//! then reached over the sandbox's own loopback, bridged to the door's socket by the relay that
//! the first command starts before the filter ([`crate::net::proxy`]). As Codex's Linux sandbox
//! does, `ptrace` and `process_vm_writev` are refused too (the relay is the agent's child, and
//! must not be made to open sockets for it), and `io_uring_setup` (io_uring can make sockets
//! without the `socket` call the filter sees).
//!
//! Only where the sandbox has a network of its own: with `sandbox.network = "open"` the
//! agent has the machine's network, abstract Unix sockets included, by the lead's choice.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// Installs the filter on this thread (and so on every process it becomes or starts).
pub(crate) fn refuse_unix_sockets() -> Result<(), String> {
    let program = program().map_err(|e| format!("cannot build its syscall filter: {e}"))?;
    seccompiler::apply_filter(&program)
        .map_err(|e| format!("cannot install its syscall filter: {e}"))
}

fn program() -> Result<BpfProgram, Box<dyn std::error::Error>> {
    let arch = TargetArch::try_from(std::env::consts::ARCH)?;
    let unix = SeccompCondition::new(
        0,
        SeccompCmpArgLen::Dword,
        SeccompCmpOp::Eq,
        libc::AF_UNIX as u64,
    )?;
    let rules: BTreeMap<i64, Vec<SeccompRule>> = [
        (libc::SYS_socket, vec![SeccompRule::new(vec![unix])?]),
        // An empty list refuses the call whatever its arguments.
        (libc::SYS_ptrace, Vec::new()),
        (libc::SYS_process_vm_writev, Vec::new()),
        (libc::SYS_io_uring_setup, Vec::new()),
    ]
    .into_iter()
    .collect();
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )?;
    Ok(filter.try_into()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// In a child process (the filter cannot be taken off): Unix sockets refused, pairs and
    /// TCP sockets still made.
    #[test]
    fn a_filtered_process_makes_no_unix_socket_but_pairs_and_tcp() {
        // Built before the fork: the child of a threaded process must not allocate.
        let program = program().unwrap();
        // SAFETY: the child only makes syscalls and exits.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            let code = (|| {
                seccompiler::apply_filter(&program).ok()?;
                // SAFETY: plain syscalls with valid arguments.
                unsafe {
                    let unix = libc::socket(libc::AF_UNIX, libc::SOCK_STREAM, 0);
                    let errno = *libc::__errno_location();
                    let mut pair = [0; 2];
                    let paired =
                        libc::socketpair(libc::AF_UNIX, libc::SOCK_STREAM, 0, pair.as_mut_ptr());
                    let tcp = libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0);
                    (unix == -1 && errno == libc::EPERM && paired == 0 && tcp >= 0).then_some(())
                }
            })()
            .map_or(1, |()| 0);
            // SAFETY: ends the forked child at once.
            unsafe { libc::_exit(code) };
        }
        let mut status = 0;
        // SAFETY: waits for the child just forked.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert!(
            libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
            "{status}"
        );
    }
}
