//! The store suite (`baton-store-suite`) on the `.coordination/` folder: every scenario on a
//! fresh folder of its own, no server needed.

use baton_folder::FolderStore;
use baton_store_suite::{Fixture, SCENARIOS, exercise};

#[test]
fn the_folder_passes_every_scenario_of_the_store_suite() {
    let answers = exercise(&|_| {
        let dir = tempfile::tempdir().unwrap();
        let store = FolderStore::init(dir.path(), "Test goal", None).unwrap();
        Fixture {
            store: Box::new(store),
            keep: Box::new(dir),
        }
    });
    assert_eq!(answers.len(), SCENARIOS.len());
}
