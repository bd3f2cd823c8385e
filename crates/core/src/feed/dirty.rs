//! Which areas of a project a burst of changes touched, from the paths a watcher named (the
//! folder's layout) or a store's notification (everything): the feed reads only those again.

use std::collections::BTreeSet;
use std::path::PathBuf;

use crate::layout::Layout;

/// Areas of the folder that may have changed.
#[derive(Debug, Default)]
pub struct Dirty {
    pub tasks: bool,
    pub plan: bool,
    pub summary: bool,
    pub discoveries: bool,
    pub logs: bool,
    pub results: bool,
    pub runs: bool,
    pub orchestration: bool,
    pub handoff: bool,
    pub browsers: bool,
    /// Workers' records (`team/`).
    pub team: bool,
    /// Questions and messages (`inbox/`).
    pub inbox: bool,
    /// Every transcript (`transcripts/` as a whole)…
    pub transcripts: bool,
    /// …or these paths under it: transcript files, or a task's new folder of them.
    pub transcript_paths: BTreeSet<PathBuf>,
}

impl Dirty {
    pub fn all() -> Dirty {
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
    pub fn mark(&mut self, layout: &Layout, paths: &[PathBuf]) {
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
