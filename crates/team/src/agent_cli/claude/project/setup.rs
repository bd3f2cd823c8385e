//! Claude Code's project files set up for Baton (`baton setup claude`): applies
//! [`settings`](super::settings) to the project's files. Each
//! file is read, merged and written whole (atomically); what a file held before Baton first
//! changed it is recorded in `.coordination/setup/claude.json`, with what Baton wrote, so
//! `--remove` can put it back byte for byte when nobody changed it since, and otherwise takes
//! out only Baton's entries. `--approve` also trusts the project's folder in the user's own
//! Claude Code configuration ([`trust`]), which `--remove` puts back.

use std::path::{Path, PathBuf};

use baton_core::{Layout, StoreError};
use baton_fs::write_atomic;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{settings, trust};
use crate::error::TeamError as Error;

/// The files setup manages, relative to the project folder.
const MCP_FILE: &str = ".mcp.json";
const SETTINGS_FILE: &str = ".claude/settings.json";

/// What setup did (or, dry, would do) to one file.
#[derive(Debug, Clone, Serialize)]
pub struct FileChange {
    pub file: String,
    /// created, updated, removed, restored, or unchanged.
    pub action: &'static str,
    /// What changed in it, for people.
    pub changes: Vec<String>,
    /// The file's text after the change (none when removed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

/// The record of what the files were before setup, and what setup wrote.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Record {
    files: std::collections::BTreeMap<String, Recorded>,
    /// The folder trust `--approve` recorded in the user's Claude Code configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    trust: Option<trust::Trusted>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Recorded {
    /// The file's text before setup first changed it; `None`: it did not exist.
    original: Option<String>,
    /// What setup last wrote.
    written: String,
}

fn record_path(layout: &Layout) -> PathBuf {
    layout.root().join("setup").join("claude.json")
}

fn read_record(layout: &Layout) -> Result<Record, Error> {
    let path = record_path(layout);
    match std::fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str(&text).map_err(|e| {
            Error::from(StoreError::Corrupt {
                path: path.clone(),
                line: e.line(),
                column: e.column(),
                message: e.to_string(),
            })
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Record::default()),
        Err(e) => Err(StoreError::io(&path, e).into()),
    }
}

fn read_text(path: &Path) -> Result<Option<String>, Error> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(StoreError::io(path, e).into()),
    }
}

/// A file's JSON; a file that is not a JSON object is refused (nothing is changed then).
fn parse(file: &str, text: Option<&str>) -> Result<Value, Error> {
    let Some(text) = text.filter(|t| !t.trim().is_empty()) else {
        return Ok(Value::Object(Default::default()));
    };
    match serde_json::from_str::<Value>(text) {
        Ok(value) if value.is_object() => Ok(value),
        Ok(_) => Err(invalid_file(format!(
            "{file} is not a JSON object; fix it or move it away, then run setup again"
        ))),
        Err(e) => Err(invalid_file(format!(
            "{file} is not valid JSON ({e}); fix it or move it away, then run setup again"
        ))),
    }
}

/// A project file setup cannot merge into, in the words of the input refused.
fn invalid_file(reason: String) -> Error {
    StoreError::InvalidInput {
        field: "file",
        reason,
    }
    .into()
}

/// JSON as Claude Code writes it: two-space indents, a final newline.
fn render(value: &Value) -> String {
    let mut text = serde_json::to_string_pretty(value).expect("JSON serialises");
    text.push('\n');
    text
}

/// Adds Baton to the project's Claude Code files (or says what it would add, `dry`).
pub fn setup(layout: &Layout, approve: bool, dry: bool) -> Result<Vec<FileChange>, Error> {
    let dir = layout.project_dir();
    let mut record = read_record(layout)?;
    // Read and merge both before writing either: a bad file changes nothing.
    let mut planned = Vec::new();
    for file in [MCP_FILE, SETTINGS_FILE] {
        let before = read_text(&dir.join(file))?;
        let mut doc = parse(file, before.as_deref())?;
        let was = doc.clone();
        let changes = if file == MCP_FILE {
            settings::add_server(&mut doc)
        } else {
            settings::add_settings(&mut doc, approve)
        };
        // Nothing to add leaves the file as it is, however it is laid out.
        let unchanged = before.is_some() && doc == was;
        planned.push((file, before, render(&doc), changes, unchanged));
    }
    let mut out = Vec::new();
    for (file, before, after, changes, unchanged) in planned {
        let action = match (&before, unchanged) {
            (_, true) => "unchanged",
            (None, false) => "created",
            (Some(_), false) => "updated",
        };
        if !unchanged && !dry {
            let path = dir.join(file);
            create_parent(&path)?;
            write_atomic(&path, after.as_bytes())?;
            let entry = record.files.entry(file.to_string()).or_insert(Recorded {
                original: before.clone(),
                written: String::new(),
            });
            entry.written = after.clone();
        }
        out.push(FileChange {
            file: file.to_string(),
            action,
            changes,
            text: (!unchanged).then_some(after),
        });
    }
    if approve {
        out.push(trust_project(layout, &mut record, dry)?);
    }
    if !dry && out.iter().any(|c| c.action != "unchanged") {
        write_record(layout, &record)?;
    }
    Ok(out)
}

