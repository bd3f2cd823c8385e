//! The sandbox's first command, `baton __sandbox-start [--max-processes N] [--network SOCKET
//! [--forward PORT]…] [--bridge PORT:SOCKET] -- PROGRAM ARGS…`: what must be done inside the
//! namespaces bubblewrap made and cannot be done from outside, before the program runs in its
//! place. Its only entry is [`run`].
//!
//! - **The process limit** (`RLIMIT_NPROC`, soft and hard). Set here, after the user namespace
//!   exists, it counts only the processes and threads of this sandbox (the kernel counts them
//!   per user namespace), so an agent's fork bomb stops at the limit without touching the
//!   user's own count; the agent has no capability to raise it again. The kernel does not
//!   apply it to root: under root the run's pids cgroup ([`crate::pids_cgroup`]) is the
//!   limit.
//! - **The bridges** ([`crate::net::proxy::start_relay`]): to the network's proxy, when the
//!   sandbox reaches the network through it, and from a port of the sandbox's own loopback to
//!   a socket shown inside (Baton's door), so its program needs no Unix socket.
//! - **The syscall filter** ([`crate::seccomp`]), last, when the sandbox has a network of its
//!   own: no Unix sockets (none of the host's is reachable by its path), no `ptrace`.

use std::ffi::OsString;
use std::path::PathBuf;

/// The hidden command.
pub const START_COMMAND: &str = "__sandbox-start";

/// What the first command is told to do.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Start {
    pub max_processes: Option<u32>,
    /// Files each process may have open (`RLIMIT_NOFILE`, soft and hard).
    pub max_open_files: Option<u32>,
    /// The proxy's socket inside, and the loopback ports forwarded to the machine's.
    pub network: Option<(PathBuf, Vec<u16>)>,
    /// A socket inside, bridged from this port of the sandbox's loopback.
    pub bridge: Option<(PathBuf, u16)>,
    /// Refuse the agent Unix sockets ([`crate::seccomp`]).
    pub seal: bool,
}

impl Start {
    /// The first command's words up to and including `--`, the program to follow.
    pub fn words(&self, baton: &std::path::Path) -> Vec<String> {
        let mut words = vec![baton.display().to_string(), START_COMMAND.to_string()];
        if let Some(max) = self.max_processes {
            words.extend(["--max-processes".into(), max.to_string()]);
        }
        if let Some(max) = self.max_open_files {
            words.extend(["--max-open-files".into(), max.to_string()]);
        }
        if let Some((socket, forward)) = &self.network {
            words.extend(["--network".into(), socket.display().to_string()]);
            for port in forward {
                words.extend(["--forward".into(), port.to_string()]);
            }
        }
        if let Some((socket, port)) = &self.bridge {
            words.extend(["--bridge".into(), format!("{port}:{}", socket.display())]);
        }
        if self.seal {
            words.extend(["--seal".into(), "unix-sockets".into()]);
        }
        words.push("--".into());
        words
    }

    fn parse(options: &[OsString]) -> Result<Start, String> {
        let mut start = Start::default();
        let mut forward = Vec::new();
        let mut rest = options.iter();
        while let Some(option) = rest.next() {
            let value = rest
                .next()
                .and_then(|v| v.to_str())
                .ok_or_else(|| format!("{option:?} needs a value"))?;
            match option.to_str() {
                Some("--max-processes") => {
                    let max = value.parse().map_err(|_| format!("not a count: {value}"))?;
                    start.max_processes = Some(max);
                }
                Some("--max-open-files") => {
                    let max = value.parse().map_err(|_| format!("not a count: {value}"))?;
                    start.max_open_files = Some(max);
                }
                Some("--network") => start.network = Some((PathBuf::from(value), Vec::new())),
                Some("--bridge") => {
                    let (port, socket) = value
                        .split_once(':')
                        .ok_or_else(|| format!("not PORT:SOCKET: {value}"))?;
                    let port = port.parse().map_err(|_| format!("not a port: {port}"))?;
                    start.bridge = Some((PathBuf::from(socket), port));
                }
                Some("--seal") if value == "unix-sockets" => start.seal = true,
                Some("--forward") => {
                    forward.push(value.parse().map_err(|_| format!("not a port: {value}"))?)
                }
                _ => return Err(format!("unknown option {option:?}")),
            }
        }
        match &mut start.network {
            Some((_, ports)) => *ports = forward,
            None if !forward.is_empty() => return Err("--forward without --network".into()),
            None => {}
        }
        Ok(start)
    }
}

