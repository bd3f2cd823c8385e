//! A connection and its prepared statements, and a transaction that runs its statements
//! prepared (or, for an operation that only reads, its statements each on its own): the
//! plumbing every operation of the database store runs on.
//!
//! Through a pooler in transaction mode (PgBouncer, `pgbouncer=true` in the URL) a session is
//! this client's only while a transaction lasts: the next transaction may run on another
//! server session, where a statement prepared before does not exist, and a statement left
//! behind would collide with another client's of the same name. So a pooled transaction runs
//! each statement unnamed, parsed, bound and executed in one round trip, its parameters'
//! types read off their Rust values ([`declared_types`]); nothing outlives the transaction. A
//! parameter of a type not listed there falls back to a named statement, closed before the
//! transaction ends (commit or rollback). A statement whose plan costs much runs pooled as a
//! function that keeps it (`kept`).

use std::collections::HashMap;

use postgres::types::{ToSql, Type};
use postgres::{Client, Row, Statement, Transaction};

use crate::error::{Failure, Result};
use crate::kept::Kept;

/// A connection and the statements prepared on it (by their SQL), so an operation's
/// statements are parsed and planned once per connection, not once per call: one round trip
/// each instead of two. Pooled, they are kept for one transaction only.
pub(crate) struct Connection {
    pub(crate) client: Client,
    pub(crate) prepared: HashMap<String, Statement>,
    pub(crate) pooled: bool,
    /// Whether kept statements are called as their functions (`kept`): pooled, until the
    /// role is refused creating one.
    pub(crate) keep: bool,
}

impl Connection {
    pub(crate) fn new(client: Client, pooled: bool) -> Connection {
        Connection {
            client,
            prepared: HashMap::new(),
            pooled,
            keep: pooled,
        }
    }
}

/// A statement's parameters, each with the type the server is told it has.
type Typed<'p> = Vec<(&'p (dyn ToSql + Sync), Type)>;

/// The types a pooled statement declares for its parameters, read off their Rust values:
/// each one's first type here that its value encodes as (`&str` as `text`, `i64` as `int8`,
/// `serde_json::Value` as `jsonb`, `Vec<String>` as `text[]`, `None` as its inner type). The
/// server converts a declared type where the statement wants another (`int8` to an `integer`
/// column, `text` cast to `jsonb`), as it does a prepared statement's inferred ones. `None`
/// when a value is of none of these types.
pub(crate) fn declared_types<'p>(params: &[&'p (dyn ToSql + Sync)]) -> Option<Typed<'p>> {
    const TYPES: [Type; 13] = [
        Type::TEXT,
        Type::INT8,
        Type::INT4,
        Type::INT2,
        Type::BOOL,
        Type::FLOAT8,
        Type::TIMESTAMPTZ,
        Type::TIMESTAMP,
        Type::JSONB,
        Type::TEXT_ARRAY,
        Type::INT8_ARRAY,
        Type::INT4_ARRAY,
        Type::BYTEA,
    ];
    let mut scratch = bytes::BytesMut::new();
    params
        .iter()
        .map(|&param| {
            TYPES.iter().find_map(|ty| {
                scratch.clear();
                param
                    .to_sql_checked(ty, &mut scratch)
                    .ok()
                    .map(|_| (param, ty.clone()))
            })
        })
        .collect()
}

/// Where a [`Tx`] runs its statements.
enum Session<'a> {
    /// In a transaction (`None` only once committed).
    Transaction(Option<Transaction<'a>>),
    /// Each statement on its own, as it comes (`None` only while becoming a transaction).
    Reads(Option<&'a mut Client>),
}

/// A transaction on a project's connection, running its statements prepared; or, for an
/// operation that only reads, its statements each on its own (see [`Tx::reads`]).
pub(crate) struct Tx<'a> {
    session: Session<'a>,
    prepared: &'a mut HashMap<String, Statement>,
    pooled: bool,
    /// Kept statements are called as their functions (see [`Connection::keep`]).
    keep: bool,
}

