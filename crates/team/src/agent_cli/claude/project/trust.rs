//! Claude Code's folder trust. Until the user has trusted a folder, the current Claude Code
//! (2.1.3xx) ignores its project settings' MCP servers and hooks (`claude mcp list` says
//! "Pending approval"): a worker started there has no Baton tools, and no hook renews its
//! lease. Claude Code records the trust in the user's own configuration file
//! (`$CLAUDE_CONFIG_DIR/.claude.json`, else `~/.claude.json`) as
//! `projects[FOLDER].hasTrustDialogAccepted`, and a folder inside a trusted one is trusted.
//!
//! `baton setup claude --approve` records it there (the user asked it to approve Baton for
//! this project), keeping what else the file holds, and says which file it changed; what the
//! entry held before is kept in setup's record, and `--remove` puts it back.

use std::path::{Path, PathBuf};

use baton_core::StoreError;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::TeamError as Error;

/// The key Claude Code keeps a folder's trust in.
const TRUSTED: &str = "hasTrustDialogAccepted";

/// The user's Claude Code configuration file, where it keeps folder trust: none without a
/// home folder.
pub fn config_file() -> Option<PathBuf> {
    config_file_from(
        std::env::var_os("CLAUDE_CONFIG_DIR").map(PathBuf::from),
        std::env::var_os("HOME").map(PathBuf::from),
    )
}

fn config_file_from(config_dir: Option<PathBuf>, home: Option<PathBuf>) -> Option<PathBuf> {
    match config_dir.filter(|d| d.is_absolute()) {
        Some(dir) => Some(dir.join(".claude.json")),
        None => home
            .filter(|h| h.is_absolute())
            .map(|h| h.join(".claude.json")),
    }
}

/// What trusting a folder changed, so it can be put back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trusted {
    /// The configuration file changed.
    pub file: PathBuf,
    /// The folder trusted (its key in `projects`).
    pub folder: String,
    /// The key's value before; `None`: it was not there.
    pub before: Option<Value>,
}

/// Whether `folder` (or a folder it is in) is trusted in the configuration file `file`.
pub fn is_trusted(file: &Path, folder: &Path) -> Result<bool, Error> {
    let Some(config) = read(file)? else {
        return Ok(false);
    };
    let projects = config.get("projects").and_then(Value::as_object);
    Ok(folder.ancestors().any(|dir| {
        projects
            .and_then(|p| p.get(&dir.display().to_string()))
            .and_then(|entry| entry.get(TRUSTED))
            .and_then(Value::as_bool)
            == Some(true)
    }))
}

/// Trusts `folder` in `file`, unless it is trusted already; `dry`: says so, changes nothing.
/// `None` when nothing had to change.
pub fn trust(file: &Path, folder: &Path, dry: bool) -> Result<Option<Trusted>, Error> {
    if is_trusted(file, folder)? {
        return Ok(None);
    }
    let key = folder.display().to_string();
    let mut config = read(file)?.unwrap_or_default();
    let entry = project_entry(&mut config, &key)?;
    let before = entry.insert(TRUSTED.into(), Value::Bool(true));
    if !dry {
        write(file, &config)?;
    }
    Ok(Some(Trusted {
        file: file.to_path_buf(),
        folder: key,
        before,
    }))
}

/// Puts back what `trusted` changed: the key's old value, or no key (and no entry, when
/// nothing else is in it); `dry`: changes nothing. Whether there was something to put back.
pub fn untrust(trusted: &Trusted, dry: bool) -> Result<bool, Error> {
    let Some(mut config) = read(&trusted.file)? else {
        return Ok(false);
    };
    let Some(projects) = config.get_mut("projects").and_then(Value::as_object_mut) else {
        return Ok(false);
    };
    let Some(entry) = projects
        .get_mut(&trusted.folder)
        .and_then(Value::as_object_mut)
    else {
        return Ok(false);
    };
    match &trusted.before {
        Some(value) => {
            entry.insert(TRUSTED.into(), value.clone());
        }
        None => {
            entry.remove(TRUSTED);
            if entry.is_empty() {
                projects.remove(&trusted.folder);
            }
        }
    }
    if !dry {
        write(&trusted.file, &config)?;
    }
    Ok(true)
}

