//! A `baton` process that waits (`signal wait`, `worker claim --wait`, `inbox --wait`, `ask`),
//! started and armed: it said on stderr that its wait is in place, so whatever a benchmark does
//! next is what wakes it. The moment of its first line on stdout is when it woke and knew.

#![allow(dead_code)] // each benchmark uses its own share

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

pub struct Waiter {
    pub child: Child,
    first_line: Receiver<Instant>,
}

/// Starts `command` and returns once it says (a stderr line with "waiting") its wait is armed.
pub fn armed(mut command: Command) -> Waiter {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    loop {
        line.clear();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "waiter exited");
        if line.contains("waiting") {
            break;
        }
    }
    // Keep draining stderr so the waiter never blocks on a full pipe.
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let (tx, first_line) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        if stdout.read_line(&mut line).unwrap_or(0) > 0 {
            let _ = tx.send(Instant::now());
        }
        std::io::copy(&mut stdout, &mut std::io::sink())
    });
    Waiter { child, first_line }
}

impl Waiter {
    /// (when it first printed, when it exited); it must end well.
    pub fn finish(mut self) -> (Instant, Instant) {
        let status = self.child.wait().unwrap();
        let exited = Instant::now();
        assert!(status.success(), "waiter failed");
        let answered = self.first_line.recv().expect("waiter printed nothing");
        (answered, exited)
    }

    /// (time to its first output line, time to its exit), both from `started`.
    pub fn finish_from(self, started: Instant) -> (Duration, Duration) {
        let (answered, exited) = self.finish();
        (answered - started, exited - started)
    }
}
