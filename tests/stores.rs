//! A project kept in PostgreSQL, reached from "machines" that share no folder: each has its
//! own `HOME` and working folder and reaches the database over TCP only (see
//! `baton_test_support::machine`). Choosing the store (`leader init --store`, `connect`,
//! `--store`/`BATON_STORE`), where passwords come from, the errors of a wrong store, and moving
//! a project between the folder and the database (`store export|import`).

use baton_test_support as support;

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};
use support::machine::Machine;
use support::pg::PgServer;
use support::{Project, task_ids};

/// A project name no other test of this run uses.
fn unique(prefix: &str) -> String {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{prefix}-{}-{n}", std::process::id())
}

/// `host:port:db:user:password` for `~/.pgpass`, from the server's URL.
/// `baton store import --json` of folder project `p` into project `name` at `url` (the
/// server's password from the environment).
fn store_import(p: &Project, url: &str, name: &str, server: &PgServer) -> std::process::Output {
    p.command(&[
        "store",
        "import",
        "--store",
        url,
        "--project",
        name,
        "--json",
    ])
    .env("PGPASSWORD", server.password())
    .output()
    .unwrap()
}

/// [`store_import`] that must succeed: what it reports it moved.
fn imported(p: &Project, url: &str, name: &str, server: &PgServer) -> Value {
    let moved = store_import(p, url, name, server);
    assert_eq!(moved.status.code(), Some(0), "{moved:?}");
    serde_json::from_slice(&moved.stdout).unwrap()
}

