//! The tray icon: live counts in its tooltip and menu (and a red icon while any task has
//! failed), the browsers that are open, and items to open the window, start or finish a
//! manual session, and quit. Closing the window keeps the app in the tray, when there is one.

use baton_api::OpenProject;
use baton_core::TaskStatus;
use baton_live::feed::ChangeEvent;
use tauri::image::Image;
use tauri::menu::{Menu, MenuItem, PredefinedMenuItem};
use tauri::tray::{TrayIcon, TrayIconBuilder};
use tauri::{AppHandle, Emitter, Manager, Wry};

pub const TRAY_ID: &str = "baton";
/// Asks the window to show a view (its name as the payload): the questions line opens the
/// Inbox.
pub const OPEN_VIEW_EVENT: &str = "baton-open-view";
/// Asks the window to start a manual session with the URL it shows.
pub const START_SESSION_EVENT: &str = "baton-start-session";

const ICON: &[u8] = include_bytes!("../../icons/tray.png");
const ICON_FAILED: &[u8] = include_bytes!("../../icons/tray-failed.png");

/// The menu items whose text follows the project.
pub struct TrayMenu {
    counts: MenuItem<Wry>,
    agents: MenuItem<Wry>,
    questions: MenuItem<Wry>,
    browsers: MenuItem<Wry>,
    start: MenuItem<Wry>,
    finish: MenuItem<Wry>,
}

/// The tooltip for a board: counts by status.
pub fn summary(count: impl Fn(TaskStatus) -> usize) -> String {
    format!(
        "Baton: {} available, {} in progress, {}",
        count(TaskStatus::Available),
        count(TaskStatus::Claimed) + count(TaskStatus::InProgress),
        baton_core::outcome(&count),
    )
}

/// The agents line: how many are working, and which are stale.
pub fn agents_line(team: &baton_api::agents::Team) -> String {
    use baton_core::team::AgentState;
    if team.agents.is_empty() {
        return "No agents yet".into();
    }
    let working = team
        .agents
        .iter()
        .filter(|a| matches!(a.state, AgentState::Working | AgentState::LeaseRunningOut))
        .count();
    let stale: Vec<&str> = team
        .agents
        .iter()
        .filter(|a| a.state == AgentState::Stale)
        .map(|a| a.name.as_str())
        .collect();
    let mut line = format!("{working} agent(s) working");
    if !stale.is_empty() {
        line.push_str(&format!("; stale: {}", stale.join(", ")));
    }
    line
}

/// The browsers line: how many are open, and which one is the manual session.
pub fn browsers_line(records: &[baton_browser::BrowserRecord], session: Option<u16>) -> String {
    match (records.len(), session) {
        (0, _) => "No browsers open".to_string(),
        (n, Some(port)) => format!("{n} browser(s) open; manual session on :{port}"),
        (n, None) => format!("{n} browser(s) open"),
    }
}

