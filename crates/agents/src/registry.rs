//! The agent registry: the built-in catalog overlaid with the project's own definitions.
//!
//! Folders are searched in order (`.claude/agents/`, `src/claude/`, then the folders named in
//! `.coordination/orchestration/config.json`); the first definition of a name wins, and any
//! file wins over the built-in agent of the same name. Bad definitions are reported with file
//! and line and left out; everything else still loads.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::catalog;
use crate::definition::{self, AgentDefinition, Diagnostic, Source};

/// Folders searched for definitions, relative to the project, before configured ones.
pub const SEARCH_PATH: [&str; 2] = [".claude/agents", "src/claude"];

/// The pseudo-agent that starts chains (`called_by: [user]`).
pub const USER: &str = "user";

#[derive(Debug, Clone, Default, Serialize)]
pub struct Registry {
    pub agents: BTreeMap<String, AgentDefinition>,
    pub diagnostics: Vec<Diagnostic>,
}

impl Registry {
    /// Loads the catalog and the definitions under `project_dir`, with `extra_dirs` (relative
    /// to the project, or absolute) searched after the standard folders.
    pub fn load(project_dir: &Path, extra_dirs: &[PathBuf]) -> Registry {
        let mut registry = Registry::default();
        let dirs: Vec<PathBuf> = SEARCH_PATH
            .iter()
            .map(|d| project_dir.join(d))
            .chain(extra_dirs.iter().map(|d| project_dir.join(d)))
            .collect();
        for dir in dirs {
            registry.load_folder(&dir);
        }
        for agent in catalog::builtin() {
            registry.agents.entry(agent.name.clone()).or_insert(agent);
        }
        registry.check_links();
        registry
    }

    pub fn get(&self, name: &str) -> Option<&AgentDefinition> {
        self.agents.get(name)
    }

    /// The agent named `name`, or an error listing the known ones.
    pub fn require(&self, name: &str) -> Result<&AgentDefinition, crate::AgentError> {
        self.get(name)
            .ok_or_else(|| crate::AgentError::UnknownAgent {
                name: name.to_string(),
                known: self.agents.keys().cloned().collect(),
            })
    }

