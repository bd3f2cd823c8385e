//! Desktop notifications: the lead hears when a task fails and when the last task finishes,
//! without watching the board. Which changes deserve a notification is decided here, from the
//! change feed's task diffs and the board as it is now; showing it is the notification
//! plugin's job (freedesktop notifications over D-Bus on Linux).

use baton_api::OpenProject;
use baton_core::inbox::{About, Question};
use baton_core::{StatusReport, TaskStatus};
use baton_live::feed::{ChangeEvent, TaskChange, TaskChangeKind};
use tauri::AppHandle;
use tauri_plugin_notification::NotificationExt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    pub title: String,
    pub body: String,
}

/// The status `change` moved its task to, if it moved it (a task added and finished within
/// one burst of writes arrives as added in its last state).
fn moved_to(change: &TaskChange) -> Option<TaskStatus> {
    match &change.kind {
        TaskChangeKind::Status { to, .. } => Some(*to),
        TaskChangeKind::Added { status, .. } => Some(*status),
        _ => None,
    }
}

/// Whether `changes` may call for a notification: only a task that failed or was done does.
/// Most changes (a task added, claimed, started) do not, and the board is not read for them.
pub fn may_notify(changes: &[TaskChange]) -> bool {
    changes
        .iter()
        .any(|c| matches!(moved_to(c), Some(TaskStatus::Failed | TaskStatus::Done)))
}

/// The notifications `changes` call for, given the board after them.
pub fn notices(changes: &[TaskChange], report: &StatusReport) -> Vec<Notice> {
    let mut notices = Vec::new();
    let moved_to = |status: TaskStatus| changes.iter().filter(move |c| moved_to(c) == Some(status));
    for change in moved_to(TaskStatus::Failed) {
        let task = report.tasks.iter().find(|t| t.task.id == change.id);
        let description = task.map(|t| t.task.description.as_str()).unwrap_or("");
        let reason = task
            .and_then(|t| t.task.failure_reason.as_deref())
            .map(|r| format!("\n{}", first_line(r)))
            .unwrap_or_default();
        let by = match &change.kind {
            TaskChangeKind::Status { by: Some(by), .. } => format!(" ({by})"),
            _ => String::new(),
        };
        notices.push(Notice {
            title: format!("Task failed: {}{by}", change.id),
            body: format!("{}{reason}", first_line(description)),
        });
    }
    let unfinished = [
        TaskStatus::Available,
        TaskStatus::Claimed,
        TaskStatus::InProgress,
    ]
    .iter()
    .map(|s| report.count(*s))
    .sum::<usize>();
    if moved_to(TaskStatus::Done).next().is_some() && unfinished == 0 {
        notices.push(Notice {
            title: "All tasks finished".into(),
            body: report.outcome(),
        });
    }
    notices
}

/// Follows the change feed: a task change that calls for a notification shows one.
pub struct Notifier;

impl crate::session::Follower for Notifier {
    fn opened(&self, _app: &AppHandle, _project: &OpenProject) {}

    fn changed(&self, app: &AppHandle, project: &OpenProject, event: &ChangeEvent) {
        if let ChangeEvent::QuestionAsked { question } = event {
            show_opening_inbox(app, question_notice(question));
            return;
        }
        if let ChangeEvent::TeamEnded { ended } = event {
            show(app, &team_notice(ended));
            return;
        }
        let ChangeEvent::TasksChanged { changes } = event else {
            return;
        };
        if !may_notify(changes) {
            return;
        }
        // Read on every task finished: only what changed is parsed again.
        if let Ok(report) = project.tasks.status_again() {
            for notice in notices(changes, &report) {
                show(app, &notice);
            }
        }
    }
}

/// The notification for a team's run that ended.
pub fn team_notice(ended: &baton_core::team_end::TeamEnded) -> Notice {
    Notice {
        title: match ended.all_done {
            true => "The team's run ended: all done".into(),
            false => "The team's run ended: not all done".into(),
        },
        body: ended.headline.clone(),
    }
}

/// The notification for a question (or an approval) an agent waits on.
pub fn question_notice(question: &Question) -> Notice {
    let task = question
        .task
        .as_deref()
        .map(|t| format!(" on {t}"))
        .unwrap_or_default();
    let (title, body) = match &question.about {
        About::Question => (
            format!("{} asks{task}", question.agent),
            first_line(&question.text).to_string(),
        ),
        About::Approval { tool, .. } => (
            format!("{} asks to use {tool}{task}", question.agent),
            first_line(&question.text).to_string(),
        ),
        About::Plan { tasks, .. } => (
            format!(
                "{} asks you to approve its plan ({} tasks)",
                question.agent,
                tasks.len()
            ),
            first_line(&question.text).to_string(),
        ),
        About::Limit { plan, .. } => (
            format!("{} asks to go past a limit of {plan}", question.agent),
            first_line(&question.text).to_string(),
        ),
    };
    Notice {
        title,
        body: format!("{body}\nAnswer: baton answer {} …", question.id),
    }
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("").trim()
}

