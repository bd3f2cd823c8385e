//! Choosing and moving the store: `leader init --store`, `connect`, `store export|import`.
//! The work is `baton-api`'s (`OpenProject`); this prints it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use baton_api::{Choice, Error, OpenProject};
use clap::Subcommand;

use crate::output::emit;

#[derive(Debug, Subcommand)]
pub enum StoreCommand {
    /// Write a PostgreSQL project (--store URL, or this folder's pointer) as a .coordination/
    /// folder: tasks.json in the folder's schema, master plan, discoveries, logs, results and
    /// summary. It opens as a folder project, and `jq` works on it.
    Export {
        /// The project folder to write .coordination/ into (default: ./PROJECT-export).
        #[arg(long, value_name = "DIR")]
        to: Option<PathBuf>,
    },
    /// Load this folder project into the PostgreSQL database --store URL names, as --project
    /// (default: the folder's name), in one transaction. The folder is left as it was; point a
    /// folder at the database with `baton connect` afterwards.
    Import,
}

/// `baton leader init GOAL --store URL`.
pub fn init(
    dir: &Path,
    url: &str,
    name: Option<&str>,
    goal: &str,
    approach: Option<String>,
    json: bool,
) -> Result<u8, Error> {
    let (open, pointer) = OpenProject::init_database(dir, url, name, goal, approach.as_deref())?;
    let root = open.local().root().display().to_string();
    let out = serde_json::json!({
        "path": root,
        "goal": goal.trim(),
        "store": pointer.store,
        "project": pointer.project,
    });
    emit(json, &out, || {
        format!(
            "Created {}, goal: {}\nThis folder points to it ({root}/store.json); on another machine: \
             baton connect {} --project {}",
            open.tasks.describe(),
            goal.trim(),
            pointer.store,
            pointer.project
        )
    });
    Ok(0)
}

/// `baton connect URL [--project NAME]`.
pub fn connect(
    dir: &Path,
    url: &str,
    name: Option<&str>,
    lease: Duration,
    json: bool,
) -> Result<u8, Error> {
    let (open, pointer) = OpenProject::connect(dir, url, name, lease)?;
    let root = open.local().root().display().to_string();
    let out = serde_json::json!({"path": root, "store": pointer.store, "project": pointer.project});
    emit(json, &out, || {
        format!(
            "Connected {root} to {}; every baton command here now uses it",
            open.tasks.describe()
        )
    });
    Ok(0)
}

pub fn command(
    choice: &Choice<'_>,
    cwd: &Path,
    command: StoreCommand,
    json: bool,
) -> Result<u8, Error> {
    let transfer = match command {
        StoreCommand::Export { to } => {
            let to = match to {
                Some(to) => cwd.join(to),
                None => {
                    let name = choice.project.map(str::to_string).unwrap_or_else(|| {
                        baton_api::open::default_name(cwd).unwrap_or_else(|_| "baton".into())
                    });
                    cwd.join(format!("{name}-export"))
                }
            };
            OpenProject::export(choice, cwd, &to)?
        }
        StoreCommand::Import => {
            let url = choice.store.ok_or_else(|| {
                Error::input(
                    "store",
                    "say which database to import into with --store URL (or BATON_STORE)",
                )
            })?;
            let folder_only = Choice {
                store: None,
                ..choice.clone()
            };
            OpenProject::import(&folder_only, cwd, url, choice.project)?
        }
    };
    emit(json, &transfer, || {
        format!(
            "{} tasks, {} log lines, {} discoveries, {} agents' attempts and {} documents (questions, messages, reviews, …) between {} and {}",
            transfer.tasks,
            transfer.log_lines,
            transfer.discoveries,
            transfer.attempts,
            transfer.documents,
            transfer.folder.display(),
            transfer.store
        )
    });
    Ok(0)
}
