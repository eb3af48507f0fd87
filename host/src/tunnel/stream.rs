//! Serving one tunnel token: open it, fetch the media from the platform's
//! CDN (declared media hosts only, the token's headers, the caller's range)
//! and hand back the status, the passed-through headers and the body as a
//! stream. The body is pulled chunk by chunk as the caller reads (back
//! pressure); dropping it — the caller went away — drops the upstream
//! response and so cancels the upstream request.

use std::time::Duration;

use axum::body::Bytes;
use futures::stream::BoxStream;
use mediaparse_sdk::Header;

use super::limits::{LimitError, Ticket};
use super::{Claims, TokenError, TunnelSettings};
use crate::config::OperatorConfig;
use crate::core::ErrorCode;
use crate::fetch::{FetchError, MediaRequest};
use crate::registry::Registry;

/// Caller headers forwarded upstream: ranges and conditionals.
pub const FORWARDED_REQUEST_HEADERS: &[&str] =
    &["range", "if-range", "if-none-match", "if-modified-since"];

/// Upstream headers passed to the caller.
pub const PASSED_RESPONSE_HEADERS: &[&str] = &[
    "content-type",
    "content-length",
    "content-range",
    "accept-ranges",
    "etag",
    "last-modified",
];

/// Why a tunnel request failed.
#[derive(Debug, thiserror::Error)]
pub enum TunnelError {
    #[error(transparent)]
    Token(#[from] TokenError),
    #[error("platform {0} is not loaded")]
    PlatformUnavailable(String),
    #[error(transparent)]
    Fetch(#[from] FetchError),
    #[error("the media host answered {0}")]
    UpstreamStatus(u16),
    #[error(transparent)]
    Limit(#[from] LimitError),
}

impl TunnelError {
    /// Its row in the error table.
    pub fn code(&self) -> ErrorCode {
        match self {
            TunnelError::Token(TokenError::Invalid) => ErrorCode::TunnelNotFound,
            TunnelError::Token(TokenError::Expired) => ErrorCode::TunnelExpired,
            TunnelError::PlatformUnavailable(_) => ErrorCode::ExtractorUnavailable,
            TunnelError::Fetch(FetchError::Timeout) => ErrorCode::UpstreamTimeout,
            TunnelError::Fetch(_) | TunnelError::UpstreamStatus(_) => ErrorCode::UpstreamError,
            TunnelError::Limit(LimitError::Streams { .. } | LimitError::Bytes { .. }) => {
                ErrorCode::TunnelLimited
            }
            TunnelError::Limit(LimitError::PlatformBusy(_)) => ErrorCode::Overloaded,
            TunnelError::Limit(LimitError::Store(_)) => ErrorCode::Internal,
        }
    }

    /// `Retry-After` seconds, for a limit.
    pub fn retry_after_secs(&self) -> Option<u64> {
        match self {
            TunnelError::Limit(e) => Some(e.retry_after_secs()),
            _ => None,
        }
    }
}

/// What the caller gets.
pub struct Streamed {
    pub status: u16,
    pub headers: Vec<(&'static str, String)>,
    /// `None` for `HEAD`.
    pub body: Option<BoxStream<'static, Result<Bytes, std::io::Error>>>,
    pub claims: Claims,
}

/// What serving a token needs from the layers below.
pub struct Sources<'a> {
    pub settings: &'a TunnelSettings,
    pub registry: &'a Registry,
    pub config: &'a OperatorConfig,
    /// Unix seconds.
    pub now: i64,
}

/// Serve `token` (`head`: headers only) with the caller's `client_headers`.
pub async fn serve(
    sources: &Sources<'_>,
    token: &str,
    head: bool,
    client_headers: &[Header],
) -> Result<Streamed, TunnelError> {
    let claims = sources.settings.keys.open(token, sources.now)?;
    let ticket = match sources.settings.meter.admit(&claims, sources.now).await {
        Ok(t) => t,
        Err(e) => {
            let reason = match &e {
                LimitError::Streams { .. } => "streams",
                LimitError::Bytes { .. } => "bytes",
                LimitError::PlatformBusy(_) => "platform_busy",
                LimitError::Store(_) => "store",
            };
            crate::metrics::global().tunnel_refused(reason);
            return Err(e.into());
        }
    };
    let ext = sources
        .registry
        .get(&claims.platform)
        .ok_or_else(|| TunnelError::PlatformUnavailable(claims.platform.clone()))?;
    let mut headers = claims.sdk_headers();
    headers.extend(
        client_headers
            .iter()
            .filter(|h| {
                FORWARDED_REQUEST_HEADERS
                    .iter()
                    .any(|f| h.name.eq_ignore_ascii_case(f))
            })
            .cloned(),
    );
    let limits = sources.config.limits_for(&claims.platform).fetch;
    // The parse's own exit when the token names one the pool still has,
    // else the platform's first exit (IP-bound URLs need the parse's).
    let exits = sources.config.exits(&claims.platform);
    let exit = exits
        .iter()
        .find(|e| claims.egress.as_deref() == Some(e.label.as_str()))
        .or(exits.first())
        .and_then(|e| e.url.clone());
    let request = MediaRequest {
        platform: &claims.platform,
        media_hosts: &ext.manifest.media_hosts,
        url: &claims.url,
        head,
        headers: &headers,
        proxy: exit.as_deref(),
        connect_timeout: limits.request_timeout,
        max_redirects: limits.max_redirects,
    };
    let response = sources.settings.fetcher.open_media(&request).await?;
    let status = response.status().as_u16();
    // 304 and 416 are answers to the caller's own conditionals and range.
    if !(200..300).contains(&status) && status != 304 && status != 416 {
        tracing::info!(platform = %claims.platform, status, "tunnel: media host refused");
        return Err(TunnelError::UpstreamStatus(status));
    }
    let passed = PASSED_RESPONSE_HEADERS
        .iter()
        .filter_map(|name| {
            let value = response.headers().get(*name)?.to_str().ok()?;
            Some((*name, value.to_string()))
        })
        .collect();
    // HEAD: the ticket ends here, counted as a stream of no bytes.
    let body = (!head).then(|| body_stream(response, limits.request_timeout, ticket));
    Ok(Streamed {
        status,
        headers: passed,
        body,
        claims,
    })
}

/// The upstream body, chunk by chunk, each counted on the stream's
/// `ticket`; a chunk slower than `idle` ends it with an error.
fn body_stream(
    response: reqwest::Response,
    idle: Duration,
    ticket: Ticket,
) -> BoxStream<'static, Result<Bytes, std::io::Error>> {
    Box::pin(futures::stream::unfold(
        Some((response, ticket)),
        move |state| async move {
            let (mut response, mut ticket) = state?;
            match tokio::time::timeout(idle, response.chunk()).await {
                Ok(Ok(Some(chunk))) => {
                    ticket.served(chunk.len() as u64);
                    Some((Ok(chunk), Some((response, ticket))))
                }
                Ok(Ok(None)) => None,
                Ok(Err(e)) => Some((Err(std::io::Error::other(e.without_url())), None)),
                Err(_) => Some((
                    Err(std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        "media host stalled",
                    )),
                    None,
                )),
            }
        },
    ))
}
