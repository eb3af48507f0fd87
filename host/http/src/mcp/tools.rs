//! The MCP tools: `parse_media`, `parse_batch` and `get_capabilities`
//! (and the job tools of `super::jobs`).
//!
//! `parse_media` answers as the REST endpoints do: without `platform`, the
//! structured content is the media object (the common endpoint's `data`);
//! with `platform`, it is `{media, platformData, platformDataVersion}` (the
//! platform endpoint's `data`). The result's `_meta` carries
//! `creditsCharged` and `requestId`. Every failure, and a parse without
//! media (code `304`), is a tool error whose structured content is the REST
//! error envelope `{status, data: null, msg, code}`.
//!
//! `parse_batch` is `POST /api/v1/batch` (same items, holds, prices, rate
//! limit counting every item): its structured content is `{items: […]}`,
//! each item the REST body its single parse answers; `_meta.creditsCharged`
//! is the items' sum. Only a refusal of the whole batch is a tool error.

use std::sync::Arc;

use axum::http::request::Parts;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, JsonObject,
    ListToolsResult, MetaObject, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};

use mediaparse_catalogue::Catalogue;

use crate::envelope::{ApiError, internal};
use crate::idempotency;
use crate::state::AppState;
use mediaparse_call::batch::{BatchCall, BatchItem};
use mediaparse_call::{
    self as call, Door, Idempotency, Outcome, ParseAnswer, ParseCall, RequestIds, answer,
};
use mediaparse_core::Delivery;
use mediaparse_parse::CacheUse;
use mediaparse_store::KeyRecord;

#[derive(Clone)]
pub struct MediaparseMcp {
    state: Arc<AppState>,
}

impl MediaparseMcp {
    pub fn new(state: Arc<AppState>) -> Self {
        MediaparseMcp { state }
    }
}

