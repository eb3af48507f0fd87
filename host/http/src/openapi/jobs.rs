//! `/api/v1/jobs` in the public document: submitting a job, reading it
//! (optionally waiting), its event stream, and the `job.done` webhook.

use serde_json::{Map, Value, json};

use super::batch::Headers;
use super::errors::{ERRORS, Scope};
use mediaparse_call::batch::MAX_ITEMS;
use mediaparse_jobs::MAX_WAIT_S;

/// An error envelope of `status` listing exactly `codes`.
fn envelope(status: u16, codes: &[&str]) -> Value {
    let explained: Vec<String> = ERRORS
        .iter()
        .filter(|c| codes.contains(&c.wire))
        .map(|c| format!("- `{}`: {}", c.wire, c.when))
        .collect();
    json!({
        "type": "object",
        "description": format!("Error envelope for HTTP {status}. No credit is charged.\n\n{}", explained.join("\n")),
        "required": ["status", "data", "msg", "code"],
        "properties": {
            "status": {"type": "integer", "enum": [status]},
            "data": {"type": "null"},
            "msg": {"type": "string", "minLength": 1},
            "code": {"type": "string", "enum": codes},
        },
        "additionalProperties": false,
    })
}

/// The schemas the operations refer to, by name.
pub fn schemas(batch_items: Value, ids: &[&str]) -> Vec<(String, Value)> {
    let submit_400: Vec<&str> = ERRORS
        .iter()
        .filter(|c| {
            c.status == 400
                && (matches!(c.scope, Scope::Parse | Scope::Batch)
                    || c.wire == "invalid_callback_url")
        })
        .map(|c| c.wire)
        .collect();
    let mut items = batch_items;
    items["description"] = "Once `done`: the items' answers in request order, exactly as `POST /api/v1/batch` answers `data.items`.".into();
    let state = json!({"type": "string", "enum": ["queued", "running", "done"], "description": "`queued` until a host starts it, `running` while its items run, `done` once every item has its answer."});
    vec![
        (
            "JobRequest".into(),
            json!({
                "type": "object",
                "required": ["items"],
                "properties": {
                    "items": {
                        "type": "array",
                        "minItems": 1,
                        "maxItems": MAX_ITEMS,
                        "description": format!("1 to {MAX_ITEMS} parses, as in a batch; another count is `400 invalid_batch_size`."),
                        "items": {"$ref": "#/components/schemas/JobItem"},
                    },
                    "callback_url": {
                        "type": ["string", "null"],
                        "maxLength": 2048,
                        "format": "uri",
                        "description": "Where the finished job is POSTed (`null`: nowhere) (event `job.done`, signed with the key's webhook secret, the Standard Webhooks way). An https URL without user name, password or fragment; its addresses must be public (checked at every attempt). Otherwise `400 invalid_callback_url`.",
                    },
                },
                "additionalProperties": false,
            }),
        ),
        (
            "JobAccepted".into(),
            json!({
                "type": "object",
                "required": ["status", "data", "msg"],
                "properties": {
                    "status": {"type": "integer", "enum": [202]},
                    "data": {
                        "type": "object",
                        "required": ["id", "state"],
                        "properties": {
                            "id": {"type": "string", "pattern": "^job_[0-9a-f]{32}$"},
                            "state": state,
                        },
                        "additionalProperties": false,
                    },
                    "msg": {"type": "string", "enum": ["accepted"]},
                },
                "additionalProperties": false,
            }),
        ),
        (
            "JobState".into(),
            json!({
                "type": "object",
                "required": ["status", "data", "msg"],
                "properties": {
                    "status": {"type": "integer", "enum": [200]},
                    "data": {
                        "type": "object",
                        "required": ["id", "state"],
                        "properties": {
                            "id": {"type": "string", "pattern": "^job_[0-9a-f]{32}$"},
                            "state": state,
                            "items": items,
                        },
                        "additionalProperties": false,
                    },
                    "msg": {"type": "string", "enum": ["success"]},
                },
                "additionalProperties": false,
            }),
        ),
        (
            "JobItem".into(),
            json!({
                "description": "One parse, as a batch item: `url` (or `link`) and optionally `platform`. At submit only its length is checked (more than 4096 bytes is `400` code `302`); whether it is a supported post is the item's own answer once it runs.",
                "anyOf": [super::batch::item_with("url", false, ids), super::batch::item_with("link", false, ids)],
            }),
        ),
        ("ErrorEnvelope400Job".into(), envelope(400, &submit_400)),
        (
            "ErrorEnvelope400JobRead".into(),
            envelope(400, &["invalid_request"]),
        ),
        (
            "ErrorEnvelope404Job".into(),
            envelope(404, &["job_not_found"]),
        ),
    ]
}

