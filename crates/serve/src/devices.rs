//! The browsers paired with `baton serve` on this machine, and the pairing codes not yet used:
//! `.coordination/serve/devices.json` (mode 0600), read again on every request so that a
//! device revoked by `baton serve revoke` is refused at its next one.
//!
//! A device is known by the SHA-256 of its token, never the token itself: the token lives only
//! in its browser's cookie. A pairing code is known the same way; it pairs one browser, as the
//! scope it was made for, within [`CODE_LIFETIME`]. Codes are short enough to read out (ten
//! letters and digits, 50 bits) because guessing is rate-limited ([`crate::guard`]).

use std::path::PathBuf;
use std::time::Duration;

use baton_api::Error;
use baton_core::{ErrorKind, Layout, Timestamp};
use baton_fs::FileLock;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// How long a pairing link can be used.
pub const CODE_LIFETIME: Duration = Duration::from_secs(10 * 60);
/// The letters a pairing code is made of: Crockford's base 32 (no I, L, O or U to misread).
const CODE_ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const CODE_LENGTH: usize = 10;

/// What a paired device may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// Everything the desktop can do.
    Lead,
    /// Answer questions, decide approvals (not "always allow"), comment on and request changes
    /// to a review, stop an agent, send and read messages; and read everything.
    Responder,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Lead => "lead",
            Scope::Responder => "responder",
        }
    }

    pub fn parse(text: &str) -> Result<Scope, Error> {
        match text {
            "lead" => Ok(Scope::Lead),
            "responder" => Ok(Scope::Responder),
            other => Err(Error::new(
                ErrorKind::InvalidArguments,
                format!("a device is paired as lead or responder, not {other:?}"),
            )),
        }
    }
}

/// A browser's push subscription, as its `PushSubscription.toJSON()` gives it.
/// Kept with its device: revoked, it goes too ([`crate::push`] sends to it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Subscription {
    /// The push service's URL for this browser.
    pub endpoint: String,
    pub keys: SubscriptionKeys,
}

/// Kept with its device: revoked, it goes too ([`crate::push`] sends to it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubscriptionKeys {
    /// The browser's public key (uncompressed P-256, base64url).
    pub p256dh: String,
    /// The browser's authentication secret (16 bytes, base64url).
    pub auth: String,
}

/// A paired browser.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Device {
    /// `d-1`, `d-2`, … in pairing order; never reused.
    pub id: String,
    /// What the browser said it is (its user agent, shortened), for `baton serve devices`.
    pub name: String,
    pub scope: Scope,
    pub paired_at: Timestamp,
    /// SHA-256 of its token, hex.
    #[serde(rename = "token_sha256")]
    token_hash: String,
    /// Where its pushes go, once it asked for them ([`crate::push`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub push: Option<Subscription>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Code {
    code_sha256: String,
    scope: Scope,
    expires_at: Timestamp,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Registry {
    #[serde(default)]
    devices: Vec<Device>,
    #[serde(default)]
    codes: Vec<Code>,
    #[serde(default)]
    paired: u64,
}

/// This machine's paired devices for one project.
#[derive(Debug, Clone)]
pub struct Devices {
    file: PathBuf,
    lock: PathBuf,
}

impl Devices {
    pub fn of(layout: &Layout) -> Devices {
        let dir = layout.root().join("serve");
        Devices {
            file: dir.join("devices.json"),
            lock: dir.join("devices.lock"),
        }
    }

    /// A new pairing code for one browser as `scope`, usable for [`CODE_LIFETIME`].
    pub fn new_code(&self, scope: Scope) -> Result<String, Error> {
        let code = random_code()?;
        self.change(|registry, now| {
            registry.codes.retain(|c| c.expires_at > now);
            registry.codes.push(Code {
                code_sha256: digest(&code),
                scope,
                expires_at: now.after(CODE_LIFETIME),
            });
            Ok(())
        })?;
        Ok(code)
    }

    /// Pairs the browser that brought `code` (named `name`): the device and its token. The
    /// code is used up either way it is found; an unknown or expired one is refused.
    pub fn pair(&self, code: &str, name: &str) -> Result<(Device, String), Error> {
        let wanted = digest(&normalise_code(code));
        let token = baton_fs::random_hex::<32>().map_err(random_error)?;
        self.change(|registry, now| {
            registry.codes.retain(|c| c.expires_at > now);
            let Some(at) = live_code(&registry.codes, &wanted, now) else {
                return Err(unknown_code());
            };
            let code = registry.codes.remove(at);
            registry.paired += 1;
            let device = Device {
                id: format!("d-{}", registry.paired),
                name: device_name(name),
                scope: code.scope,
                paired_at: now,
                token_hash: digest(&token),
                push: None,
            };
            registry.devices.push(device.clone());
            Ok((device, token.clone()))
        })
    }

    /// What a pairing code, not yet used and not expired, would pair a browser as (without
    /// using it up); `None` for any other code.
    pub fn scope_of_code(&self, code: &str) -> Option<Scope> {
        let wanted = digest(&normalise_code(code));
        let codes = self.read().ok()?.codes;
        live_code(&codes, &wanted, Timestamp::now()).map(|at| codes[at].scope)
    }

