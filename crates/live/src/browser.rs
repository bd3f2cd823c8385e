//! Browsers for UI-test agents: Debian's Chromium started with its DevTools protocol (CDP) on a
//! loopback port, and a registry of running browsers in `.coordination/browsers/<port>.json`
//! (port, pid, owner, headless or not), so the desktop app, the MCP proxy and other processes
//! can list them and attach.
//!
//! A browser runs in its own process group with a private, temporary profile; stopping it ends
//! the whole group, removes the profile and the registry entry. It is also asked to die with
//! the process that started it, so a killed coordinator leaves no browser behind.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use baton_store::durable::write_atomic;
use baton_store::{Layout, StoreError, Timestamp};
use serde::{Deserialize, Serialize};

use crate::liveness::pid_alive;

/// Where Debian installs Chromium; `BATON_CHROMIUM` overrides it.
pub const DEFAULT_CHROMIUM: &str = "/usr/bin/chromium";
/// How long a launch waits for the DevTools endpoint to answer.
pub const LAUNCH_TIMEOUT: Duration = Duration::from_secs(30);

/// A browser as the registry records it.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BrowserRecord {
    pub port: u16,
    pub pid: u32,
    /// Who started it (an agent, `baton-mcp[PID]`, the desktop app).
    pub owner: String,
    pub headless: bool,
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub started_at: Timestamp,
    /// `http://127.0.0.1:PORT`, what `--cdp-endpoint` options take.
    pub cdp_endpoint: String,
    /// The browser-level WebSocket debugger URL.
    pub websocket_url: String,
}

/// A registry entry with whether its process still runs.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize)]
pub struct ListedBrowser {
    #[serde(flatten)]
    #[cfg_attr(feature = "ts", ts(flatten))]
    pub record: BrowserRecord,
    pub alive: bool,
}

#[derive(Debug, Clone)]
pub struct LaunchOptions {
    pub executable: PathBuf,
    pub port: u16,
    pub headless: bool,
    pub owner: String,
    /// The page to open first.
    pub url: Option<String>,
}

impl LaunchOptions {
    /// Chromium from `BATON_CHROMIUM` or Debian's path, headless, opening nothing.
    pub fn new(port: u16, owner: impl Into<String>) -> LaunchOptions {
        LaunchOptions {
            executable: std::env::var_os("BATON_CHROMIUM")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from(DEFAULT_CHROMIUM)),
            port,
            headless: true,
            owner: owner.into(),
            url: None,
        }
    }
}

/// Why a browser could not be started.
#[derive(Debug, thiserror::Error)]
pub enum BrowserError {
    #[error(
        "cannot start {executable}: {message}. Install Debian's chromium package or set BATON_CHROMIUM"
    )]
    Spawn {
        executable: PathBuf,
        message: String,
    },
    #[error("Chromium exited during start-up ({status}); its last output: {output}")]
    Exited { status: String, output: String },
    #[error("Chromium's DevTools endpoint on 127.0.0.1:{port} did not answer within {seconds} s")]
    NoAnswer { port: u16, seconds: u64 },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A browser this process started. Dropping it stops the browser.
#[derive(Debug)]
pub struct RunningBrowser {
    child: Child,
    record: BrowserRecord,
    profile: tempfile::TempDir,
    registry_file: PathBuf,
}

/// A free loopback port, for a browser's DevTools endpoint.
pub fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?
        .local_addr()?
        .port())
}

pub fn registry_dir(layout: &Layout) -> PathBuf {
    layout.root().join("browsers")
}

/// Every browser in the registry, with whether it still runs.
pub fn list(layout: &Layout) -> Result<Vec<ListedBrowser>, StoreError> {
    Ok(records(layout)?
        .into_iter()
        .map(|record| {
            let alive = pid_alive(record.pid) && cdp_answers(record.port);
            ListedBrowser { record, alive }
        })
        .collect())
}

/// The registry's records as written, without checking that the browsers still run.
pub fn records(layout: &Layout) -> Result<Vec<BrowserRecord>, StoreError> {
    let dir = registry_dir(layout);
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(StoreError::io(dir, e)),
    };
    let mut records = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|x| x != "json") {
            continue;
        }
        let Ok(bytes) = std::fs::read(&path) else {
            continue;
        };
        // A record that does not parse is not a browser anyone can attach to; skip it.
        if let Ok(record) = serde_json::from_slice::<BrowserRecord>(&bytes) {
            records.push(record);
        }
    }
    records.sort_by_key(|r| r.port);
    Ok(records)
}

