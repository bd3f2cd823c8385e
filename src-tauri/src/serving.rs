//! `baton serve` from the desktop: started for the open project, its address shown, a phone
//! paired, and stopped. The server is the `baton` beside the app (`baton serve --pair none
//! --json`, run in the project's folder, loopback only), so the desktop and the CLI serve the
//! same way; a server the CLI started is shown too (`baton_serve::running`), and stopped only
//! where it was started.
//!
//! The server is started from a thread that lives as long as it does: its parent-death signal
//! follows the thread that started it, and the app's worker threads come and go.

use std::io::{BufRead, BufReader, Read};
use std::process::Stdio;
use std::sync::Mutex;
use std::sync::mpsc;
use std::time::Duration;

use baton_api::OpenProject;
use baton_core::ErrorKind;
use serde::Serialize;
use tauri::State;

use crate::commands::{CommandError, off_main_thread, project};
use crate::session::Session;

type Result<T> = std::result::Result<T, CommandError>;

/// The server this app started, if it runs.
#[derive(Default)]
pub struct Serving {
    ours: Mutex<Option<u32>>,
}

/// Whether the open project is served on this machine, and where.
#[derive(Debug, Serialize, ts_rs::TS)]
pub struct ServeState {
    pub url: Option<String>,
    pub pid: Option<u32>,
    /// Started by this app (which may stop it), rather than by `baton serve` in a terminal.
    pub ours: bool,
}

/// A one-time link that pairs a phone, and its QR code as SVG.
#[derive(Debug, Serialize, ts_rs::TS)]
pub struct Pairing {
    pub link: String,
    pub scope: String,
    pub qr_svg: String,
}

fn state(project: &OpenProject, serving: &Serving) -> ServeState {
    let running = baton_serve::running(project);
    let ours = serving.ours.lock().expect("serving lock");
    ServeState {
        ours: running.as_ref().is_some_and(|r| Some(r.pid) == *ours),
        pid: running.as_ref().map(|r| r.pid),
        url: running.map(|r| r.url),
    }
}

fn failed(message: String) -> CommandError {
    CommandError {
        kind: ErrorKind::Spawn,
        message,
    }
}

#[tauri::command]
pub fn serve_status(
    session: State<'_, Session>,
    serving: State<'_, Serving>,
) -> Result<ServeState> {
    Ok(state(&project(&session)?, &serving))
}

/// Starts `baton serve` for the open project (loopback, no pairing link printed) unless one
/// runs already; its state once it listens.
#[tauri::command]
pub async fn serve_start(
    session: State<'_, Session>,
    serving: State<'_, Serving>,
    listen: Option<String>,
) -> Result<ServeState> {
    let project = project(&session)?;
    if baton_serve::running(&project).is_some() {
        return Ok(state(&project, &serving));
    }
    let dir = project.local().project_dir().to_path_buf();
    let listen = listen.filter(|l| !l.trim().is_empty());
    let started = off_main_thread(move || start(&dir, listen.as_deref())).await?;
    *serving.ours.lock().expect("serving lock") = Some(started);
    Ok(state(&project, &serving))
}

/// Runs the server (on `listen`, else its default) from a thread of its own; its pid once it
/// says where it listens.
fn start(dir: &std::path::Path, listen: Option<&str>) -> Result<u32> {
    let program = baton_team::baton_program();
    let mut command = baton_fs::command_in_own_group(&program, None, libc::SIGTERM);
    command.args(["serve", "--pair", "none", "--json"]);
    if let Some(listen) = listen {
        command.args(["--listen", listen.trim()]);
    }
    command
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("baton-desktop-serve".into())
        .spawn(move || {
            let mut child = match command.spawn() {
                Ok(child) => child,
                Err(e) => {
                    let _ = tx.send(Err(format!("cannot start {}: {e}", program.display())));
                    return;
                }
            };
            let pid = child.id();
            let mut stdout = BufReader::new(child.stdout.take().expect("piped"));
            let mut first = String::new();
            // `--json` prints `{"url": …, "urls": […]}` on one line once it listens.
            while !first.trim_end().ends_with('}') {
                match stdout.read_line(&mut first) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
            }
            if first.contains("\"url\"") {
                let _ = tx.send(Ok(pid));
            } else {
                let mut why = String::new();
                if let Some(mut stderr) = child.stderr.take() {
                    let _ = stderr.read_to_string(&mut why);
                }
                let _ = tx.send(Err(format!("baton serve did not start: {}", why.trim())));
            }
            // Whatever it says later is not read: its stderr and stdout end with it.
            drop(stdout);
            let _ = child.wait();
        })
        .map_err(|e| failed(e.to_string()))?;
    rx.recv_timeout(Duration::from_secs(30))
        .map_err(|_| failed("baton serve did not say where it listens within 30 s".into()))?
        .map_err(failed)
}

/// Stops the server this app started (a server started elsewhere is left alone).
#[tauri::command]
pub async fn serve_stop(
    session: State<'_, Session>,
    serving: State<'_, Serving>,
) -> Result<ServeState> {
    let project = project(&session)?;
    let Some(pid) = serving.ours.lock().expect("serving lock").take() else {
        return Ok(state(&project, &serving));
    };
    let stopped = project.clone();
    off_main_thread(move || {
        let group = baton_fs::ProcessGroup::led_by(pid);
        group.terminate(Duration::from_secs(5), || {
            baton_serve::running(&stopped).is_none()
        });
        Ok(())
    })
    .await?;
    Ok(state(&project, &serving))
}

/// A one-time pairing link for one phone as `scope` (lead or responder), with its QR code.
#[tauri::command]
pub async fn serve_pair(session: State<'_, Session>, scope: String) -> Result<Pairing> {
    let project = project(&session)?;
    off_main_thread(move || {
        let Some(running) = baton_serve::running(&project) else {
            return Err(CommandError {
                kind: ErrorKind::NoSession,
                message: "the project is not served: start serving first".into(),
            });
        };
        let scope = baton_serve::Scope::parse(&scope)?;
        let code = baton_serve::Devices::of(project.local()).new_code(scope)?;
        let link = baton_serve::pairing_link(&running.url, &code);
        Ok(Pairing {
            qr_svg: baton_serve::qr_svg(&link),
            scope: scope.as_str().to_string(),
            link,
        })
    })
    .await
}
