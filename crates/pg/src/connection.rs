//! A connection and its prepared statements, and a transaction that runs its statements
//! prepared: the plumbing every operation of the database store runs on.

use std::collections::HashMap;

use postgres::types::ToSql;
use postgres::{Client, Row, Statement, Transaction};

use crate::error::Result;

/// A connection and the statements prepared on it (by their SQL), so an operation's
/// statements are parsed and planned once per connection, not once per call: one round trip
/// each instead of two.
pub(crate) struct Connection {
    pub(crate) client: Client,
    pub(crate) prepared: HashMap<String, Statement>,
}

impl Connection {
    pub(crate) fn new(client: Client) -> Connection {
        Connection {
            client,
            prepared: HashMap::new(),
        }
    }
}

/// A transaction on a project's connection, running its statements prepared.
pub(crate) struct Tx<'a> {
    pub(crate) tx: Transaction<'a>,
    pub(crate) prepared: &'a mut HashMap<String, Statement>,
}

impl<'a> Tx<'a> {
    /// A transaction whose statements are prepared in `prepared` (for a connection of its own).
    pub(crate) fn over(tx: Transaction<'a>, prepared: &'a mut HashMap<String, Statement>) -> Self {
        Tx { tx, prepared }
    }

    pub(crate) fn commit(self) -> Result<()> {
        Ok(self.tx.commit()?)
    }

    fn statement(&mut self, sql: &str) -> Result<Statement> {
        if let Some(statement) = self.prepared.get(sql) {
            return Ok(statement.clone());
        }
        let statement = self.tx.prepare(sql)?;
        self.prepared.insert(sql.to_string(), statement.clone());
        Ok(statement)
    }

    pub(crate) fn query(&mut self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<Row>> {
        let statement = self.statement(sql)?;
        Ok(self.tx.query(&statement, params)?)
    }

    pub(crate) fn query_one(&mut self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Row> {
        let statement = self.statement(sql)?;
        Ok(self.tx.query_one(&statement, params)?)
    }

    pub(crate) fn query_opt(
        &mut self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Option<Row>> {
        let statement = self.statement(sql)?;
        Ok(self.tx.query_opt(&statement, params)?)
    }

    pub(crate) fn execute(&mut self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<u64> {
        let statement = self.statement(sql)?;
        Ok(self.tx.execute(&statement, params)?)
    }
}
