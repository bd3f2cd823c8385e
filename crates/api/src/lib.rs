//! # baton-api
//!
//! Every operation Baton offers, declared once. An operation is a request type (its arguments,
//! their defaults and descriptions), a result type, and a function that runs it on a
//! [`Context`]; [`Operation`] ties them together under one name. The three front ends only
//! translate:
//!
//! - the `baton` CLI parses words into a request, runs it, and prints the result (as is with
//!   `--json`);
//! - the MCP server lists [`catalogue`] as tools (the request's schema as the input schema,
//!   the result's as the output schema) and runs them by name;
//! - the desktop app's IPC runs them by name too, and its UI is typed by the TypeScript that
//!   ts-rs generates from the same types.
//!
//! So one operation answers the same JSON wherever it is called, fails with the same
//! [`Error`] (one kind list, one exit-code table in [`exit`]), and cannot drift between
//! surfaces. The rules themselves are not here: they live in `baton-core`, the stores, `baton-live` and
//! `baton-agents`, which this crate calls.

pub mod agents;
pub mod approvals;
pub mod board;
pub mod check;
pub mod coordination;
pub mod durations;
pub mod error;
pub mod exit;
pub mod inbox;
pub mod open;
pub mod operation;
pub mod orchestration;
pub mod planning;
pub mod prompts;
pub mod reservations;
pub mod review;
pub mod signals;
pub mod tasks;
pub mod team;
pub mod worktrees;

pub use error::{Error, ErrorBody, Result};
pub use open::{Choice, OpenProject};
pub use operation::{AgentUse, Callers, CatalogueEntry, Context, Operation};

/// Declares the catalogue: the list of every operation, in the order they are listed to MCP
/// clients. One list, so an operation added here is a tool, an IPC command and a TypeScript
/// declaration at once.
macro_rules! catalogue {
    ($($op:ty),* $(,)?) => {
        /// Every operation, in order; built at compile time, so a lookup allocates nothing.
        pub static CATALOGUE: &[CatalogueEntry] = &[$(CatalogueEntry::of::<$op>()),*];

        /// Every operation, in order.
        pub fn catalogue() -> &'static [CatalogueEntry] {
            CATALOGUE
        }

        /// The TypeScript map from each operation's name to its request and result types, for
        /// the desktop's UI (`ui/src/bindings/Operations.ts`).
        #[cfg(feature = "ts")]
        pub fn typescript_operations() -> String {
            use ts_rs::TS;
            let mut imports = std::collections::BTreeSet::new();
            let mut entries = String::new();
            $(
                let request = <$op as TS>::name();
                let output = <<$op as Operation>::Output as TS>::name();
                imports.insert(request.clone());
                imports.insert(output.clone());
                entries.push_str(&format!(
                    "  {}: {{ request: {}; output: {} }};\n",
                    <$op as Operation>::NAME, request, output
                ));
            )*
            let mut text = String::from(
                "// Generated from baton-api's catalogue (see src-tauri/src/bindings.rs). Do not edit.\n",
            );
            for name in imports {
                text.push_str(&format!("import type {{ {name} }} from \"./{name}\";\n"));
            }
            text.push_str("\n/** Every operation: its request and its result. */\nexport type Operations = {\n");
            text.push_str(&entries);
            text.push_str("};\n\nexport type OperationName = keyof Operations;\n");
            text
        }

        /// Every request and result type's TypeScript declaration, with the types they use:
        /// (file name, contents).
        #[cfg(feature = "ts")]
        pub fn typescript_declarations() -> Vec<(String, String)> {
            let mut out = Vec::new();
            $(
                declare::<$op>(&mut out);
                declare::<<$op as Operation>::Output>(&mut out);
            )*
            out
        }
    };
}

catalogue!(
    tasks::Status,
    tasks::ListTasks,
    tasks::AddTask,
    tasks::EditTask,
    planning::PlanWrite,
    tasks::Claim,
    tasks::Start,
    tasks::Complete,
    tasks::Fail,
    tasks::Release,
    tasks::Heartbeat,
    tasks::Reset,
    tasks::Approve,
    tasks::Cancel,
    tasks::MoveTask,
    tasks::Discover,
    tasks::AggregateResults,
    tasks::Doctor,
    tasks::Archive,
    tasks::Logs,
    agents::AgentsOverview,
    baton_team::TeamUp,
    team::TeamStatus,
    coordination::TeamReportRequest,
    team::TeamTranscript,
    team::TeamStop,
    team::TeamPause,
    team::TeamResume,
    inbox::AskLead,
    inbox::AnswerQuestion,
    inbox::InboxRead,
    inbox::MessageSend,
    inbox::MessageAck,
    approvals::ApproveToolCall,
    worktrees::Merge,
    worktrees::ReviewWaiting,
    review::TaskReview,
    review::CommentOnLine,
    review::RequestChanges,
    check::RunCheck,
    reservations::Reserve,
    reservations::Unreserve,
    reservations::CheckPaths,
    reservations::ListReservations,
    signals::NewRun,
    signals::ListRuns,
    signals::WriteSignal,
    signals::ClearSignal,
    signals::ListSignals,
    signals::WaitSignals,
    baton_agents::invoke::InvokeRequest,
    orchestration::CompleteInvocation,
    baton_agents::handoff::HandoffRequest,
    baton_agents::parallel::ParallelRequest,
    orchestration::AggregateParallel,
    orchestration::Route,
);

