//! Changing a project's documents behind Baton's back, in whichever store keeps them, as a
//! careless user or another program would: for tests of what Baton does with what it finds.

use crate::{Project, pg};

impl Project {
    /// Replaces document `name` (such as `inbox/numbers.json`) in whichever store keeps it,
    /// behind Baton's back, as a careless user or another program would; `None` deletes it.
    pub fn overwrite_document(&self, name: &str, body: Option<&serde_json::Value>) {
        match &self.postgres {
            None => {
                let path = self.coordination().join(name);
                match body {
                    Some(body) => std::fs::write(&path, body.to_string()).unwrap(),
                    None => std::fs::remove_file(&path).unwrap(),
                }
            }
            Some(server) => {
                let pointer: serde_json::Value = serde_json::from_slice(
                    &std::fs::read(self.coordination().join("store.json")).unwrap(),
                )
                .unwrap();
                let project = pointer["project"].as_str().unwrap().replace('\'', "''");
                let name = name.replace('\'', "''");
                let sql = match body {
                    Some(body) => format!(
                        "UPDATE baton_documents SET body = '{}'::jsonb \
                         WHERE project = '{project}' AND name = '{name}'",
                        body.to_string().replace('\'', "''")
                    ),
                    None => format!(
                        "DELETE FROM baton_documents WHERE project = '{project}' AND name = '{name}'"
                    ),
                };
                pg::psql(server.url(), &sql);
            }
        }
    }
}
