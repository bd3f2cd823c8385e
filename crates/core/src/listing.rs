//! Records read one by one for a view: one that cannot be read is named and left out, never
//! the end of the view (the inbox's questions and messages, a team's attempts and workers).

use serde::{Deserialize, Serialize};

/// A record a view could not read, named, with why: the view shows everything else.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Unreadable {
    /// The record's name in `.coordination/` (`inbox/messages/m-3.json`), or its table and key
    /// in a database.
    pub document: String,
    pub problem: String,
}

/// Records read one by one: those that could be read, and those that could not.
#[derive(Debug, Clone)]
pub struct Listing<T> {
    pub items: Vec<T>,
    pub unreadable: Vec<Unreadable>,
}

impl<T> Listing<T> {
    /// Every record read.
    pub fn all(items: Vec<T>) -> Listing<T> {
        Listing {
            items,
            unreadable: Vec::new(),
        }
    }
}
