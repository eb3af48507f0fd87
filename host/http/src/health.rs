//! Platform health over HTTP (`parse/health`):
//!
//! - `GET /api/v1/status` — public, no token: each platform's state
//!   (`ok`, `degraded`, `broken`, `unknown`) and nothing more; cacheable for
//!   a few seconds.
//! - `GET /api/v1/admin/health` — operator token: per platform the state,
//!   its reason, the window's counts, the breaker and until when it
//!   refuses, the last platform-side failures and the last canary.
//! - `GET /api/v1/admin/failures[?platform=P]` — operator token: the failing
//!   parses kept as fixture cases (`authoring/failures.rs`), newest first,
//!   each with the command that exports it.
//!
//! Both describe themselves for the OpenAPI documents ([`public_openapi`],
//! [`admin_openapi`]).

use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Map, Value, json};

use super::extract::OperatorToken;
use super::state::AppState;
use mediaparse_core::clock::{rfc3339, unix_now_s};
use mediaparse_parse::health::HealthState;

/// How long a client or proxy may reuse a status answer.
const STATUS_MAX_AGE_SECS: u32 = 5;

pub fn router() -> Router<Arc<AppState>> {
    Router::new()
        .route("/api/v1/status", get(status))
        .route("/api/v1/admin/health", get(admin_health))
        .route("/api/v1/admin/failures", get(admin_failures))
}

#[derive(serde::Deserialize)]
struct FailuresQuery {
    platform: Option<String>,
}

/// The command line that writes failure `id` as a fixture case.
pub fn export_command(id: &str) -> String {
    format!("mediaparse failures export {id} --to extractors/<platform>/fixtures/{id}")
}

async fn admin_failures(
    _: OperatorToken,
    State(state): State<Arc<AppState>>,
    axum::extract::Query(query): axum::extract::Query<FailuresQuery>,
) -> Response {
    let dir = state
        .services
        .failures
        .as_ref()
        .map(|sink| sink.dir().to_path_buf());
    let platform = query.platform;
    // Blocks: reads the kept failure files on disk (not a store call).
    let listed = tokio::task::spawn_blocking(move || match dir {
        Some(dir) => mediaparse_authoring::failures::list(&dir, platform.as_deref()),
        None => Ok(Vec::new()),
    })
    .await;
    let kept = match listed {
        Ok(Ok(kept)) => kept,
        Ok(Err(e)) => {
            return mediaparse_core::api_error::internal(format!("kept failures unreadable: {e}"))
                .into_response();
        }
        Err(e) => {
            return mediaparse_core::api_error::internal(format!("kept failures unreadable: {e}"))
                .into_response();
        }
    };
    let failures: Vec<Value> = kept
        .iter()
        .map(|f| {
            json!({
                "id": f.id,
                "platform": f.platform,
                "code": f.code,
                "message": f.message,
                "input": f.input,
                "at": rfc3339(f.at_unix_s),
                "exchanges": f.exchanges,
                "bytes": f.bytes,
                "export": export_command(&f.id),
            })
        })
        .collect();
    axum::Json(json!({"status": 200, "data": {"failures": failures}, "msg": "success"}))
        .into_response()
}

async fn status(State(state): State<Arc<AppState>>) -> Response {
    let services = &state.services;
    let config = services.config.load();
    let now = Instant::now();
    let platforms: Vec<Value> = services
        .registry
        .known()
        .iter()
        .map(|m| {
            let p = m.id.as_str();
            let health = services.health.state(p, &config.health_policy(p), now);
            json!({"id": p, "state": health.as_str()})
        })
        .collect();
    (
        [(
            header::CACHE_CONTROL,
            format!("public, max-age={STATUS_MAX_AGE_SECS}"),
        )],
        axum::Json(json!({"status": 200, "data": {"platforms": platforms}, "msg": "success"})),
    )
        .into_response()
}

