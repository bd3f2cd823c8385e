//! Pushed when the page is closed: a browser paired through the link a server on every address
//! prints (`--host NAME`) subscribes to `baton serve`'s pushes, and what waits for the lead
//! (questions as one digest, one alone, each with its deep link under NAME) and a team's end
//! reach its push service encrypted for it alone and signed by the project's key, and a webhook
//! too. The browser and its push service are played by `tests/clients/push_subscriber.mjs`,
//! which decrypts each push with the reference implementation (npm's http_ece) and checks its
//! VAPID token; a subscription the service says is gone is dropped. Subscriptions no browser
//! would make, a responder's pointing at this machine, and requests from unpaired browsers,
//! are refused.

use baton_test_support as support;

use serde_json::{Value, json};
use support::served::Browser;
use support::{Background, Project};

/// The subscriber: its subscription, and the pushes it prints as they come.
fn subscriber(gone_after: usize) -> (Background, Value) {
    let mut command = std::process::Command::new("node");
    command
        .arg(support::source_root().join("tests/clients/push_subscriber.mjs"))
        .env("BATON_HTTP_ECE", support::cached_tool("push"))
        .env("BATON_PUSH_GONE_AFTER", gone_after.to_string());
    let mut node = Background::from_command(command);
    let line = node.wait_stdout("\"endpoint\"");
    let subscription: Value = serde_json::from_str(&line).unwrap();
    (node, subscription)
}

/// The next push and the next webhook request the subscriber received, in whichever order
/// they came.
fn next_push_and_hook(node: &mut Background) -> (Value, Value) {
    let (mut push, mut hook) = (None, None);
    while push.is_none() || hook.is_none() {
        let line: Value = serde_json::from_str(&node.wait_stdout("{")).unwrap();
        match line.get("hook") {
            Some(_) => hook = Some(line),
            None => push = Some(checked(line)),
        }
    }
    (push.unwrap(), hook.unwrap())
}

/// The next push the subscriber received, decrypted.
fn next_push(node: &mut Background) -> Value {
    let line = node.wait_stdout("\"path\"");
    checked(serde_json::from_str(&line).unwrap())
}

/// A push as received, checked: it decrypts, its token holds, its coding is aes128gcm.
fn checked(push: Value) -> Value {
    assert!(push["error"].is_null(), "the push decrypts: {push}");
    assert_eq!(push["vapid"]["ok"], true, "its VAPID token holds: {push}");
    assert_eq!(push["headers"]["content-encoding"], "aes128gcm", "{push}");
    push
}

