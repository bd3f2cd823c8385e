//! Choosing the store: where a project's tasks are kept, decided once for every front end.
//!
//! A project's `.coordination/` folder either holds its tasks (`tasks.json`, the embedded
//! default) or points to a PostgreSQL database that holds them (`store.json`: the URL without
//! its password, and the project's name there). A URL given at run time (`--store` or
//! `BATON_STORE`) takes precedence, and needs no folder at all: a worker on another machine
//! reaches the project with the URL alone. Either way the front ends get an [`OpenProject`]
//! and run operations on its [`Context`]; none of them knows which store is underneath.
//!
//! Runs, named signals and the orchestration record live in the same store as the tasks.
//! What is not (agent definitions, browsers, signals at a path the user names) stays in the
//! local folder on either store.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use baton_core::{
    Confinement, DocumentStore, Layout, SignalStore, StoreError, TaskStore, TeamStore,
};
use baton_folder::FolderStore;
use baton_fs::write_atomic;
use baton_live::WatchMode;
use baton_live::feed::{ChangeFeed, Stores};
use baton_pg::PgStore;
use baton_pg::transfer::Transfer;
use serde::{Deserialize, Serialize};

use crate::board::{BoardUpdate, BoardUpdates};
use crate::error::{Error, Result};
use crate::operation::Context;

/// What `store.json` holds: where the project's tasks are. Never a password.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pointer {
    /// The database's URL, without a password.
    pub store: String,
    /// The project's name in that database.
    pub project: String,
}

/// Where the user asked for the project to be (the CLI's `--dir`, `--store`, `--project`).
#[derive(Debug, Clone, Default)]
pub struct Choice<'a> {
    /// The project folder (`--dir` / `BATON_DIR`); otherwise found from the working folder up.
    pub dir: Option<&'a Path>,
    /// A database URL (`--store` / `BATON_STORE`), over the folder's pointer.
    pub store: Option<&'a str>,
    /// The project's name in the database (`--project`), over the pointer's.
    pub project: Option<&'a str>,
    /// The database password, when the user typed it (the desktop asks for it): used for
    /// this connection only, never written down.
    pub password: Option<&'a str>,
}

/// An opened project: its local folder and its stores (the folder itself, or a database).
#[derive(Clone)]
pub struct OpenProject {
    /// The `.coordination/` folder on this machine: everything when the project is kept
    /// there, and on either store the browsers, worktrees and orchestration's configuration.
    /// Only a place: what is kept there is reached through the stores.
    local: Layout,
    /// The project's tasks, wherever they are kept.
    pub tasks: Arc<dyn TaskStore>,
    /// The project's runs and named signals, kept where the tasks are.
    pub signals: Arc<dyn SignalStore>,
    /// The project's orchestration record, kept where the tasks are.
    pub documents: Arc<dyn DocumentStore>,
    /// The team's attempts, transcripts and workers, kept where the tasks are.
    pub team: Arc<dyn TeamStore>,
    /// How the project was reached, for processes started for it: see [`Context::reach`].
    reach: Vec<(String, String)>,
    /// The boards last sent to windows, to send them only what changed ([`Self::board`]).
    boards: Arc<BoardUpdates>,
}

impl std::fmt::Debug for OpenProject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenProject")
            .field("local", &self.local.root())
            .field("tasks", &self.tasks.describe())
            .finish()
    }
}

impl OpenProject {
    /// A folder project: the folder holds its tasks.
    pub fn folder(project: FolderStore) -> OpenProject {
        OpenProject {
            local: project.layout().clone(),
            tasks: Arc::new(project.clone()),
            signals: Arc::new(project.clone()),
            documents: Arc::new(project.clone()),
            team: Arc::new(project),
            reach: Vec::new(),
            boards: Arc::default(),
        }
    }

    /// The project's folder on this machine (it may not exist for a database project reached
    /// by URL alone).
    pub fn local(&self) -> &Layout {
        &self.local
    }

    /// Opens the project the user chose (see [`Choice`]), with `lease` for claims.
    pub fn open(choice: &Choice<'_>, cwd: &Path, lease: Duration) -> Result<OpenProject> {
        let mut open = OpenProject::open_store(choice, cwd, lease)?;
        open.reach = reach(choice, lease);
        Ok(open)
    }

