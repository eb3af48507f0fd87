//! `Idempotency-Key` over HTTP: the header read and checked, and the header
//! that marks a replayed answer. What a key means — one request per key for
//! 24 hours, its typed answer stored and given again — is the parse call's
//! (`call/idempotency.rs`), the same for every door.

use axum::http::HeaderMap;

use super::envelope::ApiError;
pub use mediaparse_call::idempotency::{MAX_KEY_BYTES, fingerprint, validate};

pub const HEADER: &str = "idempotency-key";
/// Set on an answer given again for a repeated key.
pub const REPLAYED_HEADER: &str = "idempotent-replayed";

/// The request's `Idempotency-Key` header, if any (checked).
pub fn from_headers(headers: &HeaderMap) -> Result<Option<String>, ApiError> {
    match headers.get(HEADER) {
        None => Ok(None),
        Some(v) => match v.to_str() {
            Ok(s) => validate(s).map(Some),
            Err(_) => Err(ApiError::invalid_request(
                "Idempotency-Key must be visible ASCII",
            )),
        },
    }
}
