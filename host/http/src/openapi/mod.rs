//! The interface description: OpenAPI 3.1.0 documents generated from the
//! code with utoipa, and the routes that serve them.
//!
//! - `GET /openapi.json` — the public API (version 1.0.0): both parse
//!   endpoints (templated and one fixed path per platform, each with its own
//!   `platformData` schema), capabilities, platform status, health.
//! - `GET /openapi/admin.json` — the operator's admin API, its own document.
//! - `GET /docs` — Swagger UI for both, its assets compiled into the binary
//!   (no CDN, works offline).
//!
//! The committed copies in `docs/openapi.json` and `docs/openapi-admin.json`
//! are compared with these by a test; `MEDIAPARSE_BLESS=1` rewrites them.

mod batch;
mod errors;
mod jobs;
mod platforms;
mod schemas;

pub use errors::ERRORS;
pub use platforms::share_text_platforms;

use std::sync::{Arc, LazyLock};

use axum::Router;
use axum::extract::State;
use mediaparse_catalogue::{Catalogue, Manifest};
use serde_json::{Map, Value, json};
use utoipa::OpenApi as _;
use utoipa::openapi::{OpenApi, RefOr, Schema};
use utoipa_swagger_ui::{Config, SwaggerUi, Url};

use super::idempotency;
use super::state::AppState;
use mediaparse_parse::cache::CacheOutcome;

/// Version of the interface description (SPEC.md "Versioning").
pub const API_VERSION: &str = "1.0.0";

#[derive(utoipa::OpenApi)]
#[openapi(
    info(
        title = "mediaparse",
        version = "1.0.0",
        description = "Turn the URL of one public post on a media platform into its downloadable media, in one normalized JSON shape. Every parse needs `Authorization: Bearer <token>`; a successful parse with media costs the platform's credits (see `GET /api/v1/capabilities`), everything else costs nothing. Every response carries `X-Request-Id`.\n\nAn MCP server (streamable HTTP) with the same tokens, permissions and prices is at `/mcp`; it is described by its own `tools/list`, not by this document."
    ),
    components(schemas(
        schemas::ParseRequest,
        schemas::Media,
        schemas::Image,
        schemas::Video,
        schemas::Audio,
        schemas::VideoSource,
        schemas::AudioSource
    )),
    tags(
        (name = "parse", description = "Parse a post URL into its media."),
        (name = "jobs", description = "Batches run in the background: read, waited for, streamed, announced by webhook."),
        (name = "media", description = "Media delivered through the service (`?delivery=tunnel`)."),
        (name = "service", description = "What the service offers, and whether it is up.")
    )
)]
struct PublicApi;

/// The admin API's own document. Admin handlers may be annotated with
/// `#[utoipa::path(..., tag = "admin", security(("operatorToken" = [])))]`
/// and listed in `paths(...)` below, or describe themselves as JSON beside
/// their code, merged in by [`admin_document`] (the console's users API).
#[derive(utoipa::OpenApi)]
#[openapi(
    info(
        title = "mediaparse admin API",
        version = "1.0.0",
        description = "The operator's API under `/api/v1/admin/`, guarded by the operator token (`MEDIAPARSE_ADMIN_TOKEN`; the admin API answers 404 when none is configured). A customer token never opens it. Errors use the same envelope `{status, data: null, msg, code}` as the public API."
    ),
    paths(),
    tags((name = "admin", description = "Keys, accounts and credits; platform health; webhooks."))
)]
struct AdminApi;

/// Prices per platform id (`billing::price_table`).
pub type Prices = Map<String, Value>;

