//! The built-in catalog: the source design's 18 agents with its default models (opus for
//! high-level-advisor, independent-thinker, security and roadmap; sonnet for the rest) and
//! delegation lists. They ship as markdown in `crates/agents/catalog/`, in the same format as
//! user files, so `baton agents init` can write them out as editable files.

use std::fs;
use std::path::{Path, PathBuf};

use baton_core::StoreError;

use crate::definition::{self, AgentDefinition, Source};

/// `(name, file text)` of every built-in agent.
pub const BUILTIN: [(&str, &str); 18] = [
    ("orchestrator", include_str!("../catalog/orchestrator.md")),
    ("analyst", include_str!("../catalog/analyst.md")),
    ("architect", include_str!("../catalog/architect.md")),
    ("planner", include_str!("../catalog/planner.md")),
    ("implementer", include_str!("../catalog/implementer.md")),
    ("critic", include_str!("../catalog/critic.md")),
    ("qa", include_str!("../catalog/qa.md")),
    ("devops", include_str!("../catalog/devops.md")),
    ("security", include_str!("../catalog/security.md")),
    ("explainer", include_str!("../catalog/explainer.md")),
    (
        "task-generator",
        include_str!("../catalog/task-generator.md"),
    ),
    (
        "high-level-advisor",
        include_str!("../catalog/high-level-advisor.md"),
    ),
    ("roadmap", include_str!("../catalog/roadmap.md")),
    ("retrospective", include_str!("../catalog/retrospective.md")),
    ("memory", include_str!("../catalog/memory.md")),
    ("skillbook", include_str!("../catalog/skillbook.md")),
    (
        "independent-thinker",
        include_str!("../catalog/independent-thinker.md"),
    ),
    (
        "pr-comment-responder",
        include_str!("../catalog/pr-comment-responder.md"),
    ),
];

/// The built-in agents, parsed.
pub fn builtin() -> Vec<AgentDefinition> {
    BUILTIN
        .iter()
        .map(|(name, text)| {
            definition::parse(text, Source::Builtin)
                .unwrap_or_else(|e| panic!("built-in agent {name} is invalid: {e}"))
        })
        .collect()
}

/// What `agents init` did with each file.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Written {
    pub path: PathBuf,
    /// False when the file existed and was left alone (no `--force`).
    pub written: bool,
}

/// Writes the catalog into `dir` as editable files. Existing files are kept unless `force`.
pub fn write_catalog(dir: &Path, force: bool) -> Result<Vec<Written>, StoreError> {
    fs::create_dir_all(dir).map_err(|e| StoreError::io(dir, e))?;
    let mut out = Vec::new();
    for (name, text) in BUILTIN {
        let path = dir.join(format!("{name}.md"));
        let exists = path.exists();
        if !exists || force {
            baton_fs::write_atomic(&path, text.as_bytes())?;
        }
        out.push(Written {
            written: !exists || force,
            path,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalog_has_the_source_designs_agents_models_and_valid_links() {
        let agents = builtin();
        assert_eq!(agents.len(), 18);
        for agent in &agents {
            let opus = [
                "high-level-advisor",
                "independent-thinker",
                "security",
                "roadmap",
            ];
            let expected = if opus.contains(&agent.name.as_str()) {
                "opus"
            } else {
                "sonnet"
            };
            assert_eq!(agent.model, expected, "{}", agent.name);
            for target in agent.delegates_to.iter().chain(&agent.called_by) {
                assert!(
                    target == "user" || agents.iter().any(|a| &a.name == target),
                    "{} names unknown agent {target}",
                    agent.name
                );
            }
            assert!(!agent.instructions.is_empty());
        }
    }
}
