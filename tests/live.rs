//! Live coordination end to end, with real `baton` processes: signal waits (before and after
//! the write, any/all, timeout, writer death, polling), runs clearing stale signals, the change
//! feed seeing another process's edit, waiting claims, and the worker loop.
//!
//! Waiters print a "waiting" line on stderr once their watch is armed; tests wait for that
//! line instead of sleeping, so they cannot race the write they are about to make.

use baton_test_support as support;

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;
use support::Project;

support::on_both_stores!(
    claim_wait_picks_up_a_task_added_later,
    claim_wait_wakes_when_a_dependency_is_done,
    claim_wait_takes_over_a_task_when_its_lease_expires,
    claim_wait_times_out_with_exit_code_5,
    worker_loop_runs_a_queue_with_dependencies_to_the_end,
    worker_loop_stops_its_command_and_releases_the_task_on_ctrl_c,
    status_watch_redraws_when_another_process_adds_a_task,
    a_waiter_started_before_the_write_wakes_and_one_started_after_returns_at_once,
    any_returns_on_the_first_signal_and_all_waits_for_every_one,
    a_wait_times_out_with_exit_code_5,
    a_wait_tied_to_a_process_ends_with_exit_code_6_when_it_dies,
    a_wait_tied_to_an_agent_ends_when_its_heartbeat_goes_stale,
    a_new_run_is_waited_in_and_the_last_run_keeps_its_signals,
    a_signal_at_an_explicit_path_wakes_a_waiter_even_if_its_folders_come_later,
    a_path_signal_never_overwrites_or_removes_a_file_that_is_not_a_signal_without_force,
    signal_commands_refuse_bad_names_unknown_runs_and_missing_names,
    the_change_feed_reports_what_another_process_changed,
    status_watch_into_a_pipe_prints_plain_boards_when_they_change,
    a_team_s_end_is_in_the_change_feed_with_its_verdict,
);

fn status_watch_redraws_when_another_process_adds_a_task(p: Project) {
    let mut watch = p.spawn(&["leader", "status", "--watch", "--json"]);
    watch.wait_stdout("\"total\":0");
    p.ok(&["leader", "add-task", "Seen live"]);
    let line = watch.wait_stdout("Seen live");
    let report: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(report["total"], 1, "{report}");
}

/// Into a pipe (not a terminal), `--watch` prints each changed board after the last, with no
/// escape codes and nothing while the board stays as it is.
fn status_watch_into_a_pipe_prints_plain_boards_when_they_change(p: Project) {
    let mut watch = p.spawn(&["leader", "status", "--watch"]);
    let first = watch.wait_stdout("Tasks: 0 total");
    assert!(!first.contains('\u{1b}'), "{first:?}");
    // The rest of that board, and the empty line after it; then nothing while it stays.
    watch.wait_stdout("No tasks yet");
    assert_eq!(watch.wait_stdout(""), "");
    assert!(
        watch.quiet_for(std::time::Duration::from_millis(1500)),
        "redrawn unchanged"
    );
    p.ok(&["leader", "add-task", "Seen live"]);
    let second = watch.wait_stdout("Tasks: 1 total");
    assert!(!second.contains('\u{1b}'), "{second:?}");
    watch.wait_stdout("Seen live");
}

