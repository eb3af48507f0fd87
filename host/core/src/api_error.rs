//! The error as every door shows it: a row of the error table
//! ([`super::errors`]), a message for the caller and, where the row says
//! so, how long to wait before a retry. The HTTP envelope, an MCP tool
//! error and a stored idempotent answer are each one rendering of it.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::json;

use super::errors::{ErrorCode, Retry};

#[derive(Clone, Debug, PartialEq, Eq)]
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

    /// The same error, asking the caller to wait `secs` (at least 1) first.
    pub fn retry_after(mut self, secs: u64) -> Self {
        self.retry_after = Some(secs.max(1));
        self
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

/// The database cannot be reached: 503 with `Retry-After`, the cause logged.
pub fn unavailable(detail: impl std::fmt::Display) -> ApiError {
    tracing::warn!(error = %detail, "database unavailable");
    ApiError::of(ErrorCode::DatabaseUnavailable)
}

/// Internal details go to the log, never to the caller.
pub fn internal(detail: impl std::fmt::Display) -> ApiError {
    tracing::error!(error = %detail, "internal error");
    ApiError::of(ErrorCode::Internal)
}

/// Stored form: the wire code, so a stored answer reads back after the
/// table grows.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Stored {
    code: String,
    msg: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    retry_after: Option<u64>,
}

impl Serialize for ApiError {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Stored {
            code: self.wire().to_string(),
            msg: self.msg.clone(),
            retry_after: self.retry_after,
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for ApiError {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let stored = Stored::deserialize(d)?;
        let code = ErrorCode::from_wire(&stored.code).ok_or_else(|| {
            serde::de::Error::custom(format!("unknown error code {:?}", stored.code))
        })?;
        Ok(ApiError {
            code,
            msg: stored.msg,
            retry_after: stored.retry_after,
        })
    }
}

/// The REST envelope with the row's status and, when set, `Retry-After`.
#[cfg(feature = "http")]
impl axum_core::response::IntoResponse for ApiError {
    fn into_response(self) -> axum_core::response::Response {
        use http::{HeaderValue, StatusCode, header};
        let status =
            StatusCode::from_u16(self.code.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut response =
            http::Response::new(axum_core::body::Body::from(self.envelope().to_string()));
        *response.status_mut() = status;
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        if let Some(secs) = self.retry_after {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stored_error_reads_back_the_same() {
        let e = ApiError::new(ErrorCode::UpstreamRateLimited, "slow down").retry_after(7);
        let text = serde_json::to_string(&e).unwrap();
        assert_eq!(serde_json::from_str::<ApiError>(&text).unwrap(), e);
        let e = ApiError::of(ErrorCode::InsufficientCredits);
        let text = serde_json::to_string(&e).unwrap();
        assert_eq!(serde_json::from_str::<ApiError>(&text).unwrap(), e);
        assert!(serde_json::from_str::<ApiError>(r#"{"code":"no_such","msg":""}"#).is_err());
    }
}
