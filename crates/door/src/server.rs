//! The door's side in the supervisor: a Unix socket for one attempt ([`Door`]), each knock's
//! command run by the supervisor's `baton` as the attempt's agent ([`Guest`]), its output
//! framed back, what it refused said to the attempt's transcript, and the attempt's network
//! proxy beside it, whose connections outside the allow-list may be put to the lead.

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use baton_fs::{ProcessGroup, command_in_own_group};
use baton_sandbox::{Listening, socket_address};

use crate::protocol::{
    CALLER_ENV, DOOR_ENV, DoorRequest, EXIT, READS_ONLY_ENV, REPORT_ENV, REPORT_FD, SOCKET, STDERR,
    STDOUT, TASK_ENV, WORKDIR_ENV, pass_on, write_frame,
};

/// What the door does with a note for the attempt's transcript (what a command refused, what
/// the proxy refused).
pub type Tell = Arc<dyn Fn(String) + Send + Sync>;

/// The most of one command's refusal that is kept.
const MAX_REPORT: u64 = 8 * 1024;
/// The longest first line (the command line and folder).
const MAX_KNOCK: u64 = 256 * 1024;
/// Commands one attempt may have running on the supervisor's side at once.
const MAX_RUNNING: usize = 16;
/// Connections one attempt may have open at once (the rest are closed unanswered).
const MAX_OPEN: usize = 64;
/// How long a connection may take to send its command line.
const KNOCK_PATIENCE: std::time::Duration = std::time::Duration::from_secs(10);

/// Whom a door is for, and how its commands reach the project.
#[derive(Debug, Clone)]
pub struct Guest {
    pub agent: String,
    pub task: String,
    /// The supervisor's `baton`, which runs the commands.
    pub baton: PathBuf,
    /// How the supervisor reached the store (`BATON_STORE`, …): the commands reach the same.
    pub store_env: Vec<(String, String)>,
    /// Where commands run when the folder they name is not the agent's to name.
    pub workdir: PathBuf,
    /// The agent only reads (a team's judge): its commands that would change anything are
    /// refused ([`READS_ONLY_ENV`]).
    pub reads_only: bool,
}

impl Guest {
    /// The supervisor's `baton ARGS`, run in `dir` as this guest: the agent for its task, with
    /// the store's credentials, an agent's commands only.
    fn command(&self, args: &[String], dir: &Path) -> std::process::Command {
        let mut command = command_in_own_group(&self.baton, None, libc::SIGKILL);
        command
            .args(args)
            .current_dir(dir)
            .env_clear()
            .envs(std::env::vars().filter(|(key, _)| key != DOOR_ENV))
            .envs(self.store_env.iter().map(|(k, v)| (k, v)))
            .env(CALLER_ENV, &self.agent)
            .env(TASK_ENV, &self.task)
            .env(WORKDIR_ENV, &self.workdir)
            .env(READS_ONLY_ENV, if self.reads_only { "1" } else { "" })
            .env("BATON_AGENT", &self.agent)
            .env("BATON_TASK_ID", &self.task);
        command
    }

