//! `baton serve` over HTTP as a browser and as an attacker see it, on both stores: nothing
//! under `/api/` without a paired device; a one-time link pairs one browser (an HttpOnly,
//! SameSite=Strict cookie) and is used up; foreign Hosts and Origins, writes without an
//! Origin or not in JSON, and guessed codes (rate-limited) are refused; a responder device is
//! refused merges, team starts and task edits by the server and answers an agent's question;
//! a revoked device is refused at its next request and its open feeds end (server-sent events
//! and the WebSocket, closed with the code that tells the page); the feed pushes a change a CLI
//! made; the WebSocket's handshake is refused to other sites' pages, to pages not paired and to
//! clients that do not speak its version; the UI's text files go gzipped to a client that takes
//! gzip.

use baton_test_support as support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;

use serde_json::{Value, json};
use support::served::{Answer, Browser, request};
use support::{Background, PATIENCE, Project};

support::on_both_stores!(
    without_pairing_every_api_path_is_refused_and_a_link_pairs_one_browser,
    foreign_hosts_origins_and_guessed_codes_are_refused,
    a_responder_answers_an_agent_but_the_server_refuses_it_a_merge_and_a_team_start,
    a_revoked_device_is_refused_at_once_and_its_feed_ends,
    the_feed_s_websocket_is_refused_to_other_sites_and_unpaired_pages,
);

/// A running `baton serve` with a UI folder of its own; its address and first pairing link.
struct Served {
    process: Background,
    /// `localhost:PORT`.
    host: String,
    link: String,
    _ui: tempfile::TempDir,
}

fn serve(p: &Project, pair_as: &str) -> Served {
    let ui = tempfile::tempdir().unwrap();
    std::fs::write(
        ui.path().join("index.html"),
        "<!doctype html><title>Baton</title>",
    )
    .unwrap();
    let (mut process, url) = support::served::serve(
        p,
        &["--pair", pair_as, "--ui-dir", ui.path().to_str().unwrap()],
    );
    let host = url.strip_prefix("http://").unwrap().to_string();
    let link = if pair_as == "none" {
        String::new()
    } else {
        process.wait_stdout("/pair/").trim().to_string()
    };
    Served {
        process,
        host,
        link,
        _ui: ui,
    }
}

fn pair_another(p: &Project, scope: &str) -> String {
    let out = p.json(&["serve", "pair", "--as", scope]);
    assert_eq!(out["scope"], scope, "{out}");
    out["link"].as_str().unwrap().to_string()
}

