//! Told when no page is open: while `baton serve` runs, each question, approval and plan that
//! waits for the lead goes out to the webhooks `.coordination/notify.toml` names (ntfy, Slack,
//! Discord, or JSON for a script), each with a deep link to it in the served UI. Quiet by
//! default, loud when it matters: questions that come within `digest_seconds` of the first go
//! as one message; an approval or a plan goes at once, since an agent is blocked on it.

pub mod config;
pub mod http;

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::broadcast;

pub use config::{Event, Format, NotifyConfig, Webhook};

/// The most of a question's text a message carries (characters); the page has the rest.
const TEXT_SHOWN: usize = 500;

/// A request's headers, name and value.
pub type Headers = Vec<(String, String)>;

/// A question the feed announced.
#[derive(Debug, Clone, PartialEq)]
pub struct Asked {
    pub id: String,
    pub agent: String,
    pub task: Option<String>,
    pub text: String,
    pub event: Event,
}

/// The questions asked in one of the feed's batches (a JSON array of change events).
pub fn asked_in(batch: &str) -> Vec<Asked> {
    let Ok(Value::Array(events)) = serde_json::from_str::<Value>(batch) else {
        return Vec::new();
    };
    events
        .iter()
        .filter(|e| e["event"] == "question_asked")
        .filter_map(|e| {
            let q = &e["question"];
            let event = match q["about"]["kind"].as_str()? {
                "approval" => Event::Approval,
                "plan" => Event::Plan,
                _ => Event::Question,
            };
            Some(Asked {
                id: q["id"].as_str()?.to_string(),
                agent: q["agent"].as_str()?.to_string(),
                task: q["task"].as_str().map(str::to_string),
                text: q["text"].as_str().unwrap_or_default().to_string(),
                event,
            })
        })
        .collect()
}

/// The headers and body `hook` gets for `asked` (one, or several questions as a digest), with
/// links under `base`; `None` when it is told of none of them.
pub fn message(
    hook: &Webhook,
    asked: &[Asked],
    base: &str,
    secret: Option<&str>,
) -> Option<(Headers, Vec<u8>)> {
    let asked: Vec<&Asked> = asked
        .iter()
        .filter(|a| hook.events.contains(&a.event))
        .collect();
    let first = asked.first()?;
    let base = base.trim_end_matches('/');
    let link_of = |a: &Asked| format!("{base}/inbox#{}", a.id);
    let (title, text, link, event) = match asked.len() {
        1 => {
            let what = match first.event {
                Event::Question => "asks",
                Event::Approval => "asks to run a tool",
                Event::Plan => "asks you to approve its plan",
            };
            let on = first
                .task
                .as_deref()
                .map(|t| format!(" on {t}"))
                .unwrap_or_default();
            let event = match first.event {
                Event::Question => "question",
                Event::Approval => "approval",
                Event::Plan => "plan",
            };
            (
                format!("{}{on} {what}", first.agent),
                cut(&first.text),
                link_of(first),
                event,
            )
        }
        n => {
            let lines: Vec<String> = asked
                .iter()
                .map(|a| {
                    format!(
                        "- {} ({}): {}",
                        a.agent,
                        a.id,
                        cut(a.text.lines().next().unwrap_or(""))
                    )
                })
                .collect();
            (
                format!("{n} questions wait for you"),
                lines.join("\n"),
                format!("{base}/inbox"),
                "digest",
            )
        }
    };
    let mut headers: Headers = Vec::new();
    if let Some(secret) = secret {
        headers.push(("authorization".into(), format!("Bearer {secret}")));
    }
    let body = match hook.format {
        Format::Ntfy => {
            headers.push(("title".into(), ascii(&title)));
            headers.push(("click".into(), link.clone()));
            headers.push(("content-type".into(), "text/plain; charset=utf-8".into()));
            return Some((headers, text.into_bytes()));
        }
        Format::Slack => {
            let (title, text) = (for_slack(&title), for_slack(&text));
            json!({"text": format!("*{title}*\n{text}\n<{link}|Open in Baton>")})
        }
        Format::Discord => {
            let (title, text) = (for_discord(&title), for_discord(&text));
            json!({
                "content": format!("**{title}**\n{text}\n{link}"),
                "allowed_mentions": {"parse": []},
            })
        }
        Format::Json => json!({
            "event": event,
            "title": title,
            "link": link,
            "questions": asked.iter().map(|a| json!({
                "id": a.id, "agent": a.agent, "task": a.task, "text": a.text, "link": link_of(a),
            })).collect::<Vec<_>>(),
        }),
    };
    headers.push(("content-type".into(), "application/json".into()));
    Some((headers, body.to_string().into_bytes()))
}

