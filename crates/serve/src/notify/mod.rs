//! What the lead is told of ([`told`]: each question, approval and plan that waits for them,
//! and each team run that ends) and the webhooks `.coordination/notify.toml` names that tell
//! them (ntfy, Slack, Discord, or JSON for a script, [`webhook`]), each message with a deep
//! link into the served UI. [`crate::tell`] follows the feed and hands what it finds here and
//! to the phones' pushes.

pub mod config;
pub mod http;
pub mod told;
pub mod webhook;

pub use config::{Event, Format, NotifyConfig, Webhook};
pub use told::{Asked, asked_in};
pub use webhook::message;

/// Sends each webhook its message for `asked`, each on its own (a slow one delays no other);
/// what fails is said on the server's standard error.
pub fn deliver(config: &NotifyConfig, asked: &[Asked], base: &str) {
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
