//! The IPC commands. Every operation of `baton-api`'s catalogue goes through one command,
//! [`operation`], by its catalogue name with its request type, so the desktop, the CLI and MCP
//! cannot drift apart. The others are what is not a catalogue operation: opening a project
//! (folder, database, recent, picked), the notes and results to show, the handoff graph, the
//! window's first view and paint reports, and the browser controls (the same `baton-browser`
//! functions `baton browser …` calls). Errors reach the UI as `{kind, message}`, the message
//! being the library's own (it says what was wrong and what to do).

use std::path::{Path, PathBuf};

use baton_api::{Choice, OpenProject};
use baton_core::{Confinement, ErrorKind};
use baton_folder::FolderStore;
use serde::Serialize;
use tauri::{AppHandle, State};

use crate::session::Session;

/// What the UI gets when a command fails: the same body the CLI prints and MCP tools carry.
pub type CommandError = baton_api::ErrorBody;

type Result<T> = std::result::Result<T, CommandError>;

pub(crate) fn project(session: &State<'_, Session>) -> Result<OpenProject> {
    session.project().ok_or(CommandError {
        kind: ErrorKind::NoProject,
        message: "no project is open: open a folder with .coordination/, or create one".into(),
    })
}

pub use baton_api::open::ProjectInfo;

#[tauri::command]
pub fn project_info(session: State<'_, Session>) -> Option<ProjectInfo> {
    session.project().as_ref().map(OpenProject::info)
}

/// Opens the project at `path` (its folder, or any folder below it): the folder's own tasks,
/// or the database its pointer names, with `password` when the user typed one (used for this
/// connection only; otherwise `PGPASSWORD` or `~/.pgpass`).
#[tauri::command]
pub async fn open_project(
    app: AppHandle,
    path: String,
    password: Option<String>,
) -> Result<ProjectInfo> {
    off_main_thread(move || {
        let dir = PathBuf::from(&path);
        let choice = Choice {
            dir: Some(&dir),
            password: password.as_deref().filter(|p| !p.is_empty()),
            ..Choice::default()
        };
        let project = OpenProject::open(&choice, &dir, baton_core::DEFAULT_LEASE)?;
        opened(&app, project)
    })
    .await
}

/// Points the folder `path` at project `project` in the PostgreSQL database at `url` (as
/// `baton connect` does: the pointer holds the URL without any password) and opens it.
#[tauri::command]
pub async fn connect_database(
    app: AppHandle,
    path: String,
    url: String,
    project: String,
    password: Option<String>,
) -> Result<ProjectInfo> {
    off_main_thread(move || {
        let url = match password.as_deref().filter(|p| !p.is_empty()) {
            Some(password) => baton_api::open::with_password(&url, password),
            None => url,
        };
        let name = Some(project.as_str()).filter(|n| !n.is_empty());
        let (open, _) =
            OpenProject::connect(Path::new(&path), &url, name, baton_core::DEFAULT_LEASE)?;
        opened(&app, open)
    })
    .await
}

/// Remembers and opens `project`. It reads the store, so it runs off the main thread and off
/// the async runtime (a database's client blocks on a runtime of its own).
fn opened(app: &AppHandle, project: OpenProject) -> Result<ProjectInfo> {
    use tauri::Manager;
    crate::recent::remember_opened(app, &project);
    let info = project.info();
    app.state::<Session>().open(app, project)?;
    Ok(info)
}

/// Projects opened before, newest first, each with whether it still has a task store.
#[tauri::command]
pub fn recent_projects(app: AppHandle) -> Vec<crate::recent::RecentProject> {
    crate::recent::of_app(&app)
        .map(|r| r.list())
        .unwrap_or_default()
}

/// Asks for a project folder with the desktop's folder dialog, opened in `start` when that is
/// a folder (what the open screen's field names); `None` when cancelled.
#[tauri::command]
pub async fn pick_folder(app: AppHandle, start: Option<String>) -> Result<Option<String>> {
    use tauri_plugin_dialog::DialogExt;
    off_main_thread(move || {
        let mut dialog = app.dialog().file().set_title("Open a project folder");
        if let Some(start) = start.map(PathBuf::from).filter(|p| p.is_dir()) {
            dialog = dialog.set_directory(start);
        }
        Ok(dialog
            .blocking_pick_folder()
            .map(|folder| folder.to_string()))
    })
    .await
}

