//! The desktop app end to end: the binary cargo built for this test, under Xvfb, driven
//! through `tauri-driver` and Debian's `WebKitWebDriver`. A task created in the UI lands in
//! `tasks.json`; a claim made in another process (this test, through the same `baton-api`
//! operations the CLI and MCP run) moves its card; dragging (or carrying with the keyboard) moves
//! it through legal transitions and changes the file; tasks are edited; the handoff graph
//! follows handoffs; a manual browser session is driven and finished; notifications are seen
//! on a private D-Bus bus; projects open from the recent list, a path or the GTK folder dialog
//! (typed into with xdotool). Screenshots of each state go to `target/desktop-e2e/` (test
//! artifacts, not in git).

use baton_test_support as support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use support::PATIENCE;
use support::claude::Host;
use support::scripted_api::ScriptedApi;
use support::team::committer;
use support::webdriver::Session;
use support::xvfb::{Xvfb, stop_gently};

/// A process stopped when the test ends, however it ends.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        stop_gently(&mut self.0);
    }
}

fn desktop_binary() -> PathBuf {
    support::cargo_bin("baton-desktop")
}

/// A temporary project. The test changes it as another process would, through the library's
/// operations by their catalogue names (what `baton` and the MCP tools run).
struct Project {
    dir: tempfile::TempDir,
    store: baton_folder::FolderStore,
}

impl Project {
    /// `baton leader init "Test goal"` in a new folder.
    fn init() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let store = baton_folder::FolderStore::init(dir.path(), "Test goal", None).unwrap();
        Project { dir, store }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn coordination(&self) -> PathBuf {
        self.store.layout().root().to_path_buf()
    }

    fn tasks_json(&self) -> Value {
        serde_json::from_slice(&std::fs::read(self.store.layout().tasks_file()).unwrap()).unwrap()
    }

    /// Runs the operation `name` with `request`; panics with the refusal.
    fn op(&self, name: &str, request: Value) -> Value {
        self.op_with_lease(name, request, baton_core::DEFAULT_LEASE)
    }

    /// [`Project::op`] as a process run with `--lease LEASE` (a worker's claim, heartbeat).
    fn op_with_lease(&self, name: &str, request: Value, lease: Duration) -> Value {
        let store = self.store.clone().with_lease(lease);
        let confinement = baton_core::Confinement::anywhere(self.path());
        let cx = baton_api::Context::folder(&store, &confinement);
        let entry = baton_api::find(name).unwrap_or_else(|| panic!("no operation {name}"));
        entry
            .call(&cx, request)
            .unwrap_or_else(|e| panic!("{name}: {e}"))
    }
}

fn tauri_driver() -> PathBuf {
    let home = PathBuf::from(std::env::var("HOME").unwrap()).join(".cargo/bin/tauri-driver");
    if home.exists() {
        return home;
    }
    PathBuf::from("tauri-driver")
}

fn status_of(p: &Project, id: &str) -> String {
    p.tasks_json()["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == id)
        .map(|t| t["status"].as_str().unwrap().to_string())
        .unwrap_or_default()
}

fn wait_file(p: &Project, what: &str, check: impl Fn(&Project) -> bool) {
    support::eventually(&format!("tasks.json to show {what}"), || check(p));
}

/// One app at a time: two WebKit apps and a browser at once are too much for this machine's
/// two cores to keep every wait within its deadline.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The app on `p` under its own Xvfb, driven through tauri-driver. Keep the returned guards
/// alive for the test.
fn launch(p: &Project) -> (Session, Running, Xvfb) {
    launch_with_env(p, &[])
}

/// Launches the app on `p` with extra environment variables (tauri-driver passes its own on),
/// and returns once the project's state is shown. Until then the header has no counts, and
/// their arrival moves the view buttons: a click aimed a moment before landed where a button
/// had been (the handoff graph's test once clicked past "Handoffs" that way).
fn launch_with_env(p: &Project, env: &[(&str, &str)]) -> (Session, Running, Xvfb) {
    let (session, driver, xvfb) = launch_app(&[p.path().to_str().unwrap()], env);
    session.wait_for("the project's state in the header", |s| {
        s.find_now("[data-testid=counts]").is_some()
    });
    (session, driver, xvfb)
}

fn launch_app(args: &[&str], env: &[(&str, &str)]) -> (Session, Running, Xvfb) {
    let xvfb = Xvfb::start(90..190, PATIENCE);
    let display = xvfb.display.clone();
    let port = support::free_port();
    let driver = Running(
        Command::new(tauri_driver())
            .args([
                "--port",
                &port.to_string(),
                "--native-port",
                &support::free_port().to_string(),
            ])
            .args(["--native-driver", "/usr/bin/WebKitWebDriver"])
            .env("DISPLAY", &display)
            // WebKitWebDriver's screenshots can hang for a minute when WebKit composites in
            // software, the app's default; the benchmark (bench/desktop.rs) runs the default.
            .env("WEBKIT_DISABLE_COMPOSITING_MODE", "0")
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("tauri-driver is missing: run ./scripts/test.sh, which installs it"),
    );
    let session = Session::start(
        port,
        json!({"alwaysMatch": {"tauri:options": {
            "application": desktop_binary(),
            "args": args,
        }}}),
    );
    (session, driver, xvfb)
}

/// Where screenshots go: test artifacts, not in git.
fn shots() -> PathBuf {
    support::artifacts_dir().join("desktop-e2e")
}

#[test]
fn the_board_creates_tasks_follows_other_processes_and_moves_cards_through_legal_transitions() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let p = Project::init();
    let shots = shots();
    let (session, _driver, _xvfb) = launch(&p);

    // The board of the project given on the command line.
    session.wait_for("the goal in the header", |s| {
        s.text("[data-testid=goal]") == "Test goal"
    });
    session.screenshot(&shots.join("1-empty-board.png"));

    // A task created in the UI lands in tasks.json.
    let description = session.find("[data-testid=new-task] [data-testid=field-description]");
    session.type_text(&description, "Task from the board");
    session.click(&session.find("[data-testid=add-task]"));
    wait_file(&p, "the new task", |p| {
        status_of(p, "task-1") == "available"
    });
    assert_eq!(
        p.tasks_json()["tasks"][0]["description"],
        "Task from the board"
    );
    session.find("[data-testid=card-task-1]");
    session.screenshot(&shots.join("2-task-created.png"));

    // A claim made by a worker's CLI moves the card, with no reload.
    p.op("task_claim", json!({"agent": "w1"}));
    session.wait_for("the card to move to claimed", |s| {
        s.attribute("[data-testid=card-task-1]", "data-status")
            .as_deref()
            == Some("claimed")
    });
    session.screenshot(&shots.join("3-claimed-by-cli.png"));

    // An illegal drop (claimed straight to done) snaps back with the reason.
    session.drag("[data-testid=card-task-1]", "[data-testid=column-done]");
    session.wait_for("the refusal", |s| {
        s.text("[data-testid=error]").contains("start it first")
    });
    assert_eq!(status_of(&p, "task-1"), "claimed");

    // Legal drops: start (as its owner), then complete with a summary.
    session.drag(
        "[data-testid=card-task-1]",
        "[data-testid=column-in_progress]",
    );
    wait_file(&p, "in_progress", |p| {
        status_of(p, "task-1") == "in_progress"
    });
    session.wait_for("the card in progress", |s| {
        s.attribute("[data-testid=card-task-1]", "data-status")
            .as_deref()
            == Some("in_progress")
    });
    session.drag("[data-testid=card-task-1]", "[data-testid=column-done]");
    // The summary comes prefilled (editable); completing records it.
    assert_eq!(
        session.property("[data-testid=words]", "value"),
        "Done (moved to done on the board)"
    );
    // The drag library swallows clicks for 50 ms after a drop (a real mouse's click lands
    // there); press until the press is taken, which closes the dialog.
    session.wait_for("the Complete button to be taken", |s| {
        match s.find_now("[data-testid=words-ok]") {
            Some(button) => {
                s.click(&button);
                false
            }
            None => true,
        }
    });
    session.wait_for("the task done in tasks.json", |_| {
        status_of(&p, "task-1") == "done"
    });
    let task = &p.tasks_json()["tasks"][0];
    assert_eq!(task["claimed_by"], "w1");
    assert_eq!(
        task["result"]["output"],
        "Done (moved to done on the board)"
    );
    session.wait_for("the card in done", |s| {
        s.attribute("[data-testid=card-task-1]", "data-status")
            .as_deref()
            == Some("done")
    });
    session.wait_for("the counts to show it done", |s| {
        s.text("[data-testid=counts]").contains("1 done")
    });
    session.screenshot(&shots.join("4-done.png"));

    // Side panels: the master plan, and the selected task's result report.
    session.wait_for("the master plan", |s| {
        s.text("[data-testid=side-text]").contains("Test goal")
    });
    session.click(&session.find("[data-testid=card-task-1]"));
    session.click(&session.find("[data-testid=side-panel] nav button:nth-child(3)"));
    session.wait_for("the task's result", |s| {
        s.text("[data-testid=side-text]")
            .contains("Done (moved to done on the board)")
    });

    // Aggregate with one click writes summary.md.
    session.click(&session.find("[data-testid=aggregate]"));
    session.wait_for("the aggregate notice", |s| {
        s.text("[data-testid=notice]").contains("1 done")
    });
    let summary = std::fs::read_to_string(p.coordination().join("summary.md")).unwrap();
    assert!(summary.contains("task-1"), "{summary}");
    session.screenshot(&shots.join("5-result-and-summary.png"));

    // The lead cancels a task that is no longer wanted, from its side panel, with a reason;
    // the library offers it (a done task has no cancel button).
    assert!(session.find_now("[data-testid=cancel-task]").is_none());
    p.op("task_add", json!({"description": "Not needed after all"}));
    session.click(&session.find("[data-testid=card-task-2]"));
    session.click(&session.find("[data-testid=side-panel] nav button:nth-child(3)"));
    session.click(&session.find("[data-testid=cancel-task]"));
    session.type_text(&session.find("[data-testid=cancel-reason]"), "scope cut");
    session.click(&session.find("[data-testid=cancel-confirm]"));
    wait_file(&p, "the cancelled task", |p| {
        status_of(p, "task-2") == "cancelled"
    });
    assert_eq!(p.tasks_json()["tasks"][1]["failure_reason"], "scope cut");
    session.wait_for("the card in the failed column", |s| {
        s.attribute("[data-testid=card-task-2]", "data-status")
            .as_deref()
            == Some("cancelled")
    });
    session.wait_for("the counts to show it cancelled", |s| {
        s.text("[data-testid=counts]").contains("1 cancelled")
    });
    session.screenshot(&shots.join("6-cancelled.png"));
    session.close();
}

