//! The request extractors every route shares: the customer key, the
//! operator token and JSON bodies. Each rejects into the error envelope.

use std::sync::Arc;

use axum::extract::{FromRef, FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, header};
use serde::de::DeserializeOwned;
use sha2::{Digest, Sha256};

use super::envelope::ApiError;
use super::state::AppState;
use mediaparse_auth::AuthError;
use mediaparse_core::ErrorCode;
use mediaparse_store::KeyRecord;

fn authorization(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)
        .map(|v| v.to_str().unwrap_or("invalid"))
}

/// The customer key of the request's bearer token: known and not expired
/// (`401 missing_token | invalid_token | token_expired`). A client address
/// with too many unknown or expired tokens is refused first (`429
/// auth_throttled`), and a
/// token that cannot be ours or was refused a moment ago is refused without
/// a database read: a flood of bogus tokens costs the store nothing.
#[derive(Clone, Debug)]
pub struct ApiKey(pub KeyRecord);

impl<S: Send + Sync> FromRequestParts<S> for ApiKey
where
    Arc<AppState>: FromRef<S>,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let state = Arc::<AppState>::from_ref(state);
        let address = state.client_address(&parts.extensions, &parts.headers);
        let failures = &state.guards.api_failures;
        if let Some(address) = address {
            failures.check(address).map_err(auth_throttled)?;
        }
        // Guesses count (unknown or expired tokens); a missing token costs
        // nothing and is not counted.
        let refused = |e: AuthError| {
            if let (Some(address), AuthError::InvalidToken | AuthError::TokenExpired) =
                (address, &e)
            {
                failures.failed(address);
            }
            ApiError::from(e)
        };
        let token = mediaparse_auth::bearer(authorization(&parts.headers)).map_err(refused)?;
        if !mediaparse_auth::plausible_token(token) {
            return Err(refused(AuthError::InvalidToken));
        }
        let hash = mediaparse_auth::hash_token(token);
        if state.guards.unknown_tokens.contains(&hash) {
            return Err(refused(AuthError::InvalidToken));
        }
        let store = state.services.store.clone();
        let now = state.auth_now();
        // A cached key is answered here; only a lookup that needs the
        // database is awaited.
        let found = match mediaparse_auth::authenticate_cached(&store, &hash, now) {
            Some(found) => found,
            None => mediaparse_auth::authenticate_hash_async(&store, &hash, now).await,
        };
        match found {
            Ok(key) => Ok(ApiKey(key)),
            Err(e) => {
                if matches!(e, AuthError::InvalidToken) {
                    state.guards.unknown_tokens.insert(&hash);
                }
                Err(refused(e))
            }
        }
    }
}

/// `429 auth_throttled`, retry after `secs`.
fn auth_throttled(secs: u64) -> ApiError {
    let mut e = ApiError::of(ErrorCode::AuthThrottled);
    e.retry_after = Some(secs);
    e
}

/// The operator token of `/api/v1/admin/` (`404` when the admin API is
/// off, `401` for any other token). Digests are compared so timing says
/// nothing; wrong tokens are counted per client address, and an address
/// with too many is refused before its token is compared (`429 auth_throttled`).
#[derive(Clone, Copy, Debug)]
pub struct OperatorToken;

impl<S: Send + Sync> FromRequestParts<S> for OperatorToken
where
    Arc<AppState>: FromRef<S>,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let state = Arc::<AppState>::from_ref(state);
        let Some(expected) = state.admin_token.as_deref() else {
            return Err(ApiError::new(
                ErrorCode::NotFound,
                "the admin API is not enabled",
            ));
        };
        let address = state.client_address(&parts.extensions, &parts.headers);
        let failures = &state.guards.admin_failures;
        if let Some(address) = address {
            failures.check(address).map_err(auth_throttled)?;
        }
        let failed = || {
            if let Some(address) = address {
                failures.failed(address);
            }
        };
        let token = mediaparse_auth::bearer(authorization(&parts.headers)).inspect_err(|e| {
            if matches!(e, AuthError::InvalidToken) {
                failed();
            }
        })?;
        if Sha256::digest(token.as_bytes()) != Sha256::digest(expected.as_bytes()) {
            failed();
            return Err(ApiError::new(
                ErrorCode::InvalidToken,
                "Unauthorized: not the operator token",
            ));
        }
        Ok(OperatorToken)
    }
}

/// A request body type read from JSON; the only error is its own envelope.
pub trait FromJson: Sized {
    fn from_json(bytes: &[u8]) -> Result<Self, ApiError>;

    /// The largest body read, given the service's cap for one request.
    fn max_bytes(service_cap: usize) -> usize {
        service_cap
    }
}

/// Implement [`FromJson`] with serde for plain body structs.
macro_rules! serde_body {
    ($($t:ty),* $(,)?) => {$(
        impl $crate::extract::FromJson for $t {
            fn from_json(bytes: &[u8]) -> Result<Self, $crate::envelope::ApiError> {
                $crate::extract::deserialize(bytes)
            }
        }
    )*};
}
pub(crate) use serde_body;

/// Serde's reading of a body, its error as `400 invalid_request`.
pub fn deserialize<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    serde_json::from_slice(bytes)
        .map_err(|e| ApiError::invalid_request(format!("invalid body: {e}")))
}

/// A JSON request body: `415` for a non-JSON `Content-Type` (none is
/// accepted), `413` over the service's cap, `400` for what `T` refuses.
#[derive(Debug)]
pub struct JsonBody<T>(pub T);

impl<S: Send + Sync, T: FromJson> FromRequest<S> for JsonBody<T>
where
    Arc<AppState>: FromRef<S>,
{
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, ApiError> {
        let max_bytes = T::max_bytes(Arc::<AppState>::from_ref(state).max_body_bytes);
        if let Some(ct) = request.headers().get(header::CONTENT_TYPE) {
            let ct = ct.to_str().unwrap_or_default().to_ascii_lowercase();
            let essence = ct.split(';').next().unwrap_or_default().trim();
            if essence != "application/json" && !essence.ends_with("+json") {
                return Err(ApiError::of(ErrorCode::UnsupportedMediaType));
            }
        }
        let bytes = axum::body::to_bytes(request.into_body(), max_bytes)
            .await
            .map_err(|e| {
                if super::listener::BodyDeadline::is_in(&e) {
                    ApiError::of(ErrorCode::RequestTimeout)
                } else {
                    ApiError::new(
                        ErrorCode::PayloadTooLarge,
                        format!("request body larger than {max_bytes} bytes"),
                    )
                }
            })?;
        T::from_json(&bytes).map(JsonBody)
    }
}