/// Creates the tray icon; `None` (with a warning) where the desktop offers no tray.
pub fn create(app: &AppHandle) -> Option<TrayIcon> {
    let build = || -> tauri::Result<(TrayIcon, TrayMenu)> {
        let counts = MenuItem::with_id(app, "counts", "No project open", false, None::<&str>)?;
        let agents = MenuItem::with_id(app, "agents", "No agents yet", false, None::<&str>)?;
        let questions =
            MenuItem::with_id(app, "questions", questions_line(0), false, None::<&str>)?;
        let browsers = MenuItem::with_id(app, "browsers", "No browsers open", false, None::<&str>)?;
        let open = MenuItem::with_id(app, "open", "Open Baton", true, None::<&str>)?;
        let start = MenuItem::with_id(
            app,
            "start-session",
            "Start manual session",
            true,
            None::<&str>,
        )?;
        let finish = MenuItem::with_id(
            app,
            "finish-session",
            "Finish manual session",
            false,
            None::<&str>,
        )?;
        let quit = MenuItem::with_id(app, "quit", "Quit", true, None::<&str>)?;
        let separator = || PredefinedMenuItem::separator(app);
        let menu = Menu::with_items(
            app,
            &[
                &counts,
                &agents,
                &questions,
                &browsers,
                &separator()?,
                &open,
                &start,
                &finish,
                &separator()?,
                &quit,
            ],
        )?;
        let tray = TrayIconBuilder::with_id(TRAY_ID)
            .icon(Image::from_bytes(ICON)?)
            .tooltip("Baton")
            .menu(&menu)
            .on_menu_event(|app, event| match event.id.as_ref() {
                "open" => show_window(app),
                "questions" => open_view(app, "inbox"),
                "start-session" => {
                    // The window holds the URL to open; it starts the session as its own
                    // button would, so errors show where the lead looks.
                    show_window(app);
                    let _ = app.emit(START_SESSION_EVENT, ());
                }
                "finish-session" => {
                    // Stopping the browser can take seconds: not on the main thread. The menu
                    // follows from the change feed once the browser leaves the registry.
                    let sessions = app
                        .state::<crate::browser_session::BrowserSessions>()
                        .inner()
                        .clone();
                    let Some(project) = app.state::<crate::session::Session>().project() else {
                        return;
                    };
                    std::thread::spawn(move || {
                        if let Err(e) = sessions.finish(&project) {
                            eprintln!("baton-desktop: {e}");
                        }
                    });
                }
                "quit" => app.exit(0),
                _ => {}
            })
            .build(app)?;
        Ok((
            tray,
            TrayMenu {
                counts,
                agents,
                questions,
                browsers,
                start,
                finish,
            },
        ))
    };
    match build() {
        Ok((tray, menu)) => {
            app.manage(menu);
            Some(tray)
        }
        Err(e) => {
            eprintln!("baton-desktop: no tray icon ({e}); closing the window quits");
            None
        }
    }
}

/// Brings the window forward on `view` (the questions line and a question's notification
/// open the Inbox).
pub fn open_view(app: &AppHandle, view: &str) {
    show_window(app);
    let _ = app.emit(OPEN_VIEW_EVENT, view);
}

fn show_window(app: &AppHandle) {
    if let Some(window) = app.get_webview_window("main") {
        let _ = window.show();
        let _ = window.set_focus();
    }
}

/// Follows the change feed: the browsers line when a browser comes or goes, the questions
/// line when a question is asked or settled. (The counts and the agents follow from
/// `team_watch`, which also looks when a lease passes.)
pub struct TrayFollower;

impl crate::session::Follower for TrayFollower {
    fn opened(&self, app: &AppHandle, project: &OpenProject) {
        refresh_browsers(app, project);
        refresh_questions(app, project);
    }

    fn changed(&self, app: &AppHandle, project: &OpenProject, event: &ChangeEvent) {
        match event {
            ChangeEvent::BrowserAdded { .. } | ChangeEvent::BrowserRemoved { .. } => {
                refresh_browsers(app, project)
            }
            ChangeEvent::QuestionAsked { .. } | ChangeEvent::QuestionSettled { .. } => {
                refresh_questions(app, project)
            }
            _ => {}
        }
    }
}

/// Shows `report` (and the team, when known) on the tray, if there is one.
pub fn update(
    app: &AppHandle,
    count: impl Fn(TaskStatus) -> usize,
    team: Option<&baton_api::agents::Team>,
) {
    let Some(tray) = app.tray_by_id(TRAY_ID) else {
        return;
    };
    let counts = summary(&count);
    let agents = team.map(agents_line);
    let tooltip = match &agents {
        Some(agents) => format!("{counts}\n{agents}"),
        None => counts.clone(),
    };
    let _ = tray.set_tooltip(Some(&tooltip));
    if let Some(menu) = app.try_state::<TrayMenu>() {
        let _ = menu.counts.set_text(counts.trim_start_matches("Baton: "));
        if let Some(agents) = &agents {
            let _ = menu.agents.set_text(agents);
        }
    }
    let failed = count(TaskStatus::Failed) > 0;
    if let Ok(icon) = Image::from_bytes(if failed { ICON_FAILED } else { ICON }) {
        let _ = tray.set_icon(Some(icon));
    }
}

/// The menu line for `open` questions waiting for the lead.
pub fn questions_line(open: usize) -> String {
    match open {
        0 => "No questions waiting".to_string(),
        1 => "1 question waiting for you".to_string(),
        n => format!("{n} questions waiting for you"),
    }
}