fn signal(p: &Project) -> Option<serde_json::Value> {
    let text =
        std::fs::read_to_string(p.coordination().join("runs/1/signals/ui-test-done")).ok()?;
    serde_json::from_str(&text).ok()
}

fn browsers(p: &Project) -> Vec<serde_json::Value> {
    std::fs::read_dir(p.coordination().join("browsers"))
        .map(|dir| {
            dir.flatten()
                .filter_map(|e| serde_json::from_slice(&std::fs::read(e.path()).ok()?).ok())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_manual_browser_session_writes_the_signal_when_finished_or_when_its_window_closes() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let p = Project::init();
    let url = support::serve_page(
        "<html><head><title>Manual test page</title></head><body><h1>Try me</h1></body></html>",
    );
    // A stale signal from an earlier session must not survive a new one.
    p.op("signal_write", json!({"name": "ui-test-done"}));
    let (session, _driver, _xvfb) = launch(&p);

    // The manual session has a view of its own.
    session.click(&session.find("[data-testid=view-browser]"));
    let field = session.find("[data-testid=session-url]");
    session.execute("document.querySelector('[data-testid=session-url]').select()");
    session.type_text(&field, &url);
    session.click(&session.find("[data-testid=start-session]"));
    session.wait_for("the session's browser", |s| {
        s.text("[data-testid=browser-status]").contains("CDP port")
    });
    assert!(
        signal(&p).is_none(),
        "starting a session clears the stale signal"
    );
    let listed = browsers(&p);
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0]["headless"], false);
    assert!(
        listed[0]["owner"]
            .as_str()
            .unwrap()
            .contains("manual session")
    );
    let port = listed[0]["port"].as_u64().unwrap();
    // The page opens in it (an agent's proxy could attach to the same port); the session
    // starts once CDP answers, so the page may still be loading.
    session.wait_for("the page in the session's browser", |_| {
        let pages = std::process::Command::new("curl")
            .args(["-s", &format!("http://127.0.0.1:{port}/json/list")])
            .output()
            .unwrap();
        String::from_utf8_lossy(&pages.stdout).contains("Manual test page")
    });
    session.wait_for("the browser in the list of open browsers", |s| {
        s.text("[data-testid=browsers]")
            .contains(&format!("manual session) on :{port}"))
    });
    // The controls: open another page, reload it, take a screenshot (shown and saved).
    session.wait_for("the page's title in the controls", |s| {
        s.text("[data-testid=page-state]")
            .contains("Manual test page")
    });
    let second = support::serve_page(
        "<html><head><title>Second page</title></head><body><h1>Second</h1></body></html>",
    );
    let field = session.find("[data-testid=navigate-url]");
    session.type_text(&field, &second);
    session.click(&session.find("[data-testid=navigate]"));
    session.wait_for("the second page", |s| {
        s.text("[data-testid=page-state]")
            .contains(&format!("Second page — {second}"))
    });
    session.click(&session.find("[data-testid=reload-page]"));
    session.wait_for("the reload to finish", |s| {
        s.text("[data-testid=page-state]").contains("Second page")
            && s.attribute("[data-testid=reload-page]", "disabled")
                .is_none()
    });
    session.click(&session.find("[data-testid=screenshot]"));
    session.wait_for("the screenshot", |s| {
        s.find_now("[data-testid=screenshot-shown] img").is_some()
    });
    let saved: Vec<_> = std::fs::read_dir(p.coordination().join("screenshots"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(saved.len(), 1, "{saved:?}");
    assert!(std::fs::read(&saved[0]).unwrap().starts_with(b"\x89PNG"));
    assert!(
        session
            .text("[data-testid=screenshot-path]")
            .contains(&saved[0].display().to_string())
    );
    let shown = session.execute(
        "const img = document.querySelector('[data-testid=screenshot-shown] img'); \
         return img.complete && img.naturalWidth > 100;",
    );
    assert_eq!(shown, json!(true), "the screenshot is displayed");
    session.screenshot(&shots().join("6-manual-session.png"));

    session.click(&session.find("[data-testid=finish-session]"));
    session.wait_for("the signal", |_| signal(&p).is_some());
    assert_eq!(signal(&p).unwrap()["note"], "manual session finished");
    session.wait_for("the browser to stop", |_| browsers(&p).is_empty());

    // Closing the browser window (here: the browser going away) writes the signal too.
    p.op("signal_clear", json!({"name": "ui-test-done"}));
    session.click(&session.find("[data-testid=start-session]"));
    session.wait_for("a second session", |s| {
        s.text("[data-testid=browser-status]").contains("CDP port")
    });
    let pid = browsers(&p)[0]["pid"].as_u64().unwrap();
    std::process::Command::new("kill")
        .arg(pid.to_string())
        .status()
        .unwrap();
    session.wait_for("the signal after the window closed", |_| {
        signal(&p).is_some()
    });
    assert_eq!(signal(&p).unwrap()["note"], "browser window closed");
    session.wait_for("the session to end in the UI", |s| {
        s.find_now("[data-testid=start-session]").is_some()
    });
    session.close();
}

#[test]
fn the_handoff_graph_shows_the_chain_follows_new_handoffs_and_flags_conflicts() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let p = Project::init();
    p.op(
        "invoke_agent",
        json!({"agent": "analyst", "prompt": "Study the login flow"}),
    );
    p.op(
        "track_handoff",
        json!({
            "from_agent": "analyst",
            "to_agent": "architect",
            "context": {
                "summary": "Login uses JWT",
                "decisions": [{"decision": "Keep JWT", "rationale": "fewer moving parts"}],
                "open_questions": ["Rotate keys?"],
                "artifacts": ["docs/login.md"],
            },
        }),
    );
    let (session, _driver, _xvfb) = launch(&p);
    session.click(&session.find("[data-testid=view-graph]"));
    session.wait_for("the chain", |s| {
        let text = s.text("[data-testid=handoff-graph]");
        text.contains("analyst") && text.contains("sonnet · started") && text.contains("architect")
    });

    // Selecting the arrow shows what was handed on.
    session.click_at("[data-testid=edge-e1] .hit");
    session.wait_for("the handoff's details", |s| {
        let details = s.text("[data-testid=graph-details]");
        details.contains("Handoff analyst → architect")
            && details.contains("Login uses JWT")
            && details.contains("Keep JWT — fewer moving parts")
            && details.contains("Rotate keys?")
            && details.contains("docs/login.md")
    });
    session.screenshot(&shots().join("7-handoff-edge.png"));
    // A box is reached and chosen with the keyboard too.
    session.execute("document.querySelector('.graph .node.step').focus()");
    session.press_keys(&[ENTER]);
    session.wait_for("the box's invocation, chosen with Enter", |s| {
        s.text("[data-testid=graph-details]")
            .contains("Invocation inv-")
    });

    // A parallel review recorded by other processes appears without a reload; its
    // disagreement is flagged on the join.
    let started = p.op(
        "start_parallel_execution",
        json!({
            "agents": [
                {"agent": "architect", "prompt": "Review the design"},
                {"agent": "security", "prompt": "Review the threats"},
            ],
            "aggregation_strategy": "vote",
        }),
    );
    session.wait_for("the fork", |s| s.find_now(".node.fork").is_some());
    for (i, recommendation) in ["split", "keep"].iter().enumerate() {
        let id = started["invocations"][i]["id"].as_str().unwrap();
        p.op(
            "complete_invocation",
            json!({
                "invocation_id": id,
                "status": "completed",
                "output": format!("Recommendation: {recommendation}"),
            }),
        );
    }
    let run = started["parallel_id"].as_str().unwrap();
    p.op("aggregate_parallel_results", json!({"parallel_id": run}));
    session.wait_for("the conflict on the join", |s| {
        s.find_now(".node.join.conflict").is_some()
            && s.text("[data-testid=handoff-graph]")
                .contains("vote conflict")
    });
    let conflicting = session.execute("return document.querySelectorAll('.edge.conflict').length");
    assert_eq!(
        conflicting,
        json!(2),
        "both edges into the join are flagged"
    );
    session.screenshot(&shots().join("8-handoff-conflict.png"));
    session.close();
}

/// The state an agent's row shows.
fn agent_state(session: &Session, agent: &str) -> Option<String> {
    let row = format!("[data-testid=agent-{agent}]");
    session.find_now(&row)?;
    session.attribute(&row, "data-state")
}

#[test]
fn the_agents_view_shows_who_is_doing_what_and_a_stale_agent_s_task_is_released_from_its_row() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let p = Project::init();
    for (i, what) in [
        "Write the parser",
        "Write the lexer",
        "Write the docs",
        "Later",
    ]
    .iter()
    .enumerate()
    {
        p.op("task_add", json!({"description": what, "priority": i + 1}));
    }
    // Three workers, as their CLIs would: two under the usual lease, one under a short one it
    // will stop renewing.
    for agent in ["w1", "w2"] {
        let claim = p.op("task_claim", json!({"agent": agent}));
        let id = claim["task"]["id"].as_str().unwrap().to_string();
        p.op("task_start", json!({"agent": agent, "task": id}));
    }
    let short = Duration::from_secs(4);
    let claim = p.op_with_lease("task_claim", json!({"agent": "w3"}), short);
    assert_eq!(claim["task"]["id"], "task-3");
    p.op_with_lease(
        "task_start",
        json!({"agent": "w3", "task": "task-3"}),
        short,
    );

    let bus = NotificationBus::start();
    let (session, _driver, _xvfb) =
        launch_with_env(&p, &[("DBUS_SESSION_BUS_ADDRESS", &bus.address)]);
    session.click(&session.find("[data-testid=view-agents]"));
    session.wait_for("a row per agent, each working on its task", |s| {
        ["w1", "w2"]
            .iter()
            .all(|a| agent_state(s, a).as_deref() == Some("working"))
            && agent_state(s, "w3").is_some()
    });
    let row = session.text("[data-testid=agent-w1]");
    assert!(row.contains("task-1: Write the parser"), "{row}");
    assert!(session.text("[data-testid=agent-w2]").contains("task-2"));
    session.screenshot(&shots().join("9-agents-working.png"));

    // w1 finishes its task (another process): its row follows, live.
    p.op(
        "task_complete",
        json!({"agent": "w1", "task": "task-1", "summary": "parsed"}),
    );
    session.wait_for("w1 idle", |s| {
        agent_state(s, "w1").as_deref() == Some("idle")
    });
    let row = session.text("[data-testid=agent-w1]");
    assert!(row.contains("COMPLETE: task-1"), "{row}");

    // w3 sends no heartbeat: with nothing written, its row turns stale when its lease passes.
    session.wait_for("w3 stale", |s| {
        agent_state(s, "w3").as_deref() == Some("stale")
    });
    assert!(
        session
            .text("[data-testid=agents-summary]")
            .contains("stale: w3"),
        "{}",
        session.text("[data-testid=agents-summary]")
    );
    session.screenshot(&shots().join("10-agents-stale.png"));
    // The lead hears of it without looking: a notification, once.
    session.wait_for("the stale notification", |_| {
        let seen = bus.seen();
        seen.contains("Agent stale: w3") && seen.contains("task-3 (Write the docs)")
    });
    assert_eq!(
        bus.seen().matches("Agent stale").count(),
        1,
        "{}",
        bus.seen()
    );
    // Its log, then its task released from the row.
    session.click(&session.find("[data-testid=agent-w3] [data-testid=agent-open-log]"));
    session.wait_for("w3's log", |s| {
        s.text("[data-testid=agent-log]").contains("START")
    });
    session.click(&session.find("[data-testid=agent-w3] [data-testid=agent-reset-task]"));
    wait_file(&p, "task-3 available again", |p| {
        status_of(p, "task-3") == "available"
    });
    session.wait_for("w3 holding nothing", |s| {
        s.find_now("[data-testid=agent-w3] [data-testid=agent-reset-task]")
            .is_none()
            && !s.text("[data-testid=agent-w3]").contains("task-3:")
    });
    // Show a held task on the board.
    session.click(&session.find("[data-testid=agent-w2] [data-testid=agent-show-task]"));
    session.wait_for("the board with task-2 selected", |s| {
        s.text_now("[data-testid=board] .card.selected")
            .is_some_and(|text| text.contains("Write the lexer"))
    });
    session.close();
}

