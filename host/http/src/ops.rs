//! Operations endpoints: `GET /healthz` and `GET /metrics` (behind the
//! operator token, or on its own address with `--metrics-listen`).

use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::json;

use super::envelope::ApiError;
use super::extract::OperatorToken;
use super::state::AppState;
use mediaparse_core::ErrorCode;

pub fn router() -> Router<Arc<AppState>> {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/metrics", get(metrics))
}

async fn healthz(State(state): State<Arc<AppState>>) -> impl IntoResponse {
    axum::Json(json!({"status": "ok", "extractors": state.services.registry.all().len()}))
}

/// `/metrics` on the main address: behind the operator token (`401`
/// without it, `404` when the admin API is off), or `404` when the metrics
/// have their own address (`--metrics-listen`).
async fn metrics(
    State(state): State<Arc<AppState>>,
    token: Result<OperatorToken, ApiError>,
) -> Response {
    if state.metrics_elsewhere {
        return ApiError::of(ErrorCode::NotFound).into_response();
    }
    match token {
        Ok(OperatorToken) => metrics_text().into_response(),
        Err(e) => e.into_response(),
    }
}

/// The router of `--metrics-listen`: `/metrics` without a token (the
/// address itself is the operator's to protect).
pub fn metrics_router() -> Router {
    Router::new().route("/metrics", get(|| async { metrics_text() }))
}

/// Prometheus text format; see `mediaparse_metrics` for the list.
fn metrics_text() -> impl IntoResponse {
    (
        [(
            axum::http::header::CONTENT_TYPE,
            mediaparse_metrics::CONTENT_TYPE,
        )],
        mediaparse_metrics::global().encode(),
    )
}
