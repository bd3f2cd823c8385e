//! Reading the inbox's records one by one, so one that cannot be read is named and left out
//! of a view instead of ending it.

use super::{number_of, parse};
use crate::documents::DocumentStore;
use crate::error::Result;

pub use crate::listing::{Listing, Unreadable};

/// Every `PREFIX-N` record in `folder` read one by one as `T`, oldest first: one that cannot
/// be read or is not what Baton wrote is left out and named, never the end of the view.
pub(super) fn read_each<T: serde::de::DeserializeOwned>(
    docs: &dyn DocumentStore,
    folder: &str,
    id_of: fn(&T) -> &str,
) -> Result<Listing<T>> {
    let mut listing = Listing {
        items: Vec::new(),
        unreadable: Vec::new(),
    };
    for name in docs.document_names_in(folder)? {
        let read = docs
            .read_document(&name)
            .and_then(|value| value.map(|v| parse::<T>(&name, v)).transpose());
        match read {
            Ok(Some(item)) => listing.items.push(item),
            Ok(None) => {}
            Err(e) => listing.unreadable.push(Unreadable {
                document: name,
                problem: e.to_string(),
            }),
        }
    }
    listing.items.sort_by_key(|item| number_of(id_of(item)));
    listing
        .unreadable
        .sort_by(|a, b| a.document.cmp(&b.document));
    Ok(listing)
}
