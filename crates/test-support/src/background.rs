//! A `baton` process in the background ([`Background`]): its output read line by line as it
//! comes, waited for by what it prints rather than by time.

use std::process::Command;

use crate::{LONGEST_RUN, PATIENCE, kill};

/// A `baton` process running in the background, its output read line by line as it comes.
pub struct Background {
    child: std::process::Child,
    stdout: std::sync::mpsc::Receiver<String>,
    stderr: std::sync::mpsc::Receiver<String>,
    pub stdout_seen: Vec<String>,
    pub stderr_seen: Vec<String>,
}

fn lines_of(stream: impl std::io::Read + Send + 'static) -> std::sync::mpsc::Receiver<String> {
    use std::io::BufRead;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stream).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

impl Background {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits for a stderr line containing `text` (e.g. the "waiting" line a waiter prints
    /// once its watch is armed); panics after [`PATIENCE`].
    pub fn wait_stderr(&mut self, text: &str) -> String {
        Self::wait_line(&self.stderr, &mut self.stderr_seen, text, "stderr")
    }

    /// Whether the process printed nothing on stdout and kept running for `span` (a waiter
    /// that must not return yet).
    pub fn quiet_for(&mut self, span: std::time::Duration) -> bool {
        match self.stdout.recv_timeout(span) {
            Ok(line) => {
                self.stdout_seen.push(line);
                false
            }
            Err(_) => self.child.try_wait().unwrap().is_none(),
        }
    }

    /// Waits for a stdout line containing `text`.
    pub fn wait_stdout(&mut self, text: &str) -> String {
        Self::wait_line(&self.stdout, &mut self.stdout_seen, text, "stdout")
    }

    fn wait_line(
        rx: &std::sync::mpsc::Receiver<String>,
        seen: &mut Vec<String>,
        text: &str,
        which: &str,
    ) -> String {
        let deadline = std::time::Instant::now() + PATIENCE;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match rx.recv_timeout(left) {
                Ok(line) => {
                    seen.push(line.clone());
                    if line.contains(text) {
                        return line;
                    }
                }
                Err(_) => panic!("no {which} line with {text:?}; saw {seen:#?}"),
            }
        }
    }

    /// Waits for the process to exit; returns its exit code and all of its stdout and stderr.
    /// It may run as long as it goes on printing (a team's run is as long as its agents' work):
    /// it panics once it has printed nothing for [`PATIENCE`], or ran [`LONGEST_RUN`] in all.
    pub fn finish(mut self) -> (Option<i32>, String, String) {
        let started = std::time::Instant::now();
        let mut heard_at = started;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            let before = self.stdout_seen.len() + self.stderr_seen.len();
            self.stdout_seen.extend(self.stdout.try_iter());
            self.stderr_seen.extend(self.stderr.try_iter());
            if self.stdout_seen.len() + self.stderr_seen.len() > before {
                heard_at = std::time::Instant::now();
            }
            assert!(
                heard_at.elapsed() < PATIENCE && started.elapsed() < LONGEST_RUN,
                "baton did not exit ({:.0} s, the last {:.0} s silent); stdout so far {:#?}\n\
                 stderr so far {:#?}",
                started.elapsed().as_secs_f64(),
                heard_at.elapsed().as_secs_f64(),
                self.stdout_seen,
                self.stderr_seen
            );
            std::thread::sleep(std::time::Duration::from_millis(5));
        };
        let collect = |rx: &std::sync::mpsc::Receiver<String>, seen: &[String]| {
            let mut all = seen.to_vec();
            all.extend(rx.iter());
            all.join("\n")
        };
        let stdout = collect(&self.stdout, &self.stdout_seen);
        let stderr = collect(&self.stderr, &self.stderr_seen);
        (status.code(), stdout, stderr)
    }

    /// Sends a signal (e.g. libc SIGINT = 2) to the process.
    pub fn signal(&self, signal: &str) {
        kill(self.child.id(), signal);
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Background {
    /// Starts `command` (stdout and stderr piped) in the background.
    pub fn from_command(mut command: Command) -> Background {
        let mut child = command
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = lines_of(child.stdout.take().unwrap());
        let stderr = lines_of(child.stderr.take().unwrap());
        Background {
            child,
            stdout,
            stderr,
            stdout_seen: Vec::new(),
            stderr_seen: Vec::new(),
        }
    }
}
