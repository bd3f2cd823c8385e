//! The served UI in a real, phone-sized Chromium driven through Playwright (`tests/clients/
//! served_ui.mjs`), on both stores: unpaired, the page says how to pair; the pairing link gives
//! it an HttpOnly cookie and the board; a task a CLI adds shows without a reload; an agent's
//! question is answered with a tap and the agent's `ask` returns the answer; an agent's tool call
//! is allowed with a tap and its permission prompt returns "allow"; a worker's real diff (a line
//! wider than the phone) reads at 390 px without the page scrolling sideways, a line of it is
//! commented on with two taps and the work is sent back with the comment; a responder's page
//! calling a merge itself is refused by the server; a revoked device's page falls back to the
//! pairing screen; a responder's page offers no team start, new task or "always allow", and its
//! tap denies an approval; a page open while its server restarts finds it again, still paired.
//! A planned team's plan reaches the phone's Inbox as one approval, approved with one tap.

use baton_test_support as support;

use serde_json::{Value, json};
use support::Project;
use support::mcp::RawClient;
use support::served::{Phone, pairing_path, serve};

support::on_both_stores!(a_phone_pairs_follows_the_team_and_answers_an_agent);

/// A worker's first attempt writes `greet.txt`, one of its lines wider than a phone; an attempt
/// whose hints ask for changes adds `bye`.
const WORK: &str = "if printf '%s' \"$BATON_TASK_HINTS\" | grep -q 'Changes requested'; then \
     echo bye >> greet.txt && git commit -q -am 'say bye'; \
     else printf 'hello\\nworld, and a line much longer than a phone is wide: \
     0123456789012345678901234567890123456789012345678901234567890123456789\\n' > greet.txt \
     && git add greet.txt && git commit -q -m 'greet'; fi";