fn without_pairing_every_api_path_is_refused_and_a_link_pairs_one_browser(p: Project) {
    p.ok(&["leader", "add-task", "Write the parser"]);
    let served = serve(&p, "lead");
    let mut browser = Browser::new(&served.host);
    for path in [
        "/api/operation/task_status",
        "/api/operation/task_merge",
        "/api/command/project_info",
        "/api/nothing",
    ] {
        let answer = browser.post(path, &json!({}));
        assert_eq!(answer.status, 401, "{path}: {answer:?}");
        assert_eq!(answer.json()["kind"], "not_paired", "{answer:?}");
        assert!(answer.body.contains("baton serve pair"), "{answer:?}");
    }
    let feed = request(&served.host, "GET", "/api/feed", &[], "");
    assert_eq!(feed.status, 401, "{feed:?}");
    // The page itself is served to anyone: it says how to pair.
    let page = request(&served.host, "GET", "/", &[], "");
    assert_eq!(page.status, 200, "{page:?}");
    assert!(page.body.contains("<title>Baton</title>"));

    let paired = browser.open_link(&served.link);
    assert_eq!(paired.status, 303, "{paired:?}");
    assert_eq!(paired.header("location").as_deref(), Some("/"));
    let cookie = paired.header("set-cookie").unwrap();
    for attribute in ["HttpOnly", "SameSite=Strict", "Path=/"] {
        assert!(cookie.contains(attribute), "{cookie}");
    }
    let status = browser.operation("task_status", json!({}));
    assert_eq!(status.status, 200, "{status:?}");
    assert_eq!(status.json()["tasks"][0]["description"], "Write the parser");
    let info = browser.post("/api/command/project_info", &json!({}));
    assert_eq!(info.status, 200, "{info:?}");
    assert_eq!(info.json()["path"], p.path().display().to_string());
    let whoami = browser.post("/api/command/whoami", &json!({}));
    assert_eq!(whoami.json()["scope"], "lead", "{whoami:?}");
    // The link pairs one browser only.
    let mut other = Browser::new(&served.host);
    let again = other.open_link(&served.link);
    assert_eq!(again.status, 403, "{again:?}");
    assert_eq!(again.json()["kind"], "pairing_refused");
    assert!(other.cookie.is_none());
    // A person's browser opening the used link is told so in words, and what to do.
    let page = request(
        &served.host,
        "GET",
        support::served::pairing_path(&served.link),
        &[("Accept", "text/html,application/xhtml+xml")],
        "",
    );
    assert_eq!(page.status, 403, "{page:?}");
    assert!(
        page.body
            .starts_with("This pairing link is unknown, used already or expired.")
            && page.body.contains("run: baton serve pair"),
        "{page:?}"
    );
    // Bad input through a paired browser: an unknown operation, a body that is not JSON.
    assert_eq!(browser.operation("no_such_op", json!({})).status, 404);
    let mut headers = vec![
        ("Origin", browser.origin.as_str()),
        ("Content-Type", "application/json"),
    ];
    let cookie = browser.cookie.clone().unwrap();
    headers.push(("Cookie", &cookie));
    let broken = request(
        &served.host,
        "POST",
        "/api/operation/task_status",
        &headers,
        "{",
    );
    assert_eq!(broken.status, 400, "{broken:?}");
    // Paths a device names stay inside the project.
    let outside = browser.operation(
        "signal_write",
        json!({"path": "/tmp/baton-serve-outside", "force": true}),
    );
    assert_ne!(outside.status, 200, "{outside:?}");
    assert!(!std::path::Path::new("/tmp/baton-serve-outside").exists());
}

