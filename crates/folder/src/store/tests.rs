use std::collections::HashSet;
use std::time::Duration;

use super::*;
use baton_core::{ClaimRequest, Completion, FindingKind, NewTask, TaskStatus, TaskStore};

fn new_project() -> (tempfile::TempDir, FolderStore) {
    let dir = tempfile::tempdir().unwrap();
    let project = FolderStore::init(dir.path(), "Build a REST API", None).unwrap();
    (dir, project)
}

fn task(description: &str, priority: u32, deps: &[&str]) -> NewTask {
    NewTask {
        description: description.into(),
        priority,
        dependencies: deps.iter().map(|d| d.to_string()).collect(),
        ..NewTask::default()
    }
}

#[test]
fn init_creates_the_source_layout() {
    let (dir, project) = new_project();
    let root = dir.path().join(".coordination");
    for path in [
        "master-plan.md",
        "tasks.json",
        "context/discoveries.md",
        "logs/leader.log",
        ".gitignore",
    ] {
        assert!(root.join(path).is_file(), "missing {path}");
    }
    assert!(root.join("results").is_dir());
    assert_eq!(
        project.status().unwrap().goal.as_deref(),
        Some("Build a REST API")
    );
    let json: serde_json::Value =
        serde_json::from_slice(&fs::read(root.join("tasks.json")).unwrap()).unwrap();
    assert_eq!(json["version"], "1.0");
    assert_eq!(json["tasks"], serde_json::json!([]));
}

#[test]
fn init_twice_is_refused_and_keeps_the_existing_store() {
    let (dir, project) = new_project();
    project.add_task(task("keep me", 1, &[])).unwrap();
    let err = FolderStore::init(dir.path(), "Other goal", None).unwrap_err();
    assert!(
        matches!(err, StoreError::AlreadyInitialized { .. }),
        "{err}"
    );
    assert_eq!(project.load().unwrap().tasks.len(), 1);
    assert!(FolderStore::init(dir.path(), " ", None).is_err());
}

#[test]
fn a_corrupt_tasks_file_is_reported_with_its_position_and_never_overwritten() {
    let (_dir, project) = new_project();
    let path = project.layout().tasks_file();
    let broken = "{\n  \"version\": \"1.0\",\n  \"tasks\": [ {\"id\": \"a\", }\n";
    fs::write(&path, broken).unwrap();
    let err = project.add_task(task("x", 1, &[])).unwrap_err();
    let StoreError::Corrupt { line, column, .. } = &err else {
        panic!("{err}")
    };
    assert_eq!((*line, *column), (3, 26), "the stray closing brace");
    let message = err.to_string();
    assert!(
        message.contains("tasks.json is not valid JSON at line 3, column 26"),
        "{message}"
    );
    assert!(message.contains("will not overwrite"), "{message}");
    for attempt in [
        project.claim(&ClaimRequest::next("w1")).map(drop),
        project.heartbeat("w1").map(drop),
        project.doctor(true).map(drop),
    ] {
        assert!(matches!(attempt, Err(StoreError::Corrupt { .. })));
    }
    assert_eq!(fs::read_to_string(&path).unwrap(), broken);
}

#[test]
fn a_wrong_shape_is_reported_as_corrupt_too() {
    let (_dir, project) = new_project();
    fs::write(
        project.layout().tasks_file(),
        r#"{"tasks": [{"id": "a", "description": "d", "status": "sleeping"}]}"#,
    )
    .unwrap();
    let message = project.status().unwrap_err().to_string();
    assert!(message.contains("unknown variant `sleeping`"), "{message}");
    fs::write(project.layout().tasks_file(), "").unwrap();
    assert!(matches!(
        project.status(),
        Err(StoreError::Corrupt {
            line: 1,
            column: 0,
            ..
        })
    ));
}

