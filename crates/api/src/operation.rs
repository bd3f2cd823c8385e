//! [`Operation`]: what one operation is, once: its name, what it does, whether it changes
//! anything, its request type (the arguments, with their defaults and descriptions), its result
//! type, and the function that runs it. [`CatalogueEntry`] is the same with the types erased, for the
//! front ends that dispatch by name (MCP tools, the desktop's IPC).

use std::sync::Arc;

use baton_core::{
    Confinement, DocumentStore, ForeignFile, Layout, SignalStore, TaskStore, TeamStore,
};
use baton_folder::FolderStore;
use baton_live::WatchMode;
use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::error::{Error, Result};

/// Where an operation runs, and on whose behalf.
#[derive(Clone)]
pub struct Context<'a> {
    /// The project's folder on this machine: agent definitions, browsers, worktrees.
    pub local: &'a Layout,
    /// The project's tasks, wherever they are kept (the folder, or a database).
    pub tasks: &'a dyn TaskStore,
    /// The project's runs and named signals, kept where its tasks are.
    pub signals: &'a dyn SignalStore,
    /// The project's orchestration record, kept where its tasks are.
    pub documents: Arc<dyn DocumentStore>,
    /// The team's attempts, transcripts and workers, kept where its tasks are.
    pub team: &'a dyn TeamStore,
    /// Where paths named in the request may lead: the project for an agent's tool call,
    /// anywhere for the user's own command.
    pub confinement: &'a Confinement,
    /// Whether a signal operation may overwrite or remove a file at a named path that is not
    /// a signal (only the user says so, with `--force`).
    pub foreign_files: ForeignFile,
    /// How waits notice changes.
    pub watch_mode: WatchMode,
    /// The agent this caller is, when it is one: the identity an MCP server was started with
    /// (`BATON_AGENT`). An agent asks, sends and reads as itself and no other; `None` is the
    /// user, who is the lead unless they name an agent.
    pub caller: Option<String>,
    /// The task whose attempt this caller speaks from, through that attempt's door: the
    /// attempt, not the agent, decides when it lets go of it (a release would start a second
    /// attempt in the same worktree while this one runs).
    pub attempt: Option<String>,
    /// The caller only reads (a team's judge, through its door): every operation that changes
    /// anything is refused it.
    pub reads_only: bool,
    /// How this process reached the project's store (`BATON_STORE`, `BATON_PROJECT`,
    /// `BATON_LEASE`), for the processes an operation starts (a team's supervisor) to reach
    /// the same one.
    pub reach: &'a [(String, String)],
    /// The caller reads the board again on every change anyone makes (a window, the desktop's
    /// tray): the store may parse again only what changed since its last such read
    /// ([`Self::snapshot`], [`Self::status`]).
    pub reads_again: bool,
}

impl<'a> Context<'a> {
    pub fn new(
        local: &'a Layout,
        tasks: &'a dyn TaskStore,
        signals: &'a dyn SignalStore,
        documents: Arc<dyn DocumentStore>,
        team: &'a dyn TeamStore,
        confinement: &'a Confinement,
    ) -> Self {
        Context {
            local,
            tasks,
            signals,
            documents,
            team,
            confinement,
            foreign_files: ForeignFile::Keep,
            watch_mode: WatchMode::default(),
            caller: None,
            attempt: None,
            reads_only: false,
            reach: &[],
            reads_again: false,
        }
    }

    /// Every task now ([`TaskStore::snapshot`]), read again for a caller that
    /// [`Self::reads_again`].
    pub fn snapshot(&self) -> baton_core::Result<(baton_core::TaskFile, baton_core::Timestamp)> {
        match self.reads_again {
            true => self.tasks.snapshot_again(),
            false => self.tasks.snapshot(),
        }
    }

    /// The board shared with what the store keeps ([`TaskStore::board_again`]), for a caller
    /// that [`Self::reads_again`]; `None` for any other caller, or a store that keeps nothing.
    pub fn board_again(&self) -> baton_core::Result<Option<baton_core::SharedBoard>> {
        match self.reads_again {
            true => self.tasks.board_again(),
            false => Ok(None),
        }
    }