fn foreign_hosts_origins_and_guessed_codes_are_refused(p: Project) {
    let served = serve(&p, "lead");
    let mut browser = Browser::new(&served.host);
    assert_eq!(browser.open_link(&served.link).status, 303);
    let cookie = browser.cookie.clone().unwrap();
    let body = "{}";
    let path = "/api/operation/task_status";
    // DNS rebinding: a page whose name points at this machine sends its own Host.
    let rebound = request(
        &served.host,
        "POST",
        path,
        &[
            ("Host", "evil.example"),
            ("Origin", "http://evil.example"),
            ("Content-Type", "application/json"),
            ("Cookie", &cookie),
        ],
        body,
    );
    assert_eq!(rebound.status, 421, "{rebound:?}");
    // Another site's page, with the cookie (were a browser to send it).
    let foreign = request(
        &served.host,
        "POST",
        path,
        &[
            ("Origin", "http://evil.example"),
            ("Content-Type", "application/json"),
            ("Cookie", &cookie),
        ],
        body,
    );
    assert_eq!(foreign.status, 403, "{foreign:?}");
    // A write without an Origin, and a form's body.
    let no_origin = request(
        &served.host,
        "POST",
        path,
        &[("Content-Type", "application/json"), ("Cookie", &cookie)],
        body,
    );
    assert_eq!(no_origin.status, 403, "{no_origin:?}");
    let origin = browser.origin.clone();
    let form = request(
        &served.host,
        "POST",
        path,
        &[
            ("Origin", origin.as_str()),
            ("Content-Type", "application/x-www-form-urlencoded"),
            ("Cookie", &cookie),
        ],
        "a=b",
    );
    assert_eq!(form.status, 415, "{form:?}");
    // Another site's form posting a pairing code (to pair the victim's browser): refused.
    let link = pair_another(&p, "lead");
    let path = support::served::pairing_path(&link);
    for origin in ["http://evil.example", "null"] {
        let forged = request(
            &served.host,
            "POST",
            path,
            &[
                ("Origin", origin),
                ("Content-Type", "application/x-www-form-urlencoded"),
            ],
            "",
        );
        assert_eq!(forged.status, 403, "{origin}: {forged:?}");
        assert!(forged.header("set-cookie").is_none(), "{forged:?}");
    }
    // The link still pairs its own browser.
    assert_eq!(Browser::new(&served.host).open_link(&link).status, 303);
    // Guessing codes: a few wrong ones, then pairing pauses, a right one included.
    let link = pair_another(&p, "lead");
    let mut guesser = Browser::new(&served.host);
    for guess in 0..baton_serve::PAIRING_FAILURES_PER_MINUTE {
        let wrong = guesser.open_link(&format!("/pair/GUESS{guess:05}"));
        assert_eq!(wrong.status, 403, "{wrong:?}");
    }
    let paused = guesser.open_link(&link);
    assert_eq!(paused.status, 429, "{paused:?}");
    assert_eq!(paused.json()["kind"], "too_many_attempts");
    assert!(paused.header("retry-after").is_some(), "{paused:?}");
    assert!(guesser.cookie.is_none());
    // Counted per client: a phone at another address (127.0.0.2, curl's own connection) still
    // pairs with its link while the guesser is paused.
    let path = support::served::pairing_path(&link);
    let port = served.host.rsplit(':').next().unwrap();
    let phone = std::process::Command::new("curl")
        .args([
            "-s",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            "--interface",
            "127.0.0.2",
        ])
        .args(["-X", "POST", "-H", &format!("Host: {}", served.host)])
        .args(["-H", &format!("Origin: http://{}", served.host)])
        .args(["-H", "Content-Type: application/x-www-form-urlencoded"])
        .arg(format!("http://127.0.0.1:{port}{path}"))
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&phone.stdout), "303", "{phone:?}");
    // The server still answers the paired browser.
    assert_eq!(browser.operation("task_status", json!({})).status, 200);
}

fn a_responder_answers_an_agent_but_the_server_refuses_it_a_merge_and_a_team_start(p: Project) {
    p.ok(&["leader", "add-task", "Write the parser", "--id", "t1"]);
    let served = serve(&p, "none");
    let mut phone = Browser::new(&served.host);
    let link = pair_another(&p, "responder");
    // The page says what the link pairs the browser as.
    let page = request(
        &served.host,
        "GET",
        support::served::pairing_path(&link),
        &[],
        "",
    );
    assert!(page.body.contains("as a responder: it reads"), "{page:?}");
    assert!(!page.body.contains("lead or responder"), "{page:?}");
    assert_eq!(phone.open_link(&link).status, 303);
    assert_eq!(
        phone.post("/api/command/whoami", &json!({})).json()["scope"],
        "responder"
    );
    for (name, body) in [
        ("task_merge", json!({"task": "t1"})),
        ("team_up", json!({})),
        ("task_add", json!({"description": "From the phone"})),
        ("task_edit", json!({"task": "t1", "description": "Changed"})),
        ("team_stop", json!({})),
        ("team_pause", json!({})),
    ] {
        let refused = phone.operation(name, body);
        assert_eq!(refused.status, 403, "{name}: {refused:?}");
        assert_eq!(refused.json()["kind"], "not_allowed", "{refused:?}");
    }
    // A device speaks as the lead: a message it says is from an agent is refused.
    let forged = phone.operation(
        "message_send",
        json!({"to": "lead", "subject": "Done", "body": "merge me", "from": "ex1"}),
    );
    assert_eq!(forged.status, 403, "{forged:?}");
    assert_eq!(forged.json()["kind"], "not_allowed", "{forged:?}");
    let sent = phone.operation(
        "message_send",
        json!({"to": "all", "subject": "Lunch", "body": "back at two"}),
    );
    assert_eq!(sent.status, 200, "{sent:?}");
    assert_eq!(sent.json()["from"], "lead", "{sent:?}");
    let board = p.json(&["leader", "status"]);
    assert_eq!(board["tasks"].as_array().unwrap().len(), 1, "{board}");
    assert_eq!(board["tasks"][0]["description"], "Write the parser");
    // An agent asks; the phone reads the inbox and answers; the agent's ask returns it.
    let ask = p.ask_as("cc1", "Which JSON library?", &["serde_json", "simd-json"]);
    let inbox = phone
        .operation("inbox_read", json!({"wait": true, "timeout_seconds": 60}))
        .json();
    let question = &inbox["questions"][0];
    assert_eq!(question["agent"], "cc1", "{inbox}");
    let answered = phone.operation(
        "answer_question",
        json!({"id": question["id"], "answer": "2"}),
    );
    assert_eq!(answered.status, 200, "{answered:?}");
    let (code, out, err) = ask.finish();
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out.trim(), "simd-json");
}

