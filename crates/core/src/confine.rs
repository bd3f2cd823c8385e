//! Where a path that reaches Baton through a tool call may lead.
//!
//! An agent is not the user: a page it browses or a file it reads can instruct it, so a path it
//! hands to Baton (a signal file, a steering file, an artifact) must stay inside the project
//! unless the user widened that. [`Confinement`] is the one place that decides. It resolves a
//! path the way the kernel would (relative to the project, `..` and symlinks followed, a symlink
//! planted inside the project included) and accepts it only if the result lies under one of its
//! roots: the project folder, and any folder the user allowed (`baton mcp --allow-path DIR`).
//!
//! Callers use the *resolved* path for the operation, never the path as given, so what was
//! checked is what is touched. Front ends that act for the user (the CLI, the desktop app) use
//! [`Confinement::anywhere`].

use std::ffi::OsString;
use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

use crate::error::{Result, StoreError};

/// The longest path accepted, in bytes (Linux's `PATH_MAX`).
pub const MAX_PATH_BYTES: usize = 4096;
/// How many symlinks one resolution may follow before it is refused as a loop (Linux's limit).
const MAX_SYMLINKS: usize = 40;

/// The folders a path given by an agent may resolve into.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confinement {
    /// Relative paths are taken from here: the project folder, symlinks resolved.
    base: PathBuf,
    /// Accepted folders, symlinks resolved; `/` accepts everything.
    roots: Vec<PathBuf>,
}

impl Confinement {
    /// Paths inside `project_dir` only (the default for every tool call).
    pub fn project(project_dir: &Path) -> Result<Confinement> {
        let base = fs::canonicalize(project_dir).map_err(|e| StoreError::io(project_dir, e))?;
        Ok(Confinement {
            roots: vec![base.clone()],
            base,
        })
    }

    /// Any path at all, relative ones taken from `project_dir`: for the user's own commands.
    pub fn anywhere(project_dir: &Path) -> Confinement {
        Confinement {
            base: fs::canonicalize(project_dir).unwrap_or_else(|_| project_dir.to_path_buf()),
            roots: vec![PathBuf::from("/")],
        }
    }

    /// Also accepts paths inside `dir` (relative to the project folder). The folder must exist:
    /// a widening the user asked for should not silently cover nothing.
    pub fn allow(mut self, dir: &Path) -> Result<Confinement> {
        let full = self.base.join(dir);
        let root = fs::canonicalize(&full).map_err(|e| StoreError::InvalidInput {
            field: "allowed path",
            reason: format!("{}: {e}; name an existing folder", full.display()),
        })?;
        if !root.is_dir() {
            return Err(StoreError::InvalidInput {
                field: "allowed path",
                reason: format!("{} is not a folder", root.display()),
            });
        }
        if !self.roots.contains(&root) {
            self.roots.push(root);
        }
        Ok(self)
    }

    /// The project folder relative paths start from.
    pub fn base(&self) -> &Path {
        &self.base
    }

    /// The folders accepted, project first.
    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// Resolves `given` (the value of the tool argument `argument`) and returns the real path
    /// to operate on, or an error that names the argument, the path and the rule.
    pub fn resolve(&self, argument: &str, given: &str) -> Result<PathBuf> {
        let refuse = |reason: String| StoreError::PathRefused {
            argument: argument.to_string(),
            path: given.to_string(),
            reason,
        };
        if given.is_empty() {
            return Err(refuse("it is empty".into()));
        }
        if given.len() > MAX_PATH_BYTES {
            return Err(refuse(format!(
                "it is {} bytes, more than the {MAX_PATH_BYTES} allowed",
                given.len()
            )));
        }
        if let Some(c) = given.chars().find(|c| c.is_control()) {
            return Err(refuse(format!(
                "it contains control character U+{:04X}",
                c as u32
            )));
        }
        let resolved = resolve_path(&self.base.join(given))
            .map_err(|e| refuse(format!("it cannot be resolved: {e}")))?;
        if self.roots.iter().any(|root| resolved.starts_with(root)) {
            return Ok(resolved);
        }
        Err(StoreError::OutsideProject {
            argument: argument.to_string(),
            path: given.to_string(),
            resolved,
            roots: self.roots.clone(),
        })
    }

