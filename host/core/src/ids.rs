//! Random identifiers for keys and requests.

use rand::RngCore;

/// A short random identifier with a readable prefix (`key_3f9a…`, `req_…`).
pub fn new_id(prefix: &str) -> String {
    let mut bytes = [0u8; 6];
    rand::rng().fill_bytes(&mut bytes);
    format!("{prefix}_{}", hex::encode(bytes))
}

/// A request id unique enough to key the ledger (`req_` + 128 random bits):
/// ledger request ids are unique in the database.
pub fn new_request_id() -> String {
    let mut bytes = [0u8; 16];
    rand::rng().fill_bytes(&mut bytes);
    format!("req_{}", hex::encode(bytes))
}