pub(super) fn object(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

/// The media schemas of the OpenAPI document, as one self-contained JSON Schema.
fn output_schema(catalogue: &Catalogue, prices: &crate::openapi::Prices) -> Value {
    let doc = crate::openapi::public_value(catalogue, prices);
    let schemas = &doc["components"]["schemas"];
    let mut defs = serde_json::Map::new();
    for name in [
        "Media",
        "Image",
        "Video",
        "Audio",
        "VideoSource",
        "AudioSource",
        "PlatformResult",
    ] {
        let text = schemas[name]
            .to_string()
            .replace("#/components/schemas/", "#/$defs/");
        if let Ok(v) = serde_json::from_str(&text) {
            defs.insert(name.to_string(), v);
        }
    }
    json!({
        "type": "object",
        "description": "Without `platform`: the media object. With `platform`: `{media, platformData, platformDataVersion}`.",
        "anyOf": [{"$ref": "#/$defs/Media"}, {"$ref": "#/$defs/PlatformResult"}],
        "$defs": defs,
    })
}

/// The tools, described for the platforms the service knows now.
fn tools(state: &AppState) -> Vec<Tool> {
    let catalogue = state.services.registry.known();
    let platforms = catalogue.ids();
    let config = state.services.config.load();
    let prices = mediaparse_billing::price_table(&catalogue, |id| config.price_override(id));
    let share_text = crate::openapi::share_text_platforms(&catalogue)
        .map(|list| format!(" (share text holding a URL is accepted for {list})"))
        .unwrap_or_default();
    let parse = Tool::new(
        "parse_media",
        format!(
            "Turn the URL of one public post (video, photo post, carousel, gallery) on {} into its downloadable media: images, videos and audios with direct URLs. Costs credits only when media is returned (per platform: {}). Give `platform` to also get the sanitized platform data, as on /api/v1/platforms/{{platform}}/parse. Errors carry the REST API's codes.",
            platforms.join(", "),
            serde_json::to_string(&prices).unwrap_or_default()
        ),
        object(json!({
            "type": "object",
            "properties": {
                "url": {"type": "string", "minLength": 1, "maxLength": 4096, "description": format!("The post URL{share_text}.")},
                "platform": {"type": "string", "enum": platforms, "description": "Parse as this platform and include its platform data."},
                "delivery": {"type": "string", "enum": ["direct", "tunnel"], "description": "`tunnel`: every media URL points at this service's tunnel and needs no headers (works in a browser `<video>`). Default: the key's setting, else `direct`."},
                "idempotencyKey": {"type": "string", "minLength": 1, "maxLength": idempotency::MAX_KEY_BYTES, "description": "Retry safely: the same key (per API key, 24 hours) answers the first result again without a new charge; another request under it fails with `idempotency_conflict`."},
            },
            "required": ["url"],
            "additionalProperties": false,
        })),
    )
    .with_title("Parse a media post")
    .with_raw_output_schema(object(output_schema(&catalogue, &prices)))
    .with_annotations(
        ToolAnnotations::new()
            .read_only(true)
            .destructive(false)
            .idempotent(false)
            .open_world(true),
    );
    let batch = Tool::new(
        "parse_batch",
        format!(
            "Parse 1 to {max} post URLs in one call, each as parse_media would (each item may name `platform`). Every item's credits are set aside in order before any runs; an item they do not cover answers `insufficient_credits` without running. Costs the sum of the items that returned media. The result's `items` are in request order, each `{{status:200,data,msg}}` or the REST error envelope of that item.",
            max = mediaparse_call::batch::MAX_ITEMS
        ),
        object(json!({
            "type": "object",
            "properties": {
                "items": {
                    "type": "array", "minItems": 1, "maxItems": mediaparse_call::batch::MAX_ITEMS,
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
                "idempotencyKey": {"type": "string", "minLength": 1, "maxLength": idempotency::MAX_KEY_BYTES, "description": "Retry safely: covers the whole batch (per API key, 24 hours)."},
            },
            "required": ["items"],
            "additionalProperties": false,
        })),
    )
    .with_title("Parse several media posts")
    .with_annotations(
        ToolAnnotations::new()
            .read_only(true)
            .destructive(false)
            .idempotent(false)
            .open_world(true),
    );
    let capabilities = Tool::new(
        "get_capabilities",
        "The supported platforms, their extractor versions and accepted URL shapes, and the price of a successful parse per platform. Free.",
        object(json!({"type": "object", "properties": {}, "additionalProperties": false})),
    )
    .with_title("Service capabilities")
    .with_annotations(
        ToolAnnotations::new()
            .read_only(true)
            .destructive(false)
            .idempotent(true)
            .open_world(false),
    );
    let mut all = vec![parse, batch, capabilities];
    all.extend(super::jobs::tools(&platforms, &share_text));
    all
}

impl ServerHandler for MediaparseMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("mediaparse", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Call parse_media with the URL of one public post to get its downloadable media. A parse that returns media costs credits; get_capabilities lists platforms and prices.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools(&self.state)))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        tools(&self.state).into_iter().find(|t| t.name == name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let parts = context.extensions.get::<Parts>();
        let key = parts.and_then(|p| p.extensions.get::<KeyRecord>()).cloned();
        let request_id = parts
            .and_then(|p| p.extensions.get::<crate::RequestId>())
            .map(|r| r.0.clone())
            .unwrap_or_else(mediaparse_core::ids::new_request_id);
        let ids = RequestIds::of(
            &request_id,
            parts
                .and_then(|p| p.extensions.get::<crate::ClientRequestId>())
                .map(|c| c.0.as_str()),
        );
        let header_key = parts.map(|p| idempotency::from_headers(&p.headers));
        let Some(key) = key else {
            // The HTTP layer authenticates every request; reaching here is a wiring bug.
            return Err(ErrorData::internal_error(
                "request is not authenticated",
                None,
            ));
        };
        let arguments = request.arguments.unwrap_or_default();
        let result = match request.name.as_ref() {
            "parse_media" => {
                self.parse_media_once(&key, arguments, ids, header_key)
                    .await
            }
            "parse_batch" => self.parse_batch(&key, arguments, ids, header_key).await,
            "start_job" => {
                super::jobs::start_job(&self.state, &key, arguments, &ids, header_key).await
            }
            "get_job" => super::jobs::get_job(&self.state, &key, &arguments, ids.ledger()).await,
            "get_capabilities" => {
                let data = crate::capabilities_data(&self.state);
                let mut meta = JsonObject::new();
                meta.insert("creditsCharged".into(), 0.into());
                meta.insert("requestId".into(), request_id.into());
                CallToolResult::structured(data).with_meta(Some(MetaObject(meta)))
            }
            other => {
                return Err(ErrorData::invalid_params(
                    format!("no tool named {other:?}"),
                    None,
                ));
            }
        };
        Ok(result.into())
    }
}

