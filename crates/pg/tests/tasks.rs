//! The task store on a real PostgreSQL server (a throwaway one per test binary): the same
//! rules and refusals as the folder, claims exactly once under contention, and a schema from a
//! newer `baton` refused.

use std::collections::HashSet;

use baton_core::{Completion, NewTask};
use baton_core::{ErrorKind, StoreError, TaskStatus, TaskStore};
use baton_pg::PgStore;
use baton_test_support::in_parallel;
use baton_test_support::pg::PgServer;

fn project(server: &PgServer, name: &str) -> PgStore {
    PgStore::init(server.url(), name, "Test goal", None).unwrap()
}

fn task(description: &str, priority: u32, dependencies: &[&str]) -> NewTask {
    NewTask {
        description: description.into(),
        priority,
        dependencies: dependencies.iter().map(|d| d.to_string()).collect(),
        ..NewTask::default()
    }
}

#[test]
fn tasks_go_through_their_lifecycle_with_the_folders_rules_and_words() {
    let server = PgServer::shared();
    let p = project(&server, "lifecycle");
    let a = p.add_task(task("A", 5, &[])).unwrap();
    let b = p.add_task(task("B", 1, &["task-1"])).unwrap();
    let c = p.add_task(task("C", 3, &[])).unwrap();
    assert_eq!(
        (a.id.as_str(), b.id.as_str(), c.id.as_str()),
        ("task-1", "task-2", "task-3")
    );

    // Unknown dependencies and duplicate ids are refused as the folder refuses them.
    let unknown = p.add_task(task("D", 5, &["ghost"])).unwrap_err();
    assert_eq!(unknown.kind(), ErrorKind::UnknownDependency, "{unknown}");
    let mut named = task("E", 5, &[]);
    named.id = Some("task-1".into());
    assert_eq!(
        p.add_task(named).unwrap_err().kind(),
        ErrorKind::DuplicateTask
    );

    // Best ready first: task-2 has priority 1 but waits for task-1, so task-3 comes first.
    let first = p
        .claim(&baton_core::ClaimRequest::next("w1"))
        .unwrap()
        .unwrap();
    assert_eq!(first.task.id, "task-3");
    let second = p
        .claim(&baton_core::ClaimRequest::next("w2"))
        .unwrap()
        .unwrap();
    assert_eq!(second.task.id, "task-1");
    assert!(
        p.claim(&baton_core::ClaimRequest::next("w3"))
            .unwrap()
            .is_none(),
        "task-2 waits for task-1"
    );

    // The folder's refusal, word for word.
    let report = Completion {
        output: "done A".into(),
        ..Completion::default()
    };
    let early = p.complete("w2", "task-1", report.clone()).unwrap_err();
    assert!(early.to_string().contains("start it first"), "{early}");
    let thief = p.start("w1", "task-1").unwrap_err();
    assert_eq!(thief.kind(), ErrorKind::NotOwner, "{thief}");

    p.start("w2", "task-1").unwrap();
    let done = p.complete("w2", "task-1", report).unwrap();
    assert_eq!(done.status, TaskStatus::Done);
    assert_eq!(
        p.claim(&baton_core::ClaimRequest::next("w3"))
            .unwrap()
            .unwrap()
            .task
            .id,
        "task-2",
        "unblocked"
    );

    assert_eq!(p.heartbeat("w1").unwrap(), ["task-3"]);
    p.fail("w1", "task-3", "broke").unwrap();
    p.reset("task-3", false).unwrap();
    p.cancel("task-3", Some("not needed")).unwrap();

    let status = p.status().unwrap();
    assert_eq!(status.goal.as_deref(), Some("Test goal"));
    let ids: Vec<_> = status.tasks.iter().map(|t| t.task.id.as_str()).collect();
    assert_eq!(ids, ["task-1", "task-2", "task-3"], "board order");
    assert_eq!(status.count(TaskStatus::Done), 1);
    assert_eq!(status.count(TaskStatus::Claimed), 1);
    assert_eq!(status.count(TaskStatus::Cancelled), 1);
    assert_eq!(
        p.start("w9", "task-9").unwrap_err().kind(),
        ErrorKind::UnknownTask
    );
}

