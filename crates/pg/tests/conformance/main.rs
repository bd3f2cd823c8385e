//! The store suite (`baton-store-suite`) on PostgreSQL, directly and through PgBouncer in
//! transaction mode (a second client on each pooled project first, so the pooler's two server
//! sessions are both in use and a statement left on one would be missed on the other): every
//! scenario passes on each, and each answers every step as the folder does (as River's driver
//! suite runs every driver through every interface). `places` holds what only PostgreSQL has.

use std::cell::Cell;

use baton_core::TaskStore;
use baton_folder::FolderStore;
use baton_store_suite::{Fixture, exercise};
use baton_test_support::pg::PgServer;
use baton_test_support::pgbouncer::PgBouncer;

mod places;

#[test]
fn postgresql_passes_every_scenario_directly_and_through_pgbouncer_answering_as_the_folder_does() {
    let server = PgServer::shared();
    let bouncer = PgBouncer::start(&server, 2);
    let from_folder = exercise(&|_| {
        let dir = tempfile::tempdir().unwrap();
        let store = FolderStore::init(dir.path(), "Test goal", None).unwrap();
        Fixture {
            store: Box::new(store),
            keep: Box::new(dir),
        }
    });
    let projects = Cell::new(0);
    let next_project = || {
        projects.set(projects.get() + 1);
        format!("suite-{}", projects.get())
    };
    let direct = exercise(&|_| {
        let store = baton_pg::PgStore::init(server.url(), &next_project(), "Test goal", None);
        Fixture {
            store: Box::new(store.unwrap()),
            keep: Box::new(()),
        }
    });
    assert_eq!(direct, from_folder, "PostgreSQL answers as the folder does");
    let pooled = exercise(&|_| {
        let name = format!("{}-pooled", next_project());
        let store = baton_pg::PgStore::init(&bouncer.url(), &name, "Test goal", None).unwrap();
        let other = baton_pg::PgStore::open(&bouncer.url(), &name).unwrap();
        other.status().unwrap();
        bouncer.wait_for_full_pool(2);
        Fixture {
            store: Box::new(store),
            keep: Box::new(other),
        }
    });
    assert_eq!(pooled, from_folder, "through PgBouncer as the folder does");
    assert!(bouncer.server_connections() <= 2);
}