/// Trusts the project's folder in the user's Claude Code configuration (unless it is), and
/// records what it held before.
fn trust_project(layout: &Layout, record: &mut Record, dry: bool) -> Result<FileChange, Error> {
    let Some(file) = trust::config_file() else {
        return Err(invalid_file(
            "Claude Code keeps folder trust under the home folder, and HOME is not set; start \
             `claude` in the project once and accept its trust prompt instead"
                .into(),
        ));
    };
    let dir = layout.project_dir();
    let folder = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let changed = trust::trust(&file, &folder, dry)?;
    let (action, change) = match &changed {
        Some(_) => (
            "updated",
            format!(
                "trusted {} (Claude Code ignores a project's MCP servers and hooks until its \
                 folder is trusted; --remove takes it back)",
                folder.display()
            ),
        ),
        None => (
            "unchanged",
            format!("{} is trusted already", folder.display()),
        ),
    };
    if let Some(changed) = changed
        && !dry
        && record.trust.is_none()
    {
        record.trust = Some(changed);
    }
    Ok(FileChange {
        file: file.display().to_string(),
        action,
        changes: vec![change],
        text: None,
    })
}

/// What taking Baton out of one of the project's Claude Code files does: put back what setup
/// found (or delete what it made) when nobody changed the file since, else take Baton's entries
/// out of it. `None`: the file is not there.
fn undo_plan(
    dir: &std::path::Path,
    file: &'static str,
    recorded: Option<&Recorded>,
) -> Result<Option<UndoPlan>, Error> {
    let path = dir.join(file);
    let current = read_text(&path)?;
    // Nobody changed it since setup: put back what was there, byte for byte.
    if let (Some(recorded), Some(current)) = (recorded, &current)
        && &recorded.written == current
    {
        let (action, changes) = match &recorded.original {
            Some(_) => (
                "restored",
                vec!["put back as it was before setup".to_string()],
            ),
            None => (
                "removed",
                vec!["deleted (setup had created it)".to_string()],
            ),
        };
        return Ok(Some((
            file,
            path,
            recorded.original.clone(),
            action,
            changes,
        )));
    }
    let Some(current) = current else {
        return Ok(None);
    };
    let mut doc = parse(file, Some(&current))?;
    let changes = if file == MCP_FILE {
        settings::remove_server(&mut doc)
    } else {
        settings::remove_settings(&mut doc)
    };
    Ok(Some(if changes.is_empty() {
        (file, path, Some(current), "unchanged", changes)
    } else {
        (file, path, Some(render(&doc)), "updated", changes)
    }))
}

/// One file's undoing: its name, its path, its text after (`None`: deleted), the action and
/// the changes in words.
type UndoPlan = (
    &'static str,
    std::path::PathBuf,
    Option<String>,
    &'static str,
    Vec<String>,
);

/// Takes Baton out of the project's Claude Code files (or says what it would take, `dry`).
pub fn remove(layout: &Layout, dry: bool) -> Result<Vec<FileChange>, Error> {
    let dir = layout.project_dir();
    let record = read_record(layout)?;
    let mut planned = Vec::new();
    for file in [MCP_FILE, SETTINGS_FILE] {
        if let Some(plan) = undo_plan(dir, file, record.files.get(file))? {
            planned.push(plan);
        }
    }
    let mut out = Vec::new();
    if let Some(trusted) = &record.trust
        && trust::untrust(trusted, dry)?
    {
        out.push(FileChange {
            file: trusted.file.display().to_string(),
            action: "restored",
            changes: vec![format!(
                "the trust of {} put back as it was before setup",
                trusted.folder
            )],
            text: None,
        });
    }
    for (file, path, text, action, changes) in planned {
        if !dry && action != "unchanged" {
            match &text {
                Some(text) => write_atomic(&path, text.as_bytes())?,
                None => {
                    std::fs::remove_file(&path).map_err(|e| StoreError::io(&path, e))?;
                    // The folder setup made for it goes too, when nothing else is in it.
                    if let Some(parent) = path.parent()
                        && parent != dir
                    {
                        let _ = std::fs::remove_dir(parent);
                    }
                }
            }
        }
        out.push(FileChange {
            file: file.to_string(),
            action,
            changes,
            text: if action == "unchanged" { None } else { text },
        });
    }
    if !dry {
        let path = record_path(layout);
        match std::fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(StoreError::io(&path, e).into()),
        }
    }
    Ok(out)
}

fn write_record(layout: &Layout, record: &Record) -> Result<(), Error> {
    let path = record_path(layout);
    create_parent(&path)?;
    let text = serde_json::to_string_pretty(record).expect("records serialise");
    Ok(write_atomic(&path, text.as_bytes())?)
}

fn create_parent(path: &Path) -> Result<(), Error> {
    let parent = path.parent().expect("a file has a folder");
    std::fs::create_dir_all(parent).map_err(|e| StoreError::io(parent, e).into())
}

/// The command that starts a worker named `agent` in Claude Code.
pub fn worker_command(agent: &str) -> String {
    format!("BATON_AGENT={agent} claude \"$(baton prompt worker {agent})\"")
}
