//! Random identifiers for keys and requests.

use rand::RngCore;

/// A short random identifier with a readable prefix (`key_3f9a…`, `req_…`).
pub fn new_id(prefix: &str) -> String {
    let mut bytes = [0u8; 6];
    rand::rng().fill_bytes(&mut bytes);
    format!("{prefix}_{}", hex::encode(bytes))
}