fn a_phone_pairs_follows_the_team_and_answers_an_agent(p: Project) {
    // A worker's done task, on its branch, for the review.
    support::repository(p.path());
    p.ok(&["leader", "add-task", "Greet the user", "--id", "t1"]);
    p.work_in_worktrees("w1", WORK);
    p.ok(&["leader", "add-task", "Write the parser", "--id", "t2"]);
    p.ok(&["leader", "add-task", "Break it", "--id", "t3"]);
    p.ok(&["worker", "claim", "w3", "--task", "t3"]);
    p.ok(&["worker", "fail", "w3", "t3", "it broke"]);
    let (serving, base) = serve(&p, &["--pair", "none"]);
    let mut phone = Phone::start(&base);
    let shots = support::artifacts_dir().join("serve-e2e");
    std::fs::create_dir_all(&shots).unwrap();
    let shot = |phone: &mut Phone, name: &str| {
        let path = shots.join(format!("{name}-{}.png", p.store_name()));
        phone.run(json!({"do": "screenshot", "path": path}));
    };

    // Not paired: the page says how.
    let opened = phone.run(json!({"do": "open", "path": "/"}));
    assert_eq!(opened["unpaired"], true, "{opened}");
    shot(&mut phone, "unpaired");

    // Paired as lead through its link: a cookie the page's scripts cannot read, and the board.
    let paired = pair_as_lead(&p, &mut phone);
    assert_eq!(paired["unpaired"], false, "{paired}");
    assert!(paired["url"].as_str().unwrap().ends_with('/'), "{paired}");
    let cookies = phone.run(json!({"do": "cookies"}));
    assert_eq!(cookies["cookies"][0]["httpOnly"], true, "{cookies}");
    assert_eq!(cookies["cookies"][0]["sameSite"], "Strict", "{cookies}");
    // A phone opens on the Inbox; the board is a tap away.
    phone.run(json!({"do": "waitCard", "text": "Questions and approvals"}));
    phone.run(json!({"do": "view", "name": "board"}));
    phone.run(json!({"do": "waitCard", "text": "Write the parser"}));
    shot(&mut phone, "board");
    // On a phone the board opens on what needs the lead (the failure first, no empty column),
    // the form and the filters a tap away.
    let order = phone.run(json!({"do": "columnOrder"}));
    assert_eq!(
        order["columns"],
        json!(["column-failed", "column-available", "column-done"]),
        "{order}"
    );
    for hidden in ["new-task", "filters"] {
        assert_eq!(
            phone.run(json!({"do": "has", "id": hidden}))["count"],
            0,
            "{hidden}"
        );
    }
    phone.run(json!({"do": "tap", "id": "show-new-task"}));
    assert_eq!(
        phone.run(json!({"do": "has", "id": "new-task"}))["count"],
        1
    );
    phone.run(json!({"do": "tap", "id": "show-new-task"}));

    // Every view, at phone and desk sizes, light and dark: nothing wider than the screen on a
    // phone, no serious accessibility violation (axe), a screenshot of each.
    for (size, width, height) in [("phone", 390, 844), ("desk", 1280, 800)] {
        phone.run(json!({"do": "viewport", "width": width, "height": height}));
        for view in ["inbox", "team", "board", "agents", "review", "graph"] {
            phone.run(json!({"do": "view", "name": view}));
            if view == "review" {
                phone.run(json!({"do": "waitTestId", "id": "diff-greet.txt"}));
            }
            for dark in [false, true] {
                phone.run(json!({"do": "theme", "dark": dark}));
                let theme = if dark { "dark" } else { "light" };
                let axe = phone.run(json!({"do": "axe"}));
                assert_eq!(
                    axe["violations"],
                    json!([]),
                    "{view} at {size} size, {theme}: {axe}"
                );
                if size == "phone" && view == "agents" {
                    // Its last column is not squeezed to a few letters a line: the table is
                    // as wide as it needs and scrolls in its own box.
                    phone.run(json!({"do": "waitTestId", "id": "agents-table"}));
                    unsqueezed(&mut phone, ".agents table", &[("Last did", 180)]);
                }
                if size == "phone" {
                    let widths = phone.run(json!({"do": "scrollWidth"}));
                    assert!(
                        widths["scroll"].as_u64() <= widths["client"].as_u64(),
                        "{view} scrolls sideways on a phone ({theme}): {widths}"
                    );
                }
                shot(&mut phone, &format!("{view}-{size}-{theme}"));
            }
        }
    }
    phone.run(json!({"do": "theme", "dark": false}));
    phone.run(json!({"do": "viewport", "width": 390, "height": 844}));
    phone.run(json!({"do": "view", "name": "board"}));

    // The team working, live: a task a CLI adds shows without a reload.
    p.ok(&["leader", "add-task", "Added from a terminal"]);
    let shown = phone.run(json!({"do": "waitCard", "text": "Added from a terminal"}));
    eprintln!("a CLI's task on the phone's board after {} ms", shown["ms"]);

    // Eight tabs of the app in one browser all follow the team: each holds its feed open, and
    // a browser keeps at most six HTTP/1.1 connections to a server, so a feed must not take
    // one of them (server-sent events did: the seventh tab's calls waited for ever).
    phone.run(json!({"do": "tabs", "count": 8}));
    p.ok(&["leader", "add-task", "Seen in every tab"]);
    let seen = phone.run(json!({"do": "tabsSee", "text": "Seen in every tab"}));
    eprintln!("eight tabs showed a CLI's task after {} ms", seen["ms"]);

    // An agent asks; the phone answers with a tap; the agent's ask returns the answer.
    let ask = p.ask_as("cc1", "Which JSON library?", &["serde_json", "simd-json"]);
    phone.run(json!({"do": "view", "name": "inbox"}));
    phone.run(json!({"do": "answer", "id": "q-1", "choice": "simd-json"}));
    let (code, out, err) = ask.finish();
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out.trim(), "simd-json");
    shot(&mut phone, "inbox-answered");
    // The open page showed the question as a notification.
    let notices = phone.run(json!({"do": "notices"}));
    assert_eq!(
        notices["notices"],
        json!([{"title": "cc1 asks", "body": "Which JSON library?"}]),
        "{notices}"
    );

    // An agent's tool call the policy puts to the lead: allowed with a tap; the agent's
    // permission prompt returns the decision.
    std::fs::write(
        p.coordination().join("policy.toml"),
        "ask_timeout_seconds = 120\n",
    )
    .unwrap();
    let (agent, id) = ask_approval(&p, "cargo publish");
    phone.run(json!({"do": "waitTestId", "id": "question-q-2"}));
    shot(&mut phone, "inbox-approval");
    // The lead may also always allow it (which changes the policy).
    let always = phone.run(json!({"do": "has", "id": "answer-q-2-always-allow"}));
    assert_eq!(always["count"], 1, "{always}");
    phone.run(json!({"do": "answer", "id": "q-2", "choice": "allow"}));
    assert_eq!(decision(agent, id), "allow");

    // The review from the phone: a comment on a line of the worker's diff, two taps away, and
    // the work sent back to its worker with it.
    phone.run(json!({"do": "view", "name": "review"}));
    phone.run(json!({"do": "comment", "file": "greet.txt", "line": 2, "text": "shorter, please"}));
    shot(&mut phone, "review-commented");
    phone.run(json!({"do": "tap", "id": "request-changes"}));
    support::eventually("t1 sent back to its worker", || {
        p.task("t1")["status"] == "claimed"
    });
    let review = p.json(&["review", "t1"]);
    assert_eq!(review["comments"][0]["line"], 2, "{review}");
    assert_eq!(review["comments"][0]["text"], "shorter, please");
    assert_eq!(review["comments"][0]["round"], 1, "{review}");
    assert_eq!(p.task("t1")["claimed_by"], "w1");

    // Revoked: the open page falls back to the pairing screen.
    p.ok(&["serve", "revoke", "d-1"]);
    let fell_back = phone.run(json!({"do": "waitUnpaired"}));
    eprintln!(
        "a revoked phone's page showed the pairing screen after {} ms",
        fell_back["ms"]
    );

    // A responder's page calling a merge and a team start itself: the server refuses.
    let link = p.json(&["serve", "pair", "--as", "responder"])["link"]
        .as_str()
        .unwrap()
        .to_string();
    let path = pairing_path(&link);
    assert_eq!(
        phone.run(json!({"do": "open", "path": path}))["unpaired"],
        false
    );
    for (name, body) in [
        ("task_merge", json!({"task": "t1"})),
        ("team_up", json!({})),
    ] {
        let called = phone
            .run(json!({"do": "fetch", "path": format!("/api/operation/{name}"), "body": body}));
        assert_eq!(called["status"], 403, "{name}: {called}");
        assert_eq!(called["body"]["kind"], "not_allowed", "{called}");
    }
    // The responder's page offers only what its device may do: no team start, no new task, no
    // merge, and an approval without "always allow"; denied with a tap, the agent is told.
    phone.run(json!({"do": "view", "name": "team"}));
    phone.run(json!({"do": "waitTestId", "id": "team-view"}));
    phone.run(json!({"do": "view", "name": "board"}));
    phone.run(json!({"do": "waitTestId", "id": "board"}));
    for hidden in ["team-start", "field-description", "aggregate"] {
        let shown = phone.run(json!({"do": "has", "id": hidden}));
        assert_eq!(shown["count"], 0, "{hidden} on a responder's page");
    }
    let (agent, id) = ask_approval(&p, "cargo publish --allow-dirty");
    phone.run(json!({"do": "view", "name": "inbox"}));
    phone.run(json!({"do": "waitTestId", "id": "question-q-3"}));
    let always = phone.run(json!({"do": "has", "id": "answer-q-3-always-allow"}));
    assert_eq!(always["count"], 0, "{always}");
    shot(&mut phone, "inbox-responder");
    phone.run(json!({"do": "answer", "id": "q-3", "choice": "deny"}));
    assert_eq!(decision(agent, id), "deny");

    let listed = phone.run(json!({"do": "errors"}));
    let errors: Vec<&str> = listed["errors"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        // The refusals above, and the 401 that told the page it was revoked, are expected.
        .filter(|e| !e.contains("403") && !e.contains("401"))
        .collect();
    assert!(
        errors.is_empty(),
        "the page's console: {errors:?}; {listed}"
    );

    // The server restarts (an upgrade, the machine rebooted): the open page finds it again by
    // itself, still paired, shows what changed while it was away, and follows the feed again.
    let port = base.rsplit(':').next().unwrap().to_string();
    serving.signal("TERM");
    let (code, _, err) = serving.finish();
    assert_eq!(code, Some(0), "{err}");
    let available = |p: &Project| p.json(&["leader", "status"])["counts"]["available"].clone();
    p.ok(&["leader", "add-task", "Added while the server was down"]);
    let listen = format!("127.0.0.1:{port}");
    let mut serving = p.spawn(&["serve", "--listen", &listen, "--pair", "none"]);
    serving.wait_stdout("serving this project's UI at");
    let back = phone.run(json!({"do": "waitCard", "text": format!("{} available", available(&p))}));
    eprintln!(
        "the page was back with the restarted server after {} ms",
        back["ms"]
    );
    p.ok(&["leader", "add-task", "Added after the restart"]);
    phone.run(json!({"do": "waitCard", "text": format!("{} available", available(&p))}));
    assert_eq!(
        phone.run(json!({"do": "has", "id": "unpaired"}))["count"],
        0,
        "still paired after the restart"
    );

    drop(phone);
    serving.signal("TERM");
    let (code, _, err) = serving.finish();
    assert_eq!(code, Some(0), "{err}");
}

