//! The HTTP API (axum): routes, request ids, and the handlers that turn
//! requests into pipeline calls and results into SPEC.md's JSON.

mod account;
pub mod admin;
mod admin_extractors;
mod admin_keys;
pub mod body;
pub mod envelope;
mod parse;
mod request_id;

pub(crate) use parse::authenticate;
pub use request_id::RequestId;

use std::sync::Arc;

use axum::Router;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use serde_json::json;

use crate::state::AppState;
use envelope::ApiError;

pub fn router(state: Arc<AppState>) -> Router {
    Router::new()
        .route("/api/v1/parse", post(parse::common))
        .route("/api/v1/platforms/{platform}/parse", post(parse::platform))
        .route("/api/v1/capabilities", get(capabilities))
        .route("/api/v1/account", get(account::view))
        .merge(admin_keys::router(state.clone()))
        .route("/healthz", get(healthz))
        .route("/metrics", get(metrics))
        .route("/api/v1/admin/extractors", get(admin_extractors::list))
        .merge(crate::openapi::router())
        .merge(crate::mcp::router(state.clone()))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(axum::middleware::from_fn(request_id::middleware))
        .with_state(state)
}

async fn healthz(
    axum::extract::State(state): axum::extract::State<Arc<AppState>>,
) -> impl IntoResponse {
    axum::Json(json!({"status": "ok", "extractors": state.registry.all().len()}))
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

async fn not_found() -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "not_found", "no such endpoint")
}

async fn method_not_allowed() -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        "method not allowed on this endpoint",
    )
}

/// `GET /api/v1/capabilities`: public (no token), the source of truth for billing.
async fn capabilities(
    axum::extract::State(state): axum::extract::State<Arc<AppState>>,
) -> impl IntoResponse {
    axum::Json(json!({"status": 200, "data": capabilities_data(&state), "msg": "success"}))
}

/// `data` of the capabilities answer (also the MCP `get_capabilities` result).
pub fn capabilities_data(state: &AppState) -> serde_json::Value {
    let config = state.config.load();
    // The loaded platforms, and removed ones as unavailable (the catalogue).
    let catalogue = state.registry.known();
    let platforms: Vec<_> = catalogue
        .iter()
        .map(|m| {
            let p = m.id.as_str();
            let ext = state.registry.get(p);
            json!({
                "id": p,
                "enabled": ext.is_some() && config.enabled(p),
                "extractorVersion": ext.as_ref().map(|e| e.info.version.clone()),
                "urlShapes": ext.as_ref().map(|e| e.info.url_shapes.clone()).unwrap_or_default(),
                "credits": crate::billing::price(m, &config),
            })
        })
        .collect();
    json!({
        "apiVersion": "1.0.0",
        "platforms": platforms,
        "billing": {
            "unit": "credit",
            "chargedWhen": "a parse returns at least one image, video or audio URL; failures and no-media results cost 0",
            "prices": crate::billing::price_table(&catalogue, &config),
        },
        "platformDataVersion": "1",
    })
}
