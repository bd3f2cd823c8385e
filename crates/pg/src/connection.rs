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
//! function that keeps it (`plan_functions`).
//!
//! A transaction's requests go out together where nothing waits between them (pipelined,
//! through [`Client::pipeline`]): its `BEGIN` with its first
//! statement, and a write whose answer nothing needs (a task written back, a log line) with
//! whatever follows it, the `COMMIT` at the latest. Each request is still answered on its
//! own, in order, and the first failure among them is the one reported.

use std::collections::HashMap;
use std::future::Future;

use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::{Row, Statement};

use crate::client::Client;

use crate::error::{Failure, Result};
use crate::pipeline::{
    Ahead, AsyncClient, Call, KeptCall, Owned, Queued, Sent, Typed, kept_failure, project_found,
};
use crate::plan_functions::Kept;

/// A connection and the statements prepared on it (by their SQL), so an operation's
/// statements are parsed and planned once per connection, not once per call: one round trip
/// each instead of two. Pooled, they are kept for one transaction only.
pub(crate) struct Connection {
    pub(crate) client: Client,
    pub(crate) prepared: HashMap<String, Statement>,
    pub(crate) pooled: bool,
    /// Whether kept statements are called as their functions (`plan_functions`): pooled, until the
    /// role is refused creating one.
    pub(crate) keep: bool,
    /// The project whose schema and presence are still to be checked, with the first
    /// request of the next operation ([`Tx::checking`]).
    pub(crate) unchecked: Option<String>,
}

impl Connection {
    pub(crate) fn new(client: Client, pooled: bool) -> Connection {
        Connection {
            client,
            prepared: HashMap::new(),
            pooled,
            keep: pooled,
            unchecked: None,
        }
    }
}

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
#[derive(Clone, Copy, PartialEq, Eq)]
enum Session {
    /// In a transaction, whose `BEGIN` goes out with its first request (`begun` once sent).
    Transaction { begun: bool },
    /// Each statement on its own, as it comes.
    Reads,
    /// Committed, or its `COMMIT` sent: nothing more runs, nothing is rolled back.
    Ended,
}

/// A transaction on a project's connection, running its statements prepared; or, for an
/// operation that only reads, its statements each on its own (see [`Tx::reads`]).
///
/// A transaction's `BEGIN` goes out with its first statement, and the writes queued with
/// [`Tx::queue`] with whatever follows them, its `COMMIT` included: sent together before any
/// answer is read (pipelined), in one round trip. An operation that locks a row and writes it
/// back thus takes two round trips, not four. A failure among requests sent together is
/// reported as the first one's that failed, so it is never blamed on the wrong statement.
pub(crate) struct Tx<'a> {
    client: &'a mut Client,
    session: Session,
    prepared: &'a mut HashMap<String, Statement>,
    pooled: bool,
    /// Kept statements are called as their functions (see [`Connection::keep`]).
    keep: bool,
    /// Writes not sent yet, in order.
    queued: Vec<Queued>,
    /// The project whose schema and presence go with the first request, if still unchecked.
    unchecked: Option<&'a mut Option<String>>,
}

/// Runs a statement through a [`Tx`], answered by the next statement's round trip: pooled,
/// unnamed with declared types as `$typed`, else prepared as `$prepared`, both methods of the
/// asynchronous client. The outer result is what went before it, the inner its own.
macro_rules! statement {
    ($tx:expr, $sql:expr, $params:expr, $typed:ident, $prepared:ident) => {{
        let (sql, params): (&str, &[&(dyn ToSql + Sync)]) = ($sql, $params);
        match $tx.unnamed(params) {
            Some(typed) => $tx.send(|c| async move { c.$typed(sql, &typed).await }),
            None => {
                let statement = $tx.statement(sql)?;
                $tx.send(|c| async move { c.$prepared(&statement, params).await })
            }
        }
    }};
}

