//! `baton serve` for tests and benchmarks: the server started on a free loopback port, and a
//! phone-sized Chromium driven through Playwright (`tests/clients/served_ui.mjs`), one JSON
//! command at a time.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::Value;

use crate::{Background, PATIENCE, Project};

/// `baton serve --listen 127.0.0.1:0 ARGS` for `p`, once it listens: the process and its URL.
/// It serves the UI built into `baton` unless `args` name a `--ui-dir`.
pub fn serve(p: &Project, args: &[&str]) -> (Background, String) {
    let mut all = vec!["serve", "--listen", "127.0.0.1:0"];
    all.extend(args);
    let mut process = p.spawn(&all);
    let url = served_url(&mut process);
    (process, url)
}

/// The URL a starting `baton serve` prints it serves at, once it has.
pub fn served_url(process: &mut Background) -> String {
    let line = process.wait_stdout("serving this project's UI at");
    line.split(" at ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .unwrap_or_else(|| panic!("no URL in {line:?}"))
        .to_string()
}

/// The UI's build in the source tree the tests run from (what `baton` was built with).
pub fn ui_dist() -> std::path::PathBuf {
    crate::source_root().join("ui/dist")
}

/// The path of a pairing link (`/pair/CODE`), to open on the server the test reaches.
pub fn pairing_path(link: &str) -> &str {
    &link[link
        .find("/pair/")
        .unwrap_or_else(|| panic!("not a pairing link: {link}"))..]
}

/// An HTTP answer.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub head: String,
    pub body: String,
}

impl Answer {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {self:?}"))
    }

    pub fn header(&self, name: &str) -> Option<String> {
        self.head.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.eq_ignore_ascii_case(name)
                .then(|| value.trim().to_string())
        })
    }
}

/// One request to `host` (`localhost:PORT`) with `headers`, as a browser on this server's own
/// page would send it unless the headers say otherwise.
pub fn request(
    host: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Answer {
    let port = host.rsplit(':').next().unwrap();
    let mut stream = TcpStream::connect(("127.0.0.1", port.parse::<u16>().unwrap())).unwrap();
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    let mut text = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        text.push_str(&format!("Host: {host}\r\n"));
    }
    for (key, value) in headers {
        text.push_str(&format!("{key}: {value}\r\n"));
    }
    text.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    stream.write_all(text.as_bytes()).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    Answer {
        status,
        head: head.to_string(),
        body: body.to_string(),
    }
}

/// A browser's session with the server: its cookie, if paired.
pub struct Browser<'a> {
    pub host: &'a str,
    pub origin: String,
    pub cookie: Option<String>,
}

impl<'a> Browser<'a> {
    /// A browser on the server at `host` (`localhost:PORT`), not paired yet.
    pub fn new(host: &'a str) -> Browser<'a> {
        Browser {
            host,
            origin: format!("http://{host}"),
            cookie: None,
        }
    }

    /// Opens a pairing link and presses its button; keeps the cookie it sets.
    pub fn open_link(&mut self, link: &str) -> Answer {
        let path = pairing_path(link);
        // Opening the link (as a chat app's preview would) pairs nothing: it asks.
        let page = request(self.host, "GET", path, &[("User-Agent", "Test phone")], "");
        // A wrong, used or expired code is refused at the page already, counted as wrong.
        if page.status != 200 {
            assert!(page.header("set-cookie").is_none(), "{page:?}");
            return page;
        }
        assert!(
            page.body.contains("as the lead: it may") || page.body.contains("as a responder:"),
            "{page:?}"
        );
        assert!(page.header("set-cookie").is_none(), "{page:?}");
        assert!(
            page.body.contains(&format!("action=\"{path}\"")),
            "{page:?}"
        );
        let answer = request(
            self.host,
            "POST",
            path,
            &[
                ("User-Agent", "Test phone"),
                ("Origin", &self.origin),
                ("Content-Type", "application/x-www-form-urlencoded"),
            ],
            "",
        );
        if let Some(cookie) = answer.header("set-cookie") {
            self.cookie = Some(cookie.split(';').next().unwrap().to_string());
        }
        answer
    }

    pub fn post(&self, path: &str, body: &Value) -> Answer {
        let mut headers = vec![
            ("Origin", self.origin.as_str()),
            ("Content-Type", "application/json"),
        ];
        if let Some(cookie) = &self.cookie {
            headers.push(("Cookie", cookie));
        }
        request(self.host, "POST", path, &headers, &body.to_string())
    }

    pub fn operation(&self, name: &str, body: Value) -> Answer {
        self.post(&format!("/api/operation/{name}"), &body)
    }
}

/// The Playwright driver on a page of the server at `base`.
pub struct Phone {
    child: Child,
    /// Closed to end the driver, which then closes its browser.
    input: Option<ChildStdin>,
    output: BufReader<ChildStdout>,
    /// The driver's temporary folder (Chromium's profile, Playwright's artifacts), removed
    /// with it rather than left in the machine's.
    _tmp: tempfile::TempDir,
}

impl Phone {
    pub fn start(base: &str) -> Phone {
        Phone::start_resolving(base, None)
    }

    /// A phone whose network resolves names as `rules` say (Chromium's host resolver rules,
    /// `MAP phone.example 127.0.0.1`): a server reached by a name of its own.
    pub fn start_resolving(base: &str, rules: Option<&str>) -> Phone {
        let root = crate::source_root();
        let tmp = tempfile::tempdir().expect("a temporary folder for the driver");
        let mut command = Command::new("node");
        command.env("TMPDIR", tmp.path());
        if let Some(rules) = rules {
            command.env("BATON_HOST_RULES", rules);
        }
        let mut child = command
            .arg(root.join("tests/clients/served_ui.mjs"))
            .arg(crate::cached_tool("node/node_modules/playwright-core"))
            .arg(base)
            // axe-core from the UI's own packages (a devDependency of ui/).
            .arg(root.join("ui/node_modules/axe-core/axe.min.js"))
            // Where a failed command leaves its screenshot.
            .env("BATON_ARTIFACTS", crate::artifacts_dir())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("node runs the Playwright driver");
        let input = child.stdin.take().expect("piped");
        let output = BufReader::new(child.stdout.take().expect("piped"));
        Phone {
            child,
            input: Some(input),
            output,
            _tmp: tmp,
        }
    }

    /// Runs one command (`{"do": …}`); its answer, which must be `ok`.
    pub fn run(&mut self, command: Value) -> Value {
        let input = self.input.as_mut().expect("the driver's input is open");
        writeln!(input, "{command}").expect("the driver reads its commands");
        let mut line = String::new();
        self.output
            .read_line(&mut line)
            .expect("the driver answers");
        let answer: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"));
        assert_eq!(answer["ok"], true, "{command}: {answer}");
        answer
    }
}

impl Drop for Phone {
    /// Ends the driver as it ends by itself, its input closed (it closes its browser, which
    /// then removes its profile), and kills it only if it has not ended within the patience.
    fn drop(&mut self) {
        drop(self.input.take());
        let deadline = std::time::Instant::now() + crate::PATIENCE;
        while matches!(self.child.try_wait(), Ok(None)) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20)); // retry until the deadline
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