    /// Puts a connection to `target` (`HOST:PORT`) outside the agent's allow-list to the
    /// project's approval policy, which allows it, refuses it or asks the lead (`baton
    /// approve`, tool [`baton_core::policy::NETWORK_TOOL`]): `Ok` when allowed, else why not.
    /// The asking `baton` is among `running`, so it ends when the door closes.
    fn ask_for_connection(
        &self,
        target: &str,
        running: &Mutex<HashSet<u32>>,
    ) -> Result<(), String> {
        let input = serde_json::json!({ "target": target }).to_string();
        let args = [
            "--json",
            "approve",
            baton_core::policy::NETWORK_TOOL,
            "--input",
            &input,
        ]
        .map(String::from);
        let child = self
            .command(&args, &self.workdir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot ask the lead: {e}"))?;
        let pid = child.id();
        running.lock().expect("door lock").insert(pid);
        let out = child.wait_with_output();
        running.lock().expect("door lock").remove(&pid);
        let out = out.map_err(|e| format!("cannot ask the lead: {e}"))?;
        let verdict: serde_json::Value = serde_json::from_slice(&out.stdout).map_err(|_| {
            format!(
                "cannot ask the lead: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            )
        })?;
        match verdict["behavior"].as_str() {
            Some("allow") => Ok(()),
            _ => Err(verdict["message"]
                .as_str()
                .unwrap_or("not allowed")
                .to_string()),
        }
    }
}

/// One attempt's open door.
pub struct Door {
    dir: PathBuf,
    _dir_handle: std::fs::File,
    /// The door's socket, served until the door closes.
    knocks: Option<Listening>,
    running: Arc<Mutex<HashSet<u32>>>,
    /// The attempt's network proxy ([`baton_sandbox::net::proxy`]), beside the door, when it
    /// has one.
    network: Option<baton_sandbox::net::proxy::NetProxy>,
}

impl Door {
    /// Opens a door in `dir` (made afresh, readable by this user only) for `guest`, with a
    /// network proxy beside it reaching what `network` allows, when given.
    /// With `ask`, a connection outside the list is put to the project's approval policy
    /// (and so to the lead) instead of being refused at once. What the door's commands and the
    /// proxy refuse is said to `tell`, one message each (what was asked and why not), until the
    /// door closes.
    pub fn open(
        dir: &Path,
        guest: Guest,
        network: Option<baton_sandbox::net::AllowList>,
        ask: bool,
        tell: Tell,
    ) -> std::io::Result<Door> {
        let _ = std::fs::remove_dir_all(dir);
        std::fs::create_dir_all(dir)?;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
        let handle = std::fs::File::open(dir)?;
        let address_of = |name: &str| socket_address(dir, &handle, name);
        let running = Arc::new(Mutex::new(HashSet::new()));
        let guest = Arc::new(guest);
        let network = match network {
            Some(allow) => {
                let asker: Option<baton_sandbox::net::proxy::Asker> = ask.then(|| {
                    let (guest, running) = (guest.clone(), running.clone());
                    // A few questions at once, one per target ([`crate::ask_gate`]).
                    let gate = crate::ask_gate::AskGate::default();
                    Arc::new(move |target: &str| {
                        gate.ask(target, || guest.ask_for_connection(target, &running))
                    }) as _
                });
                let tell = tell.clone();
                Some(baton_sandbox::net::proxy::NetProxy::open(
                    &address_of(baton_sandbox::net::proxy::SOCKET),
                    allow,
                    move |why| tell(why),
                    asker,
                )?)
            }
            None => None,
        };
        let knocks = {
            let running = running.clone();
            Listening::serve(&address_of(SOCKET), "door", MAX_OPEN, move |stream| {
                let mut out = stream.try_clone().ok();
                if let Err(message) = answer(stream, &guest, &running, &*tell)
                    && let Some(out) = out.as_mut()
                {
                    let _ = write_frame(out, STDERR, format!("baton: {message}\n").as_bytes());
                    let _ = write_frame(out, EXIT, &1i32.to_be_bytes());
                }
            })?
        };
        Ok(Door {
            dir: dir.to_path_buf(),
            _dir_handle: handle,
            knocks: Some(knocks),
            running,
            network,
        })
    }

    /// The door's folder on this side.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Closes the door: no more knocks, and every command still running for the agent ends
    /// (what dropping it does; this says so where it happens).
    pub fn close(self) {}

    fn shut(&mut self) {
        // The proxy first: nothing more goes out for an attempt that is over.
        drop(self.network.take());
        drop(self.knocks.take());
        for pid in self.running.lock().expect("door lock").drain() {
            ProcessGroup::led_by(pid).kill();
        }
    }
}

impl Drop for Door {
    fn drop(&mut self) {
        if self.knocks.is_some() {
            self.shut();
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// Runs one knock's command and relays it; an error before it ran is said to the agent, what
/// the command refused to `tell`.
fn answer(
    stream: UnixStream,
    guest: &Guest,
    running: &Mutex<HashSet<u32>>,
    tell: &(dyn Fn(String) + Send + Sync),
) -> Result<(), String> {
    let mut reader = BufReader::new(stream.try_clone().map_err(|e| e.to_string())?);
    let mut line = Vec::new();
    let _ = stream.set_read_timeout(Some(KNOCK_PATIENCE));
    (&mut reader)
        .take(MAX_KNOCK)
        .read_until(b'\n', &mut line)
        .map_err(|e| format!("cannot read the command: {e}"))?;
    let _ = stream.set_read_timeout(None);
    let knock: DoorRequest = serde_json::from_slice(&line)
        .map_err(|e| format!("the door takes a command line as JSON first: {e}"))?;
    let mut command = guest.command(&knock.argv, &workdir_for(&knock.cwd, &guest.workdir));
    command
        .env(REPORT_ENV, REPORT_FD.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let (mut report, report_end) =
        std::io::pipe().map_err(|e| format!("cannot make a pipe: {e}"))?;
    report_to(&mut command, report_end.as_raw_fd());
    let mut child = {
        let mut running = running.lock().expect("door lock");
        if running.len() >= MAX_RUNNING {
            return Err(format!(
                "{MAX_RUNNING} commands of this agent already run; wait for one to end"
            ));
        }
        let child = command
            .spawn()
            .map_err(|e| format!("cannot run {}: {e}", guest.baton.display()))?;
        running.insert(child.id());
        child
    };
    // Only the command holds the report's end now: it ends when the command does.
    drop(command);
    drop(report_end);
    let pid = child.id();
    let mut stdin = child.stdin.take().expect("piped");
    let feeding = std::thread::spawn(move || pass_on(&mut reader, &mut stdin));
    let out = Arc::new(Mutex::new(stream));
    // Each stream passed on as frames of its kind; false when the agent's end went away.
    let relay = |mut from: Box<dyn Read + Send>, kind: u8| {
        let mut to = Framed {
            out: out.clone(),
            kind,
        };
        std::thread::spawn(move || pass_on(&mut from, &mut to))
    };
    let stdout = relay(Box::new(child.stdout.take().expect("piped")), STDOUT);
    let stderr = relay(Box::new(child.stderr.take().expect("piped")), STDERR);
    let heard = [stdout, stderr]
        .into_iter()
        .all(|thread| thread.join().unwrap_or(false));
    if !heard {
        ProcessGroup::led_by(pid).kill();
    }
    let status = child.wait();
    running.lock().expect("door lock").remove(&pid);
    // Written before the command ended; a process it left holding the pipe is not waited for.
    let mut said = Vec::new();
    let _ = set_nonblocking(report.as_raw_fd());
    let _ = (&mut report).take(MAX_REPORT).read_to_end(&mut said);
    let said = baton_core::text::printable(&said);
    if !said.trim().is_empty() {
        // The agent's own words, cleaned and cut: they reach the lead's screen.
        let asked = baton_core::text::printable(knock.argv.join(" ").as_bytes());
        tell(format!(
            "the door refused `baton {}`: {}",
            baton_core::text::prefix(&asked, 300),
            said.trim()
        ));
    }
    let code = match status {
        Ok(status) => {
            use std::os::unix::process::ExitStatusExt;
            status
                .code()
                .unwrap_or_else(|| 128 + status.signal().unwrap_or(0))
        }
        Err(_) => 1,
    };
    let mut out = out.lock().expect("door lock");
    let _ = write_frame(&mut *out, EXIT, &code.to_be_bytes());
    let _ = out.shutdown(std::net::Shutdown::Both);
    drop(out);
    let _ = feeding.join();
    Ok(())
}

/// Gives the command `fd` as [`REPORT_FD`], and nothing else of this process's descriptors
/// (they close on exec).
fn report_to(command: &mut std::process::Command, fd: RawFd) {
    use std::os::unix::process::CommandExt;
    // SAFETY: only async-signal-safe calls between fork and exec (dup2, fcntl).
    unsafe {
        command.pre_exec(move || {
            if fd == REPORT_FD {
                // Already there: keep it across exec.
                if libc::fcntl(fd, libc::F_SETFD, 0) == -1 {
                    return Err(std::io::Error::last_os_error());
                }
            } else if libc::dup2(fd, REPORT_FD) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

fn set_nonblocking(fd: RawFd) -> std::io::Result<()> {
    // SAFETY: fcntl on a descriptor this process owns.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags == -1 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) } == -1 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// The folder a command runs in: the one the agent was in when it is inside its working folder
/// (the same path on both sides), else the working folder.
fn workdir_for(cwd: &str, workdir: &Path) -> PathBuf {
    let inside = std::fs::canonicalize(cwd)
        .ok()
        .zip(std::fs::canonicalize(workdir).ok())
        .filter(|(cwd, workdir)| cwd.starts_with(workdir));
    match inside {
        Some((cwd, _)) => cwd,
        None => workdir.to_path_buf(),
    }
}

/// One of a command's output streams as the agent's end receives it: each write one frame of
/// `kind`, the socket shared with the other stream.
struct Framed {
    out: Arc<Mutex<UnixStream>>,
    kind: u8,
}

impl Write for Framed {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        write_frame(&mut *self.out.lock().expect("door lock"), self.kind, bytes)?;
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::read_frame;

    /// A door whose "baton" is `sh`, for the relay's own logic, and what it says it refused.
    fn door_of_sh(dir: &Path) -> (Door, std::sync::mpsc::Receiver<String>) {
        let (told, refusals) = std::sync::mpsc::channel();
        let door = Door::open(
            &dir.join("door-dir"),
            Guest {
                agent: "a1".into(),
                task: "task-1".into(),
                baton: PathBuf::from("/bin/sh"),
                store_env: vec![("BATON_STORE".into(), "postgres://secret".into())],
                workdir: dir.to_path_buf(),
                reads_only: false,
            },
            None,
            false,
            Arc::new(move |note| {
                let _ = told.send(note);
            }),
        )
        .unwrap();
        (door, refusals)
    }

    /// Knocks with `argv` and `input`; the frames that came back, stdout and stderr joined.
    fn knock(door: &Door, argv: &[&str], input: &[u8]) -> (String, String, Option<i32>) {
        let mut stream = UnixStream::connect(door.dir().join(SOCKET)).unwrap();
        let knock = DoorRequest {
            argv: argv.iter().map(|a| a.to_string()).collect(),
            cwd: "/".into(),
        };
        let mut line = serde_json::to_vec(&knock).unwrap();
        line.push(b'\n');
        stream.write_all(&line).unwrap();
        stream.write_all(input).unwrap();
        stream.shutdown(std::net::Shutdown::Write).unwrap();
        collect(&mut stream)
    }

    fn collect(stream: &mut UnixStream) -> (String, String, Option<i32>) {
        let (mut out, mut err, mut code) = (Vec::new(), Vec::new(), None);
        while let Some((kind, bytes)) = read_frame(stream).unwrap() {
            match kind {
                STDOUT => out.extend(bytes),
                STDERR => err.extend(bytes),
                EXIT => code = Some(i32::from_be_bytes(bytes.try_into().unwrap())),
                _ => panic!("unknown frame {kind}"),
            }
        }
        let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
        (text(out), text(err), code)
    }

    #[test]
    fn a_knock_runs_as_the_doors_agent_with_its_input_and_says_how_it_ended() {
        let dir = tempfile::tempdir().unwrap();
        let (door, _) = door_of_sh(dir.path());
        let (out, err, code) = knock(
            &door,
            &[
                "-c",
                "echo $BATON_DOOR_AGENT $BATON_AGENT $BATON_TASK_ID $BATON_STORE; cat; echo oops >&2; exit 3",
            ],
            b"from the agent\n",
        );
        assert_eq!(out, "a1 a1 task-1 postgres://secret\nfrom the agent\n");
        assert_eq!(err, "oops\n");
        assert_eq!(code, Some(3));
        // The working folder is the door's, not one outside it the agent named ("/").
        let (out, _, _) = knock(&door, &["-c", "pwd"], b"");
        assert_eq!(
            out.trim(),
            std::fs::canonicalize(dir.path()).unwrap().to_str().unwrap()
        );
        door.close();
    }

    #[test]
    fn a_knock_that_is_not_json_is_told_so_and_closing_ends_what_still_runs() {
        let dir = tempfile::tempdir().unwrap();
        let (door, _) = door_of_sh(dir.path());
        let mut stream = UnixStream::connect(door.dir().join(SOCKET)).unwrap();
        stream.write_all(b"rm -rf /\n").unwrap();
        let (_, err, code) = collect(&mut stream);
        assert!(err.contains("takes a command line as JSON"), "{err}");
        assert_eq!(code, Some(1));

        // A command still running when the door closes is ended, and its knock hears so.
        let mut long = UnixStream::connect(door.dir().join(SOCKET)).unwrap();
        let line = serde_json::to_vec(&DoorRequest {
            argv: vec!["-c".into(), "echo started; exec sleep 600".into()],
            cwd: "/".into(),
        })
        .unwrap();
        long.write_all(&line).unwrap();
        long.write_all(b"\n").unwrap();
        let (kind, bytes) = read_frame(&mut long).unwrap().unwrap();
        assert_eq!((kind, bytes.as_slice()), (STDOUT, &b"started\n"[..]));
        let dir_path = door.dir().to_path_buf();
        door.close();
        let (_, _, code) = collect(&mut long);
        assert_eq!(code, Some(128 + libc::SIGKILL));
        assert!(!dir_path.exists(), "the door's folder is gone");
    }

    #[test]
    fn what_a_command_says_it_refused_is_passed_on_and_its_output_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let (door, refusals) = door_of_sh(dir.path());
        let (_, err, code) = knock(
            &door,
            &[
                "-c",
                "echo 'not yours' >&3; echo \"fd $BATON_DOOR_REPORT\" >&2; exit 1",
            ],
            b"",
        );
        assert_eq!((err.as_str(), code), ("fd 3\n", Some(1)));
        let said = refusals
            .recv_timeout(std::time::Duration::from_secs(30))
            .unwrap();
        assert!(
            said.starts_with("the door refused `baton -c echo"),
            "{said}"
        );
        assert!(said.ends_with(": not yours"), "{said}");
        // A command that refuses nothing adds nothing; one that leaves a process holding the
        // pipe does not hold the knock.
        let (out, _, code) = knock(&door, &["-c", "sleep 60 >/dev/null 2>&1 & echo $!"], b"");
        assert_eq!(code, Some(0));
        let holder = out.trim().parse::<i32>().unwrap();
        assert!(
            Path::new(&format!("/proc/{holder}")).exists(),
            "still holds it"
        );
        // SAFETY: kill only sends a signal, to the process this test started.
        unsafe { libc::kill(holder, libc::SIGKILL) };
        assert!(refusals.try_recv().is_err());
        door.close();
        assert!(refusals.recv().is_err(), "ended with the door");
    }

    #[test]
    fn a_command_runs_where_the_agent_is_only_inside_its_working_folder() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        let real = std::fs::canonicalize(&sub).unwrap();
        assert_eq!(workdir_for(sub.to_str().unwrap(), dir.path()), real);
        assert_eq!(workdir_for("/etc", dir.path()), dir.path());
        assert_eq!(workdir_for("/tmp/gone-nowhere", dir.path()), dir.path());
    }
}
