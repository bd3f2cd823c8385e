//! Baton runs the team (`baton team`), with the `exec` profile so no agent program is needed:
//! a team drains a project in worktrees on both stores, each task once, with transcripts, each
//! dependent starting from its dependencies' work; a
//! SIGKILLed agent is restarted in the same worktree; a SIGKILLed supervisor's tasks are taken
//! up by `team up` again; a never-ending agent is stopped at its budget; a second `team up`
//! resizes the running team and `team stop` ends it, gracefully or now; bad input is refused
//! before any claim. The real Claude Code team is in `team_claude.rs`.

use baton_test_support as support;

use serde_json::Value;
use support::{Background, Project, eventually};

support::on_both_stores!(an_exec_team_drains_a_project_in_worktrees_each_task_once);

/// `baton ARGS` in the background, with the git identity its agents commit as.
fn spawn(p: &Project, args: &[&str]) -> Background {
    Background::from_command(p.committing(args))
}

fn run_ok(p: &Project, args: &[&str]) -> String {
    let out = p.committing(args).output().unwrap();
    support::expect_code(&format!("baton {args:?}"), out, 0).0
}

fn task<'a>(board: &'a Value, id: &str) -> &'a Value {
    board["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == id)
        .unwrap_or_else(|| panic!("no {id} in {board}"))
}

fn transcript(p: &Project, task: &str, attempt: u32) -> Value {
    p.json(&["team", "logs", task, "--attempt", &attempt.to_string()])
}

fn event_texts(t: &Value) -> Vec<String> {
    t["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            e["text"]
                .as_str()
                .or(e["message"].as_str())
                .map(str::to_string)
                .unwrap_or_else(|| e["kind"].as_str().unwrap().to_string())
        })
        .collect()
}

/// The worker record of `name` in `team status --json`.
fn worker(p: &Project, name: &str) -> Option<Value> {
    p.json(&["team", "status"])["workers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["name"] == name)
        .cloned()
}

/// Waits until worker `name` runs an agent on a task; returns the agent's pid.
fn working_pid(p: &Project, name: &str) -> u32 {
    let mut pid = 0;
    eventually(&format!("{name} works on a task"), || {
        match worker(p, name) {
            Some(w) if w["state"] == "working" => {
                pid = w["pid"].as_u64().unwrap() as u32;
                true
            }
            _ => false,
        }
    });
    pid
}

/// Processes whose command line is `text` (arguments joined by spaces).
fn processes_with(text: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|c| String::from_utf8_lossy(&c).replace('\0', " ").trim() == text)
                .unwrap_or(false)
        })
        .collect()
}

fn an_exec_team_drains_a_project_in_worktrees_each_task_once(p: Project) {
    support::repository(p.path());
    p.ok(&["leader", "add-task", "Schema", "--files", "schema.txt"]);
    p.ok(&["leader", "add-task", "Parser", "--files", "parser.txt"]);
    p.ok(&["leader", "add-task", "API", "--depends", "task-1,task-2"]);
    p.ok(&["leader", "add-task", "Docs"]);
    p.ok(&["leader", "add-task", "CLI", "--depends", "task-3"]);
    p.ok(&[
        "leader",
        "add-task",
        "Release",
        "--depends",
        "task-4,task-5",
    ]);
    // Each agent fails unless its dependencies' work is in its worktree (transitively: task-6
    // needs task-1's file too), whether or not the lead merged it.
    let command = "for d in $BATON_TASK_DEPENDENCIES $(cat *.needs 2>/dev/null); do \
                   test -f \"$d.txt\" || { echo \"$d's work is missing\" >&2; exit 1; }; done; \
                   echo \"work of $BATON_TASK_ID\" > \"$BATON_TASK_ID.txt\" && \
                   echo \"$BATON_TASK_DEPENDENCIES\" > \"$BATON_TASK_ID.needs\" && git add -A && \
                   git commit -qm \"$BATON_TASK_ID\" && echo \"did $BATON_TASK_ID\"";
    let out = run_ok(
        &p,
        &["team", "up", "--workers", "3", "--exec", command, "--json"],
    );
    let report: Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    let mut done: Vec<String> = report["workers"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|w| w["completed"].as_array().unwrap().clone())
        .map(|id| id.as_str().unwrap().to_string())
        .collect();
    done.sort();
    assert_eq!(
        done,
        ["task-1", "task-2", "task-3", "task-4", "task-5", "task-6"]
    );
    // Progress came as JSON lines before the report: each task started once.
    let started = out
        .lines()
        .filter(|l| l.contains("\"event\":\"started\""))
        .count();
    assert_eq!(started, 6, "{out}");

    let board = p.tasks_json();
    for i in 1..=6 {
        let t = task(&board, &format!("task-{i}"));
        assert_eq!(t["status"], "done", "{t}");
        assert_eq!(t["attempts"], 1, "claimed once: {t}");
        let branch = &t["result"]["branch"];
        assert_eq!(branch["name"], format!("baton/task-{i}"), "{t}");
        // Its own commit only, not its dependencies' it was started with.
        assert_eq!(branch["commits"].as_array().unwrap().len(), 1, "{t}");
        assert_eq!(branch["commits"][0]["subject"], format!("task-{i}"), "{t}");
        let log = transcript(&p, &format!("task-{i}"), 1);
        assert_eq!(log["attempt"]["end"], "completed", "{log}");
        let texts = event_texts(&log);
        assert!(texts.contains(&format!("did task-{i}")), "{texts:?}");
        assert_eq!(log["events"][0]["kind"], "started");
        assert_eq!(log["events"].as_array().unwrap().last().unwrap()["code"], 0);
    }
    let status = p.json(&["team", "status"]);
    let workers = status["workers"].as_array().unwrap();
    assert_eq!(workers.len(), 3, "{status}");
    assert!(workers.iter().all(|w| w["state"] == "stopped"), "{status}");
    assert_eq!(status["spend"]["by_task"].as_object().unwrap().len(), 6);

    // Nothing reached the lead's branch by itself.
    assert!(!p.path().join("task-1.txt").exists());
    run_ok(&p, &["leader", "merge", "--all"]);
    for i in 1..=6 {
        assert!(p.path().join(format!("task-{i}.txt")).is_file());
    }
    // Each task's commit landed once, however many dependents carried it.
    let log = support::git(p.path(), &["log", "--format=%s"]);
    for i in 1..=6 {
        let id = format!("task-{i}");
        assert_eq!(log.lines().filter(|s| *s == id).count(), 1, "{log}");
    }
}