fn pgpass_line(server: &PgServer) -> String {
    let port = server.port().expect("the tests' own server");
    format!("127.0.0.1:{port}:baton:baton:{}", server.password())
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
    assert_eq!(task_ids(&b.json(&["worker", "list"])), ["task-1"]);
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
    p.ok(&["run", "new", "--note", "sprint 1"]);
    p.ok(&[
        "signal",
        "write",
        "ui-test-done",
        "--agent",
        "qa",
        "--note",
        "green",
    ]);
    p.ok(&["run", "new"]);
    p.ok(&[
        "handoff",
        "track",
        "qa",
        "planner",
        "--summary",
        "moved along",
    ]);
    // The inbox: a question nobody answered in time, and a message to the lead.
    p.fails(
        &["ask", "Which port?", "--agent", "w3", "--timeout", "1"],
        5,
    );
    p.ok(&[
        "message",
        "send",
        "lead",
        "Blocked",
        "Waiting on the schema",
        "--as",
        "w3",
    ]);
    let before = p.tasks_json();
    let folder_status = p.json(&["leader", "status"]);

    let moved = imported(&p, &url, &name, &server);
    assert_eq!(moved["tasks"], 5);
    // orchestration's record, the inbox's numbers, one question and one message.
    assert_eq!(moved["documents"], 4, "{moved}");
    assert_eq!(moved["discoveries"], 1);
    assert_eq!(
        (moved["runs"].clone(), moved["signals"].clone()),
        (2.into(), 1.into())
    );
    // A second import under the same name is refused.
    let again = store_import(&p, &url, &name, &server);
    assert_eq!(again.status.code(), Some(1));

    // Another machine works on it from the database: same board, and it carries on.
    let b = Machine::new("b").with_env("PGPASSWORD", &server.password());
    b.ok(&["connect", &url, "--project", &name]);
    let db_status = b.json(&["leader", "status"]);
    for field in ["counts", "total", "goal"] {
        assert_eq!(db_status[field], folder_status[field], "{field}");
    }
    assert_eq!(task_ids(&db_status), task_ids(&folder_status));
    b.ok(&["leader", "add-task", "new work"]);
    assert_eq!(task_ids(&b.json(&["worker", "list", "--all"]))[5], "task-5");
    let signal = &b.json(&["signal", "list", "--run", "1"])["signals"][0];
    assert_eq!(
        (&signal["writer"], &signal["note"]),
        (&"qa".into(), &"green".into())
    );
    assert_eq!(
        b.json(&["signal", "list"])["run"],
        2,
        "the latest run is the same"
    );
    let inbox = b.json(&["inbox", "--all"]);
    assert_eq!(inbox["questions"][0]["text"], "Which port?", "{inbox}");
    assert_eq!(inbox["messages"][0]["subject"], "Blocked", "{inbox}");

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
    for file in [
        "runs/runs.json",
        "runs/1/signals/ui-test-done",
        "orchestration/state.json",
        "inbox/numbers.json",
        "inbox/questions/q-1.json",
        "inbox/messages/m-1.json",
    ] {
        let read = |root: &std::path::Path| {
            serde_json::from_slice::<Value>(&std::fs::read(root.join(file)).unwrap()).unwrap()
        };
        assert_eq!(read(&exported), read(&p.coordination()), "{file}");
    }
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

/// A layered project (see [`layered_project`]) imported into `server` under a fresh name, and
/// two machines connected to it: `a` with the password in `~/.pgpass`, `b` in `PGPASSWORD`.
fn imported_on_two_machines(
    server: &PgServer,
    prefix: &str,
    tasks: usize,
    width: usize,
) -> (String, [Machine; 2]) {
    let name = unique(prefix);
    let folder = layered_project(tasks, width);
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
        Machine::new("a").with_pgpass(&pgpass_line(server)),
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
    (name, machines)
}

#[test]
fn sixteen_workers_on_two_machines_drain_thousands_of_tasks_exactly_once_in_order() {
    const TASKS: usize = 2_000;
    let server = PgServer::shared();
    let (_, machines) = imported_on_two_machines(&server, "drain", TASKS, 100);
    support::run_together((0..16).map(|i| {
        let m = &machines[i % 2];
        let agent = format!("{}-w{i}", m.name);
        m.command(&["worker", "loop", &agent, "--exec", "true", "--quiet"])
    }));

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

/// An exported project: its tasks, and from every log how many times each task was reported
/// done and its CLAIM lines (each: whether it took over an expired lease).
struct Exported {
    tasks: Vec<Value>,
    completes: BTreeMap<String, usize>,
    claims: BTreeMap<String, Vec<bool>>,
}

/// Exports the project `machine` points to.
fn exported(machine: &Machine) -> Exported {
    let out = tempfile::tempdir().unwrap();
    machine.ok(&["store", "export", "--to", out.path().to_str().unwrap()]);
    let coordination = out.path().join(".coordination");
    // What a folder made by `leader init` ignores, the exported one ignores too.
    let ignored = std::fs::read_to_string(coordination.join(".gitignore")).unwrap();
    assert_eq!(ignored, ".lock\n*.baton-tmp\n.queue/\n");
    let file: Value =
        serde_json::from_slice(&std::fs::read(coordination.join("tasks.json")).unwrap()).unwrap();
    let mut exported = Exported {
        tasks: file["tasks"].as_array().unwrap().clone(),
        completes: BTreeMap::new(),
        claims: BTreeMap::new(),
    };
    for entry in std::fs::read_dir(coordination.join("logs")).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        for line in text.lines() {
            let Some((_, rest)) = line.split_once("] ") else {
                continue;
            };
            if let Some(id) = rest.strip_prefix("COMPLETE: ") {
                *exported.completes.entry(id.to_string()).or_default() += 1;
            } else if let Some(details) = rest.strip_prefix("CLAIM: ")
                && details != "nothing ready"
            {
                let id = details.split(' ').next().unwrap().to_string();
                exported
                    .claims
                    .entry(id)
                    .or_default()
                    .push(details.contains("whose lease expired"));
            }
        }
    }
    exported
}

/// Adds `count` independent tasks through one machine.
fn add_tasks(machine: &Machine, count: usize) {
    for i in 0..count {
        machine.ok(&["leader", "add-task", &format!("job {i}")]);
    }
}

#[test]
fn a_server_restart_in_the_middle_of_a_contended_run_loses_nothing() {
    const TASKS: usize = 300;
    let server = PgServer::start();
    let (name, machines) = imported_on_two_machines(&server, "restart", TASKS, TASKS);
    let workers: Vec<_> = (0..8)
        .map(|i| {
            let m = &machines[i % 2];
            let agent = format!("{}-w{i}", m.name);
            // A short lease: a claim whose commit the restart cut may have landed without
            // its worker knowing, and is taken over when its lease runs out.
            m.command(&[
                "--lease",
                "3s",
                "worker",
                "loop",
                &agent,
                "--exec",
                "sleep 0.02",
                "--quiet",
            ])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
        })
        .collect();
    // Restart once the run is well under way.
    let done = || {
        support::pg::psql(
            server.url(),
            &format!(
                "SELECT count(*) FROM baton_tasks WHERE project = '{name}' AND status = 'done'"
            ),
        )
        .trim()
        .parse::<usize>()
        .unwrap_or(0)
    };
    support::eventually("a third of the tasks to be done", || done() >= TASKS / 3);
    server.restart();
    for child in workers {
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let problems: Vec<&str> = stderr.lines().filter(|l| !l.contains(" done")).collect();
        assert_eq!(out.status.code(), Some(0), "{problems:#?}");
    }
    let Exported {
        tasks, completes, ..
    } = exported(&machines[0]);
    assert_eq!(tasks.len(), TASKS);
    assert!(tasks.iter().all(|t| t["status"] == "done"), "not all done");
    assert_eq!(completes.len(), TASKS);
    assert!(
        completes.values().all(|&n| n == 1),
        "a task was completed twice"
    );
}

#[test]
fn workers_killed_at_random_moments_lose_nothing_and_their_tasks_come_back() {
    const TASKS: usize = 200;
    const KILLS: usize = 120;
    let server = PgServer::shared();
    let name = unique("kills");
    let lead = Machine::new("lead").with_env("PGPASSWORD", &server.password());
    lead.ok(&[
        "leader",
        "init",
        "Survive",
        "--store",
        &server.url_without_password(),
        "--project",
        &name,
    ]);
    add_tasks(&lead, TASKS);
    let workers = Machine::new("workers").with_env("PGPASSWORD", &server.password());
    workers.ok(&[
        "connect",
        &server.url_without_password(),
        "--project",
        &name,
    ]);
    let spawn = |i: usize| {
        workers
            .command(&[
                "--lease",
                "1s",
                "worker",
                "loop",
                &format!("w{i}"),
                "--exec",
                "sleep 0.01",
                "--quiet",
            ])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap()
    };
    // Four workers at a time; every few tens of milliseconds one of them is killed outright
    // (SIGKILL: no release, no goodbye) and replaced.
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut random = move |below: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % below
    };
    let mut running: Vec<_> = (0..4).map(spawn).collect();
    for kill in 0..KILLS {
        std::thread::sleep(std::time::Duration::from_millis(10 + random(60))); // a random moment
        let victim = random(running.len() as u64) as usize;
        let mut child = running.swap_remove(victim);
        child.kill().unwrap();
        child.wait().unwrap();
        running.push(spawn(4 + kill));
    }
    for mut child in running {
        child.kill().unwrap();
        child.wait().unwrap();
    }
    // Survivors finish the queue, taking over what the dead held once their leases run out.
    support::run_together((0..3).map(|i| {
        workers.command(&[
            "worker",
            "loop",
            &format!("finisher{i}"),
            "--exec",
            "true",
            "--quiet",
        ])
    }));
    let Exported {
        tasks,
        completes,
        claims,
    } = exported(&lead);
    assert!(tasks.iter().all(|t| t["status"] == "done"), "not all done");
    assert_eq!(completes.len(), TASKS);
    assert!(
        completes.values().all(|&n| n == 1),
        "a task was completed twice"
    );
    let mut taken_over = 0;
    for t in &tasks {
        let id = t["id"].as_str().unwrap();
        let history = &claims[id];
        // One claim per attempt, and every claim but one took over an expired lease (a killed
        // worker releases nothing): never two live holders. (Logs are per agent, so the
        // claims are counted, not ordered.)
        assert_eq!(
            t["attempts"].as_u64().unwrap() as usize,
            history.len(),
            "{id}"
        );
        let fresh = history.iter().filter(|&&took_over| !took_over).count();
        assert_eq!(fresh, 1, "{id}: {history:?}");
        taken_over += history.len() - 1;
    }
    assert!(taken_over > 0, "no kill landed while a task was held");
}