fn a_waiter_started_before_the_write_wakes_and_one_started_after_returns_at_once(p: Project) {
    let mut before = p.spawn(&["signal", "wait", "ui-test-done", "--timeout", "60s"]);
    let armed = before.wait_stderr("waiting for ui-test-done (run 1)");
    if p.on_postgres() {
        assert!(armed.contains("the store's notifications"), "{armed}");
    }
    p.ok(&["signal", "write", "ui-test-done"]);
    let (code, stdout, _) = before.finish();
    assert_eq!(code, Some(0));
    assert!(stdout.contains("Signalled: ui-test-done"), "{stdout}");

    // A signal already there is found by the first look: a waiter that needed an event or a
    // poll tick to see it would time out first, with a timeout this short.
    let after = p.json(&["signal", "wait", "ui-test-done", "--timeout", "1ms"]);
    assert_eq!(after["outcome"], "signalled");
    assert_eq!(after["signals"][0]["signal"], "done");
    // The file keeps the source design's content; a database keeps no file.
    let file = p.coordination().join("runs/1/signals/ui-test-done");
    if p.on_postgres() {
        assert!(!file.exists());
        let place = after["signals"][0]["path"].as_str().unwrap();
        assert!(place.contains("in PostgreSQL at"), "{place}");
    } else {
        assert_eq!(std::fs::read_to_string(file).unwrap(), "done\n");
    }
}

fn any_returns_on_the_first_signal_and_all_waits_for_every_one(p: Project) {
    let mut any = p.spawn(&["signal", "wait", "a", "b", "--any", "--json"]);
    any.wait_stderr("waiting for a (run 1) or b (run 1)");
    let mut all = p.spawn(&["signal", "wait", "a", "b", "--json"]);
    all.wait_stderr("waiting for a (run 1) and b (run 1)");

    p.ok(&["signal", "write", "b", "--agent", "qa", "--note", "half"]);
    let (code, stdout, _) = any.finish();
    assert_eq!(code, Some(0));
    let outcome: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(outcome["signals"][0]["name"], "b");
    assert_eq!(outcome["signals"][0]["writer"], "qa");
    assert_eq!(outcome["missing"], serde_json::json!(["a (run 1)"]));

    // `all` is still waiting: only a second write ends it.
    p.ok(&["signal", "write", "a"]);
    let (code, stdout, _) = all.finish();
    assert_eq!(code, Some(0));
    let outcome: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(outcome["signals"].as_array().unwrap().len(), 2);
}

fn a_wait_times_out_with_exit_code_5(p: Project) {
    let stderr = p.fails(&["signal", "wait", "never", "--timeout", "150ms"], 5);
    assert!(stderr.contains("waiting for never"), "{stderr}");
    let out = p.run(&["signal", "wait", "never", "--timeout", "50ms", "--json"]);
    let outcome: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(outcome["outcome"], "timed_out");
    assert_eq!(outcome["missing"], serde_json::json!(["never (run 1)"]));
}

fn a_wait_tied_to_a_process_ends_with_exit_code_6_when_it_dies(p: Project) {
    let mut writer = std::process::Command::new("sleep")
        .arg("600")
        .spawn()
        .unwrap();
    let pid = writer.id().to_string();
    let mut waiter = p.spawn(&[
        "signal",
        "wait",
        "ui-test-done",
        "--while-pid",
        &pid,
        "--timeout",
        "10m",
    ]);
    waiter.wait_stderr("waiting for");
    writer.kill().unwrap();
    writer.wait().unwrap();
    let (code, stdout, _) = waiter.finish();
    assert_eq!(code, Some(6), "{stdout}");
    assert!(stdout.contains(&format!("process {pid}")), "{stdout}");

    // A process this machine cannot see: gone on a folder project; on a database project it
    // may be a writer on another machine, so the wait is refused with what to use instead.
    let args = [
        "signal",
        "wait",
        "x",
        "--while-pid",
        &pid,
        "--timeout",
        "10s",
    ];
    if p.on_postgres() {
        let err = p.fails(&args, 1);
        assert!(err.contains("not running on this machine"), "{err}");
        assert!(err.contains("--while-agent"), "{err}");
    } else {
        p.fails(&args, 6);
    }
}

fn a_wait_tied_to_an_agent_ends_when_its_heartbeat_goes_stale(p: Project) {
    p.ok(&["worker", "heartbeat", "writer"]);
    let started = Instant::now();
    let mut waiter = p.spawn(&[
        "signal",
        "wait",
        "done",
        "--while-agent",
        "writer",
        "--lease",
        "1s",
        "--timeout",
        "10m",
    ]);
    waiter.wait_stderr("waiting for");
    let (code, stdout, _) = waiter.finish();
    assert_eq!(code, Some(6), "{stdout}");
    assert!(stdout.contains("agent writer"), "{stdout}");
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "gone only after the lease"
    );
}