/// The public document for the platforms of `catalogue` at `prices`.
pub fn public_document(catalogue: &Catalogue, prices: &Prices) -> OpenApi {
    let mut doc = PublicApi::openapi();
    let mut extra = Map::new();
    extra.insert(
        "CommonSuccess".into(),
        json!({
            "type": "object",
            "required": ["status", "data", "msg"],
            "properties": {
                "status": {"type": "integer", "enum": [200]},
                "data": {"$ref": "#/components/schemas/Media"},
                "msg": {"type": "string", "enum": ["success"]},
            },
            "additionalProperties": false,
        }),
    );
    extra.insert("NoMedia".into(), errors::no_media_schema());
    extra.insert(
        "PlatformResult".into(),
        platforms::platform_result_schema(None),
    );
    extra.insert("PlatformSuccess".into(), platform_success(None));
    for m in catalogue.iter() {
        let p = m.id.as_str();
        extra.insert(platforms::data_schema_name(p), platforms::data_schema(m));
        extra.insert(
            format!("PlatformResult{}", suffix(p)),
            platforms::platform_result_schema(Some(p)),
        );
        extra.insert(
            format!("PlatformSuccess{}", suffix(p)),
            platform_success(Some(p)),
        );
    }
    for templated in [false, true] {
        for status in errors::statuses(templated) {
            extra.insert(
                errors::schema_name(status, templated),
                errors::envelope_schema(status, templated),
            );
        }
    }
    extra.insert(
        "Capabilities".into(),
        capabilities_schema(catalogue, prices),
    );
    extra.insert(
        "Health".into(),
        json!({
            "type": "object",
            "required": ["status", "extractors"],
            "properties": {
                "status": {"type": "string", "enum": ["ok"]},
                "extractors": {"type": "integer", "minimum": 0, "description": "Extractor components loaded."},
            },
        }),
    );
    for (name, schema) in batch::schemas(&catalogue.ids()) {
        extra.insert(name, schema);
    }
    let batch_items = extra["BatchSuccess"]["properties"]["data"]["properties"]["items"].clone();
    for (name, schema) in jobs::schemas(batch_items, &catalogue.ids()) {
        extra.insert(name, schema);
    }
    let (status_path, status_schema) = super::health::public_openapi();
    extra.insert("Status".into(), status_schema);
    let components = doc.components.get_or_insert_with(Default::default);
    for (name, schema) in extra {
        components.schemas.insert(name, schema_from(schema));
    }
    components.add_security_scheme(
        "bearerAuth",
        utoipa::openapi::security::SecurityScheme::Http(
            utoipa::openapi::security::HttpBuilder::new()
                .scheme(utoipa::openapi::security::HttpAuthScheme::Bearer)
                .description(Some(
                    "An API key's token (`mp_live_…`), shown once at creation or reset.",
                ))
                .build(),
        ),
    );

    let mut paths = Map::new();
    // The generic operations' example: the first platform's.
    let example = catalogue
        .iter()
        .next()
        .map(|m| m.example_url.clone())
        .unwrap_or_default();
    let ids = catalogue.ids();
    paths.insert(
        "/api/v1/parse".into(),
        json!({"post": parse_operation(Route::Common, &example, &ids)}),
    );
    paths.insert(
        "/api/v1/platforms/{platform}/parse".into(),
        json!({"post": parse_operation(Route::Templated, &example, &ids)}),
    );
    for m in catalogue.iter() {
        let price = prices.get(&m.id).and_then(Value::as_i64).unwrap_or(m.price);
        paths.insert(
            format!("/api/v1/platforms/{}/parse", m.id),
            json!({"post": parse_operation(Route::Fixed(m, price), &m.example_url, &ids)}),
        );
    }
    let delivery = json!({
        "name": "delivery",
        "in": "query",
        "required": false,
        "description": "How every item's media is delivered, as on the single parse (`direct` or `tunnel`; default: the key's setting, else `direct`).",
        "schema": {"type": "string", "enum": ["direct", "tunnel"]},
    });
    let batch_headers = batch::Headers {
        json_response,
        replayed: replayed_header,
        policy: rate_limit_policy_header,
        status: rate_limit_header,
    };
    paths.insert(
        "/api/v1/batch".into(),
        json!({"post": batch::operation(
            &example,
            vec![delivery, idempotency_key_parameter(), cache_control_parameter()],
            &batch_headers,
        )}),
    );
    let job_parameters = vec![
        json!({
            "name": "delivery",
            "in": "query",
            "required": false,
            "description": "How every item's media is delivered, as on the single parse (`direct` or `tunnel`; default: the key's setting, else `direct`).",
            "schema": {"type": "string", "enum": ["direct", "tunnel"]},
        }),
        idempotency_key_parameter(),
        cache_control_parameter(),
    ];
    paths.insert(
        "/api/v1/jobs".into(),
        json!({"post": jobs::submit_operation(&example, job_parameters, &batch_headers)}),
    );
    paths.insert(
        "/api/v1/jobs/{id}".into(),
        json!({"get": jobs::read_operation(&batch_headers)}),
    );
    paths.insert(
        "/api/v1/jobs/{id}/events".into(),
        json!({"get": jobs::events_operation(&batch_headers)}),
    );
    paths.insert(
        "/api/v1/capabilities".into(),
        json!({"get": {
            "tags": ["service"],
            "operationId": "capabilities",
            "summary": "Platforms, extractor versions, URL shapes and prices",
            "description": "Public (no token). `data.billing` is the source of truth for prices.",
            "security": [],
            "responses": {"200": json_response("The service's capabilities.", "Capabilities", false, false)},
        }}),
    );
    paths.insert("/api/v1/status".into(), status_path);
    paths.insert(
        "/api/v1/tunnel/{token}".into(),
        json!({"get": tunnel_operation()}),
    );
    paths.insert(
        "/api/v1/tunnel/merge".into(),
        json!({"get": merge_operation()}),
    );
    paths.insert(
        "/healthz".into(),
        json!({"get": {
            "tags": ["service"],
            "operationId": "health",
            "summary": "Liveness",
            "security": [],
            "responses": {"200": json_response("The service is up.", "Health", false, false)},
        }}),
    );
    doc.paths = serde_json::from_value(Value::Object(paths))
        .unwrap_or_else(|e| panic!("generated paths are not valid OpenAPI: {e}"));
    doc
}

