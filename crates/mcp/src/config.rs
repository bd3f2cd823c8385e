//! `.coordination/mcp/config.json`: the user's standing settings for `baton mcp`, today the
//! folders beyond the local that agents' tool calls may name (`allow_paths`, like
//! `--allow-path`). It is the user's file: no tool writes it.

use std::path::{Path, PathBuf};

use baton_api::Error;
use baton_core::{Confinement, ErrorKind, Layout};
use serde::Deserialize;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpConfig {
    /// Folders (relative to the local folder, or absolute) that tool calls may also name.
    #[serde(default)]
    pub allow_paths: Vec<PathBuf>,
}

/// The configuration file of the project whose local folder is `local`.
pub fn path(local: &Layout) -> PathBuf {
    local.root().join("mcp").join("config.json")
}

/// Reads the configuration; none is the default. A file that does not parse is an error that
/// names it, so a typo never silently drops a setting.
pub fn load(local: &Layout) -> Result<McpConfig, Error> {
    let file = path(local);
    match std::fs::read(&file) {
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
            Error::new(
                ErrorKind::CorruptFile,
                format!(
                    "{} is not a valid configuration (line {}, column {}): {e}; fix or remove it",
                    file.display(),
                    e.line(),
                    e.column()
                ),
            )
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(McpConfig::default()),
        Err(e) => Err(Error::new(
            ErrorKind::Io,
            format!("cannot read {}: {e}", file.display()),
        )),
    }
}

/// Where agents' paths may lead: the project, widened by the configuration file's
/// `allow_paths` and by `allowed` (from `--allow-path`, absolute or relative to the project).
pub fn confinement(local: &Layout, allowed: &[PathBuf]) -> Result<Confinement, Error> {
    let config = load(local)?;
    let project_dir = local.project_dir();
    let mut confinement = Confinement::project(project_dir)?;
    for dir in config.allow_paths.iter().chain(allowed) {
        confinement = confinement.allow(dir).map_err(|e| {
            Error::new(
                e.kind(),
                format!("cannot allow {}: {e}", Path::new(dir).display()),
            )
        })?;
    }
    Ok(confinement)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowed_folders_come_from_the_file_and_the_command_line() {
        let dir = tempfile::tempdir().unwrap();
        let project = baton_folder::FolderStore::init(dir.path(), "config", None).unwrap();
        let shared = dir.path().join("shared");
        let extra = tempfile::tempdir().unwrap();
        std::fs::create_dir(&shared).unwrap();
        assert_eq!(confinement(project.layout(), &[]).unwrap().roots().len(), 1);
        std::fs::create_dir_all(path(project.layout()).parent().unwrap()).unwrap();
        std::fs::write(path(project.layout()), r#"{"allow_paths": ["shared"]}"#).unwrap();
        let c = confinement(project.layout(), &[extra.path().to_path_buf()]).unwrap();
        assert_eq!(c.roots().len(), 3);
        assert!(c.resolve("path", "shared/x").is_ok());
        assert!(
            c.resolve("path", extra.path().join("y").to_str().unwrap())
                .is_ok()
        );
        std::fs::write(path(project.layout()), r#"{"allow_path": ["shared"]}"#).unwrap();
        let err = confinement(project.layout(), &[]).unwrap_err();
        assert!(err.to_string().contains("config.json"), "{err}");
        assert_eq!(err.kind(), ErrorKind::CorruptFile);
        std::fs::write(path(project.layout()), r#"{"allow_paths": ["missing"]}"#).unwrap();
        let err = confinement(project.layout(), &[]).unwrap_err();
        assert!(err.to_string().contains("missing"), "{err}");
        assert_eq!(err.kind(), ErrorKind::InvalidInput);
    }
}
