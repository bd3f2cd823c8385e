//! The lead in the loop, through the real `baton` binary on both stores: an agent's `ask`
//! waits until the lead answers from another process; an unanswered question times out with
//! the clear message and is closed; messages reach their recipients and only them; an MCP
//! server started for an agent speaks for that agent only; the change feed reports questions
//! and messages; and on PostgreSQL a question asked on one machine reaches the lead waiting on
//! another. The real Claude Code asking through MCP is in `team_claude.rs`.

use baton_test_support as support;

use serde_json::{Value, json};
use support::mcp::RawClient;
use support::{Background, Project};

support::on_both_stores!(
    an_agent_asks_and_the_lead_answers_from_another_process,
    an_unanswered_question_times_out_with_the_clear_message_and_is_closed,
    messages_reach_their_recipients_and_only_them,
    an_mcp_server_speaks_for_its_agent_only,
    the_change_feed_reports_questions_answers_and_messages,
    a_rewound_or_deleted_counter_costs_no_message_and_doctor_repairs_it,
    a_bad_question_or_message_is_named_and_the_rest_of_the_inbox_shown,
    an_agent_flooding_the_inbox_is_limited_and_the_lead_still_sees_every_question,
    a_denied_tool_call_exits_1_and_an_allowed_one_0,
);

