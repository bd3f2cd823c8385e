//! A connection and its prepared statements, and a transaction that runs its statements
//! prepared: the plumbing every operation of the database store runs on.
//!
//! Through a pooler in transaction mode (PgBouncer, `pgbouncer=true` in the URL) a session is
//! this client's only while a transaction lasts: the next transaction may run on another
//! server session, where a statement prepared before does not exist, and a statement left
//! behind would collide with another client's of the same name. So a pooled transaction
//! prepares what it runs and closes it all before it ends (commit or rollback): one round trip
//! more per statement, and nothing outlives the transaction.

use std::collections::HashMap;

use postgres::types::ToSql;
use postgres::{Client, Row, Statement, Transaction};

use crate::error::Result;

/// A connection and the statements prepared on it (by their SQL), so an operation's
/// statements are parsed and planned once per connection, not once per call: one round trip
/// each instead of two. Pooled, they are kept for one transaction only.
pub(crate) struct Connection {
    pub(crate) client: Client,
    pub(crate) prepared: HashMap<String, Statement>,
    pub(crate) pooled: bool,
}

impl Connection {
    pub(crate) fn new(client: Client, pooled: bool) -> Connection {
        Connection {
            client,
            prepared: HashMap::new(),
            pooled,
        }
    }
}

/// A transaction on a project's connection, running its statements prepared.
pub(crate) struct Tx<'a> {
    /// `None` only once committed.
    tx: Option<Transaction<'a>>,
    prepared: &'a mut HashMap<String, Statement>,
    pooled: bool,
}

impl<'a> Tx<'a> {
    /// A transaction whose statements are prepared in `prepared`, closed before it ends when
    /// `pooled`.
    pub(crate) fn over(
        tx: Transaction<'a>,
        prepared: &'a mut HashMap<String, Statement>,
        pooled: bool,
    ) -> Self {
        Tx {
            tx: Some(tx),
            prepared,
            pooled,
        }
    }

    pub(crate) fn commit(mut self) -> Result<()> {
        self.close_if_pooled();
        let tx = self.tx.take().expect("a transaction is committed once");
        Ok(tx.commit()?)
    }

    /// Pooled: closes every statement prepared in this transaction, while the transaction
    /// still holds its server session (a statement's `Close` goes out when it is dropped,
    /// ahead of the `COMMIT` or `ROLLBACK` that follows).
    fn close_if_pooled(&mut self) {
        if self.pooled {
            self.prepared.clear();
        }
    }

    fn transaction(&mut self) -> &mut Transaction<'a> {
        self.tx
            .as_mut()
            .expect("a transaction is used before it is committed")
    }

    fn statement(&mut self, sql: &str) -> Result<Statement> {
        if let Some(statement) = self.prepared.get(sql) {
            return Ok(statement.clone());
        }
        let statement = self.transaction().prepare(sql)?;
        self.prepared.insert(sql.to_string(), statement.clone());
        Ok(statement)
    }

    pub(crate) fn query(&mut self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<Row>> {
        let statement = self.statement(sql)?;
        Ok(self.transaction().query(&statement, params)?)
    }

    pub(crate) fn query_one(&mut self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Row> {
        let statement = self.statement(sql)?;
        Ok(self.transaction().query_one(&statement, params)?)
    }

    pub(crate) fn query_opt(
        &mut self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Option<Row>> {
        let statement = self.statement(sql)?;
        Ok(self.transaction().query_opt(&statement, params)?)
    }

    pub(crate) fn execute(&mut self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<u64> {
        let statement = self.statement(sql)?;
        Ok(self.transaction().execute(&statement, params)?)
    }
}

impl Drop for Tx<'_> {
    /// A transaction dropped uncommitted rolls back: its statements are closed first.
    fn drop(&mut self) {
        self.close_if_pooled();
    }
}
