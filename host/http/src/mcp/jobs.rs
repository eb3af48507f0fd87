//! The MCP job tools: `start_job` is `POST /api/v1/jobs` (the same items,
//! prices, rate limit counting every item, callback URL rules) and answers
//! `{id, state}` (under an idempotency key, once: a repeat answers the
//! same job); `get_job` is `GET /api/v1/jobs/{id}[?wait=N]` and answers
//! `{id, state[, items]}`, each item the REST body its single parse
//! answers. Failures are tool errors carrying the REST envelope.

use std::time::Duration;

use rmcp::model::{CallToolResult, JsonObject, MetaObject, Tool, ToolAnnotations};
use serde_json::{Value, json};

use super::tools::{object, take_idempotency_key, tool_error};
use crate::envelope::{ApiError, store_failure};
use crate::state::AppState;
use mediaparse_call::idempotency;
use mediaparse_call::{Idempotency, RequestIds};
use mediaparse_core::ErrorCode;
use mediaparse_jobs::{JobRequest, MAX_WAIT_S, Submit};
use mediaparse_parse::CacheUse;
use mediaparse_store::KeyRecord;

/// `start_job` and `get_job`, described for `platforms`.
pub fn tools(platforms: &[&str], share_text: &str) -> Vec<Tool> {
    let max = mediaparse_call::batch::MAX_ITEMS;
    let start = Tool::new(
        "start_job",
        format!(
            "Start a job: 1 to {max} post URLs parsed in the background, each as parse_batch would (same prices; credits set aside in item order when the job starts). Answers at once with the job's `id` and `state`; read it with get_job. With `callbackUrl`, the finished job is also POSTed there as a signed `job.done` webhook."
        ),
        object(json!({
            "type": "object",
            "properties": {
                "items": {
                    "type": "array", "minItems": 1, "maxItems": max,
                    "items": {
                        "type": "object",
                        "properties": {
                            "url": {"type": "string", "minLength": 1, "maxLength": 4096, "description": format!("The post URL{share_text}.")},
                            "platform": {"type": "string", "enum": platforms, "description": "Parse as this platform and include its platform data."},
                        },
                        "required": ["url"],
                        "additionalProperties": false,
                    },
                },
                "delivery": {"type": "string", "enum": ["direct", "tunnel"], "description": "Media delivery for every item (see parse_media)."},
                "callbackUrl": {"type": "string", "maxLength": 2048, "description": "An https URL the finished job is POSTed to, signed with the key's webhook secret."},
                "idempotencyKey": {"type": "string", "minLength": 1, "maxLength": mediaparse_call::idempotency::MAX_KEY_BYTES, "description": "Retry safely: the same key (per API key, 24 hours) answers the job the first call started instead of starting another; another request under it fails with `idempotency_conflict`."},
            },
            "required": ["items"],
            "additionalProperties": false,
        })),
    )
    .with_title("Start a batch job")
    .with_annotations(
        ToolAnnotations::new()
            .read_only(false)
            .destructive(false)
            .idempotent(false)
            .open_world(true),
    );
    let get = Tool::new(
        "get_job",
        format!(
            "A job started with start_job: its `state` (queued, running, done) and, once done, its `items` in request order, each as parse_batch answers it. `wait` (1 to {MAX_WAIT_S} seconds) holds the answer until the job is done or the time passed. Free."
        ),
        object(json!({
            "type": "object",
            "properties": {
                "id": {"type": "string", "minLength": 1, "maxLength": 64, "description": "The job id start_job answered."},
                "wait": {"type": "integer", "minimum": 1, "maximum": MAX_WAIT_S, "description": "Seconds to wait for the job to be done."},
            },
            "required": ["id"],
            "additionalProperties": false,
        })),
    )
    .with_title("Read a batch job")
    .with_annotations(
        ToolAnnotations::new()
            .read_only(true)
            .destructive(false)
            .idempotent(true)
            .open_world(false),
    );
    vec![start, get]
}

fn meta(result: CallToolResult, request_id: &str) -> CallToolResult {
    let mut meta = JsonObject::new();
    meta.insert("creditsCharged".into(), 0.into());
    meta.insert("requestId".into(), request_id.into());
    result.with_meta(Some(MetaObject(meta)))
}

