//! [`PgStore`]: a project kept in PostgreSQL, opened over one connection (more while operations
//! run at once, up to the pool's size). Every operation is
//! one transaction ([`PgStore::transact`]) that takes its time from the database, and a
//! connection lost before committing is replaced and the operation run again once.

use std::collections::HashMap;
use std::time::Duration;

use crate::client::Client;
use baton_core::{DEFAULT_LEASE, LogEntry, StoreError, Timestamp};

use crate::connect::{Route, connect, describe, route};
use crate::connection::{Connection, Tx};
use crate::error::{Failure, Result};
use crate::pipeline::project_found;
use crate::plan_functions::{Creation, Kept};
use crate::pool::Pool;
use crate::rows::{database_now, journal};
use crate::schema;

/// A project in a PostgreSQL database, over a few connections (one unless operations run at
/// once: [`crate::pool`]).
pub struct PgStore {
    pub(crate) pool: Pool,
    /// For a new connection when this one is lost.
    url: String,
    /// Through a pooler or not, and where the connections waiters listen on go.
    pub(crate) route: Route,
    pub(crate) name: String,
    /// `user@host:port/db`, for messages (never the password).
    pub(crate) store: String,
    pub(crate) lease: Duration,
    /// The one listening connection per channel every waiter of this store shares.
    pub(crate) hubs: crate::hub::Hubs,
}

impl PgStore {
    /// Creates project `name` (migrating the schema first).
    pub fn init(
        url: &str,
        name: &str,
        goal: &str,
        approach: Option<&str>,
    ) -> baton_core::Result<PgStore> {
        let store = describe(url);
        let goal = baton_core::notes::check_goal(goal)?;
        baton_core::names::validate_name("project name", name)?;
        let route = route(url).map_err(|e| e.at(&store))?;
        let created = (|| {
            let mut client = connect(url)?;
            schema::migrate(&mut client, &store)?;
            let mut prepared = HashMap::new();
            let mut tx = Tx::over(&mut client, &mut prepared, route.pooled);
            let now = database_now(&mut tx)?;
            let plan = baton_core::notes::master_plan(goal, approach, now);
            let created = tx.execute(
                "INSERT INTO baton_projects (name, goal, approach, master_plan)
                 VALUES ($1, $2, $3, $4) ON CONFLICT (name) DO NOTHING",
                &[&name, &goal, &approach, &plan],
            )?;
            if created == 0 {
                return Err(Failure::from(StoreError::ProjectExists {
                    name: name.to_string(),
                    store: store.clone(),
                }));
            }
            journal(&mut tx, name, &LogEntry::init(goal), now)?;
            tx.commit()?;
            Ok(client)
        })()
        .map_err(|e| e.at(&store))?;
        Ok(PgStore::over(created, url, route, name, store))
    }

    /// Opens project `name`, which must exist.
    pub fn open(url: &str, name: &str) -> baton_core::Result<PgStore> {
        let store = describe(url);
        baton_core::names::validate_name("project name", name)?;
        let route = route(url).map_err(|e| e.at(&store))?;
        let client = (|| -> Result<Client> {
            let mut client = connect(url)?;
            // The common case in one round trip: the schema is current and the project there.
            // Anything else (no schema yet, an older or newer one) takes the migration's path.
            if !project_found(&mut client, name) {
                check_project(&mut client, name, &store)?;
            }
            Ok(client)
        })()
        .map_err(|e| e.at(&store))?;
        Ok(PgStore::over(client, url, route, name, store))
    }

    /// Opens project `name` without a round trip of its own: whether the schema is current
    /// and the project there is asked with the first operation's first request
    /// (`connection::Tx::checking`), and an unknown project is that operation's error,
    /// before anything of it is committed. For a process that runs one operation (a CLI
    /// call): through a pooler it then waits for a server session once, not twice.
    pub fn open_unchecked(url: &str, name: &str) -> baton_core::Result<PgStore> {
        let store = describe(url);
        baton_core::names::validate_name("project name", name)?;
        let route = route(url).map_err(|e| e.at(&store))?;
        let client = connect(url).map_err(|e| e.at(&store))?;
        let store = PgStore::over(client, url, route, name, store);
        store
            .pool
            .with_first(|first| first.unchecked = Some(name.to_string()));
        Ok(store)
    }

    /// The store over `client`, connected to `url` as `route` says.
    pub(crate) fn over(
        client: Client,
        url: &str,
        route: Route,
        name: &str,
        store: String,
    ) -> PgStore {
        PgStore {
            pool: Pool::new(Connection::new(client, route.pooled), route.pool_size),
            url: url.to_string(),
            route,
            name: name.to_string(),
            store,
            lease: DEFAULT_LEASE,
            hubs: crate::hub::Hubs::default(),
        }
    }