#[test]
fn a_sigkilled_agent_is_restarted_in_its_worktree_and_both_transcripts_are_kept() {
    let p = Project::init();
    support::repository(p.path());
    std::fs::create_dir_all(p.coordination().join("team")).unwrap();
    std::fs::write(
        p.coordination().join("team/profiles.toml"),
        "[profiles.exec]\nbackoff_secs = 0.1\n",
    )
    .unwrap();
    p.ok(&["leader", "add-task", "Long work"]);
    // The first attempt leaves a mark in its worktree and waits; the second finds the mark.
    let command = "if [ -f .begun ]; then echo \"going on from the mark\"; exit 0; fi; \
                   touch .begun; echo \"first attempt waits\"; exec sleep 611";
    let team = spawn(&p, &["team", "up", "--exec", command]);
    let pid = working_pid(&p, "ex1");
    eventually("the first attempt printed", || {
        event_texts(&transcript(&p, "task-1", 1)).contains(&"first attempt waits".to_string())
    });
    support::kill(pid, "KILL");
    let (code, _, stderr) = team.finish();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("restarting task-1"), "{stderr}");

    let board = p.tasks_json();
    let t = task(&board, "task-1");
    assert_eq!(t["status"], "done", "{t}");
    assert_eq!(t["claimed_by"], "ex1");
    assert_eq!(t["attempts"], 1, "claimed once, worked twice: {t}");
    let first = transcript(&p, "task-1", 1);
    assert_eq!(first["attempt"]["end"], "crashed", "{first}");
    assert!(
        first["attempt"]["reason"]
            .as_str()
            .unwrap()
            .contains("signal 9"),
        "{first}"
    );
    let second = transcript(&p, "task-1", 2);
    assert_eq!(second["attempt"]["end"], "completed", "{second}");
    assert!(event_texts(&second).contains(&"going on from the mark".to_string()));
    assert_eq!(second["attempts"], serde_json::json!([1, 2]));
    let workdir = |t: &Value| t["events"][0]["workdir"].as_str().unwrap().to_string();
    assert_eq!(workdir(&first), workdir(&second), "the same worktree");
    assert!(
        processes_with("sleep 611").is_empty(),
        "nothing left running"
    );
}

#[test]
fn team_up_again_takes_up_what_a_sigkilled_supervisor_held() {
    let p = Project::init();
    support::repository(p.path());
    p.ok(&["leader", "add-task", "Held through a crash"]);
    p.ok(&["leader", "add-task", "Next"]);
    // Task 1's first attempt waits, with a child of its own that ignores SIGTERM; everything
    // else finishes.
    let command = "if [ -f .begun ] || [ \"$BATON_TASK_ID\" != task-1 ]; then \
                   echo \"taken up again\"; exit 0; fi; touch .begun; \
                   sh -c \"trap '' TERM; sleep 612\" & wait";
    let team = spawn(&p, &["team", "up", "--exec", command]);
    working_pid(&p, "ex1");
    eventually("the agent's child runs", || {
        !processes_with("sleep 612").is_empty()
    });
    support::kill(team.pid(), "KILL");
    drop(team);
    // The agent died with its supervisor, and so did its child (its group, killed by the
    // supervisor's warden), before anything else ran.
    eventually("the killed team's agent and its child are gone", || {
        processes_with("sleep 612").is_empty()
    });
    // The lease is still ex1's: team up again takes the task up.
    run_ok(&p, &["team", "up", "--exec", command]);
    let board = p.tasks_json();
    for id in ["task-1", "task-2"] {
        let t = task(&board, id);
        assert_eq!(t["status"], "done", "{t}");
        assert_eq!(t["attempts"], 1, "claimed once: {t}");
    }
    let first = transcript(&p, "task-1", 1);
    assert_eq!(first["attempt"]["end"], "stopped", "{first}");
    assert_eq!(first["attempt"]["reason"], "its supervisor stopped");
    let second = transcript(&p, "task-1", 2);
    assert!(event_texts(&second).contains(&"taken up again".to_string()));
    assert!(
        processes_with("sleep 612").is_empty(),
        "the killed team's agent is gone"
    );
}

