//! The one error table: every code the service answers, with its HTTP
//! status, default message, retry hint, whether it is charged and when it
//! happens. The HTTP envelope, the MCP tool errors, the OpenAPI document and
//! the tests read it; nothing else knows a status.

use mediaparse_sdk::Failure;

/// Every error code, by meaning. [`ErrorCode::spec`] gives its row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    InvalidRequest,
    /// SPEC's `302`: not a supported single-media post.
    UnsupportedUrl,
    MissingToken,
    InvalidToken,
    TokenExpired,
    InsufficientCredits,
    PlatformNotAllowed,
    UnknownPlatform,
    ContentUnavailable,
    PayloadTooLarge,
    /// The client did not send its request body in time.
    RequestTimeout,
    UnsupportedMediaType,
    LoginRequired,
    RateLimited,
    ExtractorFailed,
    Internal,
    UpstreamError,
    UpstreamRateLimited,
    ExtractorUnavailable,
    /// Admission control: too many parses in flight (overall or for the account).
    Overloaded,
    UpstreamTimeout,
    NotFound,
    MethodNotAllowed,
    KeyNotFound,
    AccountNotFound,
    AccountExists,
    /// The tunnel token is altered, not a token, or its key was retired.
    TunnelNotFound,
    TunnelExpired,
    /// The key's tunnel limit: concurrent streams or bytes per UTC day.
    TunnelLimited,
    /// The tunnel's merge needs `ffmpeg`, which this service does not have.
    MergeUnavailable,
    /// An `Idempotency-Key` reused for a different request.
    IdempotencyConflict,
    /// The database's write lock stayed taken past the busy timeout.
    StoreBusy,
    /// The database cannot be reached (stopped, restarting, failing over).
    DatabaseUnavailable,
    /// Too many failed authentications from this client address.
    AuthThrottled,
    /// The account has as many API keys as it may have.
    KeyLimitReached,
    /// The platform is broken and its circuit breaker is open.
    PlatformUnavailable,
    /// A batch with no items, or more than a batch may hold.
    InvalidBatchSize,
    /// A job's `callback_url` that no webhook may be sent to.
    InvalidCallbackUrl,
    /// No job by that id for this account (never was, removed, or another's).
    JobNotFound,
}

/// Which operations answer a code; the OpenAPI document lists the first two.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Both parse endpoints.
    Parse,
    /// Only the templated platform endpoint (`{platform}` path segment).
    PlatformPath,
    /// Routing, the admin API and the account view, not the parse operations.
    Service,
    /// Only the batch operation (`POST /api/v1/batch`) as a whole.
    Batch,
    /// Only the job operations (`/api/v1/jobs`).
    Jobs,
}

/// When a client may retry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Retry {
    /// No `Retry-After`.
    No,
    /// `Retry-After` with this many seconds.
    After(u64),
    /// `Retry-After` computed per request (the key's token bucket).
    Computed,
}

/// One row of the table.
#[derive(Debug)]
pub struct ErrorSpec {
    pub code: ErrorCode,
    /// The envelope's `code`.
    pub wire: &'static str,
    pub status: u16,
    /// The envelope's `msg` unless the error says more.
    pub message: &'static str,
    pub retry: Retry,
    /// Whether credits are taken (SPEC: failures cost 0, so never).
    pub charged: bool,
    /// When it happens (the OpenAPI document's explanation).
    pub when: &'static str,
    pub scope: Scope,
}

