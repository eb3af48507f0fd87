//! The error envelope `{"status":<http>,"data":null,"msg":"...","code":"..."}`:
//! every error becomes one through the table in [`crate::core::errors`].

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::auth::AuthError;
use crate::auth::ratelimit::{RateLimited, RateRefused};
use crate::core::{ErrorCode, Retry};
use crate::operator::OperatorError;
use crate::parse::ParseError;

/// Header carrying the credits a response cost.
pub const CREDITS_HEADER: &str = "x-credits-charged";

/// Say `X-Credits-Charged: 0` on an answer that did not say what it cost
/// (every failure, extractor rejections included).
pub async fn credits_zero_unless_set(mut response: Response) -> Response {
    if !response.headers().contains_key(CREDITS_HEADER) {
        response
            .headers_mut()
            .insert(CREDITS_HEADER, HeaderValue::from(0));
    }
    response
}

#[derive(Debug)]
pub struct ApiError {
    pub code: ErrorCode,
    pub msg: String,
    pub retry_after: Option<u64>,
}

impl ApiError {
    /// An error with its own message; status and retry hint from the table.
    pub fn new(code: ErrorCode, msg: impl Into<String>) -> Self {
        let retry_after = match code.spec().retry {
            Retry::After(secs) => Some(secs),
            Retry::No | Retry::Computed => None,
        };
        ApiError {
            code,
            msg: msg.into(),
            retry_after,
        }
    }

    /// An error with the table's message.
    pub fn of(code: ErrorCode) -> Self {
        Self::new(code, code.spec().message)
    }

    pub fn invalid_request(msg: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidRequest, msg)
    }

    pub fn status(&self) -> StatusCode {
        StatusCode::from_u16(self.code.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
    }

    /// The envelope's `code`.
    pub fn wire(&self) -> &'static str {
        self.code.as_str()
    }

    /// The envelope body (also an MCP tool error's structured content).
    pub fn envelope(&self) -> serde_json::Value {
        json!({"status": self.code.status(), "data": null, "msg": self.msg, "code": self.wire()})
    }
}

impl From<AuthError> for ApiError {
    fn from(e: AuthError) -> Self {
        match e {
            AuthError::PlatformNotAllowed(p) => ApiError::new(
                ErrorCode::PlatformNotAllowed,
                format!("Forbidden: this token may not parse {p}"),
            ),
            AuthError::Store(crate::store::StoreError::Unavailable(m)) => unavailable(m),
            AuthError::Store(e) => internal(e),
            other => ApiError::of(other.code()),
        }
    }
}

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
                let mut err = ApiError::new(code, c.to_string());
                err.retry_after = Some(c.retry_after_secs.max(1));
                err
            }
            ParseError::Paced(p) => {
                let mut err = ApiError::new(code, p.to_string());
                err.retry_after = Some(p.retry_after_secs.max(1));
                err
            }
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

impl From<OperatorError> for ApiError {
    fn from(e: OperatorError) -> Self {
        match e {
            OperatorError::Store(crate::store::StoreError::Unavailable(m)) => unavailable(m),
            OperatorError::Store(e) => internal(e),
            OperatorError::Invalid(m) => ApiError::invalid_request(m),
            OperatorError::NotFound(..) | OperatorError::KeyLimit(_) => {
                ApiError::new(e.code(), e.to_string())
            }
        }
    }
}

impl From<RateLimited> for ApiError {
    fn from(e: RateLimited) -> Self {
        let mut err = ApiError::new(ErrorCode::RateLimited, e.to_string());
        err.retry_after = Some(e.retry_after_secs);
        err
    }
}

impl From<RateRefused> for ApiError {
    fn from(e: RateRefused) -> Self {
        match e {
            RateRefused::Limited(e) => e.into(),
            RateRefused::Unavailable(detail) => unavailable(detail),
        }
    }
}

/// Internal details go to the log, never to the caller.
/// A store failure: `database_unavailable` when the database cannot be
/// reached, otherwise an internal error.
pub fn store_failure(e: crate::store::StoreError) -> ApiError {
    match e {
        crate::store::StoreError::Unavailable(m) => unavailable(m),
        e => internal(e),
    }
}

/// The database cannot be reached: 503 with `Retry-After`, the cause logged.
pub fn unavailable(detail: impl std::fmt::Display) -> ApiError {
    tracing::warn!(error = %detail, "database unavailable");
    ApiError::of(ErrorCode::DatabaseUnavailable)
}

pub fn internal(detail: impl std::fmt::Display) -> ApiError {
    tracing::error!(error = %detail, "internal error");
    ApiError::of(ErrorCode::Internal)
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (self.status(), axum::Json(self.envelope())).into_response();
        if let Some(secs) = self.retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        response
    }
}
