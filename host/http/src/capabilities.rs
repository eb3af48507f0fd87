//! `GET /api/v1/capabilities`: public (no token), the source of truth for billing.

use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::response::IntoResponse;
use axum::routing::get;
use serde_json::json;

use super::state::AppState;
use mediaparse_billing as billing;

pub fn router() -> Router<Arc<AppState>> {
    Router::new().route("/api/v1/capabilities", get(capabilities))
}

async fn capabilities(State(state): State<Arc<AppState>>) -> impl IntoResponse {
    axum::Json(json!({"status": 200, "data": capabilities_data(&state), "msg": "success"}))
}

/// `data` of the capabilities answer (also the MCP `get_capabilities` result).
pub fn capabilities_data(state: &AppState) -> serde_json::Value {
    let services = &state.services;
    let config = services.config.load();
    // The loaded platforms, and removed ones as unavailable (the catalogue).
    let catalogue = services.registry.known();
    let platforms: Vec<_> = catalogue
        .iter()
        .map(|m| {
            let p = m.id.as_str();
            let ext = services.registry.get(p);
            json!({
                "id": p,
                "enabled": ext.is_some() && config.enabled(p),
                "extractorVersion": ext.as_ref().map(|e| e.info.version.clone()),
                "urlShapes": ext.as_ref().map(|e| e.info.url_shapes.clone()).unwrap_or_default(),
                "credits": billing::price(m, config.price_override(p)),
            })
        })
        .collect();
    json!({
        "apiVersion": "1.0.0",
        "platforms": platforms,
        "billing": {
            "unit": "credit",
            "chargedWhen": "a parse returns at least one image, video or audio URL; failures and no-media results cost 0",
            "prices": billing::price_table(&catalogue, |id| config.price_override(id)),
        },
        "platformDataVersion": "1",
    })
}
