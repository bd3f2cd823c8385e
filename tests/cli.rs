//! End-to-end tests of every `baton` command and refusal, through the real binary.

use baton_test_support as support;

use std::fs;

use serde_json::{Value, json};
use support::{Project, task_ids};

support::on_both_stores!(
    add_task_records_every_field_in_the_source_schema,
    a_tasks_acceptance_is_set_shown_and_changed_from_the_command_line,
    a_proposed_plan_is_claimed_only_once_the_lead_approves_it,
    add_task_refusals_name_the_problem_and_change_nothing,
    a_full_worker_cycle_writes_result_summary_logs_and_discoveries,
    illegal_transitions_name_the_task_its_status_and_owner,
    an_expired_lease_lets_another_worker_take_the_task_over,
    release_and_reset_put_tasks_back_in_the_queue,
    edit_changes_a_task_and_refuses_cycles,
    leader_move_says_what_a_drop_takes_and_a_named_claim_refuses_a_blocked_task,
    status_shows_counts_readiness_and_waiting_dependencies,
    worker_list_shows_ready_tasks_best_first_and_all_with_a_flag,
    doctor_reports_and_fixes_with_exit_codes,
    logs_follow_prints_lines_written_after_it_started,
    leader_agents_says_who_is_doing_what,
);

#[test]
fn leader_init_creates_the_layout_and_refuses_a_second_init() {
    let p = Project::empty();
    let out = p.json(&[
        "leader",
        "init",
        "Build a REST API",
        "--approach",
        "small steps",
    ]);
    assert_eq!(out["goal"], "Build a REST API");
    for file in [
        "master-plan.md",
        "tasks.json",
        "context/discoveries.md",
        "logs/leader.log",
    ] {
        assert!(p.coordination().join(file).is_file(), "{file}");
    }
    assert!(
        fs::read_to_string(p.coordination().join("master-plan.md"))
            .unwrap()
            .contains("small steps")
    );
    let err = p.fails(&["leader", "init", "Again"], 1);
    assert!(err.contains("already exists"), "{err}");
}

#[test]
fn commands_outside_a_project_say_to_run_init() {
    let p = Project::empty();
    let err = p.fails(&["worker", "list"], 1);
    assert!(err.contains("run `baton leader init"), "{err}");
    let err = p.fails(&["leader", "status", "--json"], 1);
    let body: serde_json::Value = serde_json::from_str(err.trim()).unwrap();
    assert_eq!(body["error"]["kind"], "not_initialized");
}

