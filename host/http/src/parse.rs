//! `POST /api/v1/parse` and `POST /api/v1/platforms/{platform}/parse`.
//! The extractors run in order — key (401), rate limit (429), path platform
//! (404), body (415/413/400) — then the parse layer does the rest.
//! `?delivery=direct|tunnel` (default: the key's) picks how media URLs are
//! delivered. The parse itself is one call (`call/`); this door only builds
//! it from the request and renders its answer.

use std::sync::Arc;

use axum::Router;
use axum::extract::{FromRequestParts, Path, Query, State};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde::Deserialize;

use super::body::ParseInput;
use super::cache_status;
use super::envelope::{ApiError, CREDITS_HEADER, credits_zero_unless_set};
use super::extract::{ApiKey, JsonBody};
use super::idempotency;
use super::rate_headers;
use super::request_id::{ClientRequestId, RequestId};
use super::state::AppState;
use mediaparse_call::{self as call, Door, Idempotency, ParseAnswer, ParseCall, RequestIds};
use mediaparse_core::{Delivery, ErrorCode};
use mediaparse_parse::CacheUse;
use mediaparse_store::KeyRecord;

pub fn router() -> Router<Arc<AppState>> {
    Router::new()
        .route("/api/v1/parse", post(common))
        .route("/api/v1/platforms/{platform}/parse", post(platform))
        // Every parse answer says what it cost, failures (rejections included) 0.
        .layer(axum::middleware::map_response(credits_zero_unless_set))
        // ... and, once the key was counted, where it stands in its rate limit.
        .layer(axum::middleware::from_fn(rate_headers::layer))
}

/// A customer key within its rate limit.
pub struct ParseKey(pub KeyRecord);

impl FromRequestParts<Arc<AppState>> for ParseKey {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &Arc<AppState>,
    ) -> Result<Self, ApiError> {
        let ApiKey(key) = ApiKey::from_request_parts(parts, state).await?;
        let default = state.services.config.load().limits.rate_limit_per_minute;
        let slot = parts.extensions.get::<rate_headers::RateSlot>();
        rate_headers::check(&state.rate_limits, &key, default, slot).await?;
        Ok(ParseKey(key))
    }
}

/// The `{platform}` path segment, a known platform id.
pub struct PathPlatform(pub String);

impl FromRequestParts<Arc<AppState>> for PathPlatform {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &Arc<AppState>,
    ) -> Result<Self, ApiError> {
        let Path(p) = Path::<String>::from_request_parts(parts, state)
            .await
            .map_err(|e| ApiError::invalid_request(e.body_text()))?;
        if !state.services.registry.knows(&p) {
            return Err(ApiError::new(
                ErrorCode::UnknownPlatform,
                format!("{p:?} is not a platform id"),
            ));
        }
        Ok(PathPlatform(p))
    }
}

/// The parse endpoints' query string.
#[derive(Debug, Default, Deserialize)]
pub struct ParseQuery {
    /// `direct` or `tunnel`; absent: the key's default.
    pub delivery: Option<String>,
}

/// What a parse request says besides its key, path and body, read without
/// refusing anything yet: a bad query or idempotency key is refused only
/// after the body was read, as SPEC orders the checks.
pub struct Doorstep {
    pub(super) ids: RequestIds,
    pub(super) cache: CacheUse,
    pub(super) idempotency_key: Result<Option<String>, ApiError>,
    /// The query's `delivery`, as written (fingerprinted) and as understood.
    pub(super) delivery: Result<(String, Option<Delivery>), ApiError>,
}

impl<S: Send + Sync> FromRequestParts<S> for Doorstep {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let id = parts
            .extensions
            .get::<RequestId>()
            .map(|r| r.0.clone())
            .unwrap_or_else(mediaparse_core::ids::new_request_id);
        let client = parts
            .extensions
            .get::<ClientRequestId>()
            .map(|c| c.0.clone());
        let delivery = match Query::<ParseQuery>::from_request_parts(parts, state).await {
            Ok(Query(q)) => match q.delivery {
                None => Ok((String::new(), None)),
                Some(d) => d
                    .parse::<Delivery>()
                    .map(|parsed| (d, Some(parsed)))
                    .map_err(ApiError::invalid_request),
            },
            Err(e) => Err(ApiError::invalid_request(format!(
                "invalid query: {}",
                e.body_text()
            ))),
        };
        Ok(Doorstep {
            ids: RequestIds::of(&id, client.as_deref()),
            cache: cache_status::cache_use(&parts.headers),
            idempotency_key: idempotency::from_headers(&parts.headers),
            delivery,
        })
    }
}

async fn common(
    State(state): State<Arc<AppState>>,
    ParseKey(key): ParseKey,
    step: Doorstep,
    JsonBody(ParseInput(input)): JsonBody<ParseInput>,
) -> Response {
    answer(&state, &key, step, &input, None).await
}

async fn platform(
    State(state): State<Arc<AppState>>,
    ParseKey(key): ParseKey,
    PathPlatform(platform): PathPlatform,
    step: Doorstep,
    JsonBody(ParseInput(input)): JsonBody<ParseInput>,
) -> Response {
    answer(&state, &key, step, &input, Some(&platform)).await
}

/// The REST call for a request, and its answer rendered.
async fn answer(
    state: &AppState,
    key: &KeyRecord,
    step: Doorstep,
    input: &str,
    platform: Option<&str>,
) -> Response {
    let (raw_delivery, delivery) = match step.delivery {
        Ok(d) => d,
        Err(e) => return e.into_response(),
    };
    let idempotency = match step.idempotency_key {
        Ok(k) => k.map(|key| Idempotency {
            fingerprint: idempotency::fingerprint(&[
                "rest",
                platform.unwrap_or(""),
                &raw_delivery,
                input,
            ]),
            key,
        }),
        Err(e) => return e.into_response(),
    };
    let call = ParseCall {
        key,
        door: Door::Rest,
        input,
        platform,
        delivery,
        idempotency,
        cache: step.cache,
        ids: step.ids,
        hold: None,
    };
    render(&call::answer(state.callee(), &call).await)
}

/// A parse answer over HTTP: its status and body, what it cost
/// (`X-Credits-Charged`), how the cache served it (`Cache-Status`), whether
/// it is a replay (`Idempotent-Replayed`), and a refusal's `Retry-After`.
pub fn render(answer: &ParseAnswer) -> Response {
    let status = StatusCode::from_u16(answer.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        answer.body(),
    )
        .into_response();
    let headers = response.headers_mut();
    headers.insert(CREDITS_HEADER, HeaderValue::from(answer.charged));
    if let Some(secs) = answer.error().and_then(|e| e.retry_after) {
        headers.insert(header::RETRY_AFTER, HeaderValue::from(secs));
    }
    if answer.replayed {
        headers.insert(
            idempotency::REPLAYED_HEADER,
            HeaderValue::from_static("true"),
        );
    }
    if let Some(outcome) = answer.cache.filter(|_| answer.error().is_none()) {
        cache_status::set(&mut response, outcome);
    }
    response
}