#[test]
fn a_worker_whose_clock_is_an_hour_off_cannot_take_a_live_lease_or_keep_a_dead_one() {
    let server = PgServer::shared();
    let name = unique("skew");
    let lead = Machine::new("lead").with_env("PGPASSWORD", &server.password());
    lead.ok(&[
        "leader",
        "init",
        "Time",
        "--store",
        &server.url_without_password(),
        "--project",
        &name,
    ]);
    lead.ok(&["leader", "add-task", "held"]);
    lead.ok(&["leader", "add-task", "short"]);
    let baton = support::baton_bin();
    let baton = baton.to_str().unwrap();
    let skewed = |offset: &str, args: &[&str]| {
        let mut all = vec!["-f", offset, baton];
        all.extend_from_slice(args);
        lead.command_of("faketime", &all).output().unwrap()
    };
    // The skew is real: the worker's own clock is an hour ahead.
    let date = lead
        .command_of("faketime", &["-f", "+1h", "date", "+%s"])
        .output()
        .unwrap();
    let ahead: i64 = String::from_utf8_lossy(&date.stdout)
        .trim()
        .parse()
        .unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    assert!(ahead - now > 3500, "faketime did not move the clock");

    lead.ok(&[
        "--lease", "10m", "worker", "claim", "honest", "--task", "task-1",
    ]);
    // An hour ahead, the honest worker's lease looks long gone; the database says it is live.
    let thief = skewed("+1h", &["worker", "claim", "thief", "--task", "task-1"]);
    assert_eq!(thief.status.code(), Some(1), "{thief:?}");
    let doctor = skewed("+1h", &["leader", "doctor", "--json"]);
    let report: Value = serde_json::from_slice(&doctor.stdout).unwrap();
    assert!(
        !report["findings"].to_string().contains("stale_lease"),
        "{report}"
    );

    // An hour behind, a worker's 2-second lease still ends 2 seconds after its claim.
    let late = skewed(
        "-1h",
        &["--lease", "2s", "worker", "claim", "laggard", "--json"],
    );
    assert_eq!(late.status.code(), Some(0), "{late:?}");
    let claim: Value = serde_json::from_slice(&late.stdout).unwrap();
    assert_eq!(claim["task"]["id"], "task-2");
    // Stamped by the database's clock, not the worker's.
    let stamped = claim["task"]["claimed_at"].as_str().unwrap();
    let stamped = std::process::Command::new("date")
        .args(["-u", "-d", stamped, "+%s"])
        .output()
        .unwrap();
    let stamped: i64 = String::from_utf8_lossy(&stamped.stdout)
        .trim()
        .parse()
        .unwrap();
    assert!(
        (stamped - now).abs() < 600,
        "claimed_at is off by {}s",
        stamped - now
    );
    // A worker whose claim waits at most 30 s gets it: the lease ran out 2 s after the claim.
    let taken = lead.json(&[
        "--lease",
        "2s",
        "worker",
        "claim",
        "punctual",
        "--wait",
        "--timeout",
        "30s",
    ]);
    assert_eq!(taken["task"]["id"], "task-2");
    assert_eq!(taken["reclaimed_from"], "laggard");
    // Its heartbeat from an hour behind cannot make the lease last an hour longer.
    let beat = skewed("-1h", &["worker", "heartbeat", "laggard", "--json"]);
    let beat: Value = serde_json::from_slice(&beat.stdout).unwrap();
    assert_eq!(beat["renewed"], json!([]), "{beat}");
}

