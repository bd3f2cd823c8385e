//! The worker engine on its own (what `baton worker loop` runs) and as a team's worker, on a
//! folder project with real `sh` commands: what it reports, how it ends, what it records.

use std::sync::Mutex;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::time::Duration;

use baton_core::{AttemptEnd, ClaimRequest, NewTask, TaskStatus, TaskStore, TeamStore};
use baton_folder::FolderStore;
use baton_live::WatchMode;
use baton_team::Crew;
use baton_team::{Profile, Progress, Setting, TeamStores, WorkerEnd, run_worker};

struct Project {
    _dir: tempfile::TempDir,
    store: FolderStore,
}

impl Project {
    fn new() -> Project {
        let dir = tempfile::tempdir().unwrap();
        let store = FolderStore::init(dir.path(), "the worker engine", None).unwrap();
        Project { _dir: dir, store }
    }

    fn add(&self, id: &str, description: &str, dependencies: &[&str]) {
        self.store
            .add_task(NewTask {
                id: Some(id.into()),
                description: description.into(),
                dependencies: dependencies.iter().map(|d| d.to_string()).collect(),
                ..NewTask::default()
            })
            .unwrap();
    }

    fn stores(&self) -> TeamStores<'_> {
        TeamStores {
            tasks: &self.store,
            team: &self.store,
            documents: &self.store,
            local: self.store.layout(),
        }
    }

    fn setting(&self) -> Setting {
        Setting {
            baton: "/nonexistent/baton".into(),
            project_dir: self.store.layout().project_dir().to_path_buf(),
            store_env: Vec::new(),
        }
    }

    /// A lone worker's crew (`worker loop`) running `command` in the project folder.
    fn alone<'a>(&'a self, command: &str, progress: &'a (dyn Fn(Progress) + Sync)) -> Crew<'a> {
        Crew::alone(
            self.stores(),
            self.setting(),
            command,
            false,
            WatchMode::Events,
            progress,
        )
        .unwrap()
    }

    fn task(&self, id: &str) -> baton_core::Task {
        self.store.task(id).unwrap().unwrap()
    }
}

/// Progress events, sent to the test as they happen.
struct Events {
    tx: Mutex<Sender<Progress>>,
}

impl Events {
    fn new() -> (Events, Receiver<Progress>) {
        let (tx, rx) = channel();
        (Events { tx: Mutex::new(tx) }, rx)
    }

    fn send(&self, event: Progress) {
        let _ = self.tx.lock().unwrap().send(event);
    }
}

const COMMAND: &str = r#"echo "did $BATON_TASK_ID"
case "$BATON_TASK_DESCRIPTION" in
  *explode*) echo "warming up" >&2; echo "it exploded" >&2; exit 7 ;;
  *vanish*) kill -9 $$ ;;
esac"#;

#[test]
fn a_lone_worker_completes_fails_and_stops_when_nothing_can_become_ready() {
    let p = Project::new();
    p.add("schema", "Define the schema", &[]);
    p.add("parser", "Write the parser", &["schema"]);
    p.add("bench", "Benchmark (will explode)", &[]);
    p.add("report", "Publish the benchmark", &["bench"]);
    p.add("ghost", "This one will vanish", &[]);
    let (events, rx) = Events::new();
    let progress = |e: Progress| events.send(e);
    let crew = p.alone(COMMAND, &progress);
    let report = run_worker(&crew, "w1").unwrap();

    assert_eq!(report.end, WorkerEnd::Drained);
    assert_eq!(report.completed, ["schema", "parser"]);
    let mut failed = report.failed.clone();
    failed.sort();
    assert_eq!(failed, ["bench", "ghost"]);
    assert!(report.released.is_empty());

    let parser = p.task("parser");
    assert_eq!(parser.status, TaskStatus::Done);
    assert_eq!(parser.result.unwrap().output.as_deref(), Some("did parser"));
    let bench = p.task("bench");
    assert_eq!(bench.status, TaskStatus::Failed);
    let reason = bench.failure_reason.unwrap();
    assert_eq!(
        reason,
        "the command exited with status 7; stderr ends with:\nwarming up\nit exploded"
    );
    let ghost = p.task("ghost").failure_reason.unwrap();
    assert!(
        ghost.starts_with("the command was killed by signal 9"),
        "{ghost}"
    );
    // Behind a failed dependency, `report` can never run: left for the lead.
    assert_eq!(p.task("report").status, TaskStatus::Available);

    // A lone worker keeps no team records.
    assert!(p.store.attempts(None).unwrap().is_empty());
    assert!(p.store.workers().unwrap().is_empty());

    let events: Vec<Progress> = rx.try_iter().collect();
    let failed_events = events
        .iter()
        .filter(|e| {
            matches!(
                e,
                Progress::Ended {
                    end: AttemptEnd::Failed,
                    ..
                }
            ) || matches!(e, Progress::GaveUp { .. })
        })
        .count();
    assert_eq!(failed_events, 2, "{events:?}");
    assert!(matches!(events.last(), Some(Progress::Stopped { .. })));
}

