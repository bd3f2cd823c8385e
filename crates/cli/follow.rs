//! Live views: `leader status --watch` and `logs --follow`. Both notice change by checking the
//! files' size and modification time a few times a second, which works on every file system.

use std::collections::HashMap;
use std::fs;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::time::{Duration, SystemTime};

use baton_store::{LogLine, Project, StoreError, journal};

use crate::render;

const POLL: Duration = Duration::from_millis(100);
/// Redraw at least this often so lease countdowns move.
const REDRAW: Duration = Duration::from_secs(1);

fn fingerprint(path: &Path) -> Option<(SystemTime, u64)> {
    let meta = fs::metadata(path).ok()?;
    Some((meta.modified().ok()?, meta.len()))
}

pub fn watch_status(project: &Project, json: bool) -> Result<(), StoreError> {
    let tasks = project.layout().tasks_file();
    let mut last = None;
    let mut drawn_at = std::time::Instant::now() - REDRAW;
    loop {
        let now = fingerprint(&tasks);
        if now != last || (!json && drawn_at.elapsed() >= REDRAW) {
            let changed = now != last;
            last = now;
            drawn_at = std::time::Instant::now();
            let mut out = std::io::stdout().lock();
            match project.status() {
                Ok(report) if json => {
                    if changed {
                        let _ = writeln!(
                            out,
                            "{}",
                            serde_json::to_string(&report).expect("serialisable")
                        );
                    }
                }
                Ok(report) => {
                    let _ = write!(
                        out,
                        "\x1b[2J\x1b[H{}\n(watching; Ctrl-C to stop)\n",
                        render::status(&report)
                    );
                }
                // A corrupt file is shown, not fatal: someone may be fixing it by hand.
                Err(err) => {
                    let _ = writeln!(out, "baton: {err}");
                }
            }
            let _ = out.flush();
        }
        std::thread::sleep(POLL);
    }
}

pub fn follow_logs(
    project: &Project,
    agent: Option<&str>,
    tail: usize,
    json: bool,
) -> Result<(), StoreError> {
    let print = |l: &LogLine| {
        let mut out = std::io::stdout().lock();
        let text = if json {
            serde_json::to_string(l).expect("serialisable")
        } else {
            render::log_line(l, agent.is_none())
        };
        let _ = writeln!(out, "{text}");
        let _ = out.flush();
    };
    for l in project.logs(agent, tail)? {
        print(&l);
    }
    let layout = project.layout();
    let mut offsets: HashMap<String, u64> = HashMap::new();
    let agents = |known: &HashMap<String, u64>| -> Vec<String> {
        match agent {
            Some(a) => vec![a.to_string()],
            None => journal::agents(layout).unwrap_or_else(|_| known.keys().cloned().collect()),
        }
    };
    for name in agents(&offsets) {
        let len = layout
            .log_file(&name)
            .ok()
            .and_then(|p| fs::metadata(p).ok())
            .map_or(0, |m| m.len());
        offsets.insert(name, len);
    }
    loop {
        for name in agents(&offsets) {
            let Ok(path) = layout.log_file(&name) else {
                continue;
            };
            let offset = offsets.entry(name.clone()).or_insert(0);
            let Ok(mut file) = fs::File::open(&path) else {
                continue;
            };
            let len = file.metadata().map_or(0, |m| m.len());
            if len < *offset {
                *offset = 0; // truncated or replaced: read it from the start
            }
            if len == *offset || file.seek(SeekFrom::Start(*offset)).is_err() {
                continue;
            }
            let mut fresh = String::new();
            if file.read_to_string(&mut fresh).is_err() {
                continue;
            }
            // Only whole lines; a partial last line waits for its newline.
            let complete = fresh.rfind('\n').map_or(0, |i| i + 1);
            for text in fresh[..complete].lines() {
                print(&LogLine {
                    agent: name.clone(),
                    line: text.to_string(),
                });
            }
            *offset += complete as u64;
        }
        std::thread::sleep(POLL);
    }
}