/// An agent's permission prompt (Claude Code's `approve_tool_call`) for a shell command the
/// policy puts to the lead: its MCP client and the call's id, answered later.
fn ask_approval(p: &Project, command: &str) -> (RawClient, u64) {
    let mut agent = {
        let mut server = p.command(&["mcp", "--quiet"]);
        server.env("BATON_AGENT", "cc1");
        RawClient::start(server)
    };
    let id = agent.request_id();
    agent.send_line(
        &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "approve_tool_call",
            "arguments": {"tool_name": "Bash", "input": {"command": command}}}})
        .to_string(),
    );
    (agent, id)
}

/// The decision the agent's permission prompt returned (`allow` or `deny`).
fn decision(mut agent: RawClient, id: u64) -> String {
    let verdict = agent.response_to(id);
    let text = verdict["result"]["content"][0]["text"].as_str().unwrap();
    let decided: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {verdict}"));
    assert_eq!(agent.close(), Some(0));
    decided["behavior"].as_str().unwrap_or_default().to_string()
}

/// A planner that plans two tasks, the second after the first.
const PLANNER: &str = "baton leader add-task 'Part a' --id a --acceptance 'a.txt exists' && \
     baton leader add-task 'Part b' --id b --depends a --acceptance 'b.txt exists'";