#[test]
fn a_worker_round_trip_writes_result_log_and_summary() {
    let (_dir, project) = new_project();
    let a = project.add_task(task("model", 1, &[])).unwrap();
    let b = project.add_task(task("endpoint", 2, &[&a.id])).unwrap();
    let claim = project.claim(&ClaimRequest::next("w1")).unwrap().unwrap();
    assert_eq!(claim.task.id, a.id);
    assert!(
        project.claim(&ClaimRequest::next("w2")).unwrap().is_none(),
        "b waits for a"
    );
    project.start("w1", &a.id).unwrap();
    project
        .complete(
            "w1",
            &a.id,
            Completion {
                output: "User model done".into(),
                files_created: vec!["src/user.rs".into()],
                ..Default::default()
            },
        )
        .unwrap();
    let result = fs::read_to_string(project.layout().result_file(&a.id).unwrap()).unwrap();
    assert!(result.contains("User model done") && result.contains("- src/user.rs"));
    assert_eq!(
        project
            .claim(&ClaimRequest::next("w2"))
            .unwrap()
            .unwrap()
            .task
            .id,
        b.id
    );
    project.fail("w2", &b.id, "blocked on credentials").unwrap();
    project
        .discover("w2", "The API needs an OAuth client id")
        .unwrap();

    let agg = project.aggregate().unwrap();
    assert_eq!(
        (agg.total, agg.done, agg.failed, agg.unfinished),
        (2, 1, 1, 0)
    );
    let summary = fs::read_to_string(&agg.path).unwrap();
    assert!(summary.contains("## Objective\nBuild a REST API"));
    assert!(summary.contains("### task-1: model") && summary.contains("User model done"));
    assert!(summary.contains("task-2 (failed, w2): endpoint — blocked on credentials"));

    let w1 = project.logs(Some("w1"), 100).unwrap();
    let actions: Vec<&str> = w1
        .iter()
        .map(|l| {
            l.line
                .split("] ")
                .nth(1)
                .unwrap()
                .split(':')
                .next()
                .unwrap()
        })
        .collect();
    assert_eq!(actions, ["CLAIM", "START", "COMPLETE"]);
    let discoveries = fs::read_to_string(project.layout().discoveries()).unwrap();
    assert!(discoveries.contains("The API needs an OAuth client id"));
}

#[test]
fn claiming_nothing_does_not_rewrite_the_file() {
    let (_dir, project) = new_project();
    let before = fs::read(project.layout().tasks_file()).unwrap();
    assert!(project.claim(&ClaimRequest::next("w1")).unwrap().is_none());
    assert_eq!(fs::read(project.layout().tasks_file()).unwrap(), before);
}

#[test]
fn failed_operations_change_nothing() {
    let (_dir, project) = new_project();
    let a = project.add_task(task("a", 1, &[])).unwrap();
    let before = fs::read(project.layout().tasks_file()).unwrap();
    assert!(project.start("w1", &a.id).is_err());
    assert!(
        project
            .complete("w1", "task-99", Completion::default())
            .is_err()
    );
    assert!(project.reset(&a.id, false).is_err());
    assert!(project.add_task(task("b", 1, &["nope"])).is_err());
    assert_eq!(fs::read(project.layout().tasks_file()).unwrap(), before);
    assert!(!project.layout().result_file("task-99").unwrap().exists());
}

#[test]
fn doctor_finds_and_fixes_stale_leases_debris_and_missing_results() {
    let (_dir, project) = new_project();
    let (b, a) = (
        project.add_task(task("b", 1, &[])).unwrap(),
        project.add_task(task("a", 1, &[])).unwrap(),
    );
    // w2 takes b (the older) under a long lease; "gone" then takes a under a lease that lapses.
    assert_eq!(
        project
            .claim(&ClaimRequest::next("w2"))
            .unwrap()
            .unwrap()
            .task
            .id,
        b.id
    );
    assert_eq!(
        project
            .clone()
            .with_lease(Duration::from_millis(1))
            .claim(&ClaimRequest::next("gone"))
            .unwrap()
            .unwrap()
            .task
            .id,
        a.id
    );
    project.start("w2", &b.id).unwrap();
    project
        .complete(
            "w2",
            &b.id,
            Completion {
                output: "ok".into(),
                ..Default::default()
            },
        )
        .unwrap();
    fs::remove_file(project.layout().result_file(&b.id).unwrap()).unwrap();
    let debris = project.layout().root().join(".tasks.json.999.0.baton-tmp");
    fs::write(&debris, "half").unwrap();

    let report = project.doctor(false).unwrap();
    let kinds: Vec<FindingKind> = report.findings.iter().map(|f| f.kind).collect();
    assert_eq!(
        kinds,
        [
            FindingKind::StaleLease,
            FindingKind::LeftoverTempFile,
            FindingKind::MissingResult
        ]
    );
    assert!(
        report.fixed.is_empty() && debris.exists(),
        "without --fix nothing changes"
    );

    let report = project.doctor(true).unwrap();
    assert_eq!(report.fixed.len(), 3, "{:?}", report.fixed);
    assert!(!debris.exists());
    assert!(project.layout().result_file(&b.id).unwrap().exists());
    let a_now = project.load().unwrap().task(&a.id).unwrap().clone();
    assert_eq!(
        (a_now.status, a_now.claimed_by),
        (TaskStatus::Available, None)
    );
    assert!(project.doctor(false).unwrap().healthy());
}