#[test]
fn a_lone_worker_stops_after_its_most_tasks() {
    let p = Project::new();
    for id in ["a", "b", "c"] {
        p.add(id, "a task", &[]);
    }
    let progress = |_: Progress| {};
    let mut crew = p.alone("true", &progress);
    crew.pace.max_tasks = Some(2);
    let report = run_worker(&crew, "w1").unwrap();
    assert_eq!(report.end, WorkerEnd::MaxTasks);
    assert_eq!(report.completed.len(), 2);
    let left: Vec<_> = ["a", "b", "c"]
        .iter()
        .filter(|id| p.task(id).status == TaskStatus::Available)
        .collect();
    assert_eq!(left.len(), 1);
    assert_eq!(
        p.task(report.completed[0].as_str())
            .result
            .unwrap()
            .output
            .as_deref(),
        Some("(the command printed nothing)")
    );
}

#[test]
fn stopped_now_a_worker_stops_its_command_and_hands_the_task_back() {
    let p = Project::new();
    p.add("long", "a long job", &[]);
    let (events, rx) = Events::new();
    let progress = |e: Progress| events.send(e);
    let crew = p.alone("echo started; exec sleep 600", &progress);
    let report = std::thread::scope(|scope| {
        let worker = scope.spawn(|| run_worker(&crew, "w1").map_err(|e| e.to_string()));
        let pid = loop {
            match rx
                .recv_timeout(Duration::from_secs(60))
                .expect("the command starts")
            {
                Progress::Started { pid, .. } => break pid,
                _ => continue,
            }
        };
        assert_eq!(p.task("long").status, TaskStatus::InProgress);
        crew.flags("w1").stop(true);
        let report = worker.join().unwrap().unwrap();
        // The command's process is gone (killed and reaped by the worker).
        assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists());
        report
    });
    assert_eq!(report.end, WorkerEnd::Stopped);
    assert_eq!(report.released, ["long"]);
    let task = p.task("long");
    assert_eq!(task.status, TaskStatus::Available);
    assert!(task.claimed_by.is_none());
    let released = rx
        .try_iter()
        .any(|e| matches!(e, Progress::Released { ref task, .. } if task == "long"));
    assert!(released);
}

#[test]
fn a_teams_exec_worker_records_each_attempt_and_takes_up_what_it_held() {
    let p = Project::new();
    p.add("held", "held from before", &[]);
    p.add("next", "the next one", &[]);
    // Worker ex-1 held `held` when its supervisor was killed.
    p.store.claim(&ClaimRequest::next("ex-1")).unwrap().unwrap();
    p.store.start("ex-1", "held").unwrap();
    let progress = |_: Progress| {};
    let profile = Profile::for_command("echo \"did $BATON_TASK_ID\"", false);
    let crew = Crew::new(
        p.stores(),
        p.setting(),
        profile,
        "host".into(),
        WatchMode::Events,
        &progress,
    )
    .unwrap();
    let report = run_worker(&crew, "ex-1").unwrap();
    assert_eq!(report.completed, ["held", "next"]);
    let attempts = p.store.attempts(None).unwrap();
    assert_eq!(attempts.len(), 2, "{attempts:?}");
    for a in &attempts {
        assert_eq!(a.end, AttemptEnd::Completed);
        assert_eq!(
            a.reason.as_deref(),
            Some("the command exited with status 0")
        );
        assert_eq!(a.agent, "ex-1");
    }
    let workers = p.store.workers().unwrap();
    assert_eq!(workers.len(), 1);
    assert_eq!(workers[0].state, baton_core::WorkerState::Stopped);
}