/// Runs axe-core (ui/node_modules/axe-core) on the page as it is; the serious and critical
/// violations, as "rule: where".
fn accessibility_violations(session: &Session) -> Vec<String> {
    let axe = support::package_file("../ui/node_modules/axe-core/axe.min.js");
    let source = std::fs::read_to_string(&axe).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (run ./scripts/test.sh, which installs the UI's packages)",
            axe.display()
        )
    });
    session.execute(&source);
    session.execute(
        "window.__axe = null; axe.run(document, {resultTypes: ['violations']}).then(r => { window.__axe = r.violations; });",
    );
    let mut found = Value::Null;
    session.wait_for("axe-core's answer", |s| {
        found = s.execute("return window.__axe");
        !found.is_null()
    });
    found
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| matches!(v["impact"].as_str(), Some("serious" | "critical")))
        .map(|v| {
            let targets: Vec<String> = v["nodes"]
                .as_array()
                .unwrap()
                .iter()
                .take(3)
                .map(|n| n["target"].to_string())
                .collect();
            format!("{}: {}", v["id"], targets.join(" "))
        })
        .collect()
}

/// A board of 1,000 tasks written at once: `Build part N`, every hundredth `Refactor the
/// parser, part N`; priorities 1 to 5 (task-1 to task-3 first); task-2 and task-3 wait for
/// task-1.
fn thousand_tasks(p: &Project) {
    use baton_core::NewTask;
    let mut file = baton_core::TaskFile::new(baton_core::Timestamp::now());
    for i in 1..=1000u32 {
        let description = if i % 100 == 0 {
            format!("Refactor the parser, part {i}")
        } else {
            format!("Build part {i}")
        };
        let dependencies = if i == 2 || i == 3 {
            vec!["task-1".to_string()]
        } else {
            Vec::new()
        };
        file.add_task(
            NewTask {
                description,
                // The first three first in their column, to select them.
                priority: if i <= 3 { 1 } else { 1 + i % 5 },
                dependencies,
                ..NewTask::default()
            },
            baton_core::Timestamp::now(),
        )
        .unwrap();
    }
    let bytes = baton_folder::encode(&file).unwrap();
    baton_fs::write_atomic(&p.store.layout().tasks_file(), &bytes).unwrap();
}