#[test]
fn run_new_clears_stale_signals_so_a_new_wait_is_not_fooled() {
    let p = Project::init();
    p.ok(&["signal", "write", "ui-test-done"]);
    // A crashed earlier attempt left run 2's signal file in place.
    let stale = p.coordination().join("runs/2/signals");
    std::fs::create_dir_all(&stale).unwrap();
    std::fs::write(stale.join("ui-test-done"), "done").unwrap();

    let second = p.json(&["run", "new"]);
    assert_eq!(second["run"]["number"], 2);
    assert_eq!(second["cleared"], serde_json::json!(["ui-test-done"]));
    p.fails(&["signal", "wait", "ui-test-done", "--timeout", "100ms"], 5);
}

fn a_new_run_is_waited_in_and_the_last_run_keeps_its_signals(p: Project) {
    let first = p.json(&["run", "new", "--note", "sprint 1"]);
    assert_eq!(first["run"]["number"], 1);
    assert_eq!(first["run"]["note"], "sprint 1");
    p.ok(&["signal", "write", "ui-test-done"]);
    let second = p.json(&["run", "new"]);
    assert_eq!(second["run"]["number"], 2);
    assert_eq!(second["cleared"], serde_json::json!([]));
    // The new run has no signal yet: last run's does not end this wait.
    p.fails(&["signal", "wait", "ui-test-done", "--timeout", "100ms"], 5);
    // Run 1 keeps its own signal and can still be asked about.
    p.ok(&[
        "signal",
        "wait",
        "ui-test-done",
        "--run",
        "1",
        "--timeout",
        "1s",
    ]);
    let runs = p.json(&["run", "list"]);
    assert_eq!(runs["runs"].as_array().unwrap().len(), 2);
    let listed = p.json(&["signal", "list", "--run", "1"]);
    assert_eq!(listed["signals"][0]["name"], "ui-test-done");
    assert_eq!(
        p.json(&["signal", "list"])["signals"],
        serde_json::json!([])
    );
    let cleared = p.json(&["signal", "clear", "--all", "--run", "1"]);
    assert_eq!(cleared["cleared"], serde_json::json!(["ui-test-done"]));
}

#[test]
fn polling_mode_wakes_a_waiter_without_file_system_events() {
    let p = Project::init();
    let mut waiter = p.spawn(&[
        "signal",
        "wait",
        "ready",
        "--watch-mode",
        "poll:20",
        "--timeout",
        "60s",
    ]);
    let armed = waiter.wait_stderr("waiting for ready");
    assert!(armed.contains("polling every 20 ms"), "{armed}");
    p.ok(&["signal", "write", "ready"]);
    assert_eq!(waiter.finish().0, Some(0));
}

fn a_signal_at_an_explicit_path_wakes_a_waiter_even_if_its_folders_come_later(p: Project) {
    let path = ".claude/sprint/3/.ui-test-done";
    let mut waiter = p.spawn(&["signal", "wait", "--path", path, "--timeout", "60s"]);
    waiter.wait_stderr("waiting for");
    p.ok(&["signal", "write", "--path", path]);
    assert_eq!(waiter.finish().0, Some(0));
    assert_eq!(
        std::fs::read_to_string(p.path().join(path)).unwrap(),
        "done\n"
    );
    p.ok(&["signal", "clear", "--path", path]);
    assert!(!p.path().join(path).exists());

    // A name and a path in one wait: the name in the project's store (a database tells the
    // waiter), the path a file on this machine (watched), on either store.
    let mut both = p.spawn(&[
        "signal",
        "wait",
        "ui-test-done",
        "--path",
        path,
        "--timeout",
        "60s",
        "--json",
    ]);
    both.wait_stderr("waiting for");
    p.ok(&["signal", "write", "--path", path]);
    p.ok(&["signal", "write", "ui-test-done", "--agent", "qa"]);
    let (code, stdout, _) = both.finish();
    assert_eq!(code, Some(0), "{stdout}");
    let outcome: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(outcome["signals"].as_array().unwrap().len(), 2, "{outcome}");
    // The writer's log line is where the project's logs are.
    let logs = p.ok(&["logs", "qa"]);
    assert!(logs.contains("SIGNAL: ui-test-done (run 1)"), "{logs}");
}

