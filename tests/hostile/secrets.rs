//! Secrets stay home: a toolchain folder the sandbox shows (`~/.cargo`, git's `~/.config/git`)
//! is shown without its credential files, and the registries' publishing APIs the proxy can
//! tell apart are off the default allow-list. Before, the agent read `credentials.toml` and
//! crates.io's API was reachable: a token left with one request.

use super::support;

use support::Project;

support::on_both_stores!(an_agent_reads_no_registry_token_and_reaches_no_publishing_api);

fn an_agent_reads_no_registry_token_and_reaches_no_publishing_api(p: Project) {
    support::repository(p.path());
    p.ok(&["leader", "add-task", "Look around", "--id", "t1"]);
    let name = p.path().file_name().unwrap().to_string_lossy().to_string();
    let home = p.path().with_file_name(format!("{name}-home"));
    for (file, text) in [
        (
            ".cargo/credentials.toml",
            "[registry]\ntoken = \"CARGO-CANARY\"\n",
        ),
        (".cargo/config.toml", "[net]\nretry = 1\n"),
        (
            ".config/git/credentials",
            "https://x:GIT-CANARY@example.com\n",
        ),
        (".config/git/config", "[user]\n\tname = lead\n"),
    ] {
        let path = home.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let agent = format!(
        "cat {home}/.cargo/credentials.toml {home}/.config/git/credentials > seen.txt 2>&1; \
         cat {home}/.cargo/config.toml {home}/.config/git/config >> seen.txt 2>&1; \
         curl -s -o /dev/null -w '%{{http_code}}\\n' -X PUT https://crates.io/api/v1/crates/new \
           >> seen.txt 2>&1; \
         git add seen.txt && git commit -qm seen",
        home = home.display()
    );
    let mut command = p.committing(&["team", "up", "--exec", &agent]);
    command.env("HOME", &home);
    support::expect_code("team up", command.output().unwrap(), 0);
    let seen = support::git(p.path(), &["show", "baton/t1:seen.txt"]);
    assert!(!seen.contains("CANARY"), "a credential was read: {seen}");
    // The folders are there, their other files too.
    assert!(
        seen.contains("retry = 1") && seen.contains("name = lead"),
        "{seen}"
    );
    let logs = p.json(&["team", "logs", "t1"]).to_string();
    assert!(
        logs.contains("refused a connection to crates.io:443"),
        "{logs}"
    );
    let _ = std::fs::remove_dir_all(&home);
}