fn card_ids(session: &Session) -> Vec<String> {
    let ids = session.execute(
        "return [...document.querySelectorAll('[data-testid=board] .card')].map(c => c.dataset.testid.slice(5))",
    );
    let mut ids: Vec<String> = ids
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    ids.sort_by_key(|id| id[5..].parse::<u32>().unwrap());
    ids
}

#[test]
fn filters_narrow_a_thousand_task_board_are_kept_and_every_view_passes_axe_in_light_and_dark() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let p = Project::init();
    thousand_tasks(&p);
    for id in ["task-200", "task-300"] {
        p.op("task_claim", json!({"agent": "w1", "task": id}));
    }
    p.op("task_claim", json!({"agent": "w2", "task": "task-500"}));

    let (session, driver, xvfb) = launch(&p);
    session.wait_for("the board", |s| {
        s.text("[data-testid=filter-count]") == "1000 tasks"
    });
    session.type_text(&session.find("[data-testid=filter-text]"), "parser");
    session.wait_for("ten parser tasks", |s| {
        s.text("[data-testid=filter-count]") == "10 of 1000 tasks"
    });
    let expected: Vec<String> = (1..=10).map(|k| format!("task-{}", k * 100)).collect();
    assert_eq!(card_ids(&session), expected);
    session.click(&session.find("[data-testid=filter-owner] option[value=w1]"));
    session.wait_for("w1's parser tasks", |s| {
        s.text("[data-testid=filter-count]") == "2 of 1000 tasks"
    });
    assert_eq!(card_ids(&session), ["task-200", "task-300"]);
    assert_eq!(session.text("[data-testid=count-claimed]"), "2 of 3");
    assert_eq!(session.text("[data-testid=count-available]"), "0 of 997");
    session.screenshot(&shots().join("11-board-filtered.png"));
    session.close();
    drop((driver, xvfb));

    // A restart keeps them.
    let (session, driver, xvfb) = launch(&p);
    session.wait_for("the kept filters", |s| {
        s.text("[data-testid=filter-count]") == "2 of 1000 tasks"
    });
    assert_eq!(
        session.property("[data-testid=filter-text]", "value"),
        "parser"
    );
    session.click(&session.find("[data-testid=filter-clear]"));
    session.wait_for("every card again", |s| {
        s.text("[data-testid=filter-count]") == "1000 tasks"
    });

    // The blockers' filter narrows the board too, and keeps its choice when the board changes
    // (its options are drawn apart from the board's changes).
    session.click(&session.find("[data-testid=filter-blocked-by] option[value=task-1]"));
    session.wait_for("the tasks waiting for task-1", |s| {
        s.text("[data-testid=filter-count]") == "2 of 1000 tasks"
    });
    assert_eq!(card_ids(&session), ["task-2", "task-3"]);
    p.op(
        "task_add",
        json!({"description": "Check part 1", "depends": ["task-1"]}),
    );
    session.wait_for("a task added waiting for task-1", |s| {
        s.text("[data-testid=filter-count]") == "3 of 1001 tasks"
    });
    assert_eq!(card_ids(&session), ["task-2", "task-3", "task-1001"]);
    assert_eq!(
        session.property("[data-testid=filter-blocked-by]", "value"),
        "task-1"
    );
    session.click(&session.find("[data-testid=filter-clear]"));
    session.wait_for("every card again", |s| {
        s.text("[data-testid=filter-count]") == "1001 tasks"
    });

    // Selecting a card shows what it waits for and what waits for it.
    session.click(&session.find("[data-testid=card-task-1]"));
    session.wait_for("task-1's relations", |s| {
        s.text("[data-testid=relations]") == "task-2, task-3, task-1001 wait for task-1"
    });
    let waiting = session
        .attribute("[data-testid=card-task-2]", "class")
        .unwrap_or_default();
    assert!(waiting.contains("waiting"), "{waiting}");
    session.click(&session.find("[data-testid=card-task-2]"));
    session.wait_for("task-2's relations", |s| {
        s.text("[data-testid=relations]") == "task-2 waits for task-1"
    });
    let waited = session
        .attribute("[data-testid=card-task-1]", "class")
        .unwrap_or_default();
    assert!(waited.contains("waited-on"), "{waited}");
    session.close();
    drop((driver, xvfb));

    // Every view, light and dark, at two window sizes: no serious accessibility violations,
    // and a screenshot of each for people to look at.
    for (theme, env, (width, height)) in [
        ("light", &[][..], (1280, 800)),
        ("dark", &[("GTK_THEME", "Adwaita:dark")][..], (1920, 1080)),
    ] {
        let (session, _driver, _xvfb) = launch_with_env(&p, env);
        session.set_window_size(width, height);
        let dark = session.execute("return matchMedia('(prefers-color-scheme: dark)').matches");
        assert_eq!(
            dark,
            json!(theme == "dark"),
            "the app follows the desktop's theme"
        );
        for view in [
            "board", "graph", "agents", "team", "inbox", "review", "browser",
        ] {
            session.click(&session.find(&format!("[data-testid=view-{view}]")));
            let shown = match view {
                "board" => "[data-testid=board]",
                "browser" => "[data-testid=browser-session]",
                "graph" => "[data-testid=handoff-graph]",
                "team" => "[data-testid=team-start]",
                "inbox" => "[data-testid=inbox-view]",
                "review" => "[data-testid=review-view]",
                _ => "[data-testid=agents-summary]",
            };
            session.find(shown);
            let violations = accessibility_violations(&session);
            assert!(violations.is_empty(), "{view} ({theme}): {violations:#?}");
            session.screenshot(&shots().join(format!("views-{view}-{theme}-{width}x{height}.png")));
        }
        session.close();
    }
}

/// A private D-Bus session bus, and everything sent to the notification service on it.
struct NotificationBus {
    address: String,
    seen: std::sync::Arc<std::sync::Mutex<String>>,
    _bus: Running,
    _monitor: Running,
}