async fn admin_health(_: OperatorToken, State(state): State<Arc<AppState>>) -> Response {
    let services = &state.services;
    let config = services.config.load();
    let (now, unix_s) = (Instant::now(), unix_now_s());
    let platforms: Vec<Value> = services
        .registry
        .known()
        .iter()
        .map(|m| {
            let p = m.id.as_str();
            let policy = config.health_policy(p);
            let v = services.health.view(p, &policy, now);
            let until = v
                .breaker
                .retry_after
                .map(|d| rfc3339(unix_s + d.as_secs_f64().ceil() as i64));
            json!({
                "platform": p,
                "state": v.state.as_str(),
                "reason": v.reason,
                "window": {
                    "parses": v.tally.parses,
                    "failures": v.tally.failures,
                    "byCode": v.tally.by_code,
                    "maxParses": policy.window_parses,
                    "maxAgeSecs": policy.window.as_secs(),
                },
                "breaker": {
                    "enabled": v.breaker.enabled,
                    "state": v.breaker.phase,
                    "until": until,
                    "retryAfterSecs": v.breaker.retry_after.map(|d| d.as_secs_f64().ceil() as u64),
                    "cooldownSecs": v.breaker.cooldown.map(|d| d.as_secs_f64()),
                    "opens": v.breaker.opens,
                },
                "lastFailures": v.last_failures.iter().map(|f| json!({
                    "code": f.code,
                    "message": f.message,
                    "at": rfc3339(f.at_unix_s),
                })).collect::<Vec<_>>(),
                "lastCanary": v.last_canary.as_ref().map(|c| json!({
                    "url": c.url,
                    "outcome": c.outcome,
                    "detail": c.detail,
                    "at": rfc3339(c.at_unix_s),
                })),
            })
        })
        .collect();
    axum::Json(json!({"status": 200, "data": {"platforms": platforms}, "msg": "success"}))
        .into_response()
}

fn states() -> Value {
    json!(HealthState::ALL.map(HealthState::as_str))
}

/// `/api/v1/status` for the public document: its path and its `Status` schema.
pub fn public_openapi() -> (Value, Value) {
    let path = json!({"get": {
        "tags": ["service"],
        "operationId": "status",
        "summary": "Health of each platform",
        "description": "Public (no token). Each platform's state from its recent parses: `ok`, `degraded` (from 30 % platform-side failures by default), `broken` (from 80 %: its parses answer `503 platform_unavailable` at once until a cool-down ends), `unknown` (too few recent parses). No details; answers may be cached for a few seconds.",
        "security": [],
        "responses": {"200": {
            "description": "The state of every platform.",
            "headers": {"Cache-Control": {
                "description": "`public, max-age=<seconds>`.",
                "required": true,
                "schema": {"type": "string"},
            }},
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Status"}}},
        }},
    }});
    let schema = json!({
        "type": "object",
        "required": ["status", "data", "msg"],
        "properties": {
            "status": {"type": "integer", "enum": [200]},
            "data": {
                "type": "object",
                "required": ["platforms"],
                "properties": {"platforms": {"type": "array", "items": {
                    "type": "object",
                    "required": ["id", "state"],
                    "properties": {
                        "id": {"type": "string", "description": "Platform id."},
                        "state": {"type": "string", "enum": states()},
                    },
                    "additionalProperties": false,
                }}},
                "additionalProperties": false,
            },
            "msg": {"type": "string", "enum": ["success"]},
        },
        "additionalProperties": false,
    });
    (path, schema)
}

