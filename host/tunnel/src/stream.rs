//! Serving one tunnel token: open it, fetch the media from the platform's
//! CDN (declared media hosts only, the token's headers, the caller's range)
//! and hand back the status, the passed-through headers and the body as a
//! stream. The body is pulled chunk by chunk as the caller reads (back
//! pressure); dropping it — the caller went away — drops the upstream
//! response and so cancels the upstream request.

use std::time::Duration;

use bytes::Bytes;
use futures::stream::BoxStream;
use mediaparse_sdk::Header;

use super::limits::{LimitError, Ticket};
use super::{Claims, TokenError, TunnelSettings, media_type, revoked};
use mediaparse_config::OperatorConfig;
use mediaparse_core::ErrorCode;
use mediaparse_fetch::{AllCooling, ExitPools, FetchError, MediaRequest, Outcome, Paced, Pacer};
use mediaparse_registry::Registry;
use mediaparse_store::{Store, StoreError};

/// Caller headers forwarded upstream: ranges and conditionals.
pub const FORWARDED_REQUEST_HEADERS: &[&str] =
    &["range", "if-range", "if-none-match", "if-modified-since"];

/// Upstream headers passed to the caller (`Content-Type` goes through the
/// allow-list of [`super::media_type`]).
pub const PASSED_RESPONSE_HEADERS: &[&str] = &[
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
    #[error(transparent)]
    Cooling(#[from] AllCooling),
    #[error(transparent)]
    Paced(#[from] Paced),
    #[error("reading the token's key: {0}")]
    Store(StoreError),
}

impl From<revoked::CheckError> for TunnelError {
    fn from(e: revoked::CheckError) -> Self {
        match e {
            revoked::CheckError::Revoked(e) => TunnelError::Token(e),
            revoked::CheckError::Store(e) => TunnelError::Store(e),
        }
    }
}

impl TunnelError {
    /// Its row in the error table.
    pub fn code(&self) -> ErrorCode {
        match self {
            TunnelError::Token(TokenError::Invalid) => ErrorCode::TunnelNotFound,
            TunnelError::Token(TokenError::Expired | TokenError::Revoked) => {
                ErrorCode::TunnelExpired
            }
            TunnelError::PlatformUnavailable(_) => ErrorCode::ExtractorUnavailable,
            TunnelError::Fetch(FetchError::Timeout) => ErrorCode::UpstreamTimeout,
            TunnelError::Fetch(_) | TunnelError::UpstreamStatus(_) => ErrorCode::UpstreamError,
            TunnelError::Limit(
                LimitError::Streams { .. } | LimitError::Bytes { .. } | LimitError::Rate { .. },
            ) => ErrorCode::TunnelLimited,
            TunnelError::Limit(LimitError::PlatformBusy(_)) => ErrorCode::Overloaded,
            TunnelError::Limit(LimitError::Store(_)) => ErrorCode::Internal,
            TunnelError::Cooling(_) | TunnelError::Paced(_) => ErrorCode::UpstreamRateLimited,
            TunnelError::Store(StoreError::Unavailable(_)) => ErrorCode::DatabaseUnavailable,
            TunnelError::Store(_) => ErrorCode::Internal,
        }
    }

    /// `Retry-After` seconds, for a limit.
    pub fn retry_after_secs(&self) -> Option<u64> {
        match self {
            TunnelError::Limit(e) => Some(e.retry_after_secs()),
            TunnelError::Cooling(e) => Some(e.retry_after_secs),
            TunnelError::Paced(e) => Some(e.retry_after_secs),
            TunnelError::Store(StoreError::Unavailable(_)) => Some(1),
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
    /// The keys a token's key is read from at every stream.
    pub store: &'a Store,
    /// The health of every platform's exits (shared with parses).
    pub exits: &'a ExitPools,
    /// Requests per second and in flight per exit (shared with parses).
    pub pacer: &'a Pacer,
    /// Unix seconds.
    pub now: i64,
    /// The key-expiry clock, unix seconds.
    pub key_clock_s: i64,
}

/// Serve `token` (`head`: headers only) with the caller's `client_headers`.
pub async fn serve(
    sources: &Sources<'_>,
    token: &str,
    head: bool,
    client_headers: &[Header],
) -> Result<Streamed, TunnelError> {
    let claims = sources.settings.keys.open(token, sources.now)?;
    revoked::check(sources.store, &claims, sources.key_clock_s).await?;
    let ticket = match sources.settings.meter.admit(&claims, sources.now).await {
        Ok(t) => t,
        Err(e) => {
            let reason = match &e {
                LimitError::Streams { .. } => "streams",
                LimitError::Bytes { .. } => "bytes",
                LimitError::Rate { .. } => "rate",
                LimitError::PlatformBusy(_) => "platform_busy",
                LimitError::Store(_) => "store",
            };
            mediaparse_metrics::global().tunnel_refused(reason);
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
    let platform_limits = sources.config.limits_for(&claims.platform);
    let limits = platform_limits.fetch;
    // The parse's own exit while the pool still has it (IP-bound URLs need
    // it), else the pool's best; an exit that is cooling is not used, as
    // for parses, and requests through it keep the exit's pace.
    let exits = sources.config.exits(&claims.platform);
    let own = claims
        .egress
        .as_deref()
        .filter(|label| exits.iter().any(|e| e.label == *label));
    let exit = sources.exits.lease_among(&claims.platform, &exits, own)?;
    let opened = {
        let deadline = std::time::Instant::now() + limits.request_timeout;
        // The pace slot covers opening the stream, not the whole body: a
        // long download must not hold an exit's in-flight place.
        let _slot = sources
            .pacer
            .slot(
                &claims.platform,
                &exit.label,
                platform_limits.pace,
                deadline,
            )
            .await?;
        let request = MediaRequest {
            platform: &claims.platform,
            media_hosts: &ext.manifest.media_hosts,
            url: &claims.url,
            head,
            headers: &headers,
            proxy: exit.url.as_deref(),
            connect_timeout: limits.request_timeout,
            max_redirects: limits.max_redirects,
        };
        sources.settings.fetcher.open_media(&request).await
    };
    let outcome = match &opened {
        Ok(response) => Some(Outcome::of_status(response.status().as_u16())),
        Err(FetchError::Connect(_)) => Some(Outcome::ConnectError),
        Err(_) => None,
    };
    if let Some(outcome) = outcome {
        sources
            .exits
            .record(&exit, outcome, &platform_limits.cooling);
    }
    let response = opened?;
    let status = response.status().as_u16();
    // 304 and 416 are answers to the caller's own conditionals and range.
    if !(200..300).contains(&status) && status != 304 && status != 416 {
        tracing::info!(platform = %claims.platform, status, "tunnel: media host refused");
        return Err(TunnelError::UpstreamStatus(status));
    }
    let mut passed: Vec<(&'static str, String)> = PASSED_RESPONSE_HEADERS
        .iter()
        .filter_map(|name| {
            let value = response.headers().get(*name)?.to_str().ok()?;
            Some((*name, value.to_string()))
        })
        .collect();
    let upstream_type = response
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap_or_default());
    let served_as = media_type::serve_as(upstream_type);
    passed.push(("content-type", served_as.content_type));
    if served_as.attachment {
        passed.push(("content-disposition", "attachment".into()));
    }
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