/// Shows how many of `project`'s questions wait for the lead (clicking opens the window).
pub fn refresh_questions(app: &AppHandle, project: &OpenProject) {
    let Some(menu) = app.try_state::<TrayMenu>() else {
        return;
    };
    let open = baton_core::inbox::questions(&*project.documents, true).map_or(0, |q| q.items.len());
    let _ = menu.questions.set_text(questions_line(open));
    let _ = menu.questions.set_enabled(open > 0);
}

/// Shows `project`'s open browsers and whether a manual session runs.
pub fn refresh_browsers(app: &AppHandle, project: &OpenProject) {
    let Some(menu) = app.try_state::<TrayMenu>() else {
        return;
    };
    let session = baton_browser::session::current(project.local()).map(|s| s.browser.port);
    let records = baton_browser::registry::records(project.local()).unwrap_or_default();
    let _ = menu.browsers.set_text(browsers_line(&records, session));
    let _ = menu.start.set_enabled(session.is_none());
    let _ = menu.finish.set_enabled(session.is_some());
}

#[cfg(test)]
mod tests {
    use super::*;
    use baton_core::TaskStore;

    #[test]
    fn the_questions_line_counts_what_waits() {
        assert_eq!(questions_line(0), "No questions waiting");
        assert_eq!(questions_line(1), "1 question waiting for you");
        assert_eq!(questions_line(3), "3 questions waiting for you");
    }

    #[test]
    fn the_tooltip_counts_tasks_by_state() {
        let dir = tempfile::tempdir().unwrap();
        let project = baton_folder::FolderStore::init(dir.path(), "tray", None).unwrap();
        for d in ["a", "b", "c", "d"] {
            project
                .add_task(baton_core::NewTask {
                    description: d.into(),
                    ..Default::default()
                })
                .unwrap();
        }
        let claim = project
            .claim(&baton_core::ClaimRequest::next("w1"))
            .unwrap()
            .unwrap();
        project.fail("w1", &claim.task.id, "broken").unwrap();
        project
            .claim(&baton_core::ClaimRequest::next("w2"))
            .unwrap();
        let report = project.status().unwrap();
        assert_eq!(
            summary(|status| report.count(status)),
            "Baton: 2 available, 1 in progress, 0 done, 1 failed"
        );
        // A cancelled task is counted as cancelled, not as a failure.
        project.cancel("task-4", Some("not needed")).unwrap();
        let report = project.status().unwrap();
        assert_eq!(
            summary(|status| report.count(status)),
            "Baton: 1 available, 1 in progress, 0 done, 1 failed, 1 cancelled"
        );
    }

    #[test]
    fn the_agents_line_counts_the_working_and_names_the_stale() {
        use baton_core::team::{AgentRow, AgentState};
        let row = |name: &str, state| AgentRow {
            name: name.into(),
            state,
            holds: Vec::new(),
            last_seen: None,
            last_line: None,
            done: 0,
            failed: 0,
        };
        let team = |agents| baton_api::agents::Team {
            agents,
            next_change_at: None,
            at: baton_core::Timestamp::now(),
            spend: None,
        };
        assert_eq!(agents_line(&team(vec![])), "No agents yet");
        assert_eq!(
            agents_line(&team(vec![
                row("a", AgentState::Working),
                row("b", AgentState::LeaseRunningOut),
                row("c", AgentState::Stale),
                row("d", AgentState::Stale),
                row("e", AgentState::Idle),
            ])),
            "2 agent(s) working; stale: c, d"
        );
    }

    #[test]
    fn the_browsers_line_names_the_manual_session() {
        let record = |port| baton_browser::BrowserRecord {
            port,
            pid: 1,
            owner: "x".into(),
            headless: true,
            started_at: baton_core::Timestamp::now(),
            cdp_endpoint: String::new(),
            websocket_url: String::new(),
        };
        assert_eq!(browsers_line(&[], None), "No browsers open");
        assert_eq!(browsers_line(&[record(9222)], None), "1 browser(s) open");
        assert_eq!(
            browsers_line(&[record(9222), record(9333)], Some(9333)),
            "2 browser(s) open; manual session on :9333"
        );
    }
}