#[test]
fn concurrent_workers_claim_every_task_exactly_once() {
    const TASKS: usize = 300;
    const WORKERS: usize = 8;
    let server = PgServer::shared();
    let p = project(&server, "contention");
    for n in 0..TASKS {
        p.add_task(task(&format!("T{n}"), 1 + (n % 5) as u32, &[]))
            .unwrap();
    }
    let claimed = in_parallel(WORKERS, |w| {
        let mine = PgStore::open(server.url(), "contention").unwrap();
        let agent = format!("w{w}");
        let mut got = Vec::new();
        while let Some(claim) = mine.claim(&baton_core::ClaimRequest::next(&agent)).unwrap() {
            got.push(claim.task.id);
        }
        got
    });
    let unique: HashSet<_> = claimed.iter().collect();
    assert_eq!(claimed.len(), TASKS, "every task claimed");
    assert_eq!(unique.len(), TASKS, "none claimed twice");
}

#[test]
fn projects_are_created_once_and_must_exist_to_open() {
    let server = PgServer::shared();
    project(&server, "once");
    let again = PgStore::init(server.url(), "once", "other", None);
    assert!(matches!(again, Err(StoreError::ProjectExists { .. })));
    let missing = PgStore::open(server.url(), "nowhere");
    assert!(matches!(missing, Err(StoreError::UnknownProject { .. })));
}

#[test]
fn a_wrong_password_or_an_unreachable_server_says_what_to_do_without_the_password() {
    let server = PgServer::shared();
    let url = server.url();
    let at = url.find(':').unwrap() + 3; // after "postgres://"
    let colon = at + url[at..].find(':').unwrap();
    let wrong = format!(
        "{}:not-the-password{}",
        &url[..colon],
        &url[url.find('@').unwrap()..]
    );
    let refused = PgStore::open(&wrong, "x").err().expect("refused");
    let text = refused.to_string();
    assert_eq!(refused.kind(), ErrorKind::Database, "{text}");
    assert!(
        text.contains("PGPASSWORD") && !text.contains("not-the-password"),
        "{text}"
    );

    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let nowhere = format!("postgres://baton:secret@127.0.0.1:{port}/baton");
    let unreachable = PgStore::open(&nowhere, "x").err().expect("refused");
    let text = unreachable.to_string();
    assert!(
        text.contains("cannot reach PostgreSQL at baton@127.0.0.1"),
        "{text}"
    );
    assert!(!text.contains("secret"), "{text}");
}

/// A database `name` as the first schema left it, holding project `old` with `tasks` (id,
/// status, dependencies, files; a held one is `w9`'s, its lease running to 2099); its URL.
fn first_schema_database(
    server: &PgServer,
    name: &str,
    tasks: &[(&str, &str, &[&str], &[&str])],
) -> String {
    server.admin_sql(&format!("CREATE DATABASE {name} OWNER baton"));
    let base = server.url();
    let url = format!("{}/{name}", &base[..base.rfind('/').unwrap()]);
    let first = baton_pg::schema::migration(0).unwrap();
    let mut sql = format!(
        "CREATE TABLE baton_schema (version integer NOT NULL);
         INSERT INTO baton_schema VALUES (1);
         {first}
         INSERT INTO baton_projects (name, goal, next_number, next_position)
         VALUES ('old', 'goal', {0}, {0});",
        tasks.len() + 1
    );
    for (position, (id, status, deps, files)) in tasks.iter().enumerate() {
        let held = *status == "claimed";
        let mut body = serde_json::json!({"id": id, "description": id, "status": status,
            "priority": 5, "dependencies": deps, "created_at": "2026-11-20T10:00:00Z",
            "attempts": 0, "context": {"files": files}});
        if held {
            body["claimed_by"] = "w9".into();
            body["claimed_at"] = "2026-11-20T10:00:00Z".into();
            body["lease_expires_at"] = "2099-01-01T00:00:00Z".into();
        }
        let (claimed_by, lease) = match held {
            true => ("'w9'", "'2099-01-01T00:00:00Z'"),
            false => ("NULL", "NULL"),
        };
        sql.push_str(&format!(
            "INSERT INTO baton_tasks (project, id, position, status, priority, created_at,
                 claimed_by, lease_expires_at, dependencies, body)
             VALUES ('old', '{id}', {}, '{status}', 5, '2026-11-20T10:00:00Z', {claimed_by},
                 {lease}, '{{{}}}', '{body}');",
            position + 1,
            deps.join(","),
        ));
    }
    baton_test_support::pg::psql(&url, &sql);
    url
}