#[test]
fn a_teams_attempts_transcripts_and_spend_move_with_the_project() {
    let server = PgServer::shared();
    let url = server.url_without_password();
    let name = unique("team-moved");
    let p = Project::init();
    p.ok(&["leader", "add-task", "Worked by a team"]);
    p.ok(&["team", "up", "--no-worktree", "--exec", "echo moved along"]);
    let transcript = p.json(&["team", "logs", "task-1"]);
    let status = p.json(&["team", "status"]);
    let board = p.json(&["leader", "status"]);
    assert_eq!(transcript["attempt"]["end"], "completed", "{transcript}");

    let moved = imported(&p, &url, &name, &server);
    assert_eq!(moved["attempts"], 1, "{moved}");

    // Read on another machine from the database: the same transcript, workers and spend.
    let b = Machine::new("b").with_env("PGPASSWORD", &server.password());
    b.ok(&["connect", &url, "--project", &name]);
    assert_eq!(b.json(&["team", "logs", "task-1"]), transcript);
    let on_b = b.json(&["team", "status"]);
    assert_eq!(on_b["workers"][0]["name"], status["workers"][0]["name"]);
    assert_eq!(on_b["spend"], status["spend"]);
    assert_eq!(b.json(&["leader", "status"])["spend"], board["spend"]);

    // And back to a folder, unchanged.
    let out = tempfile::tempdir().unwrap();
    b.ok(&["store", "export", "--to", out.path().to_str().unwrap()]);
    let c = Machine::new("c");
    let dir = out.path().to_str().unwrap();
    assert_eq!(
        c.json(&["--dir", dir, "team", "logs", "task-1"]),
        transcript
    );
    let read =
        |root: &std::path::Path| std::fs::read(root.join("transcripts/task-1/1.jsonl")).unwrap();
    assert_eq!(
        read(&out.path().join(".coordination")),
        read(&p.coordination())
    );
}

