//! How a database failure reaches the caller: as the store's own error
//! ([`StoreError::Database`] and friends), with a message that names the store (never its
//! password) and says what to do. Inside the crate, an operation's failure is either a refusal
//! of the rules or the database's; [`Failure`] carries both until the boundary.

use baton_core::StoreError;

use crate::plan_functions::Kept;

#[derive(Debug)]
pub(crate) enum Failure {
    Store(StoreError),
    Database(tokio_postgres::Error),
    /// A pooled transaction called the function that keeps this statement, and there was
    /// none (yet): the transaction was rolled back, so the operation can run again once the
    /// function is made.
    KeptMissing(&'static Kept, tokio_postgres::Error),
    /// The check sent with an operation's first request found the schema not this build's or
    /// the project not there (`connection::Tx::checking`): the transaction was rolled back,
    /// nothing of it committed.
    Unchecked,
}

impl From<StoreError> for Failure {
    fn from(e: StoreError) -> Self {
        Failure::Store(e)
    }
}

impl From<tokio_postgres::Error> for Failure {
    fn from(e: tokio_postgres::Error) -> Self {
        Failure::Database(e)
    }
}

pub(crate) type Result<T> = std::result::Result<T, Failure>;

impl Failure {
    /// The store's error, for the database at `store` (`user@host:port/db`).
    pub(crate) fn at(self, store: &str) -> StoreError {
        match self {
            Failure::Store(e) => e,
            Failure::Database(e) | Failure::KeptMissing(_, e) => database(store, &e),
            Failure::Unchecked => StoreError::Database {
                message: format!(
                    "PostgreSQL at {store}: the schema or the project changed while in use; try again"
                ),
            },
        }
    }
}

/// A database error in words a user can act on.
pub(crate) fn database(store: &str, e: &tokio_postgres::Error) -> StoreError {
    let message = match e.as_db_error() {
        Some(db) => match db.code().code() {
            "28P01" | "28000" => format!(
                "PostgreSQL at {store} refused the login: {}; give the password in the URL, PGPASSWORD or ~/.pgpass",
                db.message()
            ),
            "3D000" => format!(
                "PostgreSQL at {store}: {}; create the database first (`createdb`), or name another in the URL",
                db.message()
            ),
            _ => format!("PostgreSQL at {store}: {}", db.message()),
        },
        None if e.is_closed() => {
            format!("the connection to PostgreSQL at {store} was lost ({e}); try again")
        }
        None if cause_of(e).contains("password missing") => format!(
            "PostgreSQL at {store} asks for a password and none was given; give it in the URL, \
             PGPASSWORD or ~/.pgpass"
        ),
        None => format!(
            "cannot reach PostgreSQL at {store}: {}; check the host and port, and that the server runs and accepts TCP connections",
            cause_of(e)
        ),
    };
    StoreError::Database { message }
}

/// What went wrong underneath `e` (the client's own words are the outer layer).
fn cause_of(e: &tokio_postgres::Error) -> String {
    std::error::Error::source(e)
        .map(|s| s.to_string())
        .unwrap_or_else(|| e.to_string())
}