/// With `--json`, a usage error is JSON too (the guide says every error is), with the usage
/// exit code; without, clap's text as before.
#[test]
fn a_usage_error_with_json_is_json() {
    let p = Project::init();
    let err = p.fails(&["--json", "team", "up", "--bogus"], 2);
    let body: serde_json::Value =
        serde_json::from_str(err.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {err}"));
    assert_eq!(body["error"]["kind"], "invalid_arguments", "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("--bogus"), "{message}");
    let plain = p.fails(&["team", "up", "--bogus"], 2);
    assert!(plain.contains("unexpected argument '--bogus'"), "{plain}");
    // After `--`, `--json` is an argument, not the option.
    let after = p.fails(&["worker", "claim", "--bogus", "--", "--json"], 2);
    assert!(
        serde_json::from_str::<serde_json::Value>(after.trim()).is_err(),
        "{after}"
    );
}

/// `baton help COMMAND…` is `baton COMMAND… --help`.
#[test]
fn help_names_a_command() {
    let p = Project::init();
    let team = p.ok(&["help", "team"]);
    assert!(team.contains("Usage: baton team"), "{team}");
    assert_eq!(team, p.ok(&["team", "--help"]));
    let up = p.ok(&["help", "team", "up"]);
    assert!(up.contains("Usage: baton team up"), "{up}");
    assert!(p.ok(&["help"]).contains("Usage: baton"));
}

#[test]
fn the_folder_is_found_from_a_subfolder_from_baton_dir_and_from_dir() {
    let p = Project::init();
    p.ok(&["leader", "add-task", "x"]);
    let sub = p.path().join("src/deep");
    fs::create_dir_all(&sub).unwrap();
    let from_sub = p
        .command(&["worker", "list", "--json"])
        .current_dir(&sub)
        .output()
        .unwrap();
    assert_eq!(
        task_ids(&serde_json::from_slice(&from_sub.stdout).unwrap()),
        ["task-1"]
    );

    let elsewhere = tempfile::tempdir().unwrap();
    let via_env = p
        .command(&["worker", "list", "--json"])
        .current_dir(elsewhere.path())
        .env("BATON_DIR", p.path())
        .output()
        .unwrap();
    assert_eq!(
        task_ids(&serde_json::from_slice(&via_env.stdout).unwrap()),
        ["task-1"]
    );
    let dir = p.coordination().display().to_string();
    let via_flag = p
        .command(&["--dir", &dir, "worker", "list", "--json"])
        .current_dir(elsewhere.path())
        .output()
        .unwrap();
    assert_eq!(
        task_ids(&serde_json::from_slice(&via_flag.stdout).unwrap()),
        ["task-1"]
    );
}

fn add_task_records_every_field_in_the_source_schema(p: Project) {
    p.ok(&["leader", "add-task", "base"]);
    let task = p.json(&[
        "leader",
        "add-task",
        "Login endpoint",
        "-p",
        "2",
        "--depends",
        "task-1",
        "--files",
        "src/a.rs,src/b.rs",
        "--hints",
        "use JWT",
        "--hints",
        "validate input",
    ])["task"]
        .clone();
    assert_eq!(task["id"], "task-2");
    let stored = &p.tasks_json()["tasks"][1];
    assert_eq!(stored["description"], "Login endpoint");
    assert_eq!(stored["status"], "available");
    assert_eq!(stored["priority"], 2);
    assert_eq!(stored["claimed_by"], json!(null));
    assert_eq!(stored["dependencies"], json!(["task-1"]));
    assert_eq!(
        stored["context"],
        json!({"files": ["src/a.rs", "src/b.rs"], "hints": "use JWT\nvalidate input"})
    );
    assert!(stored["created_at"].as_str().unwrap().ends_with('Z'));
}

fn a_tasks_acceptance_is_set_shown_and_changed_from_the_command_line(p: Project) {
    let added = p.json(&[
        "leader",
        "add-task",
        "Sort the list",
        "--acceptance",
        "the list is sorted by date, newest first",
    ])["task"]
        .clone();
    assert_eq!(
        added["acceptance"],
        "the list is sorted by date, newest first"
    );
    let status = p.json(&["leader", "status"]);
    assert_eq!(
        status["tasks"][0]["acceptance"], "the list is sorted by date, newest first",
        "{status}"
    );
    let edited = p.json(&[
        "leader",
        "edit",
        "task-1",
        "--acceptance",
        "sorted, and ties by id",
    ])["task"]
        .clone();
    assert_eq!(edited["acceptance"], "sorted, and ties by id");
    let claimed = p.ok(&["worker", "claim", "w1"]);
    assert!(
        claimed.contains("  Done when: sorted, and ties by id\n"),
        "{claimed}"
    );
    let removed = p.json(&["leader", "edit", "task-1", "--acceptance", ""])["task"].clone();
    assert!(removed.get("acceptance").is_none(), "{removed}");
}

fn a_proposed_plan_is_claimed_only_once_the_lead_approves_it(p: Project) {
    p.ok(&[
        "leader",
        "add-task",
        "Schema",
        "--proposed",
        "--id",
        "schema",
    ]);
    p.ok(&[
        "leader",
        "add-task",
        "Endpoint",
        "--proposed",
        "--depends",
        "schema",
    ]);
    let status = p.json(&["leader", "status"]);
    assert_eq!(status["counts"]["proposed"], 2, "{status}");
    let text = p.ok(&["leader", "status"]);
    assert!(
        text.contains("2 total · 2 proposed (`leader approve`) · 0 available"),
        "{text}"
    );
    // Nothing to claim (exit 3), and the reason names the plan.
    let nothing = p.fails(&["worker", "claim", "w1"], 3);
    assert!(
        nothing.contains("2 proposed task(s) wait for the lead to approve their plan"),
        "{nothing}"
    );
    let refused = p.fails(&["leader", "approve", "schema", "nope"], 1);
    assert!(refused.contains("nope"), "{refused}");
    assert_eq!(
        p.json(&["leader", "status"])["counts"]["proposed"],
        2,
        "all or none"
    );
    let approved = p.ok(&["leader", "approve", "--all"]);
    assert_eq!(
        approved.trim(),
        "Approved schema, task-1: available to claim"
    );
    let claimed = p.ok(&["worker", "claim", "w1"]);
    assert!(claimed.starts_with("Claimed schema"), "{claimed}");
    let again = p.ok(&["leader", "approve", "--all"]);
    assert_eq!(again.trim(), "Nothing to approve: no task is proposed");
}

fn add_task_refusals_name_the_problem_and_change_nothing(p: Project) {
    p.ok(&["leader", "add-task", "a"]);
    let before = p.tasks_bytes();
    let cases: &[(&[&str], &str)] = &[
        (
            &["leader", "add-task", "b", "--depends", "task-9"],
            "unknown task \"task-9\"",
        ),
        // The task being added has no id yet: the refusal names none (it named task-2).
        (
            &["leader", "add-task", "b", "--depends", "nope"],
            "baton: the task being added depends on unknown task \"nope\"; `baton leader status` lists the tasks",
        ),
        (
            &["leader", "add-task", "b", "--id", "../../evil"],
            "invalid task id",
        ),
        (
            &["leader", "add-task", "b", "--id", "task-1"],
            "already exists",
        ),
        (&["leader", "add-task", "b", "-p", "0"], "invalid priority"),
        (&["leader", "add-task", ""], "invalid description"),
        (
            &["leader", "add-task", "b", "--id", &"x".repeat(65)],
            "longer than 64",
        ),
    ];
    for (args, expected) in cases {
        let err = p.fails(args, 1);
        assert!(err.contains(expected), "{args:?}: {err}");
    }
    assert_eq!(p.tasks_bytes(), before);
}

#[test]
fn usage_errors_exit_with_code_2() {
    let p = Project::init();
    p.fails(&["worker", "claim"], 2);
    p.fails(&["leader", "frobnicate"], 2);
    p.fails(&["leader", "add-task", "x", "-p", "high"], 2);
    let err = p.fails(&["--lease", "soon", "worker", "claim", "w1"], 2);
    assert!(err.contains("90s, 15m or 1h30m"), "{err}");
}

fn a_full_worker_cycle_writes_result_summary_logs_and_discoveries(p: Project) {
    p.ok(&["leader", "add-task", "Create model", "-p", "1"]);
    p.ok(&[
        "leader",
        "add-task",
        "Endpoint",
        "-p",
        "2",
        "--depends",
        "task-1",
    ]);

    let claim = p.json(&["worker", "claim", "w1"]);
    assert_eq!(claim["task"]["id"], "task-1");
    assert_eq!(claim["task"]["claimed_by"], "w1");
    let nothing = p.run(&["worker", "claim", "w2", "--json"]);
    assert_eq!(nothing.status.code(), Some(3));
    let body: serde_json::Value = serde_json::from_slice(&nothing.stdout).unwrap();
    assert_eq!(body["task"], json!(null));
    assert!(
        body["reason"]
            .as_str()
            .unwrap()
            .contains("wait on dependencies")
    );

    p.ok(&["worker", "start", "w1", "task-1"]);
    p.ok(&["worker", "heartbeat", "w1"]);
    p.ok(&["discover", "Models live in src/models", "--agent", "w1"]);
    let done = p.json(&[
        "worker",
        "complete",
        "w1",
        "task-1",
        "Model created",
        "--modified",
        "src/lib.rs",
        "--created",
        "src/models/user.rs",
    ])["task"]
        .clone();
    assert_eq!(done["status"], "done");
    assert_eq!(
        done["result"]["files_created"],
        json!(["src/models/user.rs"])
    );
    let report = fs::read_to_string(p.files().join("results/task-1.md")).unwrap();
    assert!(
        report.contains("## Output\nModel created") && report.contains("## Status\nSUCCESS"),
        "{report}"
    );

    assert_eq!(p.json(&["worker", "claim", "w2"])["task"]["id"], "task-2");
    p.ok(&["worker", "start", "w2", "task-2"]);
    p.ok(&["worker", "fail", "w2", "task-2", "missing credentials"]);
    assert!(
        fs::read_to_string(p.files().join("results/task-2.md"))
            .unwrap()
            .contains("FAILED")
    );

    let agg = p.json(&["leader", "aggregate"]);
    assert_eq!(
        (agg["done"].as_u64(), agg["failed"].as_u64()),
        (Some(1), Some(1))
    );
    let summary = fs::read_to_string(p.files().join("summary.md")).unwrap();
    assert!(
        summary.contains("Model created") && summary.contains("missing credentials"),
        "{summary}"
    );

    let discoveries = fs::read_to_string(p.files().join("context/discoveries.md")).unwrap();
    assert!(discoveries.contains("Models live in src/models"));
    let w1_log = fs::read_to_string(p.files().join("logs/w1.log")).unwrap();
    let actions: Vec<&str> = w1_log
        .lines()
        .map(|l| l.split("] ").nth(1).unwrap().split(':').next().unwrap())
        .collect();
    assert_eq!(
        actions,
        ["CLAIM", "START", "HEARTBEAT", "DISCOVERY", "COMPLETE"]
    );
    let logs = p.json(&["logs", "w2"]);
    assert_eq!(logs["lines"].as_array().unwrap().len(), 4, "{logs}");
    assert!(p.ok(&["logs"]).contains("leader |"));
}

fn illegal_transitions_name_the_task_its_status_and_owner(p: Project) {
    p.ok(&["leader", "add-task", "a"]);
    let err = p.fails(&["worker", "start", "w1", "task-1"], 1);
    assert!(
        err.contains("cannot start task task-1: it is available"),
        "{err}"
    );
    p.ok(&["worker", "claim", "w1"]);
    let err = p.fails(&["worker", "complete", "w1", "task-1", "x"], 1);
    assert!(
        err.contains("it is claimed (owned by w1); start it first"),
        "{err}"
    );
    let err = p.fails(&["worker", "start", "w2", "task-1"], 1);
    assert!(err.contains("it is claimed by w1, not by w2"), "{err}");
    let err = p.fails(&["worker", "start", "w1", "task-7"], 1);
    assert!(err.contains("no task with id \"task-7\""), "{err}");
    let err = p.fails(&["worker", "claim", "../w1"], 1);
    assert!(err.contains("invalid agent id"), "{err}");
    let err = p.fails(&["leader", "reset", "task-1"], 1);
    assert!(
        err.contains("left on its lease; wait for it to expire or pass --force"),
        "{err}"
    );
    p.ok(&["leader", "reset", "task-1", "--force"]);
    assert_eq!(p.tasks_json()["tasks"][0]["status"], "available");
}

fn an_expired_lease_lets_another_worker_take_the_task_over(p: Project) {
    p.ok(&["leader", "add-task", "a"]);
    p.ok(&["--lease", "1ms", "worker", "claim", "dead"]);
    let claim = p.json(&["worker", "claim", "alive"]);
    assert_eq!(claim["task"]["id"], "task-1");
    assert_eq!(claim["reclaimed_from"], "dead");
    assert_eq!(claim["task"]["attempts"], 2);
    // Whatever the worker that lost it tries, it is told what happened and what to do with
    // its partial work, not advice meant for the new holder.
    for args in [
        &["worker", "start", "dead", "task-1"][..],
        &["worker", "complete", "dead", "task-1", "finished it"],
        &["worker", "fail", "dead", "task-1", "gave up"],
        &["worker", "release", "dead", "task-1"],
    ] {
        let err = p.fails(args, 1);
        assert!(err.contains("claimed by alive, not by dead"), "{err}");
        assert!(err.contains("your lease expired"), "{err}");
        assert!(err.contains("it was taken over"), "{err}");
        assert!(err.contains("baton discover"), "{err}");
        assert!(!err.contains("start it first"), "{err}");
    }
    let beat = p.json(&["worker", "heartbeat", "dead"]);
    assert_eq!(beat["renewed"], serde_json::json!([]));
    let note = beat["note"].as_str().unwrap();
    assert!(note.contains("dead holds no tasks"), "{note}");
    assert!(note.contains("taken over"), "{note}");
    let beat = p.json(&["worker", "heartbeat", "alive"]);
    assert!(beat.get("note").is_none(), "{beat}");
    assert_eq!(p.tasks_json()["tasks"][0]["claimed_by"], "alive");
}

fn release_and_reset_put_tasks_back_in_the_queue(p: Project) {
    p.ok(&["leader", "add-task", "a"]);
    p.ok(&["worker", "claim", "w1"]);
    p.ok(&["worker", "release", "w1", "task-1"]);
    p.ok(&["worker", "claim", "w2"]);
    p.ok(&["worker", "fail", "w2", "task-1", "flaky"]);
    assert_eq!(task_ids(&p.json(&["worker", "list"])), Vec::<String>::new());
    p.ok(&["leader", "reset", "task-1"]);
    assert_eq!(task_ids(&p.json(&["worker", "list"])), ["task-1"]);
    let err = p.fails(&["leader", "reset", "task-1"], 1);
    assert!(err.contains("it can be claimed already"), "{err}");

    // Several at once: all or none; --failed takes every failed task.
    p.ok(&["leader", "add-task", "b"]);
    p.ok(&["leader", "add-task", "c"]);
    for (worker, id) in [("w3", "task-1"), ("w4", "task-2"), ("w5", "task-3")] {
        p.ok(&["worker", "claim", worker, "--task", id]);
        p.ok(&["worker", "fail", worker, id, "flaky"]);
    }
    p.ok(&["leader", "add-task", "d"]);
    let err = p.fails(&["leader", "reset", "task-1", "task-4"], 1);
    assert!(
        err.contains("task-4") && err.contains("claimed already"),
        "{err}"
    );
    let board = p.tasks_json();
    let status = |id: &str| {
        board["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["id"] == id)
            .unwrap()["status"]
            .clone()
    };
    assert_eq!(status("task-1"), "failed", "nothing was reset: {board}");
    let reset = p.json(&["leader", "reset", "task-1", "task-2"]);
    let ids: Vec<&str> = reset["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["task-1", "task-2"]);
    let said = p.ok(&["leader", "reset", "--failed"]);
    assert!(said.contains("Reset task-3: available again"), "{said}");
    assert!(
        p.ok(&["leader", "reset", "--failed"])
            .contains("Nothing to reset")
    );
}

fn edit_changes_a_task_and_refuses_cycles(p: Project) {
    p.ok(&["leader", "add-task", "a"]);
    p.ok(&["leader", "add-task", "b", "--depends", "task-1"]);
    let err = p.fails(&["leader", "edit", "task-1", "--depends", "task-2"], 1);
    assert!(err.contains("cycle: task-1 -> task-2 -> task-1"), "{err}");
    let edited = p.json(&[
        "leader",
        "edit",
        "task-2",
        "--no-depends",
        "-p",
        "1",
        "--description",
        "B!",
    ])["task"]
        .clone();
    assert_eq!(
        (edited["priority"].as_u64(), edited["description"].as_str()),
        (Some(1), Some("B!"))
    );
    assert_eq!(edited["dependencies"], json!([]));
}

fn leader_move_says_what_a_drop_takes_and_a_named_claim_refuses_a_blocked_task(p: Project) {
    p.ok(&["leader", "add-task", "a"]);
    p.ok(&["leader", "add-task", "b", "--depends", "task-1"]);
    // A dry run says which operation, in whose name, and changes nothing.
    let plan = p.ok(&["leader", "move", "task-1", "claimed", "--dry-run"]);
    assert!(plan.contains("Would claim as lead"), "{plan}");
    assert_eq!(p.tasks_json()["tasks"][0]["status"], "available");
    // The lifecycle's refusal, with exit code 1; `in-progress` is read as in_progress.
    let refused = p.fails(&["leader", "move", "task-1", "in-progress"], 1);
    assert!(refused.contains("claim it first"), "{refused}");
    let bad = p.fails(&["leader", "move", "task-1", "sideways"], 2);
    assert!(bad.contains("not a status"), "{bad}");
    // A claim of a named task that waits for another is refused with the reason.
    let blocked = p.fails(&["worker", "claim", "w1", "--task", "task-2"], 1);
    assert!(blocked.contains("waits for task-1"), "{blocked}");
    let claimed = p.json(&["worker", "claim", "w1", "--task", "task-1"]);
    assert_eq!(claimed["task"]["id"], "task-1");
    // Completing needs a summary: the move says so before anything changes.
    p.ok(&["worker", "start", "w1", "task-1"]);
    let needs = p.fails(&["leader", "move", "task-1", "done"], 1);
    assert!(needs.contains("needs a summary"), "{needs}");
    let done = p.ok(&["leader", "move", "task-1", "done", "--text", "did a"]);
    assert!(
        done.contains("Moved task-1 to done: complete as w1"),
        "{done}"
    );
}

fn status_shows_counts_readiness_and_waiting_dependencies(p: Project) {
    p.ok(&["leader", "add-task", "first"]);
    p.ok(&["leader", "add-task", "second", "--depends", "task-1"]);
    p.ok(&["worker", "claim", "w1"]);
    let text = p.ok(&["leader", "status"]);
    assert!(text.contains("Goal: Test goal"), "{text}");
    assert!(
        text.contains("2 total · 1 available (0 ready) · 1 claimed"),
        "{text}"
    );
    let line = text.lines().find(|l| l.starts_with("task-2")).unwrap();
    assert!(
        line.contains("available") && line.contains("task-1"),
        "{line}"
    );
    let report = p.json(&["leader", "status"]);
    assert_eq!(report["counts"]["claimed"], 1);
    assert_eq!(report["tasks"][1]["blocked_by"], json!(["task-1"]));
    assert!(report["tasks"][0]["lease_remaining_secs"].as_u64().unwrap() > 800);
}

fn worker_list_shows_ready_tasks_best_first_and_all_with_a_flag(p: Project) {
    p.ok(&["leader", "add-task", "low", "-p", "5"]);
    p.ok(&["leader", "add-task", "urgent", "-p", "1"]);
    p.ok(&[
        "leader",
        "add-task",
        "blocked",
        "-p",
        "1",
        "--depends",
        "task-1",
    ]);
    assert_eq!(task_ids(&p.json(&["worker", "list"])), ["task-2", "task-1"]);
    assert_eq!(
        task_ids(&p.json(&["worker", "list", "--all"])),
        ["task-1", "task-2", "task-3"]
    );
}

fn doctor_reports_and_fixes_with_exit_codes(p: Project) {
    p.ok(&["leader", "add-task", "a"]);
    p.ok(&["leader", "add-task", "b", "--depends", "task-1"]);
    assert!(p.ok(&["leader", "doctor"]).contains("No problems found"));
    p.ok(&["--lease", "1ms", "worker", "claim", "dead"]);
    let report = p.run(&["leader", "doctor", "--json"]);
    assert_eq!(report.status.code(), Some(4));
    let report: serde_json::Value = serde_json::from_slice(&report.stdout).unwrap();
    assert_eq!(report["findings"][0]["kind"], "stale_lease");
    let fixed = p.json(&["leader", "doctor", "--fix"]);
    assert!(
        fixed["fixed"][0]
            .as_str()
            .unwrap()
            .contains("released from dead"),
        "{fixed}"
    );
    assert_eq!(p.tasks_json()["tasks"][0]["status"], "available");

    // A failed prerequisite dooms its dependant; doctor says so but cannot fix it.
    p.ok(&["worker", "claim", "w1"]);
    p.ok(&["worker", "fail", "w1", "task-1", "no"]);
    let out = p.run(&["leader", "doctor", "--fix"]);
    assert_eq!(out.status.code(), Some(4));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("task-2 can never start: it depends on task-1"),
        "{text}"
    );
    assert!(text.contains("none can become ready"), "{text}");
}

#[test]
fn a_corrupt_tasks_file_is_named_with_its_position_and_left_alone() {
    let p = Project::init();
    let path = p.coordination().join("tasks.json");
    fs::write(&path, "{\"tasks\": [\n  {\"id\": 1}\n").unwrap();
    for args in [
        &["worker", "claim", "w1"][..],
        &["leader", "add-task", "x"],
        &["leader", "status"],
    ] {
        let err = p.fails(args, 1);
        assert!(
            err.contains("tasks.json is not valid JSON at line 2"),
            "{args:?}: {err}"
        );
        // The advice fits a `.coordination/` git does not track, too.
        assert!(err.contains("restore it from a backup"), "{err}");
    }
    // The doctor lists what it cannot read, as a problem it leaves (exit 4), and --fix
    // changes nothing.
    let out = p.run(&["--json", "leader", "doctor", "--fix"]);
    assert_eq!(out.status.code(), Some(4), "{out:?}");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let finding = &report["findings"][0];
    assert_eq!(
        (&finding["kind"], &finding["fixable"]),
        (&json!("unreadable_board"), &json!(false)),
        "{report}"
    );
    assert!(
        finding["message"]
            .as_str()
            .unwrap()
            .contains("tasks.json is not valid JSON at line 2"),
        "{report}"
    );
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        "{\"tasks\": [\n  {\"id\": 1}\n"
    );
}

#[test]
fn hostile_text_is_refused_or_shown_safely() {
    let p = Project::init();
    let err = p.fails(&["leader", "add-task", "clear\u{1b}[2Jscreen"], 1);
    assert!(err.contains("control character U+001B"), "{err}");
    let err = p.fails(&["discover", "x", "--agent", "a/b"], 1);
    assert!(err.contains("invalid agent id"), "{err}");
    let err = p.fails(&["logs", "../../etc/passwd"], 1);
    assert!(err.contains("invalid agent id"), "{err}");
    // A hand-edited file may hold anything; the terminal still gets no escape sequences.
    let mut file = p.tasks_json();
    file["tasks"] =
        json!([{"id": "t1", "description": "evil\u{1b}]0;pwned\u{7}", "status": "available"}]);
    fs::write(p.coordination().join("tasks.json"), file.to_string()).unwrap();
    let text = p.ok(&["leader", "status"]);
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{7}'),
        "{text:?}"
    );
}

#[test]
fn prompts_name_the_exact_commands() {
    let p = Project::empty();
    let worker = p.ok(&["prompt", "worker", "terminal-2"]);
    for cmd in [
        "baton worker claim terminal-2",
        "baton worker start terminal-2",
        "baton worker complete terminal-2",
        "baton worker heartbeat terminal-2",
        "baton worker fail terminal-2",
    ] {
        assert!(worker.contains(cmd), "missing {cmd}");
    }
    let leader = p.ok(&["prompt", "leader"]);
    for cmd in [
        "baton leader init",
        "baton leader add-task",
        "baton leader status",
        "baton leader aggregate",
        "baton leader doctor",
    ] {
        assert!(leader.contains(cmd), "missing {cmd}");
    }
    p.fails(&["prompt", "worker", "bad name"], 1);
}

#[test]
fn help_documents_every_exit_code_the_commands_use() {
    let p = Project::init();
    // `--help` fits on one 80×40 terminal and says where the exit codes are.
    let mut short = p.command(&["--help"]);
    short.env("COLUMNS", "80");
    let short = String::from_utf8(short.output().unwrap().stdout).unwrap();
    assert!(
        short.lines().count() <= 40,
        "{} lines:\n{short}",
        short.lines().count()
    );
    assert!(short.lines().all(|l| l.chars().count() <= 80), "{short}");
    assert!(short.contains("baton exit-codes"), "{short}");
    let help = p.ok(&["exit-codes"]);
    let code_of = |args: &[&str]| p.run(args).status.code().unwrap();
    // Produce each exit code for real, then find it documented.
    let mut produced = vec![
        code_of(&["leader", "status"]),
        code_of(&["worker", "start", "w1", "task-404"]),
        code_of(&["worker", "claim"]),
        code_of(&["worker", "claim", "w1"]),
        code_of(&["signal", "wait", "never", "--timeout", "1s"]),
    ];
    // A task waiting on a cancelled one: doctor reports it.
    p.ok(&["leader", "add-task", "A"]);
    p.ok(&["leader", "add-task", "B", "--depends", "task-1"]);
    p.ok(&["leader", "cancel", "task-1"]);
    produced.push(code_of(&["leader", "doctor"]));
    assert_eq!(produced, [0, 1, 2, 3, 5, 4]);
    for code in produced {
        let line = format!("\n{code:>3}  ");
        assert!(
            help.contains(&line),
            "exit code {code} is not in --help:\n{help}"
        );
    }
}

fn logs_follow_prints_lines_written_after_it_started(p: Project) {
    use std::io::{BufRead, BufReader};
    let mut child = p
        .command(&["logs", "--follow", "-n", "0"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    // Keep writing until the follower reports a line: it may start watching after the first.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        if let Some(Ok(line)) = lines.next() {
            let _ = tx.send(line);
        }
    });
    let mut n = 0;
    let line = loop {
        p.ok(&["discover", &format!("finding {n}"), "--agent", "w9"]);
        n += 1;
        if let Ok(line) = rx.recv_timeout(std::time::Duration::from_millis(300)) {
            break line;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "logs --follow printed nothing"
        );
    };
    child.kill().unwrap();
    let _ = child.wait();
    assert!(
        line.contains("w9 |") && line.contains("DISCOVERY: finding"),
        "{line}"
    );
}

