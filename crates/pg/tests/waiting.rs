//! Waiting claims on PostgreSQL: woken by `NOTIFY` when a task becomes ready, and by a timer
//! when a lease runs out; a timeout returns nothing. Each waiter says when it is listening,
//! and the test acts only then, so nothing here races a sleep.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use baton_core::{Completion, NewTask, TaskStore};
use baton_pg::PgStore;
use baton_test_support::PATIENCE;
use baton_test_support::pg::PgServer;

fn new(description: &str, dependencies: &[&str]) -> NewTask {
    NewTask {
        description: description.into(),
        dependencies: dependencies.iter().map(|d| d.to_string()).collect(),
        ..NewTask::default()
    }
}

/// Starts a waiting claim (`claim_within`) for `agent` on its own connection; returns once it listens, with
/// the channel its result comes on.
fn waiter(
    url: &str,
    project: &str,
    agent: &'static str,
    timeout: Duration,
) -> mpsc::Receiver<Option<String>> {
    let (armed_tx, armed_rx) = mpsc::channel();
    let (done_tx, done_rx) = mpsc::channel();
    let (url, project) = (url.to_string(), project.to_string());
    std::thread::spawn(move || {
        let p = PgStore::open(&url, &project).unwrap();
        let claim = baton_live::claim_wait::claim_within(
            &p,
            agent,
            Some(timeout),
            baton_live::WatchMode::default(),
            |_| armed_tx.send(()).unwrap(),
        )
        .unwrap();
        let _ = done_tx.send(claim.map(|c| c.task.id));
    });
    armed_rx.recv_timeout(PATIENCE).expect("the waiter listens");
    done_rx
}

#[test]
fn a_waiting_claim_wakes_when_a_task_is_added_or_its_dependency_is_done() {
    let server = PgServer::shared();
    let p = PgStore::init(server.url(), "wake", "goal", None).unwrap();
    adding_and_completing_wake_waiters(&p, server.url(), "wake");
}

/// A waiter on `project` wakes when a task is added; another, when the task its task waits
/// for is done (the notice sent with the completion's write).
fn adding_and_completing_wake_waiters(p: &PgStore, url: &str, project: &str) {
    let woke = waiter(url, project, "w1", PATIENCE * 2);
    p.add_task(new("A", &[])).unwrap();
    assert_eq!(
        woke.recv_timeout(PATIENCE).unwrap().as_deref(),
        Some("task-1")
    );

    // task-2 waits for task-1, which w1 holds; completing task-1 wakes the next waiter.
    p.add_task(new("B", &["task-1"])).unwrap();
    let woke = waiter(url, project, "w2", PATIENCE * 2);
    p.start("w1", "task-1").unwrap();
    let report = Completion {
        output: "did A".into(),
        ..Completion::default()
    };
    p.complete("w1", "task-1", report).unwrap();
    assert_eq!(
        woke.recv_timeout(PATIENCE).unwrap().as_deref(),
        Some("task-2")
    );
}

#[test]
fn through_pgbouncer_a_waiting_claim_listens_on_the_server_and_wakes() {
    let server = PgServer::shared();
    let bouncer = baton_test_support::pgbouncer::PgBouncer::start(&server, 2);
    let url = bouncer.url();
    let p = PgStore::init(&url, "wake-pooled", "goal", None).unwrap();
    bouncer.wait_for_full_pool(2);
    // Both notices (an added task's, and the one sent with a completion's write) go out
    // through the pooler.
    adding_and_completing_wake_waiters(&p, &url, "wake-pooled");
    // The wakes went through the server itself; the pooler saw only the transactions.
    assert!(bouncer.server_connections() <= 2);
}

#[test]
fn a_lease_running_out_wakes_a_waiter_without_any_notification() {
    let server = PgServer::shared();
    let p = PgStore::init(server.url(), "expiry", "goal", None)
        .unwrap()
        .with_lease(Duration::from_secs(1));
    p.add_task(new("A", &[])).unwrap();
    p.claim(&baton_core::ClaimRequest::next("gone"))
        .unwrap()
        .unwrap();
    let started = Instant::now();
    let woke = waiter(server.url(), "expiry", "w2", PATIENCE * 2);
    // The waiter's own lease setting does not matter: the claim's expiry is in the row.
    assert_eq!(
        woke.recv_timeout(PATIENCE).unwrap().as_deref(),
        Some("task-1")
    );
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "not before the lease ran out"
    );
}

#[test]
fn a_waiting_claim_gives_up_at_its_timeout() {
    let server = PgServer::shared();
    PgStore::init(server.url(), "nothing", "goal", None).unwrap();
    let woke = waiter(server.url(), "nothing", "w1", Duration::from_millis(300));
    assert_eq!(woke.recv_timeout(PATIENCE).unwrap(), None);
}

/// The server's connections listening on `channel` for database `baton`'s user, counted.
fn listening(server: &PgServer, channel: &str) -> usize {
    server
        .admin_sql(&format!(
            "SELECT count(*) FROM pg_stat_activity WHERE usename = 'baton' AND query = 'LISTEN {channel}'"
        ))
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn forty_waiters_on_one_store_share_one_listening_connection_and_each_claims() {
    // A supervisor's workers all wait through its one store: a connection each would put two
    // teams of a hundred past the server's connection limit.
    let server = PgServer::start();
    let leader = PgStore::init(server.url(), "many", "goal", None).unwrap();
    let store = PgStore::open(server.url(), "many").unwrap();
    const WAITERS: usize = 40;
    let (armed_tx, armed_rx) = mpsc::channel();
    let (done_tx, done_rx) = mpsc::channel();
    std::thread::scope(|scope| {
        for n in 0..WAITERS {
            let (store, armed_tx, done_tx) = (&store, armed_tx.clone(), done_tx.clone());
            scope.spawn(move || {
                let agent = format!("w{n}");
                let claim = baton_live::claim_wait::claim_within(
                    store,
                    &agent,
                    Some(PATIENCE * 4),
                    baton_live::WatchMode::default(),
                    |_| armed_tx.send(()).unwrap(),
                )
                .unwrap();
                done_tx.send(claim.map(|c| c.task.id)).unwrap();
            });
        }
        for _ in 0..WAITERS {
            armed_rx
                .recv_timeout(PATIENCE)
                .expect("every waiter listens");
        }
        assert_eq!(
            listening(&server, "baton_tasks"),
            1,
            "one connection listens for all"
        );
        for n in 0..WAITERS {
            leader.add_task(new(&format!("T{n}"), &[])).unwrap();
        }
        let mut claimed: Vec<String> = (0..WAITERS)
            .map(|_| {
                done_rx
                    .recv_timeout(PATIENCE * 2)
                    .expect("every waiter woke")
                    .expect("and claimed a task")
            })
            .collect();
        claimed.sort();
        claimed.dedup();
        assert_eq!(
            claimed.len(),
            WAITERS,
            "each task claimed once: {claimed:?}"
        );
    });
}
