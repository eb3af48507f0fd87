//! Standard Webhooks signatures, shared by the health alerts and the
//! webhook deliveries: `webhook-signature: v1,<base64>` where the
//! base64 is HMAC-SHA256, keyed with the secret's bytes, of
//! `<webhook-id>.<webhook-timestamp>.<body>`.

use base64::Engine as _;
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The `webhook-signature` value of `body` sent as message `id` at `timestamp` (Unix seconds).
pub fn sign(key: &[u8], id: &str, timestamp: i64, body: &[u8]) -> String {
    let mut mac = match Hmac::<Sha256>::new_from_slice(key) {
        Ok(mac) => mac,
        // HMAC takes a key of any length.
        Err(_) => return String::new(),
    };
    mac.update(id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    let tag = mac.finalize().into_bytes();
    format!(
        "v1,{}",
        base64::engine::general_purpose::STANDARD.encode(tag)
    )
}

/// Whether one of the space-separated signatures in `header` is `body`'s
/// (what a receiver checks; compared in constant time).
pub fn verify(key: &[u8], id: &str, timestamp: i64, body: &[u8], header: &str) -> bool {
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(key) else {
        return false;
    };
    mac.update(format!("{id}.{timestamp}.").as_bytes());
    mac.update(body);
    header
        .split(' ')
        .filter_map(|s| s.strip_prefix("v1,"))
        .filter_map(|c| base64::engine::general_purpose::STANDARD.decode(c).ok())
        .any(|c| mac.clone().verify_slice(&c).is_ok())
}

/// Standard Webhooks: a secret is `whsec_` and the base64 of its key.
pub const SECRET_PREFIX: &str = "whsec_";

/// Bytes of key in a secret this service mints.
const MINTED_KEY_BYTES: usize = 32;

/// A new random secret, `whsec_<base64 of 32 bytes>`.
pub fn mint_secret() -> String {
    use rand::RngCore;
    let mut key = [0u8; MINTED_KEY_BYTES];
    rand::rng().fill_bytes(&mut key);
    format!(
        "{SECRET_PREFIX}{}",
        base64::engine::general_purpose::STANDARD.encode(key)
    )
}

/// Why a secret is not a `whsec_` secret (never quoting it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SecretError {
    #[error("must start with whsec_")]
    Prefix,
    #[error("not base64 after whsec_")]
    Base64,
    #[error("must hold 16 to 64 bytes")]
    Length,
}

/// The HMAC key of a `whsec_…` secret (16 to 64 bytes).
pub fn secret_key(secret: &str) -> Result<Vec<u8>, SecretError> {
    let encoded = secret
        .strip_prefix(SECRET_PREFIX)
        .ok_or(SecretError::Prefix)?;
    let key = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .map_err(|_| SecretError::Base64)?;
    if !(16..=64).contains(&key.len()) {
        return Err(SecretError::Length);
    }
    Ok(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_minted_secret_signs_and_verifies_and_another_does_not() {
        let (a, b) = (mint_secret(), mint_secret());
        assert_ne!(a, b);
        let (ka, kb) = (secret_key(&a).unwrap(), secret_key(&b).unwrap());
        assert_eq!(ka.len(), MINTED_KEY_BYTES);
        let sig = sign(&ka, "msg_1", 1_700_000_000, b"{}");
        assert!(verify(&ka, "msg_1", 1_700_000_000, b"{}", &sig));
        assert!(!verify(&kb, "msg_1", 1_700_000_000, b"{}", &sig));
        assert!(!verify(&ka, "msg_1", 1_700_000_001, b"{}", &sig));
    }

    #[test]
    fn malformed_secrets_are_refused() {
        assert_eq!(secret_key("abc"), Err(SecretError::Prefix));
        assert_eq!(secret_key("whsec_!!"), Err(SecretError::Base64));
        assert_eq!(secret_key("whsec_AAAA"), Err(SecretError::Length));
    }
}
