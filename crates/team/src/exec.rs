//! A task's command (the `exec` profile's, and the project's check before a merge): `sh -c
//! COMMAND` with the task in environment variables and as JSON on stdin ([`TaskEnv`]), and
//! the ends of what it printed kept within a bound ([`Tail`]). An exec worker runs it as one
//! attempt (`crate::supervision::attempt`); the check runs it to its end or its time limit
//! ([`RunningCommand`]).

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use baton_core::Task;
use baton_core::text::printable;
use baton_git::Worktree;

use crate::error::{Result, TeamError};

/// How much of stdout is kept as the task's result (the end of it).
pub const MAX_OUTPUT_BYTES: usize = 64 * 1024;
/// How much of stderr is kept for a failure reason (the end of it).
pub const MAX_ERROR_BYTES: usize = 4 * 1024;
/// Lines of stderr a failure reason quotes, at most.
const REASON_LINES: usize = 20;
pub use crate::process::DRAIN;

/// A task's command, started.
pub struct RunningCommand {
    pid: u32,
    exited: Receiver<std::io::Result<ExitStatus>>,
    stdout: TailReader,
    stderr: TailReader,
}

/// The tails of what a command printed, once it ended.
pub struct CommandEnded {
    pub stdout: String,
    pub stderr: String,
}

/// The values a command gets about its task.
pub struct TaskEnv<'a> {
    pub agent: &'a str,
    pub task: &'a Task,
    pub project_dir: &'a Path,
    pub result_path: &'a Path,
    /// The task's own worktree, when it has one: the command runs there.
    pub worktree: Option<&'a Worktree>,
}

impl TaskEnv<'_> {
    /// Where the command runs: the task's worktree, or the project folder.
    fn cwd(&self) -> &Path {
        self.worktree
            .map_or(self.project_dir, |w| w.workdir.as_path())
    }

    /// The task in environment variables (`BATON_TASK_ID`, `BATON_WORKTREE`, …).
    pub fn variables(&self) -> Vec<(&'static str, String)> {
        let task = self.task;
        let mut variables = vec![
            ("BATON_AGENT", self.agent.to_string()),
            ("BATON_TASK_ID", task.id.clone()),
            ("BATON_TASK_DESCRIPTION", task.description.clone()),
            ("BATON_TASK_PRIORITY", task.priority.to_string()),
            ("BATON_TASK_FILES", task.context.files.join("\n")),
            ("BATON_TASK_HINTS", task.context.hints.clone()),
            ("BATON_TASK_DEPENDENCIES", task.dependencies.join("\n")),
            ("BATON_TASK_ATTEMPT", task.attempts.to_string()),
            (
                "BATON_TASK_ACCEPTANCE",
                task.acceptance.clone().unwrap_or_default(),
            ),
            (
                "BATON_TASK_KIND",
                match task.kind {
                    baton_core::TaskKind::Work => "work",
                    baton_core::TaskKind::Plan => "plan",
                }
                .to_string(),
            ),
            ("BATON_RESULT_PATH", self.result_path.display().to_string()),
            ("BATON_DIR", self.project_dir.display().to_string()),
        ];
        if let Some(worktree) = self.worktree {
            variables.push(("BATON_WORKTREE", worktree.workdir.display().to_string()));
            variables.push(("BATON_BRANCH", worktree.branch.clone()));
        }
        variables
    }

    /// The task as one line of JSON, with the agent and where its result report goes.
    pub fn stdin_json(&self) -> Vec<u8> {
        let mut value = serde_json::to_value(self.task).expect("tasks serialise");
        value["agent"] = self.agent.into();
        value["result_path"] = self.result_path.display().to_string().into();
        let mut bytes = serde_json::to_vec(&value).expect("JSON serialises");
        bytes.push(b'\n');
        bytes
    }
}

impl RunningCommand {
    /// Starts `sh -c command` in the project folder (the task's worktree, if it has one).
    #[cfg(test)]
    pub fn start(command: &str, env: &TaskEnv<'_>) -> Result<RunningCommand> {
        RunningCommand::start_fed(command, env, None, env.stdin_json())
    }

