//! The tunnel's HTTP door (a parse answer's media URLs are rewritten into
//! tunnel URLs by the parse call, `call/`):
//! `GET|HEAD /api/v1/tunnel/{token}`, which needs no `Authorization`: the
//! token is the capability (so `<video src>` works), and
//! `GET /api/v1/tunnel/merge?video={token}&audio={token}` (one MP4 by ffmpeg).

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use mediaparse_sdk::Header;

use mediaparse_core::ErrorCode;
use mediaparse_tunnel::media_type;
use mediaparse_tunnel::merge::{self, MergeError};
use mediaparse_tunnel::stream::{self, Sources};

use super::envelope::{ApiError, internal};
use super::state::AppState;

pub fn router() -> Router<Arc<AppState>> {
    // `get` answers HEAD too; the handler sends no body then.
    Router::new()
        .route("/api/v1/tunnel/merge", get(merge))
        .route("/api/v1/tunnel/{token}", get(tunnel))
        .layer(axum::middleware::map_response(security_headers))
}

/// Every tunnel answer (media, merge, error) is served from the console's
/// origin: never sniffed, never a document that runs (see `tunnel::media_type`).
async fn security_headers(mut response: Response) -> Response {
    for (name, value) in media_type::SECURITY_HEADERS {
        response
            .headers_mut()
            .insert(name, axum::http::HeaderValue::from_static(value));
    }
    response
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct MergeQuery {
    video: String,
    audio: String,
}

/// One fragmented MP4 from a video and an audio token (both must open).
async fn merge(
    State(state): State<Arc<AppState>>,
    q: Result<Query<MergeQuery>, QueryRejection>,
) -> Response {
    let settings = &state.tunnel;
    if settings.merge.ffmpeg.is_none() {
        return ApiError::of(ErrorCode::MergeUnavailable).into_response();
    }
    let Query(q) = match q {
        Ok(q) => q,
        Err(e) => {
            return ApiError::invalid_request(format!(
                "merge needs `video` and `audio` tunnel tokens: {e}"
            ))
            .into_response();
        }
    };
    let now = mediaparse_core::clock::unix_now_s();
    for token in [&q.video, &q.audio] {
        if let Err(e) = settings.keys.open(token, now) {
            let code = stream::TunnelError::from(e).code();
            return ApiError::of(code).into_response();
        }
    }
    match merge::start(&settings.merge, &q.video, &q.audio).await {
        Ok(body) => Response::builder()
            .status(StatusCode::OK)
            .header("content-type", "video/mp4")
            .body(Body::from_stream(body))
            .unwrap_or_else(|e| internal(e).into_response()),
        Err(e) => {
            tracing::info!(error = %e, "tunnel merge refused");
            let code = match e {
                MergeError::Unavailable => ErrorCode::MergeUnavailable,
                MergeError::Busy => ErrorCode::Overloaded,
                MergeError::Timeout => ErrorCode::UpstreamTimeout,
                MergeError::Spawn(_) | MergeError::Failed(_) => ErrorCode::UpstreamError,
            };
            ApiError::of(code).into_response()
        }
    }
}

async fn tunnel(
    State(state): State<Arc<AppState>>,
    Path(token): Path<String>,
    method: Method,
    headers: HeaderMap,
) -> Response {
    let client_headers: Vec<Header> = headers
        .iter()
        .filter_map(|(name, value)| Some(Header::new(name.as_str(), value.to_str().ok()?)))
        .collect();
    let config = state.services.config.load();
    let services = &state.services;
    let sources = Sources {
        settings: &state.tunnel,
        registry: &services.registry,
        config: &config,
        store: &services.store,
        exits: &services.exits,
        pacer: &services.pacer,
        now: mediaparse_core::clock::unix_now_s(),
        key_clock_s: services.clock.auth_now_s(),
    };
    let streamed =
        match stream::serve(&sources, &token, method == Method::HEAD, &client_headers).await {
            Ok(s) => s,
            Err(e) => {
                let code = e.code();
                // The detail may name the upstream URL or host: logged, never answered.
                tracing::info!(code = code.as_str(), error = %e, "tunnel refused");
                let mut err = ApiError::of(code);
                if let Some(secs) = e.retry_after_secs() {
                    err.retry_after = Some(secs.max(1));
                }
                return err.into_response();
            }
        };
    tracing::info!(platform = %streamed.claims.platform, status = streamed.status, "tunnel");
    let mut builder = Response::builder()
        .status(StatusCode::from_u16(streamed.status).unwrap_or(StatusCode::BAD_GATEWAY));
    for (name, value) in &streamed.headers {
        builder = builder.header(*name, value);
    }
    let body = match streamed.body {
        Some(stream) => Body::from_stream(stream),
        None => Body::empty(),
    };
    builder
        .body(body)
        .unwrap_or_else(|e| internal(e).into_response())
}
