//! Recent projects, so the lead reopens a project with one click. The list lives in the app's
//! configuration folder (`$XDG_CONFIG_HOME/dev.baton.desktop/recent.json`, or the folder in
//! `BATON_DESKTOP_CONFIG`): the one file Baton writes outside a project's `.coordination/`,
//! holding only folder paths and goals (a project kept in a database is remembered by its
//! folder, whose pointer holds no password; the password is never written here). At most [`LIMIT`] entries, newest first.

use std::path::{Path, PathBuf};

use baton_core::StoreError;
use serde::{Deserialize, Serialize};

pub const LIMIT: usize = 10;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct RecentProject {
    pub path: String,
    pub goal: Option<String>,
    /// Whether the folder still holds a project, or points to one in a database (filled in
    /// when listed, not stored).
    #[serde(default, skip_deserializing)]
    pub exists: bool,
}

pub struct RecentProjects {
    file: PathBuf,
}

/// The app's list: in `BATON_DESKTOP_CONFIG` if set, else in its configuration folder.
pub fn of_app(app: &tauri::AppHandle) -> Option<RecentProjects> {
    use tauri::Manager;
    let dir = match std::env::var_os("BATON_DESKTOP_CONFIG") {
        Some(dir) => PathBuf::from(dir),
        None => app.path().app_config_dir().ok()?,
    };
    Some(RecentProjects::in_dir(&dir))
}

/// Remembers an opened project; a list that cannot be written only costs the shortcut.
pub fn remember_opened(app: &tauri::AppHandle, project: &baton_api::OpenProject) {
    if let Some(recent) = of_app(app) {
        let goal = project
            .tasks
            .notes()
            .ok()
            .and_then(|notes| baton_core::notes::goal_of(&notes.master_plan));
        if let Err(e) = recent.remember(project.local().project_dir(), goal) {
            eprintln!("baton-desktop: recent projects not saved: {e}");
        }
    }
}

impl RecentProjects {
    pub fn in_dir(dir: &Path) -> RecentProjects {
        RecentProjects {
            file: dir.join("recent.json"),
        }
    }

    /// The list, newest first. A file that does not parse is set aside as `recent.json.broken`
    /// (so nothing is lost) and the list starts again.
    pub fn list(&self) -> Vec<RecentProject> {
        let mut list = self.read();
        for entry in &mut list {
            // Its own tasks, or the pointer to the database that keeps them.
            entry.exists = baton_core::Layout::for_project(Path::new(&entry.path)).holds_project();
        }
        list
    }

    fn read(&self) -> Vec<RecentProject> {
        let Ok(bytes) = std::fs::read(&self.file) else {
            return Vec::new();
        };
        match serde_json::from_slice(&bytes) {
            Ok(list) => list,
            Err(e) => {
                let aside = self.file.with_extension("json.broken");
                eprintln!(
                    "baton-desktop: {} is not a list of projects ({e}); kept as {}",
                    self.file.display(),
                    aside.display()
                );
                let _ = std::fs::rename(&self.file, aside);
                Vec::new()
            }
        }
    }

    /// Puts `path` first (once), keeping at most [`LIMIT`] entries.
    pub fn remember(&self, path: &Path, goal: Option<String>) -> Result<(), StoreError> {
        let path = path.display().to_string();
        let mut list = self.read();
        list.retain(|e| e.path != path);
        list.insert(
            0,
            RecentProject {
                path,
                goal,
                exists: true,
            },
        );
        list.truncate(LIMIT);
        if let Some(dir) = self.file.parent() {
            std::fs::create_dir_all(dir).map_err(|e| StoreError::io(dir, e))?;
        }
        let mut bytes = serde_json::to_vec_pretty(&list).expect("the list serialises");
        bytes.push(b'\n');
        Ok(baton_fs::write_atomic(&self.file, &bytes)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_comes_first_once_and_the_list_is_bounded() {
        let config = tempfile::tempdir().unwrap();
        let recent = RecentProjects::in_dir(&config.path().join("nested"));
        assert!(recent.list().is_empty());
        let project = tempfile::tempdir().unwrap();
        baton_folder::FolderStore::init(project.path(), "Ship it", None).unwrap();
        recent
            .remember(project.path(), Some("Ship it".into()))
            .unwrap();
        for n in 0..12 {
            recent
                .remember(&PathBuf::from(format!("/gone/{n}")), None)
                .unwrap();
        }
        recent
            .remember(project.path(), Some("Ship it".into()))
            .unwrap();
        let list = recent.list();
        assert_eq!(list.len(), LIMIT);
        assert_eq!(list[0].path, project.path().display().to_string());
        assert!(list[0].exists);
        assert_eq!(list[1].path, "/gone/11");
        assert!(!list[1].exists);
        assert_eq!(list.iter().filter(|e| e.exists).count(), 1);
    }

    #[test]
    fn a_broken_file_is_kept_aside_not_overwritten() {
        let config = tempfile::tempdir().unwrap();
        std::fs::write(config.path().join("recent.json"), "{not json").unwrap();
        let recent = RecentProjects::in_dir(config.path());
        assert!(recent.list().is_empty());
        assert_eq!(
            std::fs::read_to_string(config.path().join("recent.json.broken")).unwrap(),
            "{not json"
        );
        recent.remember(Path::new("/p"), None).unwrap();
        assert_eq!(recent.list()[0].path, "/p");
    }
}