/// Each worker writes its task's file and commits it.
const WRITER: &str = "echo \"$BATON_TASK_ID\" > \"$BATON_TASK_ID.txt\" && git add . && \
     git commit -qm \"$BATON_TASK_ID\"";

/// A pairing link as the lead (`baton serve pair`), opened and its button pressed on `phone`;
/// what the page said once open.
fn pair_as_lead(p: &Project, phone: &mut Phone) -> Value {
    let link = p.json(&["serve", "pair", "--as", "lead"])["link"]
        .as_str()
        .unwrap()
        .to_string();
    phone.run(json!({"do": "open", "path": pairing_path(&link)}))
}

/// Table `selector` on a phone keeps each of `columns` at least as wide as said (not squeezed to
/// a few letters a line), and scrolls in its own box instead.
fn unsqueezed(phone: &mut Phone, selector: &str, columns: &[(&str, u64)]) {
    let table = phone.run(json!({"do": "tableColumns", "selector": selector}));
    for (name, least) in columns {
        let width = table["widths"][name].as_u64().unwrap_or(0);
        assert!(width >= *least, "{selector}'s {name} on a phone: {table}");
    }
    assert!(
        table["scroll"].as_u64() > table["client"].as_u64(),
        "{selector} scrolls in its own box: {table}"
    );
}

/// The lead away from the desk: a planned team's plan reaches the paired phone's Inbox as one
/// approval, listing its tasks; a tap on "Approve the plan" lets the workers start, and the
/// team lands the plan and ends.
#[test]
fn a_phone_approves_a_teams_plan_with_one_tap() {
    let p = Project::init();
    support::repository(p.path());
    std::fs::create_dir_all(p.coordination().join("team")).unwrap();
    std::fs::write(
        p.coordination().join("team/profiles.toml"),
        format!("[profiles.planner]\nkind = \"exec\"\ncommand = \"{PLANNER}\"\n"),
    )
    .unwrap();
    let (_serving, base) = serve(&p, &["--pair", "none"]);
    let mut phone = Phone::start(&base);
    pair_as_lead(&p, &mut phone);
    let mut team = support::Background::from_command(p.committing(&[
        "--json",
        "team",
        "up",
        "--exec",
        WRITER,
        "--merge",
        "auto",
        "--goal",
        "Write a and b",
    ]));
    let question = support::team::plan_question(&mut team);
    // The team's table on a phone: its last event and its actions each on a line of their own.
    phone.run(json!({"do": "view", "name": "team"}));
    phone.run(json!({"do": "waitTestId", "id": "worker-ex1"}));
    unsqueezed(
        &mut phone,
        ".workers",
        &[("Last event", 180), ("Actions", 150)],
    );
    let widths = phone.run(json!({"do": "scrollWidth"}));
    let shots = support::artifacts_dir().join("serve-e2e");
    std::fs::create_dir_all(&shots).unwrap();
    phone.run(json!({"do": "screenshot", "path": shots.join("team-phone.png")}));
    assert!(
        widths["scroll"].as_u64() <= widths["client"].as_u64(),
        "the Team view scrolls sideways on a phone: {widths}"
    );
    phone.run(json!({"do": "view", "name": "inbox"}));
    phone.run(json!({"do": "waitTestId", "id": format!("question-{question}")}));
    phone.run(json!({"do": "waitCard", "text": "b [p5] Part b (after a)"}));
    phone.run(json!({"do": "screenshot", "path": shots.join("plan-approval.png")}));
    phone.run(json!({"do": "tap", "id": format!("approve-plan-{question}")}));
    let (code, stdout, stderr) = team.finish();
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    let report: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(report["plan"]["carried_out"], true, "{report}");
    let inbox = p.json(&["inbox", "--all"]);
    assert_eq!(
        inbox["questions"][0]["state"]["answer"], "approve",
        "{inbox}"
    );
    assert!(p.path().join("b.txt").is_file(), "b landed");
    // The Team view says how the run ended, as a push's link to it shows it.
    phone.run(json!({"do": "open", "path": "/team"}));
    phone.run(json!({"do": "waitTestId", "id": "team-view"}));
    phone.run(json!({"do": "waitCard", "text": "Every task it could reach is done"}));
}