    fn open_store(choice: &Choice<'_>, cwd: &Path, lease: Duration) -> Result<OpenProject> {
        match Location::find(choice, cwd)? {
            Location::Folder(layout) => Ok(OpenProject::folder(
                FolderStore::open(layout)?.with_lease(lease),
            )),
            Location::Database { layout, url, name } => {
                let url = match choice.password {
                    Some(password) => with_password(&url, password),
                    None => url,
                };
                Ok(OpenProject::database(layout, &url, &name, lease)?)
            }
        }
    }

    /// Creates project `name` (default: the folder's name) for `goal` in the database at
    /// `url`, and leaves the pointer to it in `project_dir`'s `.coordination/`.
    pub fn init_database(
        project_dir: &Path,
        url: &str,
        name: Option<&str>,
        goal: &str,
        approach: Option<&str>,
    ) -> Result<(OpenProject, Pointer)> {
        let name = chosen_name(name, project_dir)?;
        check_no_folder_project(project_dir)?;
        let store = Arc::new(PgStore::init(url, &name, goal, approach)?);
        let pointer = write_pointer(project_dir, url, &name)?;
        let layout = Layout::for_project(project_dir);
        Ok((OpenProject::over(layout, store), pointer))
    }

    /// Reaches project `name` (default: the folder's name) in the database at `url` from
    /// `project_dir`: checks that it is there, then writes the pointer.
    pub fn connect(
        project_dir: &Path,
        url: &str,
        name: Option<&str>,
        lease: Duration,
    ) -> Result<(OpenProject, Pointer)> {
        let name = chosen_name(name, project_dir)?;
        check_no_folder_project(project_dir)?;
        // Checked now, before the pointer is written.
        let store = Arc::new(PgStore::open(url, &name)?.with_lease(lease));
        let open = OpenProject::over(Layout::for_project(project_dir), store);
        let pointer = write_pointer(project_dir, url, &name)?;
        Ok((open, pointer))
    }

    /// Writes the database project the user chose as a `.coordination/` folder in `to`.
    pub fn export(choice: &Choice<'_>, cwd: &Path, to: &Path) -> Result<Transfer> {
        match Location::find(choice, cwd)? {
            Location::Folder(layout) => Err(Error::input(
                "store",
                format!(
                    "{} is a folder project already; export reads a project kept in PostgreSQL \
                     (give --store URL, or run it where `baton connect` pointed a folder)",
                    layout.root().display()
                ),
            )),
            Location::Database { url, name, .. } => Ok(PgStore::open(&url, &name)?.export(to)?),
        }
    }

    /// Loads the folder project the user chose into the database at `url` as project `name`
    /// (default: the folder's name). The folder is left as it was; `baton connect` then points
    /// it (or any other folder) at the database.
    pub fn import(
        choice: &Choice<'_>,
        cwd: &Path,
        url: &str,
        name: Option<&str>,
    ) -> Result<Transfer> {
        let layout = Layout::locate(choice.dir, cwd)?;
        if read_pointer(&layout)?.is_some() {
            return Err(Error::input(
                "store",
                format!(
                    "{} points to a database already; import reads a folder project",
                    layout.root().display()
                ),
            ));
        }
        let name = chosen_name(name, layout.project_dir())?;
        Ok(PgStore::import(url, &name, layout.project_dir())?.1)
    }

    /// The project `name` in the database at `url`, checked with its first operation (an
    /// unknown project is that operation's error): a process that runs one operation waits
    /// for a pooler's server session once.
    fn database(
        layout: Layout,
        url: &str,
        name: &str,
        lease: Duration,
    ) -> baton_core::Result<OpenProject> {
        let store = Arc::new(PgStore::open_unchecked(url, name)?.with_lease(lease));
        Ok(OpenProject::over(layout, store))
    }

    /// A project kept in `store`, with this machine's `folder`.
    fn over(local: Layout, store: Arc<PgStore>) -> OpenProject {
        OpenProject {
            local,
            tasks: store.clone(),
            signals: store.clone(),
            documents: store.clone(),
            team: store,
            reach: Vec::new(),
            boards: Arc::default(),
        }
    }

    /// The context an operation runs in, for this project.
    pub fn context<'a>(&'a self, confinement: &'a Confinement) -> Context<'a> {
        let mut cx = Context::new(
            &self.local,
            &*self.tasks,
            &*self.signals,
            self.documents.clone(),
            &*self.team,
            confinement,
        );
        cx.reach = &self.reach;
        cx
    }

    /// The context for a window's reads and the desktop's tray, which read the board again on
    /// every change anyone makes: only what changed is parsed again ([`Context::reads_again`]).
    pub fn window_context<'a>(&'a self, confinement: &'a Confinement) -> Context<'a> {
        Context {
            reads_again: true,
            ..self.context(confinement)
        }
    }