/// `/api/v1/admin/health` for the admin document: its paths and schemas.
pub fn admin_openapi() -> (Map<String, Value>, Map<String, Value>) {
    let error = |text: &str| {
        json!({
            "description": text,
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorEnvelope"}}},
        })
    };
    let seconds = |description: &str| json!({"type": ["number", "null"], "minimum": 0, "description": description});
    let platform = json!({
        "type": "object",
        "required": ["platform", "state", "reason", "window", "breaker", "lastFailures"],
        "properties": {
            "platform": {"type": "string"},
            "state": {"type": "string", "enum": states()},
            "reason": {"type": "string", "description": "Why: the recent parses and the platform-side failure codes among them, or why the breaker is open."},
            "window": {
                "type": "object",
                "required": ["parses", "failures", "byCode", "maxParses", "maxAgeSecs"],
                "properties": {
                    "parses": {"type": "integer", "minimum": 0, "description": "Counted parses in the window (a caller's own failures and cache hits are not counted)."},
                    "failures": {"type": "integer", "minimum": 0, "description": "Of those, failures on the platform's side."},
                    "byCode": {"type": "object", "additionalProperties": {"type": "integer"}},
                    "maxParses": {"type": "integer", "description": "`[health] window_parses`."},
                    "maxAgeSecs": {"type": "integer", "description": "`[health] window_secs`."},
                },
            },
            "breaker": {
                "type": "object",
                "required": ["enabled", "state", "until", "retryAfterSecs", "cooldownSecs", "opens"],
                "properties": {
                    "enabled": {"type": "boolean", "description": "`[platforms.<id>] breaker` is on."},
                    "state": {"type": "string", "enum": ["closed", "open", "half_open"]},
                    "until": {"type": ["string", "null"], "format": "date-time", "description": "While open: when parses may try again."},
                    "retryAfterSecs": {"type": ["integer", "null"], "minimum": 0},
                    "cooldownSecs": seconds("The cool-down of the current open (doubled after each failed try)."),
                    "opens": {"type": "integer", "minimum": 0, "description": "Times it opened since the service started."},
                },
            },
            "lastFailures": {"type": "array", "description": "The last platform-side failures, newest first (configured secrets removed).", "items": {
                "type": "object",
                "required": ["code", "message", "at"],
                "properties": {
                    "code": {"type": "string"},
                    "message": {"type": "string"},
                    "at": {"type": "string", "format": "date-time"},
                },
            }},
            "lastCanary": {
                "type": ["object", "null"],
                "description": "The platform's last canary parse (null: none ran since the service started).",
                "required": ["url", "outcome", "detail", "at"],
                "properties": {
                    "url": {"type": "string"},
                    "outcome": {"type": "string", "description": "`ok`, `unmet` (answered without what the canary expects), or the error code."},
                    "detail": {"type": "string"},
                    "at": {"type": "string", "format": "date-time"},
                },
            },
        },
    });
    let failure = json!({
        "type": "object",
        "required": ["id", "platform", "code", "message", "input", "at", "exchanges", "bytes", "export"],
        "properties": {
            "id": {"type": "string"},
            "platform": {"type": "string"},
            "code": {"type": "string", "description": "The platform-side error code the extractor reported."},
            "message": {"type": "string", "description": "Secrets scrubbed."},
            "input": {"type": "string"},
            "at": {"type": "string", "format": "date-time"},
            "exchanges": {"type": "integer", "minimum": 0},
            "bytes": {"type": "integer", "minimum": 0, "description": "Request and response bodies together."},
            "export": {"type": "string", "description": "The command that writes it as a fixture case (`mediaparse replay` reproduces the failure)."},
        },
    });
    let mut schemas = Map::new();
    let mut paths = Map::new();
    schemas.insert("PlatformHealth".into(), platform);
    schemas.insert("KeptFailure".into(), failure);
    paths.insert(
        "/api/v1/admin/failures".into(),
        json!({"get": {
            "tags": ["admin"],
            "operationId": "adminFailures",
            "summary": "Failing parses kept as fixture cases",
            "description": "The last failing parses of each platform (bounded by `[health] failures_per_platform` and `failure_max_bytes`), kept with their upstream exchanges, secrets scrubbed, newest first.",
            "security": [{"operatorToken": []}],
            "parameters": [{"name": "platform", "in": "query", "required": false, "schema": {"type": "string"}, "description": "Only this platform's."}],
            "responses": {
                "200": {
                    "description": "The kept failures.",
                    "content": {"application/json": {"schema": {
                        "type": "object",
                        "required": ["status", "data", "msg"],
                        "properties": {
                            "status": {"type": "integer", "enum": [200]},
                            "data": {"type": "object", "required": ["failures"], "properties": {
                                "failures": {"type": "array", "items": {"$ref": "#/components/schemas/KeptFailure"}},
                            }},
                            "msg": {"type": "string", "enum": ["success"]},
                        },
                    }}},
                },
                "401": error("`invalid_token`: the operator token is missing or wrong."),
                "404": error("`not_found`: the admin API is off (no operator token configured)."),
            },
        }}),
    );
    paths.insert(
        "/api/v1/admin/health".into(),
        json!({"get": {
            "tags": ["admin"],
            "operationId": "adminHealth",
            "summary": "Each platform's health, breaker and recent failures",
            "security": [{"operatorToken": []}],
            "responses": {
                "200": {
                    "description": "Every platform's health.",
                    "content": {"application/json": {"schema": {
                        "type": "object",
                        "required": ["status", "data", "msg"],
                        "properties": {
                            "status": {"type": "integer", "enum": [200]},
                            "data": {"type": "object", "required": ["platforms"], "properties": {
                                "platforms": {"type": "array", "items": {"$ref": "#/components/schemas/PlatformHealth"}},
                            }},
                            "msg": {"type": "string", "enum": ["success"]},
                        },
                    }}},
                },
                "401": error("`invalid_token`: the operator token is missing or wrong."),
                "404": error("`not_found`: the admin API is off (no operator token configured)."),
            },
        }}),
    );
    (paths, schemas)
}