/// The table. Parse-scoped rows are in the OpenAPI document's order (by status).
pub const ERRORS: &[ErrorSpec] = &[
    row(
        ErrorCode::InvalidRequest,
        "invalid_request",
        400,
        "invalid request",
        Retry::No,
        "Body not JSON, not an object, an unknown property, `url`/`link` missing, empty, not a string, or both given with different values.",
        Scope::Parse,
    ),
    row(
        ErrorCode::UnsupportedUrl,
        "302",
        400,
        "unsupported URL",
        Retry::No,
        "The URL is not a supported single media post (or the platform endpoint's platform differs from the URL's).",
        Scope::Parse,
    ),
    row(
        ErrorCode::MissingToken,
        "missing_token",
        401,
        "Unauthorized: Authorization header missing",
        Retry::No,
        "Authorization header missing.",
        Scope::Parse,
    ),
    row(
        ErrorCode::InvalidToken,
        "invalid_token",
        401,
        "Unauthorized: token invalid",
        Retry::No,
        "Token invalid.",
        Scope::Parse,
    ),
    row(
        ErrorCode::TokenExpired,
        "token_expired",
        401,
        "Unauthorized: token expired",
        Retry::No,
        "Token past its expiration date.",
        Scope::Parse,
    ),
    row(
        ErrorCode::InsufficientCredits,
        "insufficient_credits",
        402,
        "insufficient credits",
        Retry::No,
        "The account lacks the credits of a successful parse of this platform (checked before any upstream request).",
        Scope::Parse,
    ),
    row(
        ErrorCode::PlatformNotAllowed,
        "platform_not_allowed",
        403,
        "Forbidden: this token may not parse this platform",
        Retry::No,
        "The token may not parse this platform.",
        Scope::Parse,
    ),
    row(
        ErrorCode::UnknownPlatform,
        "unknown_platform",
        404,
        "not a platform id",
        Retry::No,
        "The `{platform}` path segment is not a platform id.",
        Scope::PlatformPath,
    ),
    row(
        ErrorCode::ContentUnavailable,
        "content_unavailable",
        404,
        "content unavailable",
        Retry::No,
        "The post is private, deleted, region- or age-restricted.",
        Scope::Parse,
    ),
    row(
        ErrorCode::RequestTimeout,
        "request_timeout",
        408,
        "the request body did not arrive in time",
        Retry::No,
        "The client sent its request body too slowly (the server's body-read timeout).",
        Scope::Parse,
    ),
    row(
        ErrorCode::PayloadTooLarge,
        "payload_too_large",
        413,
        "request body too large",
        Retry::No,
        "Request body larger than 64 KiB.",
        Scope::Parse,
    ),
    row(
        ErrorCode::UnsupportedMediaType,
        "unsupported_media_type",
        415,
        "Content-Type must be application/json",
        Retry::No,
        "Content-Type is not JSON.",
        Scope::Parse,
    ),
    row(
        ErrorCode::LoginRequired,
        "login_required",
        422,
        "login required",
        Retry::No,
        "The platform shows this post only to signed-in users and no operator session is configured.",
        Scope::Parse,
    ),
    row(
        ErrorCode::RateLimited,
        "rate_limited",
        429,
        "rate limit exceeded",
        Retry::Computed,
        "The key's own request rate limit is exhausted (`Retry-After` says when to retry); nothing is fetched or charged.",
        Scope::Parse,
    ),
    row(
        ErrorCode::AuthThrottled,
        "auth_throttled",
        429,
        "too many failed authentications from this address",
        Retry::Computed,
        "This client address (IPv6: its /64) sent too many unknown or expired tokens (or wrong operator tokens); its requests are refused without looking the token up until `Retry-After` seconds pass.",
        Scope::Parse,
    ),
    row(
        ErrorCode::ExtractorFailed,
        "extractor_failed",
        500,
        "the extractor failed on this post",
        Retry::No,
        "The extractor failed on this post (a trap, a sandbox timeout, invalid output).",
        Scope::Parse,
    ),
    row(
        ErrorCode::Internal,
        "internal_error",
        500,
        "internal error",
        Retry::No,
        "A bug or a storage failure.",
        Scope::Parse,
    ),
    row(
        ErrorCode::UpstreamError,
        "upstream_error",
        502,
        "upstream error",
        Retry::No,
        "The platform answered with an error or something unusable.",
        Scope::Parse,
    ),
    row(
        ErrorCode::UpstreamRateLimited,
        "upstream_rate_limited",
        503,
        "the platform is rate limiting",
        Retry::After(60),
        "The platform is rate-limiting or challenging the service (`Retry-After` is set).",
        Scope::Parse,
    ),
    row(
        ErrorCode::ExtractorUnavailable,
        "extractor_unavailable",
        503,
        "no healthy extractor for this platform",
        Retry::No,
        "No healthy extractor for the platform, or the platform is disabled.",
        Scope::Parse,
    ),
    row(
        ErrorCode::Overloaded,
        "overloaded",
        503,
        "the service is overloaded",
        Retry::After(1),
        "Too many parses in flight, overall or for this account, and the short wait queue is full or timed out (`Retry-After` is set); nothing is fetched or charged.",
        Scope::Parse,
    ),
    row(
        ErrorCode::PlatformUnavailable,
        "platform_unavailable",
        503,
        "the platform is failing; parses are paused",
        Retry::Computed,
        "Most recent parses of this platform failed on the platform's side, so its parses are refused at once, before any upstream request, until a cool-down ends (`Retry-After` says when; `GET /api/v1/status` shows the platform as `broken`). Nothing is charged.",
        Scope::Parse,
    ),
    row(
        ErrorCode::UpstreamTimeout,
        "upstream_timeout",
        504,
        "the upstream platform did not answer in time",
        Retry::No,
        "The platform did not answer in time.",
        Scope::Parse,
    ),
    row(
        ErrorCode::NotFound,
        "not_found",
        404,
        "no such endpoint",
        Retry::No,
        "No such endpoint (or the admin API is off).",
        Scope::Service,
    ),
    row(
        ErrorCode::MethodNotAllowed,
        "method_not_allowed",
        405,
        "method not allowed on this endpoint",
        Retry::No,
        "The endpoint exists but not with this method.",
        Scope::Service,
    ),
    row(
        ErrorCode::KeyNotFound,
        "key_not_found",
        404,
        "no such key",
        Retry::No,
        "Admin API: no key with this id.",
        Scope::Service,
    ),
    row(
        ErrorCode::AccountNotFound,
        "account_not_found",
        404,
        "no such account",
        Retry::No,
        "Admin API: no account with this id.",
        Scope::Service,
    ),
    row(
        ErrorCode::AccountExists,
        "account_exists",
        409,
        "account already exists",
        Retry::No,
        "Admin API: an account with this id exists.",
        Scope::Service,
    ),
    row(
        ErrorCode::TunnelNotFound,
        "tunnel_not_found",
        404,
        "no such tunnel",
        Retry::No,
        "Tunnel: the token is altered, not a token, or sealed by a key the service no longer accepts.",
        Scope::Service,
    ),
    row(
        ErrorCode::TunnelExpired,
        "tunnel_expired",
        410,
        "the tunnelled URL has expired",
        Retry::No,
        "Tunnel: the token is past its expiry (the configured TTL, or the media URL's own expiry), or the API key it was issued to was reset, deleted or has expired since; parse again.",
        Scope::Service,
    ),
    row(
        ErrorCode::TunnelLimited,
        "tunnel_limited",
        429,
        "tunnel limit reached",
        Retry::Computed,
        "Tunnel: the key made as many tunnel requests this minute as it may, has as many streams open as it may, or has used its bytes for the UTC day; Retry-After says when to try again.",
        Scope::Service,
    ),
    row(
        ErrorCode::MergeUnavailable,
        "merge_unavailable",
        501,
        "merging is not available on this service",
        Retry::No,
        "Tunnel merge: this service has no ffmpeg; fetch the video and audio tunnel URLs separately.",
        Scope::Service,
    ),
    row(
        ErrorCode::IdempotencyConflict,
        "idempotency_conflict",
        422,
        "the Idempotency-Key was used for a different request",
        Retry::No,
        "The `Idempotency-Key` was used with a different request (another body, endpoint or query) by this API key in the last 24 hours.",
        Scope::Parse,
    ),
    row(
        ErrorCode::StoreBusy,
        "store_busy",
        503,
        "the database is busy",
        Retry::After(1),
        "The database stayed locked by another writer past its busy timeout; answered before any upstream request, nothing is charged (`Retry-After` is set).",
        Scope::Parse,
    ),
    row(
        ErrorCode::DatabaseUnavailable,
        "database_unavailable",
        503,
        "the database is unavailable; retry shortly",
        Retry::After(2),
        "The database (PostgreSQL) cannot be reached; nothing was charged. The hosts reconnect by themselves when it returns.",
        Scope::Parse,
    ),
    row(
        ErrorCode::KeyLimitReached,
        "key_limit_reached",
        409,
        "the account has as many keys as it may have",
        Retry::No,
        "Creating a key in an account that already has the most keys one account may have (`--max-keys-per-account`, default 20); delete a key first.",
        Scope::Service,
    ),
    row(
        ErrorCode::InvalidBatchSize,
        "invalid_batch_size",
        400,
        "a batch holds 1 to 50 items",
        Retry::No,
        "A batch (`POST /api/v1/batch`, the MCP tool `parse_batch`) with no items or more than 50; nothing ran.",
        Scope::Batch,
    ),
    row(
        ErrorCode::InvalidCallbackUrl,
        "invalid_callback_url",
        400,
        "the callback URL is not one a webhook may be sent to",
        Retry::No,
        "A job's `callback_url` that is not an absolute https URL without user name, password or fragment, or longer than 2048 bytes (plain http is accepted only to a loopback address of a service in test mode); nothing was queued.",
        Scope::Jobs,
    ),
    row(
        ErrorCode::JobNotFound,
        "job_not_found",
        404,
        "no such job",
        Retry::No,
        "No job by this id for the key's account: it never existed, its results were removed after their retention, or it is another account's.",
        Scope::Jobs,
    ),
];