/// The admin document.
pub fn admin_document() -> OpenApi {
    let mut doc = AdminApi::openapi();
    let components = doc.components.get_or_insert_with(Default::default);
    components.add_security_scheme(
        "operatorToken",
        utoipa::openapi::security::SecurityScheme::Http(
            utoipa::openapi::security::HttpBuilder::new()
                .scheme(utoipa::openapi::security::HttpAuthScheme::Bearer)
                .description(Some("The operator token (`MEDIAPARSE_ADMIN_TOKEN`)."))
                .build(),
        ),
    );
    let (mut admin_paths, users_schemas) = super::console::invite_api::openapi();
    let (health_paths, health_schemas) = super::health::admin_openapi();
    admin_paths.extend(health_paths);
    let (webhook_paths, webhook_schemas) = super::admin_webhooks::admin_openapi();
    admin_paths.extend(webhook_paths);
    for (name, schema) in users_schemas
        .into_iter()
        .chain(health_schemas)
        .chain(webhook_schemas)
    {
        components.schemas.insert(name, schema_from(schema));
    }
    components.schemas.insert(
        "ErrorEnvelope".into(),
        schema_from(json!({
            "type": "object",
            "required": ["status", "data", "msg", "code"],
            "properties": {
                "status": {"type": "integer"},
                "data": {"type": "null"},
                "msg": {"type": "string"},
                "code": {"type": "string"},
            },
        })),
    );
    doc.paths = serde_json::from_value(Value::Object(admin_paths))
        .unwrap_or_else(|e| panic!("generated admin paths are not valid OpenAPI: {e}"));
    doc
}

/// Response headers every response of an operation carries.
const REQUIRED_HEADERS: [&str; 2] = ["X-Request-Id", "X-Credits-Charged"];

/// The public document as served: utoipa's document plus `required: true` on
/// the response headers that are always sent (utoipa's `Header` has no
/// `required` field), and the platform ids as the enum of `Media.platform`.
pub fn public_value(catalogue: &Catalogue, prices: &Prices) -> Value {
    let mut doc = serde_json::to_value(public_document(catalogue, prices))
        .unwrap_or_else(|e| panic!("OpenAPI document does not serialize: {e}"));
    let schemas = &mut doc["components"]["schemas"];
    let platform = &mut schemas["Media"]["properties"]["platform"];
    if platform.is_object() {
        platform["enum"] = json!(catalogue.ids());
    }
    // What the platform files say about inputs: share text, an example.
    let request = &mut schemas["ParseRequest"];
    if request.is_object() {
        let mut url = "Public media URL to parse (at most 4096 bytes).".to_string();
        if let Some(list) = platforms::share_text_platforms(catalogue) {
            url.push_str(&format!(
                " For {list}, copied share text containing a URL is accepted too."
            ));
        }
        request["properties"]["url"]["description"] = Value::String(url);
        if let Some(first) = catalogue.iter().next() {
            request["examples"] = json!([{"url": first.example_url}]);
        }
    }
    if let Some(paths) = doc["paths"].as_object_mut() {
        for operation in paths.values_mut().filter_map(Value::as_object_mut) {
            for op in operation.values_mut() {
                // `get_mut`, not indexing: indexing a map inserts `null` for a missing key.
                let Some(responses) = op.get_mut("responses").and_then(Value::as_object_mut) else {
                    continue;
                };
                for response in responses.values_mut() {
                    let Some(headers) = response.get_mut("headers").and_then(Value::as_object_mut)
                    else {
                        continue;
                    };
                    for (name, header) in headers.iter_mut() {
                        if REQUIRED_HEADERS.contains(&name.as_str()) {
                            header["required"] = Value::Bool(true);
                        }
                    }
                }
            }
        }
    }
    doc
}