    /// Uses `lease` for new claims, starts and heartbeats (default 15 minutes).
    pub fn with_lease(mut self, lease: Duration) -> Self {
        self.lease = lease;
        self
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// A fresh connection for `lost`, routed as it was, its project still to be checked if
    /// it was.
    fn reconnect(&self, lost: &Connection) -> baton_core::Result<Connection> {
        let client = connect(&self.url).map_err(|e| e.at(&self.store))?;
        let mut fresh = Connection::new(client, self.route.pooled);
        fresh.unchecked = lost.unchecked.clone();
        Ok(fresh)
    }

    /// Runs `op` in one transaction on the project's connection; a failure rolls it back.
    pub(crate) fn transact<T>(
        &self,
        op: impl FnMut(&mut Tx, Timestamp) -> Result<T>,
    ) -> baton_core::Result<T> {
        self.run(true, clocked(op))
    }

    /// [`Self::transact`] for an operation that reads the clock itself, with its first query
    /// (one round trip fewer, on the claim path).
    pub(crate) fn transact_unclocked<T>(
        &self,
        op: impl FnMut(&mut Tx) -> Result<T>,
    ) -> baton_core::Result<T> {
        self.run(true, op)
    }

    /// Runs `op`, which only reads, its statements each on its own ([`Tx::reads`]): no round
    /// trips to begin and end a transaction, and through a pooler a server session held only
    /// while each statement runs. For reads that a change committed between two of their
    /// statements cannot lead astray (what each sees is as in a `READ COMMITTED` transaction).
    pub(crate) fn read<T>(
        &self,
        op: impl FnMut(&mut Tx, Timestamp) -> Result<T>,
    ) -> baton_core::Result<T> {
        self.run(false, clocked(op))
    }

    /// [`Self::read`] for an operation that reads the clock itself, with its first query.
    pub(crate) fn read_unclocked<T>(
        &self,
        op: impl FnMut(&mut Tx) -> Result<T>,
    ) -> baton_core::Result<T> {
        self.run(false, op)
    }

    /// Runs `op` on the project's connection, in one transaction when `transaction` (a
    /// failure rolls it back), else its statements each on its own.
    fn run<T>(
        &self,
        transaction: bool,
        mut op: impl FnMut(&mut Tx) -> Result<T>,
    ) -> baton_core::Result<T> {
        let mut connection = self.pool.take(|unchecked| {
            let client = connect(&self.url).map_err(|e| e.at(&self.store))?;
            let mut fresh = Connection::new(client, self.route.pooled);
            fresh.unchecked = unchecked;
            Ok::<_, StoreError>(fresh)
        })?;
        // A connection lost since the last operation (the server restarted, the network
        // dropped) is replaced, and an operation that found it lost before committing runs
        // again once on the new one: nothing of it can have been applied. A connection lost
        // while committing fails the operation, since the commit may or may not have landed.
        // An operation that found a statement's function missing (see `plan_functions`) runs again once
        // the function is made, once for each such statement.
        let mut retried = false;
        // The functions this operation made (see `plan_functions`), each once.
        let mut made: Vec<&'static Kept> = Vec::new();
        loop {
            if connection.client.is_closed() {
                *connection = self.reconnect(&connection)?;
            }
            let mut committing = false;
            let mut run = || -> Result<T> {
                let Connection {
                    client,
                    prepared,
                    pooled,
                    keep,
                    unchecked,
                } = &mut *connection;
                let tx = match transaction {
                    true => Tx::over(client, prepared, *pooled),
                    false => Tx::reads(client, prepared, *pooled),
                };
                let mut tx = tx.keeping(*keep).checking(unchecked);
                let out = op(&mut tx)?;
                committing = true;
                tx.commit()?;
                Ok(out)
            };
            match run() {
                Err(Failure::Database(e))
                    if !committing && !retried && (connection.client.is_closed() || ended(&e)) =>
                {
                    retried = true;
                    *connection = self.reconnect(&connection)?;
                }
                // The schema is not this build's or the project not there: nothing was
                // committed. Migrated, or refused, as opening the project would.
                Err(Failure::Unchecked) if connection.unchecked.is_some() => {
                    check_project(&mut connection.client, &self.name, &self.store)
                        .map_err(|e| e.at(&self.store))?;
                    connection.unchecked = None;
                }
                // A statement's function was missing: the transaction rolled back, so the
                // operation runs again once it is made (see `plan_functions`).
                Err(Failure::KeptMissing(statement, _))
                    if !made.iter().any(|m| std::ptr::eq(*m, statement)) =>
                {
                    made.push(statement);
                    let created = statement
                        .create(&mut connection.client)
                        .map_err(|e| Failure::from(e).at(&self.store))?;
                    connection.keep = created == Creation::Made;
                }
                outcome => return outcome.map_err(|e| e.at(&self.store)),
            }
        }
    }
}

/// Makes sure the schema is this build's (migrating an older one) and project `name` is in
/// it, for a connection whose quick check found otherwise.
fn check_project(client: &mut Client, name: &str, store: &str) -> Result<()> {
    schema::migrate(client, store)?;
    // Unnamed, in one round trip: behind a pooler the next round trip may reach another
    // server session.
    let known = !client
        .query_typed(
            "SELECT 1 FROM baton_projects WHERE name = $1",
            &[(&name, tokio_postgres::types::Type::TEXT)],
        )?
        .is_empty();
    match known {
        true => Ok(()),
        false => Err(Failure::from(StoreError::UnknownProject {
            name: name.to_string(),
            store: store.to_string(),
        })),
    }
}

/// `op`, given the database's time by a first query.
fn clocked<T>(
    mut op: impl FnMut(&mut Tx, Timestamp) -> Result<T>,
) -> impl FnMut(&mut Tx) -> Result<T> {
    move |tx| {
        let now = database_now(tx)?;
        op(tx, now)
    }
}

/// Whether the server ended the connection (an administrator, a shutdown, a crash or a
/// restart), so a fresh connection could run the operation.
fn ended(e: &tokio_postgres::Error) -> bool {
    e.is_closed()
        || e.as_db_error()
            .is_some_and(|db| matches!(db.code().code(), "57P01" | "57P02" | "57P03"))
}
