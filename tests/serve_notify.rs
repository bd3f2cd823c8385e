//! Told when no page is open: `baton serve` sends each question, approval and plan that waits
//! for the lead to the webhooks `.coordination/notify.toml` names, received here by a local
//! server as ntfy, Slack, Discord and a script would receive them: questions that come at once
//! as one digest, an approval at once, each with its deep link, a secret from the environment.

use baton_test_support as support;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;
use support::{Background, PATIENCE, Project};

/// One request a webhook received.
#[derive(Debug)]
struct Received {
    path: String,
    headers: HashMap<String, String>,
    body: String,
}

/// A local server that answers 200 to every POST and hands each request over.
fn receiver() -> (u16, mpsc::Receiver<Received>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            if reader.read_line(&mut line).is_err() {
                continue;
            }
            let path = line.split(' ').nth(1).unwrap_or_default().to_string();
            let mut headers = HashMap::new();
            loop {
                let mut header = String::new();
                reader.read_line(&mut header).unwrap_or_default();
                let header = header.trim_end();
                if header.is_empty() {
                    break;
                }
                if let Some((k, v)) = header.split_once(':') {
                    headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
                }
            }
            let length: usize = headers
                .get("content-length")
                .and_then(|l| l.parse().ok())
                .unwrap_or(0);
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap_or_default();
            let _ = stream
                .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
            let body = String::from_utf8_lossy(&body).into_owned();
            if tx
                .send(Received {
                    path,
                    headers,
                    body,
                })
                .is_err()
            {
                break;
            }
        }
    });
    (port, rx)
}

/// The next requests until one reached each of `paths`, by path; fails after [`PATIENCE`].
fn receive(rx: &mpsc::Receiver<Received>, paths: &[&str]) -> HashMap<String, Received> {
    let mut got = HashMap::new();
    while !paths.iter().all(|p| got.contains_key(*p)) {
        let received = rx
            .recv_timeout(PATIENCE)
            .unwrap_or_else(|_| panic!("waited for {paths:?}, got {:?}", got.keys()));
        got.insert(received.path.clone(), received);
    }
    got
}

#[test]
fn questions_go_out_as_one_digest_and_an_approval_at_once_each_with_its_link() {
    let p = Project::init();
    let (port, rx) = receiver();
    let hook = |path: &str| format!("http://127.0.0.1:{port}{path}");
    std::fs::write(
        p.coordination().join("notify.toml"),
        format!(
            "digest_seconds = 2\n\
             [[webhook]]\nformat = \"json\"\nurl = \"{}\"\n\
             [[webhook]]\nformat = \"ntfy\"\nurl = \"{}\"\nsecret_env = \"BATON_TEST_NTFY_TOKEN\"\n\
             [[webhook]]\nformat = \"slack\"\nurl = \"{}\"\nevents = [\"question\"]\n\
             [[webhook]]\nformat = \"discord\"\nurl = \"{}\"\nevents = [\"approval\", \"plan\"]\n",
            hook("/json"),
            hook("/ntfy"),
            hook("/slack"),
            hook("/discord")
        ),
    )
    .unwrap();
    let mut command = p.command(&["serve", "--listen", "127.0.0.1:0", "--pair", "none"]);
    command.env("BATON_TEST_NTFY_TOKEN", "s3cret");
    let mut serving = Background::from_command(command);
    let url = support::served::served_url(&mut serving);

    // Two questions at once: one digest to each webhook told of questions.
    let first = p.ask_as("w1", "Which port?", &[]);
    let second = p.ask_as("w2", "Which database?", &[]);
    let got = receive(&rx, &["/json", "/ntfy", "/slack"]);
    let digest: Value = serde_json::from_str(&got["/json"].body).unwrap();
    assert_eq!(digest["event"], "digest", "{digest}");
    assert_eq!(
        digest["questions"].as_array().map(Vec::len),
        Some(2),
        "{digest}"
    );
    let links: Vec<&str> = digest["questions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["link"].as_str().unwrap())
        .collect();
    assert!(
        links.contains(&format!("{url}/inbox#q-1").as_str()),
        "{digest}"
    );
    let ntfy = &got["/ntfy"];
    assert_eq!(
        ntfy.headers["title"], "2 questions wait for you",
        "{ntfy:?}"
    );
    assert_eq!(ntfy.headers["click"], format!("{url}/inbox"));
    assert_eq!(ntfy.headers["authorization"], "Bearer s3cret");
    assert!(
        ntfy.body.contains("Which port?") && ntfy.body.contains("Which database?"),
        "{ntfy:?}"
    );
    let slack: Value = serde_json::from_str(&got["/slack"].body).unwrap();
    assert!(
        slack["text"]
            .as_str()
            .unwrap()
            .contains("2 questions wait for you"),
        "{slack}"
    );

    // An approval goes at once, to those told of approvals (not Slack here).
    let approving = p.spawn(&[
        "approve",
        "Bash",
        "--input",
        "{\"command\":\"make build\"}",
        "--agent",
        "cc1",
    ]);
    let got = receive(&rx, &["/json", "/ntfy", "/discord"]);
    let approval: Value = serde_json::from_str(&got["/json"].body).unwrap();
    assert_eq!(approval["event"], "approval", "{approval}");
    let id = approval["questions"][0]["id"].as_str().unwrap();
    assert_eq!(approval["link"], format!("{url}/inbox#{id}"));
    let discord: Value = serde_json::from_str(&got["/discord"].body).unwrap();
    let content = discord["content"].as_str().unwrap();
    assert!(
        content.contains("cc1 asks to run a tool") && content.contains(&format!("#{id}")),
        "{discord}"
    );
    assert!(
        rx.recv_timeout(Duration::from_secs(3))
            .is_err_and(|e| e == mpsc::RecvTimeoutError::Timeout),
        "Slack hears no approval"
    );

    drop((first, second, approving));
    serving.signal("TERM");
    assert_eq!(serving.finish().0, Some(0));
}

/// A file that does not parse, or that holds a secret where its variable's name belongs, or a
/// link in the file's place, stops the server at its start with what is wrong.
#[test]
fn a_bad_notify_file_stops_the_server_saying_why() {
    let p = Project::init();
    std::fs::write(
        p.coordination().join("notify.toml"),
        "[[webhook]]\nformat = \"json\"\nurl = \"http://127.0.0.1:9/\"\nsecret_env = \"Bearer abc\"\n",
    )
    .unwrap();
    let err = p.fails(&["serve", "--listen", "127.0.0.1:0", "--pair", "none"], 1);
    assert!(
        err.contains("notify.toml") && err.contains("names an environment variable"),
        "{err}"
    );
    // A link in the file's place is not followed to a file elsewhere.
    let elsewhere = tempfile::tempdir().unwrap();
    let target = elsewhere.path().join("notify.toml");
    std::fs::write(
        &target,
        "[[webhook]]\nformat = \"json\"\nurl = \"http://127.0.0.1:9/\"\n",
    )
    .unwrap();
    std::fs::remove_file(p.coordination().join("notify.toml")).unwrap();
    std::os::unix::fs::symlink(&target, p.coordination().join("notify.toml")).unwrap();
    let err = p.fails(&["serve", "--listen", "127.0.0.1:0", "--pair", "none"], 1);
    assert!(err.contains("symbolic link"), "{err}");
}
