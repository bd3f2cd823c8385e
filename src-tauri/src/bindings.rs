//! TypeScript declarations of what the commands return, generated from the Rust types (ts-rs)
//! into `ui/src/bindings/`, so the UI cannot drift from the backend. The test below fails when
//! the committed files are stale; `BATON_UPDATE_BINDINGS=1 cargo test -p baton-desktop
//! bindings` rewrites them.

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use baton_agents::graph::{
        EdgeKind, GraphEdge, GraphNode, HandoffGraph, InvocationSummary, NodeKind,
    };
    use baton_agents::state::{Decision, Handoff, InvocationStatus, ParallelStatus};
    use baton_browser::PageState;
    use baton_live::browser::{BrowserRecord, ListedBrowser};
    use baton_store::model::{TaskContext, TaskResult};
    use baton_store::{StatusReport, Task, TaskStatus, TaskView};
    use ts_rs::TS;

    use crate::commands::{CommandError, ProjectInfo, Screenshot};

    fn declarations() -> Vec<(String, String)> {
        fn one<T: TS + 'static>() -> (String, String) {
            (
                format!("{}.ts", T::name()),
                T::export_to_string().expect("exportable"),
            )
        }
        vec![
            one::<TaskStatus>(),
            one::<TaskContext>(),
            one::<TaskResult>(),
            one::<Task>(),
            one::<TaskView>(),
            one::<StatusReport>(),
            one::<InvocationStatus>(),
            one::<ParallelStatus>(),
            one::<Decision>(),
            one::<Handoff>(),
            one::<NodeKind>(),
            one::<EdgeKind>(),
            one::<InvocationSummary>(),
            one::<GraphNode>(),
            one::<GraphEdge>(),
            one::<HandoffGraph>(),
            one::<baton_store::Aggregate>(),
            one::<baton_store::LogLine>(),
            one::<BrowserRecord>(),
            one::<ListedBrowser>(),
            one::<PageState>(),
            one::<Screenshot>(),
            one::<ProjectInfo>(),
            one::<CommandError>(),
            one::<crate::recent::RecentProject>(),
        ]
    }

    #[test]
    fn bindings_are_fresh() {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../ui/src/bindings");
        let update = std::env::var_os("BATON_UPDATE_BINDINGS").is_some();
        let mut stale = Vec::new();
        for (file, text) in declarations() {
            let path = dir.join(&file);
            if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
                if update {
                    std::fs::create_dir_all(&dir).unwrap();
                    std::fs::write(&path, &text).unwrap();
                } else {
                    stale.push(file);
                }
            }
        }
        assert!(
            stale.is_empty(),
            "stale TypeScript bindings in ui/src/bindings: {stale:?}; run BATON_UPDATE_BINDINGS=1 cargo test -p baton-desktop bindings"
        );
    }
}
