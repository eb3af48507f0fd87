//! The headers every HTML page (the console, `/docs`) answers with: a
//! content security policy that runs only this origin's scripts, no
//! framing (clickjacking), no content-type sniffing, and no referrer
//! leaving the site. The playground shows media from platform CDNs, so
//! images and media may come from any http(s) origin; nothing else may.

use axum::extract::Request;
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::Response;

/// The pages' content security policy. Inline `style` attributes are
/// allowed (the usage chart's bars, Swagger UI's widgets); inline scripts are not.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; \
     style-src 'self' 'unsafe-inline'; img-src 'self' data: https: http:; \
     media-src 'self' https: http:; connect-src 'self'; object-src 'none'; \
     base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/// Middleware: add the page headers to the answer (a handler's own win).
pub async fn add(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    for (name, value) in [
        (header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY),
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::REFERRER_POLICY, "same-origin"),
    ] {
        headers
            .entry(name)
            .or_insert(HeaderValue::from_static(value));
    }
    response
}
