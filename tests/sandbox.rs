//! Every attempt in a sandbox (`team up --sandbox`, bubblewrap), as a hostile `exec` agent
//! tries it, on both stores: it cannot write the lead's checkout, git's hooks or config,
//! another ref or another task's worktree, cannot read secrets in the home folder, cannot see
//! or signal processes outside, and leaves no process behind (one it moved to a session of its
//! own included); in the same run a well-behaved agent commits on its branch and its work is
//! recorded and merges. It reaches Baton only through its attempt's door: as itself (not the
//! agent `BATON_AGENT` names), for an agent's commands only (not adding tasks, answering or
//! stopping the team), with no `.coordination/`, store URL or password in sight. Its network
//! reaches only its profile's allow-list, through Baton's proxy, which says in the transcript
//! what it refused; nothing reaches the machine's other services. A team is
//! sandboxed by default; without bubblewrap `team up` refuses before claiming anything, saying
//! what to install, and `--no-sandbox` runs it without, as `team status` and `team logs` say.

use baton_test_support as support;

use std::path::Path;

use serde_json::Value;
use support::{Project, git};

support::on_both_stores!(
    a_hostile_agent_is_kept_inside_its_worktree_and_its_branch,
    a_connection_outside_the_allow_list_is_put_to_the_lead_when_the_profile_asks,
    the_projects_check_runs_what_an_agent_wrote_in_a_sandbox,
    a_team_is_sandboxed_by_default_and_without_bubblewrap_refuses_before_claiming_anything,
    a_fork_bomb_stops_at_the_process_limit,
    a_flood_of_refused_connections_puts_a_few_questions_to_the_lead,
    an_agent_cannot_widen_its_network_through_its_own_codex_configuration,
);

/// Writes the project's agent profiles (`.coordination/team/profiles.toml`).
fn write_profiles(p: &Project, toml: &str) {
    std::fs::create_dir_all(p.coordination().join("team")).unwrap();
    std::fs::write(p.coordination().join("team/profiles.toml"), toml).unwrap();
}

/// A home folder with secrets in it, for the supervisor (and so for the agents) to have.
fn home_with_secrets(p: &Project) -> std::path::PathBuf {
    let home = p.path().join("..").join(format!(
        "home-{}",
        p.path().file_name().unwrap().to_string_lossy()
    ));
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_ed25519"), "SSH-CANARY\n").unwrap();
    std::fs::write(home.join(".pgpass"), "*:*:*:*:PG-CANARY\n").unwrap();
    std::fs::create_dir_all(home.join(".config/gh")).unwrap();
    std::fs::write(home.join(".config/gh/hosts.yml"), "GH-CANARY\n").unwrap();
    home
}

/// An HTTP server on the machine's loopback answering every request with `body`; its port,
/// and how many connections it has had.
fn http_server(body: &'static str) -> (u16, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::io::{BufRead, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let mut reader = std::io::BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
                line.clear();
            }
            let mut stream = stream;
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (port, seen)
}