    /// Every task now, each shared with what the store keeps for a caller that
    /// [`Self::reads_again`] ([`TaskStore::board_again`]: none copied), or read whole.
    pub fn shared_tasks(&self) -> baton_core::Result<Vec<std::sync::Arc<baton_core::Task>>> {
        if let Some(board) = self.board_again()? {
            return Ok(board.tasks);
        }
        let (file, _) = self.snapshot()?;
        Ok(file.tasks.into_iter().map(std::sync::Arc::new).collect())
    }

    /// The board now ([`TaskStore::status`]), read again for a caller that
    /// [`Self::reads_again`].
    pub fn status(&self) -> baton_core::Result<baton_core::StatusReport> {
        match self.reads_again {
            true => self.tasks.status_again(),
            false => self.tasks.status(),
        }
    }

    /// The plan task this context's caller holds as its team's planner, speaking from an
    /// attempt at it ([`crate::planning::planner_of`]); `None` for the lead and every other
    /// agent.
    pub fn plan_held(&self) -> Result<Option<baton_core::Task>> {
        let (Some(agent), Some(attempt)) = (&self.caller, &self.attempt) else {
            return Ok(None);
        };
        let Some(task) = self.tasks.task(attempt)? else {
            return Ok(None);
        };
        Ok((task.kind == baton_core::TaskKind::Plan && task.is_held_by(agent)).then_some(task))
    }

    /// The context of a folder project: the folder holds everything.
    pub fn folder(project: &'a FolderStore, confinement: &'a Confinement) -> Self {
        Context::new(
            project.layout(),
            project,
            project,
            Arc::new(project.clone()),
            project,
            confinement,
        )
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
    /// Its result goes to an MCP client as one text block of JSON and nothing else (no output
    /// schema, no structured content): for a caller that parses the text itself, as Claude
    /// Code does its permission prompt tool's answer.
    const TEXT_ONLY: bool = false;
    /// Who may call it besides the lead, declared with it: the one place that says so. The
    /// catalogue refuses an agent's caller ([`Context::caller`]) what is not its, the door
    /// refuses a sandboxed agent's command that would run one, the MCP server lists an agent
    /// only its operations, and `baton serve` allows a responder device only its own.
    const CALLERS: Callers;
    type Output: Serialize + JsonSchema;
    /// Runs it. Blocking: the store takes a file lock, and waits wait.
    fn run(self, cx: &Context) -> Result<Self::Output>;
}

/// Who may call an operation. The lead may call every one; the others as each says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Callers {
    /// A device paired as a responder (`baton serve pair --as responder`), answering agents
    /// from a phone: it reads, and of what changes something, answers and comments.
    pub responder: bool,
    /// An agent, as itself (a supervised agent through its door, a worker at its terminal
    /// with `BATON_AGENT`).
    pub agent: AgentUse,
    /// A team's planner ([`Context::plan_held`]: an agent whose attempt, through its
    /// door, is on the plan it holds), on its own plan's tasks and the master plan, where
    /// `agent` says no agent may.
    pub planner: bool,
}

/// What an agent may do with an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentUse {
    /// Nothing: the lead's (answering, approving, merging, stopping the team, adding, editing
    /// or resetting tasks, the check and the repairs).
    Never,
    /// Its own work only: its task, its reservations, its questions and messages, its log.
    /// The operation refuses another agent's.
    OwnWork,
    /// What every agent shares: reading the board and the project, discoveries, signals, the
    /// records of agent orchestration.
    Shared,
}

impl Callers {
    /// The lead's alone.
    pub const LEAD: Callers = Callers {
        responder: false,
        agent: AgentUse::Never,
        planner: false,
    };
    /// Reading what everyone may read.
    pub const READERS: Callers = Callers {
        responder: true,
        agent: AgentUse::Shared,
        planner: false,
    };
    /// An agent's own work (and the lead's).
    pub const OWN_WORK: Callers = Callers {
        responder: false,
        agent: AgentUse::OwnWork,
        planner: false,
    };
    /// What any agent may add to what the team shares.
    pub const SHARED: Callers = Callers {
        responder: false,
        agent: AgentUse::Shared,
        planner: false,
    };
    /// Answering agents: the lead and a responder device, never an agent.
    pub const ANSWERS: Callers = Callers {
        responder: true,
        agent: AgentUse::Never,
        planner: false,
    };