/// Runs worker w1 on one task with a command that waits for `go` to exist; `meanwhile` is done
/// to the store once the command has started, then the command is let go.
fn while_the_command_runs(meanwhile: impl FnOnce(&FolderStore)) -> (Project, Vec<Progress>) {
    let p = Project::new();
    p.add("job", "a job", &[]);
    let go = p.store.layout().project_dir().join("go");
    let command = format!(
        "while [ ! -e '{}' ]; do sleep 0.01; done; echo finished",
        go.display()
    );
    let (events, rx) = Events::new();
    let progress = |e: Progress| events.send(e);
    let crew = p.alone(&command, &progress);
    let mut seen = Vec::new();
    std::thread::scope(|scope| {
        let worker = scope.spawn(|| run_worker(&crew, "w1").map_err(|e| e.to_string()));
        loop {
            let event = rx.recv_timeout(Duration::from_secs(60)).expect("it starts");
            let started = matches!(event, Progress::Started { .. });
            seen.push(event);
            if started {
                break;
            }
        }
        meanwhile(&p.store);
        std::fs::write(&go, "").unwrap();
        worker.join().unwrap().unwrap();
    });
    seen.extend(rx.try_iter());
    (p, seen)
}

#[test]
fn a_command_that_reported_its_task_itself_is_not_reported_again() {
    let (p, events) = while_the_command_runs(|store| {
        let report = baton_core::Completion {
            output: "reported by the command".into(),
            ..Default::default()
        };
        store.complete("w1", "job", report).unwrap();
    });
    let job = p.task("job");
    assert_eq!(job.status, TaskStatus::Done);
    assert_eq!(
        job.result.unwrap().output.as_deref(),
        Some("reported by the command")
    );
    let completed = events.iter().any(|e| {
        matches!(
            e,
            Progress::Ended {
                end: AttemptEnd::Completed,
                ..
            }
        )
    });
    assert!(completed, "{events:?}");
}

#[test]
fn a_task_taken_over_while_its_command_ran_is_lost_not_reported() {
    let (p, events) = while_the_command_runs(|store| {
        store.release("w1", "job").unwrap();
        store.claim(&ClaimRequest::next("w2")).unwrap().unwrap();
        store.start("w2", "job").unwrap();
        let report = baton_core::Completion {
            output: "done by w2".into(),
            ..Default::default()
        };
        store.complete("w2", "job", report).unwrap();
    });
    let job = p.task("job");
    assert_eq!(job.status, TaskStatus::Done);
    assert_eq!(job.claimed_by.as_deref(), Some("w2"));
    assert_eq!(job.result.unwrap().output.as_deref(), Some("done by w2"));
    let lost = events.iter().find_map(|e| match e {
        Progress::Ended {
            end: AttemptEnd::Lost,
            reason,
            ..
        } => reason.clone(),
        _ => None,
    });
    let lost = lost.expect("the attempt was lost");
    assert!(lost.contains("w2"), "{lost}");
}

/// An attempt at `task` recorded before this test's worker ran (a minute ago), ended as `end`.
fn earlier_attempt(p: &Project, task: &str, number: u32, end: AttemptEnd) {
    let then = baton_core::Timestamp::now().before(Duration::from_secs(60));
    p.store
        .save_attempt(&baton_core::Attempt {
            task: task.into(),
            attempt: number,
            agent: "ex-9".into(),
            host: "host".into(),
            profile: "exec".into(),
            started_at: then,
            ended_at: Some(then),
            end,
            reason: Some(format!("{end:?} before")),
            session_id: None,
            usage: baton_core::Usage::default(),
            last_message: None,
            events: 0,
            sandboxed: false,
            role: baton_core::AttemptRole::Work,
        })
        .unwrap();
}