    /// [`Self::start`], `input` on its stdin (the task as JSON, [`TaskEnv::stdin_json`], or a
    /// judge's diff), its launch given to `wrap` when given (a sandbox's `wrap`: then the
    /// command gets the environment the launch names, not this process's).
    pub fn start_fed(
        command: &str,
        env: &TaskEnv<'_>,
        wrap: Option<&dyn Fn(crate::process::Launch) -> crate::process::Launch>,
        input: Vec<u8>,
    ) -> Result<RunningCommand> {
        let spawn_error = |e: std::io::Error| {
            TeamError::new(
                baton_core::ErrorKind::Spawn,
                format!("cannot run `{command}`: {e}"),
            )
        };
        let launch = crate::process::Launch {
            program: "sh".into(),
            args: vec!["-c".into(), command.into()],
            workdir: env.cwd().to_path_buf(),
            env: env
                .variables()
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
            stdin: None,
            marks: Vec::new(),
            sandbox: None,
            cgroup: None,
        };
        let contained = wrap.is_some();
        let launch = match wrap {
            Some(wrap) => wrap(launch),
            None => launch,
        };
        // Its own process group, so stopping it reaches everything it started; and it dies
        // with this process.
        let (program, args) = launch.entry();
        let mut shell = baton_fs::command_in_own_group(&program, None, libc::SIGKILL);
        if contained {
            shell.env_clear();
        }
        shell
            .args(&args)
            .current_dir(&launch.workdir)
            .envs(launch.env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child: Child = shell.spawn().map_err(spawn_error)?;
        let pid = child.id();
        baton_fs::warden::watch(baton_fs::ProcessGroup::led_by(pid));
        let mut stdin = child.stdin.take().expect("stdin is piped");
        // A command that never reads stdin must not block us: write from a thread, and
        // ignore a broken pipe.
        std::thread::spawn(move || {
            let _ = stdin.write_all(&input);
        });
        let stdout = child.stdout.take().expect("stdout is piped");
        let stderr = child.stderr.take().expect("stderr is piped");
        let stdout = TailReader::start(stdout, MAX_OUTPUT_BYTES);
        let stderr = TailReader::start(stderr, MAX_ERROR_BYTES);
        let (tx, exited) = channel();
        std::thread::spawn(move || {
            let _ = tx.send(child.wait());
        });
        Ok(RunningCommand {
            pid,
            exited,
            stdout,
            stderr,
        })
    }

    /// Waits up to `timeout` for the command to exit; `None` if it is still running.
    pub fn wait_timeout(&self, timeout: Duration) -> Option<std::io::Result<ExitStatus>> {
        self.exited.recv_timeout(timeout).ok()
    }

    /// Asks the command's whole process group to stop (SIGTERM), then kills it (SIGKILL) if
    /// it has not exited within `grace`. Returns its exit status.
    pub fn stop(&self, grace: Duration) -> Option<std::io::Result<ExitStatus>> {
        let mut status = None;
        baton_fs::ProcessGroup::led_by(self.pid).terminate(grace, || {
            if status.is_none() {
                status = self.exited.try_recv().ok();
            }
            status.is_some()
        });
        status.or_else(|| self.wait_timeout(grace))
    }

    /// Collects what the command printed once it has exited: what it left running in its
    /// group is killed, and its output read until it ends or [`DRAIN`] has passed.
    pub fn finish(self) -> CommandEnded {
        baton_fs::ProcessGroup::led_by(self.pid).kill();
        baton_fs::warden::forget(baton_fs::ProcessGroup::led_by(self.pid));
        let until = Instant::now() + DRAIN;
        CommandEnded {
            stdout: self.stdout.text_by(until),
            stderr: self.stderr.text_by(until),
        }
    }
}

/// The end of a stream: its last `max` bytes at most, starting at a line once anything was
/// dropped, so the kept part reads well.
#[derive(Debug)]
pub struct Tail {
    kept: VecDeque<u8>,
    max: usize,
    cut: bool,
}

impl Tail {
    pub fn new(max: usize) -> Tail {
        Tail {
            kept: VecDeque::with_capacity(max.min(8192)),
            max,
            cut: false,
        }
    }

    pub fn push(&mut self, bytes: &[u8]) {
        self.kept.extend(bytes);
        if self.kept.len() > self.max {
            self.kept.drain(..self.kept.len() - self.max);
            self.cut = true;
        }
    }

    /// A line without its newline.
    pub fn push_line(&mut self, line: &str) {
        self.push(line.as_bytes());
        self.push(b"\n");
    }

    /// What was kept, as printable text, marked when the start was cut.
    pub fn text(self) -> String {
        let mut kept: Vec<u8> = self.kept.into();
        if self.cut {
            if let Some(newline) = kept.iter().position(|b| *b == b'\n') {
                kept.drain(..=newline);
            }
            let mut marked = b"[earlier output cut]\n".to_vec();
            marked.extend(kept);
            kept = marked;
        }
        printable(&kept)
    }
}

/// A stream read to its end on a thread of its own, its last bytes kept as they come.
struct TailReader {
    tail: Arc<Mutex<Tail>>,
    ended: Receiver<()>,
}

impl TailReader {
    fn start(mut from: impl Read + Send + 'static, max: usize) -> TailReader {
        let tail = Arc::new(Mutex::new(Tail::new(max)));
        let (ended_tx, ended) = channel();
        let kept = tail.clone();
        std::thread::spawn(move || {
            let mut buffer = [0u8; 8192];
            while let Ok(n @ 1..) = from.read(&mut buffer) {
                kept.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(&buffer[..n]);
            }
            let _ = ended_tx.send(());
        });
        TailReader { tail, ended }
    }

