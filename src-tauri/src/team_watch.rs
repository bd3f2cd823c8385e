//! Follows the team for the tray and notifications: how many agents are working and which are
//! stale, on the tray; a notification when an agent goes stale while holding a task. An agent
//! goes stale with nothing written (its lease just passes), so besides the change feed one
//! thread per open project sleeps until the next moment a row can change
//! (`Team::next_change_at`) and looks again then: no polling. After a change it looks a moment
//! later ([`SETTLE`]), once for every change that came meanwhile.

use std::collections::BTreeSet;
use std::sync::Mutex;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::time::{Duration, Instant};

use baton_api::OpenProject;
use baton_api::agents::{Glance, Team};
use baton_core::team::AgentState;
use baton_core::{Confinement, Timestamp};
use baton_live::feed::ChangeEvent;
use tauri::AppHandle;

use crate::notices::{Notice, show};

/// A stale agent and the task it holds.
type Stale = (String, String);

/// Wakes the open project's watcher on task changes; opening another project ends it.
#[derive(Default)]
pub struct TeamWatch {
    wake: Mutex<Option<Sender<()>>>,
}

impl crate::session::Follower for TeamWatch {
    fn opened(&self, app: &AppHandle, project: &OpenProject) {
        let (tx, rx) = channel();
        // Dropping the previous sender ends the previous project's watcher.
        *self.wake.lock().expect("team watch lock") = Some(tx);
        let (app, project) = (app.clone(), project.clone());
        let spawned = std::thread::Builder::new()
            .name("baton-desktop-team".into())
            .spawn(move || watch(&app, &project, &rx));
        if let Err(e) = spawned {
            eprintln!("baton-desktop: cannot follow the agents ({e})");
        }
    }

    fn changed(&self, _app: &AppHandle, _project: &OpenProject, event: &ChangeEvent) {
        if matches!(event, ChangeEvent::TasksChanged { .. })
            && let Some(wake) = self.wake.lock().expect("team watch lock").as_ref()
        {
            let _ = wake.send(());
        }
    }
}

fn watch(app: &AppHandle, project: &OpenProject, wake: &Receiver<()>) {
    let confinement = Confinement::anywhere(project.local().project_dir());
    // Agents stale when the project was opened were so before: shown, not announced.
    let mut known: Option<BTreeSet<Stale>> = None;
    loop {
        let cx = project.window_context(&confinement);
        let mut next = None;
        // The board is read once for the agents and the counts, on every change to the tasks:
        // only the tasks that changed are parsed again, and none is copied but those agents
        // hold.
        let team = match Glance::read(&cx) {
            Ok(glance) => {
                if let Err(e) = &glance.team {
                    eprintln!("baton-desktop: cannot read the agents ({e})");
                }
                // The counts are shown even when the agents cannot be read.
                crate::tray::update(
                    app,
                    |status| glance.count(status),
                    glance.team.as_ref().ok(),
                );
                glance.team.ok()
            }
            Err(e) => {
                eprintln!("baton-desktop: cannot read the board ({e})");
                None
            }
        };
        if let Some(team) = &team {
            let now = stale_of(team);
            if let Some(before) = &known {
                for notice in went_stale(before, team) {
                    show(app, &notice);
                }
            }
            known = Some(now);
            next = team.next_change_at.map(|at| wait_until(at, team.at));
        }
        let outcome = match next {
            Some(wait) => wake.recv_timeout(wait),
            None => wake.recv().map_err(|_| RecvTimeoutError::Disconnected),
        };
        match outcome {
            Ok(()) => {
                if settle(wake).is_err() {
                    return;
                }
            }
            Err(RecvTimeoutError::Timeout) => while wake.try_recv().is_ok() {},
            Err(RecvTimeoutError::Disconnected) => return,
        }
    }
}

/// How long the tray waits after a change before it reads the board.
const SETTLE: Duration = Duration::from_millis(250);

/// Waits [`SETTLE`] after a change, taking the changes that come meanwhile: the window, which
/// reads the board at the same change, draws first instead of sharing the machine with the
/// tray (on a board of 10,000 tasks, two reads at once each took as long as both in turn),
/// and a burst of changes (a team claiming) is read once. `Err`: the project was closed.
fn settle(wake: &Receiver<()>) -> Result<(), RecvTimeoutError> {
    let until = Instant::now() + SETTLE;
    loop {
        match wake.recv_timeout(until.saturating_duration_since(Instant::now())) {
            Ok(()) => {}
            Err(RecvTimeoutError::Timeout) => return Ok(()),
            Err(disconnected) => return Err(disconnected),
        }
    }
}

/// How long from the store's `now` until `at`, and a little more (so the row has changed).
fn wait_until(at: Timestamp, now: Timestamp) -> Duration {
    at.remaining(now) + Duration::from_millis(50)
}

fn stale_of(team: &Team) -> BTreeSet<Stale> {
    team.agents
        .iter()
        .filter(|a| a.state == AgentState::Stale)
        .filter_map(|a| Some((a.name.clone(), a.holds.first()?.id.clone())))
        .collect()
}

/// The notifications for agents that went stale holding a task since `before`.
pub fn went_stale(before: &BTreeSet<Stale>, team: &Team) -> Vec<Notice> {
    team.agents
        .iter()
        .filter(|a| a.state == AgentState::Stale)
        .filter_map(|a| {
            let task = a.holds.first()?;
            (!before.contains(&(a.name.clone(), task.id.clone()))).then(|| Notice {
                title: format!("Agent stale: {}", a.name),
                body: format!(
                    "Its lease on {} ({}) passed without a heartbeat. Release the task from the \
                     Agents view, or let another worker take it over.",
                    task.id, task.description
                ),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use baton_core::TaskStatus;
    use baton_core::team::{AgentRow, HeldTask};

    fn row(name: &str, state: AgentState, task: Option<&str>) -> AgentRow {
        AgentRow {
            name: name.into(),
            state,
            holds: task
                .map(|id| HeldTask {
                    id: id.into(),
                    description: "Write the parser".into(),
                    status: TaskStatus::InProgress,
                    lease_left_secs: 0,
                })
                .into_iter()
                .collect(),
            last_seen: None,
            last_line: None,
            done: 0,
            failed: 0,
        }
    }

    #[test]
    fn settling_takes_the_changes_that_came_meanwhile_and_ends_with_the_project() {
        let (tx, rx) = channel();
        for _ in 0..3 {
            tx.send(()).unwrap();
        }
        assert_eq!(settle(&rx), Ok(()));
        assert!(rx.try_recv().is_err(), "a change left for another read");
        drop(tx);
        assert_eq!(settle(&rx), Err(RecvTimeoutError::Disconnected));
    }

    #[test]
    fn only_an_agent_newly_stale_with_a_task_is_announced() {
        let team = Team {
            agents: vec![
                row("old", AgentState::Stale, Some("task-1")),
                row("new", AgentState::Stale, Some("task-2")),
                row("busy", AgentState::Working, Some("task-3")),
                row("gone", AgentState::Gone, None),
            ],
            next_change_at: None,
            at: Timestamp::now(),
            spend: None,
        };
        let before: BTreeSet<Stale> = [("old".to_string(), "task-1".to_string())].into();
        let notices = went_stale(&before, &team);
        assert_eq!(notices.len(), 1, "{notices:?}");
        assert_eq!(notices[0].title, "Agent stale: new");
        assert!(notices[0].body.contains("task-2 (Write the parser)"));
        assert_eq!(stale_of(&team).len(), 2);
    }
}
