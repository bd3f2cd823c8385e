//! Teams of the other agent CLIs Baton runs, for real: Codex (npm `@openai/codex`), the Gemini
//! CLI (npm `@google/gemini-cli`) and OpenCode (npm `opencode-ai`), pinned in scripts/lib.sh,
//! started by `baton team up --agent codex|gemini|opencode`, their model replaced by the
//! scripted API speaking each one's dialect (OpenAI's Responses API, Gemini's
//! `streamGenerateContent`, OpenAI's Chat Completions for OpenCode's OpenAI-compatible
//! provider). Each agent commits its task's file through its own shell tool in the task's
//! worktree and reports the task: Codex and OpenCode through Baton's MCP server (which Baton
//! configures for the run), the Gemini CLI through the `baton` command (it has no way to add an
//! MCP server for one run). The tests assert on the
//! board, the branches, the stored transcripts and the cost the scripted usage implies at the
//! profile's price.

use baton_test_support as support;

use std::sync::Arc;

use serde_json::{Value, json};
use support::Project;
use support::claude::{Host, assignment, tool};
use support::scripted_api::{
    INPUT_TOKENS, OUTPUT_TOKENS, Reply, ScriptedApi, exchanges, tool_names,
};
use support::team::{check_done, committer, restarted, team_up};

/// Three tasks (the third after the first) done by a team of two `profile` workers: each
/// once, committed on its branch, reported, its transcript holding `calls`, its tokens what
/// the scripted usage implies and its cost those tokens at the profile's price.
fn a_team_does_three_tasks(profile: &str, prefix: &str, calls: [&str; 2], options: &[&str]) {
    a_team_of_a_model_does_three_tasks(
        profile,
        "scripted-model",
        prefix,
        calls,
        options,
        "",
        &|_| {},
    );
}

/// [`a_team_does_three_tasks`] with the profile's `model`, further profile lines, and what is
/// done on the host before the team starts.
fn a_team_of_a_model_does_three_tasks(
    profile: &str,
    model: &str,
    prefix: &str,
    calls: [&str; 2],
    options: &[&str],
    more: &str,
    before: &dyn Fn(&Host),
) {
    let p = Project::init();
    support::repository(p.path());
    p.ok(&[
        "leader",
        "add-task",
        "Write task-1.txt",
        "--files",
        "task-1.txt",
    ]);
    p.ok(&[
        "leader",
        "add-task",
        "Write task-2.txt",
        "--files",
        "task-2.txt",
    ]);
    p.ok(&[
        "leader",
        "add-task",
        "Write task-3.txt",
        "--files",
        "task-3.txt",
        "--depends",
        "task-1",
    ]);
    // USD per million tokens: what the team's cost is checked against.
    let (input_price, output_price) = (2.0, 8.0);
    let team = p.path().join(".coordination/team");
    std::fs::create_dir_all(&team).unwrap();
    std::fs::write(
        team.join("profiles.toml"),
        // A model named: the Gemini CLI's default (`auto`) first asks a small model which
        // model to use, a request that is not the agent's work.
        format!(
            "[profiles.{profile}]\nmodel = \"{model}\"\n{more}\
             [profiles.{profile}.price]\ninput = {input_price}\noutput = {output_price}\n\
             [profiles.{profile}.sandbox]\nenv = [\"SCRIPTED_API_KEY\"]\n"
        ),
    )
    .unwrap();
    let api = ScriptedApi::start(committer());
    let host = Host::new(p.path(), &api);
    before(&host);

    let mut args = vec!["--workers", "2", "--agent", profile];
    args.extend(options);
    team_up(&host, &args);

    // The cost: the scripted usage at the profile's price.
    let cost_per_request =
        (INPUT_TOKENS as f64 * input_price + OUTPUT_TOKENS as f64 * output_price) / 1e6;
    let tasks: Vec<String> = (1..=3).map(|n| format!("task-{n}")).collect();
    let total = check_done(
        &host,
        &p.tasks_json(),
        &api.requests(),
        &tasks,
        &|agent| agent.starts_with(prefix),
        calls,
        cost_per_request,
    );
    let status = host.baton_json(&["--json", "team", "status"]);
    let spent = status["spend"]["total"]["cost_usd"].as_f64().unwrap();
    assert!((spent - total).abs() < 1e-9, "{status}");

    // In a sandbox unless asked not to be, every attempt.
    let sandboxed = !options.contains(&"--no-sandbox");
    for id in &tasks {
        let log = host.baton_json(&["--json", "team", "logs", id]);
        assert_eq!(log["attempt"]["sandboxed"], sandboxed, "{log}");
    }
    let merged = host.baton(&["leader", "merge", "--all"]).output().unwrap();
    assert!(merged.status.success(), "{merged:?}");
    for n in 1..=3 {
        assert!(p.path().join(format!("task-{n}.txt")).is_file());
    }
}

/// In its sandbox (the default): Codex's MCP server (`baton mcp`) reaches Baton through the
/// attempt's door.
#[test]
fn a_team_of_codex_workers_commits_and_reports_through_batons_mcp_server() {
    a_team_does_three_tasks("codex", "cx", ["command", "mcp__baton__task_complete"], &[]);
}

/// The same with `--no-sandbox`: `baton mcp` opens the project itself.
#[test]
fn without_a_sandbox_codex_workers_commit_and_report_through_batons_mcp_server() {
    a_team_does_three_tasks(
        "codex",
        "cx",
        ["command", "mcp__baton__task_complete"],
        &["--no-sandbox"],
    );
}

