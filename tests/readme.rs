//! The README's quick start ("Five minutes with Baton"), run word for word on a fresh folder:
//! its commands are read from the README's console blocks (`$ ` lines), in order, each in a
//! shell in the folder the one before left it in; the block the README says to run "in a
//! second terminal" runs in the background, and the team it starts is waited for once the
//! question is answered (the README says it then finishes). Every line the README shows under
//! a command must be in that command's output, in order (`…` stands for anything).

use baton_test_support as support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// One command of the quick start, and the lines the README shows it printing.
#[derive(Debug)]
struct Step {
    command: String,
    shows: Vec<String>,
    /// In a block the README says to run in a second terminal.
    background: bool,
}

/// The quick start's steps, as the README gives them.
fn quick_start(readme: &str) -> Vec<Step> {
    let section = readme
        .split("\n## Five minutes with Baton")
        .nth(1)
        .expect("the README has its quick start")
        .split("\n## ")
        .next()
        .unwrap();
    let mut steps: Vec<Step> = Vec::new();
    let mut in_block = false;
    let mut prose = String::new();
    for line in section.lines() {
        if line.starts_with("```") {
            in_block = line.starts_with("```console");
            if !in_block {
                prose.clear();
            }
            continue;
        }
        if !in_block {
            prose.push_str(line);
            prose.push(' ');
            continue;
        }
        match line.strip_prefix("$ ") {
            Some(command) => steps.push(Step {
                command: command.to_string(),
                shows: Vec::new(),
                background: prose.contains("second terminal"),
            }),
            None => steps
                .last_mut()
                .expect("output follows a command")
                .shows
                .push(line.to_string()),
        }
    }
    steps
}

/// Runs `command` with `sh` in `dir` as the README's reader would; its output and the folder
/// it ends in.
fn run(command: &str, dir: &Path, env: &[(String, String)]) -> (String, PathBuf) {
    let out = shell(dir, env)
        .arg("-c")
        .arg(format!("{command}\necho \"__left_in=$PWD\""))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "`{command}` failed: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let left = text
        .lines()
        .find_map(|l| l.strip_prefix("__left_in="))
        .map(PathBuf::from)
        .unwrap();
    (text, left)
}

/// `sh` in `dir` with the reader's environment (none of the suite's own Baton variables).
fn shell(dir: &Path, env: &[(String, String)]) -> Command {
    let mut sh = Command::new("sh");
    sh.current_dir(dir)
        .env_remove("BATON_DIR")
        .env_remove("BATON_STORE")
        .env_remove("BATON_AGENT")
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null());
    sh
}

/// Whether `output` has each of `shows` on a line of its own, in order (`…`: anything).
fn shown_in(output: &str, shows: &[String]) -> bool {
    let mut lines = output.lines();
    shows.iter().all(|shown| {
        let parts: Vec<&str> = shown.split('…').collect();
        lines.any(|line| {
            let mut rest = line;
            parts.iter().enumerate().all(|(i, part)| {
                let found = match i {
                    0 => rest.strip_prefix(part).map(|r| (0, r)),
                    _ => rest.find(part).map(|at| (at, &rest[at + part.len()..])),
                };
                match found {
                    Some((_, after)) => {
                        rest = after;
                        true
                    }
                    None => false,
                }
            }) && (parts.len() > 1 || rest.is_empty())
        })
    })
}

#[test]
fn the_readme_quick_start_runs_word_for_word() {
    let readme = std::fs::read_to_string(support::source_root().join("README.md")).unwrap();
    let steps = quick_start(&readme);
    assert!(steps.len() >= 8, "{steps:#?}");
    let place = tempfile::tempdir().unwrap();
    let baton_dir = support::baton_bin().parent().unwrap().to_path_buf();
    let path = std::env::join_paths(
        std::iter::once(baton_dir).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    let mut env: Vec<(String, String)> = support::GIT_IDENTITY
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    env.push(("PATH".into(), path.to_string_lossy().into_owned()));
    let mut dir = place.path().to_path_buf();
    let mut team: Option<std::process::Child> = None;
    for step in &steps {
        if step.background {
            let child = shell(&dir, &env)
                .arg("-c")
                .arg(&step.command)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            team = Some(child);
            continue;
        }
        let (output, left) = run(&step.command, &dir, &env);
        assert!(
            shown_in(&output, &step.shows),
            "`{}` printed:\n{output}\nnot what the README shows:\n{}",
            step.command,
            step.shows.join("\n")
        );
        dir = left;
        // Once the question is answered, the team finishes its task and ends.
        if step.command.starts_with("baton answer")
            && let Some(child) = team.take()
        {
            let out = support::claude::finish(child);
            assert!(out.status.success(), "the team: {out:?}");
        }
    }
    assert!(team.is_none(), "the team was never waited for");
}

#[test]
fn shown_lines_match_with_anything_for_an_ellipsis() {
    let shows = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    assert!(shown_in(
        "a\ntask-1 (done): at 12ab\nz",
        &shows(&["task-1 (done): at …"])
    ));
    assert!(!shown_in(
        "task-1 (failed): at 12ab",
        &shows(&["task-1 (done): at …"])
    ));
    assert!(shown_in("x\nHello, world\n", &shows(&["Hello, world"])));
    assert!(!shown_in("Hello, world!", &shows(&["Hello, world"])));
    assert!(!shown_in("b\na", &shows(&["a", "b"])), "in order");
}