fn a_revoked_device_is_refused_at_once_and_its_feed_ends(p: Project) {
    let served = serve(&p, "lead");
    let mut browser = Browser::new(&served.host);
    assert_eq!(browser.open_link(&served.link).status, 303);
    let cookie = browser.cookie.clone().unwrap();
    // The feed, read as a page reads it.
    let port: u16 = served.host.rsplit(':').next().unwrap().parse().unwrap();
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    write!(
        stream,
        "GET /api/feed HTTP/1.1\r\nHost: {}\r\nCookie: {cookie}\r\nAccept: text/event-stream\r\nConnection: close\r\n\r\n",
        served.host
    )
    .unwrap();
    let mut feed = BufReader::new(stream);
    let mut line = String::new();
    let read_until = |feed: &mut BufReader<TcpStream>, line: &mut String, text: &str| -> bool {
        loop {
            line.clear();
            match feed.read_line(line) {
                Ok(0) | Err(_) => return false,
                Ok(_) if line.contains(text) => return true,
                Ok(_) => {}
            }
        }
    };
    assert!(
        read_until(&mut feed, &mut line, ": connected"),
        "the feed opened"
    );
    // And over a WebSocket, as the served UI's pages follow it (a real client: tungstenite).
    let mut socket = feed_socket(&served, &cookie);
    p.ok(&["leader", "add-task", "Pushed to the page"]);
    assert!(
        read_until(&mut feed, &mut line, "Pushed to the page"),
        "the change reached the page"
    );
    assert!(line.starts_with("data: "), "{line}");
    let change = loop {
        match socket.read().expect("the socket stays open") {
            tungstenite::Message::Text(text) if text.contains("Pushed to the page") => break text,
            _ => {}
        }
    };
    // One message per batch: what one command changed, as an array of events.
    let change: Value = serde_json::from_str(&change).unwrap();
    assert!(
        change
            .as_array()
            .is_some_and(|events| events.iter().any(|e| e["event"] == "tasks_changed")),
        "{change}"
    );
    let devices = p.json(&["serve", "devices"]);
    assert_eq!(devices[0]["id"], "d-1", "{devices}");
    assert_eq!(devices[0]["name"], "Test phone", "{devices}");
    assert!(
        !devices
            .to_string()
            .contains(cookie.split('=').nth(1).unwrap())
    );
    p.ok(&["serve", "revoke", "d-1"]);
    let refused = browser.operation("task_status", json!({}));
    assert_eq!(refused.status, 401, "{refused:?}");
    assert!(
        read_until(&mut feed, &mut line, "event: revoked"),
        "the open feed was told"
    );
    // The socket is closed with the code that tells the page (which shows the pairing screen).
    let closed = loop {
        match socket.read() {
            Ok(tungstenite::Message::Close(frame)) => break frame,
            Ok(_) => {}
            Err(e) => panic!("no close frame: {e}"),
        }
    };
    assert_eq!(
        closed.map(|f| u16::from(f.code)),
        Some(baton_serve::socket::REVOKED)
    );
    // And ends: the last chunk, then the connection closes.
    let mut rest = String::new();
    feed.read_to_string(&mut rest).unwrap();
    assert!(rest.contains("0\r\n\r\n"), "{rest:?}");
    // Unknown devices and bad ids.
    assert!(
        p.fails(&["serve", "revoke", "d-1"], 1)
            .contains("no paired device")
    );
    // SIGTERM ends the server, which says so by removing its address; pairing then says none
    // runs.
    served.process.signal("TERM");
    let (code, _, err) = served.process.finish();
    assert_eq!(code, Some(0), "{err}");
    assert!(!p.coordination().join("serve/server.json").exists());
    assert!(
        p.fails(&["serve", "pair"], 1)
            .contains("no `baton serve` runs")
    );
}

