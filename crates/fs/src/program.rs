//! Finding the program a command names, as `execvp` would: the team checks an agent is
//! installed before it starts one, the MCP proxy looks for an installed server, and a child
//! in its own group is spawned through the absolute path found.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// Whether `path` is a file someone may execute.
pub fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// `program` as a path to an executable file: itself when it has a slash, else the first
/// match in the folders of `path` (this process's `PATH` when `None`).
pub fn find_program(program: impl AsRef<OsStr>, path: Option<&OsStr>) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let program = Path::new(program.as_ref());
    if program.as_os_str().is_empty() {
        return None;
    }
    if program.as_os_str().as_bytes().contains(&b'/') {
        return is_executable(program).then(|| program.to_path_buf());
    }
    let path = path
        .map(OsStr::to_os_string)
        .or_else(|| std::env::var_os("PATH"))?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| is_executable(candidate))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_is_found_by_its_path_or_on_the_path_given() {
        let dir = tempfile::tempdir().unwrap();
        let tool = dir.path().join("baton-test-tool");
        std::fs::write(&tool, "#!/bin/sh\n").unwrap();
        assert_eq!(find_program(&tool, None), None, "not executable yet");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(find_program(&tool, None), Some(tool.clone()));
        let path = std::env::join_paths(["/nonexistent", dir.path().to_str().unwrap()]).unwrap();
        assert_eq!(find_program("baton-test-tool", Some(&path)), Some(tool));
        assert_eq!(
            find_program("baton-test-tool", Some(OsStr::new("/nonexistent"))),
            None
        );
        assert_eq!(find_program("", None), None);
        assert!(!is_executable(dir.path()), "a folder is not a program");
    }
}