/// The admin document as served.
pub fn admin_value() -> Value {
    serde_json::to_value(admin_document())
        .unwrap_or_else(|e| panic!("OpenAPI document does not serialize: {e}"))
}

/// Pretty JSON of the public document (`docs/openapi.json` holds it for
/// the bundled platforms at SPEC's prices).
pub fn public_json(catalogue: &Catalogue, prices: &Prices) -> String {
    pretty(&public_value(catalogue, prices))
}

/// Pretty JSON of the admin document (what `docs/openapi-admin.json` holds).
pub fn admin_json() -> String {
    pretty(&admin_value())
}

fn pretty(doc: &Value) -> String {
    let mut text = serde_json::to_string_pretty(doc)
        .unwrap_or_else(|e| panic!("OpenAPI document does not serialize: {e}"));
    text.push('\n');
    text
}

static ADMIN: LazyLock<Value> = LazyLock::new(admin_value);

/// `GET /openapi.json` (generated from the loaded catalogue on each request:
/// platforms come and go), `GET /openapi/admin.json` and the `/docs` page.
pub fn router() -> Router<Arc<AppState>> {
    let urls = [
        Url::new("mediaparse API", "/openapi.json"),
        Url::new("mediaparse admin API", "/openapi/admin.json"),
    ];
    let docs: Router<Arc<AppState>> = SwaggerUi::new("/docs")
        .config(Config::new(urls))
        .external_url_unchecked(
            Url::new("mediaparse admin API", "/openapi/admin.json"),
            ADMIN.clone(),
        )
        .into();
    docs.layer(axum::middleware::from_fn(super::page_headers::add))
        .route("/openapi.json", axum::routing::get(served_public))
}

async fn served_public(State(state): State<Arc<AppState>>) -> axum::Json<Value> {
    let catalogue = state.services.registry.known();
    let config = state.services.config.load();
    let prices = mediaparse_billing::price_table(&catalogue, |id| config.price_override(id));
    axum::Json(public_value(&catalogue, &prices))
}

enum Route<'a> {
    Common,
    Templated,
    Fixed(&'a Manifest, i64),
}

fn suffix(platform: &str) -> String {
    platforms::data_schema_name(platform)
        .trim_start_matches("PlatformData")
        .to_string()
}

fn platform_success(platform: Option<&str>) -> Value {
    let result = match platform {
        Some(p) => format!("PlatformResult{}", suffix(p)),
        None => "PlatformResult".into(),
    };
    json!({
        "type": "object",
        "required": ["status", "data", "msg"],
        "properties": {
            "status": {"type": "integer", "enum": [200]},
            "data": {"$ref": format!("#/components/schemas/{result}")},
            "msg": {"type": "string", "enum": ["success"]},
        },
        "additionalProperties": false,
    })
}

fn header(description: &str, schema: Value, required: bool) -> Value {
    json!({"description": description, "required": required, "schema": schema})
}

fn request_id_header() -> Value {
    header(
        "Identifies this request in the service's logs (an incoming sane `X-Request-Id` is kept).",
        json!({"type": "string", "minLength": 1}),
        true,
    )
}

