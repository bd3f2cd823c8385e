//! [`DocumentStore`]: small JSON documents a project keeps beside its tasks (orchestration's
//! record of invocations, handoffs, parallel runs and conflicts), each changed as a whole under
//! an exclusive hold, so two agents changing one at once, on one machine or two, lose neither
//! change. The folder keeps a document as a file in `.coordination/` (its name is the path),
//! replaced atomically under the folder's lock file next to it; a database keeps it as a row.
//!
//! What a document means is its owner's business (`baton-agents` for orchestration); stores
//! only hold, lock and hand it over.

use serde_json::Value;

use crate::error::Result;
use crate::time::Timestamp;

/// Orchestration's record: invocations, handoffs, parallel runs, conflicts (`baton-agents`).
pub const ORCHESTRATION: &str = "orchestration/state.json";

/// A project's documents, wherever they are kept.
pub trait DocumentStore: Send + Sync {
    /// The document `name` (a relative path such as `orchestration/state.json`), `None` when
    /// it was never written.
    fn read_document(&self, name: &str) -> Result<Option<Value>>;

    /// Every document directly in folder `folder` (such as `inbox/questions`), by name, in no
    /// particular order.
    fn documents_in(&self, folder: &str) -> Result<Vec<(String, Value)>>;

    /// The names of the documents directly in folder `folder`, without reading them: one that
    /// does not parse is named too.
    fn document_names_in(&self, folder: &str) -> Result<Vec<String>>;

    /// Holds document `name` exclusively, gives it (`None`: never written) and the store's
    /// time to `change`, and writes back what `change` returns; `Ok(None)` from `change`
    /// leaves the document as it was. One transaction: `change` may be run again if the store
    /// lost its connection before committing, so it must not have effects of its own
    /// besides what it captures.
    fn change_document(
        &self,
        name: &str,
        change: &mut dyn FnMut(Option<Value>, Timestamp) -> Result<Option<Value>>,
    ) -> Result<()>;
}

/// Refuses a document (or folder) name that is not a plain relative path inside
/// `.coordination/`: empty, absolute, or with `.` or `..` parts. Every store applies it, so a
/// name a database would keep can also be exported to a folder, and never leads out of it.
pub fn check_name(name: &str) -> Result<()> {
    let plain = std::path::Path::new(name)
        .components()
        .all(|c| matches!(c, std::path::Component::Normal(_)));
    if name.is_empty() || !plain || name.contains('\0') {
        return Err(crate::error::StoreError::InvalidInput {
            field: "document",
            reason: format!("{name:?} is not a path inside .coordination/"),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::check_name;

    #[test]
    fn a_document_name_is_a_plain_relative_path() {
        for good in ["orchestration/state.json", "inbox/questions", "a.json"] {
            assert!(check_name(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "/etc/passwd",
            "../outside.json",
            "inbox/../../x",
            "./a.json",
            "a\0b",
        ] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
    }
}
