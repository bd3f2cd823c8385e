//! Where the tests find the source tree they run from and leave what they make for people:
//! found at run time, since a target directory shared between clones keeps the paths compiled
//! into this crate from wherever it was first built.

use std::path::{Path, PathBuf};

/// The source tree the tests run from: the nearest folder with a `Cargo.lock` above the one
/// cargo names in `CARGO_MANIFEST_DIR` when it runs a test or a benchmark. Not the path compiled
/// in (`env!`): cargo does not rebuild this crate when the same target directory (the one
/// `.ci/run` keeps in `~/.cache`) is used from another clone, so that path can name a clone
/// that is gone.
pub fn source_root() -> PathBuf {
    let start = std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from);
    start
        .ancestors()
        .find(|dir| dir.join("Cargo.lock").is_file())
        .unwrap_or_else(|| panic!("no Cargo.lock above {}", start.display()))
        .to_path_buf()
}

/// Where tests leave artifacts for people (screenshots): `target/<profile>/`, next to the
/// binaries under test, out of git.
pub fn artifacts_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    // target/<profile>/deps/<test binary>
    exe.parent()
        .and_then(Path::parent)
        .expect("the test binary sits in target/<profile>/deps")
        .to_path_buf()
}
