//! A project kept in PostgreSQL, reached from "machines" that share no folder: each has its
//! own `HOME` and working folder and reaches the database over TCP only (see
//! `baton_test_support::machine`). Choosing the store (`leader init --store`, `connect`,
//! `--store`/`BATON_STORE`), where passwords come from, the errors of a wrong store, and moving
//! a project between the folder and the database (`store export|import`).

use baton_test_support as support;

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};
use support::Project;
use support::machine::Machine;
use support::pg::PgServer;

/// A project name no other test of this run uses.
fn unique(prefix: &str) -> String {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{prefix}-{}-{n}", std::process::id())
}

/// `host:port:db:user:password` for `~/.pgpass`, from the server's URL.
fn pgpass_line(server: &PgServer) -> String {
    let port = server.port().expect("the tests' own server");
    format!("127.0.0.1:{port}:baton:baton:{}", server.password())
}

fn ids(value: &Value) -> Vec<String> {
    value["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_lead_and_workers_on_machines_that_share_nothing_work_one_project() {
    let server = PgServer::shared();
    let url = server.url_without_password();
    let team = unique("team");
    // The lead keeps the password in ~/.pgpass; the URL it types has none.
    let lead = Machine::new("lead").with_pgpass(&pgpass_line(&server));
    let created = lead.json(&[
        "leader",
        "init",
        "Ship it",
        "--store",
        &url,
        "--project",
        &team,
    ]);
    assert_eq!(created["project"], team.as_str());
    let pointer = std::fs::read_to_string(lead.coordination().join("store.json")).unwrap();
    let pointer: Value = serde_json::from_str(&pointer).unwrap();
    assert_eq!(pointer, json!({"store": url, "project": team}));
    assert!(!lead.coordination().join("tasks.json").exists());
    lead.ok(&["leader", "add-task", "Schema", "-p", "1"]);
    lead.ok(&["leader", "add-task", "API", "--depends", "task-1"]);

    // A worker machine connects with the password in PGPASSWORD, writing its own pointer.
    let b = Machine::new("b").with_env("PGPASSWORD", &server.password());
    let connected = b.json(&["connect", &url, "--project", &team]);
    assert_eq!(connected["project"], team.as_str());
    assert_eq!(ids(&b.json(&["worker", "list"])), ["task-1"]);
    let claim = b.json(&["worker", "claim", "b1"]);
    assert_eq!(claim["task"]["id"], "task-1");
    // From a subfolder too, as with a folder project.
    let sub = b.work().join("src/deep");
    std::fs::create_dir_all(&sub).unwrap();
    let from_sub = b
        .command(&["worker", "start", "b1", "task-1"])
        .current_dir(&sub)
        .output()
        .unwrap();
    assert_eq!(from_sub.status.code(), Some(0), "{from_sub:?}");

    // A third machine has no folder at all: the URL and name come from the environment.
    let c = Machine::new("c")
        .with_env("BATON_STORE", server.url())
        .with_env("BATON_PROJECT", &team);
    let waiting = c.fails(&["worker", "claim", "c1"], 3);
    assert!(waiting.contains("wait on dependencies"), "{waiting}");
    b.ok(&["worker", "complete", "b1", "task-1", "Tables made"]);
    assert_eq!(c.json(&["worker", "claim", "c1"])["task"]["id"], "task-2");
    assert!(
        !c.coordination().exists(),
        "a worker with a URL needs no folder"
    );
    c.ok(&["discover", "The API lives in src/api", "--agent", "c1"]);

    // The lead sees everyone's work, logs and discoveries.
    let status = lead.json(&["leader", "status"]);
    assert_eq!(status["counts"]["done"], 1);
    assert_eq!(status["tasks"][1]["claimed_by"], "c1");
    let logs = lead.json(&["logs"]);
    let agents: BTreeSet<&str> = logs["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["agent"].as_str().unwrap())
        .collect();
    assert_eq!(agents, BTreeSet::from(["b1", "c1", "leader"]));
    let export = tempfile::tempdir().unwrap();
    lead.ok(&["store", "export", "--to", export.path().to_str().unwrap()]);
    let discoveries =
        std::fs::read_to_string(export.path().join(".coordination/context/discoveries.md"))
            .unwrap();
    assert!(
        discoveries.contains("The API lives in src/api"),
        "{discoveries}"
    );
}

#[test]
fn a_wrong_store_says_what_is_wrong_and_what_to_do_and_writes_nothing() {
    let server = PgServer::shared();
    let url = server.url_without_password();
    let team = unique("errors");
    let lead = Machine::new("lead").with_env("PGPASSWORD", &server.password());
    lead.ok(&[
        "leader",
        "init",
        "Goal",
        "--store",
        &url,
        "--project",
        &team,
    ]);

    // A wrong password: named as such, with where passwords come from, never echoed.
    let wrong = Machine::new("w").with_env("PGPASSWORD", "not-the-password");
    let err = wrong.fails(&["connect", &url, "--project", &team], 1);
    assert!(err.contains("password"), "{err}");
    assert!(!err.contains("not-the-password"), "{err}");
    assert!(!wrong.coordination().join("store.json").exists());
    let json_err = wrong.run(&[
        "--store",
        &url,
        "--project",
        &team,
        "worker",
        "list",
        "--json",
    ]);
    let body: Value = serde_json::from_slice(&json_err.stderr).unwrap();
    assert_eq!(body["error"]["kind"], "database", "{body}");

    // Nothing listens there.
    let port = support::free_port();
    let nowhere = format!("postgres://baton@127.0.0.1:{port}/baton");
    let err = lead.fails(
        &["--store", &nowhere, "--project", &team, "worker", "list"],
        1,
    );
    assert!(err.contains(&format!("127.0.0.1:{port}")), "{err}");

    // A project the database does not have, by connect and by URL.
    let b = Machine::new("b").with_env("PGPASSWORD", &server.password());
    let err = b.fails(&["connect", &url, "--project", "no-such-project"], 1);
    assert!(err.contains("no-such-project"), "{err}");
    assert!(
        !b.coordination().exists(),
        "a failed connect leaves no pointer"
    );

    // The same name twice; a pointer over a folder project; a name that cannot be one.
    let err = lead.fails(
        &[
            "leader",
            "init",
            "Again",
            "--store",
            &url,
            "--project",
            &team,
        ],
        1,
    );
    assert!(err.contains("already"), "{err}");
    let folder = Project::init();
    let err = folder.fails(&["connect", &url, "--project", &team], 1);
    assert!(err.contains("store import"), "{err}");
    assert!(folder.coordination().join("tasks.json").is_file());
    let err = b.fails(&["connect", &url, "--project", "../x"], 1);
    assert!(err.contains("project name"), "{err}");

    // A URL that is not one.
    let err = b.fails(&["--store", "mysql://x", "worker", "list"], 1);
    assert!(err.contains("postgres"), "{err}");
}

#[test]
fn a_project_moves_from_the_folder_to_postgres_and_back_unchanged() {
    let server = PgServer::shared();
    let url = server.url_without_password();
    let name = unique("moved");
    let p = Project::init();
    p.ok(&["leader", "add-task", "done one", "-p", "1"]);
    p.ok(&["leader", "add-task", "failed one", "-p", "2"]);
    p.ok(&["leader", "add-task", "held one", "-p", "3"]);
    p.ok(&[
        "leader",
        "add-task",
        "waiting",
        "--depends",
        "task-1,task-3",
    ]);
    p.ok(&["leader", "add-task", "cancelled", "--id", "extra"]);
    p.ok(&["worker", "claim", "w1"]);
    p.ok(&["worker", "start", "w1", "task-1"]);
    p.ok(&[
        "worker",
        "complete",
        "w1",
        "task-1",
        "did it",
        "--modified",
        "a.rs",
    ]);
    p.ok(&["worker", "claim", "w2"]);
    p.ok(&["worker", "fail", "w2", "task-2", "could not"]);
    p.ok(&["worker", "claim", "w3"]);
    p.ok(&["leader", "cancel", "extra", "--reason", "not needed"]);
    p.ok(&["discover", "a finding", "--agent", "w1"]);
    p.ok(&["leader", "aggregate"]);
    let before = p.tasks_json();
    let folder_status = p.json(&["leader", "status"]);

    let moved = p
        .command(&[
            "store",
            "import",
            "--store",
            &url,
            "--project",
            &name,
            "--json",
        ])
        .env("PGPASSWORD", server.password())
        .output()
        .unwrap();
    assert_eq!(moved.status.code(), Some(0), "{moved:?}");
    let moved: Value = serde_json::from_slice(&moved.stdout).unwrap();
    assert_eq!(moved["tasks"], 5);
    assert_eq!(moved["discoveries"], 1);
    // A second import under the same name is refused.
    let again = p
        .command(&["store", "import", "--store", &url, "--project", &name])
        .env("PGPASSWORD", server.password())
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(1));

    // Another machine works on it from the database: same board, and it carries on.
    let b = Machine::new("b").with_env("PGPASSWORD", &server.password());
    b.ok(&["connect", &url, "--project", &name]);
    let db_status = b.json(&["leader", "status"]);
    for field in ["counts", "total", "goal"] {
        assert_eq!(db_status[field], folder_status[field], "{field}");
    }
    assert_eq!(ids(&db_status), ids(&folder_status));
    b.ok(&["leader", "add-task", "new work"]);
    assert_eq!(ids(&b.json(&["worker", "list", "--all"]))[5], "task-5");

    // Back to a folder: the tasks as they were (plus the new one), the notes, and a project
    // the folder commands open.
    let out = tempfile::tempdir().unwrap();
    b.ok(&["store", "export", "--to", out.path().to_str().unwrap()]);
    let exported = out.path().join(".coordination");
    let after: Value =
        serde_json::from_slice(&std::fs::read(exported.join("tasks.json")).unwrap()).unwrap();
    assert_eq!(
        after["tasks"].as_array().unwrap()[..5],
        before["tasks"].as_array().unwrap()[..]
    );
    assert_eq!(after["created_at"], before["created_at"]);
    for file in [
        "results/task-1.md",
        "results/task-2.md",
        "results/extra.md",
        "summary.md",
    ] {
        assert_eq!(
            std::fs::read_to_string(exported.join(file)).unwrap(),
            std::fs::read_to_string(p.coordination().join(file)).unwrap(),
            "{file}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(exported.join("context/discoveries.md")).unwrap(),
        std::fs::read_to_string(p.coordination().join("context/discoveries.md")).unwrap()
    );
    let w1_log = std::fs::read_to_string(exported.join("logs/w1.log")).unwrap();
    assert_eq!(
        w1_log,
        std::fs::read_to_string(p.coordination().join("logs/w1.log")).unwrap()
    );
    let reopened = Machine::new("c");
    let dir = out.path().to_str().unwrap();
    assert_eq!(
        reopened.json(&["--dir", dir, "worker", "list", "--all"])["tasks"]
            .as_array()
            .unwrap()
            .len(),
        6
    );
    // jq reads it as it reads any folder project.
    let jq = std::process::Command::new("jq")
        .args([
            "-r",
            "[.tasks[] | select(.status == \"done\") | .id] | join(\",\")",
        ])
        .arg(exported.join("tasks.json"))
        .output();
    if let Ok(jq) = jq {
        assert_eq!(String::from_utf8_lossy(&jq.stdout).trim(), "task-1");
    }
    // An export never writes over a project.
    let err = b.fails(&["store", "export", "--to", dir], 1);
    assert!(err.contains("already exists"), "{err}");
    let err = p.fails(&["store", "export"], 1);
    assert!(err.contains("folder project already"), "{err}");
}

/// Every dependency in `tasks` completed before its dependant was claimed, by the database's
/// clock (the one every timestamp comes from).
fn assert_dependency_order(tasks: &[Value]) {
    let by_id: BTreeMap<&str, &Value> = tasks
        .iter()
        .map(|t| (t["id"].as_str().unwrap(), t))
        .collect();
    for t in tasks {
        for dep in t["dependencies"].as_array().unwrap() {
            let dep = by_id[dep.as_str().unwrap()];
            assert!(
                dep["completed_at"].as_str() <= t["claimed_at"].as_str(),
                "{} was claimed before {} was done",
                t["id"],
                dep["id"]
            );
        }
    }
}

/// A folder project with `count` tasks in layers of `width`: each task after the first layer
/// depends on two tasks of the layer before. Written as `tasks.json` directly (the source
/// design's schema), then moved into the database with `store import`.
fn layered_project(count: usize, width: usize) -> Project {
    let p = Project::init();
    let mut file = p.tasks_json();
    let tasks: Vec<Value> = (0..count)
        .map(|i| {
            let layer = i / width;
            let deps: Vec<String> = if layer == 0 {
                Vec::new()
            } else {
                let before = (layer - 1) * width;
                vec![
                    format!("t{}", before + i % width),
                    format!("t{}", before + (i * 7 + 3) % width),
                ]
            };
            json!({
                "id": format!("t{i}"),
                "description": format!("task {i}"),
                "status": "available",
                "priority": 1 + (i % 3),
                "dependencies": deps,
                "created_at": "2026-11-23T10:00:00Z",
            })
        })
        .collect();
    file["tasks"] = Value::Array(tasks);
    std::fs::write(p.coordination().join("tasks.json"), file.to_string()).unwrap();
    p
}

#[test]
fn sixteen_workers_on_two_machines_drain_thousands_of_tasks_exactly_once_in_order() {
    const TASKS: usize = 2_000;
    let server = PgServer::shared();
    let name = unique("drain");
    let folder = layered_project(TASKS, 100);
    let import = folder
        .command(&[
            "store",
            "import",
            "--store",
            server.url(),
            "--project",
            &name,
        ])
        .output()
        .unwrap();
    assert_eq!(import.status.code(), Some(0), "{import:?}");

    let machines = [
        Machine::new("a").with_pgpass(&pgpass_line(&server)),
        Machine::new("b").with_env("PGPASSWORD", &server.password()),
    ];
    for m in &machines {
        m.ok(&[
            "connect",
            &server.url_without_password(),
            "--project",
            &name,
        ]);
    }
    let workers: Vec<_> = (0..16)
        .map(|i| {
            let m = &machines[i % 2];
            let agent = format!("{}-w{i}", m.name);
            let child = m
                .command(&["worker", "loop", &agent, "--exec", "true", "--quiet"])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            (agent, child)
        })
        .collect();
    for (agent, child) in workers {
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{agent}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    let out = tempfile::tempdir().unwrap();
    machines[0].ok(&["store", "export", "--to", out.path().to_str().unwrap()]);
    let file: Value = serde_json::from_slice(
        &std::fs::read(out.path().join(".coordination/tasks.json")).unwrap(),
    )
    .unwrap();
    let tasks = file["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), TASKS);
    let mut by_worker: BTreeMap<&str, usize> = BTreeMap::new();
    for t in tasks {
        assert_eq!(t["status"], "done", "{t}");
        assert_eq!(t["attempts"], 1, "claimed more than once: {t}");
        *by_worker
            .entry(t["claimed_by"].as_str().unwrap())
            .or_default() += 1;
    }
    assert_dependency_order(tasks);
    // Each task was claimed once in all the logs, and both machines did work.
    let mut claims: BTreeMap<String, usize> = BTreeMap::new();
    for entry in std::fs::read_dir(out.path().join(".coordination/logs")).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        for line in text.lines().filter(|l| l.contains("] CLAIM: t")) {
            let id = line
                .split("] CLAIM: ")
                .nth(1)
                .unwrap()
                .split(' ')
                .next()
                .unwrap();
            *claims.entry(id.to_string()).or_default() += 1;
        }
    }
    assert_eq!(claims.len(), TASKS);
    assert!(claims.values().all(|&n| n == 1));
    for m in ["a-", "b-"] {
        assert!(by_worker.keys().any(|w| w.starts_with(m)), "{by_worker:?}");
    }
}