    /// The device whose token this is, if it is paired and not revoked.
    pub fn device_of(&self, token: &str) -> Option<Device> {
        let wanted = digest(token);
        self.read()
            .ok()?
            .devices
            .into_iter()
            .find(|d| constant_time_eq(d.token_hash.as_bytes(), wanted.as_bytes()))
    }

    /// The SHA-256 of every paired device's token: what an open feed checks its own against.
    pub fn token_hashes(&self) -> Vec<String> {
        self.read()
            .map(|r| r.devices.into_iter().map(|d| d.token_hash).collect())
            .unwrap_or_default()
    }

    /// What [`Devices::token_hashes`] holds for `token`.
    pub fn token_hash(token: &str) -> String {
        digest(token)
    }

    pub fn list(&self) -> Result<Vec<Device>, Error> {
        Ok(self.read()?.devices)
    }

    /// Unpairs device `id` at once: its next request is refused.
    pub fn revoke(&self, id: &str) -> Result<Device, Error> {
        self.change(|registry, _| {
            let at = registry
                .devices
                .iter()
                .position(|d| d.id == id)
                .ok_or_else(|| {
                    Error::new(
                        ErrorKind::UnknownDevice,
                        format!("no paired device {id:?}: `baton serve devices` lists them"),
                    )
                })?;
            Ok(registry.devices.remove(at))
        })
    }

    /// Device `id`'s pushes go to `subscription` from now on (its browser's, checked by
    /// [`crate::push::check`]).
    pub fn subscribe(&self, id: &str, subscription: Subscription) -> Result<(), Error> {
        self.change(|registry, _| {
            device_mut(registry, id)?.push = Some(subscription);
            Ok(())
        })
    }

    /// Device `id` gets no more pushes (when `endpoint` is given: unless it subscribed again
    /// elsewhere since). Whether it had a subscription to drop.
    pub fn unsubscribe(&self, id: &str, endpoint: Option<&str>) -> Result<bool, Error> {
        self.change(|registry, _| {
            let device = device_mut(registry, id)?;
            let dropped = device
                .push
                .as_ref()
                .is_some_and(|p| endpoint.is_none_or(|e| e == p.endpoint));
            if dropped {
                device.push = None;
            }
            Ok(dropped)
        })
    }

    /// Every device's subscription, by device id.
    pub fn subscriptions(&self) -> Result<Vec<(String, Subscription)>, Error> {
        Ok(self
            .read()?
            .devices
            .into_iter()
            .filter_map(|d| Some((d.id, d.push?)))
            .collect())
    }

    fn read(&self) -> Result<Registry, Error> {
        match std::fs::read(&self.file) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                Error::new(
                    ErrorKind::CorruptFile,
                    format!(
                        "{} does not parse ({e}); remove it to unpair every device",
                        self.file.display()
                    ),
                )
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Registry::default()),
            Err(e) => Err(io_error(&self.file, e)),
        }
    }

    /// Reads, changes and writes the registry under its lock.
    fn change<T>(
        &self,
        change: impl FnOnce(&mut Registry, Timestamp) -> Result<T, Error>,
    ) -> Result<T, Error> {
        if let Some(dir) = self.file.parent() {
            std::fs::create_dir_all(dir).map_err(|e| io_error(dir, e))?;
        }
        let _held = FileLock::exclusive(&self.lock).map_err(|e| {
            Error::new(
                ErrorKind::Io,
                format!("cannot lock {}: {e}", self.lock.display()),
            )
        })?;
        let mut registry = self.read()?;
        let result = change(&mut registry, Timestamp::now())?;
        let bytes = serde_json::to_vec_pretty(&registry).expect("the registry serialises");
        baton_fs::write_atomic_private(&self.file, &bytes).map_err(|e| {
            Error::new(
                ErrorKind::Io,
                format!("cannot write {}: {e}", self.file.display()),
            )
        })?;
        Ok(result)
    }
}

fn device_mut<'a>(registry: &'a mut Registry, id: &str) -> Result<&'a mut Device, Error> {
    registry
        .devices
        .iter_mut()
        .find(|d| d.id == id)
        .ok_or_else(|| {
            Error::new(
                ErrorKind::UnknownDevice,
                format!("no paired device {id:?}: `baton serve devices` lists them"),
            )
        })
}

fn io_error(path: &std::path::Path, e: std::io::Error) -> Error {
    Error::new(ErrorKind::Io, format!("{}: {e}", path.display()))
}

/// SHA-256 of `text`, hex.
fn digest(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn random_error(e: std::io::Error) -> Error {
    Error::new(ErrorKind::Io, format!("cannot read /dev/urandom: {e}"))
}

fn random_code() -> Result<String, Error> {
    Ok(baton_fs::random_bytes::<CODE_LENGTH>()
        .map_err(random_error)?
        .iter()
        .map(|b| CODE_ALPHABET[usize::from(*b) % CODE_ALPHABET.len()] as char)
        .collect())
}

/// A code as a person may type it: any case, with dashes or spaces, O for 0 and I or L for 1.
fn normalise_code(code: &str) -> String {
    code.chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| match c.to_ascii_uppercase() {
            'O' => '0',
            'I' | 'L' => '1',
            c => c,
        })
        .collect()
}