impl NotificationBus {
    fn start() -> NotificationBus {
        use std::io::{BufRead, BufReader};
        let mut bus = Command::new("dbus-daemon")
            .args(["--session", "--nofork", "--print-address=1"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("dbus-daemon is missing: run ./scripts/test.sh, which installs dbus");
        let mut address = String::new();
        BufReader::new(bus.stdout.take().unwrap())
            .read_line(&mut address)
            .unwrap();
        let address = address.trim().to_string();
        let mut monitor = Command::new("dbus-monitor")
            .args([
                "--address",
                &address,
                "interface='org.freedesktop.Notifications'",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let seen = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let sink = seen.clone();
        let out = monitor.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                let mut seen = sink.lock().unwrap();
                seen.push_str(&line);
                seen.push('\n');
            }
        });
        // The monitor is listening once it has printed its own NameAcquired signal.
        support::eventually("dbus-monitor to start", || {
            seen.lock().unwrap().contains("NameAcquired")
        });
        NotificationBus {
            address,
            seen,
            _bus: Running(bus),
            _monitor: Running(monitor),
        }
    }

    fn seen(&self) -> String {
        self.seen.lock().unwrap().clone()
    }

    /// dunst serving this bus's notifications on `xvfb`'s screen, until dropped. Whatever was
    /// sent before it started is not shown: start it before what it should show.
    fn show_with_dunst(&self, xvfb: &Xvfb) -> Running {
        let dunst = Running(
            Command::new("dunst")
                .args(["-config", "/dev/null"])
                .env("DBUS_SESSION_BUS_ADDRESS", &self.address)
                .env("DISPLAY", &xvfb.display)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("dunst is missing: run ./scripts/test.sh, which installs it"),
        );
        support::eventually("dunst to serve notifications", || {
            self.dunstctl(&["is-paused"]).trim() == "false"
        });
        dunst
    }

    /// `dunstctl ARGS` on this bus; its output.
    fn dunstctl(&self, args: &[&str]) -> String {
        let out = Command::new("dunstctl")
            .args(args)
            .env("DBUS_SESSION_BUS_ADDRESS", &self.address)
            .output()
            .expect("dunstctl is missing: run ./scripts/test.sh, which installs dunst");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

#[test]
fn a_failed_task_and_the_last_finished_task_raise_desktop_notifications() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let bus = NotificationBus::start();
    let p = Project::init();
    p.op("task_add", json!({"description": "Write the parser"}));
    let (session, _driver, _xvfb) =
        launch_with_env(&p, &[("DBUS_SESSION_BUS_ADDRESS", &bus.address)]);
    session.wait_for("the board", |s| {
        s.text("[data-testid=counts]").contains("1 available")
    });

    // A worker's CLI fails the task: the lead is told, with the reason.
    p.op("task_claim", json!({"agent": "w1"}));
    p.op(
        "task_fail",
        json!({"agent": "w1", "task": "task-1", "reason": "the grammar is ambiguous"}),
    );
    session.wait_for("the failure notification", |_| {
        let seen = bus.seen();
        seen.contains("member=Notify")
            && seen.contains("Task failed: task-1 (w1)")
            && seen.contains("the grammar is ambiguous")
    });
    assert!(!bus.seen().contains("All tasks finished"));

    // The last open task is completed: one more notification, with the totals.
    p.op("task_add", json!({"description": "Document it"}));
    p.op("task_claim", json!({"agent": "w2"}));
    p.op("task_start", json!({"agent": "w2", "task": "task-2"}));
    p.op(
        "task_complete",
        json!({"agent": "w2", "task": "task-2", "summary": "Documented"}),
    );
    session.wait_for("the all-finished notification", |_| {
        let seen = bus.seen();
        seen.contains("All tasks finished") && seen.contains("1 done, 1 failed")
    });
    assert_eq!(
        bus.seen().matches("member=Notify").count(),
        2,
        "{}",
        bus.seen()
    );
    session.close();
}

#[test]
fn projects_open_from_the_recent_list_or_a_path_and_a_new_folder_is_offered_init() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let known = Project::init();
    let config = tempfile::tempdir().unwrap();
    let nowhere = tempfile::tempdir().unwrap(); // no .coordination/ here or above
    let fresh = tempfile::tempdir().unwrap();
    std::fs::write(
        config.path().join("recent.json"),
        serde_json::to_string(&json!([
            {"path": known.path(), "goal": "Test goal"},
            {"path": "/no/such/project", "goal": "Gone"},
        ]))
        .unwrap(),
    )
    .unwrap();
    let (session, _driver, _xvfb) = launch_app(
        &[],
        &[
            ("BATON_DESKTOP_CONFIG", config.path().to_str().unwrap()),
            ("BATON_DIR", nowhere.path().to_str().unwrap()),
        ],
    );
    session.wait_for("the recent projects", |s| {
        s.text("[data-testid=recent-projects]")
            .contains("Test goal")
    });
    let gone = session.execute(
        "return [...document.querySelectorAll('[data-testid=recent-projects] button')].map(b => b.disabled)",
    );
    assert_eq!(
        gone,
        json!([false, true]),
        "a vanished project cannot be opened"
    );
    session.screenshot(&shots().join("9-open-project.png"));

    // One click opens a recent project.
    session.click(&session.find("[data-testid=recent-projects] button"));
    session.wait_for("the board of the recent project", |s| {
        s.text("[data-testid=goal]") == "Test goal"
    });

    // A folder without .coordination/ is offered leader init.
    session.click(&session.find("[data-testid=switch-project]"));
    let field = session.find("[data-testid=project-path]");
    session.type_text(&field, fresh.path().to_str().unwrap());
    session.click(&session.find("[data-testid=open-path]"));
    session.wait_for("the offer to start a project", |s| {
        s.text("[data-testid=offer-init]")
            .contains("has no .coordination/ yet")
    });
    let goal = session.find("[data-testid=init-goal]");
    session.type_text(&goal, "Fresh start");
    session.click(&session.find("[data-testid=init-project]"));
    session.wait_for("the new project's board", |s| {
        s.text("[data-testid=goal]") == "Fresh start"
    });
    assert!(fresh.path().join(".coordination/tasks.json").is_file());
    let recent: serde_json::Value =
        serde_json::from_slice(&std::fs::read(config.path().join("recent.json")).unwrap()).unwrap();
    let paths: Vec<&str> = recent
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        [
            fresh.path().to_str().unwrap(),
            known.path().to_str().unwrap(),
            "/no/such/project"
        ]
    );
    session.close();
}

const SPACE: &str = "\u{E00D}";
const ENTER: &str = "\u{E007}";
const ARROW_RIGHT: &str = "\u{E014}";

#[test]
fn cards_move_with_the_keyboard_and_long_columns_show_a_page_at_a_time() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let p = Project::init();
    for n in 1..=60 {
        p.op(
            "task_add",
            json!({"description": format!("Task number {n}")}),
        );
    }
    let (session, _driver, _xvfb) = launch(&p);
    session.wait_for("one page of cards", |s| {
        s.text("[data-testid=more-available]")
            .contains("Show 10 more of 10")
    });
    let drawn = session
        .execute("return document.querySelectorAll('[data-testid=column-available] .card').length");
    assert_eq!(drawn, json!(50));
    session.click(&session.find("[data-testid=more-available]"));
    session.wait_for("the rest of the column", |s| {
        s.find_now("[data-testid=more-available]").is_none()
            && s.find_now("[data-testid=card-task-60]").is_some()
    });

    // Focus the first card, pick it up with Space, carry it right, drop it with Space:
    // a keyboard move claims the task as a mouse drop does.
    session.execute("document.querySelector('[data-testid=card-task-1]').focus()");
    // Focus selects, as a click does.
    session.wait_for("task-1 selected by focus", |s| {
        s.find_now("[data-testid=card-task-1].selected").is_some()
            && s.text("[data-testid=side-panel] nav button:nth-child(3)") == "task-1"
    });
    session.press_keys(&[SPACE]);
    let mut keys = vec![ARROW_RIGHT; 8];
    keys.push(SPACE);
    session.press_keys(&keys);
    session.wait_for("the card in the claimed column", |s| {
        s.find_now("[data-testid=column-claimed] [data-testid=card-task-1]")
            .is_some()
    });
    assert_eq!(status_of(&p, "task-1"), "claimed");
    session.wait_for("the counts", |s| {
        s.text("[data-testid=counts]")
            .contains("59 available · 1 claimed")
    });
    session.screenshot(&shots().join("10-keyboard-move.png"));

    // Editing a task: every field, a dependency chosen from the others.
    session.click(&session.find("[data-testid=card-task-2]"));
    session.wait_for("task-2's panel", |s| {
        s.text("[data-testid=side-panel] nav button:nth-child(3)") == "task-2"
    });
    session.click(&session.find("[data-testid=side-panel] nav button:nth-child(3)"));
    session.click(&session.find("[data-testid=edit-task-open]"));
    let form = "[data-testid=edit-task]";
    let description = session.find(&format!("{form} [data-testid=field-description]"));
    session.execute(&format!(
        "document.querySelector('{form} [data-testid=field-description]').select()"
    ));
    session.type_text(&description, "Edited on the board");
    session.execute(&format!(
        "document.querySelector('{form} [data-testid=field-priority]').select()"
    ));
    session.type_text(
        &session.find(&format!("{form} [data-testid=field-priority]")),
        "1",
    );
    session.type_text(
        &session.find(&format!("{form} [data-testid=field-files]")),
        "src/a.rs, src/b.rs",
    );
    session.type_text(
        &session.find(&format!("{form} [data-testid=field-hints]")),
        "keep it small",
    );
    // Dependencies are found by searching, and added from the matches.
    session.type_text(
        &session.find(&format!("{form} [data-testid=depends-search]")),
        "task-3",
    );
    session.click(&session.find(&format!("{form} [data-testid=dep-option-task-3]")));
    session.find(&format!("{form} [data-testid=dep-remove-task-3]"));
    session.click(&session.find("[data-testid=save-task]"));
    wait_file(&p, "the edit", |p| {
        p.tasks_json()["tasks"][1]["description"] == "Edited on the board"
    });
    let task = &p.tasks_json()["tasks"][1];
    assert_eq!(task["priority"], 1);
    assert_eq!(task["dependencies"], json!(["task-3"]));
    assert_eq!(task["context"]["files"], json!(["src/a.rs", "src/b.rs"]));
    assert_eq!(task["context"]["hints"], "keep it small");

    // Editing task-3, which task-2 now depends on, offers neither itself nor task-2. Clicked
    // once the board shows the edit: task-2 moves to the top of its column when it does, and
    // a click while the column re-renders could land on a card as it moves (it failed so
    // under load, the panel never opening).
    session.wait_for("the board to show task-2's edit", |s| {
        s.text("[data-testid=card-task-2]")
            .contains("waits for task-3")
    });
    session.click(&session.find("[data-testid=card-task-3]"));
    session.wait_for("task-3's panel", |s| {
        s.text("[data-testid=side-panel] nav button:nth-child(3)") == "task-3"
    });
    session.click(&session.find("[data-testid=side-panel] nav button:nth-child(3)"));
    session.click(&session.find("[data-testid=edit-task-open]"));
    session.find(form);
    let allowed = session.attribute(
        &format!("{form} [data-testid=field-depends]"),
        "data-allowed",
    );
    assert_eq!(allowed.as_deref(), Some("58"));
    let search = format!("{form} [data-testid=depends-search]");
    for (typed, absent, present) in [
        ("task-2", "task-2", "task-20"),
        ("task-3", "task-3", "task-30"),
    ] {
        session.execute(&format!(
            "const f = document.querySelector('{search}'); \
             Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set.call(f, ''); \
             f.dispatchEvent(new Event('input', {{bubbles: true}}));"
        ));
        session.type_text(&session.find(&search), typed);
        session.wait_for("the matches", |s| {
            s.find_now(&format!("{form} [data-testid=dep-option-{present}]"))
                .is_some()
        });
        assert!(
            session
                .find_now(&format!("{form} [data-testid=dep-option-{absent}]"))
                .is_none(),
            "{absent} is offered"
        );
    }
    session.close();
}