#[test]
fn a_database_of_the_first_schema_is_migrated_and_its_tasks_carry_on() {
    let server = PgServer::shared();
    // A project with a done task, one waiting on it (ready) and one waiting on that (blocked).
    let url = first_schema_database(
        &server,
        "older",
        &[
            ("a", "done", &[], &[]),
            ("b", "available", &["a"], &[]),
            ("c", "available", &["b"], &[]),
        ],
    );
    let p = PgStore::open(&url, "old").unwrap();
    assert_eq!(
        baton_test_support::pg::psql(&url, "SELECT version FROM baton_schema").trim(),
        baton_pg::schema::VERSION.to_string()
    );
    // The GIN indexes searched on every claim and completion take entries directly, with no
    // pending list every search would read (schema 9).
    assert_eq!(
        baton_test_support::pg::psql(
            &url,
            "SELECT string_agg(c.relname || ' ' || array_to_string(c.reloptions, ','), '; '
                                ORDER BY c.relname)
             FROM pg_class c JOIN pg_am a ON a.oid = c.relam
             WHERE a.amname = 'gin' AND c.relname LIKE 'baton_%'"
        ),
        "baton_tasks_dependencies fastupdate=off; baton_tasks_held_keys fastupdate=off; \
         baton_tasks_held_reach fastupdate=off"
    );
    // Held tasks from before their file keys were recorded are found through an index of their
    // own, so a claim's look at the held tasks near its files stays on indexes (schema 10).
    assert_eq!(
        baton_test_support::pg::psql(
            &url,
            "SELECT pg_get_expr(i.indpred, i.indrelid) FROM pg_index i
             JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = 'baton_tasks_held_unkeyed'"
        )
        .trim(),
        "((keys IS NULL) AND (status = ANY (ARRAY['claimed'::text, 'in_progress'::text])))"
    );
    let claim = p
        .claim(&baton_core::ClaimRequest::next("w1"))
        .unwrap()
        .expect("b is ready");
    assert_eq!(claim.task.id, "b");
    assert!(
        p.claim(&baton_core::ClaimRequest::next("w2"))
            .unwrap()
            .is_none(),
        "c waits for b"
    );
    p.start("w1", "b").unwrap();
    let report = Completion {
        output: "b done".into(),
        ..Completion::default()
    };
    p.complete("w1", "b", report).unwrap();
    assert_eq!(
        p.claim(&baton_core::ClaimRequest::next("w2"))
            .unwrap()
            .unwrap()
            .task
            .id,
        "c"
    );
    // The new notes work on the migrated project.
    TaskStore::discover(&p, "w2", "migrated").unwrap();
    assert!(
        TaskStore::logs(&p, Some("w2"), 10).unwrap().len() >= 2,
        "w2's claim and discovery are logged"
    );
}