/// A JSON response with a schema from the components and the usual headers.
fn json_response(description: &str, schema: &str, credits: bool, retry_after: bool) -> Value {
    let mut headers = Map::new();
    headers.insert("X-Request-Id".into(), request_id_header());
    if credits {
        headers.insert(
            "X-Credits-Charged".into(),
            header(
                "Credits this response cost: the platform's price on a success with media, 0 on everything else.",
                json!({"type": "integer", "minimum": 0}),
                true,
            ),
        );
    }
    if retry_after {
        headers.insert(
            "Retry-After".into(),
            header(
                "Whole seconds to wait before retrying (set with `rate_limited`, `auth_throttled`, `upstream_rate_limited`, `platform_unavailable`, `overloaded`, `store_busy` and `database_unavailable`).",
                json!({"type": "integer", "minimum": 0}),
                false,
            ),
        );
    }
    json!({
        "description": description,
        "headers": headers,
        "content": {"application/json": {"schema": {"$ref": format!("#/components/schemas/{schema}")}}},
    })
}

fn parse_operation(route: Route<'_>, example: &str, ids: &[&str]) -> Value {
    let (operation_id, summary, description, success) = match &route {
        Route::Common => (
            "parse".to_string(),
            "Parse a post URL (platform detected from the URL)".to_string(),
            "`data` is the media object itself, without platform data. Costs the detected platform's credits when media is returned.".to_string(),
            "CommonSuccess".to_string(),
        ),
        Route::Templated => (
            "parsePlatform".to_string(),
            "Parse a post URL of the platform in the path".to_string(),
            "`data` holds the media, the sanitized platform data and its version. The URL must belong to the path's platform (else `400` code `302`). The fixed paths `/api/v1/platforms/<platform>/parse` below are this operation for each platform, with that platform's `platformData` schema.".to_string(),
            "PlatformSuccess".to_string(),
        ),
        Route::Fixed(m, price) => (
            format!("parse{}", suffix(&m.id)),
            format!("Parse a {} post URL", m.id),
            format!(
                "`data` holds the media, the sanitized {} platform data and its version. Costs {price} credit(s) when media is returned.",
                m.id
            ),
            format!("PlatformSuccess{}", suffix(&m.id)),
        ),
    };
    let templated = matches!(route, Route::Templated);
    let mut responses = Map::new();
    let mut ok = json_response(
        "Parsed. Either the media (charged; `X-Credits-Charged` is the price) or, with code `304`, no downloadable media (not charged).",
        &success,
        true,
        false,
    );
    ok["content"]["application/json"]["schema"] = json!({"oneOf": [
        {"$ref": format!("#/components/schemas/{success}")},
        {"$ref": "#/components/schemas/NoMedia"},
    ]});
    ok["headers"]["Cache-Status"] = header(
        "RFC 9211: whether this parse's result came from the parse cache. `mediaparse; hit` (a result kept from an earlier extraction of the same post), `mediaparse; hit; detail=shared` (a concurrent parse's extraction, shared), `mediaparse; fwd=miss` (extracted now), `mediaparse; fwd=request` (the request's `Cache-Control` bypassed the cache). Every parse with media is charged either way. Absent on a replayed `Idempotency-Key` answer.",
        json!({"type": "string", "enum": CacheOutcome::ALL.map(CacheOutcome::header)}),
        false,
    );
    responses.insert("200".into(), ok);
    for status in errors::statuses(templated) {
        let description = errors::ERRORS
            .iter()
            .filter(|c| c.status == status && errors::documented(c, templated))
            .map(|c| format!("`{}`", c.wire))
            .collect::<Vec<_>>()
            .join(", ");
        responses.insert(
            status.to_string(),
            json_response(
                &format!("Error envelope, nothing charged: {description}."),
                &errors::schema_name(status, templated),
                true,
                status == 503 || status == 429,
            ),
        );
    }
    // Any stored answer (a success or a 4xx) may be a replay; any answer
    // after the token was accepted says where the key stands in its limit.
    for (status, response) in responses.iter_mut() {
        if let Some(headers) = response["headers"].as_object_mut() {
            headers.insert("Idempotent-Replayed".into(), replayed_header());
            if status != "401" {
                headers.insert("RateLimit-Policy".into(), rate_limit_policy_header());
                headers.insert("RateLimit".into(), rate_limit_header());
            }
        }
    }
    let mut op = json!({
        "tags": ["parse"],
        "operationId": operation_id,
        "summary": summary,
        "description": description,
        "security": [{"bearerAuth": []}],
        "requestBody": {
            "required": true,
            "content": {"application/json": {
                "schema": {"$ref": "#/components/schemas/ParseRequest"},
                "example": {"url": example},
            }},
        },
        "responses": responses,
    });
    let delivery = json!({
        "name": "delivery",
        "in": "query",
        "required": false,
        "description": "`tunnel`: every media URL (images, videos, audios, thumbnail) points at `/api/v1/tunnel/{token}` on this service and `headers` is empty; `direct`: the platform's URLs with the headers they need. Default: the key's setting, else `direct`. Another value is `400 invalid_request`.",
        "schema": {"type": "string", "enum": ["direct", "tunnel"]},
    });
    op["parameters"] = if templated {
        json!([{
            "name": "platform",
            "in": "path",
            "required": true,
            "description": "Platform id; another value is `404 unknown_platform`.",
            "schema": {"type": "string", "enum": ids},
        }, delivery, idempotency_key_parameter(), cache_control_parameter()])
    } else {
        json!([
            delivery,
            idempotency_key_parameter(),
            cache_control_parameter()
        ])
    };
    op
}

