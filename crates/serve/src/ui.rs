//! The desktop's UI build (`ui/dist`, the same React build the desktop app loads) served as
//! files: a path names a file inside the folder or nothing (no `..`, no link out of it); any
//! other path without a dot is the app's own route and gets `index.html`.

use std::path::{Component, Path, PathBuf};

/// Where the UI's build is looked for when `--ui-dir` does not say: beside an installed
/// `baton` (`../share/baton/ui`), then the source tree's `ui/dist` this binary was built from.
pub fn default_dir() -> Option<PathBuf> {
    let installed = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent()?.parent().map(|p| p.join("share/baton/ui")));
    let built = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ui/dist");
    [installed, Some(built)]
        .into_iter()
        .flatten()
        .find(|dir| dir.join("index.html").is_file())
}

/// The file `path` (a URL path) names under `root`, or `index.html` for an app route; `None`
/// when it names nothing there.
pub fn resolve(root: &Path, path: &str) -> Option<PathBuf> {
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
pub fn content_type(file: &Path) -> &'static str {
    match file.extension().and_then(|e| e.to_str()).unwrap_or("") {
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
        assert_eq!(content_type(&index), "text/html; charset=utf-8");
    }
}
