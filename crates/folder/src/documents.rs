//! The folder's documents ([`DocumentStore`]): each a JSON file in `.coordination/` (its name
//! is the path), replaced atomically under a lock file beside it, so two agents changing one
//! at once lose neither change.

use std::fs;
use std::io::ErrorKind;
use std::path::PathBuf;

use baton_core::{DocumentStore, Result, StoreError, Timestamp};
use baton_fs::{FileLock, write_atomic};
use serde_json::Value;

use crate::store::FolderStore;

impl FolderStore {
    fn document_path(&self, name: &str) -> Result<PathBuf> {
        baton_core::documents::check_name(name)?;
        self.layout().unlinked(self.layout().root().join(name))
    }
}

/// Parses a document's bytes, naming the file and position when they are not JSON.
fn parse(path: &std::path::Path, bytes: &[u8]) -> Result<Value> {
    serde_json::from_slice(bytes).map_err(|e| StoreError::Corrupt {
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
        path: path.to_path_buf(),
    })
}

impl DocumentStore for FolderStore {
    fn read_document(&self, name: &str) -> Result<Option<Value>> {
        let path = self.document_path(name)?;
        match fs::read(&path) {
            Ok(bytes) => Ok(Some(parse(&path, &bytes)?)),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
            Err(e) => Err(StoreError::io(path, e)),
        }
    }

    fn documents_in(&self, folder: &str) -> Result<Vec<(String, Value)>> {
        let mut documents = Vec::new();
        for name in self.document_names_in(folder)? {
            if let Some(value) = self.read_document(&name)? {
                documents.push((name, value));
            }
        }
        Ok(documents)
    }

    fn document_names_in(&self, folder: &str) -> Result<Vec<String>> {
        let dir = self.document_path(folder)?;
        let entries = match fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(StoreError::io(dir, e)),
        };
        let mut names = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| StoreError::io(&dir, e))?;
            let file = entry.file_name().to_string_lossy().into_owned();
            // The hold's lock file and a write in progress are not documents.
            if file.starts_with('.') || !file.ends_with(".json") || !entry.path().is_file() {
                continue;
            }
            names.push(format!("{folder}/{file}"));
        }
        Ok(names)
    }

    fn change_document(
        &self,
        name: &str,
        change: &mut dyn FnMut(Option<Value>, Timestamp) -> Result<Option<Value>>,
    ) -> Result<()> {
        let path = self.document_path(name)?;
        let dir = path.parent().expect("a document is inside .coordination/");
        fs::create_dir_all(dir).map_err(|e| StoreError::io(dir, e))?;
        let _lock = FileLock::exclusive(&dir.join(".lock"))?;
        let current = self.read_document(name)?;
        if let Some(changed) = change(current, Timestamp::now())? {
            let mut bytes = serde_json::to_vec_pretty(&changed).expect("JSON serialises");
            bytes.push(b'\n');
            write_atomic(&path, &bytes)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_document_is_changed_whole_and_left_alone_when_the_change_declines() {
        let dir = tempfile::tempdir().unwrap();
        let project = FolderStore::init(dir.path(), "docs", None).unwrap();
        let name = "orchestration/state.json";
        assert_eq!(project.read_document(name).unwrap(), None);
        project
            .change_document(name, &mut |current, _| {
                assert_eq!(current, None);
                Ok(Some(json!({"handoffs": [1]})))
            })
            .unwrap();
        project.change_document(name, &mut |_, _| Ok(None)).unwrap();
        assert_eq!(
            project.read_document(name).unwrap(),
            Some(json!({"handoffs": [1]}))
        );
        for hostile in ["", "../x.json", "/etc/passwd", "a/../../b"] {
            assert!(project.read_document(hostile).is_err(), "{hostile}");
        }
        fs::write(dir.path().join(".coordination").join(name), "{").unwrap();
        let err = project.read_document(name).unwrap_err();
        assert_eq!(err.kind(), baton_core::ErrorKind::CorruptFile, "{err}");
    }
}