fn a_path_signal_never_overwrites_or_removes_a_file_that_is_not_a_signal_without_force(p: Project) {
    let notes = p.path().join("notes.txt");
    std::fs::write(&notes, "my notes\n").unwrap();
    for command in ["write", "clear"] {
        let err = p.fails(&["signal", command, "--path", "notes.txt"], 1);
        assert!(err.contains("is not a signal"), "{err}");
        assert!(err.contains("--force"), "{err}");
        assert_eq!(std::fs::read_to_string(&notes).unwrap(), "my notes\n");
    }
    let json = p.run(&["signal", "clear", "--path", "notes.txt", "--json"]);
    let body: serde_json::Value = serde_json::from_slice(&json.stderr).unwrap();
    assert_eq!(body["error"]["kind"], "not_a_signal");
    // The user's word goes.
    p.ok(&["signal", "write", "--path", "notes.txt", "--force"]);
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "done\n");
    std::fs::write(&notes, "my notes again\n").unwrap();
    p.ok(&["signal", "clear", "--path", "notes.txt", "--force"]);
    assert!(!notes.exists());
    let err = p.fails(&["signal", "write", "ready", "--force"], 2);
    assert!(err.contains("--path"), "{err}");
}

fn signal_commands_refuse_bad_names_unknown_runs_and_missing_names(p: Project) {
    for name in ["../escape", "a/b", ".hidden"] {
        let err = p.fails(&["signal", "write", name], 1);
        assert!(err.contains("invalid signal name"), "{err}");
    }
    let err = p.fails(&["signal", "write", "x", "--run", "9"], 1);
    assert!(err.contains("no run 9"), "{err}");
    p.fails(&["signal", "write"], 2);
    p.fails(&["signal", "clear"], 2);
    let err = p.fails(&["signal", "wait", "--timeout", "1s"], 1);
    assert!(err.contains("name at least one signal"), "{err}");
    assert!(!p.coordination().join("escape").exists());
}

/// Waits for the next `baton watch --json` line whose event is `event`; returns it parsed.
fn next_event(watch: &mut support::Background, event: &str) -> Value {
    let line = watch.wait_stdout(&format!("\"event\":\"{event}\""));
    serde_json::from_str(&line).unwrap()
}

/// A lead who walked away hears how a team's run ended: the feed (what `baton serve` pushes
/// and the desktop notifies from) says so once, with the verdict `team up` printed, and
/// `team status` keeps it.
fn a_team_s_end_is_in_the_change_feed_with_its_verdict(p: Project) {
    p.ok(&["leader", "add-task", "Works"]);
    p.ok(&["leader", "add-task", "Fails"]);
    let mut watch = p.spawn(&["watch", "--json"]);
    watch.wait_stderr("watching");
    let out = p.run(&["team", "up", "--exec", "test \"$BATON_TASK_ID\" = task-1"]);
    assert_eq!(out.status.code(), Some(10), "{out:?}");
    let ended = next_event(&mut watch, "team_ended");
    let ended = &ended["ended"];
    assert_eq!(ended["all_done"], false, "{ended}");
    assert_eq!(
        (ended["done"].as_u64(), ended["failed"].as_u64()),
        (Some(1), Some(1)),
        "{ended}"
    );
    let headline = ended["headline"].as_str().unwrap();
    assert!(
        headline.starts_with("Not every task is done: 1 done, 1 failed"),
        "{ended}"
    );
    let status = p.json(&["team", "status"]);
    assert_eq!(status["last_run"]["headline"], headline, "{status}");
    // Told once: a later change to the team is no second end.
    p.ok(&["leader", "add-task", "After"]);
    next_event(&mut watch, "tasks_changed");
    assert!(
        !watch
            .stdout_seen
            .iter()
            .skip_while(|l| !l.contains("team_ended"))
            .skip(1)
            .any(|l| l.contains("team_ended")),
        "{:?}",
        watch.stdout_seen
    );
}