#[test]
fn browser_controls_refuse_missing_browsers_and_hostile_urls_clearly() {
    let p = Project::init();
    assert_eq!(
        p.ok(&["browser", "list"]).trim(),
        "No browsers are registered."
    );
    assert_eq!(p.json(&["browser", "list"]), serde_json::json!([]));
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port(); // free once the listener is dropped: nothing answers there
    for args in [
        vec!["browser", "reload", &port.to_string()],
        vec!["browser", "screenshot", &port.to_string()],
    ] {
        let err = p.fails(&args, 1);
        assert!(
            err.contains(&format!("no browser answers on 127.0.0.1:{port}")),
            "{err}"
        );
    }
    let err = p.fails(
        &["--json", "browser", "navigate", "9", "javascript:alert(1)"],
        1,
    );
    let err: serde_json::Value = serde_json::from_str(err.trim()).unwrap();
    assert_eq!(err["error"]["kind"], "invalid_input");
    assert!(!p.coordination().join("screenshots").exists());
}

#[test]
fn setup_claude_merges_is_idempotent_and_removes_byte_for_byte() {
    let p = Project::init();
    // The user's home, with Claude Code's own configuration in it: --approve trusts the
    // project's folder there, and --remove takes it back.
    let home = tempfile::tempdir().unwrap();
    let claude_json = home.path().join(".claude.json");
    let config_before =
        "{\"userID\": \"u\", \"projects\": {\"/elsewhere\": {\"hasTrustDialogAccepted\": true}}}";
    std::fs::write(&claude_json, config_before).unwrap();
    let run = |args: &[&str]| {
        let mut command = p.command(args);
        command
            .env("HOME", home.path())
            .env_remove("CLAUDE_CONFIG_DIR");
        command.output().unwrap()
    };
    let ok = |args: &[&str]| {
        let out = run(args);
        assert!(out.status.success(), "{args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let json = |args: &[&str]| -> serde_json::Value {
        let mut all = vec!["--json"];
        all.extend(args);
        serde_json::from_str(&ok(&all)).unwrap()
    };
    let fails = |args: &[&str], code: i32| {
        let out = run(args);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {out:?}");
        String::from_utf8(out.stderr).unwrap()
    };
    let trusted = || {
        let config: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&claude_json).unwrap()).unwrap();
        let folder = std::fs::canonicalize(p.path()).unwrap();
        config["projects"][folder.display().to_string()]["hasTrustDialogAccepted"] == true
    };
    let settings = p.path().join(".claude/settings.json");
    let mcp = p.path().join(".mcp.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    // The user's own settings, with a hook of theirs, written their way.
    let theirs = "{\"model\":\"opus\",\"hooks\":{\"PostToolUse\":[{\"matcher\":\"Write\",\
                  \"hooks\":[{\"type\":\"command\",\"command\":\"cargo fmt\"}]}]}}";
    std::fs::write(&settings, theirs).unwrap();

    // A dry run shows the changes and makes none.
    let dry = ok(&["setup", "claude", "--approve", "--dry-run"]);
    assert!(dry.contains(".mcp.json: would be created"), "{dry}");
    assert!(dry.contains("baton claude-hook stop"), "{dry}");
    assert!(
        dry.contains(&format!("{}: would be updated", claude_json.display())),
        "{dry}"
    );
    assert!(!mcp.exists());
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), theirs);
    assert!(!trusted(), "a dry run trusts nothing");

    let out = json(&["setup", "claude", "--approve"]);
    assert_eq!(out["files"][0]["action"], "created", "{out}");
    assert_eq!(out["files"][1]["action"], "updated", "{out}");
    assert_eq!(out["files"][2]["action"], "updated", "{out}");
    assert_eq!(
        out["files"][2]["file"],
        claude_json.display().to_string(),
        "{out}"
    );
    assert!(
        trusted(),
        "the project's folder is trusted in Claude Code's configuration"
    );
    let merged: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(merged["model"], "opus");
    let post = merged["hooks"]["PostToolUse"].as_array().unwrap();
    assert_eq!(
        post[0]["hooks"][0]["command"], "cargo fmt",
        "theirs first: {merged}"
    );
    assert_eq!(post[1]["hooks"][0]["command"], "baton claude-hook tool-use");
    assert_eq!(merged["permissions"]["allow"][0], "mcp__baton");
    let server: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&mcp).unwrap()).unwrap();
    assert_eq!(server["mcpServers"]["baton"]["args"][0], "mcp");

    // Twice: no change the second time.
    let (settings_once, mcp_once) = (
        std::fs::read(&settings).unwrap(),
        std::fs::read(&mcp).unwrap(),
    );
    let again = json(&["setup", "claude", "--approve"]);
    assert_eq!(again["files"][0]["action"], "unchanged", "{again}");
    assert_eq!(again["files"][1]["action"], "unchanged", "{again}");
    assert_eq!(again["files"][2]["action"], "unchanged", "{again}");
    assert_eq!(std::fs::read(&settings).unwrap(), settings_once);
    assert_eq!(std::fs::read(&mcp).unwrap(), mcp_once);

    // Removed with nothing else changed: back byte for byte, and the created file gone; the
    // folder's trust as it was (the rest of Claude Code's file as Claude Code left it).
    let removed = ok(&["setup", "claude", "--remove"]);
    assert!(
        removed.contains("put back as it was before setup"),
        "{removed}"
    );
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), theirs);
    assert!(!mcp.exists());
    let config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&claude_json).unwrap()).unwrap();
    let before: serde_json::Value = serde_json::from_str(config_before).unwrap();
    assert_eq!(config, before);

    // Changed by the user after setup: only Baton's entries go.
    ok(&["setup", "claude"]);
    let mut edited: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    edited["theme"] = "dark".into();
    std::fs::write(&settings, edited.to_string()).unwrap();
    let removed = ok(&["setup", "claude", "--remove"]);
    assert!(
        removed.contains(".claude/settings.json: updated"),
        "{removed}"
    );
    let left: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(left["theme"], "dark");
    assert_eq!(left["model"], "opus");
    assert!(!left.to_string().contains("baton claude-hook"), "{left}");
    assert_eq!(
        left["hooks"]["PostToolUse"][0]["hooks"][0]["command"],
        "cargo fmt"
    );

    // A file that is not JSON is refused, and nothing is written.
    std::fs::write(&settings, "{ not json").unwrap();
    let err = fails(&["setup", "claude"], 1);
    assert!(
        err.contains(".claude/settings.json is not valid JSON"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), "{ not json");
    assert!(!mcp.exists(), "nothing written when one file is bad");

    let worker = ok(&["setup", "claude", "--worker", "cc1"]);
    assert!(
        worker.contains("BATON_AGENT=cc1 claude \"$(baton prompt worker cc1)\""),
        "{worker}"
    );
    let err = fails(&["setup", "claude", "--worker", "../x"], 1);
    assert!(err.contains("invalid agent id"), "{err}");
}