    /// The board (with the landed work when `all`) for a window that holds the board of
    /// generation `known`: only what changed since, when that board is one of those kept
    /// ([`crate::board`]). The desktop and the served UI read the board so; a store that
    /// shares the tasks it read again ([`baton_core::TaskStore::board_again`]: the folder) has
    /// the views of the tasks that did not change kept rather than built again.
    pub fn board(
        &self,
        confinement: &Confinement,
        all: bool,
        known: Option<u64>,
    ) -> Result<BoardUpdate> {
        let cx = self.window_context(confinement);
        if !all && let Some(board) = cx.board_again()? {
            let spend = baton_core::attempts::read_spend(&*cx.documents)?;
            let lease = self.tasks.lease();
            return Ok(self.boards.update_shared(board, lease, spend, known));
        }
        let report = crate::Operation::run(crate::tasks::Status { all }, &cx)?;
        Ok(self.boards.update(report, all, known))
    }

    /// How the project was reached (the variables a process started for it is given).
    pub fn reach(&self) -> &[(String, String)] {
        &self.reach
    }

    /// Where a team working this project keeps its tasks and records, and this machine's
    /// folder.
    pub fn team_stores(&self) -> baton_team::TeamStores<'_> {
        baton_team::TeamStores {
            tasks: &*self.tasks,
            team: &*self.team,
            documents: &*self.documents,
            local: &self.local,
        }
    }

    /// The project's change feed: the folder's files, or the database's notifications and
    /// this machine's folder.
    pub fn feed(&self, mode: WatchMode) -> baton_live::Result<ChangeFeed> {
        let stores = Stores {
            tasks: self.tasks.clone(),
            signals: self.signals.clone(),
            documents: self.documents.clone(),
            team: self.team.clone(),
        };
        ChangeFeed::start_on(&self.local, stores, mode)
    }

    /// What the project is, for a window's title: its folder, goal and where it is kept.
    pub fn info(&self) -> ProjectInfo {
        let in_database = self.tasks.shared_across_machines();
        let goal = self
            .tasks
            .notes()
            .ok()
            .and_then(|notes| baton_core::notes::goal_of(&notes.master_plan));
        ProjectInfo {
            path: self.local().project_dir().display().to_string(),
            goal,
            store: in_database.then(|| self.tasks.describe()),
        }
    }

    /// The handoff graph (invocations, handoffs and parallel runs as a directed graph), as
    /// `baton handoff graph`, the desktop and the served UI show it.
    pub fn handoff_graph(&self) -> Result<baton_agents::graph::HandoffGraph, crate::Error> {
        let orchestrator =
            baton_agents::Orchestrator::open_on(self.local(), self.documents.clone())?;
        Ok(baton_agents::graph::HandoffGraph::build(
            &orchestrator.state()?,
        ))
    }

    /// How long claims hold a task.
    pub fn lease(&self) -> Duration {
        self.tasks.lease()
    }
}

/// The variables that bring a process started for the project to the store `choice` chose:
/// the URL and project name given at run time (a folder's pointer needs none: the process
/// starts in the project folder), and the lease.
fn reach(choice: &Choice<'_>, lease: Duration) -> Vec<(String, String)> {
    let mut reach = Vec::new();
    if let Some(store) = choice.store {
        reach.push(("BATON_STORE".to_string(), store.to_string()));
    }
    if let Some(name) = choice.project {
        reach.push(("BATON_PROJECT".to_string(), name.to_string()));
    }
    reach.push((
        "BATON_LEASE".to_string(),
        format!("{}ms", lease.as_millis()),
    ));
    reach
}

/// Where a project is: which folder, and which database project if its tasks are kept in one.
enum Location {
    Folder(Layout),
    Database {
        /// The local folder (it may not exist yet when the URL came at run time).
        layout: Layout,
        url: String,
        name: String,
    },
}

