//! Documents in PostgreSQL: one row each, changed under the row's lock in one transaction
//! with the database's time, and watchers told at commit. Two agents on two machines
//! recording handoffs at once wait for each other's row lock, so neither change is lost.

use baton_core::{DocumentStore, Timestamp};
use serde_json::Value;

use crate::error::Failure;
use crate::sql::CHANGES;
use crate::store::PgStore;

impl DocumentStore for PgStore {
    fn read_document(&self, name: &str) -> baton_core::Result<Option<Value>> {
        baton_core::documents::check_name(name)?;
        self.transact(|tx, _| {
            Ok(tx
                .query_opt(
                    "SELECT body FROM baton_documents WHERE project = $1 AND name = $2",
                    &[&self.name, &name],
                )?
                .map(|row| row.get::<_, Value>(0))
                // A row made for a change that then wrote nothing was never written.
                .filter(|body| !body.is_null()))
        })
    }

    fn document_names_in(&self, folder: &str) -> baton_core::Result<Vec<String>> {
        baton_core::documents::check_name(folder)?;
        let prefix = format!("{folder}/");
        self.transact_unclocked(|tx| {
            Ok(tx
                .query(
                    "SELECT name FROM baton_documents
                     WHERE project = $1 AND starts_with(name, $2)
                       AND strpos(substr(name, length($2) + 1), '/') = 0
                       AND body <> 'null'::jsonb",
                    &[&self.name, &prefix],
                )?
                .into_iter()
                .map(|row| row.get(0))
                .collect())
        })
    }

    fn documents_in(&self, folder: &str) -> baton_core::Result<Vec<(String, Value)>> {
        baton_core::documents::check_name(folder)?;
        let prefix = format!("{folder}/");
        self.transact_unclocked(|tx| {
            Ok(tx
                .query(
                    "SELECT name, body FROM baton_documents
                     WHERE project = $1 AND starts_with(name, $2)
                       AND strpos(substr(name, length($2) + 1), '/') = 0
                       AND body <> 'null'::jsonb",
                    &[&self.name, &prefix],
                )?
                .into_iter()
                .map(|row| (row.get(0), row.get(1)))
                .collect())
        })
    }

    fn change_document(
        &self,
        name: &str,
        change: &mut dyn FnMut(Option<Value>, Timestamp) -> baton_core::Result<Option<Value>>,
    ) -> baton_core::Result<()> {
        baton_core::documents::check_name(name)?;
        self.transact(|tx, now| {
            // The row exists before it is locked, so a first write is serialised like the rest.
            tx.execute(
                "INSERT INTO baton_documents (project, name, body) VALUES ($1, $2, 'null')
                 ON CONFLICT (project, name) DO NOTHING",
                &[&self.name, &name],
            )?;
            let current: Value = tx
                .query_one(
                    "SELECT body FROM baton_documents WHERE project = $1 AND name = $2 FOR UPDATE",
                    &[&self.name, &name],
                )?
                .get(0);
            let current = (!current.is_null()).then_some(current);
            if let Some(body) = change(current, now).map_err(Failure::from)? {
                tx.execute(
                    "WITH saved AS (UPDATE baton_documents SET body = $3
                         WHERE project = $1 AND name = $2)
                     SELECT pg_notify($4, $1)",
                    &[&self.name, &name, &body, &CHANGES],
                )?;
            }
            Ok(())
        })
    }
}