fn the_change_feed_reports_what_another_process_changed(p: Project) {
    let mut watch = p.spawn(&["watch", "--json"]);
    watch.wait_stderr("watching");

    p.ok(&["leader", "add-task", "Write the parser", "--id", "parser"]);
    let added = next_event(&mut watch, "tasks_changed");
    assert_eq!(added["changes"][0]["id"], "parser");
    assert_eq!(added["changes"][0]["change"], "added");
    assert!(added["at"].is_string());

    p.ok(&[
        "leader",
        "edit",
        "parser",
        "--description",
        "Write the JSON parser",
    ]);
    let edited = next_event(&mut watch, "tasks_changed");
    assert_eq!(edited["changes"][0]["change"], "edited");
    assert!(
        edited["changes"][0]["fields"]
            .as_array()
            .unwrap()
            .contains(&"description".into()),
        "{edited}"
    );

    p.ok(&["worker", "claim", "w1"]);
    let claimed = next_event(&mut watch, "tasks_changed");
    assert_eq!(claimed["changes"][0]["change"], "status");
    assert_eq!(claimed["changes"][0]["from"], "available");
    assert_eq!(claimed["changes"][0]["to"], "claimed");
    assert_eq!(claimed["changes"][0]["by"], "w1");
    let log = next_event(&mut watch, "log_appended");
    assert!(log["lines"][0].as_str().unwrap().contains("CLAIM"), "{log}");

    p.ok(&["discover", "The lexer is in src/lex.rs", "--agent", "w1"]);
    let discovery = next_event(&mut watch, "discovery_added");
    assert!(
        discovery["text"]
            .as_str()
            .unwrap()
            .contains("The lexer is in src/lex.rs")
    );

    p.ok(&["run", "new"]);
    assert_eq!(next_event(&mut watch, "run_started")["run"], 1);
    p.ok(&["signal", "write", "ui-test-done"]);
    let signal = next_event(&mut watch, "signal_written");
    assert_eq!(signal["name"], "ui-test-done");
    p.ok(&["signal", "clear", "ui-test-done"]);
    let cleared = next_event(&mut watch, "signal_cleared");
    assert_eq!(cleared["run"], 1);

    p.ok(&["worker", "start", "w1", "parser"]);
    p.ok(&["worker", "complete", "w1", "parser", "Parser written"]);
    let result = next_event(&mut watch, "result_written");
    assert_eq!(result["task"], "parser");
    p.ok(&["leader", "aggregate"]);
    next_event(&mut watch, "summary_written");
    p.ok(&[
        "handoff",
        "track",
        "qa",
        "planner",
        "--summary",
        "tests pass",
    ]);
    let recorded = next_event(&mut watch, "orchestration_changed");
    assert_eq!(recorded["file"], "state.json");
}

fn claim_wait_picks_up_a_task_added_later(p: Project) {
    let mut worker = p.spawn(&["worker", "claim", "w1", "--wait", "--json"]);
    worker.wait_stderr("w1 is waiting for a ready task");
    p.ok(&["leader", "add-task", "Late task"]);
    let (code, stdout, _) = worker.finish();
    assert_eq!(code, Some(0));
    let claim: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(claim["task"]["id"], "task-1");
    assert_eq!(p.tasks_json()["tasks"][0]["claimed_by"], "w1");
}