impl Location {
    /// A URL given at run time wins, and needs no folder at all: a worker on another machine
    /// reaches the project with the URL alone (a folder found on the way keeps the local
    /// parts, and names the project when its pointer does). Otherwise the folder decides:
    /// its pointer, or its own tasks.
    fn find(choice: &Choice<'_>, cwd: &Path) -> Result<Location> {
        let located = Layout::locate(choice.dir, cwd);
        if let Some(url) = choice.store {
            let layout = located.ok();
            let pointer = layout.as_ref().map(read_pointer).transpose()?.flatten();
            let name = match (choice.project, &pointer) {
                (Some(name), _) => name.to_string(),
                (None, Some(pointer)) => pointer.project.clone(),
                (None, None) => default_name(layout.as_ref().map_or(cwd, |l| l.project_dir()))?,
            };
            let layout = layout.unwrap_or_else(|| Layout::for_project(cwd));
            return Ok(Location::Database {
                layout,
                url: url.to_string(),
                name,
            });
        }
        let layout = located?;
        Ok(match read_pointer(&layout)? {
            Some(pointer) => Location::Database {
                name: choice.project.unwrap_or(&pointer.project).to_string(),
                url: pointer.store,
                layout,
            },
            None => Location::Folder(layout),
        })
    }
}

/// Refuses to point a folder that holds its own tasks at a database.
fn check_no_folder_project(project_dir: &Path) -> Result<()> {
    let layout = Layout::for_project(project_dir);
    if layout.tasks_file().exists() {
        return Err(Error::input(
            "store",
            format!(
                "{} holds a folder project; `baton store import` copies it into a database",
                layout.root().display()
            ),
        ));
    }
    Ok(())
}

/// The project name given, or else the default for a project in `project_dir`.
fn chosen_name(name: Option<&str>, project_dir: &Path) -> Result<String> {
    match name {
        Some(name) => Ok(name.to_string()),
        None => default_name(project_dir),
    }
}

/// The project name a database project gets unless told: the project folder's name.
pub fn default_name(project_dir: &Path) -> Result<String> {
    let name = project_dir
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_string();
    baton_core::names::validate_name("project name", &name).map_err(|_| {
        Error::input(
            "project",
            format!(
                "the folder name {:?} cannot name a project; give one with --project NAME",
                project_dir.display()
            ),
        )
    })?;
    Ok(name)
}

/// The folder's pointer, if it has one.
pub fn read_pointer(layout: &Layout) -> Result<Option<Pointer>> {
    let path = layout.pointer_file();
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(StoreError::io(path, e).into()),
    };
    serde_json::from_slice(&bytes).map(Some).map_err(|e| {
        StoreError::Corrupt {
            path: path.clone(),
            line: e.line(),
            column: e.column(),
            message: format!("{e}; it should be {{\"store\": URL, \"project\": NAME}}"),
        }
        .into()
    })
}

/// Writes the pointer to project `name` at `url` into the folder of `project_dir` (created if
/// needed), with any password taken out of the URL. Refuses a folder that holds tasks of its
/// own. Returns the pointer written.
pub fn write_pointer(project_dir: &Path, url: &str, name: &str) -> Result<Pointer> {
    baton_core::names::validate_name("project name", name)?;
    check_no_folder_project(project_dir)?;
    let layout = Layout::for_project(project_dir);
    std::fs::create_dir_all(layout.root()).map_err(|e| StoreError::io(layout.root(), e))?;
    let pointer = Pointer {
        store: without_password(url),
        project: name.to_string(),
    };
    let mut bytes = serde_json::to_vec_pretty(&pointer).expect("a pointer serialises");
    bytes.push(b'\n');
    write_atomic(&layout.pointer_file(), &bytes)?;
    Ok(pointer)
}

/// `url` with `password` for this connection (as its `password` parameter, percent-encoded),
/// replacing any it had. Kept in memory only: [`write_pointer`] writes the URL without it.
pub fn with_password(url: &str, password: &str) -> String {
    let base = without_password(url);
    let encoded: String = password
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect();
    let joint = if base.contains('?') { '&' } else { '?' };
    format!("{base}{joint}password={encoded}")
}

