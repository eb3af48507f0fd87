//! Why a parse failed, and its row of the error table.

use mediaparse_sdk as sdk;

use mediaparse_auth::AuthError;
use mediaparse_core::api_error::{internal, unavailable};
use mediaparse_core::{ApiError, ErrorCode, Secrets};
use mediaparse_fetch::{AllCooling, Paced};
use mediaparse_registry::RuntimeError;
use mediaparse_store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum ParseError {
    #[error("{0}")]
    Unsupported(String),
    #[error(transparent)]
    Auth(#[from] AuthError),
    #[error("account balance {balance} does not cover the price {price} of a {platform} parse")]
    InsufficientCredits {
        platform: String,
        price: i64,
        balance: i64,
    },
    #[error("{0}")]
    Failure(sdk::Failure),
    #[error("no extractor is available for {0}")]
    ExtractorUnavailable(String),
    #[error("{0}")]
    ExtractorFailed(String),
    #[error("the upstream platform did not answer in time")]
    UpstreamTimeout,
    #[error("{0}")]
    Upstream(String),
    /// Every exit of the platform is cooling off: refused before any request.
    #[error(transparent)]
    ExitsCooling(#[from] AllCooling),
    /// The platform's pace leaves no room for a request before the deadline.
    #[error(transparent)]
    Paced(#[from] Paced),
    #[error("{0}")]
    Internal(String),
    /// Admission control refused the parse (too many in flight).
    #[error("{0}")]
    Overloaded(String),
    /// The database stayed locked past the busy timeout.
    #[error("the database is busy (locked by another writer); retry shortly")]
    StoreBusy,
    /// The platform's circuit breaker is open: refused before any instance exists.
    #[error(
        "{platform} is failing on the platform's side; its parses are paused for {retry_after_secs} s"
    )]
    PlatformUnavailable {
        platform: String,
        retry_after_secs: u64,
    },
    /// The database cannot be reached; nothing was charged.
    #[error("the database is unavailable; retry shortly")]
    DatabaseUnavailable(String),
}

impl ParseError {
    /// This error's row in the error table.
    pub fn code(&self) -> ErrorCode {
        match self {
            ParseError::Unsupported(_) => ErrorCode::UnsupportedUrl,
            ParseError::Auth(a) => a.code(),
            ParseError::InsufficientCredits { .. } => ErrorCode::InsufficientCredits,
            ParseError::Failure(f) => ErrorCode::of_failure(f),
            ParseError::ExtractorUnavailable(_) => ErrorCode::ExtractorUnavailable,
            ParseError::ExtractorFailed(_) => ErrorCode::ExtractorFailed,
            ParseError::UpstreamTimeout => ErrorCode::UpstreamTimeout,
            ParseError::Upstream(_) => ErrorCode::UpstreamError,
            ParseError::ExitsCooling(_) | ParseError::Paced(_) => ErrorCode::UpstreamRateLimited,
            ParseError::Internal(_) => ErrorCode::Internal,
            ParseError::Overloaded(_) => ErrorCode::Overloaded,
            ParseError::StoreBusy => ErrorCode::StoreBusy,
            ParseError::DatabaseUnavailable(_) => ErrorCode::DatabaseUnavailable,
            ParseError::PlatformUnavailable { .. } => ErrorCode::PlatformUnavailable,
        }
    }

    /// The outcome label of `mediaparse_parses_total` (the envelope's code).
    pub fn outcome(&self) -> &'static str {
        match self {
            ParseError::Auth(AuthError::PlatformNotAllowed(_)) => "platform_not_allowed",
            ParseError::Auth(_) => "auth",
            other => other.code().as_str(),
        }
    }

    /// The same error with configured secrets scrubbed from its text.
    pub fn redact(self, secrets: &Secrets) -> ParseError {
        if secrets.is_empty() {
            return self;
        }
        let r = |m: String| secrets.redact(&m);
        match self {
            ParseError::Unsupported(m) => ParseError::Unsupported(r(m)),
            ParseError::Failure(f) => ParseError::Failure(match f {
                sdk::Failure::UnsupportedUrl(m) => sdk::Failure::UnsupportedUrl(r(m)),
                sdk::Failure::Unavailable(m) => sdk::Failure::Unavailable(r(m)),
                sdk::Failure::LoginRequired(m) => sdk::Failure::LoginRequired(r(m)),
                sdk::Failure::RateLimited(m) => sdk::Failure::RateLimited(r(m)),
                sdk::Failure::UpstreamChanged(m) => sdk::Failure::UpstreamChanged(r(m)),
                sdk::Failure::UpstreamError(m) => sdk::Failure::UpstreamError(r(m)),
            }),
            ParseError::ExtractorFailed(m) => ParseError::ExtractorFailed(r(m)),
            ParseError::Upstream(m) => ParseError::Upstream(r(m)),
            ParseError::Internal(m) => ParseError::Internal(r(m)),
            other => other,
        }
    }
}

impl From<StoreError> for ParseError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Unavailable(m) => ParseError::DatabaseUnavailable(m),
            e if e.is_busy() => ParseError::StoreBusy,
            e => ParseError::Internal(e.to_string()),
        }
    }
}

impl From<RuntimeError> for ParseError {
    fn from(e: RuntimeError) -> Self {
        ParseError::ExtractorFailed(e.to_string())
    }
}

/// What the caller is told: the row's code and a message without internals.
impl From<ParseError> for ApiError {
    fn from(e: ParseError) -> Self {
        let code = e.code();
        match e {
            ParseError::Unsupported(m) => ApiError::new(code, format!("unsupported URL: {m}")),
            ParseError::Auth(a) => a.into(),
            ParseError::ExtractorUnavailable(p) => {
                ApiError::new(code, format!("no healthy extractor for {p}"))
            }
            ParseError::ExtractorFailed(m) => {
                tracing::error!(error = %m, "extractor failed");
                ApiError::of(code)
            }
            ParseError::Upstream(m) => ApiError::new(code, format!("upstream error: {m}")),
            ParseError::ExitsCooling(c) => {
                ApiError::new(code, c.to_string()).retry_after(c.retry_after_secs)
            }
            ParseError::Paced(p) => {
                ApiError::new(code, p.to_string()).retry_after(p.retry_after_secs)
            }
            ParseError::PlatformUnavailable {
                retry_after_secs, ..
            } => ApiError::new(code, e.to_string()).retry_after(retry_after_secs),
            ParseError::Internal(m) => internal(m),
            ParseError::DatabaseUnavailable(m) => unavailable(m),
            ParseError::Failure(_)
            | ParseError::InsufficientCredits { .. }
            | ParseError::UpstreamTimeout
            | ParseError::Overloaded(_)
            | ParseError::StoreBusy => ApiError::new(code, e.to_string()),
        }
    }
}
