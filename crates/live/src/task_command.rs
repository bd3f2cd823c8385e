//! Running one task's command for the worker loop: `sh -c COMMAND` in its own process group,
//! the task in environment variables and as JSON on stdin, stdout and stderr passed through
//! while their tails are kept for the report, and a way to stop the whole group.

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::thread::JoinHandle;
use std::time::Duration;

use baton_core::Task;
use baton_git::Worktree;

use crate::error::{LiveError, Result};

/// How much of stdout is kept as the task's result (the end of it).
pub const MAX_OUTPUT_BYTES: usize = 64 * 1024;
/// How much of stderr is kept as a failure reason (the end of it).
pub const MAX_ERROR_BYTES: usize = 4 * 1024;

/// A task's command, started.
pub struct RunningCommand {
    pid: u32,
    exited: Receiver<std::io::Result<ExitStatus>>,
    stdout: JoinHandle<Vec<u8>>,
    stderr: JoinHandle<Vec<u8>>,
}

/// How a command ended, with the tails of what it printed.
pub struct Finished {
    pub status: ExitStatus,
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
    /// Starts `sh -c command` in the project folder (the task's worktree, if it has one). With `echo`, what it prints is passed on
    /// to this process's stdout and stderr as it comes.
    pub fn start(command: &str, env: &TaskEnv<'_>, echo: bool) -> Result<RunningCommand> {
        let spawn_error = |e: std::io::Error| LiveError::Spawn {
            command: command.to_string(),
            message: e.to_string(),
        };
        let mut shell = Command::new("sh");
        shell
            .arg("-c")
            .arg(command)
            .current_dir(env.cwd())
            .envs(env.variables())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // Its own process group, so stopping it reaches everything it started; and it dies
        // with the worker.
        baton_fs::own_group(&mut shell, libc::SIGKILL);
        let mut child: Child = shell.spawn().map_err(spawn_error)?;
        let pid = child.id();
        let mut stdin = child.stdin.take().expect("stdin is piped");
        let input = env.stdin_json();
        // A command that never reads stdin must not block us: write from a thread, and
        // ignore a broken pipe.
        std::thread::spawn(move || {
            let _ = stdin.write_all(&input);
        });
        let stdout = child.stdout.take().expect("stdout is piped");
        let stderr = child.stderr.take().expect("stderr is piped");
        let stdout = std::thread::spawn(move || {
            keep_tail(stdout, MAX_OUTPUT_BYTES, echo.then(std::io::stdout))
        });
        let stderr = std::thread::spawn(move || {
            keep_tail(stderr, MAX_ERROR_BYTES, echo.then(std::io::stderr))
        });
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

    /// Collects what the command printed once it has exited.
    pub fn finish(self, status: ExitStatus) -> Finished {
        let text = |handle: JoinHandle<Vec<u8>>| printable(&handle.join().unwrap_or_default());
        Finished {
            status,
            stdout: text(self.stdout),
            stderr: text(self.stderr),
        }
    }
}

/// Reads `from` to the end, keeping its last `max` bytes and copying everything to `echo`.
fn keep_tail(mut from: impl Read, max: usize, mut echo: Option<impl Write>) -> Vec<u8> {
    let mut tail: VecDeque<u8> = VecDeque::with_capacity(max.min(8192));
    let mut cut = false;
    let mut buffer = [0u8; 8192];
    loop {
        let n = match from.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if let Some(out) = echo.as_mut() {
            let _ = out.write_all(&buffer[..n]);
            let _ = out.flush();
        }
        tail.extend(&buffer[..n]);
        if tail.len() > max {
            tail.drain(..tail.len() - max);
            cut = true;
        }
    }
    let mut kept: Vec<u8> = tail.into();
    if cut {
        // Start at a line boundary so the kept part reads well.
        if let Some(newline) = kept.iter().position(|b| *b == b'\n') {
            kept.drain(..=newline);
        }
        let mut marked = b"[earlier output cut]\n".to_vec();
        marked.extend(kept);
        kept = marked;
    }
    kept
}

/// Text fit for `tasks.json` and a result report: valid UTF-8, terminal escape sequences
/// removed, other control characters (but newlines and tabs) replaced.
pub fn printable(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => {
                // CSI sequences (colours, cursor moves): ESC [ parameters final-byte.
                if chars.peek() == Some(&'[') {
                    chars.next();
                    for c in chars.by_ref() {
                        if ('\u{40}'..='\u{7e}').contains(&c) {
                            break;
                        }
                    }
                }
            }
            '\n' | '\t' => out.push(c),
            '\r' => {}
            c if c.is_control() => out.push('?'),
            c => out.push(c),
        }
    }
    out.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printable_strips_colours_and_control_characters() {
        assert_eq!(printable(b"\x1b[32mok\x1b[0m\r\n\x07done\n"), "ok\n?done");
        assert_eq!(printable(b"\xff bytes"), "\u{fffd} bytes");
    }

    #[test]
    fn keep_tail_keeps_the_end_from_a_line_start() {
        let input = (0..100).map(|i| format!("line {i}\n")).collect::<String>();
        let kept = keep_tail(input.as_bytes(), 40, None::<Vec<u8>>);
        let kept = String::from_utf8(kept).unwrap();
        assert!(kept.starts_with("[earlier output cut]\nline 9"), "{kept}");
        assert!(kept.ends_with("line 99\n"));
    }
}