/// Whether something answers CDP's `/json/version` on `port` right now.
pub fn cdp_answers(port: u16) -> bool {
    version(port, Duration::from_millis(500)).is_some()
}

/// The browser's `/json/version` document, if it answers within `timeout`.
fn version(port: u16, timeout: Duration) -> Option<serde_json::Value> {
    devtools_json(port, "/json/version", timeout)
}

/// A JSON document of the DevTools HTTP endpoint (`/json/version`, `/json/list`), if the
/// browser answers within `timeout`.
pub fn devtools_json(port: u16, path: &str, timeout: Duration) -> Option<serde_json::Value> {
    let mut stream =
        TcpStream::connect_timeout(&(Ipv4Addr::LOCALHOST, port).into(), timeout).ok()?;
    stream.set_read_timeout(Some(timeout)).ok()?;
    stream.set_write_timeout(Some(timeout)).ok()?;
    let request =
        format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).ok()?;
    // Chromium keeps the connection open: read the headers, then exactly Content-Length bytes.
    let mut response = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        let n = stream.read(&mut buffer).ok()?;
        if n == 0 {
            break;
        }
        response.extend_from_slice(&buffer[..n]);
        let text = String::from_utf8_lossy(&response);
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length = head
                .lines()
                .find_map(|l| {
                    let (name, value) = l.split_once(':')?;
                    name.eq_ignore_ascii_case("content-length")
                        .then(|| value.trim().parse::<usize>().ok())?
                })
                .unwrap_or(usize::MAX);
            if body.len() >= length {
                return serde_json::from_str(&body[..length]).ok();
            }
        }
        if response.len() > 1024 * 1024 {
            return None;
        }
    }
    let text = String::from_utf8_lossy(&response);
    serde_json::from_str(text.split_once("\r\n\r\n")?.1).ok()
}

impl RunningBrowser {
    /// Starts Chromium as `options` say, waits until its DevTools endpoint answers, and records
    /// it in the registry.
    pub fn launch(
        layout: &Layout,
        options: &LaunchOptions,
    ) -> Result<RunningBrowser, BrowserError> {
        use std::os::unix::process::CommandExt;

        let profile = tempfile::Builder::new()
            .prefix("baton-chromium-")
            .tempdir()
            .map_err(|e| StoreError::io(std::env::temp_dir(), e))?;
        let mut command = Command::new(&options.executable);
        command
            .arg(format!("--remote-debugging-port={}", options.port))
            .arg("--remote-debugging-address=127.0.0.1")
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .args([
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-quic",
                "--disable-gpu",
            ]);
        if options.headless {
            command.arg("--headless=new");
        }
        // SAFETY: geteuid has no preconditions. Chromium refuses to run as root without this.
        if unsafe { libc::geteuid() } == 0 {
            command.arg("--no-sandbox");
        }
        command.arg(options.url.as_deref().unwrap_or("about:blank"));
        command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .process_group(0);
        // SAFETY: only async-signal-safe calls between fork and exec: prctl.
        unsafe {
            command.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
                Ok(())
            });
        }
        let mut child = command.spawn().map_err(|e| BrowserError::Spawn {
            executable: options.executable.clone(),
            message: e.to_string(),
        })?;
        let stderr = child.stderr.take().expect("stderr is piped");
        let output = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let sink = output.clone();
        std::thread::spawn(move || {
            // Keep the tail of Chromium's chatter for error messages; never block it.
            let mut reader = std::io::BufReader::new(stderr);
            let mut buffer = [0u8; 4096];
            while let Ok(n) = reader.read(&mut buffer) {
                if n == 0 {
                    break;
                }
                let mut kept = sink.lock().expect("output lock");
                kept.push_str(&String::from_utf8_lossy(&buffer[..n]));
                let excess = kept.len().saturating_sub(2000);
                if excess > 0 {
                    let cut = kept
                        .char_indices()
                        .map(|(i, _)| i)
                        .find(|i| *i >= excess)
                        .unwrap_or(0);
                    kept.drain(..cut);
                }
            }
        });

        let deadline = Instant::now() + LAUNCH_TIMEOUT;
        let websocket_url = loop {
            if let Some(status) = child.try_wait().ok().flatten() {
                let output = output.lock().expect("output lock").trim().to_string();
                return Err(BrowserError::Exited {
                    status: status.to_string(),
                    output,
                });
            }
            if let Some(version) = version(options.port, Duration::from_millis(200)) {
                break version["webSocketDebuggerUrl"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string();
            }
            if Instant::now() >= deadline {
                kill_group(&mut child);
                return Err(BrowserError::NoAnswer {
                    port: options.port,
                    seconds: LAUNCH_TIMEOUT.as_secs(),
                });
            }
            std::thread::sleep(Duration::from_millis(20)); // retry until the deadline
        };
        let record = BrowserRecord {
            port: options.port,
            pid: child.id(),
            owner: options.owner.clone(),
            headless: options.headless,
            started_at: Timestamp::now(),
            cdp_endpoint: format!("http://127.0.0.1:{}", options.port),
            websocket_url,
        };
        let dir = registry_dir(layout);
        std::fs::create_dir_all(&dir).map_err(|e| StoreError::io(&dir, e))?;
        let registry_file = dir.join(format!("{}.json", options.port));
        let mut bytes = serde_json::to_vec_pretty(&record).expect("serialises");
        bytes.push(b'\n');
        if let Err(e) = write_atomic(&registry_file, &bytes) {
            kill_group(&mut child);
            return Err(e.into());
        }
        Ok(RunningBrowser {
            child,
            record,
            profile,
            registry_file,
        })
    }

    pub fn record(&self) -> &BrowserRecord {
        &self.record
    }

    /// Whether the browser process still runs and answers.
    pub fn is_alive(&mut self) -> bool {
        self.is_process_running() && cdp_answers(self.record.port)
    }

    /// Whether the browser process still runs (a cheap check, no network).
    pub fn is_process_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    pub fn profile_dir(&self) -> &Path {
        self.profile.path()
    }

    /// Stops the browser (its whole process group), removes its profile and registry entry.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        kill_group(&mut self.child);
        let _ = std::fs::remove_file(&self.registry_file);
    }
}