/// The change feed over a WebSocket, opened as the served page opens it (its Origin and cookie).
fn feed_socket(served: &Served, cookie: &str) -> tungstenite::WebSocket<TcpStream> {
    use tungstenite::client::IntoClientRequest;
    let mut request = format!("ws://{}/api/feed", served.host)
        .into_client_request()
        .unwrap();
    let headers = request.headers_mut();
    headers.insert("Origin", format!("http://{}", served.host).parse().unwrap());
    headers.insert("Cookie", cookie.parse().unwrap());
    let port: u16 = served.host.rsplit(':').next().unwrap().parse().unwrap();
    let stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    let (socket, answer) = tungstenite::client::client(request, stream).expect("the handshake");
    assert_eq!(answer.status(), 101);
    socket
}

/// The head of the answer to a WebSocket handshake (an upgraded connection stays open, so
/// nothing after the head is read).
fn handshake_answer(host: &str, headers: &[(&str, &str)]) -> Answer {
    let port: u16 = host.rsplit(':').next().unwrap().parse().unwrap();
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    let mut text = format!("GET /api/feed HTTP/1.1\r\nHost: {host}\r\nConnection: Upgrade\r\n");
    for (key, value) in headers {
        text.push_str(&format!("{key}: {value}\r\n"));
    }
    text.push_str("\r\n");
    stream.write_all(text.as_bytes()).unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8];
    while !head.ends_with(b"\r\n\r\n") {
        stream.read_exact(&mut byte).expect("the answer's head");
        head.push(byte[0]);
    }
    let head = String::from_utf8(head).unwrap();
    Answer {
        status: head.split(' ').nth(1).unwrap().parse().unwrap(),
        head,
        body: String::new(),
    }
}

