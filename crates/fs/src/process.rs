//! Is a process still there? Asked of a signal's writer (`--while-pid`), of a browser in the
//! registry, and of a manual session's holder; a plain `kill(pid, 0)`, with zombies counted as
//! gone. And what a process is (its name, state and parent), from `/proc/PID/stat`.

/// True while process `pid` exists and has not exited (a zombie counts as gone).
pub fn pid_alive(pid: u32) -> bool {
    let Ok(raw) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if raw <= 0 {
        return false;
    }
    // SAFETY: kill with signal 0 only checks that the process exists and may be signalled.
    let exists = unsafe { libc::kill(raw, 0) } == 0
        || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
    exists && proc_stat(pid).is_none_or(|stat| stat.state != 'Z')
}

/// A process as `/proc/PID/stat` describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcStat {
    /// The executable's name (as the kernel keeps it, at most 15 bytes).
    pub name: String,
    /// One letter: R running, S sleeping, Z zombie, …
    pub state: char,
    pub parent: u32,
}

/// Process `pid` as the kernel describes it; `None` when it is gone (or not on Linux).
#[cfg(target_os = "linux")]
pub fn proc_stat(pid: u32) -> Option<ProcStat> {
    // "PID (NAME) STATE PPID …"; NAME may contain spaces and parentheses.
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (open, close) = (stat.find('(')?, stat.rfind(')')?);
    let mut rest = stat[close + 1..].split_whitespace();
    Some(ProcStat {
        name: stat[open + 1..close].to_string(),
        state: rest.next()?.chars().next()?,
        parent: rest.next()?.parse().ok()?,
    })
}

#[cfg(not(target_os = "linux"))]
pub fn proc_stat(_pid: u32) -> Option<ProcStat> {
    None
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_its_stat_names_its_parent() {
        let me = proc_stat(std::process::id()).expect("this process");
        assert_eq!(me.parent, std::os::unix::process::parent_id());
        assert!(matches!(me.state, 'R' | 'S'), "{me:?}");
        assert!(pid_alive(std::process::id()));
        assert!(proc_stat(u32::MAX).is_none());
    }
}