fn leader_agents_says_who_is_doing_what(p: Project) {
    p.ok(&["leader", "add-task", "Parse", "-p", "1"]);
    p.ok(&["leader", "add-task", "Lex", "-p", "2"]);
    p.ok(&["leader", "add-task", "Later", "-p", "3"]);
    p.ok(&["worker", "claim", "busy"]);
    p.ok(&["worker", "start", "busy", "task-1"]);
    // A worker that claimed under a lease it let pass.
    p.ok(&["--lease", "1ms", "worker", "claim", "dead"]);
    p.ok(&["worker", "heartbeat", "idle"]);
    let team = p.json(&["leader", "agents"]);
    let row = |name: &str| {
        team["agents"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["name"] == name)
            .unwrap_or_else(|| panic!("no {name} in {team}"))
            .clone()
    };
    assert_eq!(row("busy")["state"], "working", "{team}");
    assert_eq!(row("busy")["holds"][0]["id"], "task-1");
    assert!(
        row("busy")["last_line"]
            .as_str()
            .unwrap()
            .contains("START: task-1")
    );
    assert_eq!(row("dead")["state"], "stale", "{team}");
    assert_eq!(row("idle")["state"], "idle", "{team}");
    assert!(
        team["agents"]
            .as_array()
            .unwrap()
            .iter()
            .all(|a| a["name"] != "leader"),
        "{team}"
    );
    assert!(team["next_change_at"].is_string(), "{team}");
    let text = p.ok(&["leader", "agents"]);
    assert!(text.contains("STALE"), "{text}");
    assert!(text.contains("task-1 Parse"), "{text}");
}

