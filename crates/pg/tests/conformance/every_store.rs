//! The harness: one scenario on each of Baton's three stores, the `.coordination/` folder,
//! PostgreSQL, and PostgreSQL through PgBouncer in transaction mode (a second client on the
//! pooled project first, so the pooler's two server sessions are both in use and a statement
//! left on one would be missed on the other), and the answers compared.

use baton_core::{DocumentStore, SignalStore, TaskStore, TeamStore};
use baton_folder::FolderStore;
use baton_test_support::pg::PgServer;
use baton_test_support::pgbouncer::PgBouncer;
use serde_json::{Value, json};

/// A store of every trait: what each of Baton's stores is.
pub trait Store: TaskStore + SignalStore + DocumentStore + TeamStore {}
impl<S: TaskStore + SignalStore + DocumentStore + TeamStore> Store for S {}

/// The answers `scenario` gives on the folder, which PostgreSQL must give alike, directly and
/// through PgBouncer: projects `{name}` and `{name}-pooled` on the shared server.
pub fn on_every_store<T: PartialEq + std::fmt::Debug>(
    name: &str,
    scenario: impl Fn(&dyn Store) -> T,
) -> T {
    let dir = tempfile::tempdir().unwrap();
    let folder = FolderStore::init(dir.path(), "Test goal", None).unwrap();
    let server = PgServer::shared();
    let database = baton_pg::PgStore::init(server.url(), name, "Test goal", None).unwrap();
    let bouncer = PgBouncer::start(&server, 2);
    let pooled_name = format!("{name}-pooled");
    let pooled = baton_pg::PgStore::init(&bouncer.url(), &pooled_name, "Test goal", None).unwrap();
    let other = baton_pg::PgStore::open(&bouncer.url(), &pooled_name).unwrap();
    other.status().unwrap();
    bouncer.wait_for_full_pool(2);
    let from_folder = scenario(&folder);
    assert_eq!(scenario(&database), from_folder, "PostgreSQL");
    assert_eq!(scenario(&pooled), from_folder, "through PgBouncer");
    assert!(bouncer.server_connections() <= 2);
    from_folder
}

/// What one step answered, with times left out (each store has its own clock).
pub fn answer<T: serde::Serialize>(result: baton_core::Result<T>) -> Value {
    match result {
        Ok(value) => without_times(serde_json::to_value(value).unwrap()),
        Err(e) => json!({"error": e.kind(), "message": e.to_string()}),
    }
}

pub fn without_times(mut value: Value) -> Value {
    match &mut value {
        Value::Object(map) => {
            map.retain(|key, _| {
                !key.ends_with("_at") && key != "as_of" && key != "lease_remaining_secs"
            });
            for v in map.values_mut() {
                *v = without_times(v.take());
            }
        }
        Value::Array(items) => {
            for v in items.iter_mut() {
                *v = without_times(v.take());
            }
        }
        _ => {}
    }
    value
}
