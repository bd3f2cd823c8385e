//! The agent CLI's own state for one task, private to it: `.coordination/team/homes/TASK/`.
//!
//! A sandboxed agent must write its CLI's state (Claude Code's sessions, Codex's threads) so a
//! session resumes after a supervisor restart. It must not write the user's: `~/.claude`,
//! `~/.claude.json`, `~/.codex` and `~/.gemini` hold settings, hooks and MCP servers that the
//! user's own CLI runs later, outside any sandbox. So each task gets a folder of its own, shown
//! in the sandbox where the CLI looks for its state, and seeded from the user's: credentials
//! and configuration are copied in (never back), each time the user's copy is newer, so a
//! sign-in or a setting the user changes reaches the next attempt, and what an agent changes
//! reaches nobody else. The folder lives while the task is worked, and past a supervisor that
//! died (its attempt resumes from it); it is removed when the worker is done with the task.
//!
//! The copy never follows what the agent left in its folder: a file is written beside its
//! place and renamed over it, and anything that is not what the user's copy is (a link where a
//! file or folder was) is removed first.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::agent_cli::StateFolder;

/// One task's private state for its agent CLI.
pub(crate) struct AgentHome {
    dir: PathBuf,
}

/// Where a prepared home is shown inside the sandbox, and the variable that tells the CLI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateMount {
    /// The folder on the machine (under `.coordination/team/homes/TASK/`).
    pub folder: PathBuf,
    /// Where the agent sees it.
    pub inside: PathBuf,
    /// `CLAUDE_CONFIG_DIR=inside`, `CODEX_HOME=inside`: set so the CLI uses it whatever the
    /// user's environment named.
    pub variable: Option<&'static str>,
    /// The user's own state folder it was copied from (what the user configured, as opposed
    /// to what an agent may have changed in its copy).
    pub user: Option<PathBuf>,
}

impl AgentHome {
    /// The home of `task`'s agent: `.coordination/team/homes/TASK`.
    pub fn of(local: &baton_core::Layout, task: &str) -> crate::error::Result<AgentHome> {
        baton_core::names::validate_task_id(task)?;
        Ok(AgentHome::at(local, Path::new(task)))
    }

    /// The home in `.coordination/team/homes/` at `folder` (a relative path of checked names).
    pub(crate) fn at(local: &baton_core::Layout, folder: &Path) -> AgentHome {
        AgentHome {
            dir: local.team_dir().join("homes").join(folder),
        }
    }

    /// Removes it and all an agent left in it (links are removed, not followed).
    pub fn clear(&self) {
        let _ = fs::remove_dir_all(&self.dir);
    }

    /// Makes a folder for each folder an agent's CLI keeps its state in (`seeds`) when it has
    /// none, and copies in what of the user's state (under `home`, or where the CLI's variable
    /// moved it) is newer than its copy. None for a CLI with no state (a command).
    pub fn prepare(
        &self,
        seeds: &[StateFolder],
        home: Option<&Path>,
    ) -> io::Result<Vec<StateMount>> {
        let mut mounts = Vec::new();
        for seed in seeds {
            let moved = seed
                .variable
                .and_then(std::env::var_os)
                .map(PathBuf::from)
                .filter(|p| p.is_absolute());
            mounts.extend(self.prepare_from(Some(*seed), home, moved)?);
        }
        Ok(mounts)
    }

    /// [`prepare`](Self::prepare) with the user's state folder moved to `moved` (the value of
    /// the CLI's variable), if it was.
    fn prepare_from(
        &self,
        seed: Option<StateFolder>,
        home: Option<&Path>,
        moved: Option<PathBuf>,
    ) -> io::Result<Option<StateMount>> {
        use std::os::unix::fs::DirBuilderExt;
        let Some(seed) = seed else {
            return Ok(None);
        };
        let folder = self.dir.join(&seed.folder[1..]);
        // Credentials are copied in: the user's only.
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.dir)?;
        if !fs::symlink_metadata(&folder).is_ok_and(|m| m.is_dir()) {
            remove_any(&folder)?;
            fs::create_dir_all(&folder)?;
        }
        let user = moved.clone().or_else(|| home.map(|h| h.join(seed.folder)));
        if let Some(user) = &user {
            for name in seed.names {
                refresh(&user.join(name), &folder.join(name))?;
            }
        }
        if let Some(beside) = seed.beside {
            // Beside the folder unless the variable moved the folder (then it is inside): the
            // agent gets it inside, at the variable's place.
            if let Some(global) = moved.or_else(|| home.map(Path::to_path_buf)) {
                refresh(&global.join(beside), &folder.join(beside))?;
            }
        }
        let inside = home.unwrap_or(Path::new("/tmp")).join(seed.folder);
        Ok(Some(StateMount {
            folder,
            inside,
            variable: seed.variable,
            user,
        }))
    }
}