const fn row(
    code: ErrorCode,
    wire: &'static str,
    status: u16,
    message: &'static str,
    retry: Retry,
    when: &'static str,
    scope: Scope,
) -> ErrorSpec {
    ErrorSpec {
        code,
        wire,
        status,
        message,
        retry,
        charged: false,
        when,
        scope,
    }
}

impl ErrorCode {
    /// This code's row of [`ERRORS`].
    pub fn spec(self) -> &'static ErrorSpec {
        match ERRORS.iter().find(|s| s.code == self) {
            Some(spec) => spec,
            // Every variant has a row (`every_code_has_one_row`); fall back
            // to the internal error's rather than panic on a request path.
            None => &ERRORS[INTERNAL_ROW],
        }
    }

    pub fn status(self) -> u16 {
        self.spec().status
    }

    /// The envelope's `code`.
    pub fn as_str(self) -> &'static str {
        self.spec().wire
    }

    /// What an extractor's failure means to a caller.
    pub fn of_failure(failure: &Failure) -> ErrorCode {
        match failure {
            Failure::UnsupportedUrl(_) => ErrorCode::UnsupportedUrl,
            Failure::Unavailable(_) => ErrorCode::ContentUnavailable,
            Failure::LoginRequired(_) => ErrorCode::LoginRequired,
            Failure::RateLimited(_) => ErrorCode::UpstreamRateLimited,
            Failure::UpstreamChanged(_) | Failure::UpstreamError(_) => ErrorCode::UpstreamError,
        }
    }

    /// The code whose envelope `code` is `wire` (tests, clients).
    pub fn from_wire(wire: &str) -> Option<ErrorCode> {
        ERRORS.iter().find(|s| s.wire == wire).map(|s| s.code)
    }
}