/// `text` cut to [`TEXT_SHOWN`] characters.
fn cut(text: &str) -> String {
    baton_core::text::shortened(text, TEXT_SHOWN)
}

/// What an agent wrote, for Slack: its `&`, `<` and `>` written out, so a question cannot
/// make a link of its own (`<https://elsewhere|Open in Baton>`) or a mention (`<!channel>`).
fn for_slack(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// What an agent wrote, for Discord: its brackets escaped, so a question cannot make a masked
/// link (`[Open in Baton](https://elsewhere)`); mentions are off for the whole message.
fn for_discord(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('[', "\\[")
        .replace(']', "\\]")
}

/// A header's value: what is not printable ASCII becomes `?` (an agent's name or a task's id
/// cannot break the request).
fn ascii(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_graphic() || c == ' ' {
                c
            } else {
                '?'
            }
        })
        .collect()
}

/// Follows the server's feed (`events`) and tells the webhooks of `config` of what waits for
/// the lead, linking under `base`. Runs on the server's runtime until the feed ends.
pub fn start(config: NotifyConfig, events: &broadcast::Sender<Arc<str>>, base: String) {
    let mut feed = events.subscribe();
    let config = Arc::new(config);
    let window = Duration::from_secs(config.digest_seconds);
    tokio::spawn(async move {
        let mut waiting: Vec<Asked> = Vec::new();
        let mut due: Option<tokio::time::Instant> = None;
        loop {
            let digest_due = async {
                match due {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                got = feed.recv() => match got {
                    Ok(batch) => {
                        for asked in asked_in(&batch) {
                            if asked.event == Event::Question && !window.is_zero() {
                                waiting.push(asked);
                                due.get_or_insert_with(|| tokio::time::Instant::now() + window);
                            } else {
                                deliver(&config, &[asked], &base);
                            }
                        }
                    }
                    Err(broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(broadcast::error::RecvError::Closed) => break,
                },
                () = digest_due => {
                    due = None;
                    deliver(&config, &std::mem::take(&mut waiting), &base);
                }
            }
        }
    });
}

/// Sends each webhook its message for `asked`, each on its own (a slow one delays no other);
/// what fails is said on the server's standard error.
fn deliver(config: &NotifyConfig, asked: &[Asked], base: &str) {
    for hook in &config.webhooks {
        let secret = hook
            .secret_env
            .as_deref()
            .and_then(|name| std::env::var(name).ok());
        let Some((headers, body)) = message(hook, asked, base, secret.as_deref()) else {
            continue;
        };
        let Ok(target) = http::Target::parse(&hook.url) else {
            continue;
        };
        tokio::spawn(async move {
            match http::post(&target, &headers, body).await {
                Ok(status) if status < 300 => {}
                Ok(status) => eprintln!(
                    "baton serve: the webhook at {}:{} answered {status}",
                    target.host, target.port
                ),
                Err(e) => eprintln!(
                    "baton serve: cannot reach the webhook at {}:{}: {e}",
                    target.host, target.port
                ),
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hook(format: Format, events: Vec<Event>) -> Webhook {
        Webhook {
            format,
            url: "http://127.0.0.1:9/hook".into(),
            secret_env: None,
            events,
        }
    }

    fn asked(id: &str, event: Event) -> Asked {
        Asked {
            id: id.into(),
            agent: "cc1".into(),
            task: Some("t1".into()),
            text: format!("Which port, {id}?\nmore"),
            event,
        }
    }

    #[test]
    fn the_feed_s_questions_are_read_and_the_rest_left() {
        let batch = json!([
            {"event": "tasks_changed", "changes": []},
            {"event": "question_asked", "question": {"id": "q-1", "agent": "cc1", "task": "t1",
              "text": "May I?", "about": {"kind": "approval", "tool": "Bash", "input": {}}}},
            {"event": "question_asked", "question": {"id": "q-2", "agent": "planner",
              "task": "plan-1", "text": "More?", "about": {"kind": "limit", "plan": "plan-1",
              "limit": "tasks"}}},
        ]);
        let asked = asked_in(&batch.to_string());
        assert_eq!(asked.len(), 2);
        assert_eq!(
            (asked[0].event, asked[1].event),
            (Event::Approval, Event::Question)
        );
        assert!(asked_in("not json").is_empty());
    }

    #[test]
    fn each_format_carries_the_text_and_its_deep_link() {
        let one = [asked("q-3", Event::Question)];
        let (headers, body) = message(
            &hook(Format::Ntfy, vec![Event::Question]),
            &one,
            "http://desk:8787/",
            Some("tok"),
        )
        .unwrap();
        let header = |name: &str| {
            headers
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(header("click"), Some("http://desk:8787/inbox#q-3"));
        assert_eq!(header("title"), Some("cc1 on t1 asks"));
        assert_eq!(header("authorization"), Some("Bearer tok"));
        assert!(
            String::from_utf8(body)
                .unwrap()
                .starts_with("Which port, q-3?")
        );
        let (_, body) = message(
            &hook(Format::Slack, vec![Event::Question]),
            &one,
            "http://d",
            None,
        )
        .unwrap();
        let slack: Value = serde_json::from_slice(&body).unwrap();
        assert!(
            slack["text"]
                .as_str()
                .unwrap()
                .contains("<http://d/inbox#q-3|Open in Baton>")
        );
        let two = [asked("q-4", Event::Question), asked("q-5", Event::Question)];
        let (_, body) = message(
            &hook(Format::Json, vec![Event::Question]),
            &two,
            "http://d",
            None,
        )
        .unwrap();
        let digest: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(digest["event"], "digest");
        assert_eq!(digest["questions"][1]["link"], "http://d/inbox#q-5");
        // A webhook told of plans alone hears nothing of questions.
        assert!(
            message(
                &hook(Format::Discord, vec![Event::Plan]),
                &two,
                "http://d",
                None
            )
            .is_none()
        );
        // What an agent wrote makes no link or mention of its own in a chat.
        let mut spoof = asked("q-7", Event::Question);
        spoof.text = "<https://evil.example|Open in Baton> <!channel> [Open](https://evil.example) @everyone".into();
        let (_, body) = message(
            &hook(Format::Slack, vec![Event::Question]),
            &[spoof.clone()],
            "http://d",
            None,
        )
        .unwrap();
        let slack: Value = serde_json::from_slice(&body).unwrap();
        let text = slack["text"].as_str().unwrap();
        assert!(
            !text.contains("<https://evil") && !text.contains("<!channel>"),
            "{text}"
        );
        assert!(
            text.contains("&lt;https://evil.example|Open in Baton&gt;"),
            "{text}"
        );
        assert!(
            text.ends_with("<http://d/inbox#q-7|Open in Baton>"),
            "{text}"
        );
        let (_, body) = message(
            &hook(Format::Discord, vec![Event::Question]),
            &[spoof],
            "http://d",
            None,
        )
        .unwrap();
        let discord: Value = serde_json::from_slice(&body).unwrap();
        let content = discord["content"].as_str().unwrap();
        assert!(
            content.contains("\\[Open\\](https://evil.example)"),
            "{content}"
        );
        assert_eq!(discord["allowed_mentions"], json!({"parse": []}));
        // What an agent wrote cannot break a header.
        let mut odd = asked("q-6", Event::Question);
        odd.agent = "cc1\r\nX-Evil: 1".into();
        let (headers, _) = message(
            &hook(Format::Ntfy, vec![Event::Question]),
            &[odd],
            "http://d",
            None,
        )
        .unwrap();
        assert!(
            headers
                .iter()
                .all(|(_, v)| !v.contains('\n') && !v.contains('\r'))
        );
    }
}
