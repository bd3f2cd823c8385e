//! Links planted in `.coordination/` (by an agent with a shell, say) are never followed: the
//! folder store refuses to read or write through a symbolic link in its logs, discoveries,
//! results, transcripts and inbox, names the link in the error, and nothing outside is read or
//! written. A database project keeps these in the database, so this is the folder's.

use baton_test_support as support;

use std::path::PathBuf;

use support::Project;

/// A file outside the project, holding `text`, and a link at `.coordination/{at}` to it.
fn planted(p: &Project, at: &str, text: &str) -> PathBuf {
    let outside = p.path().join("..").join(format!(
        "outside-{}-{}",
        p.path().file_name().unwrap().to_string_lossy(),
        at.replace('/', "-")
    ));
    std::fs::write(&outside, text).unwrap();
    let link = p.coordination().join(at);
    std::fs::create_dir_all(link.parent().unwrap()).unwrap();
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(&outside, &link).unwrap();
    outside
}

#[test]
fn a_log_link_is_neither_written_nor_shown() {
    let p = Project::init();
    p.ok(&["leader", "add-task", "Anything"]);
    let log = planted(&p, "logs/a1.log", "SECRET-LINE\n");
    // The claim itself goes through (its log line is Baton's own record, written when it
    // can be): the line is not written through the link, and reading the log names it.
    p.ok(&["worker", "claim", "a1"]);
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "SECRET-LINE\n");
    let read = p.run(&["logs", "a1"]);
    assert!(!read.status.success(), "{read:?}");
    assert!(
        String::from_utf8_lossy(&read.stderr).contains("logs/a1.log is a symbolic link"),
        "{read:?}"
    );

    let evil = planted(&p, "logs/evil.log", "root:x:0:0:SECRET\n");
    let shown = p.run(&["logs", "evil"]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&shown.stdout),
        String::from_utf8_lossy(&shown.stderr),
    );
    assert!(!shown.status.success(), "{shown:?}");
    assert!(
        !stdout.contains("SECRET") && !stderr.contains("SECRET"),
        "{stdout}{stderr}"
    );
    assert!(
        stderr.contains("logs/evil.log is a symbolic link"),
        "{stderr}"
    );
    let _ = std::fs::remove_file(evil);
    let _ = std::fs::remove_file(log);
}

#[test]
fn discoveries_results_and_inbox_links_are_refused() {
    let p = Project::init();
    let discoveries = planted(&p, "context/discoveries.md", "OUTSIDE\n");
    let found = p
        .command(&["discover", "--agent", "a1", "a finding"])
        .env("BATON_AGENT", "a1")
        .output()
        .unwrap();
    assert!(!found.status.success(), "{found:?}");
    assert!(
        String::from_utf8_lossy(&found.stderr).contains("discoveries.md is a symbolic link"),
        "{found:?}"
    );
    assert_eq!(std::fs::read_to_string(&discoveries).unwrap(), "OUTSIDE\n");

    // A task's result report: completing it does not write through the link.
    p.ok(&["leader", "add-task", "Report", "--id", "r1"]);
    p.ok(&["worker", "claim", "a1"]);
    let result = planted(&p, "results/r1.md", "OUTSIDE REPORT\n");
    let _ = p.run(&["worker", "complete", "a1", "r1", "done"]);
    assert_eq!(
        std::fs::read_to_string(&result).unwrap(),
        "OUTSIDE REPORT\n"
    );

    // A message planted as a link: the inbox names it and shows the rest.
    let sent = p
        .command(&["message", "send", "lead", "Hi", "there"])
        .env("BATON_AGENT", "a1")
        .output()
        .unwrap();
    assert!(sent.status.success(), "{sent:?}");
    let message = planted(
        &p,
        "inbox/messages/m-9.json",
        r#"{"id":"m-9","from":"x","to":"lead","subject":"SECRET","body":"SECRET","task":null,"sent_at":"2026-01-01T00:00:00Z","read_by":[]}"#,
    );
    let inbox = p.json(&["inbox", "--all"]);
    assert_eq!(inbox["messages"].as_array().unwrap().len(), 1, "{inbox}");
    assert!(!inbox["messages"].to_string().contains("SECRET"), "{inbox}");
    assert!(
        inbox["unreadable"]
            .to_string()
            .contains("m-9.json is a symbolic link"),
        "{inbox}"
    );
    // `leader doctor` lists every link it finds.
    let doctor = p.run(&["--json", "leader", "doctor"]);
    let (stdout, _) = support::expect_code("doctor with links", doctor, 4);
    for link in ["discoveries.md", "results/r1.md", "m-9.json"] {
        assert!(stdout.contains(link), "{link} not listed: {stdout}");
    }
    assert!(stdout.contains("link_in_folder"), "{stdout}");
    for file in [discoveries, result, message] {
        let _ = std::fs::remove_file(file);
    }
}