#[test]
fn a_task_held_since_before_file_keys_were_recorded_still_keeps_others_from_its_files() {
    let server = PgServer::shared();
    // w9 holds d on src/shared.rs since the first schema; e wants the same file, f another.
    let url = first_schema_database(
        &server,
        "unkeyed",
        &[
            ("d", "claimed", &[], &["src/shared.rs"]),
            ("e", "available", &[], &["src/shared.rs"]),
            ("f", "available", &[], &["src/other.rs"]),
        ],
    );
    let p = PgStore::open(&url, "old").unwrap();
    let unkeyed = baton_test_support::pg::psql(
        &url,
        "SELECT string_agg(id, ',' ORDER BY id) FROM baton_tasks WHERE keys IS NULL",
    );
    assert_eq!(unkeyed.trim(), "d,e,f", "the migration records no keys");
    let claim = |agent: &str| {
        p.claim(&baton_core::ClaimRequest::next(agent))
            .unwrap()
            .map(|c| c.task.id)
    };
    assert_eq!(
        claim("w1").as_deref(),
        Some("f"),
        "e is passed over: w9 holds its file"
    );
    assert_eq!(claim("w2"), None, "e is still held back");
    p.start("w9", "d").unwrap();
    let report = Completion {
        output: "d done".into(),
        ..Completion::default()
    };
    p.complete("w9", "d", report).unwrap();
    assert_eq!(claim("w2").as_deref(), Some("e"), "free once d is done");
}

/// The tasks of every project in the database at `url`.
fn task_rows(url: &str) -> String {
    baton_test_support::pg::psql(url, "SELECT count(*) FROM baton_tasks")
        .trim()
        .to_string()
}

#[test]
fn a_project_opened_unchecked_is_checked_with_its_first_operation_directly_and_pooled() {
    let server = PgServer::start();
    let bouncer = baton_test_support::pgbouncer::PgBouncer::start(&server, 2);
    project(&server, "known");
    for url in [server.url().to_string(), bouncer.url()] {
        // An unknown project: each first operation, reading or writing, is refused as
        // opening it would be, and nothing is written.
        let before = task_rows(server.url());
        let missing = PgStore::open_unchecked(&url, "nowhere").unwrap();
        let claim = missing.claim(&baton_core::ClaimRequest::next("w1"));
        assert!(
            matches!(claim, Err(StoreError::UnknownProject { .. })),
            "{url}: {claim:?}"
        );
        let missing = PgStore::open_unchecked(&url, "nowhere").unwrap();
        let added = missing.add_task(task("lost", 1, &[]));
        assert!(
            matches!(added, Err(StoreError::UnknownProject { .. })),
            "{url}: {added:?}"
        );
        assert!(matches!(
            missing.status(),
            Err(StoreError::UnknownProject { .. })
        ));
        // A read outside a transaction (`worker list`), checked in a round trip of its own.
        let missing = PgStore::open_unchecked(&url, "nowhere").unwrap();
        assert!(matches!(
            missing.ready_tasks(),
            Err(StoreError::UnknownProject { .. })
        ));
        assert_eq!(task_rows(server.url()), before);
        // A known one: checked once, with the first operation's first request.
        let known = PgStore::open_unchecked(&url, "known").unwrap();
        assert!(known.ready_tasks().unwrap().is_empty());
        let added = known.add_task(task("kept", 1, &[])).unwrap();
        let claimed = known
            .claim(&baton_core::ClaimRequest::next("w1"))
            .unwrap()
            .expect("the task just added");
        assert_eq!(claimed.task.id, added.id);
    }
    // A schema from a newer baton: refused at the first operation, before anything of it is
    // committed.
    server.admin_sql("CREATE DATABASE newer_unchecked OWNER baton");
    let base = server.url();
    let newer = format!("{}/newer_unchecked", &base[..base.rfind('/').unwrap()]);
    PgStore::init(&newer, "p", "goal", None).unwrap();
    baton_test_support::pg::psql(&newer, "UPDATE baton_schema SET version = 99");
    let p = PgStore::open_unchecked(&newer, "p").unwrap();
    let added = p.add_task(task("never", 1, &[]));
    assert!(
        matches!(added, Err(StoreError::SchemaTooNew { .. })),
        "{added:?}"
    );
    assert_eq!(task_rows(&newer), "0");
    // The first schema: migrated at the first operation, which then runs.
    let older = first_schema_database(&server, "older_unchecked", &[("a", "available", &[], &[])]);
    let p = PgStore::open_unchecked(&older, "old").unwrap();
    let claimed = p.claim(&baton_core::ClaimRequest::next("w1")).unwrap();
    assert_eq!(claimed.expect("a is ready").task.id, "a");
    assert_eq!(
        baton_test_support::pg::psql(&older, "SELECT version FROM baton_schema").trim(),
        baton_pg::schema::VERSION.to_string()
    );
}

