//! The admin HTTP API for webhooks, under `/api/v1/admin/`, every route
//! behind [`OperatorToken`](super::extract::OperatorToken):
//!
//! | route | what |
//! |---|---|
//! | `POST /api/v1/admin/keys/{id}/webhook-secret` | a new webhook secret for the key, shown once (replaces the old one) |
//! | `POST /api/v1/admin/keys/{id}/webhook-test` | `{url}`: queue a `webhook.test` event for the key → 202 with the delivery id |
//! | `GET /api/v1/admin/webhooks?key=&account=&limit=` | deliveries, newest first, with every attempt |

use std::sync::Arc;

use axum::Router;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::admin_keys::{Answer, guard, ok, op, query};
use super::envelope::ApiError;
use super::extract::{JsonBody, serde_body};
use super::state::AppState;
use mediaparse_operator::{self as operator, OperatorError};

pub fn router(state: Arc<AppState>) -> Router<Arc<AppState>> {
    Router::new()
        .route(
            "/api/v1/admin/keys/{id}/webhook-secret",
            post(rotate_webhook_secret),
        )
        .route("/api/v1/admin/keys/{id}/webhook-test", post(webhook_test))
        .route("/api/v1/admin/webhooks", get(webhook_deliveries))
        .route_layer(axum::middleware::from_fn_with_state(state, guard))
}