    /// [`Confinement::resolve`], kept as what to open: beneath the root it lies in, with no
    /// link followed on the way when the path is opened ([`Placed`]), so a folder an agent
    /// swaps for a link after this check leads nowhere. The user's own paths (a confinement
    /// that accepts everything) are opened as they are.
    pub fn place(&self, argument: &str, given: &str) -> Result<Placed> {
        let resolved = self.resolve(argument, given)?;
        if self.roots.iter().any(|root| root == Path::new("/")) {
            return Ok(Placed::trusted(resolved));
        }
        let root = self
            .roots
            .iter()
            .filter(|root| resolved.starts_with(root))
            .max_by_key(|root| root.as_os_str().len())
            .expect("resolve accepted it under a root");
        let below = resolved
            .strip_prefix(root)
            .expect("under its root")
            .to_path_buf();
        Ok(Placed {
            beneath: Some((root.clone(), below)),
            full: resolved,
        })
    }

    /// [`Confinement::resolve`] for each of `given`; the first refusal wins.
    pub fn resolve_all(&self, argument: &str, given: &[String]) -> Result<Vec<PathBuf>> {
        given.iter().map(|p| self.resolve(argument, p)).collect()
    }
}

/// A path as it is to be touched: the user's own (opened as it is), or one a tool call named,
/// opened beneath the folder it was found in with no link followed at any step
/// (`baton_fs::beneath`), however the folders on the way changed since it was checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placed {
    full: PathBuf,
    /// The root it stays beneath, and its part below that root.
    beneath: Option<(PathBuf, PathBuf)>,
}

impl Placed {
    /// A path opened as it is: the user's own, or Baton's own files.
    pub fn trusted(path: PathBuf) -> Placed {
        Placed {
            full: path,
            beneath: None,
        }
    }

    /// The whole path, for messages and watching.
    pub fn full(&self) -> &Path {
        &self.full
    }

    /// The file's bytes, at most `limit`.
    pub fn read(&self, limit: u64) -> io::Result<Vec<u8>> {
        match &self.beneath {
            Some((root, below)) => baton_fs::beneath::Beneath::open(root)?.read(below, limit),
            None => baton_fs::beneath::read_at_most(&fs::File::open(&self.full)?, limit),
        }
    }

    /// What is there, a link described rather than followed.
    pub fn symlink_metadata(&self) -> io::Result<fs::Metadata> {
        match &self.beneath {
            Some((root, below)) => baton_fs::beneath::Beneath::open(root)?.metadata(below),
            None => fs::symlink_metadata(&self.full),
        }
    }

    /// Replaces the file with `bytes` whole, creating its folders.
    pub fn write_atomic(&self, bytes: &[u8]) -> io::Result<()> {
        match &self.beneath {
            Some((root, below)) => {
                baton_fs::beneath::Beneath::open(root)?.write_atomic(below, bytes)
            }
            None => {
                if let Some(parent) = self.full.parent().filter(|p| !p.as_os_str().is_empty()) {
                    fs::create_dir_all(parent)?;
                }
                baton_fs::write_atomic(&self.full, bytes).map_err(|e| e.source)
            }
        }
    }

    /// Removes the file.
    pub fn remove_file(&self) -> io::Result<()> {
        match &self.beneath {
            Some((root, below)) => baton_fs::beneath::Beneath::open(root)?.remove_file(below),
            None => fs::remove_file(&self.full),
        }
    }
}

/// The path `path` (absolute) leads to, with every symlink followed and every `..` applied to
/// the real folder it follows, as the kernel resolves it; components that do not exist yet are
/// kept as they are. A dangling symlink is followed to where it points, since writing through it
/// would create its target there.
fn resolve_path(path: &Path) -> io::Result<PathBuf> {
    let mut resolved = PathBuf::from("/");
    // Components still to walk, next one last.
    let mut pending: Vec<OsString> = Vec::new();
    push_components(&mut pending, path);
    let mut links = 0;
    while let Some(part) = pending.pop() {
        if part == "/" {
            resolved = PathBuf::from("/");
        } else if part == ".." {
            resolved.pop();
        } else if part != "." {
            let next = resolved.join(&part);
            match fs::symlink_metadata(&next) {
                Ok(meta) if meta.file_type().is_symlink() => {
                    links += 1;
                    if links > MAX_SYMLINKS {
                        return Err(io::Error::other("too many levels of symbolic links"));
                    }
                    push_components(&mut pending, &fs::read_link(&next)?);
                }
                Ok(_) => resolved = next,
                // Not there yet (or below a file, so it never can be): kept as it is.
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
                    ) =>
                {
                    resolved = next
                }
                Err(e) => return Err(e),
            }
        }
    }
    Ok(resolved)
}

