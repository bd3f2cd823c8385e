//! The server's own key for push (VAPID, RFC 8292): made once per project, kept in
//! `.coordination/serve/push-key.p8` (PKCS#8, mode 0600), its public half given to a browser
//! when it subscribes. Each push carries a token signed with it, so the push service sends the
//! subscription's messages from this server alone.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::rand::SystemRandom;
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};

/// How long a signed token is good for (RFC 8292 allows up to 24 hours).
const TOKEN_LIFETIME: Duration = Duration::from_secs(12 * 3600);

/// The project's push key.
pub struct PushKey {
    pair: EcdsaKeyPair,
    rng: SystemRandom,
}

impl PushKey {
    /// The key in `dir` (`push-key.p8`), made there the first time.
    pub fn load_or_make(dir: &Path) -> Result<PushKey, String> {
        let file = key_file(dir);
        let rng = SystemRandom::new();
        let bytes = match std::fs::read(&file) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let made = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
                    .map_err(|_| "cannot make a push key".to_string())?;
                std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
                // Two servers starting at once: the first key written is the one kept.
                match create_whole(&file, made.as_ref()) {
                    Ok(()) => made.as_ref().to_vec(),
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => std::fs::read(&file)
                        .map_err(|e| format!("cannot read {}: {e}", file.display()))?,
                    Err(e) => return Err(format!("cannot write {}: {e}", file.display())),
                }
            }
            Err(e) => return Err(format!("cannot read {}: {e}", file.display())),
        };
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &bytes, &rng)
            .map_err(|_| {
                format!(
                    "{} is not a P-256 key; remove it to make a new one (browsers subscribed \
                     with the old one subscribe again)",
                    file.display()
                )
            })?;
        Ok(PushKey { pair, rng })
    }

    /// The public key (uncompressed P-256, base64url): a browser's `applicationServerKey`.
    pub fn public(&self) -> String {
        URL_SAFE_NO_PAD.encode(self.pair.public_key().as_ref())
    }

    /// The `Authorization` header for a push to `endpoint`'s origin (`https://host[:port]`),
    /// naming `contact` (a `mailto:` or `https:` URL) as the sender to reach.
    pub fn authorization(&self, origin: &str, contact: &str) -> Result<String, String> {
        let expires = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .saturating_add(TOKEN_LIFETIME)
            .as_secs();
        let header = URL_SAFE_NO_PAD.encode(br#"{"typ":"JWT","alg":"ES256"}"#);
        let claims = serde_json::json!({"aud": origin, "exp": expires, "sub": contact});
        let claims = URL_SAFE_NO_PAD.encode(claims.to_string());
        let signed = format!("{header}.{claims}");
        let signature = self
            .pair
            .sign(&self.rng, signed.as_bytes())
            .map_err(|_| "cannot sign the push token".to_string())?;
        let token = format!("{signed}.{}", URL_SAFE_NO_PAD.encode(signature.as_ref()));
        Ok(format!("vapid t={token}, k={}", self.public()))
    }
}

fn key_file(dir: &Path) -> PathBuf {
    dir.join("push-key.p8")
}

/// Writes `bytes` to `file` (mode 0600) unless it exists, whole or not at all: written beside
/// it, then linked to its name, which fails if another got there first.
fn create_whole(file: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let beside = file.with_extension(format!("p8.{}", std::process::id()));
    baton_fs::write_atomic_private(&beside, bytes).map_err(std::io::Error::other)?;
    let linked = std::fs::hard_link(&beside, file);
    let _ = std::fs::remove_file(&beside);
    linked
}

#[cfg(test)]
mod tests {
    use super::*;
    use ring::signature::{ECDSA_P256_SHA256_FIXED, UnparsedPublicKey};

    #[test]
    fn the_key_is_made_once_and_signs_tokens_its_public_half_verifies() {
        let dir = tempfile::tempdir().unwrap();
        let key = PushKey::load_or_make(dir.path()).unwrap();
        let again = PushKey::load_or_make(dir.path()).unwrap();
        assert_eq!(key.public(), again.public());
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(key_file(dir.path()))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);

        let header = key
            .authorization("https://push.example.net", "mailto:lead@example.com")
            .unwrap();
        let (token, public) = header
            .strip_prefix("vapid t=")
            .and_then(|rest| rest.split_once(", k="))
            .unwrap();
        assert_eq!(public, key.public());
        let parts: Vec<&str> = token.split('.').collect();
        let claims: serde_json::Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[1]).unwrap()).unwrap();
        assert_eq!(claims["aud"], "https://push.example.net");
        assert_eq!(claims["sub"], "mailto:lead@example.com");
        let public = URL_SAFE_NO_PAD.decode(public).unwrap();
        let signed = format!("{}.{}", parts[0], parts[1]);
        UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, public)
            .verify(
                signed.as_bytes(),
                &URL_SAFE_NO_PAD.decode(parts[2]).unwrap(),
            )
            .expect("the signature verifies");

        std::fs::write(key_file(dir.path()), b"not a key").unwrap();
        let err = PushKey::load_or_make(dir.path()).err().unwrap();
        assert!(err.contains("not a P-256 key"), "{err}");
    }
}