/// A team's exec worker allowed two failed attempts, whose command is killed by a signal the
/// first time it runs in this test and succeeds the second.
fn crash_once_then_succeed(p: &Project) -> baton_team::WorkerReport {
    let marker = p.store.layout().project_dir().join("crashed-once");
    let command = format!(
        "if [ -e '{0}' ]; then echo recovered; else touch '{0}'; kill -9 $$; fi",
        marker.display()
    );
    let mut profile = Profile::for_command(&command, false);
    profile.max_attempts = 2;
    profile.backoff_secs = 0.01;
    let progress = |_: Progress| {};
    let crew = Crew::new(
        p.stores(),
        p.setting(),
        profile,
        "host".into(),
        WatchMode::Events,
        &progress,
    )
    .unwrap();
    run_worker(&crew, "ex-1").unwrap()
}

#[test]
fn hand_backs_and_stops_are_not_failed_attempts() {
    let p = Project::new();
    p.add("job", "a job", &[]);
    // Handed back three times (team stop, Ctrl-C, a supervisor that died): none failed.
    for number in 1..=3 {
        earlier_attempt(&p, "job", number, AttemptEnd::Stopped);
    }
    let report = crash_once_then_succeed(&p);
    assert_eq!(report.completed, ["job"], "{report:?}");
    let ends: Vec<AttemptEnd> = p
        .store
        .attempts(Some("job"))
        .unwrap()
        .iter()
        .map(|a| a.end)
        .collect();
    use AttemptEnd::{Completed, Crashed, Stopped};
    assert_eq!(ends, [Stopped, Stopped, Stopped, Crashed, Completed]);
}

#[test]
fn a_reset_starts_the_count_of_failed_attempts_again() {
    let p = Project::new();
    p.add("job", "a job", &[]);
    // Two crashes gave the task up; the lead reset it.
    earlier_attempt(&p, "job", 1, AttemptEnd::Crashed);
    earlier_attempt(&p, "job", 2, AttemptEnd::Crashed);
    p.store.claim(&ClaimRequest::next("ex-9")).unwrap().unwrap();
    p.store
        .fail("ex-9", "job", "gave up after 2 attempt(s)")
        .unwrap();
    p.store.reset("job", false).unwrap();
    assert!(p.task("job").reset_at.is_some());
    let report = crash_once_then_succeed(&p);
    assert_eq!(report.completed, ["job"], "{report:?}");
    assert_eq!(p.store.attempts(Some("job")).unwrap().len(), 4);
}

/// What an agent prints is bounded before Baton writes it: a 5 MB line on stdout and 3 MB on
/// stderr, then exit 1, fail the task with a cut reason, and the run ends.
#[test]
fn an_agent_that_floods_its_output_fails_its_task_with_a_cut_reason() {
    let p = Project::new();
    p.add("flood", "print far too much", &[]);
    let command = "head -c 5000000 /dev/zero | tr '\\0' x; echo; \
                   head -c 3000000 /dev/zero | tr '\\0' y >&2; echo >&2; exit 1";
    let progress = |_: Progress| {};
    let crew = Crew::new(
        p.stores(),
        p.setting(),
        Profile::for_command(command, false),
        "host".into(),
        WatchMode::Events,
        &progress,
    )
    .unwrap();
    let report = run_worker(&crew, "ex-1").unwrap();
    assert_eq!(report.failed, ["flood"], "{report:?}");
    assert_eq!(report.end, WorkerEnd::Drained);
    let task = p.task("flood");
    assert_eq!(task.status, TaskStatus::Failed);
    let reason = task.failure_reason.unwrap();
    assert!(reason.len() < 8 * 1024, "{} bytes", reason.len());
    assert!(
        reason.starts_with("the command exited with status 1"),
        "{reason:.200}"
    );
    let attempt = &p.store.attempts(Some("flood")).unwrap()[0];
    let said = attempt.last_message.as_deref().unwrap_or_default();
    assert!(said.len() <= 17 * 1024, "{} bytes kept", said.len());
}
