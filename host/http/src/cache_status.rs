//! The parse cache on the wire: a request's `Cache-Control: no-cache` (or
//! `no-store`) bypasses it, and every successful parse answers
//! `Cache-Status` (RFC 9211) saying whether it was served from the cache.

use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::Response;

use mediaparse_parse::CacheUse;
use mediaparse_parse::cache::CacheOutcome;

pub const CACHE_STATUS: &str = "cache-status";

/// `Bypass` when the request says `Cache-Control: no-cache` or `no-store`.
pub fn cache_use(headers: &HeaderMap) -> CacheUse {
    let bypass = headers
        .get_all(header::CACHE_CONTROL)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|d| d.trim().to_ascii_lowercase())
        .any(|d| d == "no-cache" || d == "no-store");
    if bypass {
        CacheUse::Bypass
    } else {
        CacheUse::Allowed
    }
}

/// Add `Cache-Status` to a parse's answer.
pub fn set(response: &mut Response, outcome: CacheOutcome) {
    response
        .headers_mut()
        .insert(CACHE_STATUS, HeaderValue::from_static(outcome.header()));
}
