//! [`Orchestrator`]: the orchestration operations on one project, the service layer the CLI,
//! the MCP server and the desktop app share. The operations themselves live in `invoke`,
//! `parallel`, `handoff` and `routing`; this module opens the project's registry and
//! configuration.

use std::path::PathBuf;
use std::sync::Arc;

use baton_core::{Confinement, DocumentStore, Layout};
use baton_folder::FolderStore;
use serde::{Deserialize, Serialize};

use crate::error::{AgentError, Result};
use crate::registry::Registry;
use crate::routing::{RoutingRecommendation, Workflows};
use crate::state::{self, OrchestrationState};

/// `.coordination/orchestration/config.json`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Config {
    /// More folders of agent definitions, searched after `.claude/agents/` and `src/claude/`
    /// (relative to the project folder).
    #[serde(default)]
    pub agent_dirs: Vec<PathBuf>,
}

/// Orchestration over one project.
#[derive(Clone)]
pub struct Orchestrator {
    pub(crate) layout: Layout,
    /// Where the record of invocations, handoffs and parallel runs is kept: the folder, or
    /// the database that keeps the project.
    pub(crate) documents: Arc<dyn DocumentStore>,
    pub(crate) registry: Registry,
    /// Where steering files and artifacts named in a request may be (the project, unless the
    /// caller is the user or the user widened it).
    pub(crate) confinement: Confinement,
}

impl std::fmt::Debug for Orchestrator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Orchestrator")
            .field("layout", &self.layout)
            .field("registry", &self.registry)
            .finish_non_exhaustive()
    }
}

impl Orchestrator {
    /// Loads the configuration and agent registry of a folder project, which keeps its
    /// orchestration record too.
    pub fn open(project: &FolderStore) -> Result<Orchestrator> {
        Orchestrator::open_on(project.layout(), Arc::new(project.clone()))
    }

    /// Loads the configuration and agent registry from the project's local folder `local`
    /// (agent definitions are files in the repository), with the orchestration record kept in
    /// `documents`.
    pub fn open_on(local: &Layout, documents: Arc<dyn DocumentStore>) -> Result<Orchestrator> {
        let layout = local.clone();
        let config = Self::config(&layout)?;
        let registry = Registry::load(layout.project_dir(), &config.agent_dirs);
        let confinement = Confinement::project(layout.project_dir())?;
        Ok(Orchestrator {
            layout,
            documents,
            registry,
            confinement,
        })
    }

    /// The same orchestrator with paths in requests checked against `confinement` instead of
    /// the project folder ([`Confinement::anywhere`] for the user's own commands).
    pub fn with_confinement(mut self, confinement: Confinement) -> Orchestrator {
        self.confinement = confinement;
        self
    }

    fn config(layout: &Layout) -> Result<Config> {
        let path = state::dir(layout).join("config.json");
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| AgentError::Workflows {
                message: format!("not a valid configuration at line {}: {e}", e.line()),
                path,
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Config::default()),
            Err(e) => Err(baton_core::StoreError::io(path, e).into()),
        }
    }

    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Everything recorded: active and recent invocations, parallel runs, handoffs, conflicts.
    pub fn state(&self) -> Result<OrchestrationState> {
        Ok(state::load(&*self.documents)?)
    }

    pub fn workflows_file(&self) -> PathBuf {
        state::dir(&self.layout).join("workflows.json")
    }

    /// The workflows in use (the file, or the defaults), checked.
    pub fn workflows(&self) -> Result<Workflows> {
        let path = self.workflows_file();
        let workflows = Workflows::load(&path)?;
        workflows.validate(&path, &self.registry)?;
        Ok(workflows)
    }

    /// Writes the default workflows file for editing, unless one exists (or `force`).
    pub fn write_workflows(&self, force: bool) -> Result<bool> {
        let path = self.workflows_file();
        if path.exists() && !force {
            return Ok(false);
        }
        let dir = state::dir(&self.layout);
        std::fs::create_dir_all(&dir).map_err(|e| baton_core::StoreError::io(&dir, e))?;
        let mut bytes = serde_json::to_vec_pretty(&Workflows::default()).expect("serialises");
        bytes.push(b'\n');
        baton_fs::write_atomic(&path, &bytes)?;
        Ok(true)
    }

    /// `get_routing_recommendation`.
    pub fn get_routing_recommendation(&self, task: &str) -> Result<RoutingRecommendation> {
        crate::error::check_text("task", task, 64 * 1024, true)?;
        Ok(self.workflows()?.recommend(task))
    }
}