/// The optional `Idempotency-Key` request header (`http/idempotency.rs`).
fn idempotency_key_parameter() -> Value {
    json!({
        "name": "Idempotency-Key",
        "in": "header",
        "required": false,
        "description": "Names this request for 24 hours under the API key: a repeat answers the first request's completed response again (status, body, `X-Credits-Charged`) with `Idempotent-Replayed: true` and charges nothing; a repeat while the first runs waits for it; the same key with another body, endpoint or query is `422 idempotency_conflict`. Overloads, rate limits, timeouts and server errors are not stored (retry with the same key). Not 1 to 255 visible ASCII characters: `400 invalid_request`.",
        "schema": {
            "type": "string",
            "minLength": 1,
            "maxLength": idempotency::MAX_KEY_BYTES,
            "pattern": "^[!-~]+$",
        },
    })
}

/// The request's `Cache-Control` (`http/cache_status.rs`).
fn cache_control_parameter() -> Value {
    json!({
        "name": "Cache-Control",
        "in": "header",
        "required": false,
        "description": "`no-cache` or `no-store` (among other directives, comma-separated): extract now, neither reading nor sharing a cached result (the answer says `Cache-Status: mediaparse; fwd=request`). Without it, a result of the same post kept within the platform's TTL (never past its media URLs' expiry) may be served; it is charged the same.",
        "schema": {"type": "string"},
        "example": "no-cache",
    })
}

/// `Idempotent-Replayed: true` on an answer given again for a repeated key.
/// `RateLimit-Policy` (draft-ietf-httpapi-ratelimit-headers; `http/rate_headers.rs`).
fn rate_limit_policy_header() -> Value {
    header(
        "The key's rate limit (IETF draft-ietf-httpapi-ratelimit-headers): a structured-field list of one policy, `\"parse\";q=<requests>;w=60` (`q` requests per `w` seconds). Sent once the token is accepted; absent for a key whose rate limit is off.",
        json!({"type": "string", "pattern": "^\"[a-z]+\";q=[0-9]+;w=[0-9]+$", "examples": ["\"parse\";q=60;w=60"]}),
        false,
    )
}

/// `RateLimit` (draft-ietf-httpapi-ratelimit-headers; `http/rate_headers.rs`).
fn rate_limit_header() -> Value {
    header(
        "Where the key stands in the policy of `RateLimit-Policy`: `\"parse\";r=<remaining>;t=<seconds>`, the requests still allowed after this one and the whole seconds until the full quota is available again. A `429 rate_limited` says `r=0` and `t` equal to its `Retry-After`. Absent when `RateLimit-Policy` is.",
        json!({"type": "string", "pattern": "^\"[a-z]+\";r=[0-9]+;t=[0-9]+$", "examples": ["\"parse\";r=42;t=17"]}),
        false,
    )
}

fn replayed_header() -> Value {
    header(
        "`true` when this is the stored answer to an earlier request with the same `Idempotency-Key` (nothing charged again; `X-Credits-Charged` is the original charge). Absent otherwise.",
        json!({"type": "string", "enum": ["true"]}),
        false,
    )
}

/// An error envelope answer whose `code` is one of `wires`.
fn tunnel_error(wires: &[&str]) -> Value {
    let listed = wires
        .iter()
        .map(|w| format!("`{w}`"))
        .collect::<Vec<_>>()
        .join(" or ");
    json!({
        "description": format!("Error envelope, code {listed}."),
        "content": {"application/json": {"schema": {"type": "object", "required": ["status", "data", "msg", "code"], "properties": {
            "status": {"type": "integer"}, "data": {"type": "null"}, "msg": {"type": "string"}, "code": {"type": "string", "enum": wires},
        }}}},
    })
}