/// Runs the first command with `args` (what follows its name): does what it is told and
/// becomes the program. Returns only when it cannot (the exit status to end with: 127, which
/// the supervisor reads as an agent that could not start).
pub fn run(args: &[OsString]) -> i32 {
    match start(args) {
        Ok(never) => match never {},
        Err(e) => {
            eprintln!("baton: the sandbox's start: {e}");
            127
        }
    }
}

enum Never {}

fn start(args: &[OsString]) -> Result<Never, String> {
    use std::os::unix::process::CommandExt;
    let split = args
        .iter()
        .position(|a| a == "--")
        .ok_or("no `--` before the program")?;
    let start = Start::parse(&args[..split])?;
    let (program, program_args) = args[split + 1..].split_first().ok_or("no program")?;
    if let Some(max) = start.max_processes {
        limit(libc::RLIMIT_NPROC, max.into())
            .map_err(|e| format!("cannot limit its processes to {max}: {e}"))?;
    }
    if let Some(max) = start.max_open_files {
        // Never above what this process may have already (raising it needs a capability).
        limit(libc::RLIMIT_NOFILE, max.into())
            .map_err(|e| format!("cannot limit its open files to {max}: {e}"))?;
    }
    let proxy = start
        .network
        .as_ref()
        .map(|(s, f)| (s.as_path(), f.as_slice()));
    let bridge = start
        .bridge
        .as_ref()
        .map(|(socket, port)| (socket.as_path(), *port));
    crate::net::proxy::start_relay(proxy, bridge).map_err(|e| format!("the network: {e}"))?;
    if start.seal {
        crate::seccomp::refuse_unix_sockets()?;
    }
    let error = std::process::Command::new(program)
        .args(program_args)
        .exec();
    Err(format!(
        "cannot run {}: {error}",
        std::path::Path::new(program).display()
    ))
}

/// Sets `resource`'s soft and hard limit to `max`, or to the hard limit already set when
/// that is lower.
fn limit(resource: libc::__rlimit_resource_t, max: libc::rlim_t) -> std::io::Result<()> {
    let mut now = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: reads and sets this process's own limit through valid structs.
    unsafe {
        if libc::getrlimit(resource, &mut now) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let max = max.min(now.rlim_max);
        let set = libc::rlimit {
            rlim_cur: max,
            rlim_max: max,
        };
        if libc::setrlimit(resource, &set) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(words: &[String]) -> Vec<OsString> {
        words.iter().map(OsString::from).collect()
    }

    #[test]
    fn its_words_read_back_as_what_they_say() {
        let start = Start {
            max_processes: Some(64),
            max_open_files: Some(1024),
            network: Some((PathBuf::from("/tmp/baton/proxy"), vec![4000, 4001])),
            bridge: Some((PathBuf::from("/tmp/baton/door"), 3127)),
            seal: true,
        };
        let words = start.words(std::path::Path::new("/usr/bin/baton"));
        assert_eq!(words[1], START_COMMAND);
        assert_eq!(words.last().unwrap(), "--");
        assert_eq!(Start::parse(&os(&words[2..words.len() - 1])), Ok(start));
        let bare = Start::default();
        let words = bare.words(std::path::Path::new("baton"));
        assert_eq!(words, ["baton", START_COMMAND, "--"]);
    }

    #[test]
    fn bad_options_are_refused_with_why() {
        let refused = |words: &[&str]| {
            Start::parse(&words.iter().map(OsString::from).collect::<Vec<_>>()).unwrap_err()
        };
        assert!(refused(&["--max-processes", "many"]).contains("not a count"));
        assert!(refused(&["--forward", "4000"]).contains("without --network"));
        assert!(refused(&["--network"]).contains("needs a value"));
        assert!(refused(&["--color", "red"]).contains("unknown option"));
        assert!(refused(&["--seal", "everything"]).contains("unknown option"));
        assert!(
            run(&[OsString::from("--max-processes"), OsString::from("9")]) == 127,
            "no program: refused, not run"
        );
    }
}
