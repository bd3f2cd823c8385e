//! Parsers for argument values shared by several command groups: `baton-api`'s, which the
//! request types' own flags use too.

pub use baton_api::values::parse_duration;
