//! Which areas of `.coordination/` a burst of changes touched, from the paths the watcher
//! named: the feed re-reads only those.

use std::collections::BTreeSet;
use std::path::PathBuf;

use baton_core::Layout;

/// Areas of the folder that may have changed.
#[derive(Debug, Default)]
pub(crate) struct Dirty {
    pub(crate) tasks: bool,
    pub(crate) plan: bool,
    pub(crate) summary: bool,
    pub(crate) discoveries: bool,
    pub(crate) logs: bool,
    pub(crate) results: bool,
    pub(crate) runs: bool,
    pub(crate) orchestration: bool,
    pub(crate) handoff: bool,
    pub(crate) browsers: bool,
    /// Workers' records (`team/`).
    pub(crate) team: bool,
    /// Questions and messages (`inbox/`).
    pub(crate) inbox: bool,
    /// Every transcript (`transcripts/` as a whole)…
    pub(crate) transcripts: bool,
    /// …or these paths under it: transcript files, or a task's new folder of them.
    pub(crate) transcript_paths: BTreeSet<PathBuf>,
}

impl Dirty {
    pub(crate) fn all() -> Dirty {
        Dirty {
            tasks: true,
            plan: true,
            summary: true,
            discoveries: true,
            logs: true,
            results: true,
            runs: true,
            orchestration: true,
            handoff: true,
            browsers: true,
            team: true,
            inbox: true,
            transcripts: true,
            transcript_paths: BTreeSet::new(),
        }
    }

    /// Marks the areas `paths` fall in; a path the backend did not name marks everything.
    pub(crate) fn mark(&mut self, layout: &Layout, paths: &[PathBuf]) {
        if paths.is_empty() {
            *self = Dirty::all();
            return;
        }
        let root = layout.root();
        for path in paths {
            let Ok(relative) = path.strip_prefix(root) else {
                continue;
            };
            let first = relative
                .components()
                .next()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .unwrap_or_default();
            match first.as_str() {
                // A rename of a temp file over tasks.json shows as either name.
                "tasks.json" => self.tasks = true,
                name if name.starts_with(".tasks.json.") => self.tasks = true,
                "master-plan.md" => self.plan = true,
                "summary.md" => self.summary = true,
                "context" => self.discoveries = true,
                "logs" => self.logs = true,
                "results" => self.results = true,
                "runs" => self.runs = true,
                "orchestration" => self.orchestration = true,
                "HANDOFF.md" => self.handoff = true,
                "browsers" => self.browsers = true,
                "team" => self.team = true,
                "inbox" => self.inbox = true,
                "transcripts" if relative.components().count() == 1 => self.transcripts = true,
                "transcripts" => {
                    self.transcript_paths.insert(path.clone());
                }
                "" => self.mark(layout, &[]),
                _ => {}
            }
        }
    }
}
