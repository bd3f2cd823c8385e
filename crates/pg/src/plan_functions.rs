//! Statements kept planned on a pooler's server sessions, as functions.
//!
//! Through a pooler in transaction mode every statement is sent unnamed and planned anew
//! (see `connection`): nothing prepared can outlive a transaction. For most statements the
//! planning is cheap. For a few on the hot paths it is not: the claim's best-ready query
//! (three locking reads of one table with its indexes) costs the server about five times
//! what running it does, on every claim and on every task a claim passes over; the
//! reservations near a candidate's files and a waiting worker's look cost about as much to
//! plan as to run. A PL/pgSQL function keeps the plans of its queries for as
//! long as its server session lives, which through a pooler is long, and a server session
//! serves many clients: after its first few calls on a session the query runs on a plan
//! already made. So a pooled transaction runs such a statement as a call of a function of its
//! own, `baton_kept_` and a hash of its text, created on first use (a call that finds it
//! missing is rolled back, the function created, and the operation run again). Another
//! Baton's statement of different text has another name, so versions side by side never
//! replace each other's. Where the role may not create functions, the statement runs as it
//! is on that connection from then on, as on a direct connection.

use crate::client::Client;

/// A statement a pooled transaction runs through a function of its own.
#[derive(Debug)]
pub(crate) struct Kept {
    /// The statement, its parameters `$1`, `$2`, ….
    pub(crate) sql: String,
    /// The function's name: `baton_kept_` and a hash of all that shapes it.
    name: String,
    /// The parameters' SQL types, in order.
    params: &'static [&'static str],
    /// The statement's columns' SQL types, in order.
    columns: &'static [&'static str],
    /// The call, with the parameters' types declared.
    call: String,
}

impl Kept {
    pub(crate) fn new(
        sql: String,
        params: &'static [&'static str],
        columns: &'static [&'static str],
    ) -> Kept {
        let shape = format!("{sql}\u{0}{params:?}\u{0}{columns:?}");
        let name = format!("baton_kept_{:016x}", fnv1a(shape.as_bytes()));
        let arguments: Vec<String> = params
            .iter()
            .enumerate()
            .map(|(i, ty)| format!("${}::{ty}", i + 1))
            .collect();
        let call = format!("SELECT * FROM {name}({})", arguments.join(", "));
        Kept {
            sql,
            name,
            params,
            columns,
            call,
        }
    }

    /// What a pooled transaction sends: the function's call.
    pub(crate) fn call(&self) -> &str {
        &self.call
    }

    /// Whether `e` says this statement's function does not exist (yet).
    pub(crate) fn is_missing(&self, e: &tokio_postgres::Error) -> bool {
        e.as_db_error()
            .is_some_and(|db| db.code().code() == "42883" && db.message().contains(&self.name))
    }

    /// The `CREATE FUNCTION` that keeps the statement. Its result columns are named
    /// `baton_kept_1`, …, and `use_column` settles any other clash, so a name in the
    /// statement means the table's column, as it does outside the function.
    fn definition(&self) -> String {
        let columns: Vec<String> = self
            .columns
            .iter()
            .enumerate()
            .map(|(i, ty)| format!("baton_kept_{} {ty}", i + 1))
            .collect();
        format!(
            "CREATE FUNCTION {}({}) RETURNS TABLE ({}) LANGUAGE plpgsql VOLATILE AS $baton_kept$
             #variable_conflict use_column
             BEGIN
             RETURN QUERY {};
             END
             $baton_kept$",
            self.name,
            self.params.join(", "),
            columns.join(", "),
            self.sql
        )
    }

    /// Creates the function on `client`, outside any transaction: `Made` also when another
    /// process made it at the same moment, `Refused` when the role may not create functions
    /// (the statement is then run as it is on this connection).
    pub(crate) fn create(&self, client: &mut Client) -> Result<Creation, tokio_postgres::Error> {
        match client.batch_execute(&self.definition()) {
            Ok(()) => Ok(Creation::Made),
            // Created meanwhile by another (duplicate_function, or the catalog's unique index
            // when both committed at once).
            Err(e) if code_of(&e).is_some_and(|c| c == "42723" || c == "23505") => {
                Ok(Creation::Made)
            }
            Err(e) if code_of(&e) == Some("42501") => Ok(Creation::Refused),
            Err(e) => Err(e),
        }
    }
}

/// What came of creating a kept statement's function.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Creation {
    Made,
    Refused,
}

fn code_of(e: &tokio_postgres::Error) -> Option<&str> {
    e.as_db_error().map(|db| db.code().code())
}

/// FNV-1a, 64 bits: a name that stays the same for the same text in every process.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::Kept;

    #[test]
    fn a_kept_statements_name_follows_its_text_and_its_call_declares_its_parameters() {
        let one = Kept::new("SELECT $1 || $2".into(), &["text", "text"], &["text"]);
        let same = Kept::new("SELECT $1 || $2".into(), &["text", "text"], &["text"]);
        let other = Kept::new("SELECT $2 || $1".into(), &["text", "text"], &["text"]);
        assert_eq!(one.name, same.name);
        assert_ne!(one.name, other.name);
        assert!(one.name.starts_with("baton_kept_") && one.name.len() == 27);
        assert_eq!(
            one.call(),
            format!("SELECT * FROM {}($1::text, $2::text)", one.name)
        );
    }
}
