//! Puts the UI's build (`ui/dist`, the React build the desktop app loads) into the binary, so
//! that `baton serve` serves the page from any install, `cargo install` included: each file is
//! listed in `$OUT_DIR/ui_files.rs` with its bytes (`include_bytes!`). Without a build (no
//! `ui/dist/index.html`) the list is empty and says why; the server then looks beside an
//! installed `baton`, or at `--ui-dir`.

use std::path::{Path, PathBuf};

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let dist = manifest.join("../../ui/dist");
    // A directory is scanned whole: any file of a new build runs this again.
    println!("cargo:rerun-if-changed={}", dist.display());
    let mut files = Vec::new();
    if dist.join("index.html").is_file() {
        collect(&dist, &dist, &mut files);
    } else {
        println!(
            "cargo:warning=the UI is not built (no ui/dist/index.html): `baton serve` will need \
             --ui-dir; build it first with `npm ci && npm run build` in ui/"
        );
    }
    files.sort();
    let mut code = String::from(
        "/// The UI's build: each file's path under `ui/dist`, and its bytes.\n\
         pub static FILES: &[(&str, &[u8])] = &[\n",
    );
    for (name, path) in &files {
        code.push_str(&format!("    ({name:?}, include_bytes!({path:?})),\n"));
    }
    code.push_str("];\n");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets it"));
    std::fs::write(out.join("ui_files.rs"), code).expect("OUT_DIR is writable");
}

/// Every file under `dir`, as (its path under `root` with `/`, its absolute path).
fn collect(root: &Path, dir: &Path, files: &mut Vec<(String, String)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            collect(root, &path, files);
        } else if kind.is_file() {
            let name = path
                .strip_prefix(root)
                .expect("under the root")
                .to_string_lossy()
                .replace('\\', "/");
            let absolute = path.canonicalize().unwrap_or(path);
            files.push((name, absolute.to_string_lossy().into_owned()));
        }
    }
}
