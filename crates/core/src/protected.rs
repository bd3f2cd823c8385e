//! The paths no landing may change. An agent's branch is the agent's to write, and landing it
//! (the team's merge queue, `leader merge`) puts its files in the lead's checkout, where Baton
//! and the lead's own tools read them: a `.coordination/review.toml` that names a check to run
//! unsandboxed, a `team/profiles.toml` that turns the sandbox off, an approval policy, a
//! `.claude/settings.json` whose hooks the lead's Claude Code runs. So a landing that would add,
//! change or remove any of these is refused, naming the files, and Baton reads its
//! configuration from the lead's `.coordination/` only (written by the lead, never by a merge).
//!
//! `.coordination/` is always protected; `review.toml`'s `protect` names the rest (by default
//! the agent CLIs' project settings, which each CLI's adapter in `baton-team` names). Patterns are written as reservations are
//! ([`crate::reservations::normalise`]): project-relative, a folder ends in `/`, globs allowed.

use crate::error::{Result, StoreError};
use crate::reservations::{covers, normalise};

/// Protected whatever `review.toml` says: Baton's own folder.
pub const ALWAYS: &str = ".coordination/";

/// `.coordination/` and the project's own list, normalised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtectedPaths {
    patterns: Vec<String>,
}

impl ProtectedPaths {
    /// `.coordination/` and each of `patterns`; an error names a pattern that is not a
    /// project-relative path or glob.
    pub fn new(patterns: &[String]) -> Result<ProtectedPaths> {
        let mut out = vec![ALWAYS.to_string()];
        for pattern in patterns {
            let normal = normalise(pattern).map_err(|e| StoreError::InvalidInput {
                field: "protect",
                reason: e.to_string(),
            })?;
            if !out.contains(&normal) {
                out.push(normal);
            }
        }
        Ok(ProtectedPaths { patterns: out })
    }

    /// The patterns, `.coordination/` first.
    pub fn patterns(&self) -> &[String] {
        &self.patterns
    }

    /// Whether changing `path` (project-relative, as git names a changed file) touches a
    /// protected path: the path itself, a file inside a protected folder, or a file or link
    /// standing where a protected folder is (`.coordination` as a file).
    pub fn covers(&self, path: &str) -> bool {
        self.patterns.iter().any(|pattern| covers(pattern, path))
    }

    /// The paths of `changed` this protects, in their order.
    pub fn among(&self, changed: &[String]) -> Vec<String> {
        changed
            .iter()
            .filter(|path| self.covers(path))
            .cloned()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn protected(patterns: &[&str]) -> ProtectedPaths {
        ProtectedPaths::new(&patterns.iter().map(|p| p.to_string()).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn coordination_is_protected_with_an_empty_list() {
        let none = protected(&[]);
        assert!(none.covers(".coordination/review.toml"));
        assert!(none.covers(".coordination/team/profiles.toml"));
        assert!(none.covers(".coordination"), "a file where the folder is");
        assert!(!none.covers(".coordination-notes.md"));
        assert!(!none.covers("src/.coordination.rs"));
        assert!(!none.covers("src/lib.rs"));
    }

    #[test]
    fn files_folders_and_globs_are_matched_as_written() {
        let list = protected(&[".mcp.json", ".claude/", "ci/**/*.sh", "./Makefile"]);
        assert!(list.covers(".mcp.json"));
        assert!(!list.covers("sub/.mcp.json"));
        assert!(list.covers(".claude/settings.json"));
        assert!(list.covers(".claude"));
        assert!(list.covers("ci/deploy/run.sh"));
        assert!(!list.covers("ci/deploy/run.py"));
        assert!(list.covers("Makefile"));
        assert_eq!(
            list.among(&["src/a.rs", ".claude/x", "Makefile"].map(String::from)),
            vec![".claude/x".to_string(), "Makefile".to_string()]
        );
    }

    #[test]
    fn a_pattern_out_of_the_project_is_refused_by_name() {
        for bad in ["/etc/passwd", "../x", "a/../../b", "x\u{1b}y"] {
            let err = ProtectedPaths::new(&[bad.to_string()]).unwrap_err();
            assert!(err.to_string().contains("protect"), "{bad}: {err}");
        }
    }
}
