//! Every error the public API answers, by HTTP status and code: the table the
//! document's per-status envelopes are generated from. A unit test maps every
//! `ParseError` / `AuthError` / `Failure` through `ApiError` and checks that
//! the pair it produces is listed here.

use serde_json::{Value, json};

/// One documented error: HTTP status, envelope `code`, when it happens, and
/// which operations can answer it.
pub struct ErrorCode {
    pub status: u16,
    pub code: &'static str,
    pub when: &'static str,
    pub scope: Scope,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Both parse endpoints.
    Parse,
    /// Only the templated platform endpoint (`{platform}` path segment).
    PlatformPath,
}

/// SPEC.md's known errors plus DESIGN.md §9's, as the host produces them.
pub const ERRORS: &[ErrorCode] = &[
    e(
        400,
        "invalid_request",
        "Body not JSON, not an object, an unknown property, `url`/`link` missing, empty, not a string, or both given with different values.",
        Scope::Parse,
    ),
    e(
        400,
        "302",
        "The URL is not a supported single media post (or the platform endpoint's platform differs from the URL's).",
        Scope::Parse,
    ),
    e(
        401,
        "missing_token",
        "Authorization header missing.",
        Scope::Parse,
    ),
    e(401, "invalid_token", "Token invalid.", Scope::Parse),
    e(
        401,
        "token_expired",
        "Token past its expiration date.",
        Scope::Parse,
    ),
    e(
        402,
        "insufficient_credits",
        "The account lacks the credits of a successful parse of this platform (checked before any upstream request).",
        Scope::Parse,
    ),
    e(
        403,
        "platform_not_allowed",
        "The token may not parse this platform.",
        Scope::Parse,
    ),
    e(
        404,
        "unknown_platform",
        "The `{platform}` path segment is not a platform id.",
        Scope::PlatformPath,
    ),
    e(
        404,
        "content_unavailable",
        "The post is private, deleted, region- or age-restricted.",
        Scope::Parse,
    ),
    e(
        413,
        "payload_too_large",
        "Request body larger than 64 KiB.",
        Scope::Parse,
    ),
    e(
        415,
        "unsupported_media_type",
        "Content-Type is not JSON.",
        Scope::Parse,
    ),
    e(
        422,
        "login_required",
        "The platform shows this post only to signed-in users and no operator session is configured.",
        Scope::Parse,
    ),
    e(
        429,
        "rate_limited",
        "The key's own request rate limit is exhausted (`Retry-After` says when to retry); nothing is fetched or charged.",
        Scope::Parse,
    ),
    e(
        500,
        "extractor_failed",
        "The extractor failed on this post (a trap, a sandbox timeout, invalid output).",
        Scope::Parse,
    ),
    e(
        500,
        "internal_error",
        "A bug or a storage failure.",
        Scope::Parse,
    ),
    e(
        502,
        "upstream_error",
        "The platform answered with an error or something unusable.",
        Scope::Parse,
    ),
    e(
        503,
        "upstream_rate_limited",
        "The platform is rate-limiting or challenging the service (`Retry-After` is set).",
        Scope::Parse,
    ),
    e(
        503,
        "extractor_unavailable",
        "No healthy extractor for the platform, or the platform is disabled.",
        Scope::Parse,
    ),
    e(
        504,
        "upstream_timeout",
        "The platform did not answer in time.",
        Scope::Parse,
    ),
];

const fn e(status: u16, code: &'static str, when: &'static str, scope: Scope) -> ErrorCode {
    ErrorCode {
        status,
        code,
        when,
        scope,
    }
}

/// Statuses an operation can answer with an error envelope, in order.
pub fn statuses(templated_platform: bool) -> Vec<u16> {
    let mut out: Vec<u16> = ERRORS
        .iter()
        .filter(|c| templated_platform || c.scope == Scope::Parse)
        .map(|c| c.status)
        .collect();
    out.dedup();
    out
}

/// Schema name of the envelope for a status.
pub fn schema_name(status: u16, templated_platform: bool) -> String {
    if templated_platform && status == 404 {
        "ErrorEnvelope404Platform".into()
    } else {
        format!("ErrorEnvelope{status}")
    }
}

/// The envelope schema for `status`: its codes as an enum, each explained.
pub fn envelope_schema(status: u16, templated_platform: bool) -> Value {
    let codes: Vec<&ErrorCode> = ERRORS
        .iter()
        .filter(|c| c.status == status && (templated_platform || c.scope == Scope::Parse))
        .collect();
    let list: Vec<&str> = codes.iter().map(|c| c.code).collect();
    let explained: Vec<String> = codes
        .iter()
        .map(|c| format!("- `{}`: {}", c.code, c.when))
        .collect();
    json!({
        "type": "object",
        "description": format!("Error envelope for HTTP {status}. No credit is charged.\n\n{}", explained.join("\n")),
        "required": ["status", "data", "msg", "code"],
        "properties": {
            "status": {"type": "integer", "enum": [status], "description": "The HTTP status, mirrored."},
            "data": {"type": "null"},
            "msg": {"type": "string", "minLength": 1, "description": "Short human-readable text."},
            "code": {"type": "string", "enum": list, "description": "Machine-readable error code."},
        },
        "additionalProperties": false,
    })
}

/// `200` with code `304`: the link parsed but no downloadable media came back; nothing charged.
pub fn no_media_schema() -> Value {
    json!({
        "type": "object",
        "description": "The public link parsed but no downloadable media could be returned (for example a text-only Threads post). Nothing is charged.",
        "required": ["status", "data", "msg", "code"],
        "properties": {
            "status": {"type": "integer", "enum": [200]},
            "data": {"type": "null"},
            "msg": {"type": "string", "minLength": 1},
            "code": {"type": "string", "enum": ["304"]},
        },
        "additionalProperties": false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::envelope::ApiError;
    use crate::auth::AuthError;
    use crate::pipeline::ParseError;
    use mediaparse_sdk::Failure;

    fn listed(e: ApiError) {
        let pair = (e.status.as_u16(), e.code);
        assert!(
            ERRORS.iter().any(|c| (c.status, c.code) == pair),
            "{pair:?} is answered by the API but not documented in openapi::errors::ERRORS"
        );
    }

    #[test]
    fn every_error_the_host_maps_is_documented() {
        let failures = [
            Failure::unsupported("x"),
            Failure::unavailable("x"),
            Failure::LoginRequired("x".into()),
            Failure::RateLimited("x".into()),
            Failure::changed("x"),
            Failure::upstream("x"),
        ];
        for f in failures {
            listed(ParseError::Failure(f).into());
        }
        for e in [
            ParseError::Unsupported("x".into()),
            ParseError::InsufficientCredits {
                platform: "tiktok".into(),
                price: 1,
                balance: 0,
            },
            ParseError::ExtractorUnavailable("tiktok".into()),
            ParseError::ExtractorFailed("x".into()),
            ParseError::UpstreamTimeout,
            ParseError::Upstream("x".into()),
            ParseError::Internal("x".into()),
        ] {
            listed(e.into());
        }
        for a in [
            AuthError::MissingToken,
            AuthError::InvalidToken,
            AuthError::TokenExpired,
            AuthError::PlatformNotAllowed("tiktok".into()),
        ] {
            listed(a.into());
        }
        listed(ApiError::invalid_request("x"));
    }
}
