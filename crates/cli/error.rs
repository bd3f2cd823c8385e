//! One error type for the whole command line: whatever library refused, the user sees its
//! message (and, with `--json`, its kind).

use baton_agents::AgentError;
use baton_live::LiveError;
use baton_store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error(transparent)]
    Live(#[from] LiveError),
    #[error(transparent)]
    Agents(#[from] AgentError),
    #[error(transparent)]
    Browser(#[from] baton_browser::BrowserControlError),
}

impl From<StoreError> for CliError {
    fn from(e: StoreError) -> Self {
        CliError::Live(e.into())
    }
}

impl CliError {
    pub fn kind(&self) -> &'static str {
        match self {
            CliError::Live(e) => e.kind(),
            CliError::Agents(e) => e.kind(),
            CliError::Browser(e) => e.kind(),
        }
    }

    /// An input problem found by the command line itself.
    pub fn input(field: &'static str, reason: impl Into<String>) -> Self {
        StoreError::InvalidInput {
            field,
            reason: reason.into(),
        }
        .into()
    }
}