    /// Answering agents: the lead, a responder device, and a team's planner told to answer
    /// the workers' questions about its plan.
    pub const ANSWERS_AND_PLANNER: Callers = Callers {
        responder: true,
        agent: AgentUse::Never,
        planner: true,
    };
    /// An agent's own work, and a responder device's.
    pub const OWN_WORK_AND_RESPONDER: Callers = Callers {
        responder: true,
        agent: AgentUse::OwnWork,
        planner: false,
    };
    /// Planning: the lead's, and a team's planner's on its own plan.
    pub const PLANNING: Callers = Callers {
        responder: false,
        agent: AgentUse::Never,
        planner: true,
    };

    /// Whether an agent may call it at all.
    pub const fn agents(&self) -> bool {
        !matches!(self.agent, AgentUse::Never)
    }
}

/// An operation with its types erased.
#[derive(Clone, Copy)]
pub struct CatalogueEntry {
    pub name: &'static str,
    pub description: &'static str,
    pub read_only: bool,
    /// See [`Operation::TEXT_ONLY`].
    pub text_only: bool,
    /// Who may call it ([`Operation::CALLERS`]).
    pub callers: Callers,
    input_schema: fn(&mut SchemaGenerator) -> Schema,
    output_schema: fn(&mut SchemaGenerator) -> Schema,
    call: fn(&Context, Value) -> Result<Value>,
    call_json: fn(&Context, Value) -> Result<Box<RawValue>>,
}

impl std::fmt::Debug for CatalogueEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CatalogueEntry")
            .field("name", &self.name)
            .finish()
    }
}

impl CatalogueEntry {
    pub const fn of<O: Operation>() -> CatalogueEntry {
        CatalogueEntry {
            name: O::NAME,
            description: O::DESCRIPTION,
            read_only: O::READ_ONLY,
            text_only: O::TEXT_ONLY,
            callers: O::CALLERS,
            input_schema: <O as JsonSchema>::json_schema,
            output_schema: <O::Output as JsonSchema>::json_schema,
            call: call::<O>,
            call_json: call_json::<O>,
        }
    }

    /// The request's JSON Schema (an object schema, as MCP requires).
    pub fn input_schema(&self) -> Arc<Map<String, Value>> {
        schemas(self.name).0.clone()
    }

    /// The result's JSON Schema.
    pub fn output_schema(&self) -> Arc<Map<String, Value>> {
        schemas(self.name).1.clone()
    }

    /// Parses `arguments` as the request, runs the operation, and returns its result as JSON.
    /// An agent's caller is refused an operation that is not an agent's ([`CatalogueEntry::callers`]).
    pub fn call(&self, cx: &Context, arguments: Value) -> Result<Value> {
        self.check_caller(cx)?;
        (self.call)(cx, arguments)
    }

    /// [`CatalogueEntry::call`], its result as JSON text, written straight from the result (no
    /// [`Value`] built and dropped on the way): for the desktop's and the served UI's calls,
    /// which only pass the result on (a board of 1,000 tasks is 360 KB of it).
    pub fn call_json(&self, cx: &Context, arguments: Value) -> Result<Box<RawValue>> {
        self.check_caller(cx)?;
        (self.call_json)(cx, arguments)
    }

