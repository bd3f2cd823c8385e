//! The tray icon: live counts in its tooltip (and a red icon while any task has failed), a menu
//! to open the window or quit. Closing the window keeps the app in the tray, when there is one.

use baton_store::{StatusReport, TaskStatus};
use tauri::image::Image;
use tauri::menu::{Menu, MenuItem};
use tauri::tray::{TrayIcon, TrayIconBuilder};
use tauri::{AppHandle, Manager};

pub const TRAY_ID: &str = "baton";

const ICON: &[u8] = include_bytes!("../../icons/tray.png");
const ICON_FAILED: &[u8] = include_bytes!("../../icons/tray-failed.png");

/// The tooltip for a board: counts by status.
pub fn summary(report: &StatusReport) -> String {
    format!(
        "Baton: {} available, {} in progress, {} done, {} failed",
        report.count(TaskStatus::Available),
        report.count(TaskStatus::Claimed) + report.count(TaskStatus::InProgress),
        report.count(TaskStatus::Done),
        report.count(TaskStatus::Failed) + report.count(TaskStatus::Cancelled),
    )
}

/// Creates the tray icon; `None` (with a warning) where the desktop offers no tray.
pub fn create(app: &AppHandle) -> Option<TrayIcon> {
    let build = || -> tauri::Result<TrayIcon> {
        let open = MenuItem::with_id(app, "open", "Open Baton", true, None::<&str>)?;
        let quit = MenuItem::with_id(app, "quit", "Quit", true, None::<&str>)?;
        let menu = Menu::with_items(app, &[&open, &quit])?;
        TrayIconBuilder::with_id(TRAY_ID)
            .icon(Image::from_bytes(ICON)?)
            .tooltip("Baton")
            .menu(&menu)
            .on_menu_event(|app, event| match event.id.as_ref() {
                "open" => {
                    if let Some(window) = app.get_webview_window("main") {
                        let _ = window.show();
                        let _ = window.set_focus();
                    }
                }
                "quit" => app.exit(0),
                _ => {}
            })
            .build(app)
    };
    match build() {
        Ok(tray) => Some(tray),
        Err(e) => {
            eprintln!("baton-desktop: no tray icon ({e}); closing the window quits");
            None
        }
    }
}

/// Shows `report` on the tray, if there is one.
pub fn update(app: &AppHandle, report: &StatusReport) {
    let Some(tray) = app.tray_by_id(TRAY_ID) else {
        return;
    };
    let _ = tray.set_tooltip(Some(summary(report)));
    let failed = report.count(TaskStatus::Failed) + report.count(TaskStatus::Cancelled) > 0;
    if let Ok(icon) = Image::from_bytes(if failed { ICON_FAILED } else { ICON }) {
        let _ = tray.set_icon(Some(icon));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tooltip_counts_tasks_by_state() {
        let dir = tempfile::tempdir().unwrap();
        let project = baton_store::Project::init(dir.path(), "tray", None).unwrap();
        for d in ["a", "b", "c"] {
            project
                .add_task(baton_store::lifecycle::NewTask {
                    description: d.into(),
                    priority: 5,
                    ..Default::default()
                })
                .unwrap();
        }
        let claim = project.claim("w1").unwrap().unwrap();
        project.fail("w1", &claim.task.id, "broken").unwrap();
        project.claim("w2").unwrap();
        let report = project.status().unwrap();
        assert_eq!(
            summary(&report),
            "Baton: 1 available, 1 in progress, 0 done, 1 failed"
        );
    }
}
