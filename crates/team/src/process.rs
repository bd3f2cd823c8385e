//! One agent process: started in its own process group (so stopping it reaches everything it
//! started), tied to its supervisor's life on Linux (it is killed if the supervisor dies, so a
//! SIGKILLed supervisor leaves no agent running unsupervised), its output read line by line
//! into a bounded channel (an agent that floods its output is slowed down by the pipe, never
//! buffered without end), and each line cut to [`MAX_LINE`].

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Child, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, SyncSender, channel, sync_channel};
use std::time::{Duration, Instant};

use baton_core::transcript::Stream;
use baton_fs::{ProcessGroup, command_in_own_group};

/// The longest line kept whole; the rest of a longer line is dropped, and it says so.
pub const MAX_LINE: usize = 1024 * 1024;
/// Lines waiting to be read before the agent's writes block.
const QUEUE: usize = 1024;

/// How long what a command (or an agent) printed is still read after it exited and its group
/// was killed. A process that left the group (a session of its own) may hold the output open
/// for ever; it must not hold the attempt, or the check, with it.
pub const DRAIN: Duration = Duration::from_secs(2);

/// What to run.
#[derive(Debug, Clone)]
pub struct Launch {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub workdir: PathBuf,
    pub env: Vec<(String, String)>,
    /// Written to the process's stdin, which is then closed (none: stdin is empty).
    pub stdin: Option<Vec<u8>>,
    /// Variables of `env` (`KEY=VALUE`) that together mark this attempt's processes: what
    /// the agent started outside its process group (Claude Code runs its tools in groups of
    /// their own) is found by them and killed when the agent ends.
    pub marks: Vec<String>,
    /// The sandbox it runs in, when it runs in one (then `program` is the sandbox, and `env`
    /// is its whole environment: nothing of the supervisor's own is inherited).
    pub sandbox: Option<Sandboxed>,
    /// The pids cgroup's `cgroup.procs` the process joins before it runs (a shell writes its
    /// pid there and becomes the program), so everything it starts counts against the
    /// cgroup's limit from its first fork ([`crate::pids_cgroup`]).
    pub cgroup: Option<PathBuf>,
}

/// A launch's sandbox, as a reader is told of it.
#[derive(Debug, Clone)]
pub struct Sandboxed {
    /// The sandbox in words.
    pub summary: String,
    /// The command it runs, as it was given: its program and arguments.
    pub shown: (String, Vec<String>),
}

/// What joins a process to its cgroup and then becomes the program: `sh -c ENTER PROCS
/// PROGRAM ARGS…`. Exit 126 when it cannot join (the supervisor reads it as an agent that
/// could not start), rather than run without its limit.
const ENTER: &str = "echo $$ > \"$0\" || { echo \"baton: cannot join the process limit's cgroup $0\" >&2; exit 126; }; exec \"$@\"";

impl Launch {
    /// The program to spawn and its arguments: the launch's own, or, with a cgroup to join
    /// first, the shell that joins it and becomes the launch's program.
    pub fn entry(&self) -> (PathBuf, Vec<String>) {
        match &self.cgroup {
            None => (self.program.clone(), self.args.clone()),
            Some(procs) => {
                let mut args = vec![
                    "-c".to_string(),
                    ENTER.to_string(),
                    procs.display().to_string(),
                    self.program.display().to_string(),
                ];
                args.extend(self.args.iter().cloned());
                (PathBuf::from("sh"), args)
            }
        }
    }

    /// The agent's command line, for people (the prompt is shortened; a sandbox's own options
    /// are left out, [`Launch::sandbox`] says it).
    pub fn describe(&self) -> String {
        let (program, args) = match &self.sandbox {
            Some(sandboxed) => (sandboxed.shown.0.clone(), &sandboxed.shown.1[..]),
            None => (self.program.display().to_string(), &self.args[..]),
        };
        let mut words = vec![program];
        for arg in args {
            let mut arg = arg.replace('\n', " ");
            if arg.len() > 60 {
                arg = format!("{}…", baton_core::text::prefix(&arg, 57));
            }
            if arg.contains(' ') || arg.is_empty() {
                arg = format!("'{arg}'");
            }
            words.push(arg);
        }
        words.join(" ")
    }
}

/// What comes out of a running agent.
#[derive(Debug)]
pub enum Output {
    Line(Stream, String),
    /// Something the supervisor's side has to say about the attempt while it runs (what its
    /// door refused).
    Note(String),
    Exited(std::io::Result<ExitStatus>),
}

/// What reaches an attempt besides its agent's output, in the order it happened: notes from
/// the supervisor's side (what its door refused), then the agent's end.
#[derive(Debug)]
pub enum ProcessEvent {
    Note(String),
    Exited(std::io::Result<ExitStatus>),
}

