//! Secrets from the system's random source (`/dev/urandom`): the MCP server's bearer token,
//! `baton serve`'s device tokens and pairing codes.

use std::io::Read;

/// `N` bytes from `/dev/urandom`.
pub fn random_bytes<const N: usize>() -> std::io::Result<[u8; N]> {
    let mut bytes = [0u8; N];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes)
}

/// `N` random bytes as lowercase hex (`2 × N` characters).
pub fn random_hex<const N: usize>() -> std::io::Result<String> {
    Ok(random_bytes::<N>()?
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

#[cfg(test)]
mod tests {
    #[test]
    fn hex_has_two_digits_a_byte_and_differs_between_calls() {
        let (a, b) = (
            super::random_hex::<16>().unwrap(),
            super::random_hex::<16>().unwrap(),
        );
        assert_eq!(a.len(), 32);
        assert!(
            a.bytes()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        );
        assert_ne!(a, b);
    }
}
