//! The UI's files, served to paired browsers: the build put into the binary when it was built
//! (`build.rs`: the same React build the desktop app loads, `ui/dist`), so that every install
//! serves the page; or a folder, `--ui-dir` (a build being worked on) or the build installed
//! beside `baton` (`../share/baton/ui`) for a binary built without one. A path names a file of
//! the build or nothing (no `..`, no link out of a folder); any other path without a dot is the
//! app's own route and gets `index.html`.

use std::path::{Component, Path, PathBuf};

include!(concat!(env!("OUT_DIR"), "/ui_files.rs"));

/// Where the UI's files come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UiSource {
    /// The build in this binary ([`FILES`]).
    Built,
    /// A folder holding a build.
    Folder(PathBuf),
}

/// A file of the UI, found: its path in the build (which says its type), and where its bytes
/// are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UiFile {
    pub name: String,
    pub bytes: UiBytes,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UiBytes {
    /// In the binary: its name there, and its bytes.
    Built(&'static str, &'static [u8]),
    File(PathBuf),
}

impl UiSource {
    /// `dir` when given (`--ui-dir`); else the build in this binary; else the one installed
    /// beside `baton`; none when there is none of them.
    pub fn choose(dir: Option<PathBuf>) -> Option<UiSource> {
        if let Some(dir) = dir {
            return Some(UiSource::Folder(dir));
        }
        if !FILES.is_empty() {
            return Some(UiSource::Built);
        }
        std::env::current_exe()
            .ok()
            .and_then(|exe| exe.parent()?.parent().map(|p| p.join("share/baton/ui")))
            .filter(|dir| dir.join("index.html").is_file())
            .map(UiSource::Folder)
    }

    /// The file URL path `path` names, or `index.html` for an app route; `None` when it names
    /// nothing.
    pub fn find(&self, path: &str) -> Option<UiFile> {
        match self {
            UiSource::Built => built(FILES, path).map(|(name, bytes)| UiFile {
                name: name.to_string(),
                bytes: UiBytes::Built(name, bytes),
            }),
            UiSource::Folder(root) => {
                let file = resolve(root, path)?;
                Some(UiFile {
                    name: file.to_string_lossy().into_owned(),
                    bytes: UiBytes::File(file),
                })
            }
        }
    }
}

/// The file of `files` (a build's, by path) URL path `path` names, or `index.html` for an app
/// route (a path without a dot).
fn built(
    files: &'static [(&'static str, &'static [u8])],
    path: &str,
) -> Option<(&'static str, &'static [u8])> {
    let relative = path.trim_start_matches('/');
    let mut parts = Vec::new();
    for component in Path::new(relative).components() {
        match component {
            Component::Normal(part) => parts.push(part.to_str()?),
            Component::CurDir => {}
            _ => return None,
        }
    }
    let name = parts.join("/");
    let named = |wanted: &str| files.iter().find(|(n, _)| *n == wanted).copied();
    match named(&name) {
        Some(file) if !name.is_empty() => Some(file),
        _ if name.is_empty() || !relative.contains('.') => named("index.html"),
        _ => None,
    }
}

/// The file `path` (a URL path) names under `root`, or `index.html` for an app route; `None`
/// when it names nothing there.
fn resolve(root: &Path, path: &str) -> Option<PathBuf> {
    let relative = path.trim_start_matches('/');
    let mut file = root.to_path_buf();
    for component in Path::new(relative).components() {
        match component {
            Component::Normal(part) => file.push(part),
            Component::CurDir => {}
            _ => return None,
        }
    }
    if relative.is_empty() || (!file.exists() && !relative.contains('.')) {
        file = root.join("index.html");
    }
    let real = file.canonicalize().ok()?;
    let root = root.canonicalize().ok()?;
    (real.starts_with(&root) && real.is_file()).then_some(real)
}

/// The `Content-Type` of a file by its extension.
pub fn content_type(file: &str) -> &'static str {
    match Path::new(file)
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
    {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "json" => "application/json",
        "webmanifest" => "application/manifest+json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "woff2" => "font/woff2",
        "txt" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_stay_in_the_build_and_app_routes_get_the_index() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("dist");
        std::fs::create_dir_all(root.join("assets")).unwrap();
        std::fs::write(root.join("index.html"), "<html>").unwrap();
        std::fs::write(root.join("assets/app.js"), "x").unwrap();
        std::fs::write(dir.path().join("secret.txt"), "no").unwrap();
        std::os::unix::fs::symlink(dir.path().join("secret.txt"), root.join("link.txt")).unwrap();
        let index = root.join("index.html").canonicalize().unwrap();
        assert_eq!(resolve(&root, "/").unwrap(), index);
        assert_eq!(resolve(&root, "/inbox").unwrap(), index);
        assert!(
            resolve(&root, "/assets/app.js")
                .unwrap()
                .ends_with("assets/app.js")
        );
        for refused in [
            "/../secret.txt",
            "/assets/../../secret.txt",
            "/link.txt",
            "/missing.js",
        ] {
            assert_eq!(resolve(&root, refused), None, "{refused}");
        }
        assert_eq!(content_type("index.html"), "text/html; charset=utf-8");
    }

    /// The build in the binary answers the same way: its files by their paths, the index for
    /// an app route, nothing for a path that leaves it or a file it does not have.
    #[test]
    fn the_built_in_files_are_found_by_path_and_routes_get_the_index() {
        static FILES: &[(&str, &[u8])] = &[
            ("assets/app-1.js", b"js"),
            ("icon.svg", b"svg"),
            ("index.html", b"<html>"),
        ];
        let name = |path: &str| built(FILES, path).map(|(n, _)| n);
        assert_eq!(name("/"), Some("index.html"));
        assert_eq!(name(""), Some("index.html"));
        assert_eq!(name("/inbox"), Some("index.html"));
        assert_eq!(name("/review/t1"), Some("index.html"));
        assert_eq!(name("/assets/app-1.js"), Some("assets/app-1.js"));
        assert_eq!(name("/./icon.svg"), Some("icon.svg"));
        for refused in [
            "/../Cargo.toml",
            "/assets/../../x.js",
            "/missing.js",
            "/assets/app-2.js",
        ] {
            assert_eq!(name(refused), None, "{refused}");
        }
        assert_eq!(built(FILES, "/icon.svg").unwrap().1, b"svg");
    }

    /// This binary was built with the UI (the suite builds it first): its index is in it.
    #[test]
    fn the_binary_holds_the_ui_build() {
        assert!(
            FILES
                .iter()
                .any(|(name, bytes)| *name == "index.html" && !bytes.is_empty()),
            "no index.html among {} built-in files",
            FILES.len()
        );
        assert_eq!(UiSource::choose(None), Some(UiSource::Built));
    }
}
