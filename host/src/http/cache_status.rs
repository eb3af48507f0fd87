//! The parse cache on the wire: a request's `Cache-Control: no-cache` (or
//! `no-store`) bypasses it, and every successful parse answers
//! `Cache-Status` (RFC 9211) saying whether it was served from the cache.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderValue, header};
use axum::response::Response;

use crate::parse::CacheUse;
use crate::parse::cache::CacheOutcome;

pub const CACHE_STATUS: &str = "cache-status";

/// Whether the request lets the parse cache answer.
pub struct RequestCache(pub CacheUse);

impl<S: Send + Sync> FromRequestParts<S> for RequestCache {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        let bypass = parts
            .headers
            .get_all(header::CACHE_CONTROL)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .map(|d| d.trim().to_ascii_lowercase())
            .any(|d| d == "no-cache" || d == "no-store");
        Ok(RequestCache(if bypass {
            CacheUse::Bypass
        } else {
            CacheUse::Allowed
        }))
    }
}

/// Add `Cache-Status` to a parse's answer.
pub fn set(response: &mut Response, outcome: CacheOutcome) {
    response
        .headers_mut()
        .insert(CACHE_STATUS, HeaderValue::from_static(outcome.header()));
}