/// Constants the UI shares with the library, as TypeScript (`ui/src/bindings/Defaults.ts`).
#[cfg(feature = "ts")]
pub fn typescript_constants() -> String {
    format!(
        "// Generated from baton-api (see src-tauri/src/bindings.rs). Do not edit.\n\n\
         /** The priority a new task gets unless told otherwise (1 is the most urgent). */\n\
         export const DEFAULT_PRIORITY = {};\n\
         /** The highest priority number accepted. */\n\
         export const MAX_PRIORITY = {};\n\
         /** The lead's one name (a question's recipient, a message's sender, the reviewer). */\n\
         export const LEAD = {:?};\n\
         /** The built-in agent profiles, one per agent CLI Baton runs, in its adapters' order. */\n\
         export const AGENT_PROFILES = [{}] as const;\n",
        baton_core::DEFAULT_PRIORITY,
        baton_core::MAX_PRIORITY,
        baton_core::LEAD,
        baton_team::AgentKind::all()
            .map(|kind| format!("{:?}", kind.name()))
            .collect::<Vec<_>>()
            .join(", "),
    )
}

/// The operation called `name`.
pub fn find(name: &str) -> Option<CatalogueEntry> {
    CATALOGUE.iter().find(|entry| entry.name == name).copied()
}

/// `T`'s declaration and those of every type it uses, each once (skipping files `out` has).
#[cfg(feature = "ts")]
pub fn declare<T: ts_rs::TS + 'static + ?Sized>(out: &mut Vec<(String, String)>) {
    struct Collect<'a>(&'a mut Vec<(String, String)>);
    impl ts_rs::TypeVisitor for Collect<'_> {
        fn visit<U: ts_rs::TS + 'static + ?Sized>(&mut self) {
            push::<U>(self.0);
            U::visit_dependencies(self);
        }
    }
    fn push<U: ts_rs::TS + 'static + ?Sized>(out: &mut Vec<(String, String)>) {
        let Some(path) = U::output_path() else { return };
        let file = path.file_name().map(|f| f.to_string_lossy().to_string());
        let Some(file) = file else { return };
        if out.iter().any(|(f, _)| *f == file) {
            return;
        }
        if let Ok(text) = U::export_to_string() {
            out.push((file, text));
        }
    }
    push::<T>(out);
    T::visit_dependencies(&mut Collect(out));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique() {
        let mut names: Vec<_> = catalogue().iter().map(|e| e.name).collect();
        let count = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), count);
    }

    #[test]
    fn every_schema_is_an_object_and_every_argument_is_described() {
        for entry in catalogue() {
            let input = entry.input_schema();
            assert_eq!(input["type"], "object", "{}", entry.name);
            assert_eq!(entry.output_schema()["type"], "object", "{}", entry.name);
            let definitions = input.get("$defs").cloned().unwrap_or_default();
            for (field, schema) in input
                .get("properties")
                .and_then(|p| p.as_object())
                .into_iter()
                .flatten()
            {
                assert!(
                    described(schema, &definitions),
                    "{}.{field} has no description: {schema}",
                    entry.name
                );
            }
        }
    }

    /// A property is described by its own description, or, when it is a reference to a
    /// definition, by that definition's.
    fn described(schema: &serde_json::Value, definitions: &serde_json::Value) -> bool {
        if schema.get("description").is_some() {
            return true;
        }
        let reference = schema
            .get("$ref")
            .or_else(|| schema.pointer("/allOf/0/$ref"))
            .and_then(|r| r.as_str());
        match reference.and_then(|r| r.strip_prefix("#/$defs/")) {
            Some(name) => definitions
                .get(name)
                .is_some_and(|d| d.get("description").is_some()),
            None => false,
        }
    }
}

#[cfg(test)]
mod callers;
