//! `baton serve` for tests and benchmarks: the server started on a free loopback port, and a
//! phone-sized Chromium driven through Playwright (`tests/clients/served_ui.mjs`), one JSON
//! command at a time.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::Value;

use crate::{Background, Project};

/// `baton serve --listen 127.0.0.1:0 ARGS` for `p`, once it listens: the process and its URL.
/// It serves the UI built into `baton` unless `args` name a `--ui-dir`.
pub fn serve(p: &Project, args: &[&str]) -> (Background, String) {
    let mut all = vec!["serve", "--listen", "127.0.0.1:0"];
    all.extend(args);
    let mut process = p.spawn(&all);
    let line = process.wait_stdout("serving this project's UI at");
    let url = line
        .split(" at ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .unwrap_or_else(|| panic!("no URL in {line:?}"))
        .to_string();
    (process, url)
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

/// The Playwright driver on a page of the server at `base`.
pub struct Phone {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl Phone {
    pub fn start(base: &str) -> Phone {
        Phone::start_resolving(base, None)
    }

    /// A phone whose network resolves names as `rules` say (Chromium's host resolver rules,
    /// `MAP phone.example 127.0.0.1`): a server reached by a name of its own.
    pub fn start_resolving(base: &str, rules: Option<&str>) -> Phone {
        let root = crate::source_root();
        let mut command = Command::new("node");
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
            input,
            output,
        }
    }

    /// Runs one command (`{"do": …}`); its answer, which must be `ok`.
    pub fn run(&mut self, command: Value) -> Value {
        writeln!(self.input, "{command}").expect("the driver reads its commands");
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
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