/// Shows a question's `notice`; on a freedesktop desktop (D-Bus notifications) a click on it
/// opens the Inbox, where the question waits. The notification plugin cannot say when one is
/// clicked, so this one is shown with `notify-rust` (what the plugin uses there) and its
/// "default" action waited for on a thread of its own, until it is clicked or closed.
pub fn show_opening_inbox(app: &AppHandle, notice: Notice) {
    #[cfg(all(unix, not(target_os = "macos")))]
    {
        let app = app.clone();
        std::thread::spawn(move || {
            let shown = notify_rust::Notification::new()
                .appname("Baton")
                .summary(&notice.title)
                .body(&notice.body)
                .action("default", "Open the Inbox")
                .show();
            match shown {
                Ok(handle) => handle.wait_for_action(|action| {
                    if action == "default" {
                        crate::tray::open_view(&app, "inbox");
                    }
                }),
                Err(e) => eprintln!(
                    "baton-desktop: notification not shown ({e}): {}",
                    notice.title
                ),
            }
        });
    }
    #[cfg(not(all(unix, not(target_os = "macos"))))]
    show(app, &notice);
}

/// Shows `notice`; a desktop without a notification service only loses the popup.
pub fn show(app: &AppHandle, notice: &Notice) {
    if let Err(e) = app
        .notification()
        .builder()
        .title(&notice.title)
        .body(&notice.body)
        .show()
    {
        eprintln!(
            "baton-desktop: notification not shown ({e}): {}",
            notice.title
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use baton_core::{NewTask, TaskStore};

    fn status(id: &str, from: TaskStatus, to: TaskStatus, by: &str) -> TaskChange {
        TaskChange {
            id: id.into(),
            kind: TaskChangeKind::Status {
                from,
                to,
                by: Some(by.into()),
            },
        }
    }

    #[test]
    fn a_failure_and_the_last_completion_notify_and_nothing_else_does() {
        let dir = tempfile::tempdir().unwrap();
        let project = baton_folder::FolderStore::init(dir.path(), "notices", None).unwrap();
        for d in ["Write the parser", "Document it"] {
            project
                .add_task(NewTask {
                    description: d.into(),
                    priority: 5,
                    ..Default::default()
                })
                .unwrap();
        }
        let first = project
            .claim(&baton_core::ClaimRequest::next("w1"))
            .unwrap()
            .unwrap()
            .task
            .id;
        project
            .fail("w1", &first, "tests do not compile\nmore detail")
            .unwrap();
        let report = project.status().unwrap();
        let failure = status(&first, TaskStatus::Claimed, TaskStatus::Failed, "w1");
        assert!(may_notify(std::slice::from_ref(&failure)));
        let failed = notices(&[failure], &report);
        assert_eq!(
            failed,
            vec![Notice {
                title: format!("Task failed: {first} (w1)"),
                body: "Write the parser\ntests do not compile".into(),
            }]
        );

        // A claim, a start, or a completion while work remains: no notification.
        let second = project
            .claim(&baton_core::ClaimRequest::next("w2"))
            .unwrap()
            .unwrap()
            .task
            .id;
        let report = project.status().unwrap();
        let claimed = status(&second, TaskStatus::Available, TaskStatus::Claimed, "w2");
        assert!(notices(std::slice::from_ref(&claimed), &report).is_empty());
        // Nor is the board read for it.
        assert!(!may_notify(&[claimed]));

        project.start("w2", &second).unwrap();
        project
            .complete(
                "w2",
                &second,
                baton_core::Completion {
                    output: "Documented".into(),
                    ..Default::default()
                },
            )
            .unwrap();
        let report = project.status().unwrap();
        let done = status(&second, TaskStatus::InProgress, TaskStatus::Done, "w2");
        assert!(may_notify(std::slice::from_ref(&done)));
        assert_eq!(
            notices(std::slice::from_ref(&done), &report),
            vec![Notice {
                title: "All tasks finished".into(),
                body: "1 done, 1 failed".into(),
            }]
        );

        // A task added and completed between two looks at the folder counts as completed.
        let added_done = TaskChange {
            id: second.clone(),
            kind: TaskChangeKind::Added {
                status: TaskStatus::Done,
                description: "Document it".into(),
            },
        };
        assert!(may_notify(std::slice::from_ref(&added_done)));
        assert_eq!(notices(&[added_done], &report).len(), 1);

        // With a task still available, the same completion is not the last.
        project
            .add_task(NewTask {
                description: "Later".into(),
                priority: 5,
                ..Default::default()
            })
            .unwrap();
        assert!(notices(&[done], &project.status().unwrap()).is_empty());
    }
}