/// Runs xdotool on `display`; its output.
fn xdotool(xvfb: &Xvfb, args: &[&str]) -> String {
    let out = Command::new("xdotool")
        .args(args)
        .env("DISPLAY", &xvfb.display)
        .output()
        .expect("xdotool is missing: run ./scripts/test.sh, which installs it");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_folder_dialog_opens_the_chosen_project() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let known = Project::init();
    let config = tempfile::tempdir().unwrap();
    let nowhere = tempfile::tempdir().unwrap();
    let (session, _driver, display) = launch_app(
        &[],
        &[
            ("BATON_DESKTOP_CONFIG", config.path().to_str().unwrap()),
            ("BATON_DIR", nowhere.path().to_str().unwrap()),
        ],
    );
    // The desktop's own folder chooser (GTK) opens in the folder the field names; the lead
    // confirms it from the keyboard: Ctrl+L (the location field, left empty), Enter.
    let field = session.find("[data-testid=project-path]");
    session.execute("document.querySelector('[data-testid=project-path]').select()");
    session.type_text(&field, &known.path().display().to_string());
    session.click(&session.find("[data-testid=choose-folder]"));
    let mut window = String::new();
    session.wait_for("the folder dialog", |_| {
        window = xdotool(
            &display,
            &["search", "--onlyvisible", "--name", "Open a project folder"],
        )
        .lines()
        .next()
        .unwrap_or_default()
        .to_string();
        !window.is_empty()
    });
    xdotool(&display, &["windowfocus", "--sync", &window]);
    xdotool(&display, &["key", "ctrl+l"]);
    xdotool(&display, &["key", "Return"]);
    session.wait_for("the chosen project", |s| {
        s.find_now("[data-testid=goal]").is_some()
    });
    assert_eq!(session.text("[data-testid=goal]"), "Test goal");
    session.close();
}

/// The lead's desktop on machine A opens a project kept in PostgreSQL (URL, project name and a
/// typed password, which is never written down), and a worker on machine B (a folder of its
/// own, the database over TCP, the same `baton-api` operations its CLI runs) claims, starts
/// and completes a task: the card moves live, from the database's notifications. Reopened from
/// the recent list, the app asks for the password.
#[test]
fn a_desktop_on_one_machine_follows_a_postgres_project_a_worker_on_another_changes() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let server = support::pg::PgServer::shared();
    let url = server.url_without_password();
    let name = format!("desk-{}", std::process::id());
    let b_folder = tempfile::tempdir().unwrap();
    let (b, _) = baton_api::OpenProject::init_database(
        b_folder.path(),
        server.url(),
        Some(&name),
        "Ship it",
        None,
    )
    .unwrap();
    let confinement = baton_core::Confinement::project(b_folder.path()).unwrap();
    let on_b = |op: &str, request: Value| {
        baton_api::find(op)
            .unwrap()
            .call(&b.context(&confinement), request)
            .unwrap_or_else(|e| panic!("{op}: {e}"))
    };
    on_b(
        "task_add",
        json!({"description": "Wire the API", "id": "api"}),
    );

    let folder = tempfile::tempdir().unwrap(); // machine A's side of the project
    let config = tempfile::tempdir().unwrap();
    let nowhere = tempfile::tempdir().unwrap();
    let (session, _driver, _xvfb) = launch_app(
        &[],
        &[
            ("BATON_DESKTOP_CONFIG", config.path().to_str().unwrap()),
            ("BATON_DIR", nowhere.path().to_str().unwrap()),
        ],
    );
    session.find("[data-testid=open-project]");
    session.type_text(
        &session.find("[data-testid=project-path]"),
        folder.path().to_str().unwrap(),
    );
    session.click(&session.find("[data-testid=database-form] summary"));
    session.type_text(&session.find("[data-testid=database-url]"), &url);
    session.type_text(&session.find("[data-testid=database-project]"), &name);
    session.type_text(
        &session.find("[data-testid=database-password]"),
        &server.password(),
    );
    session.click(&session.find("[data-testid=connect-database]"));
    session.wait_for("the database project's board", |s| {
        s.text("[data-testid=goal]") == "Ship it"
    });
    assert!(
        session
            .text("[data-testid=store]")
            .contains("in PostgreSQL"),
        "the window says where the project is kept"
    );
    session.find("[data-testid=card-api]");
    session.screenshot(&shots().join("12-postgres-board.png"));

    // The worker on B: each step reaches A's board from the database, with no reload.
    for (op, request, status) in [
        ("task_claim", json!({"agent": "b1"}), "claimed"),
        (
            "task_start",
            json!({"agent": "b1", "task": "api"}),
            "in_progress",
        ),
        (
            "task_complete",
            json!({"agent": "b1", "task": "api", "summary": "Wired"}),
            "done",
        ),
    ] {
        on_b(op, request);
        session.wait_for(&format!("the card to show {status}"), |s| {
            s.attribute("[data-testid=card-api]", "data-status")
                .as_deref()
                == Some(status)
        });
    }
    session.wait_for("the counts to show it done", |s| {
        s.text("[data-testid=counts]").contains("1 done")
    });
    session.screenshot(&shots().join("13-postgres-done-by-another-machine.png"));

    // A ready card whose files B's worker holds says who holds them.
    on_b(
        "task_add",
        json!({"description": "Users", "id": "users", "files": ["src/api/users.ts"], "priority": 1}),
    );
    on_b(
        "task_add",
        json!({"description": "All of the API", "id": "all", "files": ["src/api/"], "priority": 2}),
    );
    on_b("task_claim", json!({"agent": "b2", "task": "users"}));
    session.wait_for("the waiting card to name the holder", |s| {
        s.text_now("[data-testid=held-all]")
            .is_some_and(|text| text == "waits on files held by b2 (users)")
    });

    // Handoffs recorded on B appear in A's handoff graph: the first when the view opens, the
    // second while it is open, from the database's notifications.
    let handoff = |from: &str, to: &str| {
        on_b(
            "track_handoff",
            json!({"from_agent": from, "to_agent": to,
                   "context": {"summary": format!("{from} done on machine B")}}),
        );
    };
    handoff("implementer", "qa");
    session.click(&session.find("[data-testid=view-graph]"));
    session.wait_for("B's first handoff in A's graph", |s| {
        s.text("[data-testid=handoff-graph]")
            .contains("implementer")
    });
    handoff("qa", "security");
    session.wait_for("B's second handoff, live", |s| {
        s.text("[data-testid=handoff-graph]").contains("security")
    });
    session.click(&session.find("[data-testid=view-board]"));

    // The password was used, never written: not in A's pointer, not in the recent list.
    let password = server.password();
    for file in [
        folder.path().join(".coordination/store.json"),
        config.path().join("recent.json"),
    ] {
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(
            !text.contains(&password),
            "{} holds the password",
            file.display()
        );
    }

    // Reopened from the recent list, with no password anywhere: the app asks for it.
    session.click(&session.find("[data-testid=switch-project]"));
    session.click(&session.find("[data-testid=recent-projects] button"));
    session.wait_for("the password prompt", |s| {
        s.find_now("[data-testid=ask-password]").is_some()
    });
    assert!(
        session
            .text("[data-testid=open-error]")
            .contains("asks for a password"),
        "{}",
        session.text("[data-testid=open-error]")
    );
    session.type_text(&session.find("[data-testid=password]"), &password);
    session.click(&session.find("[data-testid=open-with-password]"));
    session.wait_for("the board again", |s| {
        s.attribute("[data-testid=card-api]", "data-status")
            .as_deref()
            == Some("done")
    });
    session.close();
}