/// A channel of asides: the sender for whoever has notes to say, the receiver the attempt's.
pub type ProcessEvents = (Sender<ProcessEvent>, Receiver<ProcessEvent>);

/// A started agent process.
pub struct AgentProcess {
    pub pid: u32,
    output: Receiver<Output>,
    started: Instant,
    exited: bool,
}

impl AgentProcess {
    #[cfg(test)]
    pub fn start(launch: &Launch) -> std::io::Result<AgentProcess> {
        AgentProcess::start_hearing(launch, None)
    }

    /// [`Self::start`], with the notes said on `notes` (what the attempt's door refused)
    /// arriving through [`Self::next`] as [`Output::Note`] among the output, each before the
    /// agent's exit when said before it.
    pub fn start_hearing(
        launch: &Launch,
        notes: Option<ProcessEvents>,
    ) -> std::io::Result<AgentProcess> {
        let mut child = spawn_in_own_group(launch)?;
        let pid = child.id();
        // Killed with its group should this supervisor die without stopping it.
        baton_fs::warden::watch(ProcessGroup::led_by(pid));
        if let Some(bytes) = launch.stdin.clone() {
            let mut stdin = child.stdin.take().expect("stdin is piped");
            // A command that never reads stdin must not block the supervisor.
            std::thread::spawn(move || {
                let _ = stdin.write_all(&bytes);
            });
        }
        let (tx, output) = sync_channel(QUEUE);
        // Process events (notes, then the end) are passed on in the order they were said: a
        // note said before the agent exited comes before its exit.
        let (tell, heard) = notes.unwrap_or_else(channel);
        let to = tx.clone();
        std::thread::spawn(move || pass_on(heard, &to));
        let stdout = child.stdout.take().expect("stdout is piped");
        let stderr = child.stderr.take().expect("stderr is piped");
        let (ended_tx, ended) = channel();
        spawn_reader(stdout, Stream::Stdout, tx.clone(), ended_tx.clone());
        spawn_reader(stderr, Stream::Stderr, tx, ended_tx);
        let marks = launch.marks.clone();
        std::thread::spawn(move || wait_for_the_end(child, &marks, &ended, &tell));
        Ok(AgentProcess {
            pid,
            output,
            started: Instant::now(),
            exited: false,
        })
    }

    /// The next output within `timeout`; `None` if there was none (or the process has been
    /// seen to exit already).
    pub fn next(&mut self, timeout: Duration) -> Option<Output> {
        if self.exited {
            return None;
        }
        match self.output.recv_timeout(timeout) {
            Ok(output) => {
                self.exited = matches!(output, Output::Exited(_));
                Some(output)
            }
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => {
                self.exited = true;
                Some(Output::Exited(Err(std::io::Error::other(
                    "the agent's output stopped without an exit status",
                ))))
            }
        }
    }

    pub fn running_for(&self) -> Duration {
        self.started.elapsed()
    }

    /// Asks the whole group to stop (SIGTERM), then kills it (SIGKILL) after `grace`.
    /// Output keeps arriving through [`Self::next`] until the exit.
    pub fn stop(&self, grace: Duration) {
        let group = ProcessGroup::led_by(self.pid);
        std::thread::spawn(move || group.terminate(grace, || false));
    }
}

/// Kills every process of this user whose environment holds all of `marks` (none when
/// `marks` is empty); returns how many. Reads `/proc`, so it finds processes whatever group
/// or parent they have now (an agent's tool left running after the agent was killed).
pub fn kill_marked(marks: &[String]) -> usize {
    if marks.is_empty() {
        return 0;
    }
    let me = std::process::id();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    let mut killed = 0;
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == me {
            continue;
        }
        // Another user's process cannot be read, and is not ours to kill.
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        let vars: Vec<&[u8]> = environ.split(|b| *b == 0).collect();
        if marks.iter().all(|m| vars.contains(&m.as_bytes()))
            && let Ok(pid) = libc::pid_t::try_from(pid)
        {
            // SAFETY: kill only sends a signal, to a process carrying this attempt's marks.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
            killed += 1;
        }
    }
    killed
}

