//! `POST /api/v1/parse` and `POST /api/v1/platforms/{platform}/parse`.

use std::sync::Arc;
use std::time::Instant;

use axum::body::Body;
use axum::extract::{Extension, Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::body::read_parse_body;
use super::envelope::{ApiError, CREDITS_HEADER};
use super::request_id::RequestId;
use crate::pipeline::{self, Parsed};
use crate::state::AppState;
use crate::store::KeyRecord;

pub async fn common(
    State(state): State<Arc<AppState>>,
    Extension(id): Extension<RequestId>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    run(&state, &id.0, &headers, body, None).await
}

pub async fn platform(
    State(state): State<Arc<AppState>>,
    Extension(id): Extension<RequestId>,
    Path(platform): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    run(&state, &id.0, &headers, body, Some(platform)).await
}

/// Auth first, then the key's rate limit, then the path's platform, then the body, then the parse.
async fn run(
    state: &Arc<AppState>,
    request_id: &str,
    headers: &HeaderMap,
    body: Body,
    path_platform: Option<String>,
) -> Response {
    let started = Instant::now();
    let result = async {
        let key = authenticate(state, headers).await?;
        state
            .rate_limits
            .check(&key, state.config.load().limits.rate_limit_per_minute)?;
        if let Some(p) = &path_platform
            && !state.registry.knows(p)
        {
            return Err(ApiError::new(
                StatusCode::NOT_FOUND,
                "unknown_platform",
                format!("{p:?} is not a platform id"),
            ));
        }
        let input = read_parse_body(headers, body, state.max_body_bytes).await?;
        let parsed =
            pipeline::parse(state, &key, &input, path_platform.as_deref(), request_id).await?;
        Ok::<Parsed, ApiError>(parsed)
    }
    .await;
    let elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
    match result {
        Ok(parsed) => {
            tracing::info!(platform = %parsed.platform, charged = parsed.charged, elapsed_ms, "parsed");
            success(parsed, path_platform.is_some())
        }
        Err(e) => {
            tracing::info!(
                code = e.code,
                status = e.status.as_u16(),
                elapsed_ms,
                "parse failed"
            );
            let mut response = e.into_response();
            response
                .headers_mut()
                .insert(CREDITS_HEADER, HeaderValue::from(0));
            response
        }
    }
}

/// The customer key of a request's bearer token (also guards `/mcp`).
pub(crate) async fn authenticate(
    state: &Arc<AppState>,
    headers: &HeaderMap,
) -> Result<KeyRecord, ApiError> {
    let raw = headers
        .get(header::AUTHORIZATION)
        .map(|v| v.to_str().unwrap_or("invalid"));
    let token = crate::auth::bearer(raw)?.to_string();
    let store = state.store.clone();
    let now = state.auth_now();
    tokio::task::spawn_blocking(move || crate::auth::authenticate(&store, &token, now))
        .await
        .map_err(super::envelope::internal)?
        .map_err(ApiError::from)
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