fn error(headers: &Headers, what: &str, schema: &str, retry_after: bool) -> Value {
    (headers.json_response)(
        &format!("Error envelope: {what}."),
        schema,
        true,
        retry_after,
    )
}

fn unauthorized(headers: &Headers) -> Value {
    error(
        headers,
        "`missing_token`, `invalid_token`, `token_expired`",
        "ErrorEnvelope401",
        false,
    )
}

fn unavailable(headers: &Headers) -> Value {
    error(
        headers,
        "`store_busy`, `database_unavailable`",
        "ErrorEnvelope503",
        true,
    )
}

/// `POST /api/v1/jobs`.
pub fn submit_operation(example: &str, parameters: Vec<Value>, headers: &Headers) -> Value {
    let mut accepted = (headers.json_response)(
        "The job is queued. Read it at `Location`.",
        "JobAccepted",
        true,
        false,
    );
    accepted["headers"]["Location"] = json!({
        "description": "`/api/v1/jobs/{id}`",
        "required": true,
        "schema": {"type": "string"},
    });
    let mut responses = Map::new();
    accepted["headers"]["Idempotent-Replayed"] = (headers.replayed)();
    responses.insert("202".into(), accepted);
    responses.insert(
        "400".into(),
        error(
            headers,
            "`invalid_request` (body, query or `Idempotency-Key`), `invalid_batch_size`, `invalid_callback_url`",
            "ErrorEnvelope400Job",
            false,
        ),
    );
    responses.insert("401".into(), unauthorized(headers));
    responses.insert(
        "408".into(),
        error(headers, "`request_timeout`", "ErrorEnvelope408", false),
    );
    responses.insert(
        "413".into(),
        error(headers, "`payload_too_large`", "ErrorEnvelope413", false),
    );
    responses.insert(
        "415".into(),
        error(
            headers,
            "`unsupported_media_type`",
            "ErrorEnvelope415",
            false,
        ),
    );
    responses.insert(
        "422".into(),
        error(headers, "`idempotency_conflict`", "ErrorEnvelope422", false),
    );
    responses.insert(
        "429".into(),
        error(
            headers,
            "`rate_limited`: the items do not all fit in what is left of the key's rate limit (each item counts as one request)",
            "ErrorEnvelope429",
            true,
        ),
    );
    responses.insert("503".into(), unavailable(headers));
    for status in ["202", "400", "408", "413", "415", "422", "429", "503"] {
        responses[status]["headers"]["RateLimit-Policy"] = (headers.policy)();
        responses[status]["headers"]["RateLimit"] = (headers.status)();
    }
    json!({
        "tags": ["jobs"],
        "operationId": "startJob",
        "summary": format!("Start a job: 1 to {MAX_ITEMS} post URLs parsed in the background"),
        "description": "The batch's items, run in the background and kept in the database. Each item is its own parse with its own ledger entry (`<job id>_<index>`, so a job resumed after a restart charges no item twice) at its platform's price. Credits are set aside in item order when the job starts running (not while it is queued): an item they do not cover answers `402 insufficient_credits` without running. Each item counts as one request against the key's rate limit, counted now. With `callback_url`, the finished job is POSTed there once as the webhook event `job.done` with `data` `{id, state: \"done\", items}` (Standard Webhooks headers `webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64 HMAC-SHA256>` with the key's webhook secret; retried with backoff while the receiver fails). A finished job is kept 24 hours (operator setting `[jobs] retention_secs`), then removed. Under an `Idempotency-Key`, a repeated submission answers the job the first one queued (`202`, the same `id`, `Idempotent-Replayed: true`) and queues nothing.",
        "security": [{"bearerAuth": []}],
        "parameters": parameters,
        "requestBody": {
            "required": true,
            "content": {"application/json": {
                "schema": {"$ref": "#/components/schemas/JobRequest"},
                "example": {"items": [{"url": example}], "callback_url": "https://example.com/hooks/mediaparse"},
            }},
        },
        "responses": responses,
    })
}