fn claim_wait_wakes_when_a_dependency_is_done(p: Project) {
    p.ok(&["leader", "add-task", "First"]);
    p.ok(&["leader", "add-task", "Second", "--depends", "task-1"]);
    p.ok(&["worker", "claim", "w1"]);
    let mut waiter = p.spawn(&["worker", "claim", "w2", "--wait", "--json"]);
    waiter.wait_stderr("waiting");
    p.ok(&["worker", "start", "w1", "task-1"]);
    p.ok(&["worker", "complete", "w1", "task-1", "Done"]);
    let (code, stdout, _) = waiter.finish();
    assert_eq!(code, Some(0));
    let claim: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(claim["task"]["id"], "task-2");
}

fn claim_wait_takes_over_a_task_when_its_lease_expires(p: Project) {
    p.ok(&["leader", "add-task", "Only task"]);
    p.ok(&["worker", "claim", "crashed", "--lease", "1s"]);
    let mut waiter = p.spawn(&["worker", "claim", "w2", "--wait", "--lease", "1s", "--json"]);
    waiter.wait_stderr("waiting");
    let (code, stdout, _) = waiter.finish();
    assert_eq!(code, Some(0));
    let claim: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(claim["task"]["id"], "task-1");
    assert_eq!(claim["reclaimed_from"], "crashed");
}

fn claim_wait_times_out_with_exit_code_5(p: Project) {
    let stderr = p.fails(
        &["worker", "claim", "w1", "--wait", "--timeout", "150ms"],
        5,
    );
    assert!(stderr.contains("no task became ready"), "{stderr}");
    // Waiting does not fill the log with failed claims.
    let files = p.files();
    let log = files.join("logs/w1.log");
    assert!(!log.exists() || std::fs::read_to_string(log).unwrap().is_empty());
}

const LOOP_COMMAND: &str = r#"cat > "stdin-$BATON_TASK_ID.json"
echo "did $BATON_TASK_ID: $BATON_TASK_DESCRIPTION"
case "$BATON_TASK_DESCRIPTION" in
  *explode*) echo "warming up" >&2; echo "it exploded" >&2; exit 7 ;;
esac"#;

fn task<'a>(tasks: &'a Value, id: &str) -> &'a Value {
    tasks["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == id)
        .unwrap()
}

