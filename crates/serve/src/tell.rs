//! Told when no page is open: while `baton serve` runs, what waits for the lead (each
//! question, approval and plan) and each team run that ends is pushed to the paired browsers
//! that asked for it ([`crate::push`]) and sent to the webhooks `notify.toml` names
//! ([`crate::notify`]). Quiet by default, loud when it matters: questions that come within
//! `digest_seconds` of the first go as one message; an approval, a plan or a team's end goes
//! at once.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::broadcast;

use crate::notify::{self, Asked, NotifyConfig, asked_in, told};
use crate::push::Pusher;

/// Follows the server's feed (`events`) and tells the webhooks of `config` and the devices
/// `pusher` reaches of what waits for the lead, linking under `base`. Runs on the server's
/// runtime until the feed ends.
pub fn start(
    config: Option<NotifyConfig>,
    pusher: Option<Arc<Pusher>>,
    events: &broadcast::Sender<Arc<str>>,
    base: String,
) {
    if config.is_none() && pusher.is_none() {
        return;
    }
    let mut feed = events.subscribe();
    let window = Duration::from_secs(
        config
            .as_ref()
            .map_or(notify::config::DIGEST_SECONDS, |c| c.digest_seconds),
    );
    let tell = Tell {
        config,
        pusher,
        base,
    };
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
                            if !asked.urgent() && !window.is_zero() {
                                waiting.push(asked);
                                due.get_or_insert_with(|| tokio::time::Instant::now() + window);
                            } else {
                                tell.deliver(&[asked]);
                            }
                        }
                    }
                    Err(broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(broadcast::error::RecvError::Closed) => break,
                },
                () = digest_due => {
                    due = None;
                    tell.deliver(&std::mem::take(&mut waiting));
                }
            }
        }
    });
}

/// Who is told, and where links lead.
struct Tell {
    config: Option<NotifyConfig>,
    pusher: Option<Arc<Pusher>>,
    base: String,
}

impl Tell {
    fn deliver(&self, asked: &[Asked]) {
        if let Some(pusher) = &self.pusher {
            let all: Vec<&Asked> = asked.iter().collect();
            if let Some(said) = told::summary(&all, &self.base) {
                pusher.send(&said, asked.iter().any(Asked::urgent));
            }
        }
        if let Some(config) = &self.config {
            notify::deliver(config, asked, &self.base);
        }
    }
}
