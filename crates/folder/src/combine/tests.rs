use std::collections::HashSet;
use std::time::{Duration, Instant};

use super::*;
use baton_core::{NewTask, TaskStatus, TaskStore};

fn project_with(tasks: usize) -> (tempfile::TempDir, FolderStore) {
    let dir = tempfile::tempdir().unwrap();
    let store = FolderStore::init(dir.path(), "Combine claims", None).unwrap();
    for i in 1..=tasks {
        store
            .add_task(NewTask {
                description: format!("part {i}"),
                priority: 1,
                ..NewTask::default()
            })
            .unwrap();
    }
    (dir, store)
}

fn queue(store: &FolderStore) -> PathBuf {
    store.layout().claims_queue()
}

/// The names in the queue folder ending in `.ext`.
fn queued(store: &FolderStore, ext: &str) -> Vec<PathBuf> {
    match fs::read_dir(queue(store)) {
        Ok(entries) => entries
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == ext))
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// Waits until `n` requests wait in the queue (their claims are blocked on the lock).
fn until_queued(store: &FolderStore, n: usize) -> Vec<PathBuf> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let requests = queued(store, REQUEST);
        if requests.len() >= n {
            return requests;
        }
        assert!(
            Instant::now() < deadline,
            "{} of {n} queued",
            requests.len()
        );
        std::thread::yield_now();
    }
}

fn held_by(store: &FolderStore, agent: &str) -> Vec<String> {
    store
        .load()
        .unwrap()
        .tasks
        .iter()
        .filter(|t| t.status.is_held() && t.claimed_by.as_deref() == Some(agent))
        .map(|t| t.id.clone())
        .collect()
}

#[test]
fn claims_waiting_for_the_lock_are_answered_by_one_write() {
    let (_dir, store) = project_with(5);
    let lock = FileLock::exclusive(&store.layout().lock_file()).unwrap();
    let claims: Vec<_> = (1..=3)
        .map(|i| {
            let store = store.clone();
            std::thread::spawn(move || {
                store
                    .claim(&ClaimRequest::next(format!("w{i}")))
                    .unwrap()
                    .expect("a task for every waiter")
                    .task
            })
        })
        .collect();
    until_queued(&store, 3);
    drop(lock);
    let tasks: Vec<Task> = claims.into_iter().map(|c| c.join().unwrap()).collect();
    let ids: HashSet<&str> = tasks.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(ids.len(), 3, "three different tasks: {ids:?}");
    // The first to take the lock wrote all three claims at once: one moment for them all.
    let moments: HashSet<_> = tasks.iter().map(|t| t.claimed_at).collect();
    assert_eq!(moments.len(), 1, "claimed at {moments:?}");
    for (i, task) in tasks.iter().enumerate() {
        let agent = format!("w{}", i + 1);
        assert_eq!(task.claimed_by.as_deref(), Some(agent.as_str()));
        assert_eq!(held_by(&store, &agent), vec![task.id.clone()]);
    }
    let left: Vec<_> = fs::read_dir(queue(&store)).unwrap().collect();
    assert!(left.is_empty(), "the queue is left empty: {left:?}");
}

