//! [`Operation`]: what one operation is, once: its name, what it does, whether it changes
//! anything, its request type (the arguments, with their defaults and descriptions), its result
//! type, and the function that runs it. [`Entry`] is the same with the types erased, for the
//! front ends that dispatch by name (MCP tools, the desktop's IPC).

use std::sync::Arc;

use baton_live::WatchMode;
use baton_store::{Confinement, ForeignFile, Project};
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::error::{Error, Result};

/// Where an operation runs, and on whose behalf.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    pub project: &'a Project,
    /// Where paths named in the request may lead: the project for an agent's tool call,
    /// anywhere for the user's own command.
    pub confinement: &'a Confinement,
    /// Whether a signal operation may overwrite or remove a file at a named path that is not
    /// a signal (only the user says so, with `--force`).
    pub foreign_files: ForeignFile,
    /// How waits notice changes.
    pub watch_mode: WatchMode,
}

impl<'a> Context<'a> {
    pub fn new(project: &'a Project, confinement: &'a Confinement) -> Self {
        Context {
            project,
            confinement,
            foreign_files: ForeignFile::Keep,
            watch_mode: WatchMode::default(),
        }
    }
}

/// One operation. The request type is the operation's argument list: serde names the fields,
/// the doc comments describe them (they become the JSON Schema every client reads), and serde
/// defaults are the defaults everywhere.
pub trait Operation: DeserializeOwned + JsonSchema {
    /// The name MCP clients call it by, and the desktop's IPC.
    const NAME: &'static str;
    /// What it does, in a sentence or two.
    const DESCRIPTION: &'static str;
    /// It only reads.
    const READ_ONLY: bool;
    type Output: Serialize + JsonSchema;
    /// Runs it. Blocking: the store takes a file lock, and waits wait.
    fn run(self, cx: &Context) -> Result<Self::Output>;
}

/// An operation with its types erased.
#[derive(Clone, Copy)]
pub struct Entry {
    pub name: &'static str,
    pub description: &'static str,
    pub read_only: bool,
    input_schema: fn() -> Arc<Map<String, Value>>,
    output_schema: fn() -> Arc<Map<String, Value>>,
    call: fn(&Context, Value) -> Result<Value>,
}

impl std::fmt::Debug for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Entry").field("name", &self.name).finish()
    }
}

impl Entry {
    pub const fn of<O: Operation>() -> Entry {
        Entry {
            name: O::NAME,
            description: O::DESCRIPTION,
            read_only: O::READ_ONLY,
            input_schema: object_schema::<O>,
            output_schema: object_schema::<O::Output>,
            call: call::<O>,
        }
    }

    /// The request's JSON Schema (an object schema, as MCP requires).
    pub fn input_schema(&self) -> Arc<Map<String, Value>> {
        (self.input_schema)()
    }

    /// The result's JSON Schema.
    pub fn output_schema(&self) -> Arc<Map<String, Value>> {
        (self.output_schema)()
    }

    /// Parses `arguments` as the request, runs the operation, and returns its result as JSON.
    pub fn call(&self, cx: &Context, arguments: Value) -> Result<Value> {
        (self.call)(cx, arguments)
    }
}

/// Parses a request; a mismatch is a usage error that says what did not fit.
pub fn parse<T: DeserializeOwned>(arguments: Value) -> Result<T> {
    let arguments = match arguments {
        Value::Null => Value::Object(Map::new()),
        other => other,
    };
    serde_json::from_value(arguments)
        .map_err(|e| Error::invalid_arguments(format!("invalid arguments: {e}")))
}

fn call<O: Operation>(cx: &Context, arguments: Value) -> Result<Value> {
    let output = parse::<O>(arguments)?.run(cx)?;
    serde_json::to_value(output).map_err(|e| {
        Error::new(
            baton_store::ErrorKind::Internal,
            format!("{} result cannot be encoded: {e}", O::NAME),
        )
    })
}

/// `T`'s JSON Schema as an object schema: no `$schema` or `title`, `"type": "object"` at the top
/// (MCP requires it of input and output schemas, even for tools without arguments).
pub fn object_schema<T: JsonSchema>() -> Arc<Map<String, Value>> {
    let value = serde_json::to_value(schemars::schema_for!(T)).expect("schemas serialise");
    match value {
        Value::Object(mut object) => {
            object.remove("$schema");
            object.remove("title");
            object
                .entry("type")
                .or_insert_with(|| Value::String("object".into()));
            Arc::new(object)
        }
        _ => unreachable!("a struct's schema is an object"),
    }
}