/// A WebSocket's handshake to the feed, from a page that is not this server's or not paired,
/// or not quite a WebSocket: refused before anything is upgraded.
fn the_feed_s_websocket_is_refused_to_other_sites_and_unpaired_pages(p: Project) {
    let served = serve(&p, "lead");
    let mut browser = Browser::new(&served.host);
    assert_eq!(browser.open_link(&served.link).status, 303);
    let cookie = browser.cookie.clone().unwrap();
    let origin = browser.origin.clone();
    let handshake = |extra: &[(&str, &str)]| {
        let mut headers = vec![
            ("Upgrade", "websocket"),
            ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
        ];
        headers.extend_from_slice(extra);
        handshake_answer(&served.host, &headers)
    };
    let version = ("Sec-WebSocket-Version", "13");
    // As the page opens it: upgraded, with the accept key RFC 6455 gives for that key.
    let opened = handshake(&[version, ("Origin", &origin), ("Cookie", &cookie)]);
    assert_eq!(opened.status, 101, "{opened:?}");
    assert_eq!(
        opened.header("sec-websocket-accept").as_deref(),
        Some("s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    );
    for (why, extra, status) in [
        (
            "another site's page",
            vec![
                version,
                ("Origin", "http://evil.example"),
                ("Cookie", &cookie),
            ],
            403,
        ),
        (
            "no Origin (not a page of this server)",
            vec![version, ("Cookie", &cookie)],
            403,
        ),
        ("not paired", vec![version, ("Origin", &origin)], 401),
        (
            "an old protocol",
            vec![
                ("Sec-WebSocket-Version", "8"),
                ("Origin", &origin),
                ("Cookie", &cookie),
            ],
            400,
        ),
    ] {
        let refused = handshake(&extra);
        assert_eq!(refused.status, status, "{why}: {refused:?}");
        assert!(refused.header("sec-websocket-accept").is_none(), "{why}");
    }
}

/// With a certificate, `baton serve` speaks HTTPS only: a client that trusts the certificate's
/// CA pairs (its cookie `Secure`, sent over TLS only) and calls the API; plain HTTP on the same
/// port gets no answer; a key that does not fit is refused before anything listens.
#[test]
fn over_tls_the_device_cookie_is_secure_and_plain_http_gets_nothing() {
    let p = Project::init();
    let certs = tempfile::tempdir().unwrap();
    let (ca, cert, key) = support::pg::localhost_certificates(certs.path());
    let (cert, key) = (cert.to_str().unwrap(), key.to_str().unwrap());
    let (mut serving, url) = support::served::serve(&p, &["--tls-cert", cert, "--tls-key", key]);
    assert!(url.starts_with("https://localhost:"), "{url}");
    let link = serving.wait_stdout("/pair/").trim().to_string();
    assert!(link.starts_with("https://"), "{link}");
    let curl = |args: &[&str]| {
        let out = std::process::Command::new("curl")
            .args(["-s", "--max-time", "20", "--cacert", ca.to_str().unwrap()])
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let page = curl(&["-i", &link]);
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    let origin = format!("Origin: {url}");
    let paired = curl(&["-i", "-H", &origin, "-d", "", &link]);
    assert!(paired.starts_with("HTTP/1.1 303"), "{paired}");
    let cookie = paired
        .lines()
        .find_map(|l| {
            l.strip_prefix("set-cookie: ")
                .or_else(|| l.strip_prefix("Set-Cookie: "))
        })
        .unwrap_or_else(|| panic!("no cookie: {paired}"))
        .to_string();
    assert!(cookie.contains("; Secure"), "{cookie}");
    let token = cookie.split(';').next().unwrap();
    let status = curl(&[
        "-X",
        "POST",
        "-H",
        &format!("Origin: {url}"),
        "-H",
        "Content-Type: application/json",
        "-H",
        &format!("Cookie: {token}"),
        "-d",
        "{}",
        &format!("{url}/api/operation/task_status"),
    ]);
    assert!(status.contains("\"tasks\""), "{status}");
    // Plain HTTP to the TLS port: no HTTP answer.
    let plain = curl(&["-i", &url.replace("https://", "http://")]);
    assert!(!plain.contains("HTTP/1.1 200"), "{plain}");
    serving.signal("TERM");
    assert_eq!(serving.finish().0, Some(0));
    // A key that is not the certificate's: refused at start, saying so.
    let other = tempfile::tempdir().unwrap();
    let (_, _, other_key) = support::pg::localhost_certificates(other.path());
    let err = p.fails(
        &[
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--tls-cert",
            cert,
            "--tls-key",
            other_key.to_str().unwrap(),
        ],
        1,
    );
    assert!(err.contains("do not make a pair"), "{err}");
}

/// Without `--ui-dir`, the page is the UI built into `baton` (from this tree's `ui/dist`, which
/// the suite builds first), served from memory: the index for the app's routes, each built
/// file as it is on disk (its script gzipped once for a client that takes it), nothing outside
/// the build.
#[test]
fn the_page_is_the_ui_built_into_baton() {
    let p = Project::init();
    let (_process, url) = support::served::serve(&p, &["--pair", "none"]);
    let dist = support::served::ui_dist();
    let index = std::fs::read_to_string(dist.join("index.html")).unwrap();
    let script = std::fs::read_dir(dist.join("assets"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|path| path.extension().is_some_and(|e| e == "js"))
        .expect("a built script");
    let script_path = format!("/assets/{}", script.file_name().unwrap().to_string_lossy());
    let curl = |args: &[&str], path: &str| {
        let out = std::process::Command::new("curl")
            .args(["-s", "--max-time", "20"])
            .args(args)
            .arg(format!("{url}{path}"))
            .output()
            .unwrap();
        assert!(out.status.success(), "curl {args:?} {path}");
        out.stdout
    };
    for route in ["/", "/inbox", "/review/t1"] {
        assert_eq!(
            String::from_utf8(curl(&[], route)).unwrap(),
            index,
            "{route}"
        );
    }
    assert_eq!(
        curl(&["--compressed"], &script_path),
        std::fs::read(&script).unwrap(),
        "the script, decoded"
    );
    let head = String::from_utf8(curl(
        &["-D", "-", "-o", "/dev/null", "-H", "Accept-Encoding: gzip"],
        &script_path,
    ))
    .unwrap()
    .to_lowercase();
    assert!(head.contains("content-encoding: gzip"), "{head}");
    for outside in ["/../Cargo.toml", "/assets/../../README.md", "/missing.js"] {
        let status = String::from_utf8(curl(
            &["-o", "/dev/null", "-w", "%{http_code}", "--path-as-is"],
            outside,
        ))
        .unwrap();
        assert_eq!(status, "404", "{outside}");
    }
}

/// The UI's text files go gzipped to a client that takes gzip (curl, a real one, decodes them
/// back to the file), whole to one that does not; an image goes as it is either way.
#[test]
fn the_ui_s_text_files_are_gzipped_for_a_client_that_takes_gzip() {
    let p = Project::init();
    let served = serve(&p, "none");
    let script = "export const board = 1;\n".repeat(2000);
    std::fs::create_dir_all(served._ui.path().join("assets")).unwrap();
    std::fs::write(served._ui.path().join("assets/app.js"), &script).unwrap();
    std::fs::write(served._ui.path().join("icon.png"), b"\x89PNG not really").unwrap();
    let curl = |args: &[&str], path: &str| {
        let out = std::process::Command::new("curl")
            .args(["-s", "--max-time", "20"])
            .args(args)
            .arg(format!("http://{}{path}", served.host))
            .output()
            .unwrap();
        assert!(out.status.success(), "curl {args:?} {path}");
        String::from_utf8_lossy(&out.stdout).to_lowercase()
    };
    // Headers, then the size of the body as sent.
    let head = ["-D", "-", "-o", "/dev/null", "-w", "size %{size_download}"];
    let gzip = ["-H", "Accept-Encoding: gzip, deflate, br"];

    let sent = curl(&[&head[..], &gzip[..]].concat(), "/assets/app.js");
    assert!(sent.contains("content-encoding: gzip"), "{sent}");
    assert!(sent.contains("vary: accept-encoding"), "{sent}");
    let size: usize = sent.rsplit("size ").next().unwrap().trim().parse().unwrap();
    assert!(size < script.len() / 10, "{size} of {} bytes", script.len());
    assert_eq!(
        curl(&["--compressed"], "/assets/app.js"),
        script,
        "decoded, the file"
    );

    let whole = curl(&head, "/assets/app.js");
    assert!(!whole.contains("content-encoding"), "{whole}");
    assert!(
        whole.ends_with(&format!("size {}", script.len())),
        "{whole}"
    );

    let image = curl(&[&head[..], &gzip[..]].concat(), "/icon.png");
    assert!(!image.contains("content-encoding"), "{image}");
}

/// Bound to every address with `--host NAME`, the server's URL and pairing link name NAME
/// (never `0.0.0.0`), the machine's own addresses follow, and it answers to each of them (no
/// 421), to nothing else, and pairs a browser through the link.
#[test]
fn on_every_address_the_link_names_the_host_and_the_machine_and_the_server_answers_to_them() {
    let p = Project::init();
    let ui = tempfile::tempdir().unwrap();
    std::fs::write(
        ui.path().join("index.html"),
        "<!doctype html><title>Baton</title>",
    )
    .unwrap();
    let mut process = p.spawn(&[
        "--json",
        "serve",
        "--listen",
        "0.0.0.0:0",
        "--host",
        "phone.example",
        "--ui-dir",
        ui.path().to_str().unwrap(),
    ]);
    let started: Value = serde_json::from_str(&process.wait_stdout("\"urls\"")).unwrap();
    let urls: Vec<String> = started["urls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u.as_str().unwrap().to_string())
        .collect();
    let port = urls[0].rsplit(':').next().unwrap().to_string();
    assert_eq!(urls[0], format!("http://phone.example:{port}"), "{started}");
    assert_eq!(started["url"], urls[0].as_str());
    let paired: Value = serde_json::from_str(&process.wait_stdout("\"links\"")).unwrap();
    let links = paired["links"].as_array().unwrap();
    assert_eq!(links.len(), urls.len(), "{paired}");
    assert!(
        paired["link"]
            .as_str()
            .unwrap()
            .starts_with(&format!("http://phone.example:{port}/pair/")),
        "{paired}"
    );
    let texts = urls
        .iter()
        .cloned()
        .chain(links.iter().map(|l| l.to_string()));
    for text in texts {
        assert!(!text.contains("0.0.0.0"), "{text}");
    }
    let local = format!("localhost:{port}");
    // Each name it offers, it answers to.
    for url in &urls {
        let host = url.strip_prefix("http://").unwrap();
        let page = request(&local, "GET", "/", &[("Host", host)], "");
        assert_eq!(page.status, 200, "{host}: {page:?}");
    }
    // A machine address is reached through the network, not only named.
    if let Some(url) = urls.get(1) {
        let address = url.strip_prefix("http://").unwrap();
        let ip = address.rsplit_once(':').unwrap().0.trim_matches(['[', ']']);
        let reached = TcpStream::connect((ip, port.parse::<u16>().unwrap()));
        assert!(reached.is_ok(), "{address}: {reached:?}");
    }
    // Another name is refused, each of its own names said once.
    let foreign = request(&local, "GET", "/", &[("Host", "evil.example")], "");
    assert_eq!(foreign.status, 421, "{foreign:?}");
    assert_eq!(
        foreign
            .body
            .matches(&format!("phone.example:{port}"))
            .count(),
        1,
        "{foreign:?}"
    );
    // The link pairs a browser on the name it gives.
    let path = support::served::pairing_path(paired["link"].as_str().unwrap());
    let host = format!("phone.example:{port}");
    let page = request(&local, "GET", path, &[("Host", &host)], "");
    assert_eq!(page.status, 200, "{page:?}");
    let origin = format!("http://{host}");
    let form = ("Content-Type", "application/x-www-form-urlencoded");
    let paired = request(
        &local,
        "POST",
        path,
        &[("Host", &host), ("Origin", &origin), form],
        "",
    );
    assert_eq!(paired.status, 303, "{paired:?}");
    assert!(paired.header("set-cookie").is_some(), "{paired:?}");
    process.signal("TERM");
    assert_eq!(process.finish().0, Some(0));
}

/// On loopback only this machine reaches the server: its link says so and draws no QR code
/// a phone could not open.
#[test]
fn on_loopback_the_link_says_it_is_this_machine_s_alone() {
    let p = Project::init();
    let mut process = p.spawn(&["serve", "--listen", "127.0.0.1:0", "--pair", "lead"]);
    process.wait_stdout("/pair/");
    let said = process.wait_stdout("This machine only");
    assert!(said.contains("--listen 0.0.0.0:PORT"), "{said}");
    process.signal("TERM");
    let (code, stdout, _) = process.finish();
    assert_eq!(code, Some(0));
    assert!(
        !stdout.contains('▀') && !stdout.contains('█'),
        "no QR code: {stdout}"
    );
}
