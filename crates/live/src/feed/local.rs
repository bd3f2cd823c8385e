//! The change feed's view of what stays on this machine whichever store keeps the project:
//! orchestration's files, `HANDOFF.md`, and the browsers registered in `browsers/`. (The
//! project's own areas are the store's: the folder reads its files itself,
//! `baton_core::feed::FileFeed`; a database's rows are compared in `store`.)

use std::collections::BTreeMap;

use baton_core::Layout;
use baton_core::feed::{ChangeEvent, Dirty};
use baton_fs::FileVersion;

/// What the feed last saw on this machine.
#[derive(Debug, Default)]
pub(super) struct LocalState {
    orchestration: BTreeMap<String, Option<FileVersion>>,
    handoff: Option<FileVersion>,
    /// Registered browsers by port: (owner, headless).
    browsers: BTreeMap<u16, (String, bool)>,
}

/// The files of `orchestration/` whose changes the feed reports.
const ORCHESTRATION_FILES: [&str; 3] = ["state.json", "workflows.json", "config.json"];

impl LocalState {
    pub(super) fn read(layout: &Layout) -> LocalState {
        let mut state = LocalState::default();
        let _ = state.update(layout, &Dirty::all()); // the first look sets the baseline, silently
        state
    }

    pub(super) fn update(&mut self, layout: &Layout, dirty: &Dirty) -> Vec<ChangeEvent> {
        let mut events = Vec::new();
        if dirty.orchestration {
            for file in ORCHESTRATION_FILES {
                let seen = self.orchestration.entry(file.to_string()).or_default();
                let path = layout.root().join("orchestration").join(file);
                if baton_fs::rewritten(&path, seen) {
                    events.push(ChangeEvent::OrchestrationChanged {
                        file: file.to_string(),
                    });
                }
            }
        }
        if dirty.handoff
            && baton_fs::rewritten(&layout.root().join("HANDOFF.md"), &mut self.handoff)
        {
            events.push(ChangeEvent::HandoffWritten);
        }
        if dirty.browsers {
            self.update_browsers(layout, &mut events);
        }
        events
    }

    fn update_browsers(&mut self, layout: &Layout, events: &mut Vec<ChangeEvent>) {
        let Ok(records) = baton_browser::registry::records(layout) else {
            return; // an unreadable registry is reported by whoever lists it
        };
        let now: BTreeMap<u16, (String, bool)> = records
            .into_iter()
            .map(|r| (r.port, (r.owner, r.headless)))
            .collect();
        for port in self.browsers.keys().filter(|p| !now.contains_key(p)) {
            events.push(ChangeEvent::BrowserRemoved { port: *port });
        }
        for (port, (owner, headless)) in &now {
            if !self.browsers.contains_key(port) {
                events.push(ChangeEvent::BrowserAdded {
                    port: *port,
                    owner: owner.clone(),
                    headless: *headless,
                });
            }
        }
        self.browsers = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use baton_folder::FolderStore;
    use serde_json::json;
    use std::fs;

    #[test]
    fn browsers_entering_and_leaving_the_registry_are_reported_once() {
        let dir = tempfile::tempdir().unwrap();
        let project = FolderStore::init(dir.path(), "feed", None).unwrap();
        let layout = project.layout();
        let mut state = LocalState::read(layout);
        let dirty = Dirty {
            browsers: true,
            ..Dirty::default()
        };
        let registry = baton_browser::registry::registry_dir(layout);
        fs::create_dir_all(&registry).unwrap();
        let record = json!({"port": 9333, "pid": 1, "owner": "qa-agent", "headless": true,
            "started_at": "2026-11-22T10:00:00Z", "cdp_endpoint": "http://127.0.0.1:9333",
            "websocket_url": "ws://127.0.0.1:9333/devtools/browser/x"});
        fs::write(registry.join("9333.json"), record.to_string()).unwrap();
        fs::write(registry.join("broken.json"), "{").unwrap();
        assert_eq!(
            state.update(layout, &dirty),
            vec![ChangeEvent::BrowserAdded {
                port: 9333,
                owner: "qa-agent".into(),
                headless: true
            }]
        );
        assert!(state.update(layout, &dirty).is_empty(), "reported once");
        fs::remove_file(registry.join("9333.json")).unwrap();
        assert_eq!(
            state.update(layout, &dirty),
            vec![ChangeEvent::BrowserRemoved { port: 9333 }]
        );
    }
}