/// `baton approve` says the policy's verdict, and its exit says it to a script: 1 for a
/// denied call (it exited 0 whatever the verdict), 0 for an allowed one.
fn a_denied_tool_call_exits_1_and_an_allowed_one_0(p: Project) {
    std::fs::write(
        p.coordination().join("policy.toml"),
        "allow = [\"Bash(make:*)\"]\ndeny = [\"Bash(rm:*)\"]\n",
    )
    .unwrap();
    let approve = |command: &str| {
        let input = json!({"command": command}).to_string();
        p.run(&["approve", "Bash", "--input", &input, "--agent", "cc1"])
    };
    let denied = approve("rm -rf build");
    assert_eq!(denied.status.code(), Some(1), "{denied:?}");
    assert!(
        String::from_utf8_lossy(&denied.stdout).starts_with("deny"),
        "{denied:?}"
    );
    let allowed = approve("make test");
    assert_eq!(allowed.status.code(), Some(0), "{allowed:?}");
    assert_eq!(String::from_utf8_lossy(&allowed.stdout).trim(), "allow");
    // The verdict is JSON with --json, the exit the same.
    let input = json!({"command": "rm -rf /"}).to_string();
    let out = p.run(&[
        "--json", "approve", "Bash", "--input", &input, "--agent", "cc1",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let verdict: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(verdict["behavior"], "deny", "{verdict}");
}

fn a_bad_question_or_message_is_named_and_the_rest_of_the_inbox_shown(p: Project) {
    for (agent, args) in [
        ("cc1", vec!["message", "send", "lead", "First", "one"]),
        ("cc1", vec!["message", "send", "lead", "Second", "two"]),
        ("cc2", vec!["ask", "Which way?", "--timeout", "1"]),
        ("cc2", vec!["ask", "And now?", "--timeout", "1"]),
    ] {
        let out = p.command(&args).env("BATON_AGENT", agent).output().unwrap();
        // An unanswered `ask` times out (5), its question kept, closed.
        assert!(matches!(out.status.code(), Some(0 | 5)), "{out:?}");
    }
    // One message and one question are not what Baton wrote any more.
    p.overwrite_document("inbox/messages/m-1.json", Some(&json!({"garbage": true})));
    p.overwrite_document("inbox/questions/q-1.json", Some(&json!([1, 2, 3])));
    let lead = p.json(&["inbox", "--all"]);
    let ids = |key: &str| -> Vec<String> {
        lead[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["id"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(ids("messages"), ["m-2"], "{lead}");
    assert_eq!(ids("questions"), ["q-2"], "{lead}");
    let named: Vec<&str> = lead["unreadable"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["document"].as_str().unwrap())
        .collect();
    assert_eq!(
        named,
        ["inbox/questions/q-1.json", "inbox/messages/m-1.json"],
        "{lead}"
    );
    let text = p.ok(&["inbox", "--all"]);
    assert!(
        text.contains("Skipped .coordination/inbox/messages/m-1.json"),
        "{text}"
    );
    assert!(text.contains("And now?"), "{text}");
    let doctor = p.run(&["--json", "leader", "doctor"]);
    let (stdout, _) = support::expect_code("doctor with unreadable documents", doctor, 4);
    assert!(stdout.contains("unreadable_document"), "{stdout}");
    assert!(stdout.contains("inbox/questions/q-1.json"), "{stdout}");
    if !p.on_postgres() {
        // Not even JSON: the same.
        std::fs::write(
            p.coordination().join("inbox/messages/m-2.json"),
            "{not json",
        )
        .unwrap();
        let lead = p.json(&["inbox", "--all"]);
        assert_eq!(lead["messages"].as_array().unwrap().len(), 0, "{lead}");
        assert_eq!(lead["unreadable"].as_array().unwrap().len(), 3, "{lead}");
    }
}

fn a_rewound_or_deleted_counter_costs_no_message_and_doctor_repairs_it(p: Project) {
    let send = |body: &str| -> String {
        let out = p
            .command(&["--json", "message", "send", "lead", "Note", body])
            .env("BATON_AGENT", "cc1")
            .output()
            .unwrap();
        let (stdout, _) = support::expect_code("message send", out, 0);
        let sent: Value = serde_json::from_str(&stdout).unwrap();
        sent["id"].as_str().unwrap().to_string()
    };
    assert_eq!(send("one"), "m-1");
    assert_eq!(send("two"), "m-2");
    // Rewound, as the advice to `git checkout` an old copy of it would.
    p.overwrite_document("inbox/numbers.json", Some(&json!({"messages": 0})));
    let report = p.run(&["--json", "leader", "doctor"]);
    let (stdout, _) = support::expect_code("doctor with the counter behind", report, 4);
    assert!(stdout.contains("inbox_counter_behind"), "{stdout}");
    assert_eq!(send("three"), "m-3");
    // Deleted: the same, and doctor --fix moves it up.
    p.overwrite_document("inbox/numbers.json", None);
    let fixed = p.json(&["leader", "doctor", "--fix"]);
    assert!(
        fixed.to_string().contains("moved the counter to 3"),
        "{fixed}"
    );
    assert_eq!(send("four"), "m-4");
    let lead = p.json(&["inbox", "--all"]);
    let bodies: Vec<&str> = lead["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["body"].as_str().unwrap())
        .collect();
    assert_eq!(bodies.len(), 4, "{lead}");
    for body in ["one", "two", "three", "four"] {
        assert!(bodies.contains(&body), "{body} lost: {lead}");
    }
}

/// `baton ARGS` in the background as agent `agent` (BATON_AGENT).
fn as_agent(p: &Project, agent: &str, args: &[&str]) -> Background {
    let mut command = p.command(args);
    command.env("BATON_AGENT", agent);
    Background::from_command(command)
}

fn an_agent_asks_and_the_lead_answers_from_another_process(p: Project) {
    p.ok(&["leader", "add-task", "Write the parser"]);
    let ask = as_agent(
        &p,
        "cc1",
        &[
            "ask",
            "Which JSON library?",
            "--choice",
            "serde_json",
            "--choice",
            "simd-json",
            "--task",
            "task-1",
        ],
    );
    let inbox = p.json(&["inbox", "--wait", "--timeout", "60"]);
    let question = &inbox["questions"][0];
    assert_eq!(question["id"], "q-1", "{inbox}");
    assert_eq!(question["agent"], "cc1");
    assert_eq!(question["task"], "task-1");
    assert_eq!(question["state"]["state"], "open");
    assert_eq!(question["choices"], json!(["serde_json", "simd-json"]));
    // Asked already: --wait answers at once, and says no wait (it said "waiting…").
    let again = p.run(&["inbox", "--wait", "--timeout", "60"]);
    assert!(again.status.success(), "{again:?}");
    let said = String::from_utf8_lossy(&again.stderr);
    assert!(!said.contains("waiting"), "{said}");
    assert!(
        String::from_utf8_lossy(&again.stdout).contains("q-1"),
        "{again:?}"
    );

    let err = p.fails(&["answer", "q-1", "rapidjson"], 1);
    assert!(err.contains("choose one of: 1 \"serde_json\""), "{err}");
    // A choice is matched whatever its case, and stored as it was offered.
    let answered = p.json(&["answer", "q-1", "SIMD-JSON"]);
    assert_eq!(answered["state"]["answer"], "simd-json", "{answered}");
    assert_eq!(answered["state"]["by"], "lead");
    let (code, out, err) = ask.finish();
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out.trim(), "simd-json");

    let err = p.fails(&["answer", "q-1", "1"], 1);
    assert!(err.contains("already answered by lead"), "{err}");
    let open = p.json(&["inbox"]);
    assert_eq!(open["questions"], json!([]), "nothing waits now: {open}");
    let all = p.json(&["inbox", "--all"]);
    assert_eq!(all["questions"][0]["state"]["answer"], "simd-json");
    // Bad input: unknown and hostile ids, an unknown task, an empty question.
    assert!(
        p.fails(&["answer", "q-9", "x"], 1)
            .contains("no question \"q-9\"")
    );
    assert!(p.fails(&["answer", "../q-1", "x"], 1).contains("not an id"));
    let mut unknown_task = p.command(&["ask", "Why?", "--task", "task-9", "--timeout", "1"]);
    unknown_task.env("BATON_AGENT", "cc1");
    let (_, err) =
        support::expect_code("ask on an unknown task", unknown_task.output().unwrap(), 1);
    assert!(err.contains("task-9"), "{err}");
    let mut empty = p.command(&["ask", "  ", "--timeout", "1"]);
    empty.env("BATON_AGENT", "cc1");
    let (_, err) = support::expect_code("an empty question", empty.output().unwrap(), 1);
    assert!(err.contains("question"), "{err}");
    // Said in the command line's words, not the MCP tool's argument names.
    let mut zero = p.command(&["ask", "Now?", "--timeout", "0"]);
    zero.env("BATON_AGENT", "cc1");
    let (_, err) = support::expect_code("a zero timeout", zero.output().unwrap(), 2);
    assert!(err.contains("--timeout"), "{err}");
    let nobody = p
        .command(&["ask", "Who?", "--timeout", "1"])
        .output()
        .unwrap();
    let (_, err) = support::expect_code("an ask without an agent", nobody, 2);
    assert!(err.contains("--agent NAME"), "{err}");
    assert_eq!(
        p.json(&["inbox", "--all"])["questions"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

fn an_unanswered_question_times_out_with_the_clear_message_and_is_closed(p: Project) {
    let mut ask = p.command(&["ask", "Shall I drop the table?", "--timeout", "1"]);
    ask.env("BATON_AGENT", "cc1");
    let (_, err) = support::expect_code("an unanswered ask", ask.output().unwrap(), 5);
    assert!(
        err.contains("no answer within 1s; go on with your best judgement, or fail the task"),
        "{err}"
    );
    let all = p.json(&["inbox", "--all"]);
    assert_eq!(all["questions"][0]["state"]["state"], "closed", "{all}");
    let err = p.fails(&["answer", "q-1", "yes"], 1);
    assert!(err.contains("closed: no answer within 1s"), "{err}");
    // The lead waiting on an empty inbox gives up at its timeout, exit 5.
    let out = p
        .command(&["inbox", "--wait", "--timeout", "1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5));
}

fn messages_reach_their_recipients_and_only_them(p: Project) {
    p.ok(&["leader", "add-task", "Parser"]);
    p.ok(&["worker", "claim", "cc1"]);
    p.ok(&["worker", "heartbeat", "cc2"]);
    p.ok(&[
        "message",
        "send",
        "all",
        "Heads up",
        "main is red\ndo not merge",
    ]);
    p.ok(&[
        "message",
        "send",
        "cc1",
        "Parser",
        "use serde",
        "--task",
        "task-1",
    ]);
    let sent = as_agent(&p, "cc2", &["message", "send", "lead", "Done?", "yes"]).finish();
    assert_eq!(sent.0, Some(0), "{}", sent.2);

    let read = |agent: &str, extra: &[&str]| -> Value {
        let mut args = vec!["inbox", "--json"];
        args.extend_from_slice(extra);
        let out = p.command(&args).env("BATON_AGENT", agent).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let ids = |inbox: &Value| -> Vec<String> {
        inbox["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["id"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(ids(&read("cc1", &[])), ["m-1", "m-2"]);
    assert_eq!(ids(&read("cc2", &[])), ["m-1"], "everyone but the sender");
    let lead = p.json(&["inbox"]);
    assert_eq!(ids(&lead), ["m-3"], "not the lead's own to all: {lead}");
    assert_eq!(lead["messages"][0]["from"], "cc2");
    assert_eq!(
        read("cc1", &[])["messages"][0]["body"],
        "main is red\ndo not merge"
    );

    let acked = p
        .command(&["message", "ack", "m-1"])
        .env("BATON_AGENT", "cc1")
        .output()
        .unwrap();
    assert!(acked.status.success());
    assert_eq!(ids(&read("cc1", &[])), ["m-2"], "m-1 read");
    assert_eq!(ids(&read("cc1", &["--all"])), ["m-1", "m-2"]);
    assert_eq!(ids(&read("cc2", &[])), ["m-1"], "read by cc1 only");
    let not_yours = p
        .command(&["message", "ack", "m-2"])
        .env("BATON_AGENT", "cc2")
        .output()
        .unwrap();
    let (_, err) = support::expect_code("ack of another's message", not_yours, 1);
    assert!(err.contains("m-2 is for cc1, not cc2"), "{err}");
    // Several ids: all or nothing. m-2 is cc1's, m-77 is nobody's: m-2 stays unread.
    let partial = p
        .command(&["message", "ack", "m-2", "m-77"])
        .env("BATON_AGENT", "cc1")
        .output()
        .unwrap();
    let (_, err) = support::expect_code("ack of a known and an unknown id", partial, 1);
    assert!(err.contains("m-77"), "{err}");
    assert_eq!(ids(&read("cc1", &[])), ["m-2"], "m-2 still unread");

    // Bad input, refused with nothing sent.
    let err = p.fails(&["message", "send", "cc9", "Hi", "there"], 1);
    assert!(err.contains("no agent \"cc9\""), "{err}");
    let err = p.fails(&["message", "send", "all", "\u{1b}[31mred", "x"], 1);
    assert!(err.contains("control character"), "{err}");
    let huge = "x".repeat(65 * 1024);
    let err = p.fails(&["message", "send", "all", "Big", &huge], 1);
    assert!(err.contains("the 65536 allowed"), "{err}");
    let err = p.fails(&["message", "ack", "m-99"], 1);
    assert!(err.contains("no message \"m-99\""), "{err}");
    assert_eq!(
        ids(&read("cc1", &["--all"])),
        ["m-1", "m-2"],
        "nothing more sent"
    );
}

fn an_mcp_server_speaks_for_its_agent_only(p: Project) {
    p.ok(&["worker", "heartbeat", "cc1"]);
    p.ok(&["worker", "heartbeat", "cc2"]);
    let mut command = p.command(&["mcp", "--quiet"]);
    command.env("BATON_AGENT", "cc1");
    let mut client = RawClient::start(command);
    let spoofed = client.call(
        "message_send",
        json!({"to": "cc2", "subject": "From cc2", "body": "honest", "from": "cc2"}),
    );
    let text = spoofed.to_string();
    assert!(
        text.contains("not_you") && text.contains("cannot act as cc2"),
        "{text}"
    );
    let sent = client.call(
        "message_send",
        json!({"to": "cc2", "subject": "Hi", "body": "b"}),
    );
    assert_eq!(sent["result"]["structuredContent"]["from"], "cc1", "{sent}");
    let other_inbox = client.call("inbox_read", json!({"agent": "cc2"}));
    assert!(other_inbox.to_string().contains("not_you"), "{other_inbox}");

    // A subscriber to its inbox hears of a message to it at once, and reads it there.
    let subscribed = client.request("resources/subscribe", json!({"uri": "baton://inbox"}));
    assert!(subscribed.get("error").is_none(), "{subscribed}");
    p.ok(&["message", "send", "cc1", "Ping", "are you there?"]);
    loop {
        let message = client.next_message();
        if message["method"] == "notifications/resources/updated" {
            assert_eq!(message["params"]["uri"], "baton://inbox", "{message}");
            break;
        }
    }
    let read = client.request("resources/read", json!({"uri": "baton://inbox"}));
    let text = read["result"]["contents"][0]["text"].as_str().unwrap();
    let inbox: Value = serde_json::from_str(text).unwrap();
    assert_eq!(inbox["reader"], "cc1", "{inbox}");
    assert_eq!(inbox["messages"][0]["subject"], "Ping", "{inbox}");

    // ask_lead from the server waits for the lead's answer given through the CLI.
    let id = client.request_id();
    client.send_line(
        &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "ask_lead", "arguments": {"question": "Port?"}}})
        .to_string(),
    );
    let inbox = p.json(&["inbox", "--wait", "--timeout", "60"]);
    assert_eq!(inbox["questions"][0]["agent"], "cc1", "{inbox}");
    p.ok(&["answer", "q-1", "8080"]);
    let answered = client.response_to(id);
    let outcome = &answered["result"]["structuredContent"];
    assert_eq!(outcome["answer"], "8080", "{answered}");
    assert_eq!(outcome["message"], "The lead answered: 8080");
    assert_eq!(client.close(), Some(0));
}

fn the_change_feed_reports_questions_answers_and_messages(p: Project) {
    let mut watch = p.spawn(&["watch", "--json"]);
    watch.wait_stderr("watching");
    let ask = as_agent(&p, "cc1", &["ask", "Ready?", "--timeout", "60"]);
    let asked: Value = serde_json::from_str(&watch.wait_stdout("\"question_asked\"")).unwrap();
    assert_eq!(asked["question"]["text"], "Ready?", "{asked}");
    p.ok(&["answer", "q-1", "yes"]);
    let settled: Value = serde_json::from_str(&watch.wait_stdout("\"question_settled\"")).unwrap();
    assert_eq!(settled["question"]["state"]["answer"], "yes", "{settled}");
    assert_eq!(ask.finish().0, Some(0));
    p.ok(&["message", "send", "all", "News", "body"]);
    let sent: Value = serde_json::from_str(&watch.wait_stdout("\"message_sent\"")).unwrap();
    assert_eq!(sent["message"]["subject"], "News", "{sent}");
}

/// On PostgreSQL, a question asked on machine B reaches `inbox --wait` on machine A, and A's
/// answer returns B's waiting `ask`.
#[test]
fn a_question_asked_on_one_machine_is_answered_from_another() {
    use support::machine::Machine;
    use support::pg::PgServer;
    let server = PgServer::shared();
    let a = Machine::new("a").with_env("PGPASSWORD", &server.password());
    let b = Machine::new("b").with_env("PGPASSWORD", &server.password());
    let url = server.url_without_password();
    let project = format!("inbox-{}", std::process::id());
    a.ok(&[
        "leader",
        "init",
        "Ask",
        "--store",
        &url,
        "--project",
        &project,
    ]);
    b.ok(&["connect", &url, "--project", &project]);
    let lead =
        Background::from_command(a.command(&["inbox", "--wait", "--timeout", "60", "--json"]));
    let mut ask = b.command(&["ask", "Which port?", "--timeout", "60"]);
    ask.env("BATON_AGENT", "b-cc1");
    let ask = Background::from_command(ask);
    let (code, out, err) = lead.finish();
    assert_eq!(code, Some(0), "{err}");
    let inbox: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(inbox["questions"][0]["agent"], "b-cc1", "{inbox}");
    a.ok(&["answer", "q-1", "8080"]);
    let (code, out, err) = ask.finish();
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out.trim(), "8080");
}

/// An agent that sends message after message, and asks question after question, is refused
/// at its limit (saying why); the lead still sees every other agent's question, and sees that
/// the agent hit its limit; once the lead reads its messages it may send again.
fn an_agent_flooding_the_inbox_is_limited_and_the_lead_still_sees_every_question(p: Project) {
    use baton_core::inbox::{MAX_OPEN_QUESTIONS, MAX_UNREAD_FROM};
    let waiting = as_agent(&p, "cc2", &["ask", "Which database?", "--timeout", "120"]);
    support::eventually("cc2's question in the lead's inbox", || {
        p.json(&["inbox"])["questions"].as_array().unwrap().len() == 1
    });
    // The flood: each message its own process, as an agent's shell sends them.
    let mut refused = Vec::new();
    for n in 1..=MAX_UNREAD_FROM + 10 {
        let out = p
            .command(&["message", "send", "lead", &format!("Note {n}"), "body"])
            .env("BATON_AGENT", "cc1")
            .output()
            .unwrap();
        if !out.status.success() {
            assert_eq!(out.status.code(), Some(1), "{out:?}");
            refused.push(String::from_utf8_lossy(&out.stderr).into_owned());
        }
    }
    assert_eq!(refused.len(), 10, "{refused:?}");
    assert!(
        refused[0].contains("as much in the lead's inbox as an agent may"),
        "{}",
        refused[0]
    );
    let lead = p.json(&["inbox"]);
    let from_cc1 = lead["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["from"] == "cc1")
        .count();
    assert_eq!(from_cc1, MAX_UNREAD_FROM, "{lead}");
    assert_eq!(lead["questions"][0]["agent"], "cc2", "{lead}");
    assert_eq!(lead["limited"][0]["agent"], "cc1", "{lead}");
    assert_eq!(lead["limited"][0]["messages_refused"], 10, "{lead}");
    let text = p.ok(&["inbox"]);
    assert!(
        text.contains("Agent cc1 hit its inbox limit") && text.contains("10 message(s)"),
        "{text}"
    );
    assert!(text.contains("Which database?"), "{text}");

    // Read, its messages free its place.
    p.ok(&["message", "ack", "m-1", "m-2"]);
    let sent = p
        .command(&["message", "send", "lead", "Again", "body"])
        .env("BATON_AGENT", "cc1")
        .output()
        .unwrap();
    assert!(sent.status.success(), "{sent:?}");

    // Questions: as many as an agent may have waiting, then one more is refused.
    let askers: Vec<support::Background> = (0..MAX_OPEN_QUESTIONS)
        .map(|n| {
            as_agent(
                &p,
                "cc3",
                &["ask", &format!("Question {n}?"), "--timeout", "120"],
            )
        })
        .collect();
    support::eventually("cc3's questions in the lead's inbox", || {
        p.json(&["inbox"])["questions"].as_array().unwrap().len() == 1 + MAX_OPEN_QUESTIONS
    });
    let one_more = p
        .command(&["ask", "One more?", "--timeout", "5"])
        .env("BATON_AGENT", "cc3")
        .output()
        .unwrap();
    assert_eq!(one_more.status.code(), Some(1), "{one_more:?}");
    let said = String::from_utf8_lossy(&one_more.stderr);
    assert!(said.contains("questions wait for an answer"), "{said}");
    let lead = p.json(&["inbox"]);
    let cc3 = lead["limited"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["agent"] == "cc3")
        .cloned()
        .unwrap_or_default();
    assert_eq!(cc3["questions_refused"], 1, "{lead}");
    drop(askers);
    drop(waiting);
}