/// What a task is, as `leader status` shows it, without what a store derives.
fn as_recorded(report: &Value) -> BTreeMap<String, Value> {
    report["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let fields = [
                "status",
                "description",
                "claimed_by",
                "result",
                "completed_at",
            ];
            let kept: serde_json::Map<String, Value> = fields
                .iter()
                .map(|f| (f.to_string(), t[*f].clone()))
                .collect();
            (t["id"].as_str().unwrap().to_string(), Value::Object(kept))
        })
        .collect()
}

/// Issue 63: work archived on the folder moves into the database with the project (whose board
/// keeps every task) and back out of it with an export, each task as it was.
#[test]
fn archived_work_moves_to_the_database_and_back_with_the_project() {
    let server = PgServer::shared();
    let url = server.url_without_password();
    let name = unique("archived");
    let p = Project::init();
    for id in ["old", "dropped", "live"] {
        p.ok(&["leader", "add-task", &format!("{id} work"), "--id", id]);
    }
    p.ok(&["worker", "claim", "w1", "--task", "old"]);
    p.ok(&["worker", "start", "w1", "old"]);
    p.ok(&["worker", "complete", "w1", "old", "old is done"]);
    p.ok(&["leader", "cancel", "dropped"]);
    let mut archived: Vec<String> =
        serde_json::from_value(p.json(&["leader", "archive"])["archived"].clone()).unwrap();
    archived.sort();
    assert_eq!(archived, ["dropped", "old"]);
    assert_eq!(task_ids(&p.json(&["leader", "status"])), ["live"]);
    let on_folder = as_recorded(&p.json(&["leader", "status", "--all"]));
    assert_eq!(on_folder.len(), 3, "{on_folder:?}");

    let moved = imported(&p, &url, &name, &server);
    assert_eq!(moved["tasks"], 3, "the archived tasks move too: {moved}");
    let b = Machine::new("b").with_env("PGPASSWORD", &server.password());
    b.ok(&["connect", &url, "--project", &name]);
    // The database keeps every task on its board, as it was.
    assert_eq!(as_recorded(&b.json(&["leader", "status"])), on_folder);
    assert_eq!(
        as_recorded(&b.json(&["leader", "status", "--all"])),
        on_folder
    );
    let taken = b.fails(&["leader", "add-task", "again", "--id", "old"], 1);
    assert!(taken.contains("old"), "an archived id stays taken: {taken}");

    // Back to a folder: every task, the archived ones with them, and their results.
    let out = tempfile::tempdir().unwrap();
    b.ok(&["store", "export", "--to", out.path().to_str().unwrap()]);
    let dir = out.path().to_str().unwrap();
    let c = Machine::new("c");
    assert_eq!(
        as_recorded(&c.json(&["--dir", dir, "leader", "status", "--all"])),
        on_folder
    );
    assert_eq!(
        std::fs::read_to_string(out.path().join(".coordination/results/old.md")).unwrap(),
        std::fs::read_to_string(p.coordination().join("results/old.md")).unwrap()
    );
}