/// `baton leader init`: creates `.coordination/` in `path` and opens it.
#[tauri::command]
pub fn leader_init(app: AppHandle, path: String, goal: String) -> Result<ProjectInfo> {
    let project = FolderStore::init(&PathBuf::from(path), &goal, None)?;
    opened(&app, OpenProject::folder(project))
}

/// Runs the operation `name` (a `baton-api` catalogue name, the MCP tool's name) with
/// `request`, and returns its result: the same JSON the CLI prints with `--json`. The UI's
/// calls are typed by the generated `Operations` map (`ui/src/bindings/Operations.ts`).
#[tauri::command]
pub async fn operation(
    session: State<'_, Session>,
    name: String,
    request: serde_json::Value,
) -> Result<Box<serde_json::value::RawValue>> {
    let project = project(&session)?;
    let Some(entry) = baton_api::find(&name) else {
        return Err(CommandError {
            kind: ErrorKind::UnknownTool,
            message: format!("no operation {name:?}"),
        });
    };
    // Off the main thread: operations take the store's lock, and some wait.
    off_main_thread(move || {
        let confinement = Confinement::anywhere(project.local().project_dir());
        entry
            .call_json(&project.window_context(&confinement), request)
            .map_err(|e| e.body())
    })
    .await
}

/// The board (with the landed work when `all`) for a window that holds the board of
/// generation `known`: only what changed since, when it can (`baton_api::board`).
#[tauri::command]
pub async fn board(
    session: State<'_, Session>,
    all: bool,
    known: Option<u64>,
) -> Result<baton_api::board::BoardUpdate> {
    let project = project(&session)?;
    off_main_thread(move || {
        let confinement = Confinement::anywhere(project.local().project_dir());
        project
            .board(&confinement, all, known)
            .map_err(|e| e.body())
    })
    .await
}

/// The master plan (`master-plan.md`).
#[tauri::command]
pub async fn master_plan(session: State<'_, Session>) -> Result<String> {
    let project = project(&session)?;
    off_main_thread(move || Ok(project.tasks.notes()?.master_plan)).await
}

/// The shared findings (`context/discoveries.md`).
#[tauri::command]
pub async fn discoveries(session: State<'_, Session>) -> Result<String> {
    let project = project(&session)?;
    off_main_thread(move || Ok(project.tasks.notes()?.discoveries)).await
}

/// A task's result report (`results/TASK.md`); empty until it is finished.
#[tauri::command]
pub async fn task_result(session: State<'_, Session>, task: String) -> Result<String> {
    let project = project(&session)?;
    off_main_thread(move || Ok(project.tasks.result_report(&task)?)).await
}

/// `baton handoff graph`: invocations, handoffs and parallel runs as a directed graph.
#[tauri::command]
pub async fn handoff_graph(
    session: State<'_, Session>,
) -> Result<baton_agents::graph::HandoffGraph> {
    let project = project(&session)?;
    off_main_thread(move || Ok(project.handoff_graph()?)).await
}

/// The views the window has.
pub const VIEWS: [&str; 7] = [
    "board", "graph", "agents", "team", "inbox", "review", "browser",
];

/// The view the window opens on: `BATON_DESKTOP_VIEW` (one of [`VIEWS`]), if set.
#[tauri::command]
pub fn initial_view() -> Option<String> {
    std::env::var("BATON_DESKTOP_VIEW")
        .ok()
        .filter(|v| VIEWS.contains(&v.as_str()))
}

/// The UI calls this once, on the frame after it first drew the board (or the Agents view, when
/// it opens on that). With
/// `BATON_DESKTOP_TIMING` set, the time since the process started goes to stderr (for
/// `bench/desktop.rs`).
#[tauri::command]
pub fn board_painted(started: State<'_, crate::Started>) {
    if std::env::var_os("BATON_DESKTOP_TIMING").is_some() {
        eprintln!(
            "baton-desktop: first board paint after {} ms",
            started.0.elapsed().as_millis()
        );
    }
}

/// The UI calls this on the frame after it redrew the board (or the Agents view, when that is
/// shown) for a change from the feed. With
/// `BATON_DESKTOP_TIMING` set, the wall-clock time goes to stderr, so the benchmark can measure
/// from a worker's CLI command to the board showing it.
#[tauri::command]
pub fn board_updated() {
    timing_mark("board updated".into());
}

