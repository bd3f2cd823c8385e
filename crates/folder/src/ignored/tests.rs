use super::*;
use crate::FolderStore;

fn ignore_file(dir: &tempfile::TempDir) -> std::path::PathBuf {
    dir.path().join(".coordination").join(NAME)
}

#[test]
fn a_new_folder_ignores_the_lock_the_files_being_written_and_the_queue() {
    let dir = tempfile::tempdir().unwrap();
    FolderStore::init(dir.path(), "Ignore", None).unwrap();
    let text = std::fs::read_to_string(ignore_file(&dir)).unwrap();
    assert_eq!(text, ".lock\n*.baton-tmp\n.queue/\n");
}

#[test]
fn an_earlier_folder_is_given_the_lines_it_lacks_and_keeps_the_leads_own() {
    let dir = tempfile::tempdir().unwrap();
    let store = FolderStore::init(dir.path(), "Ignore", None).unwrap();
    // As an earlier version wrote it, with a line of the lead's after it (no newline at its end).
    std::fs::write(ignore_file(&dir), ".lock\n*.baton-tmp\nscratch/").unwrap();
    ignore_own_files(store.layout()).unwrap();
    let text = std::fs::read_to_string(ignore_file(&dir)).unwrap();
    assert_eq!(text, ".lock\n*.baton-tmp\nscratch/\n.queue/\n");
    // Once every line is there, nothing is written again.
    let before = std::fs::metadata(ignore_file(&dir))
        .unwrap()
        .modified()
        .unwrap();
    let inode = std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(ignore_file(&dir)).unwrap());
    ignore_own_files(store.layout()).unwrap();
    let after = std::fs::metadata(ignore_file(&dir)).unwrap();
    assert_eq!(std::os::unix::fs::MetadataExt::ino(&after), inode);
    assert_eq!(after.modified().unwrap(), before);
    assert_eq!(std::fs::read_to_string(ignore_file(&dir)).unwrap(), text);
}

#[test]
fn a_link_in_its_place_is_neither_followed_nor_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let store = FolderStore::init(dir.path(), "Ignore", None).unwrap();
    // A file outside the folder, which an agent links in its place.
    let outside = dir.path().join("secret");
    std::fs::write(&outside, "key").unwrap();
    std::fs::remove_file(ignore_file(&dir)).unwrap();
    std::os::unix::fs::symlink(&outside, ignore_file(&dir)).unwrap();
    ignore_own_files(store.layout()).unwrap();
    assert!(
        std::fs::symlink_metadata(ignore_file(&dir))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "key");
}

#[test]
fn a_folder_that_is_itself_a_link_of_the_leads_is_written_through_it() {
    let dir = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), dir.path().join(".coordination")).unwrap();
    FolderStore::init(dir.path(), "Ignore", None).unwrap();
    let text = std::fs::read_to_string(elsewhere.path().join(NAME)).unwrap();
    assert_eq!(text, ".lock\n*.baton-tmp\n.queue/\n");
}