/// The object for `key` in the file's `projects`, made when missing; a file whose `projects`
/// is not an object is refused.
fn project_entry<'a>(
    config: &'a mut Map<String, Value>,
    key: &str,
) -> Result<&'a mut Map<String, Value>, Error> {
    let projects = config
        .entry("projects")
        .or_insert_with(|| Value::Object(Map::new()));
    let bad = || {
        Error::from(StoreError::InvalidInput {
            field: "file",
            reason: format!(
                "Claude Code's configuration has a `projects` that is not an object at {key:?}; \
                 trust the folder by starting `claude` there once instead"
            ),
        })
    };
    projects
        .as_object_mut()
        .ok_or_else(bad)?
        .entry(key)
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or_else(bad)
}

fn read(file: &Path) -> Result<Option<Map<String, Value>>, Error> {
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(StoreError::io(file, e).into()),
    };
    if text.trim().is_empty() {
        return Ok(Some(Map::new()));
    }
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(map)) => Ok(Some(map)),
        _ => Err(StoreError::InvalidInput {
            field: "file",
            reason: format!(
                "{} is not a JSON object; Baton does not change it (start `claude` in the \
                 project once and accept its trust prompt instead)",
                file.display()
            ),
        }
        .into()),
    }
}

/// Writes the file whole and atomically, readable by its owner only (it holds the user's
/// account details).
fn write(file: &Path, config: &Map<String, Value>) -> Result<(), Error> {
    let mut text = serde_json::to_string_pretty(config).expect("JSON serialises");
    text.push('\n');
    Ok(baton_fs::write_atomic_private(file, text.as_bytes())?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_config_file_is_where_claude_code_keeps_it() {
        let home = Some(PathBuf::from("/home/u"));
        assert_eq!(
            config_file_from(None, home.clone()),
            Some(PathBuf::from("/home/u/.claude.json"))
        );
        assert_eq!(
            config_file_from(Some(PathBuf::from("/cfg")), home),
            Some(PathBuf::from("/cfg/.claude.json"))
        );
        assert_eq!(config_file_from(Some("rel".into()), None), None);
    }

    #[test]
    fn trusting_keeps_the_rest_of_the_file_and_removing_puts_it_back() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(".claude.json");
        let original = serde_json::json!({
            "userID": "u",
            "projects": {"/other": {"hasTrustDialogAccepted": true, "allowedTools": []},
                         "/p": {"history": [1]}}
        });
        std::fs::write(&file, original.to_string()).unwrap();
        let project = Path::new("/p");
        assert!(!is_trusted(&file, project).unwrap());
        assert!(trust(&file, project, true).unwrap().is_some());
        assert!(
            !is_trusted(&file, project).unwrap(),
            "a dry run changes nothing"
        );

        let trusted = trust(&file, project, false).unwrap().unwrap();
        assert_eq!(trusted.before, None);
        assert!(is_trusted(&file, project).unwrap());
        assert!(is_trusted(&file, Path::new("/p/.coordination/worktrees/t1")).unwrap());
        assert_eq!(trust(&file, project, false).unwrap(), None, "once");
        let now: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(now["userID"], "u");
        assert_eq!(now["projects"]["/p"]["history"], serde_json::json!([1]));
        assert_eq!(now["projects"]["/other"], original["projects"]["/other"]);

        assert!(untrust(&trusted, false).unwrap());
        let back: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(back, original);

        // A folder that had no entry: its entry goes with the trust.
        let fresh = trust(&file, Path::new("/q"), false).unwrap().unwrap();
        untrust(&fresh, false).unwrap();
        let back: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(back, original);
    }

    #[test]
    fn a_file_that_is_not_claude_codes_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(".claude.json");
        for text in ["[1]", "{not json", r#"{"projects": 3}"#] {
            std::fs::write(&file, text).unwrap();
            let err = trust(&file, Path::new("/p"), false).unwrap_err();
            assert!(err.to_string().contains("claude"), "{text}: {err}");
            assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
        }
        // None yet: made, with the trust alone.
        std::fs::remove_file(&file).unwrap();
        trust(&file, Path::new("/p"), false).unwrap();
        assert!(is_trusted(&file, Path::new("/p")).unwrap());
    }
}
