//! Landed work leaves the live board: `leader archive` moves done tasks whose branch is in the
//! lead's checkout (or that had none) and cancelled ones, that no live task needs, to
//! `.coordination/archive/`; every view can still list them, and a task needed again comes
//! back. A database keeps its rows and says so. A project of the previous version is archived
//! by the first command of this one, with a line saying so, and loses nothing.

use baton_test_support as support;

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};
use support::Project;

support::on_both_stores!(the_lead_archives_landed_work_and_every_view_still_finds_it);

fn finish(p: &Project, id: &str) {
    p.ok(&["worker", "claim", "w1", "--task", id]);
    p.ok(&["worker", "start", "w1", id]);
    p.ok(&["worker", "complete", "w1", id, &format!("{id} is done")]);
}

fn ids(report: &Value) -> Vec<String> {
    let mut ids: Vec<String> = report["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect();
    ids.sort();
    ids
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

fn the_lead_archives_landed_work_and_every_view_still_finds_it(p: Project) {
    support::repository(p.path());
    for (id, deps) in [
        ("a", ""),
        ("kept", ""),
        ("live", "kept"),
        ("gone", ""),
        ("branchy", ""),
    ] {
        let mut args = vec!["leader", "add-task", id, "--id", id];
        if !deps.is_empty() {
            args.extend(["--depends", deps]);
        }
        p.ok(&args);
    }
    finish(&p, "a");
    finish(&p, "kept");
    p.ok(&["leader", "cancel", "gone"]);
    // Worked on a branch, not merged yet.
    let claimed = p.json(&["worker", "claim", "w2", "--task", "branchy", "--worktree"]);
    let worktree = Path::new(claimed["worktree"]["path"].as_str().unwrap()).to_path_buf();
    std::fs::write(worktree.join("branchy.txt"), "b\n").unwrap();
    git(&worktree, &["add", "branchy.txt"]);
    git(&worktree, &["commit", "-q", "-m", "branchy"]);
    p.ok(&["worker", "start", "w2", "branchy"]);
    p.ok(&["worker", "complete", "w2", "branchy", "branchy is done"]);
    let before = p.json(&["leader", "status"]);

    let dry = p.json(&["leader", "archive", "--dry-run"]);
    assert_eq!(
        ids(&p.json(&["leader", "status"])),
        ids(&before),
        "a dry run moves nothing"
    );
    let moved = p.json(&["leader", "archive"]);
    if p.on_postgres() {
        // The database keeps every row: nothing moves, and the board lists everything.
        assert_eq!(
            (&dry["archived"], &moved["archived"]),
            (&json!([]), &json!([]))
        );
        assert!(
            moved["place"]
                .as_str()
                .unwrap()
                .contains("kept on the board"),
            "{moved}"
        );
        assert_eq!(ids(&p.json(&["leader", "status", "--all"])), ids(&before));
        return;
    }
    // kept: live depends on it; branchy: its branch is not in the checkout.
    assert_eq!(dry["archived"], json!(["a", "gone"]), "{dry}");
    assert_eq!(moved["archived"], json!(["a", "gone"]), "{moved}");
    assert_eq!(moved["live"], 3);
    assert_eq!(
        ids(&p.json(&["leader", "status"])),
        ["branchy", "kept", "live"]
    );
    // Every view still finds them, as they were.
    let all = p.json(&["leader", "status", "--all"]);
    assert_eq!(ids(&all), ids(&before));
    let same = |id: &str, report: &Value| {
        report["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["id"] == id)
            .cloned()
    };
    for id in ["a", "gone"] {
        assert_eq!(same(id, &all), same(id, &before), "{id}");
    }
    assert!(p.coordination().join("results/a.md").is_file());
    // Found where it is (a had no branch to review).
    let review = p.fails(&["review", "a"], 1);
    assert!(review.contains("a has no branch"), "{review}");
    let text = p.ok(&["leader", "archive"]);
    assert!(
        text.contains("Nothing to archive (3 task(s) on the board)"),
        "{text}"
    );
    // Its id stays taken.
    let taken = p.fails(&["leader", "add-task", "again", "--id", "a"], 1);
    assert!(taken.contains("a"), "{taken}");

    // Merged, branchy has landed.
    p.ok(&["leader", "merge", "branchy"]);
    assert_eq!(
        p.json(&["leader", "archive"])["archived"],
        json!(["branchy"])
    );
    let review = p.ok(&["review", "branchy"]);
    assert!(
        review.contains("branchy.txt"),
        "its branch is reviewed: {review}"
    );

    // The source design's claim, reading tasks.json, still finds live's dependency done.
    let script = support::source_root().join("bench/baseline_claim.py");
    let out = Command::new("python3")
        .arg(script)
        .arg("w9")
        .current_dir(p.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(p.task("live")["claimed_by"], "w9");

    // A new task on archived work brings it back to the board, done.
    p.ok(&[
        "leader",
        "add-task",
        "follow-up",
        "--id",
        "follow",
        "--depends",
        "a",
    ]);
    assert_eq!(p.task("a")["status"], "done");
    let ready = p.json(&["worker", "list"]);
    assert!(
        ready["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["id"] == "follow"),
        "{ready}"
    );
}

/// A project of the previous version, 10,000 tasks of which most landed hours ago, each with
/// its result report and some with a transcript: the first command of this version archives
/// it, says so, and every task, result and transcript is as it was.
#[test]
fn a_large_project_of_the_previous_version_is_archived_by_its_first_command_and_loses_nothing() {
    let p = Project::init();
    let hours_ago = "2026-01-01T09:00:00Z";
    let mut tasks = Vec::new();
    for i in 1..=10_000 {
        let live = i > 9_900;
        let mut task = json!({
            "id": format!("task-{i}"),
            "description": format!("Part {i}"),
            "status": if live { "available" } else { "done" },
            "priority": 5,
            "claimed_by": if live { Value::Null } else { json!("w1") },
            "dependencies": if i > 1 { json!([format!("task-{}", i - 1)]) } else { json!([]) },
            "context": {"files": [format!("src/part{i}.rs")], "hints": ""},
            "result": if live { Value::Null } else {
                json!({"output": format!("part {i} written"), "files_modified": [], "files_created": []})
            },
            "created_at": hours_ago,
            "claimed_at": if live { Value::Null } else { json!(hours_ago) },
            "completed_at": if live { Value::Null } else { json!(hours_ago) },
        });
        if i % 1000 == 0 {
            task["context"]["extra_note"] = json!("a field another tool wrote");
        }
        tasks.push(task);
    }
    let file = json!({"version": "1.0", "created_at": hours_ago, "last_updated": hours_ago, "tasks": tasks});
    std::fs::write(
        p.coordination().join("tasks.json"),
        serde_json::to_vec_pretty(&file).unwrap(),
    )
    .unwrap();
    let results = p.coordination().join("results");
    for i in 1..=9_900 {
        std::fs::write(
            results.join(format!("task-{i}.md")),
            format!("# task-{i}\n"),
        )
        .unwrap();
    }
    let transcript = p.coordination().join("transcripts/task-7");
    std::fs::create_dir_all(&transcript).unwrap();
    std::fs::write(transcript.join("1.jsonl"), "{\"kind\":\"text\"}\n").unwrap();
    let snapshot = |dir: &Path| -> Vec<(String, Vec<u8>)> {
        let mut files: Vec<(String, Vec<u8>)> = walk(dir)
            .into_iter()
            .map(|f| {
                (
                    f.strip_prefix(dir).unwrap().display().to_string(),
                    std::fs::read(&f).unwrap(),
                )
            })
            .collect();
        files.sort();
        files
    };
    let (results_before, transcripts_before) = (
        snapshot(&results),
        snapshot(&p.coordination().join("transcripts")),
    );

    let first = p.run(&["--json", "leader", "status"]);
    assert!(first.status.success(), "{first:?}");
    let said = String::from_utf8_lossy(&first.stderr);
    // task-9900 stays: task-9901, live, depends on it.
    assert!(
        said.contains("moved 9899 landed task(s) off the board"),
        "{said}"
    );
    assert!(said.contains("for the first time"), "{said}");
    let board: Value = serde_json::from_slice(&first.stdout).unwrap();
    assert_eq!(board["tasks"].as_array().unwrap().len(), 101);
    // The board the previous version wrote pretty is written in this version's layout: each
    // of its tasks on a line of its own.
    let text = std::fs::read_to_string(p.coordination().join("tasks.json")).unwrap();
    let task_lines = text
        .lines()
        .filter(|l| l.starts_with("    {\"id\":"))
        .count();
    assert_eq!(task_lines, 101, "{}", &text[..text.len().min(2000)]);
    let again = p.run(&["leader", "status"]);
    assert!(
        String::from_utf8_lossy(&again.stderr).is_empty(),
        "said once: {again:?}"
    );

    let all = p.json(&["leader", "status", "--all"]);
    let listed: std::collections::HashMap<String, Value> = all["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|view| (view["id"].as_str().unwrap().to_string(), view.clone()))
        .collect();
    assert_eq!(listed.len(), 10_000);
    // Each task as it was on the board, field by field (the board's views add what they
    // derive; the stored task is the archive's line).
    let archive = p.coordination().join("archive");
    let mut archived = std::collections::HashMap::new();
    for file in walk(&archive)
        .into_iter()
        .filter(|f| f.extension().is_some_and(|e| e == "jsonl"))
    {
        for line in std::fs::read_to_string(file).unwrap().lines() {
            let mut task: Value = serde_json::from_str(line).unwrap();
            task.as_object_mut().unwrap().remove("archived_at");
            archived.insert(task["id"].as_str().unwrap().to_string(), task);
        }
    }
    let board_now: Value = p.tasks_json();
    for task in board_now["tasks"].as_array().unwrap() {
        archived.insert(task["id"].as_str().unwrap().to_string(), task.clone());
    }
    assert_eq!(archived.len(), 10_000);
    for original in file["tasks"].as_array().unwrap() {
        let id = original["id"].as_str().unwrap();
        let kept = &archived[id];
        for (key, value) in original.as_object().unwrap() {
            assert_eq!(same_instant(&kept[key]), same_instant(value), "{id}.{key}");
        }
        assert!(listed.contains_key(id), "{id} is listed");
    }
    assert_eq!(snapshot(&results), results_before);
    assert_eq!(
        snapshot(&p.coordination().join("transcripts")),
        transcripts_before
    );
}

/// A time as Baton writes it (with microseconds) and as another tool did compare equal.
fn same_instant(value: &Value) -> Value {
    match value.as_str() {
        Some(text) if text.ends_with('Z') && text.contains('T') => {
            let text = text.trim_end_matches('Z');
            match text.contains('.') {
                true => json!(text.trim_end_matches('0').trim_end_matches('.')),
                false => json!(text),
            }
        }
        _ => value.clone(),
    }
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}
