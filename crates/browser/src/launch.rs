//! Launching Chromium for a UI-test agent or a manual session: Debian's Chromium started with
//! its DevTools protocol (CDP) on a loopback port and recorded in the registry.
//!
//! A browser runs in its own process group with a private, temporary profile; stopping it ends
//! the whole group, removes the profile and the registry entry. It is also asked to die with
//! the process that started it, so a killed coordinator leaves no browser behind.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use baton_core::{Layout, StoreError, Timestamp};
use baton_fs::write_atomic;

use crate::registry::{BrowserRecord, cdp_answers, registry_dir, version};

/// Where Debian installs Chromium; `BATON_CHROMIUM` overrides it.
pub const DEFAULT_CHROMIUM: &str = "/usr/bin/chromium";
/// How long a launch waits for the DevTools endpoint to answer.
pub const LAUNCH_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Debug, Clone)]
pub struct LaunchOptions {
    pub executable: PathBuf,
    pub port: u16,
    pub headless: bool,
    pub owner: String,
    /// The page to open first.
    pub url: Option<String>,
    /// It runs inside an agent's sandbox (bubblewrap), which is its sandbox: Chromium's own
    /// needs namespaces a sandbox does not give, so it runs without (`--no-sandbox`).
    pub in_sandbox: bool,
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
            in_sandbox: false,
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

impl From<baton_fs::FileError> for BrowserError {
    fn from(e: baton_fs::FileError) -> Self {
        BrowserError::Store(e.into())
    }
}

impl BrowserError {
    /// A stable name for scripts and the UI.
    pub fn kind(&self) -> baton_core::ErrorKind {
        use baton_core::ErrorKind;
        match self {
            BrowserError::Spawn { .. } => ErrorKind::Spawn,
            BrowserError::Exited { .. } => ErrorKind::BrowserError,
            BrowserError::NoAnswer { .. } => ErrorKind::Timeout,
            BrowserError::Store(e) => e.kind(),
        }
    }
}

/// A browser this process started. Dropping it stops the browser.
#[derive(Debug)]
pub struct RunningBrowser {
    child: Child,
    record: BrowserRecord,
    profile: tempfile::TempDir,
    registry_file: PathBuf,
    /// Keeps the thread that started the browser alive (see [`spawn_kept`]); dropped last.
    _keeper: mpsc::Sender<()>,
}

/// Starts `command` from a thread of its own that lives as long as the returned sender.
/// Chromium is asked to die with its parent, and Linux means the parent *thread*
/// (`PR_SET_PDEATHSIG`): started from a caller's short-lived worker thread (an async runtime's
/// blocking pool retires idle threads after seconds), the browser would be killed with it.
fn spawn_kept(mut command: Command) -> std::io::Result<(Child, mpsc::Sender<()>)> {
    let (spawned_tx, spawned_rx) = mpsc::channel();
    let (keep_tx, keep_rx) = mpsc::channel::<()>();
    std::thread::Builder::new()
        .name("baton-browser".into())
        .spawn(move || {
            let spawned = command.spawn();
            let started = spawned.is_ok();
            let _ = spawned_tx.send(spawned);
            if started {
                let _ = keep_rx.recv(); // returns once the `RunningBrowser` is gone
            }
        })?;
    spawned_rx
        .recv()
        .map_err(|_| std::io::Error::other("the browser's thread stopped"))?
        .map(|child| (child, keep_tx))
}

impl RunningBrowser {
    /// Starts Chromium as `options` say, waits until its DevTools endpoint answers, and records
    /// it in the registry.
    pub fn launch(
        layout: &Layout,
        options: &LaunchOptions,
    ) -> Result<RunningBrowser, BrowserError> {
        let profile = tempfile::Builder::new()
            .prefix("baton-chromium-")
            .tempdir()
            .map_err(|e| StoreError::io(std::env::temp_dir(), e))?;
        // Its own process group (its renderers and helpers join it); it dies with us.
        let mut command = baton_fs::command_in_own_group(&options.executable, None, libc::SIGTERM);
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
        if options.in_sandbox || unsafe { libc::geteuid() } == 0 {
            command.arg("--no-sandbox");
        }
        // A sandbox's /dev is small and its own; shared memory goes to its /tmp instead.
        if options.in_sandbox {
            command.arg("--disable-dev-shm-usage");
        }
        command.arg(options.url.as_deref().unwrap_or("about:blank"));
        command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let (mut child, keeper) = spawn_kept(command).map_err(|e| BrowserError::Spawn {
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
            _keeper: keeper,
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
        remove_lock_folder(self.profile.path());
        let _ = std::fs::remove_file(&self.registry_file);
    }
}

/// Chromium keeps its profile's lock (`SingletonSocket`, `SingletonCookie`) in a folder of its
/// own in the machine's temporary folder (`org.chromium.Chromium.XXXXXX`), linked from the
/// profile, and removes it only when it exits by itself: a browser ended by a signal, as every
/// stop ends it, left one in /tmp. The folder the profile's links name is removed with the
/// profile, and only such a folder (the links are Chromium's, in a profile no one else writes).
fn remove_lock_folder(profile: &Path) {
    for lock in ["SingletonSocket", "SingletonCookie"] {
        let Ok(target) = std::fs::read_link(profile.join(lock)) else {
            continue;
        };
        let Some(folder) = target.parent() else {
            continue;
        };
        let chromiums = folder
            .file_name()
            .and_then(|name| name.to_str())
            .is_some_and(|name| name.starts_with("org.chromium.Chromium."));
        if chromiums && folder.parent() == Some(std::env::temp_dir().as_path()) {
            let _ = std::fs::remove_dir_all(folder);
        }
    }
}

impl Drop for RunningBrowser {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Stops the browser's whole group (SIGTERM, SIGKILL if it lingers), then reaps it.
fn kill_group(child: &mut Child) {
    let group = baton_fs::ProcessGroup::led_by(child.id());
    // Its renderers may outlive it: the group is ended even when the browser has exited.
    group.terminate(Duration::from_secs(3), || {
        matches!(child.try_wait(), Ok(Some(_)))
    });
    let _ = child.wait();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::{free_port, list};
    use baton_fs::pid_alive;

    #[test]
    fn a_launched_browser_answers_is_registered_and_leaves_nothing_when_stopped() {
        let dir = tempfile::tempdir().unwrap();
        let project = baton_folder::FolderStore::init(dir.path(), "browsers", None).unwrap();
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
        // Chromium's lock, in a folder of the machine's temporary folder, linked from the
        // profile.
        let lock = std::fs::read_link(profile.join("SingletonSocket")).unwrap();
        let lock = lock.parent().unwrap().to_path_buf();
        assert!(
            lock.is_dir() && lock.starts_with(std::env::temp_dir()),
            "{lock:?}"
        );
        browser.stop();
        assert!(
            list(layout).unwrap().is_empty(),
            "the registry entry is removed"
        );
        assert!(!profile.exists(), "the temporary profile is removed");
        assert!(
            !lock.exists(),
            "Chromium's lock folder is removed: {lock:?}"
        );
        assert!(!pid_alive(record.pid));
        assert!(!cdp_answers(port));
    }

    #[test]
    fn a_browser_outlives_the_thread_that_launched_it() {
        let dir = tempfile::tempdir().unwrap();
        let project = baton_folder::FolderStore::init(dir.path(), "browsers", None).unwrap();
        let layout = project.layout().clone();
        let port = free_port().unwrap();
        // As an async runtime's blocking pool does: launch on a worker thread that then ends.
        let mut browser = std::thread::spawn(move || {
            RunningBrowser::launch(&layout, &LaunchOptions::new(port, "test")).unwrap()
        })
        .join()
        .unwrap();
        // Had it been tied to that thread, SIGTERM would arrive now and Chromium would exit
        // within moments; watch it for a second (there is no event for "did not die").
        let watch_until = Instant::now() + Duration::from_secs(1);
        while Instant::now() < watch_until {
            assert!(
                browser.is_process_running(),
                "the browser died with its thread"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        assert!(browser.is_alive());
        browser.stop();
    }

    #[test]
    fn a_missing_executable_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let project = baton_folder::FolderStore::init(dir.path(), "browsers", None).unwrap();
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