/// Runs `$call` on the client or the transaction a [`Tx`] runs its statements on.
macro_rules! on_session {
    ($tx:expr, $c:ident => $call:expr) => {
        match &mut $tx.session {
            Session::Transaction(Some($c)) => $call,
            Session::Reads(Some($c)) => $call,
            _ => unreachable!("a statement runs before its transaction is committed"),
        }
    };
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
            session: Session::Transaction(Some(tx)),
            prepared,
            pooled,
            keep: pooled,
        }
    }

    /// Statements run each on its own, outside a transaction: for an operation that only
    /// reads, each of its statements sees what was committed when it started, as in a
    /// transaction at PostgreSQL's `READ COMMITTED`, without the round trips to begin and end
    /// one. Through a pooler each statement holds a server session only while it runs, not
    /// for the whole operation. A statement that must be prepared through a pooler (a
    /// parameter type [`declared_types`] does not list) makes it a transaction from there on,
    /// so the statement stays on one server session.
    pub(crate) fn reads(
        client: &'a mut Client,
        prepared: &'a mut HashMap<String, Statement>,
        pooled: bool,
    ) -> Self {
        Tx {
            session: Session::Reads(Some(client)),
            prepared,
            pooled,
            keep: pooled,
        }
    }

    /// This transaction with kept statements called as their functions only when `keep`.
    pub(crate) fn keeping(mut self, keep: bool) -> Self {
        self.keep = keep;
        self
    }

    pub(crate) fn commit(mut self) -> Result<()> {
        self.close_if_pooled();
        match &mut self.session {
            Session::Transaction(tx) => {
                let tx = tx.take().expect("a transaction is committed once");
                Ok(tx.commit()?)
            }
            Session::Reads(_) => Ok(()),
        }
    }

    /// Pooled: closes every statement prepared in this transaction, while the transaction
    /// still holds its server session (a statement's `Close` goes out when it is dropped,
    /// ahead of the `COMMIT` or `ROLLBACK` that follows).
    fn close_if_pooled(&mut self) {
        if self.pooled {
            self.prepared.clear();
        }
    }

    fn statement(&mut self, sql: &str) -> Result<Statement> {
        if let Some(statement) = self.prepared.get(sql) {
            return Ok(statement.clone());
        }
        if self.pooled
            && let Session::Reads(client) = &mut self.session
        {
            let client = client.take().expect("reads become a transaction once");
            self.session = Session::Transaction(Some(client.transaction()?));
        }
        let statement = on_session!(self, c => c.prepare(sql))?;
        self.prepared.insert(sql.to_string(), statement.clone());
        Ok(statement)
    }

    /// Pooled, `params` with their declared types: the statement is then run unnamed.
    fn unnamed<'p>(&self, params: &[&'p (dyn ToSql + Sync)]) -> Option<Typed<'p>> {
        self.pooled.then(|| declared_types(params)).flatten()
    }

    pub(crate) fn query(&mut self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<Row>> {
        if let Some(typed) = self.unnamed(params) {
            return Ok(on_session!(self, c => c.query_typed(sql, &typed))?);
        }
        let statement = self.statement(sql)?;
        Ok(on_session!(self, c => c.query(&statement, params))?)
    }

    pub(crate) fn query_one(&mut self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Row> {
        if let Some(typed) = self.unnamed(params) {
            return Ok(on_session!(self, c => c.query_typed_one(sql, &typed))?);
        }
        let statement = self.statement(sql)?;
        Ok(on_session!(self, c => c.query_one(&statement, params))?)
    }

    pub(crate) fn query_opt(
        &mut self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Option<Row>> {
        if let Some(typed) = self.unnamed(params) {
            return Ok(on_session!(self, c => c.query_typed_opt(sql, &typed))?);
        }
        let statement = self.statement(sql)?;
        Ok(on_session!(self, c => c.query_opt(&statement, params))?)
    }

    /// [`Self::query`] for a statement kept planned as a function through a pooler (see
    /// `kept`): pooled, its function is called, and a missing one is reported as
    /// [`Failure::KeptMissing`] so the operation can run again once it is made.
    pub(crate) fn query_kept(
        &mut self,
        kept: &'static Kept,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>> {
        let typed = match self.keep {
            true => self.unnamed(params),
            false => None,
        };
        let Some(typed) = typed else {
            return self.query(&kept.sql, params);
        };
        on_session!(self, c => c.query_typed(kept.call(), &typed)).map_err(|e| {
            match kept.is_missing(&e) {
                true => Failure::KeptMissing(kept, e),
                false => Failure::Database(e),
            }
        })
    }

    /// [`Self::query_kept`] for a statement of at most one row.
    pub(crate) fn query_opt_kept(
        &mut self,
        kept: &'static Kept,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Option<Row>> {
        Ok(self.query_kept(kept, params)?.into_iter().next())
    }

    /// [`Self::query_kept`] for a statement of exactly one row (one without `FROM`).
    pub(crate) fn query_one_kept(
        &mut self,
        kept: &'static Kept,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Row> {
        self.query_opt_kept(kept, params)?.ok_or_else(|| {
            Failure::Store(baton_core::StoreError::Database {
                message: format!("PostgreSQL returned no row for {}", kept.sql),
            })
        })
    }

    pub(crate) fn execute(&mut self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<u64> {
        if let Some(typed) = self.unnamed(params) {
            return Ok(on_session!(self, c => c.execute_typed(sql, &typed))?);
        }
        let statement = self.statement(sql)?;
        Ok(on_session!(self, c => c.execute(&statement, params))?)
    }
}

impl Drop for Tx<'_> {
    /// A transaction dropped uncommitted rolls back: its statements are closed first.
    fn drop(&mut self) {
        self.close_if_pooled();
    }
}

#[cfg(test)]
mod tests {
    use chrono::{DateTime, Utc};
    use postgres::types::Type;

    use super::declared_types;

    #[test]
    fn a_parameter_declares_the_type_its_rust_value_encodes_as() {
        let text = "w1";
        let owned = String::from("w1");
        let none: Option<&str> = None;
        let big = 7_i64;
        let small = 7_i32;
        let flag = true;
        let body = serde_json::json!({"id": "task-1"});
        let at: DateTime<Utc> = Utc::now();
        let never: Option<DateTime<Utc>> = None;
        let ids = vec![String::from("task-1")];
        let types: Vec<Type> = declared_types(&[
            &text, &owned, &none, &big, &small, &flag, &body, &at, &never, &ids,
        ])
        .expect("every one of Baton's parameter types is declared")
        .into_iter()
        .map(|(_, ty)| ty)
        .collect();
        assert_eq!(
            types,
            [
                Type::TEXT,
                Type::TEXT,
                Type::TEXT,
                Type::INT8,
                Type::INT4,
                Type::BOOL,
                Type::JSONB,
                Type::TIMESTAMPTZ,
                Type::TIMESTAMPTZ,
                Type::TEXT_ARRAY,
            ]
        );
    }

    #[test]
    fn a_parameter_of_a_type_not_listed_leaves_the_statement_prepared() {
        let ratio = 0.5_f32;
        let text = "w1";
        assert!(declared_types(&[&text, &ratio]).is_none());
    }

    /// Whether two statements in a row ran in one transaction (their transaction ids).
    fn in_a_transaction(tx: &mut super::Tx) -> bool {
        let mut xid = || -> i64 { tx.query_one("SELECT txid_current()", &[]).unwrap().get(0) };
        xid() == xid()
    }

    #[test]
    fn reads_through_a_pooler_run_each_statement_on_its_own_until_one_must_be_prepared() {
        let server = baton_test_support::pg::PgServer::start();
        let bouncer = baton_test_support::pgbouncer::PgBouncer::start(&server, 2);
        let mut client = crate::connect::connect(&bouncer.url()).unwrap();
        let mut prepared = std::collections::HashMap::new();
        let mut tx = super::Tx::reads(&mut client, &mut prepared, true);
        assert!(!in_a_transaction(&mut tx));
        assert!(!in_a_transaction(&mut tx));
        // A parameter whose type is not declared: the statement is prepared, in a transaction
        // that holds one server session until the reads end.
        let ratio = 0.5_f32;
        let sum: f64 = tx
            .query_one("SELECT ($1::real + 1)::float8", &[&ratio])
            .unwrap()
            .get(0);
        assert_eq!(sum, 1.5);
        assert!(in_a_transaction(&mut tx));
        tx.commit().unwrap();
        assert!(prepared.is_empty(), "the prepared statement was closed");
        let mut tx = super::Tx::reads(&mut client, &mut prepared, true);
        assert!(!in_a_transaction(&mut tx));
    }
}
