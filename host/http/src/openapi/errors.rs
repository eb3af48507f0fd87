//! The error envelopes of the document, generated from the one error
//! table ([`mediaparse_core::errors::ERRORS`]): per status, its codes and when
//! each happens. Only parse-scoped codes are documented.

use serde_json::{Value, json};

pub use mediaparse_core::errors::{ERRORS, ErrorSpec, Scope};

/// Does an operation (templated platform path or not) answer this row?
pub fn documented(spec: &ErrorSpec, templated_platform: bool) -> bool {
    spec.scope == Scope::Parse || (templated_platform && spec.scope == Scope::PlatformPath)
}

/// Statuses an operation can answer with an error envelope, in order.
pub fn statuses(templated_platform: bool) -> Vec<u16> {
    let mut out: Vec<u16> = ERRORS
        .iter()
        .filter(|c| documented(c, templated_platform))
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
    let codes: Vec<&ErrorSpec> = ERRORS
        .iter()
        .filter(|c| c.status == status && documented(c, templated_platform))
        .collect();
    let list: Vec<&str> = codes.iter().map(|c| c.wire).collect();
    let explained: Vec<String> = codes
        .iter()
        .map(|c| format!("- `{}`: {}", c.wire, c.when))
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
    use crate::envelope::ApiError;
    use mediaparse_auth::AuthError;
    use mediaparse_parse::ParseError;
    use mediaparse_sdk::Failure;

    fn listed(e: ApiError) {
        let pair = (e.code.status(), e.wire());
        assert!(
            ERRORS
                .iter()
                .any(|c| (c.status, c.wire) == pair && documented(c, false)),
            "{pair:?} is answered by a parse but not documented in the error table"
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