/// `start_job`, under its idempotency key (the `idempotencyKey` argument,
/// else the HTTP request's `Idempotency-Key` header), if any.
pub async fn start_job(
    state: &AppState,
    key: &KeyRecord,
    mut arguments: JsonObject,
    ids: &RequestIds,
    header_key: Option<Result<Option<String>, ApiError>>,
) -> CallToolResult {
    let idempotency_key = take_idempotency_key(&mut arguments, header_key);
    match start(state, key, &arguments, ids, idempotency_key).await {
        Ok((data, replayed)) => {
            let mut result = meta(CallToolResult::structured(data), ids.ledger());
            if replayed && let Some(m) = result.meta.as_mut() {
                m.0.insert("replayed".into(), true.into());
            }
            result
        }
        Err(e) => tool_error(&e, ids.ledger()),
    }
}

async fn start(
    state: &AppState,
    key: &KeyRecord,
    arguments: &JsonObject,
    ids: &RequestIds,
    idempotency_key: Result<Option<String>, ApiError>,
) -> Result<(Value, bool), ApiError> {
    if let Some(name) = arguments
        .keys()
        .find(|n| !matches!(n.as_str(), "items" | "delivery" | "callbackUrl"))
    {
        return Err(ApiError::invalid_request(format!(
            "unknown argument `{name}`; start_job takes `items`, `delivery`, `callbackUrl` and `idempotencyKey`"
        )));
    }
    let idempotency_key = idempotency_key?;
    let items = arguments
        .get("items")
        .ok_or_else(|| ApiError::invalid_request("start_job needs `items`"))?;
    let items = crate::body::batch_items(items)?;
    let delivery = match arguments.get("delivery") {
        None | Some(Value::Null) => None,
        Some(Value::String(d)) => Some(d.parse().map_err(ApiError::invalid_request)?),
        Some(_) => return Err(ApiError::invalid_request("`delivery` must be a string")),
    };
    let callback_url = match arguments.get("callbackUrl") {
        None | Some(Value::Null) => None,
        Some(Value::String(u)) => {
            state
                .webhooks
                .check_url(u)
                .map_err(|e| ApiError::new(ErrorCode::InvalidCallbackUrl, e.to_string()))?;
            Some(u.clone())
        }
        Some(_) => return Err(ApiError::invalid_request("`callbackUrl` must be a string")),
    };
    let default = state.services.config.load().limits.rate_limit_per_minute;
    let n = std::num::NonZeroU32::new(items.len() as u32).unwrap_or(std::num::NonZeroU32::MIN);
    state
        .rate_limits
        .check_n(key, default, n)
        .await
        .map_err(ApiError::from)?;
    let idempotency = idempotency_key.map(|k| Idempotency {
        fingerprint: idempotency::fingerprint(&[
            "mcp-job",
            &serde_json::to_string(arguments).unwrap_or_default(),
        ]),
        key: k,
    });
    let request = JobRequest::new(&items, delivery, CacheUse::Allowed);
    let submission = state
        .jobs
        .submit(Submit {
            key,
            request: &request,
            callback_url,
            idempotency,
            ids,
        })
        .await;
    let job = submission.outcome()?;
    Ok((
        json!({"id": job.id, "state": job.state}),
        submission.replayed,
    ))
}

/// `get_job`.
pub async fn get_job(
    state: &AppState,
    key: &KeyRecord,
    arguments: &JsonObject,
    request_id: &str,
) -> CallToolResult {
    match get(state, key, arguments).await {
        Ok(data) => meta(CallToolResult::structured(data), request_id),
        Err(e) => tool_error(&e, request_id),
    }
}

async fn get(state: &AppState, key: &KeyRecord, arguments: &JsonObject) -> Result<Value, ApiError> {
    if let Some(name) = arguments
        .keys()
        .find(|n| !matches!(n.as_str(), "id" | "wait"))
    {
        return Err(ApiError::invalid_request(format!(
            "unknown argument `{name}`; get_job takes `id` and `wait`"
        )));
    }
    let Some(Value::String(id)) = arguments.get("id") else {
        return Err(ApiError::invalid_request("get_job needs `id`, a string"));
    };
    let wait = match arguments.get("wait") {
        None | Some(Value::Null) => None,
        Some(w) => match w.as_u64() {
            Some(n) if (1..=MAX_WAIT_S).contains(&n) => Some(Duration::from_secs(n)),
            _ => {
                return Err(ApiError::invalid_request(format!(
                    "`wait` is a whole number of seconds from 1 to {MAX_WAIT_S}"
                )));
            }
        },
    };
    let found = match wait {
        Some(wait) => state.jobs.wait(id, &key.account_id, wait).await,
        None => state.jobs.find(id, &key.account_id).await,
    }
    .map_err(store_failure)?;
    let view =
        found.ok_or_else(|| ApiError::new(ErrorCode::JobNotFound, format!("no job {id:?}")))?;
    Ok(view.data())
}
