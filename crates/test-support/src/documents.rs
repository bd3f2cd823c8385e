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
                let project = self.project_in_database();
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

    /// Spoils the record of `task`'s attempt `attempt` behind Baton's back, in whichever store
    /// keeps it: the folder's file is no longer JSON, a database's row is JSON that is not an
    /// attempt.
    pub fn spoil_attempt(&self, task: &str, attempt: u32) {
        match &self.postgres {
            None => {
                let path = self
                    .coordination()
                    .join(format!("transcripts/{task}/{attempt}.json"));
                std::fs::write(path, "{\"task\": \"cut off").unwrap();
            }
            Some(server) => {
                pg::psql(
                    server.url(),
                    &format!(
                        "UPDATE baton_attempts SET body = '{{\"spoiled\": true}}'::jsonb \
                     WHERE project = '{}' AND task = '{task}' AND attempt = {attempt}",
                        self.project_in_database()
                    ),
                );
            }
        }
    }

    /// Spoils event `seq` of `task`'s attempt `attempt` behind Baton's back: the folder's line
    /// becomes bytes that are not UTF-8, a database's row JSON that is not an event.
    pub fn spoil_event(&self, task: &str, attempt: u32, seq: u64) {
        match &self.postgres {
            None => {
                let path = self
                    .coordination()
                    .join(format!("transcripts/{task}/{attempt}.jsonl"));
                let text = std::fs::read(&path).unwrap();
                let mut spoiled = Vec::new();
                for line in text.split_inclusive(|b| *b == b'\n') {
                    let event: Option<serde_json::Value> = serde_json::from_slice(line).ok();
                    match event.is_some_and(|e| e["seq"] == seq) {
                        true => spoiled.extend_from_slice(b"\xff\xfe spoiled\n"),
                        false => spoiled.extend_from_slice(line),
                    }
                }
                std::fs::write(&path, spoiled).unwrap();
            }
            Some(server) => {
                pg::psql(
                    server.url(),
                    &format!(
                        "UPDATE baton_transcripts SET body = '{{\"spoiled\": true}}'::jsonb \
                     WHERE project = '{}' AND task = '{task}' AND attempt = {attempt} \
                     AND seq = {seq}",
                        self.project_in_database()
                    ),
                );
            }
        }
    }

    /// The project's name in its database (from `.coordination/store.json`), quoted for SQL.
    fn project_in_database(&self) -> String {
        let pointer: serde_json::Value =
            serde_json::from_slice(&std::fs::read(self.coordination().join("store.json")).unwrap())
                .unwrap();
        pointer["project"].as_str().unwrap().replace('\'', "''")
    }
}