#[test]
fn an_agent_that_never_ends_is_stopped_at_its_budget_and_the_task_failed() {
    let p = Project::init();
    p.ok(&["leader", "add-task", "Forever"]);
    let args = [
        "--json",
        "team",
        "up",
        "--exec",
        "echo working; exec sleep 613",
        "--max-minutes",
        "0.02",
    ];
    let (out, _) = support::expect_code("team up", p.run(&args), 10);
    let out: Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(out["workers"][0]["failed"], serde_json::json!(["task-1"]));
    let failed = &out["verdict"]["failed"][0];
    assert_eq!(failed["task"], "task-1", "{out}");
    assert!(
        failed["why"].as_str().unwrap().starts_with("budget: "),
        "{out}"
    );
    assert_eq!(out["verdict"]["all_done"], false);
    let t = task(&p.tasks_json(), "task-1").clone();
    assert_eq!(t["status"], "failed", "{t}");
    let reason = t["result"]["error"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(reason.starts_with("budget: the attempt ran"), "{t}");
    let log = transcript(&p, "task-1", 1);
    assert_eq!(log["attempt"]["end"], "budget");
    assert!(processes_with("sleep 613").is_empty());
}

#[test]
fn a_second_team_up_resizes_the_running_team_and_team_stop_ends_it() {
    let p = Project::init();
    for i in 1..=4 {
        p.ok(&["leader", "add-task", &format!("Task {i}")]);
    }
    let command = "echo \"on $BATON_TASK_ID\"; exec sleep 614";
    let up = p.json(&["team", "up", "--detach", "--exec", command]);
    let pid = up["pid"].as_u64().unwrap();
    assert_eq!(up["names"], serde_json::json!(["ex1"]));
    working_pid(&p, "ex1");
    let resized = p.json(&["team", "up", "--workers", "2", "--exec", command]);
    assert_eq!(resized["pid"].as_u64(), Some(pid), "the same supervisor");
    assert_eq!(resized["names"], serde_json::json!(["ex1", "ex2"]));
    working_pid(&p, "ex2");
    // Naming no agent is about the team that runs: it is resized (it was refused as not a
    // claude team).
    let again = p.json(&["team", "up", "--workers", "3"]);
    assert_eq!(again["pid"].as_u64(), Some(pid), "{again}");
    assert_eq!(again["names"], serde_json::json!(["ex1", "ex2", "ex3"]));
    working_pid(&p, "ex3");
    p.json(&["team", "stop", "ex3", "--now"]);
    let other = p.fails(&["team", "up", "--agent", "claude"], 1);
    assert!(other.contains("runs already"), "{other}");
    // Another command, or other limits, are refused, not silently ignored.
    let other = p.fails(&["team", "up", "-w", "3", "--exec", "echo another"], 1);
    assert!(other.contains("with another --exec"), "{other}");
    let other = p.fails(&["team", "up", "--exec", command, "--max-minutes", "5"], 1);
    assert!(other.contains("with another --max-minutes"), "{other}");

    let stopped = p.json(&["team", "stop", "ex2", "--now"]);
    assert_eq!(stopped["workers"], serde_json::json!(["ex2"]));
    let w = worker(&p, "ex2").unwrap();
    assert_eq!(w["state"], "stopped", "{w}");
    let board = p.tasks_json();
    let held: Vec<&Value> = board["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["claimed_by"].is_string())
        .collect();
    assert_eq!(held.len(), 1, "only ex1 holds a task: {board}");

    p.json(&["team", "stop", "--now"]);
    assert_eq!(p.json(&["team", "status"])["supervisor"], Value::Null);
    let board = p.tasks_json();
    assert!(
        board["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["status"] == "available"),
        "every task handed back: {board}"
    );
    assert!(processes_with("sleep 614").is_empty());
    let none = p.fails(&["team", "stop"], 1);
    assert!(none.contains("no team runs"), "{none}");
}

#[test]
fn a_graceful_stop_lets_the_agent_finish_its_task_and_claims_nothing_more() {
    let p = Project::init();
    p.ok(&["leader", "add-task", "First"]);
    p.ok(&["leader", "add-task", "Second"]);
    let go = p.path().join("go");
    let command = format!(
        "while [ ! -f '{}' ]; do sleep 0.05; done; echo finished",
        go.display()
    );
    let team = spawn(&p, &["team", "up", "--exec", &command]);
    working_pid(&p, "ex1");
    p.json(&["team", "stop"]);
    std::fs::write(&go, "").unwrap();
    let (code, stdout, stderr) = team.finish();
    // Stopped with a task left: the verdict says which, and the exit status that not all is done.
    assert_eq!(code, Some(10), "{stderr}");
    assert!(
        stdout.contains("Not every task is done: 1 done, 0 failed, 0 handed back, 1 not done.")
            && stdout.contains("… task-2: ready, not started"),
        "{stdout}"
    );
    let board = p.tasks_json();
    assert_eq!(task(&board, "task-1")["status"], "done");
    assert_eq!(task(&board, "task-2")["status"], "available", "{board}");
}

/// The circuit breaker: a typo in `--exec` does not fail the queue. Each worker stops after
/// three attempts that could not start, every task is ready again, untouched, and the cause is
/// printed once.
#[test]
fn a_typo_in_the_command_stops_the_team_and_burns_no_task() {
    let p = Project::init();
    for i in 1..=6 {
        p.ok(&["leader", "add-task", &format!("Task {i}")]);
    }
    let out = p.run(&[
        "team",
        "up",
        "--workers",
        "2",
        "--exec",
        "claud -p \"$BATON_TASK_ID\"",
    ]);
    let (stdout, stderr) = support::expect_code("team up", out, 11);
    let said = format!("{stderr}{stdout}");
    assert_eq!(said.matches("claud: not found").count(), 1, "{said}");
    assert!(
        stdout.contains("agents could not start, so workers stopped"),
        "{stdout}"
    );
    let board = p.tasks_json();
    for t in board["tasks"].as_array().unwrap() {
        assert_eq!(t["status"], "available", "{t}");
    }
    let status = p.json(&["team", "status"]);
    for w in status["workers"].as_array().unwrap() {
        assert_eq!(w["state"], "stopped", "{status}");
        let said = w["last_event"].as_str().unwrap();
        assert!(said.contains("could not start"), "{said}");
    }
    // Three failed starts for each worker, at the task it claimed each time: kept as that
    // task's attempt 1, not started, whose transcript holds each start and why it failed.
    let mut failed_starts = Vec::new();
    for i in 1..=6 {
        let task = format!("task-{i}");
        let out = p.run(&["--json", "team", "logs", &task, "--attempt", "1"]);
        if !out.status.success() {
            failed_starts.push(0);
            continue;
        }
        let log: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(log["attempt"]["end"], "not_started", "{log}");
        let starts = log["events"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["kind"] == "started")
            .count();
        failed_starts.push(starts);
        let second = p.run(&["team", "logs", &task, "--attempt", "2"]);
        assert!(
            !second.status.success(),
            "{task}: a failed start is no attempt"
        );
    }
    assert_eq!(failed_starts.iter().sum::<usize>(), 6, "{failed_starts:?}");

    // Fixed, the same tasks run: nothing was used up.
    run_ok(&p, &["team", "up", "--workers", "2", "--exec", "true"]);
    let board = p.tasks_json();
    assert!(
        board["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["status"] == "done")
    );
    // A start that failed was no attempt: each task's first real run is its attempt 1, whose
    // transcript still says why the starts before it failed.
    for (i, failed) in (1..=6).zip(failed_starts) {
        let task = format!("task-{i}");
        let log = p.json(&["team", "logs", &task, "--attempt", "1"]);
        assert_eq!(log["attempt"]["end"], "completed", "{log}");
        let events = log["events"].as_array().unwrap();
        let starts = events.iter().filter(|e| e["kind"] == "started").count();
        assert_eq!(starts, failed + 1, "the failed starts and the run: {log}");
        let seqs: Vec<u64> = events.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
        assert!(
            seqs.windows(2).all(|w| w[0] < w[1]),
            "numbered on: {seqs:?}"
        );
        let second = p.run(&["team", "logs", &task, "--attempt", "2"]);
        assert!(!second.status.success(), "{task} has no attempt 2");
    }
}

/// Waiting said out loud: a worker with nothing to claim says what it waits for (another's
/// lease, until when) in `team status`, and says so when it takes the task over once the lease
/// ran out. On a terminal `team up` keeps one live status line; piped, no escape code.
#[test]
fn a_waiting_worker_says_what_it_waits_for_and_a_takeover_says_so() {
    let p = Project::init();
    p.ok(&["leader", "add-task", "Held elsewhere"]);
    p.ok(&["leader", "add-task", "After it", "--depends", "task-1"]);
    // Another agent holds task-1 under a 3 s lease and goes quiet.
    p.ok(&["--lease", "3s", "worker", "claim", "elsewhere"]);
    let team = spawn(&p, &["--lease", "3s", "team", "up", "--exec", "true"]);
    eventually("ex1 says what it waits for", || {
        worker(&p, "ex1").is_some_and(|w| {
            w["last_event"]
                .as_str()
                .is_some_and(|e| e.starts_with("waiting: task-1 held by elsewhere, lease for"))
        })
    });
    let said = worker(&p, "ex1").unwrap()["last_event"].clone();
    assert!(
        said.as_str().unwrap().contains("task-2 waits for task-1"),
        "{said}"
    );
    let (code, _, stderr) = team.finish();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("ex1: took task-1 over from elsewhere, whose lease had expired"),
        "{stderr}"
    );
    assert!(
        !stderr.contains('\u{1b}'),
        "no escape codes into a pipe: {stderr:?}"
    );

    // On a terminal (a pseudo-terminal made by util-linux's `script`): the live line.
    let again = Project::init();
    again.ok(&["leader", "add-task", "First"]);
    again.ok(&["leader", "add-task", "Second", "--depends", "task-1"]);
    // The line is drawn again after each progress line: while task-1's agent runs, it says so.
    let team_up = format!(
        "{} team up --exec 'sleep 2'",
        support::baton_bin().display()
    );
    let out = again
        .command_of("script", &["-qec", &team_up, "/dev/null"])
        .output()
        .unwrap();
    let screen = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{screen}");
    assert!(
        screen.contains("0 done · 1 running · 0 ready · 1 waiting (task-2 waits for task-1)"),
        "{screen}"
    );
}

/// `team logs` at its event limit says how many more there are and still shows the end.
#[test]
fn team_logs_at_its_limit_says_how_many_more_and_shows_the_end() {
    let p = Project::init();
    p.ok(&["leader", "add-task", "Chatty"]);
    run_ok(&p, &["team", "up", "--exec", "seq 1 60; exit 0"]);
    let said = p.ok(&["team", "logs", "task-1", "--limit", "10"]);
    let lines: Vec<&str> = said.lines().collect();
    assert!(
        said.contains("more event(s) (--after 10 shows them); its last"),
        "{said}"
    );
    assert!(
        lines.last().unwrap().ends_with("exited with status 0"),
        "{said}"
    );
    let json = p.json(&["team", "logs", "task-1", "--limit", "10"]);
    assert_eq!(json["events"].as_array().unwrap().len(), 10, "{json}");
    let total = json["attempt"]["events"].as_u64().unwrap();
    assert_eq!(json["more"].as_u64().unwrap(), total - 10, "{json}");
    let tail = json["tail"].as_array().unwrap();
    assert_eq!(tail.last().unwrap()["seq"].as_u64(), Some(total), "{json}");
    // Read whole, nothing is left out.
    let whole = p.json(&["team", "logs", "task-1"]);
    assert_eq!(whole["more"], 0);
    assert!(whole["tail"].as_array().unwrap().is_empty());
}

/// With nothing to do, `team up` says so and how to add work, and starts no worker.
#[test]
fn team_up_with_nothing_to_do_says_so() {
    let p = Project::init();
    let said = p.run(&["team", "up", "--exec", "true"]);
    let (out, _) = support::expect_code("team up", said, 0);
    assert!(
        out.contains(
            "Nothing to do: no task is waiting to be worked. Add one with `baton leader add-task"
        ),
        "{out}"
    );
    p.ok(&["leader", "add-task", "Doomed"]);
    p.ok(&["leader", "add-task", "Behind it", "--depends", "task-1"]);
    p.ok(&["leader", "cancel", "task-1"]);
    let out = p.ok(&["team", "up", "--exec", "true"]);
    assert!(out.contains("every task left can never start (task-2 can never start: it depends on task-1, which is cancelled"), "{out}");
    assert!(
        p.json(&["team", "status"])["workers"]
            .as_array()
            .unwrap()
            .is_empty()
    );
}

#[test]
fn bad_input_is_refused_before_any_claim() {
    let p = Project::init();
    p.ok(&["leader", "add-task", "Untouched"]);
    let unknown = p.fails(&["team", "up", "--agent", "cluade"], 1);
    assert!(unknown.contains("no agent profile \"cluade\""), "{unknown}");
    assert!(
        unknown.contains("known: claude, codex, exec, gemini"),
        "{unknown}"
    );

    std::fs::create_dir_all(p.coordination().join("team")).unwrap();
    let profiles = p.coordination().join("team/profiles.toml");
    std::fs::write(
        &profiles,
        "[profiles.claude]\ncommand = \"/nonexistent/claude\"\n",
    )
    .unwrap();
    let missing = p.fails(&["team", "up"], 1);
    assert!(
        missing.contains("npm install -g @anthropic-ai/claude-code"),
        "{missing}"
    );

    std::fs::write(&profiles, "[profiles.exec]\nmax_atempts = 2\n").unwrap();
    let bad = p.fails(&["team", "up", "--exec", "true"], 1);
    assert!(bad.contains("unknown field `max_atempts`"), "{bad}");
    assert!(bad.contains("profiles.toml"), "{bad}");
    std::fs::remove_file(&profiles).unwrap();

    let zero = p.fails(&["team", "up", "--workers", "0", "--exec", "true"], 2);
    assert!(zero.contains("--workers must be 1 to 256"), "{zero}");
    let absurd = p.fails(&["team", "up", "--workers", "100000", "--exec", "true"], 2);
    assert!(absurd.contains("--workers must be 1 to 256"), "{absurd}");
    let no_repo = p.fails(&["team", "up", "--worktree", "--exec", "true"], 1);
    assert!(no_repo.contains("git"), "{no_repo}");
    // Outside git, --merge auto is refused before the team's banner (it was said first).
    let out = p.run(&["team", "up", "--merge", "auto", "--exec", "true"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("--merge auto lands each task's branch"),
        "{said}"
    );
    assert!(!said.contains("a team of"), "{said}");
    let no_command = p.fails(&["team", "up", "--agent", "exec"], 2);
    assert!(no_command.contains("--exec"), "{no_command}");
    for (flag, value, said) in [
        ("--max-minutes", "0", "--max-minutes must be more than 0"),
        ("--max-minutes", "-1", "--max-minutes"),
        ("--max-attempts", "0", "0 is not in 1..=20"),
        ("--max-attempts", "-2", "-2 is not in 1..=20"),
        ("--max-attempts", "21", "21 is not in 1..=20"),
        ("--max-turns", "0", "0 is not in 1..=1000000"),
        ("--budget-usd", "0", "--budget-usd must be more than 0"),
        ("--max-cost-usd", "-0.5", "--max-cost-usd"),
        ("--merge", "sometimes", "not a merge mode: review or auto"),
    ] {
        let refused = p.fails(&["team", "up", "--exec", "true", flag, value], 2);
        assert!(refused.contains(said), "{flag} {value}: {refused}");
    }

    let t = task(&p.tasks_json(), "task-1").clone();
    assert_eq!(t["status"], "available", "nothing was claimed: {t}");
    assert_eq!(t["attempts"].as_u64().unwrap_or(0), 0, "{t}");
    assert!(
        p.json(&["team", "status"])["workers"]
            .as_array()
            .unwrap()
            .is_empty()
    );
}

#[test]
fn two_machines_each_with_a_team_drain_one_postgres_queue_once() {
    use support::machine::Machine;
    use support::pg::PgServer;
    let server = PgServer::shared();
    let a = Machine::new("a").with_env("PGPASSWORD", &server.password());
    let b = Machine::new("b").with_env("PGPASSWORD", &server.password());
    let url = server.url_without_password();
    let project = format!("teams-{}", std::process::id());
    a.ok(&[
        "leader",
        "init",
        "Two teams",
        "--store",
        &url,
        "--project",
        &project,
    ]);
    b.ok(&["connect", &url, "--project", &project]);
    for i in 1..=12 {
        a.ok(&["leader", "add-task", &format!("Task {i}")]);
    }
    let command = "sleep 0.2; echo \"$BATON_TASK_ID by $BATON_AGENT\"";
    let up = [
        "team",
        "up",
        "--workers",
        "2",
        "--no-worktree",
        "--exec",
        command,
        "--json",
    ];
    let on_a = Background::from_command(a.command(&up));
    let on_b = Background::from_command(b.command(&up));
    let (code_a, out_a, err_a) = on_a.finish();
    let (code_b, out_b, err_b) = on_b.finish();
    assert_eq!((code_a, code_b), (Some(0), Some(0)), "{err_a}\n{err_b}");
    let report = |out: &str| -> Vec<String> {
        let report: Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
        report["workers"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|w| w["completed"].as_array().unwrap().clone())
            .map(|id| id.as_str().unwrap().to_string())
            .collect()
    };
    let (done_a, done_b) = (report(&out_a), report(&out_b));
    assert!(
        !done_a.is_empty() && !done_b.is_empty(),
        "both teams worked: {done_a:?} {done_b:?}"
    );
    let mut all: Vec<String> = done_a.iter().chain(&done_b).cloned().collect();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), 12, "each task once: {done_a:?} {done_b:?}");
    assert_eq!(done_a.len() + done_b.len(), 12, "none twice");

    // A lists B's workers too, named by their machine.
    let status = a.json(&["team", "status"]);
    let mut names: Vec<(String, String, Value)> = status["workers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            (
                w["name"].as_str().unwrap().to_string(),
                w["host"].as_str().unwrap().to_string(),
                w["supervisor_alive"].clone(),
            )
        })
        .collect();
    names.sort_by(|x, y| x.0.cmp(&y.0));
    assert_eq!(
        names,
        [
            ("a-ex1".to_string(), "a".to_string(), Value::Bool(false)),
            ("a-ex2".to_string(), "a".to_string(), Value::Bool(false)),
            ("b-ex1".to_string(), "b".to_string(), Value::Null),
            ("b-ex2".to_string(), "b".to_string(), Value::Null),
        ]
    );
    let by_agent = status["spend"]["by_agent"].as_object().unwrap();
    assert_eq!(by_agent.len(), 4, "{status}");
}

