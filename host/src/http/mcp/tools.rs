//! The MCP tools: `parse_media` and `get_capabilities`.
//!
//! `parse_media` answers as the REST endpoints do: without `platform`, the
//! structured content is the media object (the common endpoint's `data`);
//! with `platform`, it is `{media, platformData, platformDataVersion}` (the
//! platform endpoint's `data`). The result's `_meta` carries
//! `creditsCharged` and `requestId`. Every failure, and a parse without
//! media (code `304`), is a tool error whose structured content is the REST
//! error envelope `{status, data: null, msg, code}`.

use std::sync::Arc;
use std::time::Instant;

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

use crate::http::envelope::ApiError;
use crate::http::idempotency::{self, Answer, RequestIds};
use crate::http::state::AppState;
use crate::parse;
use crate::store::{KeyRecord, StoredResponse};

#[derive(Clone)]
pub struct MediaparseMcp {
    state: Arc<AppState>,
}

impl MediaparseMcp {
    pub fn new(state: Arc<AppState>) -> Self {
        MediaparseMcp { state }
    }
}

fn object(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

/// The media schemas of the OpenAPI document, as one self-contained JSON Schema.
fn output_schema(catalogue: &Catalogue, prices: &crate::http::openapi::Prices) -> Value {
    let doc = crate::http::openapi::public_value(catalogue, prices);
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
    let prices = crate::billing::price_table(&catalogue, |id| config.price_override(id));
    let share_text = crate::http::openapi::share_text_platforms(&catalogue)
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
    vec![parse, capabilities]
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
            .and_then(|p| p.extensions.get::<crate::http::RequestId>())
            .map(|r| r.0.clone())
            .unwrap_or_else(crate::core::ids::new_request_id);
        let ids = RequestIds::of(
            &crate::http::RequestId(request_id.clone()),
            parts.and_then(|p| p.extensions.get::<crate::http::ClientRequestId>()),
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
                self.parse_media_once(&key, arguments, &ids, header_key)
                    .await
            }
            "get_capabilities" => {
                let data = crate::http::capabilities_data(&self.state);
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

impl MediaparseMcp {
    /// `parse_media` under its idempotency key (the `idempotencyKey`
    /// argument, else the HTTP request's `Idempotency-Key` header), if any.
    async fn parse_media_once(
        &self,
        key: &KeyRecord,
        mut arguments: JsonObject,
        ids: &RequestIds,
        header_key: Option<Result<Option<String>, ApiError>>,
    ) -> CallToolResult {
        let idempotency_key = match arguments.remove("idempotencyKey") {
            Some(Value::String(k)) => idempotency::validate(&k).map(Some),
            Some(_) => Err(ApiError::invalid_request(
                "`idempotencyKey` must be a string",
            )),
            None => header_key.unwrap_or(Ok(None)),
        };
        let idempotency_key = match idempotency_key {
            Ok(k) => k,
            Err(e) => return tool_error(&e, ids.ledger()),
        };
        let Some(idempotency_key) = idempotency_key else {
            let result = self.parse_media(key, &arguments, ids.ledger()).await;
            idempotency::record_client_id(&self.state.services.store, ids, charged_of(&result))
                .await;
            return result;
        };
        let fingerprint = idempotency::fingerprint(&[
            "mcp",
            &serde_json::to_string(&arguments).unwrap_or_default(),
        ]);
        let answer = idempotency::once(
            &self.state.services.store,
            key,
            &idempotency_key,
            &fingerprint,
            ids,
            |request_id| async move {
                let result = self.parse_media(key, &arguments, &request_id).await;
                StoredResponse {
                    status: status_of(&result),
                    credits: charged_of(&result),
                    body: serde_json::to_string(&result).unwrap_or_default(),
                }
            },
        )
        .await;
        match answer {
            Ok(Answer::Fresh(stored) | Answer::Replayed(stored)) => {
                match serde_json::from_str::<CallToolResult>(&stored.body) {
                    Ok(result) => result,
                    Err(e) => tool_error(&crate::http::envelope::internal(e), ids.ledger()),
                }
            }
            Err(e) => tool_error(&e, ids.ledger()),
        }
    }

    async fn parse_media(
        &self,
        key: &KeyRecord,
        arguments: &JsonObject,
        request_id: &str,
    ) -> CallToolResult {
        let started = Instant::now();
        let outcome = async {
            let (url, platform, delivery) =
                read_arguments(arguments, &|p| self.state.services.registry.knows(p))?;
            // The same per-key rate limit as REST (admission is in `parse`).
            let default = self
                .state
                .services
                .config
                .load()
                .limits
                .rate_limit_per_minute;
            self.state.rate_limits.check(key, default).await?;
            let delivery =
                crate::http::tunnel::resolve(&self.state, key, delivery.as_deref()).await?;
            let mut parsed = parse::parse(
                &self.state.services,
                key,
                &url,
                platform.as_deref(),
                request_id,
            )
            .await?;
            crate::http::tunnel::apply(&self.state, key, delivery, &mut parsed);
            Ok::<_, ApiError>((parsed, platform.is_some()))
        }
        .await;
        let elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
        let (result, charged) = match outcome {
            Ok((parsed, _)) if parsed.media.is_empty() => {
                tracing::info!(platform = %parsed.platform, elapsed_ms, "mcp parse: no media");
                (
                    CallToolResult::structured_error(json!({
                        "status": 200, "data": null, "code": "304",
                        "msg": "the link parsed but no downloadable media could be returned",
                    })),
                    0,
                )
            }
            Ok((parsed, with_platform_data)) => {
                tracing::info!(platform = %parsed.platform, charged = parsed.charged, elapsed_ms, "mcp parsed");
                let media = parsed.media.to_json(&parsed.platform);
                let content = if with_platform_data {
                    json!({"media": media, "platformData": parsed.platform_data, "platformDataVersion": "1"})
                } else {
                    media
                };
                (CallToolResult::structured(content), parsed.charged)
            }
            Err(e) => {
                tracing::info!(
                    code = e.wire(),
                    status = e.code.status(),
                    elapsed_ms,
                    "mcp parse failed"
                );
                let mut envelope = e.envelope();
                if let Some(secs) = e.retry_after {
                    envelope["retryAfter"] = secs.into();
                }
                (CallToolResult::structured_error(envelope), 0)
            }
        };
        let mut meta = JsonObject::new();
        meta.insert("creditsCharged".into(), charged.into());
        meta.insert("requestId".into(), request_id.into());
        result.with_meta(Some(MetaObject(meta)))
    }
}

/// A tool error carrying the REST envelope, charging nothing.
fn tool_error(e: &ApiError, request_id: &str) -> CallToolResult {
    let mut envelope = e.envelope();
    if let Some(secs) = e.retry_after {
        envelope["retryAfter"] = secs.into();
    }
    let mut meta = JsonObject::new();
    meta.insert("creditsCharged".into(), 0.into());
    meta.insert("requestId".into(), request_id.into());
    CallToolResult::structured_error(envelope).with_meta(Some(MetaObject(meta)))
}

/// The credits a `parse_media` result says it took (`_meta.creditsCharged`).
fn charged_of(result: &CallToolResult) -> i64 {
    result
        .meta
        .as_ref()
        .and_then(|m| m.0.get("creditsCharged"))
        .and_then(Value::as_i64)
        .unwrap_or(0)
}

/// The HTTP status a `parse_media` result stands for (its envelope's on a tool error).
fn status_of(result: &CallToolResult) -> u16 {
    if result.is_error != Some(true) {
        return 200;
    }
    result
        .structured_content
        .as_ref()
        .and_then(|c| c.get("status"))
        .and_then(Value::as_u64)
        .and_then(|s| u16::try_from(s).ok())
        .unwrap_or(500)
}

/// `url` (required, a non-empty string), `platform` (optional platform id)
/// and `delivery` (optional string, checked by the caller).
fn read_arguments(
    arguments: &JsonObject,
    known: &dyn Fn(&str) -> bool,
) -> Result<(String, Option<String>, Option<String>), ApiError> {
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
                crate::core::ErrorCode::UnknownPlatform,
                format!("{other} is not a platform id"),
            ));
        }
    };
    let delivery = match arguments.get("delivery") {
        None | Some(Value::Null) => None,
        Some(Value::String(d)) => Some(d.clone()),
        Some(_) => return Err(ApiError::invalid_request("`delivery` must be a string")),
    };
    Ok((url, platform, delivery))
}
