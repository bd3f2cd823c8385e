//! A warden for the process groups a Baton process leads, so they end with it however it ends,
//! SIGKILL included. A child's parent-death signal reaches the child only, not what it started
//! (an agent's tools, a test runner's workers); a killed process cannot kill anything itself.
//! So the first group watched starts a small process of its own, `awk` in a process group of
//! its own (a terminal's Ctrl-C does not reach it), reading group ids from a pipe: `+ID` when a
//! group starts, `-ID` when it is over. When this process ends, in any way, the pipe's last
//! writer is gone, the warden reads the end of its input, and kills every group it was told
//! of and not told was over. One warden per process, one line per group: nothing to poll.
//!
//! It is a safety net: Baton still stops its groups itself ([`crate::ProcessGroup`]); a
//! warden that cannot start (no `awk`) leaves things as they were without it.

use std::io::Write;
use std::process::{ChildStdin, Command, Stdio};
use std::sync::{Mutex, OnceLock};

use crate::ProcessGroup;

/// The warden: groups added and removed by line; at the end of its input, each left killed.
const SCRIPT: &str = r#"/^\+[0-9]+$/ { live[substr($0, 2)] = 1; next }
/^-[0-9]+$/ { delete live[substr($0, 2)]; next }
END { for (group in live) system("kill -9 -" group " 2>/dev/null") }"#;

/// The warden's input, once it runs (`None`: it could not start, or its input broke).
fn warden() -> &'static Mutex<Option<ChildStdin>> {
    static WARDEN: OnceLock<Mutex<Option<ChildStdin>>> = OnceLock::new();
    WARDEN.get_or_init(|| Mutex::new(start()))
}

fn start() -> Option<ChildStdin> {
    use std::os::unix::process::CommandExt;
    let mut child = Command::new("awk")
        .arg(SCRIPT)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .ok()?;
    // The warden outlives this process by design; it is reaped by whoever inherits it then,
    // or by a later `wait` of nobody while this process runs (a zombie at most, once).
    let input = child.stdin.take();
    std::mem::forget(child);
    input
}

fn tell(line: String) {
    let mut input = warden().lock().unwrap_or_else(|e| e.into_inner());
    if let Some(pipe) = input.as_mut()
        && pipe.write_all(line.as_bytes()).is_err()
    {
        // The warden is gone; nothing watches from now on.
        *input = None;
    }
}

/// Starts the warden now, from the calling thread, rather than from the first thread that
/// watches a group: a process is born in its parent thread's cgroup (cgroup v1 keeps one per
/// thread), and a warden started from a worker's thread would keep that worker's pids cgroup
/// from being removed.
pub fn ready() {
    let _ = warden();
}

/// Kill `group` if this process ends before [`forget`] is called for it.
pub fn watch(group: ProcessGroup) {
    tell(format!("+{}\n", group.id()));
}

/// `group` is over: the warden must not kill it (its id may be reused).
pub fn forget(group: ProcessGroup) {
    tell(format!("-{}\n", group.id()));
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use std::io::{BufRead, BufReader};
    use std::time::{Duration, Instant};

    /// A Baton-like process killed outright takes the groups it watched with it, a child that
    /// ignores SIGTERM included; a group it said was over is left alone.
    #[test]
    fn the_groups_of_a_killed_process_are_killed_by_its_warden() {
        let script = format!(
            "{{ echo '+'$WATCHED; echo '-'$FORGOTTEN; cat; }} | awk '{}'",
            super::SCRIPT.replace('\'', "'\\''")
        );
        // Two groups, each a shell ignoring SIGTERM with a sleep under it.
        let group = |tag: &str| {
            use std::os::unix::process::CommandExt;
            let mut child = std::process::Command::new("sh")
                .args([
                    "-c",
                    &format!("trap '' TERM; sleep 3{tag} & echo ready; wait"),
                ])
                .stdout(std::process::Stdio::piped())
                .process_group(0)
                .spawn()
                .unwrap();
            let mut line = String::new();
            BufReader::new(child.stdout.take().unwrap())
                .read_line(&mut line)
                .unwrap();
            child
        };
        let mut watched = group("01");
        let mut forgotten = group("02");
        // The stand-in for a Baton process: feeds the warden, then is killed (its `cat`
        // holding the pipe's write end).
        let mut baton = std::process::Command::new("sh")
            .args(["-c", &script])
            .env("WATCHED", watched.id().to_string())
            .env("FORGOTTEN", forgotten.id().to_string())
            .stdin(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let feeder = baton.stdin.take().unwrap();
        drop(feeder); // the end of the input: as when the Baton process dies
        baton.wait().unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        while watched.try_wait().unwrap().is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20)); // retry until the deadline
        }
        assert!(
            watched.try_wait().unwrap().is_some(),
            "the watched group was killed"
        );
        assert!(
            forgotten.try_wait().unwrap().is_none(),
            "the forgotten one lives"
        );
        super::ProcessGroup::led_by(forgotten.id()).kill();
        forgotten.wait().unwrap();
    }
}