fn id_parameter() -> Value {
    json!({
        "name": "id",
        "in": "path",
        "required": true,
        "description": "The job id `POST /api/v1/jobs` answered.",
        "schema": {"type": "string", "minLength": 1, "maxLength": 64},
    })
}

/// `GET /api/v1/jobs/{id}`.
pub fn read_operation(headers: &Headers) -> Value {
    let wait = json!({
        "name": "wait",
        "in": "query",
        "required": false,
        "description": format!("Hold the answer until the job is done or this many seconds passed (1 to {MAX_WAIT_S}); another value is `400 invalid_request`."),
        "schema": {"type": "integer", "minimum": 1, "maximum": MAX_WAIT_S},
    });
    json!({
        "tags": ["jobs"],
        "operationId": "getJob",
        "summary": "A job's state and, once done, its items",
        "description": "Only the job's own account sees it; another account, an unknown id and a job removed after its retention are all `404 job_not_found`. Free, and not counted against the rate limit.",
        "security": [{"bearerAuth": []}],
        "parameters": [id_parameter(), wait],
        "responses": {
            "200": (headers.json_response)("The job.", "JobState", true, false),
            "400": error(headers, "`invalid_request` (`wait` out of range, another query parameter)", "ErrorEnvelope400JobRead", false),
            "401": unauthorized(headers),
            "404": error(headers, "`job_not_found`", "ErrorEnvelope404Job", false),
            "503": unavailable(headers),
        },
    })
}

/// `GET /api/v1/jobs/{id}/events`.
pub fn events_operation(headers: &Headers) -> Value {
    json!({
        "tags": ["jobs"],
        "operationId": "jobEvents",
        "summary": "A job's items as they finish (server-sent events)",
        "description": "A `text/event-stream`: one event `item` per finished item, data `{\"index\": <i>, \"item\": <the item's answer, as in data.items>}` (a client arriving late first gets the items already finished, in index order), then one event `done`, data `{\"id\": <job id>, \"state\": \"done\"}`, and the stream ends. Comments keep the connection alive. Only the job's own account may read it.",
        "security": [{"bearerAuth": []}],
        "parameters": [id_parameter()],
        "responses": {
            "200": {
                "description": "The event stream.",
                "content": {"text/event-stream": {"schema": {
                    "description": "One server-sent event.",
                    "type": "object",
                    "required": ["event", "data"],
                    "properties": {
                        "event": {"type": "string", "enum": ["item", "done"]},
                        "data": {"type": "string", "description": "JSON: `{\"index\", \"item\"}` for `item`, `{\"id\", \"state\"}` for `done`."},
                        "id": {"type": "string"},
                        "retry": {"type": "integer"},
                    },
                }}},
            },
            "401": unauthorized(headers),
            "404": error(headers, "`job_not_found`", "ErrorEnvelope404Job", false),
            "503": unavailable(headers),
        },
    })
}