#[test]
fn a_subscribed_browser_is_pushed_what_waits_and_the_team_s_end() {
    let p = Project::init();
    let (mut node, subscription) = subscriber(3);
    let hook = format!("{}/hook", origin_of(&subscription));
    std::fs::write(
        p.coordination().join("notify.toml"),
        format!(
            "digest_seconds = 1\npush_contact = \"mailto:lead@example.com\"\n\
             [[webhook]]\nformat = \"json\"\nurl = \"{hook}\"\nevents = [\"question\"]\n"
        ),
    )
    .unwrap();
    // Served on every address, named as a phone's network names this machine.
    let mut serving = p.spawn(&[
        "serve",
        "--listen",
        "0.0.0.0:0",
        "--host",
        "phone.example",
        "--pair",
        "lead",
    ]);
    let url = support::served::served_url(&mut serving);
    assert!(url.starts_with("http://phone.example:"), "{url}");
    let link = serving.wait_stdout("/pair/").trim().to_string();
    assert!(link.starts_with(&format!("{url}/pair/")), "{link}");
    // The test reaches the server on loopback, naming it as the phone does.
    let host = url.strip_prefix("http://").unwrap().to_string();
    let mut phone = Browser::new(&host);

    // Unpaired, nothing about pushes is answered.
    let refused = phone.post("/api/command/push_key", &json!({}));
    assert_eq!(refused.status, 401, "{refused:?}");
    assert_eq!(phone.open_link(&link).status, 303);

    let key = phone.post("/api/command/push_key", &json!({})).json();
    assert_eq!(key["subscribed"], false, "{key}");
    let server_key = key["key"].as_str().unwrap().to_string();
    assert_eq!(
        server_key.len(),
        87,
        "an uncompressed P-256 key, base64url: {key}"
    );

    // What no browser would give is refused, and nothing is subscribed by it.
    let keys = subscription["keys"].clone();
    for (bad, says) in [
        (
            json!({"endpoint": "http://push.example/x", "keys": keys}),
            "https URL",
        ),
        (
            json!({"endpoint": "file:///etc/passwd", "keys": keys}),
            "http or https",
        ),
        (
            json!({"endpoint": subscription["endpoint"], "keys": {"p256dh": keys["p256dh"], "auth": "AAAA"}}),
            "auth secret",
        ),
        (
            json!({"endpoint": subscription["endpoint"]}),
            "not a push subscription",
        ),
    ] {
        let answer = phone.post(
            "/api/command/push_subscribe",
            &json!({ "subscription": bad }),
        );
        assert_eq!(answer.status, 400, "{bad}: {answer:?}");
        assert!(answer.body.contains(says), "{bad}: {answer:?}");
    }
    let devices = p.json(&["serve", "devices"]);
    assert_eq!(devices[0]["push"], false, "{devices}");
    // A responder's device cannot point the server's pushes at a port of this machine.
    let responder_link = p.json(&["serve", "pair", "--as", "responder"])["link"]
        .as_str()
        .unwrap()
        .to_string();
    let mut responder = Browser::new(&host);
    assert_eq!(responder.open_link(&responder_link).status, 303);
    let refused = responder.post(
        "/api/command/push_subscribe",
        &json!({ "subscription": subscription }),
    );
    assert_eq!(refused.status, 400, "{refused:?}");
    assert!(
        refused.body.contains("from the lead's device"),
        "{refused:?}"
    );

    let subscribed = phone.post(
        "/api/command/push_subscribe",
        &json!({ "subscription": subscription }),
    );
    assert_eq!(subscribed.status, 200, "{subscribed:?}");
    let key_again = phone.post("/api/command/push_key", &json!({})).json();
    assert_eq!(key_again, json!({"key": server_key, "subscribed": true}));
    let devices = p.json(&["serve", "devices"]);
    assert_eq!(devices[0]["push"], true, "{devices}");
    assert_eq!(devices[1]["push"], false, "{devices}");
    assert!(
        !devices.to_string().contains(keys["auth"].as_str().unwrap()),
        "the subscription's secret is not listed: {devices}"
    );

    // Two questions at once: one push, a digest linking to the inbox.
    let _first = p.ask_as("w1", "Which port?", &[]);
    let _second = p.ask_as("w2", "Which database?", &[]);
    let (digest, heard) = next_push_and_hook(&mut node);
    assert_eq!(
        digest["payload"]["title"], "2 questions wait for you",
        "{digest}"
    );
    assert_eq!(digest["payload"]["url"], format!("{url}/inbox"), "{digest}");
    assert_eq!(digest["headers"]["urgency"], "normal", "{digest}");
    assert_eq!(digest["vapid"]["aud"], origin_of(&subscription), "{digest}");
    assert_eq!(
        digest["vapid"]["sub"], "mailto:lead@example.com",
        "{digest}"
    );
    assert_eq!(digest["vapid"]["k"], server_key.as_str(), "{digest}");
    assert!(digest["headers"]["ttl"].as_str().is_some(), "{digest}");
    // The webhook heard the same, with each question's deep link.
    assert_eq!(heard["body"]["event"], "digest", "{heard}");
    assert_eq!(
        heard["body"]["questions"][0]["link"],
        format!("{url}/inbox#q-1"),
        "{heard}"
    );

    // One alone: its asker, its text and a link to it.
    let _third = p.ask_as("w3", "Tabs or spaces?", &[]);
    let one = next_push(&mut node);
    assert_eq!(one["payload"]["title"], "w3 asks", "{one}");
    assert_eq!(one["payload"]["body"], "Tabs or spaces?", "{one}");
    assert_eq!(one["payload"]["url"], format!("{url}/inbox#q-3"), "{one}");
    assert_eq!(one["payload"]["tag"], "q-3", "{one}");

    // A team's end, at once, linking to the Team view.
    p.ok(&["leader", "add-task", "Say hello"]);
    p.ok(&["team", "up", "--exec", "true"]);
    let ended = next_push(&mut node);
    let title = ended["payload"]["title"].as_str().unwrap();
    assert!(
        title.starts_with("The team on ") && title.ends_with("ended its run: all done"),
        "{ended}"
    );
    assert!(
        ended["payload"]["body"]
            .as_str()
            .unwrap()
            .contains("1 done, 0 failed"),
        "{ended}"
    );
    assert_eq!(ended["payload"]["url"], format!("{url}/team"), "{ended}");
    assert_eq!(ended["headers"]["urgency"], "high", "{ended}");

    // The service says the subscription is gone: it is dropped.
    let _fourth = p.ask_as("w4", "Still there?", &[]);
    let gone = node.wait_stdout("\"path\"");
    assert!(gone.contains("\"answered\":410"), "{gone}");
    support::eventually("the subscription is dropped", || {
        p.json(&["serve", "devices"])[0]["push"] == false
    });
    let key_after = phone.post("/api/command/push_key", &json!({})).json();
    assert_eq!(key_after["subscribed"], false, "{key_after}");

    // The key was made once, and stays: a restarted server signs with the same one.
    serving.signal("TERM");
    assert_eq!(serving.finish().0, Some(0));
    let (_again, url_again) = support::served::serve(&p, &["--pair", "none"]);
    let host_again = url_again.strip_prefix("http://").unwrap().to_string();
    let mut same_phone = Browser::new(&host_again);
    same_phone.cookie = phone.cookie.clone();
    let key_restarted = same_phone.post("/api/command/push_key", &json!({})).json();
    assert_eq!(key_restarted["key"], server_key.as_str(), "{key_restarted}");
}

/// `http://127.0.0.1:PORT` of the subscription's endpoint.
fn origin_of(subscription: &Value) -> String {
    let endpoint = subscription["endpoint"].as_str().unwrap();
    endpoint[..endpoint.find("/push/").unwrap()].to_string()
}
