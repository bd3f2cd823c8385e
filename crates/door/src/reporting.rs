//! On the command's side of the door: what the supervisor's `baton`, running an agent's
//! command, says it refused, on the pipe the door gave it ([`REPORT_ENV`]), not on the output
//! the agent reads.

use std::io::Write;
use std::os::fd::RawFd;

use crate::protocol::{REPORT_ENV, REPORT_FD};

/// On the command's side of the door: the report pipe ([`REPORT_ENV`]) kept from the programs
/// it starts (`baton run`'s), so that the pipe ends when the command does.
pub fn keep_report_from_children() {
    if report_fd().is_some() {
        // SAFETY: fcntl on the descriptor the door gave this process.
        unsafe { libc::fcntl(REPORT_FD, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
}

/// On the command's side of the door: `refusal` said to the door, one line, for the
/// attempt's transcript.
pub fn report_refusal(refusal: &str) {
    if let Some(fd) = report_fd() {
        use std::os::fd::FromRawFd;
        // SAFETY: the door opened this descriptor for this process; it is borrowed, not
        // closed.
        let mut report = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(fd) });
        let _ = writeln!(report, "{}", refusal.replace('\n', " "));
    }
}

pub(crate) fn report_fd() -> Option<RawFd> {
    let named = std::env::var(REPORT_ENV).ok()?;
    (named == REPORT_FD.to_string()).then_some(REPORT_FD)
}