/// Pushed while no page is open: the app's service worker shows a push as a notification that
/// keeps its link, and the Inbox offers pushes to the device (a page on localhost is a secure
/// context).
#[test]
fn the_service_worker_shows_a_push_with_its_link() {
    let p = Project::init();
    let (_serving, base) = serve(&p, &["--pair", "none"]);
    let mut phone = Phone::start(&base);
    pair_as_lead(&p, &mut phone);
    phone.run(json!({"do": "waitTestId", "id": "push-switch"}));
    let link = format!("{base}/inbox#q-1");
    let data = json!({"title": "w1 asks", "body": "Which port?", "url": link, "tag": "q-1"});
    let shown = phone.run(json!({"do": "pushShown", "data": data}));
    assert_eq!(shown["scope"], format!("{base}/"), "{shown}");
    let notice = &shown["notifications"][0];
    assert_eq!(notice["body"], "Which port?", "{shown}");
    assert_eq!(notice["tag"], "q-1", "{shown}");
    assert_eq!(notice["data"]["url"], link, "{shown}");
}

/// Served on every address with `--host NAME`, the link the server prints (and draws as a QR
/// code) pairs a phone-sized Chromium whose network resolves NAME to this machine: it opens on
/// the Inbox, paired as the lead.
#[test]
fn a_phone_pairs_through_the_link_a_server_on_every_address_prints() {
    let p = Project::init();
    let mut serving = p.spawn(&["serve", "--listen", "0.0.0.0:0", "--host", "phone.example"]);
    let link = serving.wait_stdout("/pair/").trim().to_string();
    assert!(link.starts_with("http://phone.example:"), "{link}");
    let base = link[..link.find("/pair/").unwrap()].to_string();
    let mut phone = Phone::start_resolving(&base, Some("MAP phone.example 127.0.0.1"));
    let paired = phone.run(json!({"do": "open", "path": pairing_path(&link)}));
    assert_eq!(paired["unpaired"], false, "{paired}");
    phone.run(json!({"do": "waitCard", "text": "Questions and approvals"}));
    let cookies = phone.run(json!({"do": "cookies"}));
    assert_eq!(cookies["cookies"][0]["httpOnly"], true, "{cookies}");
    let devices = p.json(&["serve", "devices"]);
    assert_eq!(devices[0]["scope"], "lead", "{devices}");
    serving.signal("TERM");
    let (code, stdout, _) = serving.finish();
    assert_eq!(code, Some(0));
    assert!(
        stdout.contains('▀') || stdout.contains('█'),
        "a QR code for the phone: {stdout}"
    );
}

/// A webhook's link to one question (`/inbox#q-8`) shows that question on a phone, below the
/// seven asked before it.
#[test]
fn a_link_to_one_question_shows_it_among_many() {
    let p = Project::init();
    let (_serving, base) = serve(&p, &["--pair", "none"]);
    let mut phone = Phone::start(&base);
    pair_as_lead(&p, &mut phone);
    let asking: Vec<_> = (1..=8)
        .map(|n| {
            p.ask_as(
                &format!("w{n}"),
                &format!("Question {n}: which way?"),
                &["left", "right"],
            )
        })
        .collect();
    support::eventually("eight questions asked", || {
        p.json(&["inbox"])["questions"].as_array().map(Vec::len) == Some(8)
    });
    let last = p.json(&["inbox"])["questions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["id"].as_str().unwrap().to_string())
        .max_by_key(|id| id.trim_start_matches("q-").parse::<u32>().unwrap_or(0))
        .unwrap();
    phone.run(json!({"do": "open", "path": format!("/inbox#{last}")}));
    let seen = phone.run(json!({"do": "inView", "id": format!("question-{last}")}));
    assert_eq!(seen["inView"], true, "{last} on the screen: {seen}");
    drop(asking);
}
