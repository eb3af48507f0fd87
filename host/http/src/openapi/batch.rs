//! `POST /api/v1/batch` in the public document: the request, the answer
//! whose items are each a single parse's answer, and the refusals of the
//! whole batch.

use serde_json::{Map, Value, json};

use super::errors::{self, ERRORS, Scope};
use mediaparse_call::batch::MAX_ITEMS;

/// The schemas the operation refers to, by name.
pub fn schemas(ids: &[&str]) -> Vec<(String, Value)> {
    let mut item_answers = vec![
        json!({"$ref": "#/components/schemas/CommonSuccess"}),
        json!({"$ref": "#/components/schemas/PlatformSuccess"}),
        json!({"$ref": "#/components/schemas/NoMedia"}),
    ];
    for status in errors::statuses(true) {
        item_answers.push(
            json!({"$ref": format!("#/components/schemas/{}", errors::schema_name(status, true))}),
        );
    }
    vec![
        (
            "BatchRequest".into(),
            json!({
                "type": "object",
                "required": ["items"],
                "properties": {
                    "items": {
                        "type": "array",
                        "minItems": 1,
                        "maxItems": MAX_ITEMS,
                        "description": format!("1 to {MAX_ITEMS} parses; another count is `400 invalid_batch_size`."),
                        "items": {"$ref": "#/components/schemas/BatchItem"},
                    },
                },
                "additionalProperties": false,
            }),
        ),
        (
            "BatchItem".into(),
            json!({
                "description": "One parse: `url` (or its alias `link`) as the single parse takes it, and optionally `platform` to parse as that platform and answer in its shape (another value answers this item `404 unknown_platform`).",
                "anyOf": [item_with("url", true, ids), item_with("link", false, ids)],
            }),
        ),
        (
            "BatchSuccess".into(),
            json!({
                "type": "object",
                "required": ["status", "data", "msg"],
                "properties": {
                    "status": {"type": "integer", "enum": [200]},
                    "data": {
                        "type": "object",
                        "required": ["items"],
                        "properties": {
                            "items": {
                                "type": "array",
                                "minItems": 1,
                                "maxItems": MAX_ITEMS,
                                "description": "One answer per item, in request order: the body its single parse would answer (the media object, the platform shape, the no-media `304`, or its error envelope).",
                                "items": {"anyOf": item_answers},
                            },
                        },
                        "additionalProperties": false,
                    },
                    "msg": {"type": "string", "enum": ["success"]},
                },
                "additionalProperties": false,
            }),
        ),
        ("ErrorEnvelope400Batch".into(), envelope_400()),
    ]
}

/// The `400` of the whole batch: a parse's `400` codes and the batch's own.
fn envelope_400() -> Value {
    let codes: Vec<_> = ERRORS
        .iter()
        .filter(|c| c.status == 400 && matches!(c.scope, Scope::Parse | Scope::Batch))
        .collect();
    let mut schema = errors::envelope_schema(400, false);
    schema["properties"]["code"]["enum"] = codes.iter().map(|c| c.wire).collect::<Vec<_>>().into();
    schema["description"] = format!(
        "Error envelope for HTTP 400. No credit is charged.\n\n{}",
        codes
            .iter()
            .map(|c| format!("- `{}`: {}", c.wire, c.when))
            .collect::<Vec<_>>()
            .join("\n")
    )
    .into();
    schema
}

/// The operation.
pub fn operation(example: &str, parameters: Vec<Value>, headers: &Headers) -> Value {
    let mut responses = Map::new();
    let mut ok = (headers.json_response)(
        "The items' answers, in request order. `X-Credits-Charged` is the sum of the items that returned media.",
        "BatchSuccess",
        true,
        false,
    );
    ok["headers"]["Idempotent-Replayed"] = (headers.replayed)();
    responses.insert("200".into(), ok);
    // Refusals of the whole batch, before any item ran.
    let too_large = format!(
        "`payload_too_large` (a batch body may hold {} bytes)",
        crate::body::MAX_BATCH_BODY_BYTES
    );
    for (status, schema, what) in [
        (
            400,
            "ErrorEnvelope400Batch",
            "`invalid_request` (body, query or `Idempotency-Key`), `invalid_batch_size`",
        ),
        (
            401,
            "ErrorEnvelope401",
            "`missing_token`, `invalid_token`, `token_expired`",
        ),
        (408, "ErrorEnvelope408", "`request_timeout`"),
        (413, "ErrorEnvelope413", too_large.as_str()),
        (415, "ErrorEnvelope415", "`unsupported_media_type`"),
        (422, "ErrorEnvelope422", "`idempotency_conflict`"),
        (
            429,
            "ErrorEnvelope429",
            "`rate_limited`: the items do not all fit in what is left of the key's rate limit (each item counts as one request)",
        ),
        (
            503,
            "ErrorEnvelope503",
            "`store_busy`, `database_unavailable`",
        ),
    ] {
        let mut response = (headers.json_response)(
            &format!("Error envelope of the whole batch, nothing ran or was charged: {what}."),
            schema,
            true,
            status == 429 || status == 503,
        );
        if status != 401 {
            response["headers"]["RateLimit-Policy"] = (headers.policy)();
            response["headers"]["RateLimit"] = (headers.status)();
        }
        if status != 401 && status != 400 {
            response["headers"]["Idempotent-Replayed"] = (headers.replayed)();
        }
        responses.insert(status.to_string(), response);
    }
    responses["200"]["headers"]["RateLimit-Policy"] = (headers.policy)();
    responses["200"]["headers"]["RateLimit"] = (headers.status)();
    json!({
        "tags": ["parse"],
        "operationId": "parseBatch",
        "summary": format!("Parse 1 to {MAX_ITEMS} post URLs in one request"),
        "description": "Each item is its own parse, with its own ledger entry at its platform's price, and answers as its single parse would. Before any item runs, each item's price is set aside from the balance in item order: an item whose price is not covered by what the earlier items left answers `402 insufficient_credits` without running (a later, cheaper item may still fit), so the answer never depends on which item finishes first. The items then run concurrently within the account's share of the parses in flight; an item that fails or returns no media costs nothing and its credits go back. Each item counts as one request against the key's rate limit. An `Idempotency-Key` covers the whole batch.",
        "security": [{"bearerAuth": []}],
        "parameters": parameters,
        "requestBody": {
            "required": true,
            "content": {"application/json": {
                "schema": {"$ref": "#/components/schemas/BatchRequest"},
                "example": {"items": [{"url": example}]},
            }},
        },
        "responses": responses,
    })
}

/// The document's shared header and response builders.
pub struct Headers {
    pub json_response: fn(&str, &str, bool, bool) -> Value,
    pub replayed: fn() -> Value,
    pub policy: fn() -> Value,
    pub status: fn() -> Value,
}

/// A batch item naming its input by `name` (`url` or its alias `link`).
pub(super) fn item_with(name: &str, uri: bool, ids: &[&str]) -> Value {
    // Not only whitespace, as the service trims it (Unicode White_Space,
    // which counts U+0085 where ECMA-262's `\s` does not).
    let mut input =
        json!({"type": "string", "minLength": 1, "maxLength": 4096, "pattern": "[^\\s\\u0085]"});
    if uri {
        input["format"] = "uri".into();
    }
    json!({
        "type": "object",
        "required": [name],
        "properties": {
            name: input,
            "platform": {"type": ["string", "null"], "examples": ids},
        },
        "additionalProperties": false,
    })
}