/// The UI calls this when a view it measures has drawn (`transcript opened: …`, `transcript
/// shows …`, `review opened: …`). With `BATON_DESKTOP_TIMING` set, `what` and the wall-clock
/// time go to stderr for `bench/desktop_views.rs`; otherwise nothing happens.
#[tauri::command]
pub fn timing_mark(what: String) {
    if std::env::var_os("BATON_DESKTOP_TIMING").is_some() {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        eprintln!("baton-desktop: {what} at {} us", now.as_micros());
    }
}

/// Starts a manual UI-test session: clears the run's signal, opens `url` in a visible browser.
#[tauri::command]
pub async fn browser_session_start(
    session: State<'_, Session>,
    sessions: State<'_, crate::browser_session::BrowserSessions>,
    url: String,
    signal: Option<String>,
) -> Result<baton_browser::BrowserRecord> {
    let project = project(&session)?;
    let signal = signal.unwrap_or_else(|| baton_browser::session::DEFAULT_SIGNAL.to_string());
    let sessions = sessions.inner().clone();
    off_main_thread(move || Ok(sessions.start(&project, &url, &signal)?.browser)).await
}

/// Finishes the project's manual session (this app's or the CLI's): writes the signal, stops
/// the browser (which may take a few seconds to end, so off the main thread).
#[tauri::command]
pub async fn browser_session_finish(
    session: State<'_, Session>,
    sessions: State<'_, crate::browser_session::BrowserSessions>,
) -> Result<()> {
    let project = project(&session)?;
    let sessions = sessions.inner().clone();
    off_main_thread(move || Ok(sessions.finish(&project).map(drop)?)).await
}

/// The project's manual session's browser, if one runs (whichever process started it).
#[tauri::command]
pub fn browser_session(
    session: State<'_, Session>,
    sessions: State<'_, crate::browser_session::BrowserSessions>,
) -> Option<baton_browser::BrowserRecord> {
    let project = session.project()?;
    sessions.current(&project).map(|s| s.browser)
}

/// `baton browser list`: every browser in the project's registry (the MCP proxies' too).
/// Off the main thread: whether each one is alive is asked of its DevTools endpoint.
#[tauri::command]
pub async fn browser_list(
    session: State<'_, Session>,
) -> Result<Vec<baton_browser::ListedBrowser>> {
    let project = project(&session)?;
    off_main_thread(move || Ok(baton_browser::registry::list(project.local())?)).await
}

/// Runs blocking work (a browser control waiting for its page, a store operation) off the main
/// thread, so the window stays responsive meanwhile.
pub(crate) async fn off_main_thread<T: Send + 'static>(
    control: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    tauri::async_runtime::spawn_blocking(control)
        .await
        .map_err(|e| CommandError {
            kind: ErrorKind::Internal,
            message: format!("the command's worker thread stopped: {e}"),
        })?
}

/// `baton browser show PORT`: the page's URL and title.
#[tauri::command]
pub async fn browser_show(port: u16) -> Result<baton_browser::PageState> {
    off_main_thread(move || Ok(baton_browser::page_state(port)?)).await
}

/// `baton browser navigate PORT URL`.
#[tauri::command]
pub async fn browser_navigate(port: u16, url: String) -> Result<baton_browser::PageState> {
    off_main_thread(move || Ok(baton_browser::navigate(port, &url)?)).await
}

/// `baton browser reload PORT`.
#[tauri::command]
pub async fn browser_reload(port: u16) -> Result<baton_browser::PageState> {
    off_main_thread(move || Ok(baton_browser::reload(port)?)).await
}

/// A screenshot as saved, and as a data URL for the window to show.
#[derive(Debug, Serialize, ts_rs::TS)]
pub struct Screenshot {
    pub path: String,
    pub bytes: usize,
    pub data_url: String,
}

/// `baton browser screenshot PORT`: saved in `.coordination/screenshots/` and shown.
#[tauri::command]
pub async fn browser_screenshot(session: State<'_, Session>, port: u16) -> Result<Screenshot> {
    use base64::Engine;
    let project = project(&session)?;
    off_main_thread(move || {
        let saved = baton_browser::save_screenshot(project.local(), port, None)?;
        Ok(Screenshot {
            path: saved.path.display().to_string(),
            bytes: saved.bytes,
            data_url: format!(
                "data:image/png;base64,{}",
                base64::engine::general_purpose::STANDARD.encode(&saved.png)
            ),
        })
    })
    .await
}
