//! A webhook's request for what the lead is told of, in the format it takes: ntfy (the text
//! as the body, title and link as headers), Slack, Discord, or Baton's own JSON for a script.
//! What an agent wrote makes no link, mention or header of its own in any of them.

use serde_json::json;

use super::config::{Format, Webhook};
use super::told::{Asked, link_of, summary};

/// A request's headers, name and value.
pub type Headers = Vec<(String, String)>;

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
    let said = summary(&asked, base)?;
    let (title, text, link) = (said.title, said.text, said.link);
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
        Format::Json => match asked.first().and_then(|a| a.ended.as_ref()) {
            Some(ended) => json!({
                "event": said.event,
                "title": title,
                "link": link,
                "team": ended,
            }),
            None => json!({
                "event": said.event,
                "title": title,
                "link": link,
                "questions": asked.iter().map(|a| json!({
                    "id": a.id, "agent": a.agent, "task": a.task, "text": a.text,
                    "link": link_of(a, base),
                })).collect::<Vec<_>>(),
            }),
        },
    };
    headers.push(("content-type".into(), "application/json".into()));
    Some((headers, body.to_string().into_bytes()))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notify::config::Event;
    use serde_json::Value;

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
            ended: None,
        }
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