/// `GET /api/v1/tunnel/merge`: one MP4 from a video and an audio tunnel token.
fn merge_operation() -> Value {
    let token = |name: &str, what: &str| {
        json!({
            "name": name,
            "in": "query",
            "required": true,
            "description": format!("The tunnel token (the last path segment of a tunnel URL) of the {what} stream."),
            "schema": {"type": "string"},
        })
    };
    json!({
        "tags": ["media"],
        "operationId": "tunnelMerge",
        "summary": "One MP4 from a separate video and audio stream (ffmpeg, no re-encoding)",
        "description": "For platforms that serve video and audio apart (DASH: YouTube, Bilibili). No `Authorization`: the tokens are the capability. The answer is a fragmented MP4 (stream copy of the first video stream of `video` and the first audio stream of `audio`), streamed as it is made, without `Content-Length` or `Range`. Its two inputs are fetched through the tunnel and count against the key's tunnel limits. Costs no credits. `501 merge_unavailable` when the service has no ffmpeg.",
        "security": [],
        "parameters": [token("video", "video"), token("audio", "audio")],
        "responses": {
            "200": {
                "description": "The merged fragmented MP4.",
                "content": {"video/mp4": {"schema": {"type": "string", "format": "binary"}}},
            },
            "400": tunnel_error(&["invalid_request"]),
            "404": tunnel_error(&["tunnel_not_found"]),
            "410": tunnel_error(&["tunnel_expired"]),
            "501": tunnel_error(&["merge_unavailable"]),
            "502": tunnel_error(&["upstream_error"]),
            "503": tunnel_error(&["overloaded"]),
            "504": tunnel_error(&["upstream_timeout"]),
        },
    })
}

/// `GET|HEAD /api/v1/tunnel/{token}`: the media behind a tunnel URL.
fn tunnel_operation() -> Value {
    let error = |wire: &str| tunnel_error(&[wire]);
    let bytes = |description: &str| {
        json!({
            "description": description,
            "headers": {
                "Content-Type": {"schema": {"type": "string"}},
                "Content-Length": {"schema": {"type": "integer"}},
                "Content-Range": {"schema": {"type": "string"}},
                "Accept-Ranges": {"schema": {"type": "string"}},
                "ETag": {"schema": {"type": "string"}},
                "Last-Modified": {"schema": {"type": "string"}},
            },
            "content": {"*/*": {"schema": {"type": "string", "format": "binary"}}},
        })
    };
    json!({
        "tags": ["media"],
        "operationId": "tunnel",
        "summary": "The media behind a tunnel URL (`?delivery=tunnel`)",
        "description": "No `Authorization`: the sealed token is the capability, so a browser `<video src>` works. `Range`, `If-Range`, `If-None-Match` and `If-Modified-Since` are forwarded to the platform's CDN with the headers and cookie the media needs; the body is streamed. Tunnel traffic costs no credits; per key, concurrent streams and bytes per UTC day are limited (`429 tunnel_limited` with `Retry-After`), and streams to one platform are bounded overall (`503 overloaded`). `HEAD` answers the same headers without a body.",
        "security": [],
        "parameters": [{
            "name": "token",
            "in": "path",
            "required": true,
            "description": "The token a parse with `delivery=tunnel` returned.",
            "schema": {"type": "string"},
        }],
        "responses": {
            "200": bytes("The whole media."),
            "206": bytes("The range asked for."),
            "404": error("tunnel_not_found"),
            "410": error("tunnel_expired"),
            "429": error("tunnel_limited"),
            "502": error("upstream_error"),
            "503": tunnel_error(&["extractor_unavailable", "overloaded"]),
            "504": error("upstream_timeout"),
        },
    })
}

