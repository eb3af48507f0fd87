//! Operations endpoints: `GET /healthz` and `GET /metrics`.

use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::response::IntoResponse;
use axum::routing::get;
use serde_json::json;

use super::state::AppState;

pub fn router() -> Router<Arc<AppState>> {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/metrics", get(metrics))
}

async fn healthz(State(state): State<Arc<AppState>>) -> impl IntoResponse {
    axum::Json(json!({"status": "ok", "extractors": state.services.registry.all().len()}))
}

/// Prometheus text format; see `crate::metrics` for the list.
async fn metrics() -> impl IntoResponse {
    (
        [(
            axum::http::header::CONTENT_TYPE,
            crate::metrics::CONTENT_TYPE,
        )],
        crate::metrics::global().encode(),
    )
}