/// Queues `path`'s components so the first is walked next (an absolute path restarts at `/`).
fn push_components(pending: &mut Vec<OsString>, path: &Path) {
    for component in path.components().rev() {
        pending.push(match component {
            Component::RootDir | Component::Prefix(_) => OsString::from("/"),
            Component::CurDir => OsString::from("."),
            Component::ParentDir => OsString::from(".."),
            Component::Normal(name) => name.to_os_string(),
        });
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    struct World {
        _dir: tempfile::TempDir,
        project: PathBuf,
        outside: PathBuf,
    }

    fn world() -> World {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        let project = root.join("project");
        let outside = root.join("outside");
        fs::create_dir_all(project.join("src")).unwrap();
        fs::create_dir_all(&outside).unwrap();
        fs::write(outside.join("secret"), "s3cret").unwrap();
        World {
            _dir: dir,
            project,
            outside,
        }
    }

    #[test]
    fn paths_inside_the_project_resolve_to_real_paths_existing_or_not() {
        let w = world();
        let c = Confinement::project(&w.project).unwrap();
        assert_eq!(c.resolve("path", "src").unwrap(), w.project.join("src"));
        assert_eq!(
            c.resolve("path", "a/b/../c/.ui-test-done").unwrap(),
            w.project.join("a/c/.ui-test-done")
        );
        let absolute = w.project.join("src/../notes.md");
        assert_eq!(
            c.resolve("path", absolute.to_str().unwrap()).unwrap(),
            w.project.join("notes.md")
        );
        assert_eq!(c.resolve("path", ".").unwrap(), w.project);
    }

    #[test]
    fn traversal_and_absolute_paths_outside_are_refused_with_the_rule() {
        let w = world();
        let c = Confinement::project(&w.project).unwrap();
        for given in [
            "../outside/secret",
            "src/../../outside/secret",
            "/etc/shadow",
            "/",
            "..",
        ] {
            let err = c.resolve("steering", given).unwrap_err();
            assert_eq!(err.kind(), "outside_project", "{given}");
            let message = err.to_string();
            assert!(message.contains("steering"), "{message}");
            assert!(message.contains(given), "{message}");
            assert!(message.contains("--allow-path"), "{message}");
        }
    }

    #[test]
    fn a_symlink_planted_inside_the_project_is_followed_and_refused() {
        let w = world();
        symlink(&w.outside, w.project.join("escape")).unwrap();
        symlink(w.outside.join("secret"), w.project.join("src/innocent.md")).unwrap();
        symlink(w.outside.join("not-yet"), w.project.join("dangling")).unwrap();
        symlink("../../outside", w.project.join("src/relative")).unwrap();
        let c = Confinement::project(&w.project).unwrap();
        for given in [
            "escape/secret",
            "escape/new-file",
            "src/innocent.md",
            "dangling",
            "src/relative/secret",
        ] {
            let err = c.resolve("path", given).unwrap_err();
            assert_eq!(err.kind(), "outside_project", "{given}: {err}");
        }
        // A link that stays inside is fine, and resolves to its target.
        symlink(w.project.join("src"), w.project.join("code")).unwrap();
        assert_eq!(
            c.resolve("path", "code/x").unwrap(),
            w.project.join("src/x")
        );
    }

    #[test]
    fn symlink_loops_and_bad_strings_are_refused() {
        let w = world();
        symlink(w.project.join("b"), w.project.join("a")).unwrap();
        symlink(w.project.join("a"), w.project.join("b")).unwrap();
        let c = Confinement::project(&w.project).unwrap();
        assert_eq!(c.resolve("path", "a").unwrap_err().kind(), "invalid_path");
        for given in ["", "x\u{1b}[2J", "a\nb", &"n/".repeat(3000)] {
            let err = c.resolve("path", given).unwrap_err();
            assert_eq!(err.kind(), "invalid_path", "{given:?}");
        }
    }

    #[test]
    fn allowed_folders_widen_and_anywhere_accepts_all() {
        let w = world();
        let c = Confinement::project(&w.project)
            .unwrap()
            .allow(&w.outside)
            .unwrap();
        assert_eq!(
            c.resolve("path", "../outside/secret").unwrap(),
            w.outside.join("secret")
        );
        assert!(c.resolve("path", "/etc/passwd").is_err());
        assert!(
            Confinement::project(&w.project)
                .unwrap()
                .allow(Path::new("missing"))
                .is_err()
        );
        let any = Confinement::anywhere(&w.project);
        assert_eq!(
            any.resolve("path", "/etc/passwd").unwrap(),
            PathBuf::from("/etc/passwd")
        );
    }
}