/// Copies `from` (a file or a folder of the user's) to `to` when `to` is missing, is not the
/// same kind of thing, or is older; a file's copy keeps its time and permissions. Nothing at
/// `to` is followed: a file is written beside it and renamed over it.
fn refresh(from: &Path, to: &Path) -> io::Result<()> {
    let Ok(source) = fs::metadata(from) else {
        return Ok(());
    };
    let there = fs::symlink_metadata(to).ok();
    if source.is_dir() {
        if !there.as_ref().is_some_and(|m| m.is_dir()) {
            remove_any(to)?;
            fs::create_dir(to)?;
        }
        for entry in fs::read_dir(from)? {
            let entry = entry?;
            refresh(&entry.path(), &to.join(entry.file_name()))?;
        }
        return Ok(());
    }
    if !source.is_file() {
        return Ok(());
    }
    let modified = source.modified()?;
    if let Some(there) = &there
        && there.is_file()
        && there.modified()? >= modified
    {
        return Ok(());
    }
    let beside = to.with_file_name(format!(
        ".baton-copy-{}-{}",
        std::process::id(),
        to.file_name().unwrap_or_default().to_string_lossy()
    ));
    remove_any(&beside)?;
    {
        let mut input = fs::File::open(from)?;
        // create_new: never through a link that is already there.
        let mut output = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&beside)?;
        io::copy(&mut input, &mut output)?;
        output.set_permissions(source.permissions())?;
        output.set_modified(modified)?;
    }
    if there.as_ref().is_some_and(|m| m.is_dir()) {
        fs::remove_dir_all(to)?;
    }
    fs::rename(&beside, to)
}