const INTERNAL_ROW: usize = 16;

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [ErrorCode; 39] = [
        ErrorCode::InvalidCallbackUrl,
        ErrorCode::JobNotFound,
        ErrorCode::InvalidBatchSize,
        ErrorCode::InvalidRequest,
        ErrorCode::UnsupportedUrl,
        ErrorCode::MissingToken,
        ErrorCode::InvalidToken,
        ErrorCode::TokenExpired,
        ErrorCode::InsufficientCredits,
        ErrorCode::PlatformNotAllowed,
        ErrorCode::UnknownPlatform,
        ErrorCode::ContentUnavailable,
        ErrorCode::RequestTimeout,
        ErrorCode::PayloadTooLarge,
        ErrorCode::UnsupportedMediaType,
        ErrorCode::LoginRequired,
        ErrorCode::RateLimited,
        ErrorCode::ExtractorFailed,
        ErrorCode::Internal,
        ErrorCode::UpstreamError,
        ErrorCode::UpstreamRateLimited,
        ErrorCode::ExtractorUnavailable,
        ErrorCode::Overloaded,
        ErrorCode::UpstreamTimeout,
        ErrorCode::NotFound,
        ErrorCode::MethodNotAllowed,
        ErrorCode::KeyNotFound,
        ErrorCode::AccountNotFound,
        ErrorCode::AccountExists,
        ErrorCode::TunnelNotFound,
        ErrorCode::TunnelExpired,
        ErrorCode::TunnelLimited,
        ErrorCode::MergeUnavailable,
        ErrorCode::IdempotencyConflict,
        ErrorCode::StoreBusy,
        ErrorCode::DatabaseUnavailable,
        ErrorCode::AuthThrottled,
        ErrorCode::KeyLimitReached,
        ErrorCode::PlatformUnavailable,
    ];

    #[test]
    fn every_code_has_one_row_and_no_error_is_charged() {
        assert_eq!(ERRORS.len(), ALL.len());
        for code in ALL {
            assert_eq!(
                ERRORS.iter().filter(|s| s.code == code).count(),
                1,
                "{code:?}"
            );
            assert_eq!(ErrorCode::from_wire(code.as_str()), Some(code));
            assert!(!code.spec().charged);
        }
        assert_eq!(ERRORS[INTERNAL_ROW].code, ErrorCode::Internal);
    }

    #[test]
    fn failures_map_to_meaning() {
        let status = |f: Failure| ErrorCode::of_failure(&f).status();
        assert_eq!(status(Failure::unsupported("x")), 400);
        assert_eq!(status(Failure::unavailable("x")), 404);
        assert_eq!(status(Failure::LoginRequired("x".into())), 422);
        assert_eq!(status(Failure::RateLimited("x".into())), 503);
        assert_eq!(status(Failure::changed("x")), 502);
        assert_eq!(status(Failure::upstream("x")), 502);
        assert_eq!(
            ErrorCode::of_failure(&Failure::unsupported("x")).as_str(),
            "302"
        );
        assert_eq!(
            ErrorCode::UpstreamRateLimited.spec().retry,
            Retry::After(60)
        );
    }
}
