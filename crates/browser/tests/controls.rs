//! The controls against Debian's real Chromium, launched headless through the registry as the
//! desktop app and the MCP proxy launch it.

use baton_browser::{
    BrowserControlError, check_url, navigate, page_state, reload, save_screenshot,
};
use baton_browser::{LaunchOptions, RunningBrowser, free_port};

/// Serves the files of `dir` on 127.0.0.1 until the test ends; returns the base URL.
fn serve(dir: &std::path::Path) -> String {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let dir = dir.to_path_buf();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut line = String::new();
            let _ = BufReader::new(&stream).read_line(&mut line);
            let name = line.split_whitespace().nth(1).unwrap_or("/");
            let body = std::fs::read(dir.join(name.trim_start_matches('/'))).unwrap_or_default();
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(&body);
        }
    });
    base
}

fn page(dir: &std::path::Path, base: &str, name: &str, title: &str) -> String {
    std::fs::write(
        dir.join(name),
        format!("<html><head><title>{title}</title></head><body><h1>{title}</h1></body></html>"),
    )
    .unwrap();
    format!("{base}/{name}")
}

#[test]
fn navigate_reload_and_screenshot_a_registered_browser() {
    let dir = tempfile::tempdir().unwrap();
    let project = baton_folder::FolderStore::init(dir.path(), "controls", None).unwrap();
    let base = serve(dir.path());
    let first = page(dir.path(), &base, "first.html", "First page");
    let second = page(dir.path(), &base, "second.html", "Second page");
    let port = free_port().unwrap();
    let mut options = LaunchOptions::new(port, "controls test");
    options.url = Some(first.clone());
    let browser = RunningBrowser::launch(project.layout(), &options).unwrap();

    // The launch returns once CDP answers; the first page may still be loading.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while page_state(port).unwrap().title != "First page" {
        assert!(
            std::time::Instant::now() < deadline,
            "the first page never loaded"
        );
        std::thread::sleep(std::time::Duration::from_millis(50)); // retry until the deadline
    }

    let state = navigate(port, &second).unwrap();
    assert_eq!(state.title, "Second page");
    assert_eq!(state.url, second);

    // A reload keeps the page and picks up its new content.
    std::fs::write(
        dir.path().join("second.html"),
        "<html><head><title>Edited page</title></head></html>",
    )
    .unwrap();
    let state = reload(port).unwrap();
    assert_eq!(state.title, "Edited page");
    assert_eq!(state.url, second);

    let saved = save_screenshot(project.layout(), port, None).unwrap();
    assert!(
        saved
            .path
            .starts_with(project.layout().root().join("screenshots"))
    );
    let png = std::fs::read(&saved.path).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    assert_eq!(png.len(), saved.bytes);
    let named = dir.path().join("named.png");
    save_screenshot(project.layout(), port, Some(&named)).unwrap();
    assert!(std::fs::read(&named).unwrap().starts_with(b"\x89PNG"));

    // A refused URL changes nothing.
    let err = navigate(port, "javascript:alert(1)").unwrap_err();
    assert_eq!(err.kind(), "invalid_input");
    assert_eq!(page_state(port).unwrap().title, "Edited page");

    browser.stop();
    let err = reload(port).unwrap_err();
    assert!(
        matches!(err, BrowserControlError::NotRunning { .. }),
        "{err}"
    );
    assert!(err.to_string().contains("baton browser list"), "{err}");
}

#[test]
fn urls_outside_the_allowed_schemes_are_refused_with_the_reason() {
    for good in [
        "http://127.0.0.1:3000/",
        "HTTPS://example.test",
        "about:blank",
    ] {
        assert!(check_url(good).is_ok(), "{good}");
    }
    for (bad, why) in [
        ("javascript:alert(1)", "http://"),
        ("chrome://settings", "http://"),
        ("file:///etc/passwd", "file:"),
        ("FILE:///tmp/x.html", "http://"),
        ("127.0.0.1:3000", "http://"),
        ("http://a\nb", "control characters"),
    ] {
        let err = check_url(bad).unwrap_err().to_string();
        assert!(err.contains(why), "{bad}: {err}");
    }
    let long = format!("http://{}", "a".repeat(9000));
    assert!(check_url(&long).unwrap_err().to_string().contains("8192"));
}