/// Removes whatever is at `path` (a folder with what is in it, a file, a link): nothing when
/// nothing is there.
fn remove_any(path: &Path) -> io::Result<()> {
    match fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
        Ok(m) if m.is_dir() => fs::remove_dir_all(path),
        Ok(_) => fs::remove_file(path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state_of(kind: &str) -> Option<StateFolder> {
        let kind = crate::agent_cli::AgentKind::named(kind).unwrap();
        kind.state_folders().first().copied()
    }
    use std::os::unix::fs::symlink;

    fn home_of(dir: &Path) -> AgentHome {
        AgentHome {
            dir: dir.join("homes/t1"),
        }
    }

    #[test]
    fn the_users_settings_and_credentials_are_copied_in_and_nothing_goes_back() {
        let dir = tempfile::tempdir().unwrap();
        let user = dir.path().join("user");
        fs::create_dir_all(user.join(".codex/prompts")).unwrap();
        fs::write(user.join(".codex/config.toml"), "model = \"m\"\n").unwrap();
        fs::write(user.join(".codex/auth.json"), "{\"token\":1}").unwrap();
        fs::write(user.join(".codex/prompts/p.md"), "prompt").unwrap();
        fs::write(user.join(".codex/history.jsonl"), "the user's history").unwrap();
        let home = home_of(dir.path());
        let mount = home
            .prepare_from(state_of("codex"), Some(&user), None)
            .unwrap()
            .unwrap();
        assert_eq!(mount.inside, user.join(".codex"));
        assert_eq!(mount.variable, Some("CODEX_HOME"));
        assert_eq!(
            fs::read_to_string(mount.folder.join("config.toml")).unwrap(),
            "model = \"m\"\n"
        );
        assert_eq!(
            fs::read_to_string(mount.folder.join("prompts/p.md")).unwrap(),
            "prompt"
        );
        assert!(!mount.folder.join("history.jsonl").exists());

        // The agent changes its copy: the user's is untouched, and the next attempt keeps the
        // agent's newer copy (a refreshed sign-in) until the user's changes.
        fs::write(mount.folder.join("auth.json"), "{\"token\":2}").unwrap();
        home.prepare_from(state_of("codex"), Some(&user), None)
            .unwrap();
        assert_eq!(
            fs::read_to_string(user.join(".codex/auth.json")).unwrap(),
            "{\"token\":1}"
        );
        assert_eq!(
            fs::read_to_string(mount.folder.join("auth.json")).unwrap(),
            "{\"token\":2}"
        );
        let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
        let file = fs::File::options()
            .write(true)
            .open(user.join(".codex/auth.json"))
            .unwrap();
        file.set_modified(later).unwrap();
        home.prepare_from(state_of("codex"), Some(&user), None)
            .unwrap();
        assert_eq!(
            fs::read_to_string(mount.folder.join("auth.json")).unwrap(),
            "{\"token\":1}"
        );

        home.clear();
        assert!(!dir.path().join("homes/t1").exists());
        assert!(user.join(".codex/config.toml").exists());
    }

    #[test]
    fn links_an_agent_left_in_its_home_are_replaced_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let user = dir.path().join("user");
        fs::create_dir_all(user.join(".gemini/commands")).unwrap();
        fs::write(user.join(".gemini/settings.json"), "{}").unwrap();
        fs::write(user.join(".gemini/commands/c.toml"), "c").unwrap();
        let victim = dir.path().join("victim");
        fs::create_dir_all(&victim).unwrap();
        fs::write(victim.join("file"), "VICTIM").unwrap();
        let home = home_of(dir.path());
        let mount = home
            .prepare_from(state_of("gemini"), Some(&user), None)
            .unwrap()
            .unwrap();
        // What a hostile agent leaves: its settings a link to a file of the user's, its
        // commands folder a link to a folder of the user's.
        fs::remove_file(mount.folder.join("settings.json")).unwrap();
        symlink(victim.join("file"), mount.folder.join("settings.json")).unwrap();
        fs::remove_dir_all(mount.folder.join("commands")).unwrap();
        symlink(&victim, mount.folder.join("commands")).unwrap();

        home.prepare_from(state_of("gemini"), Some(&user), None)
            .unwrap();
        assert_eq!(fs::read_to_string(victim.join("file")).unwrap(), "VICTIM");
        assert!(!victim.join("c.toml").exists());
        let settings = fs::symlink_metadata(mount.folder.join("settings.json")).unwrap();
        assert!(settings.is_file());
        assert!(
            fs::symlink_metadata(mount.folder.join("commands"))
                .unwrap()
                .is_dir()
        );
        assert_eq!(
            fs::read_to_string(mount.folder.join("commands/c.toml")).unwrap(),
            "c"
        );

        // Its whole folder a link: replaced too, and clearing removes the link, not the target.
        fs::remove_dir_all(&mount.folder).unwrap();
        symlink(&victim, &mount.folder).unwrap();
        home.prepare_from(state_of("gemini"), Some(&user), None)
            .unwrap();
        assert!(!victim.join("settings.json").exists());
        symlink(&victim, mount.folder.join("linked")).unwrap();
        home.clear();
        assert_eq!(fs::read_to_string(victim.join("file")).unwrap(), "VICTIM");
    }

    #[test]
    fn claude_code_gets_its_main_file_inside_its_folder() {
        let dir = tempfile::tempdir().unwrap();
        let user = dir.path().join("user");
        fs::create_dir_all(user.join(".claude")).unwrap();
        fs::write(user.join(".claude.json"), "{\"userID\":\"u\"}").unwrap();
        fs::write(user.join(".claude/.credentials.json"), "secret").unwrap();
        let home = home_of(dir.path());
        let mount = home
            .prepare_from(state_of("claude"), Some(&user), None)
            .unwrap()
            .unwrap();
        assert_eq!(mount.variable, Some("CLAUDE_CONFIG_DIR"));
        assert_eq!(mount.inside, user.join(".claude"));
        assert!(mount.folder.join(".claude.json").is_file());
        assert!(mount.folder.join(".credentials.json").is_file());
        assert_eq!(
            home.prepare_from(state_of("exec"), Some(&user), None)
                .unwrap(),
            None
        );

        // With CLAUDE_CONFIG_DIR, both come from the folder it names.
        let moved = dir.path().join("moved");
        fs::create_dir_all(&moved).unwrap();
        fs::write(moved.join(".claude.json"), "{\"userID\":\"moved\"}").unwrap();
        let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
        fs::File::options()
            .write(true)
            .open(moved.join(".claude.json"))
            .unwrap()
            .set_modified(later)
            .unwrap();
        let mount = home
            .prepare_from(state_of("claude"), Some(&user), Some(moved))
            .unwrap()
            .unwrap();
        assert_eq!(mount.inside, user.join(".claude"));
        assert_eq!(
            fs::read_to_string(mount.folder.join(".claude.json")).unwrap(),
            "{\"userID\":\"moved\"}"
        );
    }
}
