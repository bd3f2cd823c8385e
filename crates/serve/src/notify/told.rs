//! What the lead is told of, read from the change feed's batches: each question, approval and
//! plan that waits for them, and each team run that ended; and what a message about some of
//! them says (its title, text and deep link), whatever carries it (a webhook, a push).

use baton_core::team_end::TeamEnded;
use serde_json::Value;

pub use super::config::Event;

/// The most of a question's text a message carries (characters); the page has the rest.
const TEXT_SHOWN: usize = 500;

/// Something the feed announced that the lead is told of.
#[derive(Debug, Clone, PartialEq)]
pub struct Asked {
    /// The question's id; `team` for a team's end.
    pub id: String,
    /// Who asked; for a team's end, the machine it ran on.
    pub agent: String,
    pub task: Option<String>,
    /// The question's text; for a team's end, its verdict in one line.
    pub text: String,
    pub event: Event,
    /// A team's end, as recorded.
    pub ended: Option<TeamEnded>,
}

impl Asked {
    /// Whether it is told at once rather than gathered into a digest: an agent is blocked on
    /// an approval or a plan, and a team's end comes once.
    pub fn urgent(&self) -> bool {
        self.event != Event::Question
    }
}

/// What the feed's batch (a JSON array of change events) announced that the lead is told of.
pub fn asked_in(batch: &str) -> Vec<Asked> {
    let Ok(Value::Array(events)) = serde_json::from_str::<Value>(batch) else {
        return Vec::new();
    };
    events
        .iter()
        .filter_map(|e| match e["event"].as_str()? {
            "question_asked" => question(&e["question"]),
            "team_ended" => team_ended(&e["ended"]),
            _ => None,
        })
        .collect()
}

fn question(q: &Value) -> Option<Asked> {
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
        ended: None,
    })
}

fn team_ended(body: &Value) -> Option<Asked> {
    let ended = baton_core::team_end::of_value(body.clone())?;
    Some(Asked {
        id: "team".into(),
        agent: ended.host.clone(),
        task: None,
        text: ended.headline.clone(),
        event: Event::Team,
        ended: Some(ended),
    })
}

/// What a message about one or more of what was asked says, whatever carries it.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub title: String,
    pub text: String,
    /// Where in the served UI it is answered (or, for a team, seen).
    pub link: String,
    /// `question`, `approval`, `plan`, `team`, or `digest` for several at once.
    pub event: &'static str,
}

/// The link to `asked` in the served UI under `base`.
pub fn link_of(asked: &Asked, base: &str) -> String {
    let base = base.trim_end_matches('/');
    match asked.event {
        Event::Team => format!("{base}/team"),
        _ => format!("{base}/inbox#{}", asked.id),
    }
}

/// The message about `asked` (one, or several as a digest) with links under `base`; `None`
/// for nothing.
pub fn summary(asked: &[&Asked], base: &str) -> Option<Summary> {
    let first = asked.first()?;
    if asked.len() == 1 {
        let on = first
            .task
            .as_deref()
            .map(|t| format!(" on {t}"))
            .unwrap_or_default();
        let (title, event) = match first.event {
            Event::Question => (format!("{}{on} asks", first.agent), "question"),
            Event::Approval => (
                format!("{}{on} asks to run a tool", first.agent),
                "approval",
            ),
            Event::Plan => (
                format!("{}{on} asks you to approve its plan", first.agent),
                "plan",
            ),
            Event::Team => {
                let all_done = first.ended.as_ref().is_some_and(|e| e.all_done);
                let how = if all_done { "all done" } else { "not all done" };
                (
                    format!("The team on {} ended its run: {how}", first.agent),
                    "team",
                )
            }
        };
        return Some(Summary {
            title,
            text: cut(&first.text),
            link: link_of(first, base),
            event,
        });
    }
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
    Some(Summary {
        title: format!("{} questions wait for you", asked.len()),
        text: lines.join("\n"),
        link: format!("{}/inbox", base.trim_end_matches('/')),
        event: "digest",
    })
}

/// `text` cut to [`TEXT_SHOWN`] characters.
fn cut(text: &str) -> String {
    baton_core::text::shortened(text, TEXT_SHOWN)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_feed_s_questions_and_team_ends_are_read_and_the_rest_left() {
        let batch = json!([
            {"event": "tasks_changed", "changes": []},
            {"event": "question_asked", "question": {"id": "q-1", "agent": "cc1", "task": "t1",
              "text": "May I?", "about": {"kind": "approval", "tool": "Bash", "input": {}}}},
            {"event": "question_asked", "question": {"id": "q-2", "agent": "planner",
              "task": "plan-1", "text": "More?", "about": {"kind": "limit", "plan": "plan-1",
              "limit": "tasks"}}},
            {"event": "team_ended", "ended": {"host": "desk", "pid": 9,
              "started_at": "2026-11-28T10:00:00Z", "ended_at": "2026-11-28T11:00:00Z",
              "all_done": true, "done": 3, "failed": 0, "not_done": 0,
              "headline": "Every task it could reach is done: 3 done."}},
            {"event": "team_ended", "ended": {"host": "desk"}},
        ]);
        let asked = asked_in(&batch.to_string());
        assert_eq!(asked.len(), 3, "{asked:?}");
        let events: Vec<Event> = asked.iter().map(|a| a.event).collect();
        assert_eq!(events, [Event::Approval, Event::Question, Event::Team]);
        assert!(asked_in("not json").is_empty());
        let team = summary(&[&asked[2]], "http://desk:8787/").unwrap();
        assert_eq!(team.title, "The team on desk ended its run: all done");
        assert_eq!(team.link, "http://desk:8787/team");
        assert_eq!(team.text, "Every task it could reach is done: 3 done.");
        assert!(asked[2].urgent() && asked[0].urgent() && !asked[1].urgent());
    }
}
