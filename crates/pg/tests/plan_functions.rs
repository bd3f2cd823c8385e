//! Through a pooler, a claim's best-ready query runs as a PL/pgSQL function of its own, so a
//! server session keeps its plan (`plan_functions` in the crate): made on first use by whichever
//! process comes first, made again when dropped, and where the role may not create
//! functions, the query runs as it is. A server per test, so the functions one test makes or
//! drops are its own.

use std::collections::HashSet;

use baton_core::{ClaimRequest, NewTask, TaskStore};
use baton_pg::PgStore;
use baton_test_support::in_parallel;
use baton_test_support::pg::{PgServer, psql};
use baton_test_support::pgbouncer::PgBouncer;

/// The names of the functions that keep statements, sorted.
fn kept_functions(server: &PgServer) -> Vec<String> {
    let names = psql(
        server.url(),
        "SELECT proname FROM pg_proc WHERE proname LIKE 'baton\\_kept\\_%' ORDER BY proname",
    );
    names.lines().map(str::to_string).collect()
}

fn add(store: &PgStore, n: usize, files: &[&str]) {
    store
        .add_task(NewTask {
            description: format!("Task {n}"),
            files: files.iter().map(|f| f.to_string()).collect(),
            ..NewTask::default()
        })
        .unwrap();
}

fn claim(store: &PgStore, agent: &str) -> Option<String> {
    store
        .claim(&ClaimRequest::next(agent))
        .unwrap()
        .map(|c| c.task.id)
}

#[test]
fn pooled_claims_make_their_functions_once_among_many_and_again_when_dropped() {
    const TASKS: usize = 60;
    const WORKERS: usize = 6;
    let server = PgServer::start();
    let bouncer = PgBouncer::start(&server, 3);
    let lead = PgStore::init(&bouncer.url(), "kept", "Test goal", None).unwrap();
    // Every third task on one file: while a worker holds it, the others pass over the rest
    // of them (the passed-over form of the query).
    for n in 0..TASKS {
        match n % 3 {
            0 => add(&lead, n, &["src/shared.rs"]),
            _ => add(&lead, n, &[]),
        }
    }
    assert!(kept_functions(&server).is_empty());
    // Every worker's first claim may find the function missing at once.
    let claimed = in_parallel(WORKERS, |w| {
        let mine = PgStore::open(&bouncer.url(), "kept").unwrap();
        let agent = format!("w{w}");
        std::iter::from_fn(|| claim(&mine, &agent)).collect()
    });
    let unique: HashSet<_> = claimed.iter().collect();
    assert_eq!(unique.len(), claimed.len(), "none claimed twice");
    assert!(!claimed.is_empty());
    let made = kept_functions(&server);
    assert!(
        !made.is_empty(),
        "the best-ready query was kept as a function"
    );
    // Dropped (a restore, an administrator): the next claim makes it again and claims.
    for name in &made {
        psql(server.url(), &format!("DROP FUNCTION {name}"));
    }
    assert!(kept_functions(&server).is_empty());
    add(&lead, TASKS, &[]);
    assert_eq!(claim(&lead, "w-late").as_deref(), Some("task-61"));
    assert!(!kept_functions(&server).is_empty(), "made again");
    assert!(bouncer.server_connections() <= 3);
}

#[test]
fn a_role_that_may_not_create_functions_claims_through_a_pooler_with_the_query_itself() {
    let server = PgServer::start();
    let owner = PgStore::init(server.url(), "unkept", "Test goal", None).unwrap();
    add(&owner, 0, &["src/a.rs"]);
    add(&owner, 1, &[]);
    // A role that may use Baton's tables but not create anything in their schema.
    server.admin_sql("CREATE ROLE plain LOGIN PASSWORD 'plain-password'");
    psql(
        server.url(),
        "GRANT USAGE ON SCHEMA public TO plain;
         GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO plain;
         GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO plain;",
    );
    let host = server.url().rsplit_once('@').unwrap().1;
    let port = host.split_once(':').unwrap().1.split('/').next().unwrap();
    // The server itself stands in for the pooler: a pooled store sends every statement as
    // it would through one.
    let url = format!("postgres://plain:plain-password@{host}?pgbouncer=true&listen_port={port}");
    let plain = PgStore::open(&url, "unkept").unwrap();
    assert_eq!(claim(&plain, "w1").as_deref(), Some("task-1"));
    assert_eq!(claim(&plain, "w2").as_deref(), Some("task-2"));
    assert_eq!(claim(&plain, "w3"), None);
    assert!(kept_functions(&server).is_empty(), "nothing was made");
    // The refusal is that connection's: the owner's pooled store in the same process makes
    // the functions.
    let owners = format!("{}?pgbouncer=true&listen_port={port}", server.url());
    let pooled_owner = PgStore::open(&owners, "unkept").unwrap();
    add(&pooled_owner, 2, &[]);
    assert_eq!(claim(&pooled_owner, "w4").as_deref(), Some("task-3"));
    assert!(!kept_functions(&server).is_empty(), "made by the owner");
}
