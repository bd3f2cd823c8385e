//! A push message's body, encrypted for the one browser that subscribed (RFC 8291, on RFC
//! 8188's `aes128gcm` content coding): only that browser can read it, not the push service
//! that carries it. A fresh key pair per message agrees a secret with the browser's key
//! (`p256dh`), mixed with its authentication secret (`auth`); the message is one record.
//! Built on `ring` (ECDH P-256, HKDF-SHA-256, AES-128-GCM), which rustls already brings.

use ring::rand::SystemRandom;
use ring::{aead, agreement, hkdf};

/// The record size written in the header; a push message is one record, well under it.
const RECORD_SIZE: u32 = 4096;
/// The most a message may hold: one record, less its tag and delimiter.
pub const MAX_PLAINTEXT: usize = RECORD_SIZE as usize - 16 - 1;

/// Why a message could not be encrypted.
#[derive(Debug, PartialEq, Eq)]
pub struct Refused(pub &'static str);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

/// `plaintext` encrypted for the browser whose public key is `p256dh` (65 bytes,
/// uncompressed) and authentication secret is `auth` (16 bytes): the body of a push
/// request, sent with `Content-Encoding: aes128gcm`.
pub fn encrypt(p256dh: &[u8], auth: &[u8], plaintext: &[u8]) -> Result<Vec<u8>, Refused> {
    if p256dh.len() != 65 || p256dh[0] != 4 {
        return Err(Refused(
            "the subscription's p256dh is not an uncompressed P-256 key",
        ));
    }
    if auth.len() != 16 {
        return Err(Refused("the subscription's auth secret is not 16 bytes"));
    }
    if plaintext.len() > MAX_PLAINTEXT {
        return Err(Refused("the message is too long for one push"));
    }
    let rng = SystemRandom::new();
    let ours = agreement::EphemeralPrivateKey::generate(&agreement::ECDH_P256, &rng)
        .map_err(|_| Refused("cannot make a key pair"))?;
    let our_public = ours
        .compute_public_key()
        .map_err(|_| Refused("cannot make a key pair"))?;
    let theirs = agreement::UnparsedPublicKey::new(&agreement::ECDH_P256, p256dh);
    let shared = agreement::agree_ephemeral(ours, &theirs, |secret| secret.to_vec())
        .map_err(|_| Refused("the subscription's p256dh is not a point on P-256"))?;
    // RFC 8291 §3.4: the input keying material, from the shared secret and `auth`, bound to
    // both public keys.
    let mut key_info = b"WebPush: info\0".to_vec();
    key_info.extend_from_slice(p256dh);
    key_info.extend_from_slice(our_public.as_ref());
    let ikm = expand(
        &hkdf::Salt::new(hkdf::HKDF_SHA256, auth).extract(&shared),
        &key_info,
        32,
    );
    let salt: [u8; 16] =
        baton_fs::random_bytes().map_err(|_| Refused("cannot read /dev/urandom"))?;
    Ok(seal(&ikm, &salt, our_public.as_ref(), plaintext))
}

/// RFC 8188's `aes128gcm` coding of `plaintext` as one record: the header (salt, record size,
/// key id) and the sealed record, its content key and nonce derived from `ikm` and `salt`.
fn seal(ikm: &[u8], salt: &[u8; 16], key_id: &[u8], plaintext: &[u8]) -> Vec<u8> {
    let prk = hkdf::Salt::new(hkdf::HKDF_SHA256, salt).extract(ikm);
    let key = expand(&prk, b"Content-Encoding: aes128gcm\0", 16);
    let nonce = expand(&prk, b"Content-Encoding: nonce\0", 12);
    let key = aead::LessSafeKey::new(
        aead::UnboundKey::new(&aead::AES_128_GCM, &key).expect("a 16-byte key"),
    );
    let nonce = aead::Nonce::try_assume_unique_for_key(&nonce).expect("a 12-byte nonce");
    // The last (and only) record ends with its delimiter, 2, and no padding.
    let mut record = plaintext.to_vec();
    record.push(2);
    key.seal_in_place_append_tag(nonce, aead::Aad::empty(), &mut record)
        .expect("a record this size seals");
    let mut body = Vec::with_capacity(16 + 4 + 1 + key_id.len() + record.len());
    body.extend_from_slice(salt);
    body.extend_from_slice(&RECORD_SIZE.to_be_bytes());
    body.push(u8::try_from(key_id.len()).expect("a key id under 256 bytes"));
    body.extend_from_slice(key_id);
    body.extend_from_slice(&record);
    body
}

/// HKDF-Expand of `prk` with `info` to `len` bytes.
fn expand(prk: &hkdf::Prk, info: &[u8], len: usize) -> Vec<u8> {
    struct Len(usize);
    impl hkdf::KeyType for Len {
        fn len(&self) -> usize {
            self.0
        }
    }
    let mut out = vec![0; len];
    prk.expand(&[info], Len(len))
        .and_then(|okm| okm.fill(&mut out))
        .expect("HKDF-SHA-256 gives up to 8160 bytes");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;

    fn decode(text: &str) -> Vec<u8> {
        URL_SAFE_NO_PAD.decode(text).unwrap()
    }

    /// RFC 8188 §3.1: "I am the walrus", one record of size 4096, no key id.
    #[test]
    fn a_record_is_sealed_as_rfc_8188_s_first_example() {
        let salt: [u8; 16] = decode("I1BsxtFttlv3u_Oo94xnmw").try_into().unwrap();
        let body = seal(
            &decode("yqdlZ-tYemfogSmv7Ws5PQ"),
            &salt,
            b"",
            b"I am the walrus",
        );
        assert_eq!(
            URL_SAFE_NO_PAD.encode(body),
            "I1BsxtFttlv3u_Oo94xnmwAAEAAA-NAVub2qFgBEuQKRapoZu-IxkIva3MEB1PD-ly8Thjg"
        );
    }

    #[test]
    fn a_bad_subscription_or_message_is_refused_with_why() {
        let key = {
            let rng = SystemRandom::new();
            let private =
                agreement::EphemeralPrivateKey::generate(&agreement::ECDH_P256, &rng).unwrap();
            private.compute_public_key().unwrap().as_ref().to_vec()
        };
        assert!(
            encrypt(&key[..64], &[0; 16], b"hi")
                .unwrap_err()
                .0
                .contains("p256dh")
        );
        assert!(
            encrypt(&key, &[0; 15], b"hi")
                .unwrap_err()
                .0
                .contains("auth")
        );
        let mut off_curve = key.clone();
        off_curve[64] ^= 1;
        assert!(
            encrypt(&off_curve, &[0; 16], b"hi")
                .unwrap_err()
                .0
                .contains("P-256")
        );
        let long = vec![b'x'; MAX_PLAINTEXT + 1];
        assert!(
            encrypt(&key, &[0; 16], &long)
                .unwrap_err()
                .0
                .contains("too long")
        );
        // Header: salt, record size 4096, a 65-byte key id; then the record and its tag.
        let body = encrypt(&key, &[0; 16], b"hi").unwrap();
        assert_eq!(&body[16..21], &[0, 0, 16, 0, 65]);
        assert_eq!(body.len(), 16 + 4 + 1 + 65 + 2 + 1 + 16);
    }
}