#[test]
fn team_logs_follow_prints_events_as_they_come_and_ends_with_the_attempt() {
    let p = Project::init();
    p.ok(&["leader", "add-task", "Slow"]);
    let go = p.path().join("go");
    let command = format!(
        "echo first; while [ ! -f '{}' ]; do sleep 0.05; done; echo second",
        go.display()
    );
    let team = spawn(&p, &["team", "up", "--no-worktree", "--exec", &command]);
    working_pid(&p, "ex1");
    let mut follow = Background::from_command(p.command(&["--json", "team", "logs", "ex1", "-f"]));
    follow.wait_stdout("\"text\":\"first\"");
    std::fs::write(&go, "").unwrap();
    follow.wait_stdout("\"text\":\"second\"");
    let (code, out, err) = follow.finish();
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("\"kind\":\"exited\""), "{out}");
    let (code, _, err) = team.finish();
    assert_eq!(code, Some(0), "{err}");
}

support::on_both_stores!(the_change_feed_carries_workers_and_every_transcript_event_once);

/// `baton watch` started before a team: every event of every attempt (short ones too, begun
/// and ended between two looks) arrives once and in order, the same as `team logs` reads
/// afterwards, and each worker's record changes are reported.
fn the_change_feed_carries_workers_and_every_transcript_event_once(p: Project) {
    for i in 1..=4 {
        p.ok(&["leader", "add-task", &format!("Task {i}")]);
    }
    let mut watch = p.spawn(&["watch", "--json"]);
    watch.wait_stderr("watching");
    let command = "echo \"one of $BATON_TASK_ID\"; echo \"two of $BATON_TASK_ID\"";
    run_ok(&p, &["team", "up", "--workers", "2", "--exec", command]);

    let stored: Vec<(String, Value)> = (1..=4)
        .map(|i| {
            let id = format!("task-{i}");
            let events = transcript(&p, &id, 1)["events"].clone();
            (id, events)
        })
        .collect();
    let fed = |seen: &[String]| -> std::collections::BTreeMap<String, Vec<Value>> {
        let mut fed = std::collections::BTreeMap::<String, Vec<Value>>::new();
        for line in seen
            .iter()
            .filter(|l| l.contains("\"transcript_appended\""))
        {
            let event: Value = serde_json::from_str(line).unwrap();
            assert_eq!(event["attempt"], 1, "{event}");
            let task = event["task"].as_str().unwrap().to_string();
            fed.entry(task)
                .or_default()
                .extend(event["events"].as_array().unwrap().iter().cloned());
        }
        fed
    };
    loop {
        let fed = fed(&watch.stdout_seen);
        let complete = stored.iter().all(|(id, events)| {
            fed.get(id)
                .is_some_and(|f| f.len() >= events.as_array().unwrap().len())
        });
        if complete {
            for (id, events) in &stored {
                assert_eq!(
                    &Value::from(fed[id].clone()),
                    events,
                    "{id}: once, in order"
                );
                let texts = event_texts(&serde_json::json!({ "events": events }));
                assert!(texts.contains(&format!("two of {id}")), "{texts:?}");
            }
            break;
        }
        watch.wait_stdout("\"event\"");
    }
    // Workers are compared, not logged: the last record of each, stopped, is reported (a
    // state held for less than a look may be passed over).
    let stopped = |seen: &[String], name: &str| {
        seen.iter()
            .rev()
            .filter(|l| l.contains("\"worker_changed\""))
            .map(|l| serde_json::from_str::<Value>(l).unwrap()["worker"].clone())
            .find(|w| w["name"] == name)
            .is_some_and(|w| w["state"] == "stopped" && w["task"].is_null())
    };
    let status = p.json(&["team", "status"]);
    let names: Vec<&str> = status["workers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 2, "{status}");
    for name in names {
        while !stopped(&watch.stdout_seen, name) {
            watch.wait_stdout("\"worker_changed\"");
        }
    }
}

/// An agent stopped while it waits on a question: its attempt ends, and so does the question
/// (closed, saying why), so the lead is not left answering nobody.
#[test]
fn a_question_whose_agent_was_stopped_is_closed() {
    let p = Project::init();
    p.ok(&["leader", "add-task", "Ask and wait"]);
    let command = "baton ask \"Still there?\" --task \"$BATON_TASK_ID\" --timeout 600";
    let team = spawn(&p, &["team", "up", "--exec", command]);
    let inbox = p.json(&["inbox", "--wait", "--timeout", "60"]);
    assert_eq!(inbox["questions"][0]["agent"], "ex1", "{inbox}");
    run_ok(&p, &["team", "stop", "--now"]);
    let (code, stdout, stderr) = team.finish();
    assert_eq!(code, Some(10), "{stderr}");
    assert!(
        stdout.contains("… task-1 (handed back): ready, not started"),
        "{stdout}"
    );
    let all = p.json(&["inbox", "--all"]);
    let state = &all["questions"][0]["state"];
    assert_eq!(state["state"], "closed", "{all}");
    assert_eq!(state["reason"], "attempt 1 of task-1 ended", "{all}");
    assert!(
        p.fails(&["answer", "q-1", "yes"], 1)
            .contains("closed: attempt 1")
    );
}

support::on_both_stores!(a_spoiled_attempt_record_or_transcript_line_is_named_and_the_rest_shown);

/// One attempt's record spoiled and one line of another's transcript: `team status` still
/// shows the team and names the record, `team logs` shows every other event with the bad one
/// named in its place (its line in the folder, its row in a database), the spoiled attempt
/// is named when asked for, and `leader doctor` lists it.
fn a_spoiled_attempt_record_or_transcript_line_is_named_and_the_rest_shown(p: Project) {
    p.ok(&["leader", "add-task", "One", "--id", "one"]);
    p.ok(&["leader", "add-task", "Two", "--id", "two"]);
    run_ok(
        &p,
        &[
            "team",
            "up",
            "--exec",
            "echo first; echo second; echo third",
        ],
    );
    let before = p.json(&["team", "logs", "two"]);
    let second = before["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["text"] == "second")
        .unwrap_or_else(|| panic!("{before}"))["seq"]
        .as_u64()
        .unwrap();
    p.spoil_attempt("one", 1);
    p.spoil_event("two", 1, second);

    let status = p.json(&["team", "status"]);
    assert!(
        !status["workers"].as_array().unwrap().is_empty(),
        "{status}"
    );
    let unreadable = status["unreadable"].as_array().unwrap();
    assert_eq!(unreadable.len(), 1, "{status}");
    let named = unreadable[0]["document"].as_str().unwrap();
    assert!(named.contains("one"), "{status}");
    let shown = p.ok(&["team", "status"]);
    assert!(shown.contains(&format!("Skipped {named}")), "{shown}");

    let log = p.json(&["team", "logs", "two"]);
    let said = event_texts(&log);
    assert!(said.iter().any(|t| t == "first"), "{said:?}");
    assert!(said.iter().any(|t| t == "third"), "{said:?}");
    assert!(!said.iter().any(|t| t == "second"), "{said:?}");
    let where_ = match p.on_postgres() {
        true => format!("row {second}"),
        false => format!("line {second}"),
    };
    assert!(
        said.iter()
            .any(|t| t.contains(&where_) && t.contains("skipped")),
        "{where_}: {said:?}"
    );

    let refused = p.fails(&["team", "logs", "one"], 1);
    assert!(
        refused.contains(named) && refused.contains("cannot be read"),
        "{refused}"
    );
    let doctor = p.run(&["--json", "leader", "doctor"]);
    let (report, _) = support::expect_code("doctor with a spoiled attempt", doctor, 4);
    assert!(report.contains("unreadable_document"), "{report}");
    assert!(report.contains(named), "{report}");
}

/// `team logs NAME` takes a worker's name as well as a task id, also once its team is gone
/// (its worker record cleared): the worker's last attempt; a name that is neither a task with
/// a transcript nor a worker says what it is not, and where an agent's own log lines are.
#[test]
fn team_logs_finds_a_workers_last_attempt_by_its_name() {
    let p = Project::init();
    p.ok(&["leader", "add-task", "Say hello", "--id", "hello"]);
    run_ok(
        &p,
        &[
            "team",
            "up",
            "--no-worktree",
            "--exec",
            "echo hello from ex1",
        ],
    );
    for record in std::fs::read_dir(p.coordination().join("team/workers")).unwrap() {
        std::fs::remove_file(record.unwrap().path()).unwrap();
    }
    let log = p.json(&["team", "logs", "ex1"]);
    assert_eq!(log["attempt"]["task"], "hello", "{log}");
    assert_eq!(log["attempt"]["agent"], "ex1", "{log}");
    assert!(log.to_string().contains("hello from ex1"), "{log}");
    // The task's own id still names the task.
    assert_eq!(
        p.json(&["team", "logs", "hello"])["attempt"]["agent"],
        "ex1"
    );
    let said = p.fails(&["team", "logs", "nobody"], 1);
    assert!(
        said.contains("no task or worker named nobody has a transcript")
            && said.contains("baton logs nobody"),
        "{said}"
    );
}
