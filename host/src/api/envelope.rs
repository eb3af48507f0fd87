//! The error envelope, and the one place where every error becomes an HTTP
//! status and a code: `{"status":<http>,"data":null,"msg":"...","code":"..."}`.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::auth::AuthError;
use crate::operator::OperatorError;
use crate::pipeline::ParseError;
use crate::ratelimit::RateLimited;

/// Header carrying the credits a response cost.
pub const CREDITS_HEADER: &str = "x-credits-charged";

#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub msg: String,
    pub retry_after: Option<u64>,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, msg: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            msg: msg.into(),
            retry_after: None,
        }
    }

    pub fn invalid_request(msg: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "invalid_request", msg)
    }
}

impl From<AuthError> for ApiError {
    fn from(e: AuthError) -> Self {
        match e {
            AuthError::MissingToken => ApiError::new(
                StatusCode::UNAUTHORIZED,
                "missing_token",
                "Unauthorized: Authorization header missing",
            ),
            AuthError::InvalidToken => ApiError::new(
                StatusCode::UNAUTHORIZED,
                "invalid_token",
                "Unauthorized: token invalid",
            ),
            AuthError::TokenExpired => ApiError::new(
                StatusCode::UNAUTHORIZED,
                "token_expired",
                "Unauthorized: token expired",
            ),
            AuthError::PlatformNotAllowed(p) => ApiError::new(
                StatusCode::FORBIDDEN,
                "platform_not_allowed",
                format!("Forbidden: this token may not parse {p}"),
            ),
            AuthError::Store(e) => internal(e),
        }
    }
}

impl From<ParseError> for ApiError {
    fn from(e: ParseError) -> Self {
        match e {
            ParseError::Unsupported(m) => ApiError::new(
                StatusCode::BAD_REQUEST,
                "302",
                format!("unsupported URL: {m}"),
            ),
            ParseError::Auth(a) => a.into(),
            ParseError::InsufficientCredits { .. } => ApiError::new(
                StatusCode::PAYMENT_REQUIRED,
                "insufficient_credits",
                e.to_string(),
            ),
            ParseError::Failure(f) => {
                let status =
                    StatusCode::from_u16(f.http_status()).unwrap_or(StatusCode::BAD_GATEWAY);
                let mut err = ApiError::new(status, f.code(), f.to_string());
                if status == StatusCode::SERVICE_UNAVAILABLE {
                    err.retry_after = Some(60);
                }
                err
            }
            ParseError::ExtractorUnavailable(p) => ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "extractor_unavailable",
                format!("no healthy extractor for {p}"),
            ),
            ParseError::ExtractorFailed(m) => {
                tracing::error!(error = %m, "extractor failed");
                ApiError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "extractor_failed",
                    "the extractor failed on this post",
                )
            }
            ParseError::UpstreamTimeout => ApiError::new(
                StatusCode::GATEWAY_TIMEOUT,
                "upstream_timeout",
                e.to_string(),
            ),
            ParseError::Upstream(m) => ApiError::new(
                StatusCode::BAD_GATEWAY,
                "upstream_error",
                format!("upstream error: {m}"),
            ),
            ParseError::Internal(m) => internal(m),
        }
    }
}

impl From<OperatorError> for ApiError {
    fn from(e: OperatorError) -> Self {
        match e {
            OperatorError::NotFound(what, _) => ApiError::new(
                StatusCode::NOT_FOUND,
                match what {
                    "key" => "key_not_found",
                    "account" => "account_not_found",
                    _ => "not_found",
                },
                e.to_string(),
            ),
            OperatorError::Invalid(m) => ApiError::invalid_request(m),
            OperatorError::Store(e) => internal(e),
        }
    }
}

impl From<RateLimited> for ApiError {
    fn from(e: RateLimited) -> Self {
        let mut err = ApiError::new(StatusCode::TOO_MANY_REQUESTS, "rate_limited", e.to_string());
        err.retry_after = Some(e.retry_after_secs);
        err
    }
}

/// Internal details go to the log, never to the caller.
pub fn internal(detail: impl std::fmt::Display) -> ApiError {
    tracing::error!(error = %detail, "internal error");
    ApiError::new(
        StatusCode::INTERNAL_SERVER_ERROR,
        "internal_error",
        "internal error",
    )
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({"status": self.status.as_u16(), "data": null, "msg": self.msg, "code": self.code});
        let mut response = (self.status, axum::Json(body)).into_response();
        if let Some(secs) = self.retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        response
    }
}