    fn load_folder(&mut self, dir: &Path) {
        let Ok(entries) = fs::read_dir(dir) else {
            return; // a folder that does not exist is simply not used
        };
        let mut files: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "md") && p.is_file())
            .collect();
        files.sort();
        // Names defined in this folder, to tell a duplicate from an override.
        let mut here: BTreeMap<String, PathBuf> = BTreeMap::new();
        for path in files {
            let source = Source::File { path: path.clone() };
            let text = match fs::read_to_string(&path) {
                Ok(text) => text,
                Err(e) => {
                    self.diagnostics.push(Diagnostic {
                        source,
                        line: None,
                        message: format!("cannot read: {e}"),
                        skipped: true,
                    });
                    continue;
                }
            };
            let agent = match definition::parse(&text, source.clone()) {
                Ok(agent) => agent,
                Err(diagnostic) => {
                    self.diagnostics.push(diagnostic);
                    continue;
                }
            };
            if let Some(first) = here.get(&agent.name) {
                self.diagnostics.push(Diagnostic {
                    source,
                    line: definition::line_of_key(&path, "name"),
                    message: format!(
                        "duplicate agent name {:?}: already defined in {}",
                        agent.name,
                        first.display()
                    ),
                    skipped: true,
                });
                continue;
            }
            here.insert(agent.name.clone(), path);
            // An earlier folder in the search path wins.
            self.agents.entry(agent.name.clone()).or_insert(agent);
        }
    }

    /// Reports (and drops) delegation links to agents that do not exist.
    fn check_links(&mut self) {
        let known: Vec<String> = self.agents.keys().cloned().collect();
        let mut found = Vec::new();
        for agent in self.agents.values_mut() {
            for (key, list) in [
                ("delegates_to", &mut agent.delegates_to),
                ("called_by", &mut agent.called_by),
            ] {
                let allowed =
                    |name: &String| known.contains(name) || (key == "called_by" && name == USER);
                for bad in list.iter().filter(|n| !allowed(n)) {
                    let line = match &agent.source {
                        Source::File { path } => definition::line_of_key(path, key),
                        Source::Builtin => None,
                    };
                    found.push(Diagnostic {
                        source: agent.source.clone(),
                        line,
                        message: format!("{} lists unknown agent {bad:?} in {key}", agent.name),
                        skipped: false,
                    });
                }
                list.retain(allowed);
            }
        }
        self.diagnostics.extend(found);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) {
        fs::create_dir_all(dir).unwrap();
        fs::write(dir.join(name), text).unwrap();
    }

    #[test]
    fn the_catalog_loads_when_the_project_has_no_definitions() {
        let dir = tempfile::tempdir().unwrap();
        let registry = Registry::load(dir.path(), &[]);
        assert_eq!(registry.agents.len(), 18);
        assert!(
            registry.diagnostics.is_empty(),
            "{:?}",
            registry.diagnostics
        );
        assert_eq!(registry.get("security").unwrap().model, "opus");
    }

    #[test]
    fn files_override_the_catalog_and_earlier_folders_win() {
        let dir = tempfile::tempdir().unwrap();
        let claude = dir.path().join(".claude/agents");
        write(
            &claude,
            "qa.md",
            "---\nname: qa\nmodel: haiku\n---\nProject QA\n",
        );
        write(
            &dir.path().join("src/claude"),
            "qa.md",
            "---\nname: qa\nmodel: opus\n---\nLower priority\n",
        );
        write(
            &dir.path().join("more"),
            "extra.md",
            "---\nname: extra\ndelegates_to: [qa]\n---\nExtra\n",
        );
        let registry = Registry::load(dir.path(), &[PathBuf::from("more")]);
        let qa = registry.get("qa").unwrap();
        assert_eq!(qa.model, "haiku");
        assert_eq!(qa.instructions, "Project QA");
        assert!(matches!(qa.source, Source::File { .. }));
        assert_eq!(registry.get("extra").unwrap().delegates_to, ["qa"]);
        assert_eq!(registry.agents.len(), 19);
    }

    #[test]
    fn bad_definitions_are_reported_and_the_rest_still_loads() {
        let dir = tempfile::tempdir().unwrap();
        let claude = dir.path().join(".claude/agents");
        write(
            &claude,
            "a-good.md",
            "---\nname: good\ndelegates_to: [qa, ghost]\n---\nOk\n",
        );
        write(&claude, "b-dup.md", "---\nname: good\n---\nSecond\n");
        write(&claude, "c-noname.md", "---\nmodel: opus\n---\n");
        write(&claude, "d-model.md", "---\nname: odd\nmodel: gpt-9\n---\n");
        let registry = Registry::load(dir.path(), &[]);
        assert_eq!(registry.get("good").unwrap().delegates_to, ["qa"]);
        assert!(registry.get("odd").is_none());
        assert_eq!(registry.agents.len(), 19);
        let messages: Vec<String> = registry.diagnostics.iter().map(|d| d.to_string()).collect();
        let has = |file: &str, line: usize, text: &str| {
            messages
                .iter()
                .any(|m| m.contains(&format!("{file}:{line}:")) && m.contains(text))
        };
        assert!(
            has("b-dup.md", 2, "duplicate agent name \"good\""),
            "{messages:#?}"
        );
        assert!(has("c-noname.md", 1, "missing `name`"), "{messages:#?}");
        assert!(has("d-model.md", 3, "unknown model"), "{messages:#?}");
        assert!(
            has("a-good.md", 3, "unknown agent \"ghost\" in delegates_to"),
            "{messages:#?}"
        );
    }
}
