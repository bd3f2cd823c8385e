//! Faults on a real server of this test's own: the server restarting between operations, and a
//! waiting claim's connection cut by the server. Each leaves nothing half-done and the next
//! operation (or the waiter) carries on.

use std::sync::mpsc;

use baton_core::NewTask;
use baton_core::{ErrorKind, TaskStatus, TaskStore};
use baton_pg::PgStore;
use baton_test_support::PATIENCE;
use baton_test_support::pg::PgServer;

fn new(description: &str) -> NewTask {
    NewTask {
        description: description.into(),
        ..NewTask::default()
    }
}

#[test]
fn operations_carry_on_after_the_server_restarts() {
    let server = PgServer::start();
    let p = PgStore::init(server.url(), "restart", "goal", None).unwrap();
    p.add_task(new("before")).unwrap();
    server.restart();
    // The old connection is gone; the next operation learns it before anything was applied,
    // reconnects and runs on the new connection.
    p.add_task(new("after")).unwrap();
    let claim = p
        .claim(&baton_core::ClaimRequest::next("w1"))
        .unwrap()
        .unwrap();
    assert_eq!(claim.task.id, "task-1");
    let status = p.status().unwrap();
    assert_eq!(status.count(TaskStatus::Available), 1);
    assert_eq!(status.count(TaskStatus::Claimed), 1);
}

#[test]
fn a_connection_cut_during_an_operation_fails_it_cleanly_and_the_next_one_works() {
    let server = PgServer::start();
    let p = PgStore::init(server.url(), "cut", "goal", None).unwrap();
    p.add_task(new("A")).unwrap();
    // Cut every connection of the test role, as a failover or a network drop would.
    server.admin_sql(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
         WHERE usename = 'baton' AND pid <> pg_backend_pid()",
    );
    // The cut may be noticed by this call or already before it: either it fails with the
    // store's error, or it reconnects and succeeds. Nothing is half-done either way.
    match p.claim(&baton_core::ClaimRequest::next("w1")) {
        Err(e) => assert_eq!(e.kind(), ErrorKind::Database, "{e}"),
        Ok(claim) => assert_eq!(claim.unwrap().task.id, "task-1"),
    }
    let status = p.status().unwrap();
    assert_eq!(status.total, 1);
    let claimed = status.count(TaskStatus::Claimed);
    assert!(claimed <= 1, "claimed at most once");
    if claimed == 0 {
        assert_eq!(
            p.claim(&baton_core::ClaimRequest::next("w1"))
                .unwrap()
                .unwrap()
                .task
                .id,
            "task-1"
        );
    }
}

#[test]
fn a_waiting_claim_reconnects_when_its_connection_is_cut_and_still_wakes() {
    let server = PgServer::start();
    let leader = PgStore::init(server.url(), "waiter", "goal", None).unwrap();
    let (armed_tx, armed_rx) = mpsc::channel();
    let (done_tx, done_rx) = mpsc::channel();
    let url = server.url().to_string();
    std::thread::spawn(move || {
        let p = PgStore::open(&url, "waiter").unwrap();
        let claim = baton_live::claim_wait::claim_within(
            &p,
            "w1",
            Some(PATIENCE * 2),
            baton_live::WatchMode::default(),
            |_| armed_tx.send(()).unwrap(),
        )
        .unwrap();
        let _ = done_tx.send(claim.map(|c| c.task.id));
    });
    armed_rx.recv_timeout(PATIENCE).expect("the waiter listens");
    server.admin_sql(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
         WHERE usename = 'baton' AND query LIKE 'LISTEN%'",
    );
    // Whether the task is added before or after the waiter reconnects, it looks again after
    // listening anew, so it finds it.
    leader.add_task(new("A")).unwrap();
    let got = done_rx
        .recv_timeout(PATIENCE)
        .expect("the waiter carried on");
    assert_eq!(got.as_deref(), Some("task-1"));
}