#[test]
fn a_schema_from_a_newer_baton_is_refused() {
    // A database of its own, so the other tests' schema stays as it is.
    let server = PgServer::shared();
    server.admin_sql("CREATE DATABASE newer OWNER baton");
    let base = server.url();
    let url = format!("{}/newer", &base[..base.rfind('/').unwrap()]);
    PgStore::init(&url, "p", "goal", None).unwrap();
    baton_test_support::pg::psql(&url, "UPDATE baton_schema SET version = 99");
    let refused = PgStore::open(&url, "p");
    match refused {
        Err(e @ StoreError::SchemaTooNew { .. }) => {
            assert!(e.to_string().contains("upgrade baton"), "{e}")
        }
        Err(other) => panic!("refused for another reason: {other}"),
        Ok(_) => panic!("a newer schema was used"),
    }
}

#[test]
fn tls_connects_verified_required_or_preferred_and_a_wrong_ca_or_a_plain_server_is_refused() {
    let tls = PgServer::start_tls();
    let ca = tls.ca_certificate().expect("a TLS server has a CA");
    let verified = format!(
        "{}?sslmode=verify-full&sslrootcert={}",
        tls.url().replace("127.0.0.1", "localhost"),
        ca.display()
    );
    let p = PgStore::init(&verified, "tls", "goal", None).unwrap();
    p.add_task(task("over TLS", 5, &[])).unwrap();
    let on_tls = baton_test_support::pg::psql(
        tls.admin_url(),
        "SELECT count(*) FROM pg_stat_ssl WHERE ssl",
    );
    assert_ne!(on_tls, "0", "the project's connection uses TLS");

    // require (any certificate) and prefer (TLS when offered; the default) speak TLS too.
    let required = PgStore::open(&format!("{}?sslmode=require", tls.url()), "tls").unwrap();
    let preferred = PgStore::open(tls.url(), "tls").unwrap();
    assert_eq!(required.status().unwrap().total, 1);
    assert_eq!(preferred.status().unwrap().total, 1);
    let encrypted = baton_test_support::pg::psql(
        tls.admin_url(),
        "SELECT count(*) FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid)
         WHERE s.ssl AND a.usename = 'baton'",
    );
    assert_eq!(
        encrypted.trim(),
        "3",
        "verify-full, require and prefer over TLS"
    );
    drop((required, preferred));

    // A certificate signed by another CA is refused.
    let elsewhere = tempfile::tempdir().unwrap();
    let other_ca =
        baton_test_support::pg::certificate_authority(elsewhere.path(), "other", "Another CA");
    let wrong_ca = format!(
        "{}?sslmode=verify-full&sslrootcert={}",
        tls.url().replace("127.0.0.1", "localhost"),
        other_ca.display()
    );
    let refused = PgStore::open(&wrong_ca, "tls")
        .err()
        .expect("another CA is refused");
    assert_eq!(refused.kind(), ErrorKind::Database, "{refused}");

    // sslmode=require against a server without TLS is refused, not silently plain.
    let plain = PgServer::shared();
    let required = format!("{}?sslmode=require", plain.url());
    let refused = PgStore::init(&required, "plain", "goal", None)
        .err()
        .expect("refused");
    assert_eq!(refused.kind(), ErrorKind::Database, "{refused}");
}