/// A tool's idempotency key: its `idempotencyKey` argument (taken out of
/// `arguments`, so it is not part of the fingerprint), else the HTTP
/// request's `Idempotency-Key` header.
pub(super) fn take_idempotency_key(
    arguments: &mut JsonObject,
    header_key: Option<Result<Option<String>, ApiError>>,
) -> Result<Option<String>, ApiError> {
    match arguments.remove("idempotencyKey") {
        Some(Value::String(k)) => idempotency::validate(&k).map(Some),
        Some(_) => Err(ApiError::invalid_request(
            "`idempotencyKey` must be a string",
        )),
        None => header_key.unwrap_or(Ok(None)),
    }
}

impl MediaparseMcp {
    /// `parse_media` as one parse call, under its idempotency key (the
    /// `idempotencyKey` argument, else the HTTP request's `Idempotency-Key`
    /// header), if any.
    async fn parse_media_once(
        &self,
        key: &KeyRecord,
        mut arguments: JsonObject,
        ids: RequestIds,
        header_key: Option<Result<Option<String>, ApiError>>,
    ) -> CallToolResult {
        let idempotency_key = take_idempotency_key(&mut arguments, header_key);
        let checked = idempotency_key.and_then(|k| {
            let (url, platform, delivery) =
                read_arguments(&arguments, &|p| self.state.services.registry.knows(p))?;
            Ok((k, url, platform, delivery))
        });
        let (idempotency_key, url, platform, delivery) = match checked {
            Ok(c) => c,
            Err(e) => return tool_error(&e, ids.ledger()),
        };
        // The same per-key rate limit as REST (admission is in the parse).
        let default = self
            .state
            .services
            .config
            .load()
            .limits
            .rate_limit_per_minute;
        if let Err(e) = self.state.rate_limits.check(key, default).await {
            return tool_error(&ApiError::from(e), ids.ledger());
        }
        let idempotency = idempotency_key.map(|key| Idempotency {
            fingerprint: idempotency::fingerprint(&[
                "mcp",
                &serde_json::to_string(&arguments).unwrap_or_default(),
            ]),
            key,
        });
        let call = ParseCall {
            key,
            door: Door::Mcp,
            input: &url,
            platform: platform.as_deref(),
            delivery,
            idempotency,
            cache: CacheUse::Allowed,
            ids,
            hold: None,
        };
        let answer = call::answer(self.state.callee(), &call).await;
        tool_result(&answer)
    }
}

impl MediaparseMcp {
    /// `parse_batch` as one batch call (`call::batch`), under its
    /// idempotency key (the argument, else the HTTP header), if any.
    async fn parse_batch(
        &self,
        key: &KeyRecord,
        mut arguments: JsonObject,
        ids: RequestIds,
        header_key: Option<Result<Option<String>, ApiError>>,
    ) -> CallToolResult {
        let idempotency_key = take_idempotency_key(&mut arguments, header_key);
        let checked = idempotency_key.and_then(|k| {
            let (items, delivery) = read_batch_arguments(&arguments)?;
            Ok((k, items, delivery))
        });
        let (idempotency_key, items, delivery) = match checked {
            Ok(c) => c,
            Err(e) => return tool_error(&e, ids.ledger()),
        };
        let default = self
            .state
            .services
            .config
            .load()
            .limits
            .rate_limit_per_minute;
        let n = std::num::NonZeroU32::new(items.len() as u32).unwrap_or(std::num::NonZeroU32::MIN);
        if let Err(e) = self.state.rate_limits.check_n(key, default, n).await {
            return tool_error(&ApiError::from(e), ids.ledger());
        }
        let idempotency = idempotency_key.map(|key| Idempotency {
            fingerprint: idempotency::fingerprint(&[
                "mcp-batch",
                &serde_json::to_string(&arguments).unwrap_or_default(),
            ]),
            key,
        });
        let call = BatchCall {
            key,
            door: Door::Batch,
            items: &items,
            delivery,
            idempotency,
            cache: CacheUse::Allowed,
            ids,
        };
        let answer = mediaparse_call::batch::answer(self.state.callee(), &call).await;
        if let Some(e) = &answer.refused {
            return tool_error(e, &answer.request_id);
        }
        let items: Vec<Value> = answer
            .items
            .iter()
            .map(|a| serde_json::from_str(&a.body()).unwrap_or(Value::Null))
            .collect();
        let mut meta = JsonObject::new();
        meta.insert("creditsCharged".into(), answer.charged().into());
        meta.insert("requestId".into(), answer.request_id.clone().into());
        CallToolResult::structured(json!({ "items": items })).with_meta(Some(MetaObject(meta)))
    }
}