/// In its sandbox: the Gemini CLI's shell runs `baton worker complete` through the door.
#[test]
fn a_team_of_gemini_workers_commits_and_reports_through_the_baton_command() {
    a_team_does_three_tasks(
        "gemini",
        "gm",
        ["run_shell_command", "run_shell_command"],
        &[],
    );
}

#[test]
fn without_a_sandbox_gemini_workers_commit_and_report_through_the_baton_command() {
    a_team_does_three_tasks(
        "gemini",
        "gm",
        ["run_shell_command", "run_shell_command"],
        &["--no-sandbox"],
    );
}

/// In its sandbox: OpenCode's shell commits, and Baton's MCP server (added to the user's
/// configuration for the run) reaches Baton through the attempt's door. npm stays offline:
/// OpenCode fetches packages for its configuration folder in the background, which a test
/// does not need from the web.
#[test]
fn a_team_of_opencode_workers_commits_and_reports_through_batons_mcp_server() {
    a_team_of_opencode_workers(&[]);
}

#[test]
fn without_a_sandbox_opencode_workers_commit_and_report_through_batons_mcp_server() {
    a_team_of_opencode_workers(&["--no-sandbox"]);
}

fn a_team_of_opencode_workers(options: &[&str]) {
    a_team_of_a_model_does_three_tasks(
        "opencode",
        "scripted/scripted-model",
        "oc",
        ["bash", "baton_task_complete"],
        options,
        "env = { npm_config_offline = \"true\" }\n",
        &|host| {
            // An OpenCode that has run before, as a user's has: OpenCode 1.18.33's first start
            // makes its database, and two first starts at once collide (one fails its
            // migration). Sandboxed, each task has a database of its own.
            let mut first = std::process::Command::new("opencode");
            first
                .args(["session", "list"])
                .stdin(std::process::Stdio::null());
            host.environment(&mut first);
            let made = first.output().unwrap();
            assert!(made.status.success(), "{made:?}");
        },
    );
}

/// In its sandbox: the thread Codex saved in `CODEX_HOME` (writable in the sandbox) is still
/// there for the next team.
#[test]
fn team_up_again_resumes_the_codex_thread_a_killed_supervisor_left() {
    codex_resumes_after_the_supervisor_is_killed(&[]);
}

#[test]
fn without_a_sandbox_a_codex_thread_resumes_after_its_supervisor_is_killed() {
    codex_resumes_after_the_supervisor_is_killed(&["--no-sandbox"]);
}

fn codex_resumes_after_the_supervisor_is_killed(options: &[&str]) {
    let p = Project::init();
    support::repository(p.path());
    // The scripted provider's key, which Codex's configuration names, passed into the sandbox.
    let team = p.path().join(".coordination/team");
    std::fs::create_dir_all(&team).unwrap();
    std::fs::write(
        team.join("profiles.toml"),
        "[profiles.codex.sandbox]\nenv = [\"SCRIPTED_API_KEY\"]\n",
    )
    .unwrap();
    p.ok(&["leader", "add-task", "Survive a crash"]);
    let api = ScriptedApi::start(Arc::new(|request: &Value| {
        let offered = tool_names(request);
        let Some((task, agent)) = assignment(request)
            .filter(|_| offered.iter().any(|n| n == "mcp__baton__task_complete"))
        else {
            return Reply::Text("ok".into());
        };
        if restarted(request) {
            return match exchanges(request).last() {
                Some(e) if e.tool == "mcp__baton__task_complete" => {
                    Reply::Text("Finished after the restart.".into())
                }
                _ => tool(
                    "task_complete",
                    json!({"agent": agent, "task": task, "summary": "done after a restart"}),
                ),
            };
        }
        // The first thread: a long step, during which its supervisor is killed.
        Reply::Tool {
            name: "Bash".into(),
            input: json!({"command": "exec -a long-step-716 tail -f /dev/null"}),
        }
    }));
    let host = Host::new(p.path(), &api);
    support::team::kill_team_during_long_step(&host, "codex", "long-step-716", options);
    let long_step_runs = || support::claude::process_runs("long-step-716");

    // Bounded: a fresh thread instead of the resumed one would take the long step again.
    let mut args = vec![
        "--json",
        "team",
        "up",
        "--agent",
        "codex",
        "--max-minutes",
        "2",
    ];
    args.extend(options);
    let again = host.baton(&args).output().unwrap();
    assert!(again.status.success(), "{again:?}");
    let t = p.tasks_json()["tasks"][0].clone();
    assert_eq!(t["status"], "done", "{t}");
    assert_eq!(t["attempts"], 1, "claimed once: {t}");
    let attempt = |n: &str| host.baton_json(&["--json", "team", "logs", "task-1", "--attempt", n]);
    let (one, two) = (attempt("1"), attempt("2"));
    assert_eq!(one["attempt"]["end"], "stopped", "{one}");
    assert_eq!(two["attempt"]["end"], "completed", "{two}");
    assert_eq!(
        two["attempt"]["sandboxed"],
        !options.contains(&"--no-sandbox"),
        "{two}"
    );
    assert!(one["attempt"]["session_id"].is_string(), "{one}");
    assert_eq!(
        one["attempt"]["session_id"], two["attempt"]["session_id"],
        "the same Codex thread, resumed"
    );
    // The resumed thread carried the first one's conversation to the model.
    let resumed = api
        .requests()
        .into_iter()
        .find(restarted)
        .expect("a request of the resumed thread");
    assert!(
        resumed["messages"].to_string().contains("long-step-716"),
        "{resumed}"
    );
    assert!(!long_step_runs(), "the killed team's long step is gone");
}
