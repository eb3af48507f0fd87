//! A request id on every response (`X-Request-Id`) and in every log line of
//! that request. A sane incoming id is kept, otherwise one is minted. The
//! path in the request's span is [`loggable_path`]: capabilities carried in
//! a path (tunnel tokens, invitation secrets) never reach the log.

use axum::extract::Request;
use axum::http::HeaderValue;
use axum::middleware::Next;
use axum::response::Response;
use tracing::Instrument;

pub const HEADER: &str = "x-request-id";

/// Path prefixes whose last segment is a secret (the capability itself).
const SECRET_SEGMENT_PREFIXES: &[&str] = &["/api/v1/tunnel/", "/console/invite/"];

/// What a log line shows of `path`: the secret segment after one of
/// [`SECRET_SEGMENT_PREFIXES`] replaced by `{redacted}` (the tunnel's
/// `merge` route, which carries its tokens in the query, is kept as is).
pub fn loggable_path(path: &str) -> std::borrow::Cow<'_, str> {
    for prefix in SECRET_SEGMENT_PREFIXES {
        if let Some(rest) = path.strip_prefix(prefix)
            && !rest.is_empty()
            && rest != "merge"
        {
            return format!("{prefix}{{redacted}}").into();
        }
    }
    path.into()
}

#[derive(Clone, Debug)]
pub struct RequestId(pub String);

/// The client's own `X-Request-Id`, when it sent a sane one: kept beside the
/// server-minted ledger request id, never instead of it.
#[derive(Clone, Debug)]
pub struct ClientRequestId(pub String);

pub async fn middleware(mut request: Request, next: Next) -> Response {
    let client = request
        .headers()
        .get(HEADER)
        .and_then(|v| v.to_str().ok())
        .filter(|v| {
            !v.is_empty()
                && v.len() <= 64
                && v.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
        .map(String::from);
    let id = client
        .clone()
        .unwrap_or_else(mediaparse_core::ids::new_request_id);
    if let Some(client) = client {
        request.extensions_mut().insert(ClientRequestId(client));
    }
    request.extensions_mut().insert(RequestId(id.clone()));
    // An error-level span is enabled whatever the filter, so even a
    // `RUST_LOG=warn` service tags its warnings with the request id.
    let span = tracing::error_span!("request", request_id = %id, method = %request.method(), path = %loggable_path(request.uri().path()));
    let mut response = next.run(request).instrument(span).await;
    if let Ok(v) = HeaderValue::from_str(&id) {
        response.headers_mut().insert(HEADER, v);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::loggable_path;

    #[test]
    fn capabilities_in_paths_are_redacted() {
        assert_eq!(
            loggable_path("/api/v1/tunnel/AQBsecretToken"),
            "/api/v1/tunnel/{redacted}"
        );
        assert_eq!(
            loggable_path("/console/invite/s3cret/extra"),
            "/console/invite/{redacted}"
        );
        assert_eq!(
            loggable_path("/api/v1/tunnel/merge"),
            "/api/v1/tunnel/merge"
        );
        assert_eq!(loggable_path("/api/v1/parse"), "/api/v1/parse");
        assert_eq!(loggable_path("/console/invite/"), "/console/invite/");
    }
}