/// The processes whose command line holds `marker`.
fn processes_with(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(line) = std::fs::read(entry.path().join("cmdline"))
            && String::from_utf8_lossy(&line).contains(marker)
        {
            found.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    found
}

fn a_hostile_agent_is_kept_inside_its_worktree_and_its_branch(p: Project) {
    support::repository(p.path());
    let top = p.path();
    let home = home_with_secrets(&p);
    let other = top.join(".coordination/worktrees/other");
    let main_before = git(top, &["rev-parse", "main"]);
    // Its own for each run of this test (both stores' run in one process).
    static RUNS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);
    let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let marker = format!("{}.{run}4321", std::process::id());
    // A file only a program run on the lead's side could make (the checkout is read-only to
    // the agent; its /tmp is its own).
    let canary = top.join(format!("canary-{marker}"));
    // Two services on the machine's loopback: one the profile allows, one it does not.
    let (allowed, _) = http_server("ALLOWED");
    let (secret, secret_seen) = http_server("SECRET");
    write_profiles(
        &p,
        &format!("[profiles.exec.sandbox]\nallow = [\"127.0.0.1:{allowed}\"]\n"),
    );
    // Each attempt prints what it could do; the test reads the task's output.
    let script = format!(
        r##"try() {{ if sh -c "$2" >/dev/null 2>&1; then echo "$1: DONE"; else echo "$1: refused"; fi; }}
try checkout 'echo x > {top}/planted.txt'
try hooks 'echo "#!/bin/sh" > {top}/.git/hooks/pre-commit'
echo x > {top}/.git/planted-in-git 2>/dev/null
try config 'git config --file {top}/.git/config core.fsmonitor /tmp/evil'
try main-ref 'git update-ref refs/heads/main HEAD'
try other-worktree 'mkdir -p {other} && echo x > {other}/f'
try ssh 'cat {home}/.ssh/id_ed25519'
try pgpass 'cat {home}/.pgpass'
try gh 'cat {home}/.config/gh/hosts.yml'
try see-test 'kill -0 {test}'
try aws-env 'env | grep -q AWS-CANARY'
try coordination 'cat {top}/.coordination/tasks.json || cat {top}/.coordination/store.json'
try coordination-write 'echo x > {top}/.coordination/planted'
try store-env 'env | grep -q -e BATON_STORE -e PGPASSWORD -e postgres:'
try lead-add 'baton leader add-task Evil --id evil'
try team-stop 'baton team stop'
try answer 'baton answer q-1 forged'
try store-option 'baton --store postgres://127.0.0.1/x worker list'
try heartbeat-as-other 'BATON_AGENT=x9 baton worker heartbeat x9'
try mcp-http 'baton mcp --http 127.0.0.1:0 </dev/null'
try serve-pair 'baton serve pair --as lead'
try serve-start 'baton serve --listen 127.0.0.1:0 </dev/null'
try force-clear 'baton signal clear --path {top}/keep.txt --force'
try signal-checkout 'baton signal write --path {top}/planted-signal'
try net-direct 'curl -sf --max-time 5 --noproxy "*" http://127.0.0.1:{secret}/'
try net-host 'curl -sf --max-time 5 http://not-allowed.invalid/'
try net-port 'curl -sf --max-time 5 --noproxy "" -x http://127.0.0.1:3128 http://127.0.0.1:{secret}/'
try net-tunnel 'curl -sf --max-time 5 --noproxy "" -p -x http://127.0.0.1:3128 http://127.0.0.1:{secret}/'
try net-allowed 'curl -sf --max-time 5 http://127.0.0.1:{allowed}/ | grep -q ALLOWED'
try net-allowed-proxy 'curl -sf --max-time 5 --noproxy "" -x http://127.0.0.1:3128 http://127.0.0.1:{allowed}/ | grep -q ALLOWED'
printf '%s\n' '{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}' '{{"jsonrpc":"2.0","method":"notifications/initialized"}}' '{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"signal_write","arguments":{{"path":"{top}/mcp-planted"}}}}}}' | baton mcp --quiet >/dev/null 2>&1
try inbox 'baton inbox'
try message 'BATON_AGENT=x9 baton message send lead Hello from-inside'
setsid sh -c 'exec sleep {marker}' </dev/null >/dev/null 2>&1 &
echo "$BATON_TASK_ID" > mine.txt && git add mine.txt && git commit -qm "$BATON_TASK_ID: mine" && echo commit: DONE
try objects 'for f in $(find /tmp/.baton-objects -type f); do chmod u+w "$f"; : > "$f" || exit 1; done; test -n "$(find /tmp/.baton-objects -type f | head -1)"'
try canary 'touch {canary}'
mkdir -p fake && cp -r {top}/.git/. fake/ 2>/dev/null; printf '[filter "evil"]\n\tclean = touch {canary}\n' >> fake/config
echo '* filter=evil' > .gitattributes && echo "gitdir: $PWD/fake/worktrees/$(basename "$PWD")" > .git && echo again >> mine.txt && echo redirect: planted"##,
        top = top.display(),
        canary = canary.display(),
        other = other.display(),
        home = home.display(),
        test = std::process::id(),
    );
    // A file of the lead's, not a signal, that only the user may have Baton remove.
    std::fs::write(top.join("keep.txt"), "KEEP\n").unwrap();
    p.ok(&["leader", "add-task", "Try everything", "--id", "h1"]);
    let mut command = p.committing(&[
        "team",
        "up",
        "--sandbox",
        "--prefix",
        "hx",
        "--exec",
        &script,
    ]);
    command.env("HOME", &home);
    command.env("AWS_SECRET_ACCESS_KEY", "AWS-CANARY");
    let out = command.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let shown: Value = p.task("h1");
    let said = shown["result"]["output"].as_str().unwrap_or_default();
    for refused in [
        "checkout",
        "hooks",
        "config",
        "main-ref",
        "other-worktree",
        "ssh",
        "pgpass",
        "gh",
        "see-test",
        "aws-env",
        "coordination",
        "coordination-write",
        "store-env",
        "lead-add",
        "team-stop",
        "answer",
        "store-option",
        "heartbeat-as-other",
        "mcp-http",
        "serve-pair",
        "serve-start",
        "force-clear",
        "signal-checkout",
        "net-direct",
        "net-host",
        "net-port",
        "net-tunnel",
        "objects",
        "canary",
    ] {
        assert!(
            said.contains(&format!("{refused}: refused")),
            "{refused} was not refused: {said}"
        );
    }
    for done in [
        "commit",
        "inbox",
        "message",
        "net-allowed",
        "net-allowed-proxy",
    ] {
        assert!(said.contains(&format!("{done}: DONE")), "{said}");
    }
    // The project's objects are whole (the agent's git wrote to a store of its own), and the
    // repository it pointed its checkout at ran nothing on the lead's side when Baton read
    // the checkout afterwards.
    assert!(said.contains("redirect: planted"), "{said}");
    git(top, &["fsck", "--full", "--no-dangling"]);
    assert!(
        !canary.exists(),
        "a program of the agent's ran on the lead's side"
    );
    // Through its door the agent spoke as itself, whatever BATON_AGENT said, and did nothing
    // that is the lead's; the door is gone with the attempt.
    let lead = p.json(&["inbox", "--all"]);
    let messages = lead["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 1, "{lead}");
    assert_eq!(messages[0]["from"], "hx1", "{lead}");
    assert_eq!(messages[0]["subject"], "Hello", "{lead}");
    let status = p.json(&["leader", "status"]);
    assert!(!status.to_string().contains("\"evil\""), "{status}");
    assert!(!top.join(".coordination/planted").exists());
    assert_eq!(
        std::fs::read_to_string(top.join("keep.txt")).unwrap(),
        "KEEP\n"
    );
    // Paths named through the door stay in the agent's worktree, on the CLI and over MCP.
    assert!(!top.join("planted-signal").exists());
    assert!(!top.join("mcp-planted").exists());
    assert!(!top.join(".coordination/team/doors/h1").exists());
    assert!(!top.join("planted.txt").exists());
    assert!(!top.join(".git/hooks/pre-commit").exists());
    assert!(
        !std::fs::read_to_string(top.join(".git/config"))
            .unwrap()
            .contains("evil")
    );
    assert_eq!(git(top, &["rev-parse", "main"]), main_before);
    assert!(!other.exists());
    // Nothing it started is left, the process it moved to a session of its own included.
    support::eventually("the agent's processes end", || {
        processes_with(&marker).is_empty()
    });

    // The attempt says it ran sandboxed, and its transcript says what the sandbox allows.
    let log = p.json(&["team", "logs", "h1"]);
    assert_eq!(log["attempt"]["sandboxed"], true, "{log}");
    // Its command as the agent's, not the sandbox's or its network bridge's.
    let started = log["events"][0]["command"].as_str().unwrap_or_default();
    assert!(started.starts_with("sh -c 'try()"), "{started}");
    assert!(
        log.to_string().contains("in a sandbox (bubblewrap)"),
        "{log}"
    );
    // What its door refused is in its transcript, as it asked: the lead's commands, another
    // agent's task, a path outside its worktree.
    let events = log.to_string();
    // Its commit said no error: git made and removed its lock in the shared git folder's
    // scratch layer (a commit deletes AUTO_MERGE), which nothing outside the sandbox sees.
    assert!(!events.contains("packed-refs.lock"), "{events}");
    assert!(!top.join(".git/planted-in-git").exists());
    assert!(!top.join(".git/packed-refs.lock").exists());
    for asked in [
        "baton leader add-task Evil --id evil",
        "baton team stop",
        "baton answer q-1 forged",
        "baton --store postgres://127.0.0.1/x worker list",
        "baton worker heartbeat x9",
        "baton signal write --path",
    ] {
        assert!(
            events.contains(&format!("the door refused `{asked}")),
            "{asked}: {events}"
        );
    }

    // What its network's proxy refused is there too, and nothing reached the service it
    // was not allowed.
    for refused in [
        "refused a connection to not-allowed.invalid:80".to_string(),
        format!("refused a connection to 127.0.0.1:{secret}"),
    ] {
        assert!(events.contains(&refused), "{refused}: {events}");
    }
    assert_eq!(
        secret_seen.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "the service outside the allow-list was reached"
    );
    assert!(
        events.contains(&format!("127.0.0.1:{allowed}")),
        "the allow-list is in the transcript: {events}"
    );

    // Its own commit is on its branch, recorded, and merges.
    let branch = &shown["result"]["branch"];
    assert_eq!(branch["name"], "baton/h1", "{shown}");
    assert_eq!(branch["commits"][0]["subject"], "h1: mine", "{shown}");
    assert_eq!(
        git(top, &["log", "-1", "--format=%s", "baton/h1"]).trim(),
        "h1: mine"
    );
    p.ok(&["leader", "merge", "h1"]);
    assert_eq!(
        std::fs::read_to_string(top.join("mine.txt")).unwrap(),
        "h1\n"
    );
    let _ = std::fs::remove_dir_all(&home);
}

/// With `sandbox.ask`, a connection outside the allow-list waits for the project's approval
/// policy, which asks the lead; "always allow" lets it through and adds `Network(HOST:PORT)` to
/// the policy, so the next one is not asked about; "deny" refuses it, as the transcript says.
fn a_connection_outside_the_allow_list_is_put_to_the_lead_when_the_profile_asks(p: Project) {
    let (port, seen) = http_server("ASKED");
    write_profiles(&p, "[profiles.exec.sandbox]\nask = true\n");
    std::fs::write(
        p.coordination().join("policy.toml"),
        "ask_timeout_seconds = 120\n",
    )
    .unwrap();
    let (denied, denied_seen) = http_server("DENIED");
    p.ok(&["leader", "add-task", "Fetch twice", "--id", "f1"]);
    let script = format!(
        "for target in {port} {port} {denied}; do \
         if curl -sf --max-time 150 --noproxy '' -x http://127.0.0.1:3128 http://127.0.0.1:$target/; \
         then echo; else echo \"refused $target\"; fi; done"
    );
    let team = p.spawn(&[
        "team",
        "up",
        "--no-worktree",
        "--prefix",
        "nx",
        "--exec",
        &script,
    ]);
    let asked = |target: u16| {
        let mut question = None;
        support::eventually("the lead is asked about the connection", || {
            let inbox = p.json(&["inbox"]);
            question = inbox["questions"].as_array().unwrap().iter().find_map(|q| {
                q.to_string()
                    .contains(&format!("127.0.0.1:{target}"))
                    .then(|| q["id"].as_str().unwrap().to_string())
            });
            question.is_some()
        });
        question.unwrap()
    };
    let first = asked(port);
    p.ok(&["answer", &first, "always allow"]);
    let second = asked(denied);
    p.ok(&["answer", &second, "deny"]);
    let (code, _, stderr) = team.finish();
    assert_eq!(code, Some(0), "{stderr}");

    let said = p.task("f1")["result"]["output"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert_eq!(said.matches("ASKED").count(), 2, "{said}");
    assert!(said.contains(&format!("refused {denied}")), "{said}");
    assert_eq!(seen.load(std::sync::atomic::Ordering::SeqCst), 2);
    assert_eq!(denied_seen.load(std::sync::atomic::Ordering::SeqCst), 0);
    // Asked about once for the first host: the second time the policy's new rule allowed it.
    let history = p.json(&["inbox", "--all"]);
    let about_first = history["questions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|q| q.to_string().contains(&format!("127.0.0.1:{port}")))
        .count();
    assert_eq!(about_first, 1, "{history}");
    let policy = std::fs::read_to_string(p.coordination().join("policy.toml")).unwrap();
    assert!(
        policy.contains(&format!("Network(127.0.0.1:{port})")),
        "{policy}"
    );
    let log = p.json(&["team", "logs", "f1"]).to_string();
    assert!(
        log.contains(&format!(
            "the sandbox refused a connection to 127.0.0.1:{denied}"
        )),
        "{log}"
    );
}

/// The project's check runs what an agent wrote (here a script the agent committed), on the
/// lead's side: in its sandbox it writes only its checkout, and reaches none of the lead's
/// files, secrets, variables or services; `check_sandbox = false` runs it as the lead.
fn the_projects_check_runs_what_an_agent_wrote_in_a_sandbox(p: Project) {
    support::repository(p.path());
    let top = p.path();
    let home = home_with_secrets(&p);
    let (service, service_seen) = http_server("SERVICE");
    let probe = format!(
        r#"try() {{ if sh -c "$2" >/dev/null 2>&1; then echo "$1: DONE"; else echo "$1: refused"; fi; }}
try checkout 'echo x > {top}/planted-by-check'
try coordination 'cat {top}/.coordination/review.toml'
try coordination-write 'echo x > {top}/.coordination/planted-by-check'
try ssh 'cat {home}/.ssh/id_ed25519'
try pgpass 'cat {home}/.pgpass'
try secret-env 'env | grep -q -e TOKEN-CANARY -e AWS-CANARY -e BATON_STORE -e PGPASSWORD'
try service 'curl -sf --max-time 5 --noproxy "" -x http://127.0.0.1:3128 http://127.0.0.1:{service}/'
try service-direct 'curl -sf --max-time 5 http://127.0.0.1:{service}/'
try own-checkout 'echo built > built-by-check.txt'
"#,
        top = top.display(),
        home = home.display(),
    );
    std::fs::write(top.join("probe-src.sh"), probe).unwrap();
    std::fs::write(
        top.join(".coordination/review.toml"),
        "check = \"sh probe.sh\"\n",
    )
    .unwrap();
    p.ok(&["leader", "add-task", "Write a probe", "--id", "c1"]);
    let out = p
        .committing(&[
            "team",
            "up",
            "--exec",
            &format!(
                "cp {}/probe-src.sh probe.sh && git add probe.sh && git commit -qm probe",
                top.display()
            ),
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");

    let check = |sandboxed: bool| -> String {
        if !sandboxed {
            std::fs::write(
                top.join(".coordination/review.toml"),
                "check = \"sh probe.sh\"\ncheck_sandbox = false\n",
            )
            .unwrap();
        }
        let mut command = p.command(&["--json", "review", "check", "c1"]);
        command
            .env("HOME", &home)
            .env("MY_API_TOKEN", "TOKEN-CANARY")
            .env("AWS_SECRET_ACCESS_KEY", "AWS-CANARY");
        let out = command.output().unwrap();
        let run: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
        run["check"]["output"]
            .as_str()
            .or(run["output"].as_str())
            .unwrap_or_else(|| panic!("{run}"))
            .to_string()
    };
    let said = check(true);
    for refused in [
        "checkout",
        "coordination",
        "coordination-write",
        "ssh",
        "pgpass",
        "secret-env",
        "service",
        "service-direct",
    ] {
        assert!(
            said.contains(&format!("{refused}: refused")),
            "{refused}: {said}"
        );
    }
    assert!(said.contains("own-checkout: DONE"), "{said}");
    assert!(
        said.contains(&format!(
            "the sandbox refused a connection to 127.0.0.1:{service}"
        )),
        "{said}"
    );
    assert!(!top.join("planted-by-check").exists());
    assert!(!top.join(".coordination/planted-by-check").exists());
    assert_eq!(service_seen.load(std::sync::atomic::Ordering::SeqCst), 0);
    assert!(
        top.join(".coordination/worktrees/c1/built-by-check.txt")
            .is_file(),
        "the check wrote its own checkout"
    );
    // Nothing of the check's proxy is left.
    let checks = top.join(".coordination/team/checks");
    assert!(
        std::fs::read_dir(&checks).map_or(true, |mut d| d.next().is_none()),
        "{}",
        checks.display()
    );

    // Widened by the user: the same check runs as the lead, and reaches what the lead can.
    let said = check(false);
    assert!(said.contains("checkout: DONE"), "{said}");
    assert!(said.contains("ssh: DONE"), "{said}");
    assert!(top.join("planted-by-check").exists());
    let _ = std::fs::remove_dir_all(&home);
}

fn a_team_is_sandboxed_by_default_and_without_bubblewrap_refuses_before_claiming_anything(
    p: Project,
) {
    support::repository(p.path());
    p.ok(&["leader", "add-task", "Anything", "--id", "n1"]);
    // A PATH with git and sh but no bwrap.
    let bin = p.path().join("..").join(format!(
        "bin-{}",
        p.path().file_name().unwrap().to_string_lossy()
    ));
    std::fs::create_dir_all(&bin).unwrap();
    for tool in ["git", "sh"] {
        let found = which(tool);
        std::os::unix::fs::symlink(found, bin.join(tool)).unwrap();
    }
    // Asked for, and by default: refused, saying what to install and how to run without.
    for asked in [&["--sandbox"][..], &[]] {
        let mut args = vec!["team", "up"];
        args.extend(asked);
        args.extend(["--exec", "true"]);
        let mut command = p.command(&args);
        command.env("PATH", &bin);
        let out = command.output().unwrap();
        assert!(!out.status.success(), "{asked:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("bubblewrap") && stderr.contains("apt-get install bubblewrap"),
            "{asked:?}: {stderr}"
        );
        assert!(stderr.contains("--no-sandbox"), "{stderr}");
        let shown = p.task("n1");
        assert_eq!(shown["status"], "available", "{shown}");
        assert!(shown["claimed_at"].is_null(), "{shown}");
    }
    // `--no-sandbox` runs without, and says so: the worker in `team status`, the attempt in
    // `team logs`.
    let mut command = p.command(&["team", "up", "--no-sandbox", "--exec", "true"]);
    command.env("PATH", &bin);
    assert!(command.status().unwrap().success());
    assert_eq!(p.task("n1")["status"], "done");
    let status = p.json(&["team", "status"]);
    let workers = status["workers"].as_array().unwrap();
    assert_eq!(workers.len(), 1, "{status}");
    assert_eq!(workers[0]["sandboxed"], false, "{status}");
    let shown = p.ok(&["team", "status"]);
    assert!(
        shown.contains("SANDBOX") && shown.contains(" NO "),
        "{shown}"
    );
    let logs = p.ok(&["team", "logs", "n1"]);
    assert!(logs.contains("not sandboxed"), "{logs}");
    let _ = std::fs::remove_dir_all(&bin);

    // With bubblewrap, a team without a flag runs each attempt in a sandbox.
    p.ok(&["leader", "add-task", "More", "--id", "n2"]);
    // (In its own PID namespace, whose first process is bubblewrap's.)
    p.ok(&[
        "team",
        "up",
        "--exec",
        "test \"$(cat /proc/1/comm)\" = bwrap && echo boxed",
    ]);
    assert_eq!(p.task("n2")["status"], "done", "{}", p.task("n2"));
    let status = p.json(&["team", "status"]);
    let worker = status["workers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["task"].is_null() && w["sandboxed"] == true);
    assert!(worker.is_some(), "{status}");
    let logs = p.ok(&["team", "logs", "n2"]);
    assert!(
        logs.contains(", sandboxed)") && logs.contains("boxed"),
        "{logs}"
    );
}

/// A fork bomb stops at the profile's `sandbox.max_processes`: the shell that cannot fork
/// any more ends, its task fails, and nothing it started outlives the attempt; the transcript
/// says the limit and what holds it. Under root, whom the kernel's per-user limit does not
/// bind, a pids cgroup holds it (every other user's limit is set inside the sandbox, tested as
/// an unprivileged user in `the_limit_set_inside_the_sandbox_binds_an_unprivileged_user`).
fn a_fork_bomb_stops_at_the_process_limit(p: Project) {
    write_profiles(&p, "[profiles.exec.sandbox]\nmax_processes = 40\n");
    p.ok(&["leader", "add-task", "Fork", "--id", "fb"]);
    // A sleep no other test runs, to find what is left of the bomb.
    let marker = format!("{}.7", 3000 + std::process::id() % 1000);
    let bomb = format!(
        "i=0; while [ $i -lt 100 ]; do sleep {marker} & i=$((i+1)); echo \"started $i\"; done"
    );
    let team = p
        .command(&[
            "team",
            "up",
            "--no-worktree",
            "--max-attempts",
            "1",
            "--exec",
            &bomb,
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let supervisor = team.id();
    let out = team.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(10), "the task failed: {out:?}");
    let left = cgroups_of(supervisor);
    assert!(
        left.is_empty(),
        "the team's pids cgroups outlived it: {left:?}"
    );
    let logs = p.json(&["team", "logs", "fb"]).to_string();
    let started = (1..=100)
        .rev()
        .find(|n| logs.contains(&format!("started {n}\"")))
        .unwrap_or(0);
    let limited = logs.contains("at most 40 processes");
    let root = running_as_root();
    if limited {
        assert!(
            (10..40).contains(&started),
            "{started} of 100 started under a limit of 40: {logs}"
        );
        assert!(
            logs.contains("a pids cgroup") || !root,
            "root is bound by a cgroup only: {logs}"
        );
    } else {
        assert!(root, "only root can be left without a limit: {logs}");
        assert!(logs.contains("not limited in number"), "{logs}");
        eprintln!("no pids cgroup can be made here: the limit is not tested under root");
    }
    support::eventually("nothing the bomb started is left", || {
        processes_with(&format!("sleep {marker}")).is_empty()
    });
}

/// The pids cgroups the Baton process `pid` made (named `baton-PID-N`), wherever the pids
/// hierarchy is mounted.
fn cgroups_of(pid: u32) -> Vec<std::path::PathBuf> {
    let prefix = format!("baton-{pid}-");
    let mut found = Vec::new();
    let mut folders = vec![std::path::PathBuf::from("/sys/fs/cgroup")];
    for _depth in 0..4 {
        let mut deeper = Vec::new();
        for folder in folders {
            for entry in std::fs::read_dir(&folder).into_iter().flatten().flatten() {
                let path = entry.path();
                if !entry.file_type().is_ok_and(|t| t.is_dir()) {
                    continue;
                }
                if entry.file_name().to_string_lossy().starts_with(&prefix) {
                    found.push(path);
                } else {
                    deeper.push(path);
                }
            }
        }
        folders = deeper;
    }
    found
}

/// A hostile agent under `sandbox.ask` opening 30 connections outside its allow-list at once
/// (and three more to one of them) does not bury the lead: a few questions wait at a time, one
/// per target, and the rest are refused without asking, as its transcript says.
fn a_flood_of_refused_connections_puts_a_few_questions_to_the_lead(p: Project) {
    write_profiles(&p, "[profiles.exec.sandbox]\nask = true\n");
    std::fs::write(
        p.coordination().join("policy.toml"),
        "ask_timeout_seconds = 3\n",
    )
    .unwrap();
    p.ok(&["leader", "add-task", "Flood", "--id", "fl"]);
    let flood = "for port in $(seq 40001 40030) 40001 40001 40001; do \
                 curl -s --max-time 20 --noproxy '' -x http://127.0.0.1:3128 http://127.0.0.1:$port/ & \
                 done; wait";
    p.ok(&["team", "up", "--no-worktree", "--exec", flood]);
    let asked = p.json(&["inbox", "--all"])["questions"]
        .as_array()
        .unwrap()
        .len();
    assert!(
        (1..=4).contains(&asked),
        "{asked} questions were put to the lead"
    );
    let log = p.json(&["team", "logs", "fl"]).to_string();
    let unasked = log
        .matches("wait for the lead's answer already; this one was refused without asking")
        .count();
    assert!(unasked >= 26, "{unasked} refused without asking: {log}");
}

/// A Codex agent's network reaches where the user's own Codex configuration points its model
/// provider, never where a configuration the agent wrote says: a compromised Codex (a script in
/// its place) that adds a provider (to its `CODEX_HOME/config.toml` if it could; it is read-only
/// to it, so to the project's `.codex/config.toml`) and crashes, to be started again with it,
/// still cannot reach that provider's host; the user's configuration is unchanged.
fn an_agent_cannot_widen_its_network_through_its_own_codex_configuration(p: Project) {
    let (mine, mine_seen) = http_server("MINE");
    let (evil, evil_seen) = http_server("EVIL");
    let home = home_with_secrets(&p);
    let user_config = home.join(".codex/config.toml");
    std::fs::create_dir_all(user_config.parent().unwrap()).unwrap();
    let theirs = format!(
        "model_provider = \"mine\"\n[model_providers.mine]\nbase_url = \"http://127.0.0.1:{mine}/v1\"\n"
    );
    std::fs::write(&user_config, &theirs).unwrap();
    // Where a user might keep a script of their own: in the home folder, whose secrets the
    // sandbox must still hide (showing the program's folder would show them).
    let codex = home.join("hostile-codex");
    let out = p.path().join("reached.txt");
    std::fs::write(
        &codex,
        format!(
            r##"#!/bin/sh
via() {{ curl -sf --max-time 5 --noproxy '' -x http://127.0.0.1:3128 "http://127.0.0.1:$1/"; }}
if [ -f widened ]; then
  if via {mine} | grep -q MINE; then echo "mine: DONE" >> {out}; else echo "mine: refused" >> {out}; fi
  if via {evil} | grep -q EVIL; then echo "evil: DONE" >> {out}; else echo "evil: refused" >> {out}; fi
  if cat {home}/.ssh/id_ed25519 >/dev/null 2>&1; then echo "ssh: DONE" >> {out}; else echo "ssh: refused" >> {out}; fi
  exit 0
fi
# Its copy of the user's configuration is read-only to it: then the project's own.
widen() {{ printf '[model_providers.evil]\nbase_url = "http://127.0.0.1:{evil}/v1"\n' >> "$1"; }}
widen "$CODEX_HOME/config.toml" 2>/dev/null || {{ mkdir -p .codex && widen .codex/config.toml; }}
touch widened
kill -KILL $$
"##,
            out = out.display(),
            home = home.display(),
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&codex, std::fs::Permissions::from_mode(0o755)).unwrap();
    write_profiles(
        &p,
        &format!("[profiles.codex]\ncommand = \"{}\"\n", codex.display()),
    );
    p.ok(&["leader", "add-task", "Widen", "--id", "cw"]);
    let mut command = p.command(&[
        "team",
        "up",
        "--agent",
        "codex",
        "--no-worktree",
        "--max-attempts",
        "2",
    ]);
    command.env("HOME", &home);
    let team = command.output().unwrap();
    let reached = std::fs::read_to_string(&out).unwrap_or_else(|_| panic!("{team:?}"));
    assert!(reached.contains("mine: DONE"), "{reached}");
    assert!(reached.contains("evil: refused"), "{reached}");
    assert!(reached.contains("ssh: refused"), "{reached}");
    assert_eq!(evil_seen.load(std::sync::atomic::Ordering::SeqCst), 0);
    assert!(mine_seen.load(std::sync::atomic::Ordering::SeqCst) > 0);
    assert_eq!(std::fs::read_to_string(&user_config).unwrap(), theirs);
    let log = p.json(&["team", "logs", "cw"]).to_string();
    assert!(
        log.contains(&format!("refused a connection to 127.0.0.1:{evil}")),
        "{log}"
    );
    let _ = std::fs::remove_dir_all(&home);
}

/// The process limit set inside the sandbox (`RLIMIT_NPROC`, by its first command) binds a
/// user other than root, counting the sandbox's processes only: run as `nobody` under root.
/// The lead's git replaces the shared git folder's files while agents start (here `HEAD` and
/// `description`, renamed over and over with the same text, as git writes a file; `config`
/// as each task's worktree is added with `--track`): every sandbox starts all the same.
/// bubblewrap binding a file renamed over in the middle of the bind failed the attempt
/// ("Can't bind mount … (deleted)"; with files bound as they are, this fails in most runs);
/// a sandbox is shown copies of those files now.
#[test]
fn sandboxes_start_while_the_leads_git_replaces_the_shared_folders_files() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    const TASKS: usize = 30;
    let p = Project::init();
    support::repository(p.path());
    for i in 1..=TASKS {
        p.ok(&[
            "leader",
            "add-task",
            &format!("Commit {i}"),
            "--id",
            &format!("r{i}"),
        ]);
    }
    let stop = Arc::new(AtomicBool::new(false));
    let churn = {
        let (stop, git_dir) = (stop.clone(), p.path().join(".git"));
        std::thread::spawn(move || {
            let files = ["HEAD", "description"].map(|name| {
                let text = std::fs::read(git_dir.join(name)).unwrap();
                (
                    git_dir.join(name),
                    git_dir.join(format!("{name}.churn")),
                    text,
                )
            });
            let mut replaced = 0u64;
            while !stop.load(Ordering::Relaxed) {
                for (file, new, text) in &files {
                    std::fs::write(new, text).unwrap();
                    std::fs::rename(new, file).unwrap();
                }
                replaced += 1;
            }
            replaced
        })
    };
    let out = p
        .committing(&[
            "team",
            "up",
            "--exec",
            "date +%N > made-$$.txt && git add made-$$.txt && git commit -qm made",
        ])
        .output()
        .unwrap();
    stop.store(true, Ordering::Relaxed);
    let replaced = churn.join().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(replaced > TASKS as u64, "replaced {replaced} times");
    let status = p.json(&["leader", "status"]);
    assert_eq!(status["counts"]["done"], TASKS, "{status}");
}

#[test]
fn the_limit_set_inside_the_sandbox_binds_an_unprivileged_user() {
    // The same `baton`, where `nobody` can run it.
    let dir = tempfile::tempdir().unwrap();
    let baton = dir.path().join("baton");
    std::fs::copy(support::baton_bin(), &baton).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let root = running_as_root();
    let started = |max: u32| -> u32 {
        let mut command = match root {
            true => {
                let mut c = std::process::Command::new("setpriv");
                c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "bwrap"]);
                c
            }
            false => std::process::Command::new("bwrap"),
        };
        command
            .args([
                "--unshare-user",
                "--unshare-pid",
                "--die-with-parent",
                "--ro-bind",
                "/",
                "/",
                "--proc",
                "/proc",
                "--dev",
                "/dev",
                "--",
            ])
            .arg(&baton)
            .args(["__sandbox-start", "--max-processes", &max.to_string(), "--"])
            .args([
                "sh",
                "-c",
                "i=0; while [ $i -lt 60 ]; do sleep 5 & i=$((i+1)); echo $i; done; kill $(jobs -p)",
            ]);
        let out = command.output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        stdout
            .lines()
            .last()
            .and_then(|l| l.trim().parse().ok())
            .unwrap_or_else(|| panic!("{out:?}"))
    };
    let limited = started(20);
    assert!(
        (10..20).contains(&limited),
        "{limited} of 60 started under a limit of 20"
    );
    assert_eq!(started(500), 60, "a limit above the count binds nothing");
}

/// Whether the tests run as root (whose real user id is 0).
fn running_as_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|ids| ids.split_whitespace().next().map(|id| id == "0"))
        .unwrap()
}

/// The program `name` on this process's PATH.
fn which(name: &str) -> std::path::PathBuf {
    std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .map(|dir| dir.join(name))
        .find(|p| Path::is_file(p))
        .unwrap_or_else(|| panic!("no {name} on PATH"))
}
