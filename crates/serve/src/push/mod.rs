//! Pushed when the page is closed (Web Push): a paired browser subscribes through the push
//! service its vendor runs, and `baton serve` sends what waits for the lead (each question,
//! approval and plan, and a team's end) to that service, encrypted for that browser alone
//! ([`ece`]) and signed with the project's key ([`vapid`]). The browser's service worker
//! (`ui/public/sw.js`) shows it, and a tap opens its deep link. A device's subscription is
//! kept with the device ([`crate::devices`]): revoked, it hears nothing more.

pub mod ece;
pub mod vapid;

use std::net::IpAddr;
use std::sync::Arc;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use baton_api::Error;
use baton_core::ErrorKind;
use serde::Serialize;

use crate::devices::{Devices, Scope, Subscription};
use crate::notify::http::{self, Target};
use crate::notify::told::Summary;

/// How long a push service keeps a message for a phone that is off (seconds).
const KEEP_FOR: u32 = 24 * 3600;
/// The longest endpoint taken (push services' are a few hundred characters).
const MAX_ENDPOINT: usize = 2048;
/// Who the push service may write to about this server's pushes, unless `notify.toml` names
/// someone (`push_contact`).
pub const DEFAULT_CONTACT: &str = "mailto:baton@localhost";

/// Refuses a subscription no browser would give: an endpoint that is not HTTPS, keys of the
/// wrong size or off the curve. Plain HTTP is taken on this machine's loopback alone, for a push
/// service run here, and from the lead's device alone: a responder cannot make the server post
/// to a port of this machine.
pub fn check(subscription: &Subscription, scope: Scope) -> Result<(), Error> {
    let bad = |why: String| Error::new(ErrorKind::InvalidArguments, why);
    if subscription.endpoint.len() > MAX_ENDPOINT {
        return Err(bad(format!(
            "a push endpoint is at most {MAX_ENDPOINT} characters"
        )));
    }
    let target = Target::parse(&subscription.endpoint).map_err(&bad)?;
    let local_for_the_lead = loopback(&target.host) && scope == Scope::Lead;
    if !(target.tls || local_for_the_lead) {
        return Err(bad(format!(
            "a push endpoint is an https URL (plain http only on this machine's loopback, from \
             the lead's device), not {:?}",
            subscription.endpoint
        )));
    }
    let (p256dh, auth) = key_bytes(subscription)?;
    ece::encrypt(&p256dh, &auth, b"").map_err(|e| bad(e.to_string()))?;
    Ok(())
}

fn key_bytes(subscription: &Subscription) -> Result<(Vec<u8>, Vec<u8>), Error> {
    let decode = |name: &str, text: &str| {
        URL_SAFE_NO_PAD
            .decode(text.trim_end_matches('='))
            .map_err(|_| {
                Error::new(
                    ErrorKind::InvalidArguments,
                    format!("the subscription's {name} is not base64url"),
                )
            })
    };
    Ok((
        decode("p256dh", &subscription.keys.p256dh)?,
        decode("auth", &subscription.keys.auth)?,
    ))
}

/// The served page's push commands for `device`: `key` (the key to subscribe with, and whether
/// this device is subscribed), `subscribe` (`{"subscription": …}`, as the browser gave it) and
/// `unsubscribe`.
pub fn command(
    pusher: Option<&Pusher>,
    devices: &Devices,
    device: &crate::devices::Device,
    asked: &str,
    request: serde_json::Value,
) -> Result<serde_json::Value, Error> {
    let Some(pusher) = pusher else {
        return Err(Error::new(
            ErrorKind::Io,
            "this server cannot push: its key could not be made (its standard error says why)",
        ));
    };
    match asked {
        "key" => Ok(serde_json::json!({
            "key": pusher.public_key(),
            "subscribed": device.push.is_some(),
        })),
        "subscribe" => {
            let subscription: Subscription =
                serde_json::from_value(request["subscription"].clone()).map_err(|e| {
                    Error::new(
                        ErrorKind::InvalidArguments,
                        format!("\"subscription\" is not a push subscription: {e}"),
                    )
                })?;
            check(&subscription, device.scope)?;
            devices.subscribe(&device.id, subscription)?;
            Ok(serde_json::json!({"subscribed": true}))
        }
        "unsubscribe" => {
            devices.unsubscribe(&device.id, None)?;
            Ok(serde_json::json!({"subscribed": false}))
        }
        other => Err(Error::new(
            ErrorKind::UnknownTool,
            format!("no push command {other:?} (push_key, push_subscribe, push_unsubscribe)"),
        )),
    }
}

fn loopback(host: &str) -> bool {
    host == "localhost" || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// What a push says: what the service worker shows, and where a tap leads.
#[derive(Debug, Serialize)]
struct Payload<'a> {
    title: &'a str,
    body: &'a str,
    url: &'a str,
    /// One notification per thing: a later push about it replaces the earlier.
    tag: &'a str,
}

/// Sends pushes to every subscribed device of a project.
pub struct Pusher {
    key: vapid::PushKey,
    devices: Devices,
    contact: String,
}