    /// What was read when the stream ended, or at `until` if it had not by then.
    fn text_by(self, until: Instant) -> String {
        let _ = self
            .ended
            .recv_timeout(until.saturating_duration_since(Instant::now()));
        let mut tail = self.tail.lock().unwrap_or_else(|e| e.into_inner());
        std::mem::replace(&mut *tail, Tail::new(0)).text()
    }
}

/// How a command that did not succeed ended, in words, with the last lines of its stderr:
/// the reason its task failed.
pub fn failure_reason(how: &str, stderr: &str) -> String {
    let lines: Vec<&str> = stderr.lines().collect();
    let tail = &lines[lines.len().saturating_sub(REASON_LINES)..];
    if tail.is_empty() {
        how.to_string()
    } else {
        format!("{how}; stderr ends with:\n{}", tail.join("\n"))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Kills, when dropped, the `sleep` a test left in a session of its own.
    pub(crate) struct Detached(pub(crate) String);

    impl Detached {
        /// A `sleep` argument no other test or process uses.
        pub(crate) fn new() -> Detached {
            static MADE: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
            let n = MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            Detached(format!("299.{}{n:03}", std::process::id()))
        }

        /// Shell words that start the sleep in a session of its own, holding the script's
        /// output, and wait until it is there (so killing the script's group cannot reach it).
        pub(crate) fn start(&self) -> String {
            format!(
                "setsid sleep {} & while [ \"$(ps -o sid= -p $! | tr -d ' ')\" != \"$!\" ]; do sleep 0.01; done",
                self.0
            )
        }
    }

    impl Drop for Detached {
        fn drop(&mut self) {
            let _ = std::process::Command::new("pkill")
                .args(["-f", &format!("sleep {}", self.0)])
                .status();
        }
    }

    #[test]
    fn a_tail_keeps_the_end_from_a_line_start() {
        let input = (0..100).map(|i| format!("line {i}\n")).collect::<String>();
        let reader = TailReader::start(std::io::Cursor::new(input.into_bytes()), 40);
        let kept = reader.text_by(Instant::now() + Duration::from_secs(60));
        assert!(kept.starts_with("[earlier output cut]\nline 9"), "{kept}");
        assert!(kept.ends_with("line 99"), "{kept}");
    }

    #[test]
    fn a_check_ends_with_its_command_though_a_detached_child_holds_its_output() {
        let dir = tempfile::tempdir().unwrap();
        let store = baton_folder::FolderStore::init(dir.path(), "checks", None).unwrap();
        let task = baton_core::TaskStore::add_task(
            &store,
            baton_core::NewTask {
                description: "checked".into(),
                ..baton_core::NewTask::default()
            },
        )
        .unwrap();
        let result = dir.path().join("result.md");
        let env = TaskEnv {
            agent: baton_core::LEAD,
            task: &task,
            project_dir: dir.path(),
            result_path: &result,
            worktree: None,
        };
        let sleeper = Detached::new();
        let command = format!("{}; echo checked; echo warned >&2", sleeper.start());
        let running = RunningCommand::start(&command, &env).unwrap();
        let status = running
            .wait_timeout(Duration::from_secs(60))
            .expect("the command exits at once")
            .unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let _ = tx.send(running.finish());
        });
        // Before, finishing waited for the sleep's 299 s.
        let finished = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("finished though the sleep holds the output");
        assert!(status.success());
        assert_eq!(finished.stdout, "checked");
        assert_eq!(finished.stderr, "warned");
    }

    #[test]
    fn a_tail_that_kept_everything_is_not_marked() {
        let mut tail = Tail::new(100);
        tail.push_line("  indented");
        tail.push_line("\u{1b}[31mred\u{1b}[0m");
        assert_eq!(tail.text(), "indented\nred");
    }

    #[test]
    fn a_failure_reason_quotes_the_last_lines_of_stderr() {
        assert_eq!(
            failure_reason("it exited with status 2", ""),
            "it exited with status 2"
        );
        let stderr = (1..=30)
            .map(|i| format!("e{i}"))
            .collect::<Vec<_>>()
            .join("\n");
        let reason = failure_reason("it exited with status 2", &stderr);
        assert!(
            reason.starts_with("it exited with status 2; stderr ends with:\ne11\n"),
            "{reason}"
        );
        assert!(reason.ends_with("e30"), "{reason}");
    }
}