    /// Refuses the lead's operations to a caller that is an agent, but for a team's planner
    /// those of planning; and to a caller that only reads, every operation that changes
    /// anything.
    pub fn check_caller(&self, cx: &Context) -> Result<()> {
        if cx.reads_only && !self.read_only {
            return Err(Error::new(
                baton_core::ErrorKind::NotYou,
                format!(
                    "this connection only reads (a team's judge); {} changes the project",
                    self.name
                ),
            ));
        }
        match cx.caller.as_deref() {
            Some(_) if self.callers.planner && cx.plan_held()?.is_some() => Ok(()),
            Some(agent) if !self.callers.agents() => Err(Error::new(
                baton_core::ErrorKind::NotYou,
                format!(
                    "this connection is agent {agent}; {} is the lead's to do, not an agent's",
                    self.name
                ),
            )),
            _ => Ok(()),
        }
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
    serde_json::to_value(output).map_err(unencodable::<O>)
}

fn call_json<O: Operation>(cx: &Context, arguments: Value) -> Result<Box<RawValue>> {
    let output = parse::<O>(arguments)?.run(cx)?;
    serde_json::value::to_raw_value(&output).map_err(unencodable::<O>)
}

fn unencodable<O: Operation>(e: serde_json::Error) -> Error {
    Error::new(
        baton_core::ErrorKind::Internal,
        format!("{} result cannot be encoded: {e}", O::NAME),
    )
}

type SchemaPair = (Arc<Map<String, Value>>, Arc<Map<String, Value>>);

/// The catalogue's schemas (request, result) by operation name, generated once per process with
/// one generator, so a type many operations use (`Task`, `TaskView`, …) is generated once; each
/// schema then carries the definitions it refers to, since MCP wants every schema whole.
fn schemas(name: &str) -> &'static SchemaPair {
    static ALL: std::sync::OnceLock<Vec<(&'static str, SchemaPair)>> = std::sync::OnceLock::new();
    let all = ALL.get_or_init(|| {
        let mut generator = SchemaSettings::default().into_generator();
        let roots: Vec<_> = crate::catalogue()
            .iter()
            .map(|e| {
                let input = (e.input_schema)(&mut generator);
                let output = (e.output_schema)(&mut generator);
                (e.name, input, output)
            })
            .collect();
        let definitions = generator.definitions();
        roots
            .into_iter()
            .map(|(name, input, output)| {
                let pair = (whole(input, definitions), whole(output, definitions));
                (name, pair)
            })
            .collect()
    });
    &all.iter()
        .find(|(n, _)| *n == name)
        .expect("every entry is in the catalogue")
        .1
}

/// `root` as an object schema with the `$defs` it refers to, directly or through each other.
fn whole(root: Schema, definitions: &Map<String, Value>) -> Arc<Map<String, Value>> {
    let mut root = Value::from(root);
    standard_formats_only(&mut root);
    let Value::Object(mut root) = root else {
        unreachable!("a type's schema is an object")
    };
    let mut needed = Map::new();
    let mut queue = Vec::new();
    references(&Value::Object(root.clone()), &mut queue);
    while let Some(name) = queue.pop() {
        if needed.contains_key(&name) {
            continue;
        }
        if let Some(definition) = definitions.get(&name) {
            references(definition, &mut queue);
            let mut definition = definition.clone();
            standard_formats_only(&mut definition);
            needed.insert(name, definition);
        }
    }
    if !needed.is_empty() {
        root.insert("$defs".into(), Value::Object(needed));
    }
    root.entry("type")
        .or_insert_with(|| Value::String("object".into()));
    Arc::new(root)
}

/// `value` without the `format`s JSON Schema does not define (schemars marks Rust's integer
/// and float widths: `uint32`, `int64`, `double`, …): hosts validate tool arguments against the
/// schema and warn at each unknown format (Claude Code: `unknown format "uint32" ignored`). A
/// width stays told by `minimum` where schemars gives one.
fn standard_formats_only(value: &mut Value) {
    const WIDTHS: [&str; 12] = [
        "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64",
        "float", "double",
    ];
    match value {
        Value::Object(map) => {
            if map
                .get("format")
                .and_then(Value::as_str)
                .is_some_and(|f| WIDTHS.contains(&f))
            {
                map.remove("format");
            }
            map.values_mut().for_each(standard_formats_only);
        }
        Value::Array(items) => items.iter_mut().for_each(standard_formats_only),
        _ => {}
    }
}

/// The definition names `value` refers to (`{"$ref": "#/$defs/NAME"}`), anywhere inside it.
fn references(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(target)) = map.get("$ref")
                && let Some(name) = target.strip_prefix("#/$defs/")
            {
                out.push(name.to_string());
            }
            map.values().for_each(|v| references(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| references(v, out)),
        _ => {}
    }
}

/// `T`'s JSON Schema as an object schema: no `$schema` or `title`, `"type": "object"` at the top
/// (MCP requires it of input and output schemas, even for tools without arguments).
pub fn object_schema<T: JsonSchema>() -> Arc<Map<String, Value>> {
    let mut value: Value = schemars::schema_for!(T).into();
    standard_formats_only(&mut value);
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