/// `launch`'s program started in a process group of its own, its output piped: looked up in
/// the PATH the agent is given; a sandbox's bubblewrap (its program when no cgroup is joined
/// first) runs with --die-with-parent and sees to its death itself, and gets no variable it was
/// not given.
fn spawn_in_own_group(launch: &Launch) -> std::io::Result<Child> {
    let path = launch
        .env
        .iter()
        .rev()
        .find(|(key, _)| key == "PATH")
        .map(|(_, value)| std::ffi::OsStr::new(value.as_str()));
    let (program, args) = launch.entry();
    let mut command = match launch.sandbox.is_some() && launch.cgroup.is_none() {
        true => baton_fs::command_in_own_group_ending_itself(&program),
        false => command_in_own_group(&program, path, libc::SIGKILL),
    };
    if launch.sandbox.is_some() {
        command.env_clear();
    }
    command
        .args(&args)
        .current_dir(&launch.workdir)
        .envs(launch.env.iter().map(|(k, v)| (k, v)))
        .stdin(if launch.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command.spawn()
}

/// Passes the process's events on as output until its end has been passed on.
fn pass_on(heard: Receiver<ProcessEvent>, to: &SyncSender<Output>) {
    for event in heard {
        match event {
            ProcessEvent::Note(note) => {
                if to.send(Output::Note(note)).is_err() {
                    return;
                }
            }
            ProcessEvent::Exited(status) => {
                let _ = to.send(Output::Exited(status));
                return;
            }
        }
    }
}

/// Waits for `child` to exit, then tells its end once what it printed has been read.
/// Everything the agent printed comes before its exit. Its own children may hold the pipes
/// open after it exits: the group is killed then (and what `marks` names), and what it printed
/// is read until both pipes end, or for DRAIN at most (a process that left the group may hold
/// them for ever; the attempt ends with the agent all the same).
fn wait_for_the_end(
    mut child: Child,
    marks: &[String],
    ended: &Receiver<()>,
    tell: &Sender<ProcessEvent>,
) {
    let pid = child.id();
    let status = child.wait();
    ProcessGroup::led_by(pid).kill();
    baton_fs::warden::forget(ProcessGroup::led_by(pid));
    kill_marked(marks);
    let until = Instant::now() + DRAIN;
    for _ in 0..2 {
        let left = until.saturating_duration_since(Instant::now());
        if ended.recv_timeout(left).is_err() {
            break;
        }
    }
    let _ = tell.send(ProcessEvent::Exited(status));
}

/// Reads `from` line by line into `tx` on a thread of its own, and says on `ended` when it
/// stops.
fn spawn_reader(
    mut from: impl Read + Send + 'static,
    stream: Stream,
    tx: SyncSender<Output>,
    ended: Sender<()>,
) {
    std::thread::spawn(move || {
        // Said however the reading ends.
        let _ended = Ended(ended);
        let mut line: Vec<u8> = Vec::new();
        let mut dropped = 0usize;
        let mut buffer = [0u8; 16 * 1024];
        let send = |line: &mut Vec<u8>, dropped: &mut usize| {
            let mut text = String::from_utf8_lossy(line).into_owned();
            if *dropped > 0 {
                text.push_str(&format!(" [… {dropped} more bytes of this line dropped]"));
            }
            line.clear();
            *dropped = 0;
            tx.send(Output::Line(stream, text)).is_ok()
        };
        loop {
            let n = match from.read(&mut buffer) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            let mut rest = &buffer[..n];
            while let Some(newline) = rest.iter().position(|b| *b == b'\n') {
                keep(&mut line, &mut dropped, &rest[..newline]);
                if !send(&mut line, &mut dropped) {
                    return;
                }
                rest = &rest[newline + 1..];
            }
            keep(&mut line, &mut dropped, rest);
        }
        if !line.is_empty() || dropped > 0 {
            send(&mut line, &mut dropped);
        }
    });
}

/// Tells the waiter that a reader ended, when dropped.
struct Ended(Sender<()>);

impl Drop for Ended {
    fn drop(&mut self) {
        let _ = self.0.send(());
    }
}

/// Adds `bytes` to the line being read, keeping at most [`MAX_LINE`] of it.
fn keep(line: &mut Vec<u8>, dropped: &mut usize, bytes: &[u8]) {
    let room = MAX_LINE.saturating_sub(line.len());
    let taken = bytes.len().min(room);
    line.extend_from_slice(&bytes[..taken]);
    *dropped += bytes.len() - taken;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Launch {
        Launch {
            program: "sh".into(),
            args: vec!["-c".into(), script.into()],
            workdir: std::env::temp_dir(),
            env: vec![],
            stdin: None,
            marks: vec![],
            sandbox: None,
            cgroup: None,
        }
    }

    fn collect(mut process: AgentProcess) -> (Vec<(Stream, String)>, ExitStatus) {
        let mut lines = Vec::new();
        loop {
            match process.next(Duration::from_secs(30)) {
                Some(Output::Line(stream, text)) => lines.push((stream, text)),
                Some(Output::Exited(status)) => return (lines, status.unwrap()),
                Some(Output::Note(note)) => lines.push((Stream::Stdout, format!("note: {note}"))),
                None => panic!("no output within 30 s"),
            }
        }
    }

    #[test]
    fn notes_heard_arrive_among_the_output() {
        let dir = tempfile::tempdir().unwrap();
        let go = dir.path().join("go");
        // The agent ends once the test has heard the note.
        let script = format!(
            "while [ ! -e '{}' ]; do sleep 0.05; done; echo ended",
            go.display()
        );
        let (notes, heard) = std::sync::mpsc::channel();
        let mut process =
            AgentProcess::start_hearing(&sh(&script), Some((notes.clone(), heard))).unwrap();
        notes
            .send(ProcessEvent::Note("refused something".into()))
            .unwrap();
        match process.next(Duration::from_secs(30)) {
            Some(Output::Note(note)) => assert_eq!(note, "refused something"),
            _ => panic!("the note first"),
        }
        std::fs::write(&go, "").unwrap();
        drop(notes);
        let (lines, status) = collect(process);
        assert_eq!(lines, vec![(Stream::Stdout, "ended".to_string())]);
        assert!(status.success());
    }

    #[test]
    fn the_attempt_ends_with_the_agent_though_a_detached_child_holds_its_output() {
        let sleeper = crate::exec::tests::Detached::new();
        let script = format!("{}; echo started", sleeper.start());
        // Before, this waited for the sleep: `collect` gives up after 30 s without output.
        let (lines, status) = collect(AgentProcess::start(&sh(&script)).unwrap());
        assert_eq!(lines, [(Stream::Stdout, "started".to_string())]);
        assert!(status.success());
        let left = std::process::Command::new("pgrep")
            .args(["-f", &format!("sleep {}", sleeper.0)])
            .output()
            .unwrap();
        assert!(
            left.status.success(),
            "the detached child was still there, holding the pipe"
        );
    }

    #[test]
    fn lines_of_both_streams_then_the_exit() {
        let process =
            AgentProcess::start(&sh("echo one; echo two >&2; printf three; exit 3")).unwrap();
        let (mut lines, status) = collect(process);
        lines.sort_by(|a, b| a.1.cmp(&b.1));
        assert_eq!(
            lines,
            [
                (Stream::Stdout, "one".to_string()),
                (Stream::Stdout, "three".to_string()),
                (Stream::Stderr, "two".to_string())
            ]
        );
        assert_eq!(status.code(), Some(3));
    }

    #[test]
    fn a_giant_line_is_cut_and_says_so() {
        let script = format!(
            "head -c {} /dev/zero | tr '\\0' x; echo; echo after",
            MAX_LINE + 10
        );
        let (lines, _) = collect(AgentProcess::start(&sh(&script)).unwrap());
        assert!(
            lines[0]
                .1
                .ends_with("[… 10 more bytes of this line dropped]")
        );
        assert_eq!(
            lines[0].1.len(),
            MAX_LINE + " [… 10 more bytes of this line dropped]".len()
        );
        assert_eq!(lines[1].1, "after");
    }

    #[test]
    fn stopping_reaches_the_agents_children_too() {
        let mut process = AgentProcess::start(&sh("sleep 300 & echo started; wait")).unwrap();
        assert!(
            matches!(process.next(Duration::from_secs(30)), Some(Output::Line(_, t)) if t == "started")
        );
        let pid = process.pid;
        process.stop(Duration::from_secs(5));
        let (_, status) = collect(process);
        assert!(status.code().is_none(), "killed by a signal: {status:?}");
        // Killed with the group; reaped by whoever adopted it, soon.
        let deadline = Instant::now() + Duration::from_secs(10);
        while ProcessGroup::led_by(pid).alive() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(
            !ProcessGroup::led_by(pid).alive(),
            "the background sleep is gone too"
        );
    }
}

#[cfg(test)]
mod marked {
    use super::*;

    #[test]
    fn a_marked_process_outside_the_group_is_killed_when_the_agent_ends() {
        let mark = format!("BATON_ATTEMPT=test-{}/1", std::process::id());
        let (key, value) = mark.split_once('=').unwrap();
        // The agent starts a child in a session (and group) of its own, then exits.
        let launch = Launch {
            program: "sh".into(),
            args: vec!["-c".into(), "setsid sleep 617 & echo $!".into()],
            workdir: std::env::temp_dir(),
            env: vec![(key.into(), value.into())],
            stdin: None,
            marks: vec![mark.clone()],
            sandbox: None,
            cgroup: None,
        };
        let mut process = AgentProcess::start(&launch).unwrap();
        let mut child = None;
        loop {
            match process.next(Duration::from_secs(30)) {
                Some(Output::Line(_, pid)) => child = pid.trim().parse::<u32>().ok(),
                Some(Output::Exited(_)) => break,
                Some(Output::Note(note)) => panic!("no notes were sent: {note}"),
                None => panic!("the agent did not end"),
            }
        }
        let child = child.expect("the child's pid");
        let alive = || std::fs::read(format!("/proc/{child}/cmdline")).is_ok_and(|c| !c.is_empty());
        let deadline = Instant::now() + Duration::from_secs(10);
        while alive() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(!alive(), "the child outside the group was killed");
        assert_eq!(kill_marked(&[mark]), 0, "nothing carries the mark any more");
    }
}
