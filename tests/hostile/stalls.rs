//! No agent stalls its worker: an agent that tries to hand back the task its own attempt works
//! (which would start a second attempt in the same worktree while it still runs) is refused and
//! told to end the attempt instead, and one that tries to claim another task (which nobody
//! would then work) is refused too; an agent that reports its task and then sleeps is stopped a
//! grace period after its report, and its task is done. Before, the release was taken and the
//! sleeper held its worker for as long as it slept (an `exec` agent had no time limit).

use super::support;

use support::Project;

support::on_both_stores!(an_agent_neither_hands_back_its_attempts_task_nor_lingers_after_reporting);

fn an_agent_neither_hands_back_its_attempts_task_nor_lingers_after_reporting(p: Project) {
    support::repository(p.path());
    p.ok(&["leader", "add-task", "Linger", "--id", "t1"]);
    p.ok(&[
        "leader",
        "add-task",
        "Later",
        "--id",
        "t2",
        "--depends",
        "t1",
    ]);
    std::fs::create_dir_all(p.coordination().join("team")).unwrap();
    std::fs::write(
        p.coordination().join("team/profiles.toml"),
        "[profiles.exec]\ngrace_after_report_secs = 1\n",
    )
    .unwrap();
    let agent = "[ \"$BATON_TASK_ID\" = t2 ] && exec baton worker complete \"$BATON_AGENT\" t2 ok; \
                 baton worker release \"$BATON_AGENT\" \"$BATON_TASK_ID\" > release.txt 2>&1; \
                 echo \"exit $?\" >> release.txt; \
                 baton worker claim \"$BATON_AGENT\" --task t2 --ignore-reservations > claim.txt 2>&1; \
                 echo \"exit $?\" >> claim.txt; \
                 git add release.txt claim.txt; git commit -qm release; \
                 baton worker complete \"$BATON_AGENT\" \"$BATON_TASK_ID\" 'done, then a nap' && \
                 sleep 600";
    let started = std::time::Instant::now();
    let out = p
        .committing(&["team", "up", "--exec", agent])
        .output()
        .unwrap();
    let (_, stderr) = support::expect_code("team up", out, 0);
    // Stopped after its grace, not after its nap (generous: a loaded machine is slow).
    assert!(
        started.elapsed() < std::time::Duration::from_secs(300),
        "{stderr}"
    );
    let said = support::git(p.path(), &["show", "baton/t1:release.txt"]);
    assert!(said.contains("is the task this attempt works"), "{said}");
    assert!(!said.contains("exit 0"), "{said}");
    let said = support::git(p.path(), &["show", "baton/t1:claim.txt"]);
    assert!(said.contains("claims no other task"), "{said}");
    assert!(!said.contains("exit 0"), "{said}");
    let board = p.tasks_json();
    assert_eq!(board["tasks"][0]["status"], "done", "{board}");
    let logs = p.json(&["team", "logs", "t1"]);
    let text = logs.to_string();
    assert!(
        text.contains("it reported its task") && text.contains("still runs"),
        "{text}"
    );
    assert_eq!(logs["attempts"].as_array().map(Vec::len), Some(1), "{text}");
}

support::on_both_stores!(an_agents_reservations_end_with_its_attempt);

/// A reservation an agent takes (for an hour) ends when its attempt ends: the next task that
/// needs those files finds none held, whichever worker takes it. Before, it outlived the task,
/// held by a worker whose lease its heartbeat kept alive.
fn an_agents_reservations_end_with_its_attempt(p: Project) {
    support::repository(p.path());
    p.ok(&["leader", "add-task", "Reserve", "--id", "t1"]);
    p.ok(&[
        "leader",
        "add-task",
        "Needs src",
        "--id",
        "t2",
        "--files",
        "src/a.rs",
        "--depends",
        "t1",
    ]);
    let agent = "if [ \"$BATON_TASK_ID\" = t1 ]; then baton reserve src/ --agent \"$BATON_AGENT\" --ttl 1h; \
                 else baton --json reservations > held.json && git add held.json && \
                 git commit -qm held; fi";
    let out = p
        .committing(&["team", "up", "--workers", "2", "--exec", agent])
        .output()
        .unwrap();
    support::expect_code("team up", out, 0);
    let held = support::git(p.path(), &["show", "baton/t2:held.json"]);
    let held: serde_json::Value = serde_json::from_str(&held).unwrap();
    // Only t2's own files are held (its task's reservation), not t1's agent's `src/`.
    let outlived = held["reservations"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["paths"].as_array().unwrap().iter().any(|p| p == "src/"));
    assert!(!outlived, "t1's reservation outlived it: {held}");
    let logs = p.json(&["team", "logs", "t1"]).to_string();
    assert!(
        logs.contains("its reservations ended with the attempt: src/"),
        "{logs}"
    );
}