#[test]
fn an_agents_question_raises_a_desktop_notification_at_once() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let bus = NotificationBus::start();
    let p = Project::init();
    p.op("task_add", json!({"description": "Pick the port"}));
    let (session, _driver, xvfb) =
        launch_with_env(&p, &[("DBUS_SESSION_BUS_ADDRESS", &bus.address)]);
    session.wait_for("the board", |s| {
        s.text("[data-testid=counts]").contains("1 available")
    });
    // A real notification daemon shows them on the app's screen.
    let _daemon = bus.show_with_dunst(&xvfb);
    std::thread::scope(|scope| {
        // An agent's ask_lead waits on another thread, as it would in another process.
        let asking = scope.spawn(|| {
            p.op(
                "ask_lead",
                json!({"question": "Which port, 8080 or 9090?", "task": "task-1",
                       "agent": "cc1", "timeout_seconds": 120}),
            )
        });
        session.wait_for("the question's notification", |_| {
            let seen = bus.seen();
            seen.contains("member=Notify")
                && seen.contains("cc1 asks on task-1")
                && seen.contains("Which port, 8080 or 9090?")
        });
        // A click on the notification (dunst performs its default action) brings the window
        // forward on the Inbox, where the question waits.
        session.wait_for("the notification on screen", |_| {
            bus.dunstctl(&["count", "displayed"]).trim() == "1"
        });
        assert!(session.find_now("[data-testid=inbox-view]").is_none());
        bus.dunstctl(&["action", "0"]);
        session.wait_for("the Inbox", |s| {
            s.find_now("[data-testid=question-q-1]").is_some()
        });
        p.op("answer_question", json!({"id": "q-1", "answer": "8080"}));
        let outcome = asking.join().unwrap();
        assert_eq!(outcome["answer"], "8080", "{outcome}");
    });
    session.close();
}

/// The `baton` CLI built beside the app (the Team view starts the team through it).
fn baton_beside_the_app() -> PathBuf {
    let baton = desktop_binary().parent().unwrap().join("baton");
    assert!(
        baton.exists(),
        "{} is missing: `cargo build` the workspace first (./scripts/test.sh does)",
        baton.display()
    );
    baton
}

/// The first attempt waits for `go` (so the test sees the transcript follow it live), then
/// writes `greet.txt`; an attempt whose hints ask for changes adds `bye`. Each commits.
const GREETER: &str = "echo \"starting $BATON_TASK_ID\"; \
     while [ ! -e \"$BATON_DIR/go\" ]; do sleep 0.1; done; \
     if printf '%s' \"$BATON_TASK_HINTS\" | grep -q 'Changes requested'; then \
       echo bye >> greet.txt && git commit -q -am 'say bye' && echo 'said bye'; \
     else printf 'hello\\nworld\\n' > greet.txt && git add greet.txt && git commit -q -m greet \
       && echo 'wrote the greeting'; fi";

/// Stops a project's team however the test ends (the supervisor outlives the app by design).
struct StopsTheTeam(PathBuf, PathBuf);

