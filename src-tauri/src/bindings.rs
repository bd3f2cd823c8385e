//! TypeScript declarations of what the commands take and return, generated from the Rust types
//! (ts-rs) into `ui/src/bindings/`: every `baton-api` operation's request and result, the map
//! `Operations.ts` from operation names to them, the shared constants (`Defaults.ts`), and the
//! desktop's own commands' types, so the UI cannot drift from the backend. The test below
//! fails when the committed files are stale (or a file is left over);
//! `BATON_UPDATE_BINDINGS=1 cargo test -p baton-desktop bindings` rewrites them.

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use baton_agents::graph::{
        EdgeKind, GraphEdge, GraphNode, HandoffGraph, InvocationSummary, NodeKind,
    };
    use baton_agents::state::{Decision, Handoff, InvocationStatus, ParallelStatus};
    use baton_browser::PageState;
    use baton_browser::{BrowserRecord, ListedBrowser};
    use baton_core::{StatusReport, Task, TaskStatus, TaskView};
    use baton_core::{TaskContext, TaskResult};
    use ts_rs::TS;

    use crate::commands::{ProjectInfo, Screenshot};

    /// Every type's declaration as each source declares it (a file may come more than once).
    fn every_declaration() -> Vec<(String, String)> {
        fn one<T: TS + 'static>() -> (String, String) {
            (
                format!("{}.ts", T::name()),
                T::export_to_string().expect("exportable"),
            )
        }
        let mut all = baton_api::typescript_declarations();
        all.push((
            "Operations.ts".to_string(),
            baton_api::typescript_operations(),
        ));
        all.push(("Defaults.ts".to_string(), baton_api::typescript_constants()));
        // The change feed's events, as the UI receives them (and the types they carry).
        baton_api::declare::<baton_live::feed::ChangeEvent>(&mut all);
        let own = vec![
            one::<TaskStatus>(),
            one::<TaskContext>(),
            one::<TaskResult>(),
            one::<Task>(),
            one::<TaskView>(),
            one::<StatusReport>(),
            one::<baton_api::board::BoardUpdate>(),
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
            one::<baton_core::Aggregate>(),
            one::<baton_core::LogLine>(),
            one::<BrowserRecord>(),
            one::<ListedBrowser>(),
            one::<PageState>(),
            one::<Screenshot>(),
            one::<ProjectInfo>(),
            one::<baton_api::ErrorBody>(),
            one::<baton_core::ErrorKind>(),
            one::<crate::recent::RecentProject>(),
            one::<crate::serving::ServeState>(),
            one::<crate::serving::Pairing>(),
        ];
        all.extend(own);
        all
    }

    /// Every declaration once (a type several operations use is declared by each).
    fn declarations() -> Vec<(String, String)> {
        let mut all: Vec<(String, String)> = Vec::new();
        for (file, text) in every_declaration() {
            if !all.iter().any(|(f, _)| *f == file) {
                all.push((file, text));
            }
        }
        all
    }

    /// Two Rust types of one name would be one TypeScript file, and one of them lost.
    #[test]
    fn no_two_types_share_a_binding_file() {
        let every = every_declaration();
        for (file, text) in &every {
            let clash = every.iter().any(|(f, t)| f == file && t != text);
            assert!(!clash, "two types are declared as {file}; rename one");
        }
    }

    #[test]
    fn bindings_are_fresh() {
        // Where the sources are when the test runs (cargo sets the variable for a test), not
        // where the binary was built: a shared build cache may have built it elsewhere.
        let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR").expect("run with cargo test");
        let dir = PathBuf::from(manifest_dir).join("../ui/src/bindings");
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
        // Every declaration in the folder is one of these: a type no longer declared is removed
        // (or, without BATON_UPDATE_BINDINGS, reported), so the UI cannot import a dead type.
        let declared: Vec<String> = declarations().into_iter().map(|(f, _)| f).collect();
        for entry in std::fs::read_dir(&dir).unwrap() {
            let file = entry.unwrap().file_name().to_string_lossy().to_string();
            if !declared.contains(&file) {
                if update {
                    std::fs::remove_file(dir.join(&file)).unwrap();
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
