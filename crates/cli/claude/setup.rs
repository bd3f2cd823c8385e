//! `baton setup claude`: applies [`settings`](super::settings) to the project's files. Each
//! file is read, merged and written whole (atomically); what a file held before Baton first
//! changed it is recorded in `.coordination/setup/claude.json`, with what Baton wrote, so
//! `--remove` can put it back byte for byte when nobody changed it since, and otherwise takes
//! out only Baton's entries.

use std::path::{Path, PathBuf};

use baton_api::Error;
use baton_core::{Layout, StoreError};
use baton_fs::write_atomic;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::settings;

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
        Ok(_) => Err(Error::input(
            "file",
            format!("{file} is not a JSON object; fix it or move it away, then run setup again"),
        )),
        Err(e) => Err(Error::input(
            "file",
            format!("{file} is not valid JSON ({e}); fix it or move it away, then run setup again"),
        )),
    }
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
    if !dry && out.iter().any(|c| c.action != "unchanged") {
        write_record(layout, &record)?;
    }
    Ok(out)
}

/// Takes Baton out of the project's Claude Code files (or says what it would take, `dry`).
pub fn remove(layout: &Layout, dry: bool) -> Result<Vec<FileChange>, Error> {
    let dir = layout.project_dir();
    let record = read_record(layout)?;
    let mut planned = Vec::new();
    for file in [MCP_FILE, SETTINGS_FILE] {
        let path = dir.join(file);
        let current = read_text(&path)?;
        let recorded = record.files.get(file);
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
            planned.push((file, path, recorded.original.clone(), action, changes));
            continue;
        }
        let Some(current) = current else {
            continue;
        };
        let mut doc = parse(file, Some(&current))?;
        let changes = if file == MCP_FILE {
            settings::remove_server(&mut doc)
        } else {
            settings::remove_settings(&mut doc)
        };
        if changes.is_empty() {
            planned.push((file, path, Some(current), "unchanged", changes));
        } else {
            planned.push((file, path, Some(render(&doc)), "updated", changes));
        }
    }
    let mut out = Vec::new();
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

/// `baton setup claude`: runs it and prints what changed.
pub fn command(
    project: &baton_api::OpenProject,
    args: super::SetupClaude,
    json: bool,
) -> Result<u8, Error> {
    use std::fmt::Write as _;

    if let Some(agent) = &args.worker {
        baton_core::names::validate_agent_id(agent)?;
        let command = worker_command(agent);
        crate::output::emit(
            json,
            &serde_json::json!({"agent": agent, "command": command}),
            || {
                format!(
                    "Start worker {agent} in this project with:\n  {command}\n(BATON_AGENT names the \
                 worker for Baton's hooks; the prompt tells it the commands.)"
                )
            },
        );
        return Ok(0);
    }
    let layout = project.local();
    let changes = if args.remove {
        remove(layout, args.dry_run)?
    } else {
        setup(layout, args.approve, args.dry_run)?
    };
    crate::output::emit(
        json,
        &serde_json::json!({"dry_run": args.dry_run, "files": changes}),
        || {
            let mut out = String::new();
            for change in &changes {
                let verb = match (args.dry_run, change.action) {
                    (_, "unchanged") => "unchanged".to_string(),
                    (true, action) => format!("would be {action}"),
                    (false, action) => action.to_string(),
                };
                let _ = writeln!(out, "{}: {verb}", change.file);
                for line in &change.changes {
                    let _ = writeln!(out, "  - {line}");
                }
                if args.dry_run
                    && let Some(text) = &change.text
                {
                    for line in text.lines() {
                        let _ = writeln!(out, "    | {line}");
                    }
                }
            }
            if !args.remove && !args.dry_run {
                if !layout.project_dir().join(".claude/agents").exists() {
                    out.push_str(
                        "Subagents: `baton agents init --to .claude/agents` writes Baton's agent \
                     catalog where Claude Code finds it.\n",
                    );
                }
                out.push_str(
                    "Start a worker: `baton setup claude --worker NAME` prints the command.",
                );
            }
            out.trim_end().to_string()
        },
    );
    Ok(0)
}