#[test]
fn claude_hooks_never_fail_the_agent_and_log_what_went_wrong() {
    use std::io::Write;
    let p = Project::init();
    let hook = |event: &str, agent: Option<&str>, input: &str| {
        let mut command = p.command(&["claude-hook", event]);
        command
            .env_remove("BATON_AGENT")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        if let Some(agent) = agent {
            command.env("BATON_AGENT", agent);
        }
        let mut child = command.spawn().unwrap();
        // A hook with nothing to do exits without reading its input, as Claude Code allows:
        // the write may then find the pipe closed, and only that is not a failure.
        let written = child.stdin.take().unwrap().write_all(input.as_bytes());
        if let Err(e) = written {
            assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
        }
        child.wait_with_output().unwrap()
    };
    // Not a worker: nothing done, nothing said.
    let out = hook("stop", None, "{}");
    assert!(out.status.success());
    assert!(out.stdout.is_empty());

    // A worker, but the board cannot be read: exit 0, silent, the failure in hooks.log.
    std::fs::write(p.coordination().join("tasks.json"), "{ corrupt").unwrap();
    for event in ["tool-use", "session-start", "stop"] {
        let out = hook(event, Some("cc1"), "not even JSON");
        assert!(out.status.success(), "{event}: {out:?}");
        assert!(out.stdout.is_empty(), "{event}: {out:?}");
        assert!(out.stderr.is_empty(), "{event}: {out:?}");
    }
    let log = std::fs::read_to_string(p.coordination().join("hooks.log")).unwrap();
    assert_eq!(log.lines().count(), 3, "{log}");
    assert!(
        log.contains("cc1 ToolUse") && log.contains("is not valid JSON"),
        "{log}"
    );
}

