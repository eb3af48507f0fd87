//! The `RateLimit-Policy` and `RateLimit` headers (IETF
//! draft-ietf-httpapi-ratelimit-headers, structured-field lists): every
//! answer to a request counted against its key's limit says the limit and
//! what is left of it, the `429` included (`r=0`, `t` = its `Retry-After`).
//! A key whose limit is off is not counted and gets neither header.
//!
//! The limit is checked in an extractor and the answer is built later (or by
//! a later extractor's rejection), so [`layer`] puts an empty [`RateSlot`] in
//! the request, [`check`] fills it, and [`layer`] writes the headers on
//! whatever answer comes back.

use std::sync::{Arc, Mutex};

use axum::extract::Request;
use axum::http::{HeaderName, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;

use super::envelope::ApiError;
use mediaparse_auth::ratelimit::{Allowance, RateLimits, RateRefused, WINDOW_SECS};
use mediaparse_store::KeyRecord;

pub const POLICY_HEADER: HeaderName = HeaderName::from_static("ratelimit-policy");
pub const STATUS_HEADER: HeaderName = HeaderName::from_static("ratelimit");

/// Where a request's key stands, once its limit was checked.
#[derive(Clone, Default)]
pub struct RateSlot(Arc<Mutex<Option<Allowance>>>);

impl RateSlot {
    fn put(&self, allowance: Allowance) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(allowance);
    }

    fn take(&self) -> Option<Allowance> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

/// Give the request a [`RateSlot`], and its answer the headers of what
/// was put there.
pub async fn layer(mut request: Request, next: Next) -> Response {
    let slot = RateSlot::default();
    request.extensions_mut().insert(slot.clone());
    let mut response = next.run(request).await;
    if let Some(allowance) = slot.take() {
        let headers = response.headers_mut();
        for (name, value) in [
            (POLICY_HEADER, policy_value(&allowance)),
            (STATUS_HEADER, status_value(&allowance)),
        ] {
            if let Ok(value) = HeaderValue::from_str(&value) {
                headers.insert(name, value);
            }
        }
    }
    response
}

/// Count one request of `key` in `limits` and note where it stands for the
/// answer's headers; over the limit → `429` with `Retry-After`.
pub async fn check(
    limits: &RateLimits,
    key: &KeyRecord,
    config_default: Option<u32>,
    slot: Option<&RateSlot>,
) -> Result<(), ApiError> {
    check_n(limits, key, config_default, slot, std::num::NonZeroU32::MIN).await
}

/// [`check`] of `n` requests at once (a batch's items): all counted, or a
/// `429` before any runs.
pub async fn check_n(
    limits: &RateLimits,
    key: &KeyRecord,
    config_default: Option<u32>,
    slot: Option<&RateSlot>,
    n: std::num::NonZeroU32,
) -> Result<(), ApiError> {
    let checked = limits.check_n(key, config_default, n).await;
    let allowance = match &checked {
        Ok(allowance) => *allowance,
        Err(RateRefused::Limited(limited)) => Some(limited.allowance()),
        Err(RateRefused::Unavailable(_)) => None,
    };
    if let (Some(allowance), Some(slot)) = (allowance, slot) {
        slot.put(allowance);
    }
    checked.map(|_| ()).map_err(ApiError::from)
}

/// `RateLimit-Policy`: the policy's name, its quota `q` and window `w` (s).
pub fn policy_value(a: &Allowance) -> String {
    format!("\"{}\";q={};w={}", a.policy, a.limit, WINDOW_SECS)
}

/// `RateLimit`: the policy's name, the requests left `r` and the seconds
/// `t` until the quota is whole again.
pub fn status_value(a: &Allowance) -> String {
    format!("\"{}\";r={};t={}", a.policy, a.remaining, a.reset_secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_are_structured_field_lists_of_one_named_policy() {
        let a = Allowance {
            policy: "parse",
            limit: 60,
            remaining: 42,
            reset_secs: 17,
        };
        assert_eq!(policy_value(&a), r#""parse";q=60;w=60"#);
        assert_eq!(status_value(&a), r#""parse";r=42;t=17"#);
        let refused = Allowance {
            remaining: 0,
            reset_secs: 3,
            ..a
        };
        assert_eq!(status_value(&refused), r#""parse";r=0;t=3"#);
    }
}