impl<'a> Tx<'a> {
    /// A transaction on `client` whose statements are prepared in `prepared`, closed before
    /// it ends when `pooled`. Nothing is sent before its first statement.
    pub(crate) fn over(
        client: &'a mut Client,
        prepared: &'a mut HashMap<String, Statement>,
        pooled: bool,
    ) -> Self {
        Tx {
            client,
            session: Session::Transaction { begun: false },
            prepared,
            pooled,
            keep: pooled,
            queued: Vec::new(),
            unchecked: None,
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
        let mut tx = Tx::over(client, prepared, pooled);
        tx.session = Session::Reads;
        tx
    }

    /// This transaction with kept statements called as their functions only when `keep`.
    pub(crate) fn keeping(mut self, keep: bool) -> Self {
        self.keep = keep;
        self
    }

    /// This transaction asking, with its first request, whether the schema is this build's
    /// and the project in `unchecked` there: no round trip of its own, and through a pooler
    /// no server session of its own. Found so, `unchecked` is cleared; otherwise the request
    /// fails with [`Failure::Unchecked`] (before anything could be committed), for the caller
    /// to migrate or refuse the project and run the operation again.
    pub(crate) fn checking(mut self, unchecked: &'a mut Option<String>) -> Self {
        if unchecked.is_some() {
            self.unchecked = Some(unchecked);
        }
        self
    }

    /// Commits, the `COMMIT` sent with the writes still queued. A transaction that has sent
    /// nothing and queued nothing has nothing to commit.
    pub(crate) fn commit(mut self) -> Result<()> {
        self.close_if_pooled();
        let begun = self.session == (Session::Transaction { begun: true });
        if !begun && self.queued.is_empty() {
            self.session = Session::Ended;
            return Ok(());
        }
        if self.unchecked.is_some() {
            // Known good before anything is committed.
            self.flush()?;
        }
        // Sent with the `COMMIT`: what failed there cannot be rolled back by dropping.
        Ok(self.send_then(true, |c| c.batch_execute("COMMIT"))??)
    }

    /// Pooled: closes every statement prepared in this transaction, while the transaction
    /// still holds its server session (a statement's `Close` goes out when it is dropped,
    /// ahead of the `COMMIT` or `ROLLBACK` that follows).
    fn close_if_pooled(&mut self) {
        if self.pooled {
            self.prepared.clear();
        }
    }

    /// Sends the request `request` makes, after what must go first (a `BEGIN` not yet sent,
    /// the queued writes), all in one round trip. The outer error is theirs, the inner the
    /// request's own.
    fn send<'c, T, F>(
        &'c mut self,
        request: impl FnOnce(&'c AsyncClient) -> F,
    ) -> Result<std::result::Result<T, tokio_postgres::Error>>
    where
        F: Future<Output = std::result::Result<T, tokio_postgres::Error>>,
    {
        self.send_then(false, request)
    }

    /// Sends what waits to go before a request (a `BEGIN`, the check, queued writes), with no
    /// request of its own.
    fn flush(&mut self) -> Result<()> {
        Ok(self.send(|_| std::future::ready(Ok(())))??)
    }

    /// The project [`Self::checking`] still has to check, if any.
    fn due_check(&self) -> Option<String> {
        self.unchecked.as_deref().and_then(Option::clone)
    }

    /// The check of [`Self::checking`], if still due, in a round trip of its own.
    fn check_alone(&mut self) -> Result<()> {
        let Some(project) = self.due_check() else {
            return Ok(());
        };
        if !project_found(self.client, &project) {
            return Err(Failure::Unchecked);
        }
        checked(&mut self.unchecked);
        Ok(())
    }

    /// [`Self::send`], the request ending the transaction when `ends`.
    fn send_then<'c, T, F>(
        &'c mut self,
        ends: bool,
        request: impl FnOnce(&'c AsyncClient) -> F,
    ) -> Result<std::result::Result<T, tokio_postgres::Error>>
    where
        F: Future<Output = std::result::Result<T, tokio_postgres::Error>>,
    {
        if self.session == Session::Reads {
            // Outside a transaction each request ends its own: the check goes first, alone.
            self.check_alone()?;
        }
        let begin = self.session == (Session::Transaction { begun: false });
        self.session = match (self.session, ends) {
            (_, true) => Session::Ended,
            (Session::Transaction { .. }, false) => Session::Transaction { begun: true },
            (other, false) => other,
        };
        let queued = std::mem::take(&mut self.queued);
        let check = self.due_check();
        let sent = Sent {
            begin,
            check: check.as_deref(),
            queued: &queued,
        };
        let (found, answer) = self
            .client
            .pipeline(|c| async move { Ok(sent.with(c, request(c)).await) })?;
        match found {
            Some(false) => return Err(Failure::Unchecked),
            // A field of its own: the client is still borrowed by the request's answer.
            Some(true) => checked(&mut self.unchecked),
            None => {}
        }
        match answer {
            Ok(out) => Ok(Ok(out)),
            Err(Ahead::Request(e)) => Ok(Err(e)),
            Err(Ahead::Before(e)) => Err(Failure::Database(e)),
        }
    }

    fn statement(&mut self, sql: &str) -> Result<Statement> {
        if let Some(statement) = self.prepared.get(sql) {
            return Ok(statement.clone());
        }
        if self.pooled && self.session == Session::Reads {
            self.session = Session::Transaction { begun: false };
        }
        let statement = self.send(|c| c.prepare(sql))??;
        self.prepared.insert(sql.to_string(), statement.clone());
        Ok(statement)
    }

    /// Pooled, `params` with their declared types: the statement is then run unnamed.
    fn unnamed<'p>(&self, params: &[&'p (dyn ToSql + Sync)]) -> Option<Typed<'p>> {
        self.pooled.then(|| declared_types(params)).flatten()
    }

    pub(crate) fn query(&mut self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<Row>> {
        Ok(statement!(self, sql, params, query_typed, query)??)
    }

    pub(crate) fn query_one(&mut self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Row> {
        Ok(statement!(self, sql, params, query_typed_one, query_one)??)
    }

    pub(crate) fn query_opt(
        &mut self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Option<Row>> {
        Ok(statement!(self, sql, params, query_typed_opt, query_opt)??)
    }

    /// [`Self::query`] for a statement kept planned as a function through a pooler (see
    /// `plan_functions`): pooled, its function is called, and a missing one is reported as
    /// [`Failure::KeptMissing`] so the operation can run again once it is made.
    pub(crate) fn query_kept(
        &mut self,
        kept: &'static Kept,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>> {
        let call = self.kept_call(kept, params)?;
        self.send(|c| call.rows(c))?
            .map_err(|e| kept_failure(kept, e))
    }

    /// How a kept statement runs on this transaction: its function called (pooled, while functions
    /// are kept), else its statement unnamed (pooled) or prepared.
    fn kept_call<'p>(
        &mut self,
        kept: &'static Kept,
        params: &'p [&'p (dyn ToSql + Sync)],
    ) -> Result<KeptCall<'p>> {
        Ok(match self.unnamed(params) {
            Some(typed) if self.keep => KeptCall::Unnamed(kept.call(), typed),
            Some(typed) => KeptCall::Unnamed(&kept.sql, typed),
            None => KeptCall::Prepared(self.statement(&kept.sql)?, params),
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
        Ok(statement!(self, sql, params, execute_typed, execute)??)
    }

    /// Queues a write whose answer nothing waits for: it goes out with what this transaction
    /// sends next (its next statement or its `COMMIT`), in the same round trip, and a failure
    /// of it fails that request. Outside a transaction it runs at once.
    pub(crate) fn queue(&mut self, sql: &'static str, params: Vec<Owned>) -> Result<()> {
        let borrowed: Vec<&(dyn ToSql + Sync)> =
            params.iter().map(|p| &**p as &(dyn ToSql + Sync)).collect();
        let statement = match self.unnamed(&borrowed) {
            Some(typed) => Call::Unnamed(sql, typed.into_iter().map(|(_, ty)| ty).collect()),
            None => Call::Prepared(self.statement(sql)?),
        };
        drop(borrowed);
        self.queued.push(Queued { statement, params });
        if self.session == Session::Reads {
            self.flush()?;
        }
        Ok(())
    }
}

/// Records a [`Tx`]'s project found as this build expects, for this and later operations.
fn checked(unchecked: &mut Option<&mut Option<String>>) {
    if let Some(unchecked) = unchecked.take() {
        *unchecked = None;
    }
}

impl Drop for Tx<'_> {
    /// A transaction dropped uncommitted rolls back: its statements are closed first, and
    /// its queued writes dropped unsent.
    fn drop(&mut self) {
        self.close_if_pooled();
        if self.session == (Session::Transaction { begun: true }) {
            let _ = self.client.batch_execute("ROLLBACK");
        }
    }
}

