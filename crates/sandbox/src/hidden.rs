//! What of the machine a sandbox hides although it shows the system read-only: the host's
//! runtime folders, where its services keep their sockets, and the credential files in
//! folders it shows. Lists, so that a new one is one line ([`crate::Boundary`] mounts them).

use std::path::PathBuf;

/// Folders of the host's running services, hidden (a private empty folder in their place).
pub(crate) const RUNTIME_DIRS: [&str; 3] = ["/run", "/var/run", "/dev/shm"];

/// Files under [`RUNTIME_DIRS`] the system's own configuration leads to and programs need
/// (`/etc/resolv.conf` is often a link into `/run`): shown again, read-only.
pub(crate) fn runtime_files_needed() -> Vec<PathBuf> {
    ["/etc/resolv.conf"]
        .iter()
        .filter_map(|file| std::fs::canonicalize(file).ok())
        .filter(|real| RUNTIME_DIRS.iter().any(|dir| real.starts_with(dir)) && real.is_file())
        .collect()
}

/// Files under the home folder that hold a registry's or a forge's credentials: shown empty
/// wherever the folder they are in is shown (a toolchain's, `sandbox.read`), since a token an
/// agent read leaves with the next request to the registry its network reaches.
pub(crate) const CREDENTIAL_FILES: [&str; 16] = [
    ".cargo/credentials.toml",
    ".cargo/credentials",
    ".config/git/credentials",
    ".git-credentials",
    ".netrc",
    ".npmrc",
    ".yarnrc.yml",
    ".pypirc",
    ".config/pip/pip.conf",
    ".pip/pip.conf",
    ".config/gh/hosts.yml",
    ".docker/config.json",
    ".gem/credentials",
    ".local/share/gem/credentials",
    ".m2/settings.xml",
    ".gradle/gradle.properties",
];
