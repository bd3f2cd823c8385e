//! What a browser control can fail with ([`BrowserControlError`]), and how long one may take:
//! shared by the controls and the DevTools client under them, so neither imports the other
//! for it.

use std::time::Duration;

use baton_core::StoreError;

/// How long one control may take, connecting included.
pub const CONTROL_TIMEOUT: Duration = Duration::from_secs(30);
#[derive(Debug, thiserror::Error)]
pub enum BrowserControlError {
    #[error(
        "no browser answers on 127.0.0.1:{port}; list running browsers with `baton browser list`"
    )]
    NotRunning { port: u16 },
    #[error("the browser on port {port} has no open page")]
    NoPage { port: u16 },
    #[error("cannot open {url:?}: {reason}")]
    BadUrl { url: String, reason: String },
    #[error("the browser on port {port} did not answer within {}s", CONTROL_TIMEOUT.as_secs())]
    Timeout { port: u16 },
    #[error("the browser on port {port} refused: {message}")]
    Protocol { port: u16, message: String },
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<baton_fs::FileError> for BrowserControlError {
    fn from(e: baton_fs::FileError) -> Self {
        BrowserControlError::Store(e.into())
    }
}

impl BrowserControlError {
    /// A stable name for scripts and the UI.
    pub fn kind(&self) -> baton_core::ErrorKind {
        use baton_core::ErrorKind;
        match self {
            BrowserControlError::NotRunning { .. } => ErrorKind::BrowserNotRunning,
            BrowserControlError::NoPage { .. } => ErrorKind::NoPage,
            BrowserControlError::BadUrl { .. } => ErrorKind::InvalidInput,
            BrowserControlError::Timeout { .. } => ErrorKind::Timeout,
            BrowserControlError::Protocol { .. } => ErrorKind::BrowserError,
            BrowserControlError::Store(e) => e.kind(),
        }
    }
}

pub type Result<T> = std::result::Result<T, BrowserControlError>;
