//! File reservations end to end, on the folder and on PostgreSQL: claims pass over tasks whose
//! files another agent holds and take them once free (waiting claims wake for it); `reserve`,
//! `unreserve`, `reservations` and `check-paths` with their exit codes; reservations ending with
//! the holder's lease; hostile paths refused; eight workers on chains of overlapping files never
//! working on two overlapping tasks at once (checked from the store's own timestamps); and the
//! git pre-commit hook with the real `git`.

use baton_test_support as support;

use std::collections::BTreeMap;

use serde_json::{Value, json};
use support::{Project, task_ids};

support::on_both_stores!(
    claims_pass_over_held_files_and_take_them_once_free,
    reservations_are_made_checked_listed_and_given_back,
    a_reservation_ends_with_its_holders_lease,
    hostile_paths_unknown_tasks_and_agents_are_refused_and_change_nothing,
    agents_reserving_separate_paths_at_once_all_get_their_own,
    eight_workers_never_hold_two_tasks_with_overlapping_files_at_once,
);

fn claims_pass_over_held_files_and_take_them_once_free(p: Project) {
    p.ok(&[
        "leader",
        "add-task",
        "Users API",
        "--id",
        "users",
        "-p",
        "1",
        "--files",
        "src/api/users.ts",
    ]);
    p.ok(&[
        "leader",
        "add-task",
        "Whole API",
        "--id",
        "api",
        "-p",
        "1",
        "--files",
        "src/api/**",
    ]);
    p.ok(&[
        "leader",
        "add-task",
        "Docs",
        "--id",
        "docs",
        "-p",
        "2",
        "--files",
        "docs/guide.md",
    ]);
    assert_eq!(p.json(&["worker", "claim", "w1"])["task"]["id"], "users");
    // `api` is next by priority, but its glob covers w1's file: passed over for `docs`.
    assert_eq!(p.json(&["worker", "claim", "w2"])["task"]["id"], "docs");

    let listed = p.json(&["worker", "list", "--all"]);
    let api = listed["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == "api")
        .unwrap()
        .clone();
    assert_eq!(api["ready"], false);
    assert_eq!(api["waits_on_files"][0]["agent"], "w1");
    assert_eq!(api["waits_on_files"][0]["task"], "users");
    assert_eq!(
        api["waits_on_files"][0]["paths"],
        json!(["src/api/users.ts"])
    );
    let status = p.ok(&["leader", "status"]);
    assert!(status.contains("files held by w1 (users)"), "{status}");
    assert!(task_ids(&p.json(&["worker", "list"])).is_empty());

    // Nothing else to claim: the reason names who holds what.
    let err = p.fails(&["worker", "claim", "w3"], 3);
    assert!(
        err.contains("api waits on files held by w1 (users)"),
        "{err}"
    );
    // Named, it is refused with exit code 7; the user's override takes it anyway.
    let err = p.fails(&["worker", "claim", "w3", "--task", "api"], 7);
    assert!(err.contains("w1 (users) holds src/api/users.ts"), "{err}");

    // A waiting claim is taken the moment the files are free.
    let mut waiter = p.spawn(&["worker", "claim", "w3", "--wait", "--json"]);
    waiter.wait_stderr("waiting");
    p.ok(&["worker", "start", "w1", "users"]);
    p.ok(&["worker", "complete", "w1", "users", "Done"]);
    let (code, stdout, _) = waiter.finish();
    assert_eq!(code, Some(0), "{stdout}");
    let claim: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(claim["task"]["id"], "api");

    // --ignore-reservations takes a task whatever holds its files.
    p.ok(&[
        "leader",
        "add-task",
        "Guide again",
        "--id",
        "guide",
        "--files",
        "docs/",
    ]);
    p.fails(&["worker", "claim", "w4"], 3);
    let taken = p.json(&["worker", "claim", "w4", "--ignore-reservations"]);
    assert_eq!(taken["task"]["id"], "guide");
}

fn reservations_are_made_checked_listed_and_given_back(p: Project) {
    p.ok(&[
        "leader",
        "add-task",
        "Docs",
        "--id",
        "docs",
        "--files",
        "docs/guide.md",
    ]);
    p.ok(&["worker", "claim", "w2"]);
    // A folder holding a held task's file is refused, and nothing is recorded.
    let err = p.fails(&["reserve", "docs/", "--agent", "w3"], 7);
    assert!(err.contains("w2 (docs) holds docs/guide.md"), "{err}");
    let out = p.run(&["reserve", "docs/", "--agent", "w3", "--json"]);
    let body: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(body["error"]["kind"], "paths_held");
    assert_eq!(
        p.json(&["reservations"])["reservations"]
            .as_array()
            .unwrap()
            .len(),
        1
    );

    let made = p.json(&[
        "reserve",
        "./lib//**",
        "--agent",
        "w3",
        "--reason",
        "renaming the module",
        "--ttl",
        "1h",
    ]);
    assert_eq!(made["id"], "r-1");
    assert_eq!(made["paths"], json!(["lib/**"]));
    assert_eq!(made["shared"], false);
    assert!(made["expires_at"].is_string());
    let listed = p.json(&["reservations"]);
    let ids: Vec<&str> = listed["reservations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["task:docs", "r-1"]);
    let text = p.ok(&["reservations"]);
    assert!(text.contains("r-1  w3  lib/**  exclusive"), "{text}");
    assert!(text.contains("renaming the module"), "{text}");

    // check-paths: exit 7 with who holds what; an agent's own files are free to it.
    let held = p.run(&[
        "check-paths",
        "lib/a.rs",
        "README.md",
        "--agent",
        "w1",
        "--json",
    ]);
    assert_eq!(held.status.code(), Some(7));
    let held: Value = serde_json::from_slice(&held.stdout).unwrap();
    assert_eq!(held["free"], false);
    assert_eq!(held["held"][0]["agent"], "w3");
    assert_eq!(held["held"][0]["paths"], json!(["lib/**"]));
    p.ok(&["check-paths", "lib/a.rs", "--agent", "w3"]);
    p.ok(&["check-paths", "README.md", "src/main.rs"]);

    // Shared reservations: two readers at once, but not a reader of what w3 holds.
    p.ok(&["reserve", "spec/api.md", "--agent", "r1", "--shared"]);
    p.ok(&["reserve", "spec/", "--agent", "r2", "--shared"]);
    p.fails(&["reserve", "lib/x.rs", "--agent", "r1", "--shared"], 7);
    // A shared hold does not stop a commit check.
    p.ok(&["check-paths", "spec/api.md", "--agent", "w1"]);
    // ...but it does stop an exclusive reservation.
    p.fails(&["reserve", "spec/**", "--agent", "w1"], 7);

    // Given back: the files are free again; giving back twice gives back nothing.
    let back = p.json(&["unreserve", "lib/**", "--agent", "w3"]);
    assert_eq!(back["released"][0]["id"], "r-1");
    assert_eq!(
        p.json(&["unreserve", "--agent", "w3"])["released"],
        json!([])
    );
    p.ok(&["check-paths", "lib/a.rs", "--agent", "w1"]);
    // The holders' logs say what they did.
    let log = p.ok(&["logs", "w3"]);
    assert!(log.contains("RESERVE: r-1: lib/** (until"), "{log}");
    assert!(log.contains("UNRESERVE: r-1"), "{log}");
}

fn a_reservation_ends_with_its_holders_lease(p: Project) {
    p.ok(&["reserve", "src/", "--agent", "gone"]);
    assert_eq!(
        p.json(&["reservations"])["reservations"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    // Seen with a one-second lease, the holder (silent since) is gone after a second.
    support::eventually("the reservation to lapse with its holder's lease", || {
        p.json(&["--lease", "1s", "reservations"])["reservations"]
            .as_array()
            .unwrap()
            .is_empty()
    });
    p.ok(&["--lease", "1s", "reserve", "src/main.rs", "--agent", "next"]);
}

fn hostile_paths_unknown_tasks_and_agents_are_refused_and_change_nothing(p: Project) {
    p.ok(&["leader", "add-task", "Mine", "--id", "mine"]);
    for hostile in [
        "../outside.rs",
        "/etc/passwd",
        "src/../../x",
        "**/../**",
        "src\\api",
        "a\u{1b}[2Jb",
        "src/[",
    ] {
        let err = p.fails(&["reserve", hostile, "--agent", "w1"], 1);
        assert!(err.contains("paths"), "{hostile:?}: {err}");
    }
    let long = "x".repeat(600);
    p.fails(&["reserve", &long, "--agent", "w1"], 1);
    let err = p.fails(&["reserve", "a.rs", "--agent", "w1", "--task", "nope"], 1);
    assert!(err.contains("nope"), "{err}");
    let err = p.fails(&["reserve", "a.rs", "--agent", "w1", "--task", "mine"], 1);
    assert!(err.contains("not held by w1"), "{err}");
    p.fails(&["reserve", "a.rs", "--agent", "../w"], 1);
    p.fails(&["check-paths", "../x", "--agent", "w1"], 1);
    assert!(
        p.json(&["reservations"])["reservations"]
            .as_array()
            .unwrap()
            .is_empty()
    );
}

/// Eight agents reserving paths that cannot overlap, all at once: none waits for another's
/// paths, and each reservation gets a number of its own.
fn agents_reserving_separate_paths_at_once_all_get_their_own(p: Project) {
    let ids: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|i| {
                let p = &p;
                s.spawn(move || {
                    let made = p.json(&[
                        "reserve",
                        &format!("lib/m{i}/"),
                        "--agent",
                        &format!("a{i}"),
                    ]);
                    made["id"].as_str().unwrap().to_string()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut unique = ids.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), 8, "{ids:?}");
    assert_eq!(
        p.json(&["reservations"])["reservations"]
            .as_array()
            .unwrap()
            .len(),
        8
    );
}

/// Tasks in a chain where each shares a file with the next (`f{i}` and `f{i+1}`), worked by
/// eight worker loops: from the store's own timestamps, no two overlapping tasks were held at
/// once, and every task is done.
fn eight_workers_never_hold_two_tasks_with_overlapping_files_at_once(p: Project) {
    const TASKS: usize = 24;
    for i in 0..TASKS {
        let files = format!("src/f{i}.rs,src/f{}.rs", i + 1);
        p.ok(&[
            "leader",
            "add-task",
            &format!("part {i}"),
            "--id",
            &format!("t{i}"),
            "--files",
            &files,
        ]);
    }
    support::run_together((0..8).map(|w| {
        p.command(&[
            "worker",
            "loop",
            &format!("w{w}"),
            "--exec",
            "sleep 0.05",
            "--quiet",
        ])
    }));
    let board = p.tasks_json();
    let tasks = board["tasks"].as_array().unwrap();
    assert!(tasks.iter().all(|t| t["status"] == "done"), "{board}");
    let held: BTreeMap<usize, (String, String)> = tasks
        .iter()
        .map(|t| {
            let i: usize = t["id"].as_str().unwrap()[1..].parse().unwrap();
            let at = |field: &str| t[field].as_str().unwrap().to_string();
            (i, (at("claimed_at"), at("completed_at")))
        })
        .collect();
    for i in 0..TASKS - 1 {
        let (a, b) = (&held[&i], &held[&(i + 1)]);
        assert!(
            a.1 <= b.0 || b.1 <= a.0,
            "t{i} {a:?} and t{} {b:?} share a file and were held at once",
            i + 1
        );
    }
}

#[test]
fn the_pre_commit_hook_refuses_commits_touching_files_another_agent_holds() {
    let p = Project::init();
    // git as an agent (its name in BATON_AGENT, as `worker loop` sets it), or as nobody.
    let git_as = |agent: Option<&str>, args: &[&str]| {
        let mut git = support::git_command(p.path(), args);
        git.env("BATON_BIN", support::baton_bin())
            .env_remove("BATON_AGENT");
        if let Some(agent) = agent {
            git.env("BATON_AGENT", agent);
        }
        git.output().unwrap()
    };
    let git = |args: &[&str]| git_as(None, args);
    assert!(git(&["init", "-q"]).status.success());
    // A hook the user had is kept, and runs first.
    let hooks = p.path().join(".git/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    std::fs::write(
        hooks.join("pre-commit"),
        "#!/bin/sh\necho user-hook-ran >> \"$(git rev-parse --git-dir)/ran\"\n",
    )
    .unwrap();
    std::process::Command::new("chmod")
        .args(["+x", hooks.join("pre-commit").to_str().unwrap()])
        .status()
        .unwrap();
    let installed = p.ok(&["hooks", "install"]);
    assert!(installed.contains("pre-commit.before-baton"), "{installed}");
    assert!(hooks.join("pre-commit.before-baton").is_file());
    // Installing again keeps the chain as it is.
    p.ok(&["hooks", "install"]);

    p.ok(&["reserve", "src/api/", "--agent", "other"]);
    std::fs::create_dir_all(p.path().join("src/api")).unwrap();
    std::fs::write(p.path().join("src/api/users.ts"), "export {}\n").unwrap();
    std::fs::write(p.path().join("README.md"), "# x\n").unwrap();

    // A commit touching the held file is refused, naming the holder and the paths.
    assert!(
        git(&["add", "src/api/users.ts", "README.md"])
            .status
            .success()
    );
    let refused = git_as(Some("me"), &["commit", "-q", "-m", "touch users"]);
    assert!(!refused.status.success());
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&refused.stdout),
        String::from_utf8_lossy(&refused.stderr)
    );
    assert!(said.contains("other holds src/api/"), "{said}");
    assert!(said.contains("commit refused"), "{said}");
    assert!(
        std::fs::read_to_string(p.path().join(".git/ran"))
            .unwrap()
            .contains("user-hook-ran"),
        "the user's hook ran first"
    );
    assert!(
        !git(&["log", "-1"]).status.success(),
        "nothing was committed"
    );

    // --no-verify works, as users expect of git.
    assert!(
        git(&["commit", "-q", "--no-verify", "-m", "anyway"])
            .status
            .success()
    );
    // The holder itself may commit its files; once given back, anyone may.
    std::fs::write(p.path().join("src/api/users.ts"), "export const a = 1;\n").unwrap();
    git(&["add", "src/api/users.ts"]);
    let as_holder = git_as(Some("other"), &["commit", "-q", "-m", "holder"]);
    assert!(as_holder.status.success(), "{as_holder:?}");
    p.ok(&["unreserve", "--agent", "other"]);
    std::fs::write(p.path().join("src/api/users.ts"), "export const a = 2;\n").unwrap();
    git(&["add", "src/api/users.ts"]);
    assert!(git(&["commit", "-q", "-m", "free now"]).status.success());
}

/// The hook runs the `baton` that installed it, so a commit from a shell (or a GUI git client)
/// without `baton` on PATH is still checked; with that binary gone and none on PATH, the
/// commit is refused with what to do, not a bare "not found".
#[test]
fn the_pre_commit_hook_finds_its_baton_without_path_and_says_what_to_do_when_it_is_gone() {
    let p = Project::init();
    let bin = tempfile::tempdir().unwrap();
    let copy = bin.path().join("baton");
    std::fs::copy(support::baton_bin(), &copy).unwrap();
    let git = |args: &[&str]| {
        let mut git = support::git_command(p.path(), args);
        // git itself, and nothing named baton, on PATH.
        git.env("PATH", "/usr/bin:/bin")
            .env_remove("BATON_BIN")
            .env("BATON_AGENT", "me");
        git.output().unwrap()
    };
    assert!(git(&["init", "-q"]).status.success());
    let installed = std::process::Command::new(&copy)
        .args(["hooks", "install"])
        .current_dir(p.path())
        .env_remove("BATON_DIR")
        .output()
        .unwrap();
    assert!(installed.status.success(), "{installed:?}");
    p.ok(&["reserve", "held.txt", "--agent", "other"]);
    std::fs::write(p.path().join("held.txt"), "x\n").unwrap();
    assert!(git(&["add", "held.txt"]).status.success());
    let refused = git(&["commit", "-q", "-m", "touch held"]);
    let said = String::from_utf8_lossy(&refused.stderr).to_string();
    assert!(!refused.status.success());
    assert!(
        said.contains("other holds held.txt"),
        "checked without PATH: {said}"
    );

    std::fs::remove_file(&copy).unwrap();
    let refused = git(&["commit", "-q", "-m", "touch held"]);
    let said = String::from_utf8_lossy(&refused.stderr).to_string();
    assert!(!refused.status.success());
    assert!(said.contains("cannot find baton"), "{said}");
    assert!(said.contains(copy.to_str().unwrap()), "{said}");
    assert!(said.contains("--no-verify"), "{said}");
}