fn capabilities_schema(catalogue: &Catalogue, price_table: &Prices) -> Value {
    let ids = catalogue.ids();
    let prices: Map<String, Value> = catalogue
        .iter()
        .map(|m| {
            let price = price_table.get(&m.id).cloned().unwrap_or(m.price.into());
            (m.id.clone(), json!({"type": "integer", "enum": [price]}))
        })
        .collect();
    json!({
        "type": "object",
        "required": ["status", "data", "msg"],
        "properties": {
            "status": {"type": "integer", "enum": [200]},
            "msg": {"type": "string", "enum": ["success"]},
            "data": {
                "type": "object",
                "required": ["apiVersion", "platforms", "billing", "platformDataVersion"],
                "properties": {
                    "apiVersion": {"type": "string", "enum": [API_VERSION]},
                    "platformDataVersion": {"type": "string", "enum": ["1"]},
                    "platforms": {"type": "array", "items": {
                        "type": "object",
                        "required": ["id", "enabled", "extractorVersion", "urlShapes", "credits"],
                        "properties": {
                            "id": {"type": "string", "enum": ids},
                            "enabled": {"type": "boolean", "description": "A component for the platform is loaded."},
                            "extractorVersion": {"type": ["string", "null"]},
                            "urlShapes": {"type": "array", "items": {"type": "string"}},
                            "credits": {"type": "integer", "minimum": 0, "description": "Price of a successful parse."},
                        },
                    }},
                    "billing": {
                        "type": "object",
                        "required": ["unit", "chargedWhen", "prices"],
                        "properties": {
                            "unit": {"type": "string", "enum": ["credit"]},
                            "chargedWhen": {"type": "string"},
                            "prices": {"type": "object", "required": ids, "properties": prices, "additionalProperties": false},
                        },
                    },
                },
            },
        },
    })
}

fn schema_from(value: Value) -> RefOr<Schema> {
    serde_json::from_value(value)
        .unwrap_or_else(|e| panic!("generated schema is not valid OpenAPI: {e}"))
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    fn check(file: &str, generated: String) {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../docs")
            .join(file);
        if std::env::var("MEDIAPARSE_BLESS").is_ok_and(|v| v == "1") {
            std::fs::write(&path, &generated).unwrap();
            return;
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == generated,
            "docs/{file} differs from the document the code generates: the interface changed. Review the change, then run `MEDIAPARSE_BLESS=1 cargo test -p mediaparse-http openapi` and commit docs/{file}."
        );
    }

    use mediaparse_catalogue::Catalogue;

    /// The bundled platforms (`extractors/*/platform.toml`) at their prices.
    fn bundled() -> (Catalogue, super::Prices) {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../extractors");
        let catalogue = Catalogue::from_source_tree(&dir).unwrap();
        let prices = mediaparse_billing::price_table(&catalogue, |_| None);
        (catalogue, prices)
    }

    fn bundled_json() -> String {
        let (catalogue, prices) = bundled();
        super::public_json(&catalogue, &prices)
    }

    #[test]
    fn committed_public_document_is_current() {
        check("openapi.json", bundled_json());
    }

    #[test]
    fn committed_admin_document_is_current() {
        check("openapi-admin.json", super::admin_json());
    }

    #[test]
    fn public_document_basics() {
        let (catalogue, _) = bundled();
        let doc: serde_json::Value = serde_json::from_str(&bundled_json()).unwrap();
        assert_eq!(doc["openapi"], "3.1.0");
        assert_eq!(doc["info"]["version"], "1.0.0");
        assert_eq!(
            doc["components"]["schemas"]["ParseRequest"]["additionalProperties"],
            false
        );
        assert_eq!(catalogue.len(), 11);
        for m in catalogue.iter() {
            let p = &m.id;
            let op = &doc["paths"][format!("/api/v1/platforms/{p}/parse")]["post"];
            assert!(op.is_object(), "{p} has its fixed path");
            assert_eq!(op["security"][0]["bearerAuth"], serde_json::json!([]));
            let data = &doc["components"]["schemas"][super::platforms::data_schema_name(p)];
            for (member, _) in m.listed() {
                assert!(data["properties"][member].is_object(), "{p}.{member}");
            }
        }
        let admin: serde_json::Value = serde_json::from_str(&super::admin_json()).unwrap();
        assert!(
            admin["paths"]
                .as_object()
                .is_none_or(|p| p.keys().all(|k| k.starts_with("/api/v1/admin/"))),
            "the admin document holds only admin paths"
        );
        assert!(
            doc["paths"]
                .as_object()
                .unwrap()
                .keys()
                .all(|k| !k.starts_with("/api/v1/admin")),
            "no admin path in the public document"
        );
    }
}