impl Drop for RunningBrowser {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// SIGTERM to the group, SIGKILL if it lingers, then reap.
fn kill_group(child: &mut Child) {
    let Ok(pid) = libc::pid_t::try_from(child.id()) else {
        return;
    };
    if matches!(child.try_wait(), Ok(Some(_))) {
        // Its renderers may outlive it; end the group anyway.
        unsafe { libc::killpg(pid, libc::SIGKILL) };
        return;
    }
    // SAFETY: killpg only sends signals to the browser's own group (process_group(0)).
    unsafe { libc::killpg(pid, libc::SIGTERM) };
    let deadline = Instant::now() + Duration::from_secs(3);
    while Instant::now() < deadline {
        if matches!(child.try_wait(), Ok(Some(_))) {
            unsafe { libc::killpg(pid, libc::SIGKILL) };
            return;
        }
        std::thread::sleep(Duration::from_millis(10)); // retry until the deadline
    }
    unsafe { libc::killpg(pid, libc::SIGKILL) };
    let _ = child.wait();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_launched_browser_answers_is_registered_and_leaves_nothing_when_stopped() {
        let dir = tempfile::tempdir().unwrap();
        let project = baton_store::Project::init(dir.path(), "browsers", None).unwrap();
        let layout = project.layout();
        let port = free_port().unwrap();
        let browser = RunningBrowser::launch(layout, &LaunchOptions::new(port, "test")).unwrap();
        let record = browser.record().clone();
        assert!(
            record
                .websocket_url
                .starts_with(&format!("ws://127.0.0.1:{port}/devtools/browser/"))
        );
        let listed = list(layout).unwrap();
        assert_eq!(listed.len(), 1);
        assert!(listed[0].alive);
        assert_eq!(listed[0].record.owner, "test");
        let profile = browser.profile_dir().to_path_buf();
        browser.stop();
        assert!(
            list(layout).unwrap().is_empty(),
            "the registry entry is removed"
        );
        assert!(!profile.exists(), "the temporary profile is removed");
        assert!(!pid_alive(record.pid));
        assert!(!cdp_answers(port));
    }

    #[test]
    fn a_missing_executable_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let project = baton_store::Project::init(dir.path(), "browsers", None).unwrap();
        let mut options = LaunchOptions::new(free_port().unwrap(), "test");
        options.executable = PathBuf::from("/nonexistent/chromium");
        let err = RunningBrowser::launch(project.layout(), &options)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("/nonexistent/chromium") && err.contains("BATON_CHROMIUM"),
            "{err}"
        );
    }
}