async fn rotate_webhook_secret(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Answer {
    ok(
        StatusCode::OK,
        op(&state, async move |s, now| {
            operator::rotate_webhook_secret(s, &id, now).await
        })
        .await?,
    )
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WebhookTest {
    url: String,
}

/// Queue a `webhook.test` event for key `id` to `url`: what an integrator
/// uses to check a receiver (and its signature check) before relying on it.
async fn webhook_test(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    JsonBody(b): JsonBody<WebhookTest>,
) -> Answer {
    let data = json!({"keyId": id, "message": "a test event sent by the operator"});
    let delivery = state
        .webhooks
        .enqueue(&id, &b.url, "webhook.test", &data)
        .await
        .map_err(webhook_error)?;
    ok(StatusCode::ACCEPTED, json!({"id": delivery}))
}

/// A webhook error as the API answers it: a refused URL or bad event is
/// the caller's mistake (`400`), a missing key `404`.
pub fn webhook_error(e: mediaparse_webhooks::WebhookError) -> ApiError {
    match e {
        mediaparse_webhooks::WebhookError::Store(e) => OperatorError::from(e).into(),
        e => ApiError::invalid_request(e.to_string()),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DeliveriesQuery {
    key: Option<String>,
    account: Option<String>,
    limit: Option<usize>,
}

async fn webhook_deliveries(
    State(state): State<Arc<AppState>>,
    q: Result<Query<DeliveriesQuery>, QueryRejection>,
) -> Answer {
    let q = query(q)?;
    let filter = mediaparse_store::DeliveryFilter {
        key: q.key,
        account: q.account,
        limit: q.limit.unwrap_or(50),
    };
    ok(
        StatusCode::OK,
        op(&state, async move |s, _| {
            operator::webhook_deliveries(s, &filter).await
        })
        .await?,
    )
}

serde_body!(WebhookTest);

/// The operations above and their schemas, for the admin document.
pub fn admin_openapi() -> (Map<String, Value>, Map<String, Value>) {
    let error = |text: &str| {
        json!({
            "description": text,
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorEnvelope"}}},
        })
    };
    let success = |status: u16, data: Value| {
        json!({"application/json": {"schema": {
            "type": "object",
            "required": ["status", "data", "msg"],
            "properties": {
                "status": {"type": "integer", "enum": [status]},
                "data": data,
                "msg": {"type": "string", "enum": ["success"]},
            },
        }}})
    };
    let key_id = json!({"name": "id", "in": "path", "required": true, "schema": {"type": "string"}, "description": "The key's id."});
    let unauthorized = error("`invalid_token`: the operator token is missing or wrong.");
    let off = error(
        "`not_found`: the admin API is off (no operator token configured); `key_not_found`: no such key.",
    );
    let mut schemas = Map::new();
    schemas.insert(
        "WebhookSecret".into(),
        json!({
            "type": "object",
            "required": ["keyId", "secret", "rotated"],
            "properties": {
                "keyId": {"type": "string"},
                "secret": {"type": "string", "pattern": "^whsec_", "description": "`whsec_` and the base64 of the HMAC-SHA256 key. Shown only in this answer; deliveries sent from now on are signed with it alone."},
                "rotated": {"type": "boolean", "description": "An older secret was replaced."},
            },
        }),
    );
    schemas.insert(
        "WebhookDelivery".into(),
        json!({
            "type": "object",
            "required": ["id", "keyId", "account", "url", "eventType", "state", "createdAt", "nextAttemptAt", "finishedAt", "lastError", "attempts"],
            "properties": {
                "id": {"type": "string", "description": "The delivery's id, sent as `webhook-id` with every attempt (receivers deduplicate on it)."},
                "keyId": {"type": "string"},
                "account": {"type": "string"},
                "url": {"type": "string"},
                "eventType": {"type": "string"},
                "state": {"type": "string", "enum": ["pending", "delivered", "failed"], "description": "`failed`: given up (retries over, or the key has no webhook secret)."},
                "createdAt": {"type": "string", "format": "date-time"},
                "nextAttemptAt": {"type": ["string", "null"], "format": "date-time"},
                "finishedAt": {"type": ["string", "null"], "format": "date-time"},
                "lastError": {"type": ["string", "null"]},
                "attempts": {"type": "array", "items": {
                    "type": "object",
                    "required": ["attempt", "at", "status", "error", "durationMs"],
                    "properties": {
                        "attempt": {"type": "integer", "minimum": 1},
                        "at": {"type": "string", "format": "date-time"},
                        "status": {"type": ["integer", "null"], "description": "The receiver's HTTP status, when it answered."},
                        "error": {"type": ["string", "null"], "description": "Why the attempt did not succeed: refused destination, timeout, connection error, a non-2xx status."},
                        "durationMs": {"type": "integer", "minimum": 0},
                    },
                }},
            },
        }),
    );
    let mut paths = Map::new();
    paths.insert(
        "/api/v1/admin/keys/{id}/webhook-secret".into(),
        json!({"post": {
            "tags": ["admin"],
            "operationId": "adminRotateWebhookSecret",
            "summary": "Create or rotate a key's webhook secret (shown once)",
            "description": "Webhook deliveries of this key are signed the Standard Webhooks way: `webhook-signature: v1,<base64 HMAC-SHA256 of \"{webhook-id}.{webhook-timestamp}.{body}\">` keyed with this secret, read at each attempt. A key without a secret has its deliveries refused.",
            "security": [{"operatorToken": []}],
            "parameters": [key_id.clone()],
            "responses": {
                "200": {"description": "The new secret.", "content": success(200, json!({"$ref": "#/components/schemas/WebhookSecret"}))},
                "401": unauthorized.clone(),
                "404": off.clone(),
            },
        }}),
    );
    paths.insert(
        "/api/v1/admin/keys/{id}/webhook-test".into(),
        json!({"post": {
            "tags": ["admin"],
            "operationId": "adminWebhookTest",
            "summary": "Queue a `webhook.test` event for a key to a URL",
            "description": "The URL must be `https` with a host whose every address is public (plain `http` to loopback only in test mode); it is checked now for its form and again at every attempt for its addresses. Failures are retried with exponential backoff (`[webhooks]` in the configuration) for up to 24 h. The body POSTed: `{\"type\": \"webhook.test\", \"timestamp\": <RFC 3339>, \"data\": {\"keyId\", \"message\"}}`.",
            "security": [{"operatorToken": []}],
            "parameters": [key_id],
            "requestBody": {"required": true, "content": {"application/json": {"schema": {
                "type": "object",
                "required": ["url"],
                "additionalProperties": false,
                "properties": {"url": {"type": "string", "maxLength": mediaparse_webhooks::destination::MAX_URL_BYTES}},
            }}}},
            "responses": {
                "202": {"description": "Queued.", "content": success(202, json!({
                    "type": "object", "required": ["id"], "properties": {"id": {"type": "string"}},
                }))},
                "400": error("`invalid_request`: the URL is refused, or the key already has as many deliveries waiting as it may."),
                "401": unauthorized.clone(),
                "404": off.clone(),
            },
        }}),
    );
    paths.insert(
        "/api/v1/admin/webhooks".into(),
        json!({"get": {
            "tags": ["admin"],
            "operationId": "adminWebhookDeliveries",
            "summary": "Webhook deliveries, newest first, with every attempt",
            "security": [{"operatorToken": []}],
            "parameters": [
                {"name": "key", "in": "query", "required": false, "schema": {"type": "string"}, "description": "Only this key's."},
                {"name": "account", "in": "query", "required": false, "schema": {"type": "string"}, "description": "Only this account's."},
                {"name": "limit", "in": "query", "required": false, "schema": {"type": "integer", "minimum": 1, "maximum": mediaparse_store::MAX_LISTED_DELIVERIES}, "description": "At most this many (default 50)."},
            ],
            "responses": {
                "200": {"description": "The deliveries.", "content": success(200, json!({"type": "array", "items": {"$ref": "#/components/schemas/WebhookDelivery"}}))},
                "400": error("`invalid_request`: an unknown query parameter."),
                "401": unauthorized,
                "404": error("`not_found`: the admin API is off (no operator token configured)."),
            },
        }}),
    );
    (paths, schemas)
}