/// Where among `codes` the one whose digest is `wanted` is, when it has not expired by `now`.
fn live_code(codes: &[Code], wanted: &str, now: Timestamp) -> Option<usize> {
    codes.iter().position(|c| {
        c.expires_at > now && constant_time_eq(c.code_sha256.as_bytes(), wanted.as_bytes())
    })
}

/// The most of a browser's user agent a device's name keeps (characters).
const NAME_CHARS: usize = 80;

/// A device's name from its browser's user agent: whole when short, else cut at the last word
/// that fits, with `…` (it was cut mid-word); control characters dropped.
fn device_name(user_agent: &str) -> String {
    let clean: String = user_agent.chars().filter(|c| !c.is_control()).collect();
    let clean = clean.trim();
    if clean.chars().count() <= NAME_CHARS {
        return clean.to_string();
    }
    let kept: String = clean.chars().take(NAME_CHARS - 1).collect();
    let words = match kept.rfind(' ') {
        Some(at) if at > NAME_CHARS / 2 => &kept[..at],
        _ => kept.as_str(),
    };
    format!("{}…", words.trim_end_matches([' ', ';', '(', ',']))
}

/// The refusal of a pairing code that is unknown, used already or expired.
pub fn unknown_code() -> Error {
    Error::new(
        ErrorKind::PairingRefused,
        "this pairing link is unknown, used already or expired: run `baton serve pair` for a new \
         one",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_user_agent_is_cut_at_a_word_and_said_so() {
        let phone = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36";
        let name = device_name(phone);
        assert_eq!(
            name,
            "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like…"
        );
        assert!(name.chars().count() <= NAME_CHARS, "{name}");
        assert_eq!(device_name("curl/8.5.0"), "curl/8.5.0");
        assert_eq!(device_name("a\u{1b}[31mb"), "a[31mb");
    }

    fn devices() -> (tempfile::TempDir, Devices) {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::for_project(dir.path());
        (dir, Devices::of(&layout))
    }

    #[test]
    fn a_code_pairs_one_browser_as_its_scope_and_is_used_up() {
        let (_dir, devices) = devices();
        let code = devices.new_code(Scope::Responder).unwrap();
        assert_eq!(code.len(), CODE_LENGTH);
        let typed = code.to_lowercase().replace('0', "o");
        let (device, token) = devices.pair(&typed, "Phone").unwrap();
        assert_eq!(device.scope, Scope::Responder);
        assert_eq!(device.id, "d-1");
        assert_eq!(devices.device_of(&token), Some(device));
        let again = devices.pair(&code, "Other").unwrap_err();
        assert_eq!(again.kind(), ErrorKind::PairingRefused);
        assert_eq!(devices.device_of("not-a-token"), None);
    }

    #[test]
    fn the_file_holds_no_token_and_no_code_and_only_its_owner_reads_it() {
        use std::os::unix::fs::PermissionsExt;
        let (dir, devices) = devices();
        let code = devices.new_code(Scope::Lead).unwrap();
        let (_, token) = devices.pair(&code, "Desk").unwrap();
        let file = dir.path().join(".coordination/serve/devices.json");
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(!text.contains(&token) && !text.contains(&code), "{text}");
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "{mode:o}");
    }

    #[test]
    fn a_revoked_device_is_unknown_at_once_and_ids_are_not_reused() {
        let (_dir, devices) = devices();
        let (first, token) = devices
            .pair(&devices.new_code(Scope::Lead).unwrap(), "A")
            .unwrap();
        assert_eq!(devices.revoke(&first.id).unwrap().id, "d-1");
        assert_eq!(devices.device_of(&token), None);
        assert_eq!(
            devices.revoke("d-1").unwrap_err().kind(),
            ErrorKind::UnknownDevice
        );
        let (second, _) = devices
            .pair(&devices.new_code(Scope::Lead).unwrap(), "B")
            .unwrap();
        assert_eq!(second.id, "d-2");
        assert_eq!(devices.list().unwrap().len(), 1);
    }

    #[test]
    fn an_expired_code_is_refused_and_a_corrupt_file_is_said_to_be() {
        let (dir, devices) = devices();
        let code = devices.new_code(Scope::Lead).unwrap();
        devices
            .change(|r, now| {
                r.codes[0].expires_at = now.before(Duration::from_secs(1));
                Ok(())
            })
            .unwrap();
        assert_eq!(
            devices.pair(&code, "Late").unwrap_err().kind(),
            ErrorKind::PairingRefused
        );
        std::fs::write(dir.path().join(".coordination/serve/devices.json"), "{").unwrap();
        let err = devices.list().unwrap_err();
        assert_eq!(err.kind(), ErrorKind::CorruptFile);
        assert!(err.to_string().contains("devices.json"), "{err}");
        assert_eq!(devices.device_of("x"), None);
    }
}
