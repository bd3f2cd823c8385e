//! [`PgError`]: what can go wrong with a project in PostgreSQL, each with the store's kind.

use baton_store::{ErrorKind, StoreError};

#[derive(Debug, thiserror::Error)]
pub enum PgError {
    /// A rule of the task store refused (the same refusal the folder gives).
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(
        "the database's Baton schema is version {found}, newer than this baton knows ({known}); upgrade baton"
    )]
    SchemaTooNew { found: i32, known: i32 },
    #[error(
        "no project {name:?} in this database; create it with `baton leader init … --store URL`"
    )]
    UnknownProject { name: String },
    #[error("a project {name:?} exists in this database already")]
    ProjectExists { name: String },
    #[error("PostgreSQL: {0}")]
    Database(#[from] postgres::Error),
    #[error("a task row does not parse: {0}")]
    Corrupt(String),
}

impl PgError {
    /// A stable name for scripts and the UI.
    pub fn kind(&self) -> ErrorKind {
        match self {
            PgError::Store(e) => e.kind(),
            PgError::SchemaTooNew { .. } => ErrorKind::CorruptFile,
            PgError::UnknownProject { .. } => ErrorKind::NotInitialized,
            PgError::ProjectExists { .. } => ErrorKind::AlreadyInitialized,
            PgError::Database(_) => ErrorKind::Io,
            PgError::Corrupt(_) => ErrorKind::CorruptFile,
        }
    }
}

pub type Result<T> = std::result::Result<T, PgError>;