#[test]
fn threads_claiming_at_once_each_get_a_different_task() {
    let (_dir, project) = new_project();
    for i in 0..40 {
        project
            .add_task(task(&format!("t{i}"), 1 + i % 3, &[]))
            .unwrap();
    }
    let claimed: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|w| {
                let project = project.clone();
                s.spawn(move || {
                    let mut mine = Vec::new();
                    while let Some(c) = project.claim(&ClaimRequest::next(format!("w{w}"))).unwrap()
                    {
                        mine.push(c.task.id);
                    }
                    mine
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    // A claim made for a worker that never heard of it would leave its task held, unclaimed
    // by anyone here.
    let board = project.load().unwrap();
    let lost: Vec<String> = board
        .tasks
        .iter()
        .filter(|t| !claimed.contains(&t.id))
        .map(|t| format!("{} {:?} by {:?}", t.id, t.status, t.claimed_by))
        .collect();
    assert!(lost.is_empty(), "{lost:?}");
    assert_eq!(claimed.len(), 40);
    assert_eq!(claimed.iter().collect::<HashSet<_>>().len(), 40);
}

#[test]
fn a_file_from_the_source_design_can_be_worked_on() {
    let (_dir, project) = new_project();
    fs::write(
        project.layout().tasks_file(),
        r#"{"version": "1.0", "created_at": "2026-01-19T20:54:25.282933", "tasks": [
            {"id": "task-20260119205435-5dbc", "description": "Create endpoints", "status": "available",
             "priority": 2, "dependencies": [], "context": {"files": [], "hints": "Use JWT"},
             "created_at": "2026-01-19T20:54:35.090928", "tags": ["api"]}]}"#,
    )
    .unwrap();
    let claim = project
        .claim(&ClaimRequest::next("terminal-2"))
        .unwrap()
        .unwrap();
    assert_eq!(claim.task.id, "task-20260119205435-5dbc");
    project.start("terminal-2", &claim.task.id).unwrap();
    project
        .complete(
            "terminal-2",
            &claim.task.id,
            Completion {
                output: "done".into(),
                ..Default::default()
            },
        )
        .unwrap();
    let json: serde_json::Value =
        serde_json::from_slice(&fs::read(project.layout().tasks_file()).unwrap()).unwrap();
    assert_eq!(json["tasks"][0]["status"], "done");
    assert_eq!(json["tasks"][0]["tags"], serde_json::json!(["api"]));
    assert_eq!(json["tasks"][0]["result"]["output"], "done");
}

#[test]
fn a_folder_that_points_to_a_database_is_refused_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let layout = Layout::for_project(dir.path());
    fs::create_dir_all(layout.root()).unwrap();
    fs::write(
        layout.pointer_file(),
        r#"{"store": "postgres://baton@db/baton", "project": "web"}"#,
    )
    .unwrap();
    let err = FolderStore::locate(None, &dir.path().join("src")).unwrap_err();
    assert!(matches!(err, StoreError::KeptInDatabase { .. }), "{err}");
    assert!(err.to_string().contains("PostgreSQL"), "{err}");
}