/// `baton ARGS` outside any project.
fn baton_here(args: &[&str]) -> std::process::Command {
    let mut command = std::process::Command::new(support::baton_bin());
    command.args(args).env_remove("BATON_DIR");
    command
}

/// `baton completions bash`, sourced in bash, completes a command's start; the man pages come
/// from the same definitions as --help, one per command.
#[test]
fn completions_complete_in_bash_and_man_pages_cover_every_command() {
    let script = baton_here(&["completions", "bash"]).output().unwrap();
    assert!(script.status.success(), "{script:?}");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("baton.bash");
    std::fs::write(&file, &script.stdout).unwrap();
    // What bash offers for the words typed so far (the last being completed), in `dir`.
    let complete = |words: &[&str]| -> Vec<String> {
        let line = words.join(" ");
        let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
        let completed = std::process::Command::new("bash")
            .current_dir(dir.path())
            .arg("-c")
            .arg(format!(
                "source '{}' 2>/dev/null; compopt() {{ :; }}; COMP_WORDS=({}); \
                 COMP_CWORD={}; COMP_LINE='{line}'; COMP_POINT={}; _baton baton '{}' '{}'; \
                 printf '%s\\n' \"${{COMPREPLY[@]}}\"",
                file.display(),
                quoted.join(" "),
                words.len() - 1,
                line.len(),
                words[words.len() - 1],
                words[words.len().saturating_sub(2)],
            ))
            .output()
            .unwrap();
        String::from_utf8_lossy(&completed.stdout)
            .lines()
            .filter(|w| !w.is_empty())
            .map(str::to_string)
            .collect()
    };
    assert_eq!(complete(&["baton", "te"]), ["team"]);
    // The commands --help lists, not the hidden ones (an agent's, the package's).
    let commands = complete(&["baton", ""]);
    assert!(commands.iter().any(|c| c == "leader"), "{commands:?}");
    for hidden in [
        "claude-hook",
        "manpages",
        "reference",
        "exit-codes",
        "invoke",
    ] {
        assert!(
            !commands.iter().any(|c| c == hidden),
            "{hidden}: {commands:?}"
        );
    }
    // A profile completes to nothing, not to the folder's files; a folder to its files.
    assert_eq!(
        complete(&["baton", "team", "up", "--agent", ""]),
        Vec::<String>::new()
    );
    assert_eq!(complete(&["baton", "--dir", "baton.b"]), ["baton.bash"]);
    for shell in ["zsh", "fish"] {
        let out = baton_here(&["completions", shell]).output().unwrap();
        assert!(out.status.success() && !out.stdout.is_empty(), "{shell}");
    }
    let bad = baton_here(&["completions", "tcsh"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2), "{bad:?}");

    // Into man1/ of the folder named, where `man` looks.
    let out = baton_here(&["manpages", dir.path().join("man").to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let man = dir.path().join("man/man1");
    for page in [
        "baton.1",
        "baton-team.1",
        "baton-team-up.1",
        "baton-leader-add-task.1",
    ] {
        let text =
            std::fs::read_to_string(man.join(page)).unwrap_or_else(|e| panic!("{page}: {e}"));
        assert!(text.contains(".TH"), "{page}");
    }
    let up = std::fs::read_to_string(man.join("baton-team-up.1")).unwrap();
    assert!(
        up.contains("no\\-sandbox"),
        "the page says what --help says"
    );
    // Its NAME is one line, the command's first sentence (what `man -k` lists).
    let name = up
        .split(".SH NAME\n")
        .nth(1)
        .and_then(|rest| rest.split("\n.SH").next())
        .unwrap();
    assert_eq!(name.lines().count(), 1, "{name}");
    assert!(name.starts_with("baton\\-team\\-up \\- "), "{name}");
    // A --dir of its own would clash with the global one (the project folder).
    let clash = baton_here(&["manpages", "--dir", "x"]).output().unwrap();
    assert_eq!(clash.status.code(), Some(2), "{clash:?}");
}

/// The guide's command reference (docs/guide/src/reference) is what `baton reference` makes
/// from the CLI's own definitions: a flag added, renamed or reworded without the pages being
/// made again fails here (`BATON_UPDATE_REFERENCE=1` writes them). The guide's table of
/// contents lists every page, and every error kind has a row saying what to do.
#[test]
fn the_guide_reference_is_made_from_the_cli() {
    let checked_in = support::source_root().join("docs/guide/src/reference");
    let dir = tempfile::tempdir().unwrap();
    let out = baton_here(&["--json", "reference", "--dir", dir.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let listing: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let made: Vec<String> = listing["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            std::path::Path::new(f.as_str().unwrap())
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    for page in ["index.md", "team.md", "leader.md", "errors.md"] {
        assert!(made.iter().any(|m| m == page), "{page} in {made:?}");
    }
    if std::env::var_os("BATON_UPDATE_REFERENCE").is_some() {
        let _ = std::fs::remove_dir_all(&checked_in);
        std::fs::create_dir_all(&checked_in).unwrap();
        for page in &made {
            std::fs::copy(dir.path().join(page), checked_in.join(page)).unwrap();
        }
    }
    let mut stale = Vec::new();
    for page in &made {
        let now = std::fs::read_to_string(dir.path().join(page)).unwrap();
        if std::fs::read_to_string(checked_in.join(page))
            .ok()
            .as_deref()
            != Some(&now)
        {
            stale.push(page.clone());
        }
    }
    let mut extra: Vec<String> = std::fs::read_dir(&checked_in)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| !made.contains(name))
        .collect();
    stale.append(&mut extra);
    assert!(
        stale.is_empty(),
        "docs/guide/src/reference is stale ({stale:?}): run \
         BATON_UPDATE_REFERENCE=1 cargo test --test cli the_guide_reference"
    );
    let summary = std::fs::read_to_string(checked_in.join("../SUMMARY.md")).unwrap();
    for page in &made {
        assert!(
            summary.contains(&format!("(reference/{page})")),
            "SUMMARY.md lists reference/{page}"
        );
    }
    // Every command a user sees ends its help with an example.
    for page in made
        .iter()
        .filter(|p| *p != "index.md" && *p != "errors.md")
    {
        let text = std::fs::read_to_string(dir.path().join(page)).unwrap();
        assert!(text.contains("Example: `"), "{page} has no example");
    }
    let team = std::fs::read_to_string(dir.path().join("team.md")).unwrap();
    assert!(team.contains("## `baton team up`") && team.contains("`--no-sandbox`"));
    let errors = std::fs::read_to_string(dir.path().join("errors.md")).unwrap();
    for kind in [
        "not_initialized",
        "not_you",
        "sandbox_unavailable",
        "internal",
    ] {
        assert!(errors.contains(&format!("| `{kind}` |")), "{kind}");
    }
    assert!(errors.contains("| `invalid_arguments` | ") && errors.contains(" | 2 |"));
}

/// Colour on a terminal (a pseudo-terminal made by `script`), never into a pipe, with
/// NO_COLOR, or with `--color never`; a transcript goes through the user's pager on a
/// terminal only.
#[test]
fn colour_and_the_pager_are_for_terminals_only() {
    let p = Project::init();
    p.ok(&["leader", "add-task", "Say hello"]);
    let team = p
        .committing(&[
            "team",
            "up",
            "--no-worktree",
            "--exec",
            "echo hello-from-the-agent",
        ])
        .output()
        .unwrap();
    assert!(team.status.success(), "{team:?}");
    let paged = p.path().join("paged.txt");
    let on_terminal = |args: &str, env: &[(&str, &str)]| -> String {
        let mut command = std::process::Command::new("script");
        command
            .args([
                "-qec",
                &format!("{} {args}", support::baton_bin().display()),
                "/dev/null",
            ])
            .current_dir(p.path())
            .env("TERM", "xterm-256color")
            .env_remove("NO_COLOR")
            .env_remove("BATON_DIR")
            .env("PAGER", format!("cat > '{}'", paged.display()));
        for (key, value) in env {
            command.env(key, value);
        }
        let out = command.output().unwrap();
        assert!(out.status.success(), "{args}: {out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let coloured = on_terminal("leader status", &[]);
    assert!(coloured.contains("\u{1b}[32mdone"), "{coloured:?}");
    for (args, env) in [
        ("leader status", &[("NO_COLOR", "1")][..]),
        ("--color never leader status", &[][..]),
    ] {
        let plain = on_terminal(args, env);
        assert!(plain.contains("done"), "{plain:?}");
        assert!(!plain.contains('\u{1b}'), "{args} {env:?}: {plain:?}");
    }
    let piped = p.ok(&["leader", "status"]);
    assert!(
        piped.contains("done") && !piped.contains('\u{1b}'),
        "{piped:?}"
    );
    let forced = p.ok(&["--color", "always", "leader", "status"]);
    assert!(forced.contains("\u{1b}[32mdone"), "{forced:?}");

    // The pager: on a terminal, the transcript went to it, not straight to the screen.
    let shown = on_terminal("team logs task-1", &[]);
    let sent = std::fs::read_to_string(&paged).unwrap_or_default();
    assert!(sent.contains("hello-from-the-agent"), "{sent:?}");
    assert!(!shown.contains("hello-from-the-agent"), "{shown:?}");
    std::fs::remove_file(&paged).unwrap();
    // Into a pipe, or with PAGER=cat, no pager.
    assert!(
        p.ok(&["team", "logs", "task-1"])
            .contains("hello-from-the-agent")
    );
    let direct = on_terminal("team logs task-1", &[("PAGER", "cat")]);
    assert!(direct.contains("hello-from-the-agent"), "{direct:?}");
    assert!(!paged.exists());
}

/// The `files` group does what the earlier top-level spellings do (which still work, hidden).
#[test]
fn files_group_and_the_old_spellings_agree() {
    let p = Project::init();
    let reserved = p.json(&["files", "reserve", "src/api/**", "--agent", "alice"]);
    assert_eq!(reserved["paths"][0], "src/api/**", "{reserved}");
    assert_eq!(p.json(&["files", "list"]), p.json(&["reservations"]));
    let held = p.fails(&["files", "check", "src/api/users.ts", "--agent", "bob"], 7);
    assert_eq!(
        held,
        p.fails(&["check-paths", "src/api/users.ts", "--agent", "bob"], 7)
    );
    p.ok(&["files", "unreserve", "src/api/**", "--agent", "alice"]);
    p.ok(&["check-paths", "src/api/users.ts", "--agent", "bob"]);
    let top = p.ok(&["--help"]);
    assert!(
        top.contains("files") && !top.contains("check-paths"),
        "{top}"
    );
}
