//! `POST /api/v1/parse` and `POST /api/v1/platforms/{platform}/parse`.
//! The extractors run in order — key (401), rate limit (429), path platform
//! (404), body (415/413/400) — then the parse layer does the rest.
//! `?delivery=direct|tunnel` (default: the key's) picks how media URLs are
//! delivered (`http/tunnel.rs`).

use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Extension, FromRequestParts, Path, Query, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde::Deserialize;
use serde_json::json;

use super::body::ParseInput;
use super::cache_status;
use super::envelope::{ApiError, CREDITS_HEADER, credits_zero_unless_set};
use super::extract::{ApiKey, JsonBody};
use super::idempotency::{self, Answer, RequestIds};
use super::rate_headers;
use super::request_id::{ClientRequestId, RequestId};
use super::state::AppState;
use crate::core::ErrorCode;
use crate::parse::{self, Parsed};
use crate::store::KeyRecord;

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

type QueryArg = Result<Query<ParseQuery>, QueryRejection>;

#[allow(clippy::too_many_arguments)]
async fn common(
    State(state): State<Arc<AppState>>,
    Extension(id): Extension<RequestId>,
    client_id: Option<Extension<ClientRequestId>>,
    headers: HeaderMap,
    ParseKey(key): ParseKey,
    query: QueryArg,
    JsonBody(ParseInput(input)): JsonBody<ParseInput>,
) -> Response {
    let ids = RequestIds::of(&id, client_id.as_ref().map(|c| &c.0));
    guarded(&state, &headers, &ids, &key, query, &input, None).await
}

// An axum handler: one argument per extractor.
#[allow(clippy::too_many_arguments)]
async fn platform(
    State(state): State<Arc<AppState>>,
    Extension(id): Extension<RequestId>,
    client_id: Option<Extension<ClientRequestId>>,
    headers: HeaderMap,
    ParseKey(key): ParseKey,
    PathPlatform(platform): PathPlatform,
    query: QueryArg,
    JsonBody(ParseInput(input)): JsonBody<ParseInput>,
) -> Response {
    let ids = RequestIds::of(&id, client_id.as_ref().map(|c| &c.0));
    guarded(&state, &headers, &ids, &key, query, &input, Some(platform)).await
}

/// A parse under its `Idempotency-Key`, if the request has one (`http/idempotency.rs`).
#[allow(clippy::too_many_arguments)]
async fn guarded(
    state: &AppState,
    headers: &HeaderMap,
    ids: &RequestIds,
    key: &KeyRecord,
    query: QueryArg,
    input: &str,
    path_platform: Option<String>,
) -> Response {
    let cache = cache_status::cache_use(headers);
    let idempotency_key = match idempotency::from_headers(headers) {
        Ok(k) => k,
        Err(e) => return e.into_response(),
    };
    let Some(idempotency_key) = idempotency_key else {
        let response = run(state, ids.ledger(), key, query, cache, input, path_platform).await;
        idempotency::record_client_id(&state.services.store, ids, charged_of(&response)).await;
        return response;
    };
    let delivery = match &query {
        Ok(Query(q)) => q.delivery.clone().unwrap_or_default(),
        Err(e) => e.body_text(),
    };
    let fingerprint = idempotency::fingerprint(&[
        "rest",
        path_platform.as_deref().unwrap_or(""),
        &delivery,
        input,
    ]);
    let mut headers_of_run = None;
    let headers_slot = &mut headers_of_run;
    let answer = idempotency::once(
        &state.services.store,
        key,
        &idempotency_key,
        &fingerprint,
        ids,
        |request_id| async move {
            let response = run(state, &request_id, key, query, cache, input, path_platform).await;
            let (stored, headers) = idempotency::stored_of(response).await;
            *headers_slot = Some(headers);
            stored
        },
    )
    .await;
    match answer {
        Ok(Answer::Replayed(stored)) => idempotency::http_response(stored, true),
        Ok(Answer::Fresh(stored)) => {
            let mut response = idempotency::http_response(stored, false);
            // Keep the run's own headers (Retry-After of an overload, ...).
            if let Some(headers) = headers_of_run {
                for (name, value) in &headers {
                    if !response.headers().contains_key(name) {
                        response.headers_mut().insert(name.clone(), value.clone());
                    }
                }
            }
            response
        }
        Err(e) => e.into_response(),
    }
}

/// A parse as `key` from inside the service (the console's playground):
/// the same run and answer as the REST endpoints, without the HTTP request.
/// It is charged under `ids`' server-minted ledger id, never a client's.
pub(super) async fn run_as(
    state: &AppState,
    ids: &RequestIds,
    key: &KeyRecord,
    delivery: Option<&str>,
    input: &str,
    path_platform: Option<String>,
) -> Response {
    let query = Ok(Query(ParseQuery {
        delivery: delivery.map(String::from),
    }));
    let cache = parse::CacheUse::Allowed;
    let response = run(state, ids.ledger(), key, query, cache, input, path_platform).await;
    idempotency::record_client_id(&state.services.store, ids, charged_of(&response)).await;
    response
}

/// The credits an answer says it cost (`X-Credits-Charged`; none: 0).
fn charged_of(response: &Response) -> i64 {
    response
        .headers()
        .get(CREDITS_HEADER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

async fn run(
    state: &AppState,
    request_id: &str,
    key: &KeyRecord,
    query: QueryArg,
    cache: parse::CacheUse,
    input: &str,
    path_platform: Option<String>,
) -> Response {
    let started = Instant::now();
    let delivery = match query {
        Ok(Query(q)) => super::tunnel::resolve(state, key, q.delivery.as_deref()).await,
        Err(e) => Err(ApiError::invalid_request(format!("invalid query: {e}"))),
    };
    let delivery = match delivery {
        Ok(d) => d,
        Err(e) => return e.into_response(),
    };
    let result = parse::parse_with(
        &state.services,
        key,
        input,
        path_platform.as_deref(),
        request_id,
        cache,
    )
    .await;
    let elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
    match result {
        Ok(mut parsed) => {
            tracing::info!(platform = %parsed.platform, charged = parsed.charged, delivery = delivery.as_str(), elapsed_ms, "parsed");
            super::tunnel::apply(state, key, delivery, &mut parsed);
            let outcome = parsed.cache;
            let mut response = success(parsed, path_platform.is_some());
            cache_status::set(&mut response, outcome);
            response
        }
        Err(e) => {
            let e = ApiError::from(e);
            tracing::info!(
                code = e.wire(),
                status = e.code.status(),
                elapsed_ms,
                "parse failed"
            );
            e.into_response()
        }
    }
}

fn success(parsed: Parsed, with_platform_data: bool) -> Response {
    let body = if parsed.media.is_empty() {
        json!({"status": 200, "data": null, "msg": "the link parsed but no downloadable media could be returned", "code": "304"})
    } else if with_platform_data {
        json!({
            "status": 200,
            "data": {"media": parsed.media.to_json(&parsed.platform), "platformData": parsed.platform_data, "platformDataVersion": "1"},
            "msg": "success",
        })
    } else {
        json!({"status": 200, "data": parsed.media.to_json(&parsed.platform), "msg": "success"})
    };
    let mut response = (StatusCode::OK, axum::Json(body)).into_response();
    response
        .headers_mut()
        .insert(CREDITS_HEADER, HeaderValue::from(parsed.charged));
    response
}
