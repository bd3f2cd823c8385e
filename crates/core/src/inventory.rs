//! What moving a project between stores (`baton store export` / `import`) carries of its
//! documents: every one Baton keeps, named here once for both directions, apart from the
//! document seam itself ([`crate::documents`]), which the documents' owners build on.

use serde_json::Value;

use crate::attempts::SPEND_DOCUMENT;
use crate::documents::{DocumentStore, ORCHESTRATION};
use crate::error::Result;

/// Every single document Baton keeps.
pub const DOCUMENTS: [&str; 4] = [
    ORCHESTRATION,
    SPEND_DOCUMENT,
    crate::inbox::NUMBERS,
    crate::team_end::TEAM_ENDED,
];

/// The folders Baton keeps a document per item in: questions, messages, approval decisions,
/// reviews.
pub const FOLDERS: [&str; 4] = [
    crate::inbox::QUESTIONS,
    crate::inbox::MESSAGES,
    crate::inbox::DECISIONS,
    crate::review::REVIEWS,
];

/// Every document `store` holds of [`DOCUMENTS`] and [`FOLDERS`], by name.
pub fn every_document(store: &dyn DocumentStore) -> Result<Vec<(String, Value)>> {
    let mut documents = Vec::new();
    for name in DOCUMENTS {
        if let Some(body) = store.read_document(name)? {
            documents.push((name.to_string(), body));
        }
    }
    for folder in FOLDERS {
        let mut found = store.documents_in(folder)?;
        found.sort_by(|a, b| a.0.cmp(&b.0));
        documents.extend(found);
    }
    Ok(documents)
}
