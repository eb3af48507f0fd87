//! Standard Webhooks signatures: `webhook-signature: v1,<base64>` where the
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