#[cfg(test)]
mod tests {
    use chrono::{DateTime, Utc};
    use tokio_postgres::types::Type;

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

/// Requests sent together (`BEGIN` with the first statement, queued writes with what follows
/// them), on a direct connection and through a pooler alike.
#[cfg(test)]
mod together {
    use std::collections::HashMap;

    use tokio_postgres::error::SqlState;

    use super::Tx;
    use crate::error::Failure;

    /// The SQL state of a database failure, or a panic naming what failed instead.
    fn state<T: std::fmt::Debug>(outcome: crate::error::Result<T>) -> SqlState {
        match outcome {
            Err(Failure::Database(e)) => e.code().cloned().expect("a server's error"),
            other => panic!("expected a database error, got {other:?}"),
        }
    }

    fn insert(tx: &mut Tx, x: i32) -> crate::error::Result<()> {
        tx.queue("INSERT INTO together (x) VALUES ($1)", vec![Box::new(x)])
    }

    /// The rows of `pipeline`, read on a connection of their own.
    fn rows(url: &str) -> Vec<i32> {
        let mut client = crate::connect::connect(url).unwrap();
        let mut prepared = HashMap::new();
        let mut tx = Tx::reads(&mut client, &mut prepared, url.contains("pgbouncer=true"));
        let rows = tx.query("SELECT x FROM together ORDER BY x", &[]).unwrap();
        rows.iter().map(|row| row.get(0)).collect()
    }

