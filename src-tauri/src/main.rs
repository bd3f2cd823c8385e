//! Baton's desktop app: the lead's window onto a project. A thin Tauri shell: every command is
//! one library call (see `commands`), the change feed drives the UI (see `session`), and the
//! web UI in `ui/` renders the board.

#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

mod bindings;
mod browser_session;
mod commands;
mod notices;
mod recent;
mod serving;
mod session;
mod team_watch;
mod tray;

use std::path::PathBuf;

use tauri::Manager;

/// When the process started, for the first-paint figure.
pub struct Started(std::time::Instant);

/// WebKitGTK's accelerated compositing costs about 100 MB of memory for this window (measured
/// by `cargo bench --bench desktop`, see docs/PERFORMANCE.md) and buys nothing a board of
/// cards needs; it is off unless the user asks for it with `WEBKIT_DISABLE_COMPOSITING_MODE=0`.
fn prefer_software_compositing() {
    if std::env::var_os("WEBKIT_DISABLE_COMPOSITING_MODE").is_none() {
        // SAFETY: called first thing in `main`, before any other thread exists.
        unsafe { std::env::set_var("WEBKIT_DISABLE_COMPOSITING_MODE", "1") };
    }
}

fn main() {
    let started = Started(std::time::Instant::now());
    prefer_software_compositing();
    tauri::Builder::default()
        .plugin(tauri_plugin_notification::init())
        .plugin(tauri_plugin_dialog::init())
        .manage(started)
        .manage(browser_session::BrowserSessions::default())
        .manage(serving::Serving::default())
        .manage(session::Session::new(vec![
            std::sync::Arc::new(tray::TrayFollower),
            std::sync::Arc::new(notices::Notifier),
            std::sync::Arc::new(team_watch::TeamWatch::default()),
        ]))
        .setup(|app| {
            let has_tray = tray::create(app.handle()).is_some();
            if has_tray {
                // Closing the window keeps the app in the tray; Quit is in the tray's menu.
                if let Some(window) = app.get_webview_window("main") {
                    let hide = window.clone();
                    window.on_window_event(move |event| {
                        if let tauri::WindowEvent::CloseRequested { api, .. } = event {
                            api.prevent_close();
                            let _ = hide.hide();
                        }
                    });
                }
            }
            // The project: the first argument, then BATON_DIR, then the working directory.
            let arg = std::env::args().nth(1).map(PathBuf::from);
            let dir = arg.or_else(|| std::env::var_os("BATON_DIR").map(PathBuf::from));
            let cwd = std::env::current_dir().unwrap_or_default();
            let choice = baton_api::Choice {
                dir: dir.as_deref(),
                ..baton_api::Choice::default()
            };
            match baton_api::OpenProject::open(&choice, &cwd, baton_core::DEFAULT_LEASE) {
                Ok(project) => {
                    recent::remember_opened(app.handle(), &project);
                    let session = app.state::<session::Session>();
                    if let Err(e) = session.open(app.handle(), project) {
                        eprintln!("baton-desktop: {e}");
                    }
                }
                // No project here is the usual start; anything else is worth saying.
                Err(e) if e.kind() == baton_core::ErrorKind::NotInitialized => {}
                Err(e) => eprintln!("baton-desktop: {e}"),
            }
            Ok(())
        })
        .invoke_handler(tauri::generate_handler![
            commands::project_info,
            commands::open_project,
            commands::connect_database,
            commands::recent_projects,
            commands::pick_folder,
            commands::leader_init,
            commands::operation,
            commands::board,
            commands::master_plan,
            commands::discoveries,
            commands::task_result,
            commands::handoff_graph,
            commands::board_painted,
            commands::initial_view,
            commands::board_updated,
            commands::timing_mark,
            commands::browser_session_start,
            commands::browser_session_finish,
            commands::browser_session,
            commands::browser_list,
            commands::browser_show,
            commands::browser_navigate,
            commands::browser_reload,
            commands::browser_screenshot,
            serving::serve_status,
            serving::serve_start,
            serving::serve_stop,
            serving::serve_pair,
        ])
        .run(tauri::generate_context!())
        .expect("the desktop app failed to start");
}
