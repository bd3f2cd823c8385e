//! `.coordination/notify.toml`: where `baton serve` tells the lead that something waits for
//! them, for people who live in a chat (ntfy, Slack, Discord) or a script (JSON). The lead writes
//! it; secrets are never in it, only the name of the variable that holds one, read from the
//! server's environment. Pushes to paired phones need no file; it only tunes them.
//!
//! ```toml
//! digest_seconds = 20            # questions within this long go as one message
//! link_base = "https://desk.lan:8787"  # deep links; default: the server's own URL
//! push_contact = "mailto:me@example.com"  # whom push services may write to about pushes
//!
//! [[webhook]]
//! format = "ntfy"                # ntfy | slack | discord | json
//! url = "https://ntfy.sh/my-desk"
//! secret_env = "NTFY_TOKEN"      # sent as `Authorization: Bearer …`
//! events = ["question", "approval", "plan", "team"]   # default: every one
//! ```

use baton_core::Layout;

use serde::Deserialize;

/// The file's name in `.coordination/`.
pub const FILE: &str = "notify.toml";

/// How long questions are gathered into one message unless the file says otherwise.
pub const DIGEST_SECONDS: u64 = 20;

/// What the lead is told of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Event {
    /// An agent's question in words (or about a plan's limit): gathered into a digest when
    /// several come at once.
    Question,
    /// An agent asks to make a tool call: told at once.
    Approval,
    /// A planner's plan waits for approval: told at once.
    Plan,
    /// A team's run ended, with its verdict: told at once.
    Team,
}

/// How a webhook's body is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// ntfy: the text as the body, its title and deep link as headers.
    Ntfy,
    /// A Slack incoming webhook: `{"text": …}`.
    Slack,
    /// A Discord webhook: `{"content": …}`.
    Discord,
    /// Baton's own: the event, the questions and their links, for a script.
    Json,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Webhook {
    pub format: Format,
    pub url: String,
    /// The environment variable holding a token sent as `Authorization: Bearer …`.
    #[serde(default)]
    pub secret_env: Option<String>,
    #[serde(default = "every_event")]
    pub events: Vec<Event>,
}

fn every_event() -> Vec<Event> {
    vec![Event::Question, Event::Approval, Event::Plan, Event::Team]
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NotifyConfig {
    #[serde(default = "digest_seconds")]
    pub digest_seconds: u64,
    #[serde(default)]
    pub link_base: Option<String>,
    /// Whom a push service may write to about this server's pushes (a `mailto:` or `https:`
    /// URL); Apple's wants a real one.
    #[serde(default)]
    pub push_contact: Option<String>,
    #[serde(default, rename = "webhook")]
    pub webhooks: Vec<Webhook>,
}

fn digest_seconds() -> u64 {
    DIGEST_SECONDS
}

impl NotifyConfig {
    /// The project's file (in `.coordination/`, reached through no link); `None` when there
    /// is none.
    pub fn load(local: &Layout) -> Result<Option<NotifyConfig>, String> {
        let path = local
            .unlinked(local.root().join(FILE))
            .map_err(|e| e.to_string())?;
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        };
        let config = NotifyConfig::parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(Some(config))
    }

    /// The file's text, checked.
    pub fn parse(text: &str) -> Result<NotifyConfig, String> {
        let config: NotifyConfig = toml::from_str(text).map_err(|e| e.to_string())?;
        if config.digest_seconds > 3600 {
            return Err("digest_seconds is at most 3600 (an hour)".into());
        }
        if let Some(contact) = &config.push_contact
            && !(contact.starts_with("mailto:") || contact.starts_with("https://"))
        {
            return Err(format!(
                "push_contact is a mailto: or https: URL, not {contact:?}"
            ));
        }
        if let Some(base) = &config.link_base {
            super::http::Target::parse(base).map_err(|e| format!("link_base: {e}"))?;
        }
        for (i, hook) in config.webhooks.iter().enumerate() {
            super::http::Target::parse(&hook.url).map_err(|e| format!("webhook {}: {e}", i + 1))?;
            if let Some(name) = &hook.secret_env {
                let plain =
                    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                if !plain {
                    return Err(format!(
                        "webhook {}: secret_env names an environment variable ({name:?} is not \
                         one): the secret itself stays out of the file",
                        i + 1
                    ));
                }
            }
        }
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_read_with_its_defaults_and_bad_ones_say_why() {
        let config = NotifyConfig::parse(
            "[[webhook]]\nformat = \"slack\"\nurl = \"https://hooks.slack.com/services/x\"\n",
        )
        .unwrap();
        assert_eq!(config.digest_seconds, DIGEST_SECONDS);
        assert_eq!(config.webhooks[0].events, every_event());
        for (bad, says) in [
            (
                "[[webhook]]\nformat = \"teams\"\nurl = \"http://x\"\n",
                "unknown variant",
            ),
            (
                "[[webhook]]\nformat = \"json\"\nurl = \"ftp://x/y\"\n",
                "http or https",
            ),
            (
                "[[webhook]]\nformat = \"json\"\nurl = \"http://x\"\nsecret_env = \"tok en=1\"\n",
                "names an environment variable",
            ),
            ("digest_seconds = 9999\n", "at most 3600"),
            (
                "[[webhook]]\nformat = \"json\"\nurl = \"http://x\"\ntoken = \"s3cret\"\n",
                "unknown field",
            ),
        ] {
            let err = NotifyConfig::parse(bad).unwrap_err();
            assert!(err.contains(says), "{bad}: {err}");
        }
    }
}