    fn xid(tx: &mut Tx) -> i64 {
        tx.query_one("SELECT txid_current()", &[]).unwrap().get(0)
    }

    #[test]
    fn writes_sent_with_what_follows_them_fail_as_themselves_and_commit_or_vanish_as_one() {
        let server = baton_test_support::pg::PgServer::start();
        let bouncer = baton_test_support::pgbouncer::PgBouncer::start(&server, 2);
        for (url, pooled) in [(server.url().to_string(), false), (bouncer.url(), true)] {
            baton_test_support::pg::psql(
                server.url(),
                "DROP TABLE IF EXISTS together; CREATE TABLE together (x integer PRIMARY KEY)",
            );
            let mut client = crate::connect::connect(&url).unwrap();
            let mut prepared = HashMap::new();

            // The `BEGIN` sent with the first statement: the next one runs in its transaction.
            let mut tx = Tx::over(&mut client, &mut prepared, pooled);
            assert_eq!(xid(&mut tx), xid(&mut tx), "pooled: {pooled}");
            tx.commit().unwrap();

            // A queued write and the `COMMIT` sent together: committed.
            let mut tx = Tx::over(&mut client, &mut prepared, pooled);
            insert(&mut tx, 1).unwrap();
            insert(&mut tx, 2).unwrap();
            tx.commit().unwrap();
            assert_eq!(rows(&url), [1, 2]);

            // A queued write that fails fails the `COMMIT` it went with (which the server
            // turns into a rollback): nothing of the transaction lands.
            let mut tx = Tx::over(&mut client, &mut prepared, pooled);
            insert(&mut tx, 3).unwrap();
            insert(&mut tx, 1).unwrap();
            assert_eq!(state(tx.commit()), SqlState::UNIQUE_VIOLATION);
            assert_eq!(rows(&url), [1, 2]);

            // A failing write sent with a statement is the failure, not the statement's
            // "transaction aborted"; dropped, the transaction rolls back.
            let mut tx = Tx::over(&mut client, &mut prepared, pooled);
            insert(&mut tx, 4).unwrap();
            insert(&mut tx, 2).unwrap();
            assert_eq!(state(tx.query("SELECT 1", &[])), SqlState::UNIQUE_VIOLATION);
            drop(tx);
            assert_eq!(rows(&url), [1, 2]);

            // A write queued and never sent (the transaction dropped first) never lands, in
            // a transaction begun or not; the connection is usable after.
            let mut tx = Tx::over(&mut client, &mut prepared, pooled);
            insert(&mut tx, 5).unwrap();
            drop(tx);
            let mut tx = Tx::over(&mut client, &mut prepared, pooled);
            tx.query("SELECT 1", &[]).unwrap();
            insert(&mut tx, 6).unwrap();
            drop(tx);
            assert_eq!(rows(&url), [1, 2]);

            // Checked with the first request (here the only one: a queued write and the
            // `COMMIT`): a project not found fails it before the `COMMIT` goes out.
            let mut unchecked = Some("nowhere".to_string());
            let mut tx = Tx::over(&mut client, &mut prepared, pooled).checking(&mut unchecked);
            insert(&mut tx, 8).unwrap();
            assert!(matches!(tx.commit(), Err(Failure::Unchecked)));
            assert_eq!(rows(&url), [1, 2]);
            assert!(unchecked.is_some());

            // Outside a transaction a queued write runs at once.
            let mut tx = Tx::reads(&mut client, &mut prepared, pooled);
            insert(&mut tx, 7).unwrap();
            assert_eq!(rows(&url), [1, 2, 7]);
            drop(tx);
            assert!(!client.is_closed());
        }
    }
}