/// `url` with any password removed (`user:secret@` becomes `user@`, `password=` parameters
/// go), so a URL can be written down.
pub fn without_password(url: &str) -> String {
    let (main, query) = match url.split_once('?') {
        Some((main, query)) => (main, Some(query)),
        None => (url, None),
    };
    let main = match main.split_once("://") {
        Some((scheme, rest)) => match rest.rsplit_once('@') {
            Some((userinfo, host)) => {
                let user = userinfo.split(':').next().unwrap_or_default();
                format!("{scheme}://{user}@{host}")
            }
            None => main.to_string(),
        },
        None => main.to_string(),
    };
    let query: Vec<&str> = query
        .into_iter()
        .flat_map(|q| q.split('&'))
        .filter(|pair| !pair.is_empty() && !pair.starts_with("password="))
        .collect();
    if query.is_empty() {
        main
    } else {
        format!("{main}?{}", query.join("&"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_never_reaches_the_pointer() {
        assert_eq!(
            without_password("postgres://baton:s3cret@db.example:5432/team?sslmode=require"),
            "postgres://baton@db.example:5432/team?sslmode=require"
        );
        assert_eq!(
            without_password("postgresql://u@h/db?password=x&sslmode=verify-full"),
            "postgresql://u@h/db?sslmode=verify-full"
        );
        assert_eq!(without_password("postgres://h/db"), "postgres://h/db");
    }

    #[test]
    fn a_typed_password_is_a_percent_encoded_parameter_replacing_any_other() {
        assert_eq!(
            with_password("postgres://u:old@h/db?sslmode=require", "p@ss w&rd"),
            "postgres://u@h/db?sslmode=require&password=p%40ss%20w%26rd"
        );
        assert_eq!(
            with_password("postgres://u@h/db", "x"),
            "postgres://u@h/db?password=x"
        );
    }

    #[test]
    fn a_pointer_is_written_without_a_password_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let pointer = write_pointer(dir.path(), "postgres://a:pw@localhost/db", "web").unwrap();
        let layout = Layout::for_project(dir.path());
        let path = layout.pointer_file();
        assert!(path.ends_with(".coordination/store.json"));
        assert!(!std::fs::read_to_string(&path).unwrap().contains("pw"));
        assert_eq!(read_pointer(&layout).unwrap(), Some(pointer));
        assert!(layout.holds_project());
    }

    #[test]
    fn a_corrupt_pointer_is_refused_with_its_path() {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::for_project(dir.path());
        std::fs::create_dir_all(layout.root()).unwrap();
        std::fs::write(layout.pointer_file(), "{not json").unwrap();
        let err = read_pointer(&layout).unwrap_err();
        assert_eq!(err.kind(), baton_core::ErrorKind::CorruptFile, "{err}");
        assert!(err.to_string().contains("store.json"), "{err}");
    }

    #[test]
    fn a_window_reads_again_what_a_whole_read_reads() {
        use baton_core::{ClaimRequest, NewTask, TaskStore};
        let dir = tempfile::tempdir().unwrap();
        let store = FolderStore::init(dir.path(), "goal", None).unwrap();
        let project = OpenProject::folder(store.clone());
        let confinement = Confinement::anywhere(dir.path());
        let (window, user) = (
            project.window_context(&confinement),
            project.context(&confinement),
        );
        assert!(window.reads_again && !user.reads_again);
        let same = |step: &str| {
            let json = |file: baton_core::TaskFile| serde_json::to_string(&file).unwrap();
            let (read, _) = window.snapshot().unwrap();
            let (whole, _) = user.snapshot().unwrap();
            assert_eq!(json(read), json(whole), "{step}");
            let counts = |report: baton_core::StatusReport| report.counts;
            assert_eq!(
                counts(window.status().unwrap()),
                counts(user.status().unwrap()),
                "{step}"
            );
        };
        same("empty");
        for i in 0..5 {
            let new = NewTask {
                description: format!("task {i}"),
                dependencies: if i > 0 {
                    vec![format!("task-{i}")]
                } else {
                    vec![]
                },
                ..Default::default()
            };
            store.add_task(new).unwrap();
            same(&format!("added {i}"));
        }
        store.claim(&ClaimRequest::next("w1")).unwrap().unwrap();
        same("claimed");
        // Written by another tool, out of Baton's layout: read whole, as the user reads it.
        let tasks = store.layout().tasks_file();
        let compact: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&tasks).unwrap()).unwrap();
        std::fs::write(&tasks, serde_json::to_vec(&compact).unwrap()).unwrap();
        same("compact");
        // A broken file is refused to both alike.
        std::fs::write(&tasks, b"{\"tasks\": [").unwrap();
        assert!(window.snapshot().is_err() && user.snapshot().is_err());
    }

    #[test]
    fn a_folder_project_is_not_overwritten_by_a_pointer() {
        let dir = tempfile::tempdir().unwrap();
        FolderStore::init(dir.path(), "goal", None).unwrap();
        let err = write_pointer(dir.path(), "postgres://localhost/db", "x").unwrap_err();
        assert!(err.to_string().contains("store import"), "{err}");
    }
}

/// Which project is open: what the desktop's and the served UI's title shows.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, serde::Serialize)]
pub struct ProjectInfo {
    /// The project's folder on this machine.
    pub path: String,
    pub goal: Option<String>,
    /// Where the project is kept when not in the folder: the database and project name
    /// (never a password). Browsers stay this machine's either way.
    pub store: Option<String>,
}
