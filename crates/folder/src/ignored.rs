//! `.coordination/.gitignore`: what Baton keeps in the folder that is not the project's record
//! (the lock file, files being written, claims waiting for the lock), so that a lead who
//! commits the folder commits the record and nothing of a moment. Every way a folder is made
//! writes it the same ([`FolderStore::init`](crate::FolderStore::init), an export from
//! PostgreSQL), and a folder made by an earlier version is given the lines it lacks when what
//! they name is first made there (the claims' queue).

use std::io::ErrorKind;
use std::path::Path;

use baton_core::{Layout, Result, StoreError};
use baton_fs::TEMP_SUFFIX;
use baton_fs::beneath::{Beneath, is_link_refusal};

/// The file's name in the folder.
const NAME: &str = ".gitignore";

/// Larger than any `.gitignore` a lead keeps here; a larger one is left as it is.
const LIMIT: u64 = 64 * 1024;

/// The patterns, one a line.
fn patterns() -> [String; 3] {
    [
        ".lock".to_string(),
        format!("*{TEMP_SUFFIX}"),
        format!("{}/", Layout::CLAIMS_QUEUE),
    ]
}

/// Makes the folder's `.gitignore` list every pattern: written if there is none, the missing
/// patterns added after the lines it has (a lead's own lines kept). One that is a link, or
/// not a plain file, is left as it is: its target is neither read nor replaced.
pub fn ignore_own_files(layout: &Layout) -> Result<()> {
    let path = layout.root().join(NAME);
    let io = |e| StoreError::io(&path, e);
    // The folder itself may be a link of the lead's: it is followed, nothing below it is.
    let root = std::fs::canonicalize(layout.root()).map_err(io)?;
    let folder = Beneath::open(&root).map_err(io)?;
    let had = match folder.read(Path::new(NAME), LIMIT) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) if e.kind() == ErrorKind::NotFound => String::new(),
        // A link, something else than a plain file, or too large: left as it is.
        Err(e)
            if is_link_refusal(&e)
                || matches!(e.kind(), ErrorKind::InvalidInput | ErrorKind::FileTooLarge) =>
        {
            return Ok(());
        }
        Err(e) => return Err(io(e)),
    };
    let missing: Vec<String> = patterns()
        .into_iter()
        .filter(|pattern| !had.lines().any(|line| line.trim() == pattern))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let mut text = had;
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    for pattern in missing {
        text.push_str(&pattern);
        text.push('\n');
    }
    folder
        .write_atomic(Path::new(NAME), text.as_bytes())
        .map_err(io)
}

#[cfg(test)]
mod tests;