/// `items` (1 to 50 objects of `url` and optional `platform`) and
/// `delivery` (optional, `direct` or `tunnel`).
fn read_batch_arguments(
    arguments: &JsonObject,
) -> Result<(Vec<BatchItem>, Option<Delivery>), ApiError> {
    for name in arguments.keys() {
        if !matches!(name.as_str(), "items" | "delivery") {
            return Err(ApiError::invalid_request(format!(
                "unknown argument `{name}`; parse_batch takes `items`, `delivery` and `idempotencyKey`"
            )));
        }
    }
    let items = arguments
        .get("items")
        .ok_or_else(|| ApiError::invalid_request("parse_batch needs `items`"))?;
    let items = crate::body::batch_items(items)?;
    let delivery = match arguments.get("delivery") {
        None | Some(Value::Null) => None,
        Some(Value::String(d)) => Some(d.parse().map_err(ApiError::invalid_request)?),
        Some(_) => return Err(ApiError::invalid_request("`delivery` must be a string")),
    };
    Ok((items, delivery))
}

/// A parse answer as a tool result: the answer's `data` as structured
/// content, or a tool error carrying the REST envelope (a parse without
/// media too: code `304`); `_meta` says what it cost and its request id.
fn tool_result(answer: &ParseAnswer) -> CallToolResult {
    let result = match &answer.outcome {
        Outcome::Media { .. } => match answer.data().map(serde_json::to_value) {
            Some(Ok(data)) => CallToolResult::structured(data),
            Some(Err(e)) => return tool_error(&internal(e), &answer.request_id),
            None => return tool_error(&internal("media without data"), &answer.request_id),
        },
        Outcome::NoMedia { .. } => CallToolResult::structured_error(answer::no_media_envelope()),
        Outcome::Refused(e) => return tool_error(e, &answer.request_id),
        // An earlier version stored the tool result itself.
        Outcome::Stored(stored) => match serde_json::from_str::<CallToolResult>(&stored.body) {
            Ok(result) => return result,
            Err(e) => return tool_error(&internal(e), &answer.request_id),
        },
    };
    let mut meta = JsonObject::new();
    meta.insert("creditsCharged".into(), answer.charged.into());
    meta.insert("requestId".into(), answer.request_id.clone().into());
    result.with_meta(Some(MetaObject(meta)))
}

/// A tool error carrying the REST envelope, charging nothing.
pub(super) fn tool_error(e: &ApiError, request_id: &str) -> CallToolResult {
    let mut envelope = e.envelope();
    if let Some(secs) = e.retry_after {
        envelope["retryAfter"] = secs.into();
    }
    let mut meta = JsonObject::new();
    meta.insert("creditsCharged".into(), 0.into());
    meta.insert("requestId".into(), request_id.into());
    CallToolResult::structured_error(envelope).with_meta(Some(MetaObject(meta)))
}

/// `url` (required, a non-empty string), `platform` (optional platform id)
/// and `delivery` (optional, `direct` or `tunnel`).
fn read_arguments(
    arguments: &JsonObject,
    known: &dyn Fn(&str) -> bool,
) -> Result<(String, Option<String>, Option<Delivery>), ApiError> {
    for name in arguments.keys() {
        if !matches!(name.as_str(), "url" | "platform" | "delivery") {
            return Err(ApiError::invalid_request(format!(
                "unknown argument `{name}`; parse_media takes `url`, `platform` and `delivery`"
            )));
        }
    }
    let url = match arguments.get("url") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.trim().to_string(),
        Some(Value::String(_)) => return Err(ApiError::invalid_request("`url` must not be empty")),
        Some(_) => return Err(ApiError::invalid_request("`url` must be a string")),
        None => return Err(ApiError::invalid_request("parse_media needs `url`")),
    };
    let platform = match arguments.get("platform") {
        None | Some(Value::Null) => None,
        Some(Value::String(p)) if known(p) => Some(p.clone()),
        Some(other) => {
            return Err(ApiError::new(
                mediaparse_core::ErrorCode::UnknownPlatform,
                format!("{other} is not a platform id"),
            ));
        }
    };
    let delivery = match arguments.get("delivery") {
        None | Some(Value::Null) => None,
        Some(Value::String(d)) => Some(d.parse().map_err(ApiError::invalid_request)?),
        Some(_) => return Err(ApiError::invalid_request("`delivery` must be a string")),
    };
    Ok((url, platform, delivery))
}