impl Drop for StopsTheTeam {
    fn drop(&mut self) {
        let _ = Command::new(&self.0)
            .args(["team", "stop", "--now"])
            .current_dir(&self.1)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// Axe on the view as it is, in the theme the app was started with, and a screenshot.
fn check_view(session: &Session, view: &str, theme: &str) {
    let violations = accessibility_violations(session);
    assert!(violations.is_empty(), "{view} ({theme}): {violations:#?}");
    session.screenshot(&shots().join(format!("{view}-{theme}.png")));
}

#[test]
fn the_lead_starts_a_team_answers_it_and_reviews_its_work_before_merging() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let p = Project::init();
    support::repository(p.path());
    let baton = baton_beside_the_app();
    std::fs::write(
        p.coordination().join("review.toml"),
        "check = \"grep -q forbidden greet.txt\"\n",
    )
    .unwrap();
    p.op(
        "task_add",
        json!({"description": "Greet the user", "id": "t1"}),
    );
    let _team = StopsTheTeam(baton.clone(), p.path().to_path_buf());
    // The real Claude Code, its model scripted, for the Claude worker at the end: the app (and
    // the team it starts) gets that installation's environment.
    let api = ScriptedApi::start(committer());
    let host = Host::new(p.path(), &api);
    let mut claude_env = Command::new("true");
    host.environment_with(&mut claude_env, &baton);
    let mut env: Vec<(String, String)> = claude_env
        .get_envs()
        .filter_map(|(k, v)| Some((k.to_str()?.to_string(), v?.to_str()?.to_string())))
        .filter(|(k, _)| k != "LANG")
        .collect();
    env.push(("BATON_DESKTOP_VIEW".into(), "team".into()));
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let (session, _driver, _xvfb) = launch_with_env(&p, &env);
    session.find("[data-testid=team-start]");
    check_view(&session, "team-empty", "light");

    // Start a team of one exec worker from the Team view.
    session.click(&session.find("[data-testid=team-profile] option[value=exec]"));
    session.execute("document.querySelector('[data-testid=team-workers]').select()");
    session.type_text(&session.find("[data-testid=team-workers]"), "1");
    session.type_text(&session.find("[data-testid=team-exec]"), GREETER);
    session.type_text(&session.find("[data-testid=team-budget]"), "5");
    session.click(&session.find("[data-testid=team-up]"));
    session.wait_for("the worker at work on t1", |s| {
        s.find_now("[data-testid^=state-]")
            .is_some_and(|_| s.text("[data-testid=workers]").contains("t1"))
    });
    session.find("[data-testid=budget-bar]");
    // Sandboxed, as every team is unless started without: the row says so.
    assert_eq!(session.text("[data-testid^=sandbox-]"), "sandboxed");
    let show = session.find("[data-testid^=show-]");
    session.click(&show);
    session.wait_for("the transcript of the running attempt", |s| {
        s.text_now("[data-testid=transcript]")
            .is_some_and(|text| text.contains("starting t1"))
    });
    check_view(&session, "team", "light");
    // The attempt goes on; its new lines reach the open transcript through the change feed.
    std::fs::write(p.path().join("go"), "").unwrap();
    session.wait_for("the transcript to follow", |s| {
        s.text("[data-testid=transcript]")
            .contains("wrote the greeting")
    });
    wait_file(&p, "t1 done", |p| status_of(p, "t1") == "done");

    // An agent's question, answered from the Inbox, reaches the agent waiting on it.
    let asking = Running(
        Command::new(&baton)
            .args([
                "ask",
                "Which greeting?",
                "--choice",
                "hello",
                "--choice",
                "hi",
            ])
            .args(["--agent", "w9", "--timeout", "120"])
            .current_dir(p.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    session.click(&session.find("[data-testid=view-inbox]"));
    session.wait_for("the question in the Inbox", |s| {
        s.find_now("[data-testid=question-q-1]").is_some()
    });
    check_view(&session, "inbox", "light");
    session.click(&session.find("[data-testid=answer-q-1-hi]"));
    let mut asking = asking;
    let child = &mut asking.0;
    let status = child.wait().unwrap();
    let mut said = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut said).unwrap();
    assert_eq!((status.code(), said.trim()), (Some(0), "hi"));

    // The Review: the diff, a comment on a line, and the work sent back.
    session.click(&session.find("[data-testid=view-review]"));
    session.wait_for("t1's diff", |s| {
        s.text_now("[data-testid='diff-greet.txt']")
            .is_some_and(|text| text.contains("world"))
    });
    check_view(&session, "review", "light");
    // The "+" beside a line opens the comment form (on mouse down, as the component listens).
    session.execute(
        "document.querySelector(\"[data-testid='diff-greet.txt'] [data-line-new-num='2']\")\
         .closest('tr').querySelector('.diff-add-widget')\
         .dispatchEvent(new MouseEvent('mousedown', {bubbles: true}))",
    );
    session.type_text(
        &session.find("[data-testid=comment-text]"),
        "say goodbye too",
    );
    session.click(&session.find("[data-testid=comment-send]"));
    session.wait_for("the comment under its line", |s| {
        s.text_now("[data-testid=comment-1]")
            .is_some_and(|text| text.contains("say goodbye too"))
    });
    session.click(&session.find("[data-testid=request-changes]"));
    // The new line itself (the comment under line 2 says "goodbye" too).
    session.wait_for("the worker's new commit in the review", |s| {
        s.find_now("[data-testid='diff-greet.txt'] [data-line-new-num='3']")
            .is_some()
    });
    wait_file(&p, "t1 done again", |p| status_of(p, "t1") == "done");
    session.wait_for("the review to show it done again", |s| {
        s.text("[data-testid=review-state]").starts_with("done")
    });

    // The Review counts the done task whose branch waits; once merged, nothing.
    let review_count = |s: &Session| s.text_now("[data-testid=count-review]");
    session.wait_for("the Review's count of t1", |s| {
        review_count(s).is_some_and(|text| text.starts_with('1'))
    });
    // A failing check blocks the merge and says why; a passing one lets it through.
    let before = support::git(p.path(), &["rev-parse", "HEAD"]);
    session.wait_for("Merge to be ready", |s| {
        s.find_now("[data-testid=merge]:enabled").is_some()
    });
    session.click(&session.find("[data-testid=merge]"));
    session.wait_for("the merge refused by the check", |s| {
        s.text_now("[data-testid=merge-outcome]")
            .is_some_and(|text| text.contains("failed (exit code 1)"))
    });
    assert_eq!(support::git(p.path(), &["rev-parse", "HEAD"]), before);
    check_view(&session, "review-check-failed", "light");
    std::fs::write(
        p.coordination().join("review.toml"),
        "check = \"grep -q bye greet.txt\"\n",
    )
    .unwrap();
    session.click(&session.find("[data-testid=merge]"));
    session.wait_for("the merge", |s| {
        s.text("[data-testid=merge-outcome]")
            .contains("Merged baton/t1")
    });
    assert_eq!(
        std::fs::read_to_string(p.path().join("greet.txt")).unwrap(),
        "hello\nworld\nbye\n"
    );
    session.wait_for("no Review count once t1 is merged", |s| {
        review_count(s).is_none()
    });

    // The lead pauses the idle worker from its row, and resumes it: its state says each.
    session.click(&session.find("[data-testid=view-team]"));
    let state_of_ex1 = |s: &Session| s.text_now("[data-testid=state-ex1]").unwrap_or_default();
    session.click(&session.find("[data-testid=pause-ex1]"));
    session.wait_for("ex1 paused", |s| state_of_ex1(s).contains("paused"));
    session.click(&session.find("[data-testid=resume-ex1]"));
    session.wait_for("ex1 waiting again", |s| state_of_ex1(s).contains("waiting"));

    // The team stops from the Team view, leaving nothing running.
    session.click(&session.find("[data-testid=stop-team-now]"));
    let local = baton_core::Layout::for_project(p.path());
    support::eventually("the supervisor to stop", || {
        baton_team::running_supervisor(&local).unwrap().is_none()
    });

    // A Claude Code worker started the same way: its tool call is folded in the transcript
    // with its input and result, and it reports the task itself (Baton's MCP tool).
    p.op(
        "task_add",
        json!({"description": "Write t2.txt", "id": "t2"}),
    );
    session.wait_for("the Start button", |s| {
        s.find_now("[data-testid=team-up]:enabled").is_some()
    });
    session.click(&session.find("[data-testid=team-profile] option[value=claude]"));
    session.execute("document.querySelector('[data-testid=team-workers]').select()");
    session.type_text(&session.find("[data-testid=team-workers]"), "1");
    session.click(&session.find("[data-testid=team-up]"));
    wait_file(&p, "t2 done by the Claude worker", |p| {
        status_of(p, "t2") == "done"
    });
    // Chosen once it has finished, the worker shows the task it did.
    session.click(&session.find("[data-testid=show-cc1]"));
    session.wait_for("Claude Code's shell call in the transcript", |s| {
        s.find_now("[data-testid=transcript] [data-testid=entry-tool]")
            .is_some()
            && s.text_now("[data-testid=transcript]")
                .is_some_and(|text| text.contains("Bash"))
    });
    session.wait_for("the cost of the Claude worker's task", |s| {
        !s.text("[data-testid=spend-total]").starts_with("$0.000")
    });
    check_view(&session, "team-claude", "light");
    session.click(&session.find("[data-testid=stop-team-now]"));
    support::eventually("the Claude team to stop", || {
        baton_team::running_supervisor(&local).unwrap().is_none()
    });
    session.close();

    // The new views filled, in the dark theme: the workers with their spend, a message for
    // the lead, the merged task's diff with the lead's comment.
    p.op(
        "message_send",
        json!({"to": "lead", "subject": "Both done", "body": "t1 and t2 are in.", "from": "cc1"}),
    );
    let (dark, _dark_driver, _dark_xvfb) = launch_with_env(
        &p,
        &[
            ("GTK_THEME", "Adwaita:dark"),
            ("BATON_DESKTOP_VIEW", "team"),
        ],
    );
    for (view, filled) in [
        ("team", "[data-testid=workers]"),
        ("inbox", "[data-testid=inbox-view] [data-testid^=message-]"),
        (
            "review",
            "[data-testid='diff-greet.txt'] [data-testid=comment-1]",
        ),
    ] {
        dark.click(&dark.find(&format!("[data-testid=view-{view}]")));
        dark.find(filled);
        check_view(&dark, &format!("{view}-filled"), "dark");
    }
    dark.close();
}

/// One HTTP GET to 127.0.0.1:`port` (`Host: localhost:PORT`): its status line, or `None`
/// when nothing listens.
fn http_status(port: u16, path: &str) -> Option<String> {
    http_send(port, "GET", path, "")
}

/// A pairing page's button pressed: its form posted back from the server's own origin.
fn http_pair(port: u16, path: &str) -> Option<String> {
    let headers = format!(
        "Origin: http://localhost:{port}\r\nContent-Type: application/x-www-form-urlencoded\r\n\
         Content-Length: 0\r\n"
    );
    http_send(port, "POST", path, &headers)
}

fn http_send(port: u16, method: &str, path: &str, headers: &str) -> Option<String> {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: localhost:{port}\r\nConnection: close\r\n{headers}\r\n"
    )
    .ok()?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).ok()?;
    answer.lines().next().map(str::to_string)
}

#[test]
fn the_desktop_serves_the_project_pairs_a_phone_and_stops_serving() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let p = Project::init();
    let (session, _driver, _xvfb) = launch(&p);
    session.click(&session.find("[data-testid=view-team]"));
    let port = support::free_port();
    session.execute("document.querySelector('[data-testid=serve-listen]').select()");
    session.type_text(
        &session.find("[data-testid=serve-listen]"),
        &format!("127.0.0.1:{port}"),
    );
    session.click(&session.find("[data-testid=serve-start]"));
    session.wait_for("the served address", |s| {
        s.text_now("[data-testid=serve-url]")
            .is_some_and(|text| text == format!("http://localhost:{port}"))
    });
    // The page is served, and the API refuses a browser not paired.
    assert_eq!(http_status(port, "/").as_deref(), Some("HTTP/1.1 200 OK"));
    assert!(
        http_status(port, "/api/feed").is_some_and(|s| s.starts_with("HTTP/1.1 401")),
        "an unpaired request answered"
    );
    session.click(&session.find("[data-testid=serve-pair-responder]"));
    session.wait_for("the pairing link", |s| {
        s.text_now("[data-testid=serve-link]")
            .is_some_and(|text| text.contains("/pair/"))
    });
    let link = session.text("[data-testid=serve-link]");
    let path = &link[link.find("/pair/").unwrap()..];
    check_view(&session, "serve-panel", "light");
    assert_eq!(
        http_status(port, path).as_deref(),
        Some("HTTP/1.1 200 OK"),
        "the link opens a page that asks"
    );
    assert_eq!(
        http_pair(port, path).as_deref(),
        Some("HTTP/1.1 303 See Other"),
        "the link pairs a phone"
    );
    session.click(&session.find("[data-testid=serve-stop]"));
    session.wait_for("serving stopped", |s| {
        s.find_now("[data-testid=serve-start]").is_some()
    });
    support::eventually("the server to be gone", || http_status(port, "/").is_none());
    assert!(!p.coordination().join("serve/server.json").exists());
    session.close();
}