#[test]
fn a_request_whose_owner_is_gone_is_removed_unanswered() {
    let (_dir, store) = project_with(2);
    fs::create_dir(queue(&store)).unwrap();
    // Left by a process that died waiting: nothing holds its lock.
    let ghost = queue(&store).join(format!("{:024}-1-abcd.{REQUEST}", 1));
    fs::write(&ghost, r#"{"agent":"ghost","ignore_reservations":false}"#).unwrap();
    let stale_temp = queue(&store).join(format!("{:024}-1-dcba{TEMP_SUFFIX}", 2));
    fs::write(&stale_temp, "{").unwrap();
    let claimed = store.claim(&ClaimRequest::next("w1")).unwrap().unwrap();
    assert_eq!(claimed.task.claimed_by.as_deref(), Some("w1"));
    assert!(held_by(&store, "ghost").is_empty(), "no claim for the dead");
    assert!(!ghost.exists() && !stale_temp.exists());
}

#[test]
fn an_unconfirmed_answer_stands_only_if_the_board_holds_its_claim() {
    for written in [true, false] {
        let (_dir, store) = project_with(3);
        let lock = FileLock::exclusive(&store.layout().lock_file()).unwrap();
        let waiter = {
            let store = store.clone();
            std::thread::spawn(move || store.claim(&ClaimRequest::next("w1")).unwrap().unwrap())
        };
        let request = until_queued(&store, 1).remove(0);
        // A writer that died after its answer: with the board written, or before it.
        let lease = store.lease();
        let claimed = store
            .transact_holding(&lock, |file, now| {
                let claimed = file.claim(&ClaimRequest::next("w1"), now, lease)?.unwrap();
                Ok(match written {
                    true => Change::Write(claimed),
                    false => Change::Keep(claimed),
                })
            })
            .unwrap();
        let answer = Answer {
            task: Some(claimed.task.clone()),
            reclaimed_from: None,
        };
        leave(&answer_path(&request, PENDING), &answer).unwrap();
        drop(lock);
        let got = waiter.join().unwrap();
        assert_eq!(
            held_by(&store, "w1"),
            vec![got.task.id.clone()],
            "one claim, written {written}"
        );
        if written {
            assert_eq!(got.task.id, claimed.task.id);
            assert_eq!(got.task.claimed_at, claimed.task.claimed_at);
        }
        assert!(fs::read_dir(queue(&store)).unwrap().next().is_none());
    }
}

#[test]
fn an_answer_that_cannot_be_read_is_an_error_naming_it() {
    let (_dir, store) = project_with(1);
    let lock = FileLock::exclusive(&store.layout().lock_file()).unwrap();
    let waiter = {
        let store = store.clone();
        std::thread::spawn(move || store.claim(&ClaimRequest::next("w1")))
    };
    let request = until_queued(&store, 1).remove(0);
    fs::write(answer_path(&request, CONFIRMED), "{\"task\": [").unwrap();
    drop(lock);
    let message = waiter.join().unwrap().unwrap_err().to_string();
    assert!(message.contains(".answer"), "{message}");
    assert!(held_by(&store, "w1").is_empty());
    assert_eq!(store.load().unwrap().tasks[0].status, TaskStatus::Available);
}

#[test]
fn a_queue_that_is_a_link_is_not_followed() {
    let (_dir, store) = project_with(1);
    let elsewhere = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), queue(&store)).unwrap();
    let request = ClaimRequest::next("w1");
    let refused = Waiting::enter(&store, &request).err().expect("refused");
    assert!(refused.to_string().contains("symbolic link"), "{refused}");
    assert!(fs::read_dir(elsewhere.path()).unwrap().next().is_none());
    // Claims go on without the combining.
    assert!(store.claim(&request).unwrap().is_some());
    assert!(fs::read_dir(elsewhere.path()).unwrap().next().is_none());
}

#[test]
fn an_answer_is_never_written_through_a_link_at_its_temporary_name() {
    let (_dir, store) = project_with(1);
    fs::create_dir(queue(&store)).unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let victim = elsewhere.path().join("victim");
    fs::write(&victim, "untouched").unwrap();
    let request = queue(&store).join(format!("{:024}-1-abcd.{REQUEST}", 1));
    let pending = answer_path(&request, PENDING);
    let temp = pending.with_extension(format!("tmp{TEMP_SUFFIX}"));
    std::os::unix::fs::symlink(&victim, &temp).unwrap();
    let answer = Answer {
        task: None,
        reclaimed_from: None,
    };
    leave(&pending, &answer).unwrap();
    assert_eq!(fs::read_to_string(&victim).unwrap(), "untouched");
    assert!(read_answer(&pending).unwrap().is_some());
    assert!(!temp.exists() && fs::symlink_metadata(&temp).is_err());
}

#[test]
fn a_folder_of_an_earlier_version_ignores_the_queue_once_a_claim_waits_in_it() {
    let (dir, store) = project_with(1);
    let ignore = dir.path().join(".coordination/.gitignore");
    fs::write(&ignore, format!(".lock\n*{TEMP_SUFFIX}\n")).unwrap();
    let lock = FileLock::exclusive(&store.layout().lock_file()).unwrap();
    let claim = {
        let store = store.clone();
        std::thread::spawn(move || store.claim(&ClaimRequest::next("w1")).unwrap())
    };
    until_queued(&store, 1);
    assert_eq!(
        fs::read_to_string(&ignore).unwrap(),
        format!(".lock\n*{TEMP_SUFFIX}\n.queue/\n")
    );
    drop(lock);
    assert!(claim.join().unwrap().is_some());
}