fn worker_loop_runs_a_queue_with_dependencies_to_the_end(p: Project) {
    let add = |id: &str, description: &str, deps: &[&str]| {
        let mut args = vec!["leader", "add-task", description, "--id", id];
        for dep in deps {
            args.extend(["--depends", dep]);
        }
        p.ok(&args);
    };
    add("schema", "Define the schema", &[]);
    add("parser", "Write the parser", &["schema"]);
    add("printer", "Write the printer", &["schema"]);
    add("cli", "Wire the CLI", &["parser", "printer"]);
    add("docs", "Write docs", &[]);
    add("bench", "Benchmark (will explode)", &[]);
    add("report", "Publish the benchmark report", &["bench"]);

    let w1 = p.spawn(&["worker", "loop", "w1", "--exec", LOOP_COMMAND]);
    let w2 = p.spawn(&["worker", "loop", "w2", "--exec", LOOP_COMMAND, "--json"]);
    let (code1, out1, err1) = w1.finish();
    let (code2, out2, err2) = w2.finish();
    assert_eq!(code1, Some(0), "{out1}\n{err1}");
    assert_eq!(code2, Some(0), "{out2}\n{err2}");
    assert!(
        err1.contains("no work can become ready") || out1.contains("no work can become ready"),
        "{out1}\n{err1}"
    );

    let tasks = p.tasks_json();
    for id in ["schema", "parser", "printer", "cli", "docs"] {
        let t = task(&tasks, id);
        assert_eq!(t["status"], "done", "{id}: {t}");
        let output = t["result"]["output"].as_str().unwrap();
        assert!(output.starts_with(&format!("did {id}: ")), "{output}");
        let report = std::fs::read_to_string(p.files().join(format!("results/{id}.md"))).unwrap();
        assert!(report.contains(&format!("did {id}")), "{report}");
        // The command got the task as JSON on stdin.
        let stdin: Value = serde_json::from_slice(
            &std::fs::read(p.path().join(format!("stdin-{id}.json"))).unwrap(),
        )
        .unwrap();
        assert_eq!(stdin["id"], id);
        assert!(
            stdin["result_path"]
                .as_str()
                .unwrap()
                .ends_with(&format!("results/{id}.md"))
        );
    }
    let bench = task(&tasks, "bench");
    assert_eq!(bench["status"], "failed");
    let reason = bench["failure_reason"].as_str().unwrap();
    assert!(
        reason.contains("status 7") && reason.contains("it exploded"),
        "{reason}"
    );
    // Behind a failed dependency, `report` can never run; it is left for the leader.
    assert_eq!(task(&tasks, "report")["status"], "available");

    // Dependency order held: every task completed after its dependencies.
    for t in tasks["tasks"].as_array().unwrap() {
        for dep in t["dependencies"].as_array().unwrap() {
            let dep = task(&tasks, dep.as_str().unwrap());
            if t["status"] == "done" {
                assert!(dep["completed_at"].as_str() < t["claimed_at"].as_str());
            }
        }
    }
    // Both workers reported progress; the JSON one as JSON lines.
    let json_lines: Vec<Value> = out2
        .lines()
        .filter(|l| l.starts_with("{\"event\""))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let done_by_w2 = json_lines
        .iter()
        .filter(|e| e["event"] == "completed")
        .count();
    let done_by_w1 = err1.matches(" done").count();
    assert_eq!(done_by_w1 + done_by_w2, 5, "{err1}\n{out2}");
}

fn gone(pid: &str) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"));
    match stat {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .unwrap()
            .trim_start()
            .starts_with('Z'),
    }
}

fn worker_loop_stops_its_command_and_releases_the_task_on_ctrl_c(p: Project) {
    p.ok(&["leader", "add-task", "Long job"]);
    let mut worker = p.spawn(&[
        "worker",
        "loop",
        "w1",
        "--exec",
        "echo $$ > command.pid; echo started; exec sleep 600",
    ]);
    worker.wait_stdout("started");
    let pid = std::fs::read_to_string(p.path().join("command.pid")).unwrap();
    let pid = pid.trim().to_string();
    assert_eq!(p.tasks_json()["tasks"][0]["status"], "in_progress");

    worker.signal("INT");
    let (code, _, stderr) = worker.finish();
    assert_eq!(code, Some(130), "{stderr}");
    assert!(stderr.contains("task-1 released"), "{stderr}");
    let t = &p.tasks_json()["tasks"][0];
    assert_eq!(t["status"], "available");
    assert!(t["claimed_by"].is_null());

    // The command's process is gone too (retry: init reaps orphans in its own time).
    support::eventually(&format!("command {pid} to end"), || gone(&pid));
    assert!(Path::new(&p.coordination()).exists());
}

#[test]
fn when_events_cannot_be_set_up_the_waiter_falls_back_to_polling_by_itself() {
    let p = Project::init();
    // With five file descriptors there is no room for an inotify instance and its event loop,
    // so the default (auto) mode must notice and poll instead.
    let mut command = std::process::Command::new("prlimit");
    command
        .arg("--nofile=5")
        .arg(support::baton_bin())
        .args(["signal", "wait", "ready", "--timeout", "60s"])
        .current_dir(p.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut waiter = support::Background::from_command(command);
    let armed = waiter.wait_stderr("waiting for ready");
    assert!(armed.contains("polling every 100 ms"), "{armed}");
    p.ok(&["signal", "write", "ready"]);
    let (code, stdout, _) = waiter.finish();
    assert_eq!(code, Some(0), "{stdout}");
}
