//! Builders shared by this crate's unit tests.

use crate::model::{Task, TaskFile, TaskStatus};
use crate::time::Timestamp;

pub fn t0() -> Timestamp {
    Timestamp::parse("2026-01-01T00:00:00Z").unwrap()
}

pub fn task(id: &str, status: TaskStatus, deps: &[&str]) -> Task {
    serde_json::from_value(serde_json::json!({
        "id": id,
        "description": format!("do {id}"),
        "status": status,
        "dependencies": deps,
        "created_at": t0().to_string(),
    }))
    .unwrap()
}

pub fn file_with(tasks: Vec<Task>) -> TaskFile {
    let mut file = TaskFile::new(t0());
    file.tasks = tasks.into();
    file
}

/// Documents in memory, held by one mutex (the stores' own suites test the real holds).
#[derive(Default)]
pub struct MemoryDocuments(std::sync::Mutex<std::collections::BTreeMap<String, serde_json::Value>>);

impl crate::documents::DocumentStore for MemoryDocuments {
    fn read_document(&self, name: &str) -> crate::Result<Option<serde_json::Value>> {
        Ok(self.0.lock().unwrap().get(name).cloned())
    }

    fn documents_in(&self, folder: &str) -> crate::Result<Vec<(String, serde_json::Value)>> {
        let prefix = format!("{folder}/");
        let docs = self.0.lock().unwrap();
        Ok(docs
            .iter()
            .filter(|(name, _)| name.starts_with(&prefix))
            .map(|(name, value)| (name.clone(), value.clone()))
            .collect())
    }

    fn document_names_in(&self, folder: &str) -> crate::Result<Vec<String>> {
        Ok(self
            .documents_in(folder)?
            .into_iter()
            .map(|(name, _)| name)
            .collect())
    }

    fn change_document(
        &self,
        name: &str,
        change: &mut dyn FnMut(
            Option<serde_json::Value>,
            Timestamp,
        ) -> crate::Result<Option<serde_json::Value>>,
    ) -> crate::Result<()> {
        let mut docs = self.0.lock().unwrap();
        if let Some(value) = change(docs.get(name).cloned(), Timestamp::now())? {
            docs.insert(name.to_string(), value);
        }
        Ok(())
    }
}
