//! `baton browser session start|finish|status` end to end, with Debian's Chromium under Xvfb:
//! the manual test session the desktop offers, held by a CLI process. Each of its endings
//! (finish from another terminal, Ctrl-C, the browser window closing) writes the run's signal
//! once, and leaves no browser or record behind.

use baton_test_support as support;

use serde_json::Value;
use support::xvfb::Xvfb;
use support::{Background, PATIENCE, Project, eventually};

/// The signal `ui-test-done` of run 1, if written.
fn signal(p: &Project) -> Option<Value> {
    let text =
        std::fs::read_to_string(p.coordination().join("runs/1/signals/ui-test-done")).ok()?;
    serde_json::from_str(&text).ok()
}

/// `baton browser session start URL --json` on `xvfb`'s display, once it has said it runs.
fn start(p: &Project, xvfb: &Xvfb, url: &str) -> (Background, Value) {
    let mut command = p.command(&["browser", "session", "start", url, "--json"]);
    command.env("DISPLAY", &xvfb.display);
    let mut held = Background::from_command(command);
    let line = held.wait_stdout("holder_pid");
    (held, serde_json::from_str(&line).unwrap())
}

fn registry_is_empty(p: &Project) -> bool {
    std::fs::read_dir(p.coordination().join("browsers"))
        .map(|mut dir| dir.next().is_none())
        .unwrap_or(true)
}

#[test]
fn a_cli_session_writes_its_signal_once_however_it_ends() {
    let xvfb = Xvfb::start(300..400, PATIENCE);
    let p = Project::init();
    let url = support::serve_page(
        "<html><head><title>Manual test page</title></head><body>Try me</body></html>",
    );
    p.ok(&["signal", "write", "ui-test-done", "--note", "stale"]);

    // Started: the stale signal is cleared, the browser is visible and registered, the page
    // opens, and `status` (another process) sees the session.
    let (held, record) = start(&p, &xvfb, &url);
    assert!(signal(&p).is_none(), "starting clears the stale signal");
    assert_eq!(record["browser"]["headless"], false);
    assert_eq!(record["signal"], "ui-test-done");
    let port = record["browser"]["port"].as_u64().unwrap() as u16;
    let listed = p.json(&["browser", "list"]);
    assert_eq!(listed[0]["port"], port);
    assert!(
        listed[0]["owner"]
            .as_str()
            .unwrap()
            .contains("browser session")
    );
    eventually("the page in the session's browser", || {
        p.json(&["browser", "show", &port.to_string()])["title"] == "Manual test page"
    });
    let status = p.json(&["browser", "session", "status"]);
    assert_eq!(status, record);

    // A second session while one runs is refused, and says how to end the first.
    let refused = p.fails(&["browser", "session", "start", &url, "--json"], 1);
    assert!(
        refused.contains("session_running") && refused.contains("finish"),
        "{refused}"
    );

    // Finished from another terminal: the signal says so, the holder ends, nothing is left.
    let finished = p.json(&["browser", "session", "finish"]);
    assert_eq!(finished["browser"]["port"], port);
    assert_eq!(signal(&p).unwrap()["note"], "manual session finished");
    let (code, stdout, stderr) = held.finish();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains(r#""ended":"finished""#), "{stdout}");
    eventually("the registry to empty", || registry_is_empty(&p));
    assert!(!p.coordination().join("manual-session.json").exists());
    let none = p.fails(&["browser", "session", "status", "--json"], 1);
    assert!(none.contains("no_session"), "{none}");

    // Ctrl-C in the holder's terminal finishes it the same way.
    let (held, _) = start(&p, &xvfb, &url);
    assert!(signal(&p).is_none());
    held.signal("INT");
    let (code, stdout, stderr) = held.finish();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains(r#""ended":"finished""#), "{stdout}");
    assert_eq!(signal(&p).unwrap()["note"], "manual session finished");
    eventually("the registry to empty", || registry_is_empty(&p));

    // The lead closes the browser window (the browser exits): the holder writes the signal.
    let (held, record) = start(&p, &xvfb, &url);
    let browser = record["browser"]["pid"].as_u64().unwrap();
    // The browser leads its own process group; only it is signalled.
    let killed = std::process::Command::new("kill")
        .args(["-TERM", "--", &format!("-{browser}")])
        .status()
        .unwrap();
    assert!(killed.success());
    let (code, stdout, stderr) = held.finish();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains(r#""ended":"window_closed""#), "{stdout}");
    assert_eq!(signal(&p).unwrap()["note"], "browser window closed");
    eventually("the registry to empty", || registry_is_empty(&p));
    drop(xvfb);
}