impl Pusher {
    pub fn new(key: vapid::PushKey, devices: Devices, contact: Option<String>) -> Pusher {
        Pusher {
            key,
            devices,
            contact: contact.unwrap_or_else(|| DEFAULT_CONTACT.to_string()),
        }
    }

    /// The key a browser subscribes with (`applicationServerKey`).
    pub fn public_key(&self) -> String {
        self.key.public()
    }

    /// Pushes `said` to every subscribed device, each on its own task (a slow service holds
    /// up no other); `urgent` asks the service to wake the phone at once. A subscription the
    /// service says is gone (404, 410) is dropped; other failures are said on standard error.
    pub fn send(self: &Arc<Self>, said: &Summary, urgent: bool) {
        let subscribed = match self.devices.subscriptions() {
            Ok(subscribed) => subscribed,
            Err(e) => {
                eprintln!("baton serve: cannot read the push subscriptions: {e}");
                return;
            }
        };
        let tag = match said.event {
            "digest" => "digest".to_string(),
            _ => said
                .link
                .rsplit(['#', '/'])
                .next()
                .unwrap_or("baton")
                .to_string(),
        };
        let payload = Payload {
            title: &said.title,
            body: &said.text,
            url: &said.link,
            tag: &tag,
        };
        let payload = serde_json::to_vec(&payload).expect("the payload serialises");
        for (device, subscription) in subscribed {
            let pusher = self.clone();
            let payload = payload.clone();
            tokio::spawn(async move {
                if let Err(e) = pusher.push(&device, &subscription, &payload, urgent).await {
                    eprintln!("baton serve: the push to device {device} failed: {e}");
                }
            });
        }
    }

    async fn push(
        &self,
        device: &str,
        subscription: &Subscription,
        payload: &[u8],
        urgent: bool,
    ) -> Result<(), String> {
        let target = Target::parse(&subscription.endpoint)?;
        let (p256dh, auth) = key_bytes(subscription).map_err(|e| e.to_string())?;
        let body = ece::encrypt(&p256dh, &auth, payload).map_err(|e| e.to_string())?;
        let headers = vec![
            (
                "authorization".to_string(),
                self.key.authorization(&target.origin(), &self.contact)?,
            ),
            ("content-encoding".into(), "aes128gcm".into()),
            ("content-type".into(), "application/octet-stream".into()),
            ("ttl".into(), KEEP_FOR.to_string()),
            (
                "urgency".into(),
                if urgent { "high" } else { "normal" }.into(),
            ),
        ];
        match http::post(&target, &headers, body).await? {
            status if status < 300 => Ok(()),
            404 | 410 => {
                // The browser unsubscribed, or the service forgot it: it will not come back.
                let _ = self
                    .devices
                    .unsubscribe(device, Some(&subscription.endpoint));
                Err(format!(
                    "the push service at {} no longer knows the subscription; dropped",
                    target.host
                ))
            }
            status => Err(format!(
                "the push service at {} answered {status}",
                target.host
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::devices::SubscriptionKeys;

    fn browser_key() -> String {
        use ring::agreement;
        let rng = ring::rand::SystemRandom::new();
        let private =
            agreement::EphemeralPrivateKey::generate(&agreement::ECDH_P256, &rng).unwrap();
        URL_SAFE_NO_PAD.encode(private.compute_public_key().unwrap().as_ref())
    }

    fn subscription(endpoint: &str, p256dh: &str, auth: &str) -> Subscription {
        Subscription {
            endpoint: endpoint.into(),
            keys: SubscriptionKeys {
                p256dh: p256dh.into(),
                auth: auth.into(),
            },
        }
    }

    #[test]
    fn a_subscription_is_checked_as_a_browser_would_make_it() {
        let key = browser_key();
        let auth = URL_SAFE_NO_PAD.encode([7u8; 16]);
        for good in [
            "https://fcm.googleapis.com/fcm/send/abc",
            "http://127.0.0.1:9999/push/1",
            "http://[::1]:80/p",
        ] {
            check(&subscription(good, &key, &auth), Scope::Lead).unwrap();
        }
        // A responder reaches push services on the web only.
        check(
            &subscription("https://push.example/x", &key, &auth),
            Scope::Responder,
        )
        .unwrap();
        let loopback = check(
            &subscription("http://127.0.0.1:9999/push/1", &key, &auth),
            Scope::Responder,
        );
        assert!(
            loopback
                .unwrap_err()
                .to_string()
                .contains("from the lead's device")
        );
        for (endpoint, p256dh, auth, says) in [
            (
                "http://push.example/x",
                key.as_str(),
                auth.as_str(),
                "https URL",
            ),
            ("ftp://x/y", &key, &auth, "http or https"),
            (
                "https://x/y",
                "not base64!",
                &auth,
                "p256dh is not base64url",
            ),
            ("https://x/y", &key, "AAAA", "auth secret"),
            ("https://x/y", &key[..40], &auth, "p256dh"),
        ] {
            let err = check(&subscription(endpoint, p256dh, auth), Scope::Lead).unwrap_err();
            let said = err.to_string();
            assert!(said.contains(says), "{endpoint}: {said}");
        }
        let long = format!("https://x/{}", "a".repeat(MAX_ENDPOINT));
        assert!(check(&subscription(&long, &key, &auth), Scope::Lead).is_err());
    }
}
