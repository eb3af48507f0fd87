//! `GET /api/v1/admin/extractors` (operator token): what every platform is
//! running, where it came from, and why a newer file was refused.

use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};

use super::extract::OperatorToken;
use super::state::AppState;

pub fn router() -> Router<Arc<AppState>> {
    Router::new().route("/api/v1/admin/extractors", get(list))
}

async fn list(_: OperatorToken, State(state): State<Arc<AppState>>) -> Response {
    axum::Json(json!({"status": 200, "data": listing(&state), "msg": "success"})).into_response()
}

fn time(unix_s: i64) -> Value {
    chrono::DateTime::from_timestamp(unix_s, 0)
        .map(|t| Value::String(t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)))
        .unwrap_or(Value::Null)
}

pub(super) fn listing(state: &AppState) -> Value {
    let registry = &state.services.registry;
    let config = state.services.config.load();
    let failures = registry.failures();
    let error = |stem: &str| {
        failures
            .get(stem)
            .map(|f| json!({"message": f.message, "at": time(f.at_unix_s)}))
            .unwrap_or(Value::Null)
    };
    let known = registry.known();
    let mut extractors: Vec<Value> = known
        .iter()
        .map(|m| {
            let p = m.id.as_str();
            let ext = registry.get(p);
            let enabled = config.enabled(p);
            let status = match (&ext, enabled) {
                (Some(_), true) => "serving",
                (Some(_), false) => "disabled",
                (None, _) => "missing",
            };
            json!({
                "platform": p,
                "name": m.name,
                "status": status,
                "enabled": enabled && ext.is_some(),
                "version": ext.as_ref().map(|e| e.info.version.clone()),
                "witVersion": ext.as_ref().map(|e| e.wit_version.clone()),
                "sha256": ext.as_ref().map(|e| e.sha256.clone()),
                "loadedAt": ext.as_ref().map(|e| time(e.loaded_at_unix_s)),
                "source": ext.as_ref().map(|e| e.source.display().to_string()),
                "compiledFrom": ext.as_ref().map(|e| e.compiled_from),
                "loadMs": ext.as_ref().map(|e| e.load_ms),
                "lastError": error(p),
                // By label only: exit URLs are secrets.
                "exits": state.services.exits.status(p, &config.exits(p)),
                "sessions": state.services.sessions.status(p, &config.sessions(p)),
            })
        })
        .collect();
    // Files of platforms that never loaded are refused; list them too.
    for stem in failures.keys().filter(|s| !known.contains(s)) {
        extractors.push(json!({
            "platform": stem, "name": null, "status": "refused", "enabled": false, "version": null,
            "witVersion": null, "sha256": null, "loadedAt": null, "source": null,
            "compiledFrom": null, "loadMs": null, "lastError": error(stem),
        }));
    }
    let cs = state.config_source.status();
    json!({
        "extractors": extractors,
        "witMajor": mediaparse_sdk::WIT_MAJOR,
        "compiledCache": registry.cache_dir().map(|d| d.display().to_string()),
        "config": {
            "path": state.config_source.path.as_ref().map(|p| p.display().to_string()),
            "sha256": cs.sha256,
            "loadedAt": cs.loaded_at_unix_s.map(time),
            "lastError": cs.last_error.map(|(m, at)| json!({"message": m, "at": time(at)})),
            // `[platforms.<id>]` sections of platforms not loaded: they apply
            // when one arrives (and show a typo).
            "unloadedPlatforms": config.platforms.keys().filter(|p| !known.contains(p)).collect::<Vec<_>>(),
        },
    })
}
