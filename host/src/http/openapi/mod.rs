//! The interface description: OpenAPI 3.1.0 documents generated from the
//! code with utoipa, and the routes that serve them.
//!
//! - `GET /openapi.json` — the public API (version 1.0.0): both parse
//!   endpoints (templated and one fixed path per platform, each with its own
//!   `platformData` schema), capabilities, health.
//! - `GET /openapi/admin.json` — the operator's admin API, its own document.
//! - `GET /docs` — Swagger UI for both, its assets compiled into the binary
//!   (no CDN, works offline).
//!
//! The committed copies in `docs/openapi.json` and `docs/openapi-admin.json`
//! are compared with these by a test; `MEDIAPARSE_BLESS=1` rewrites them.

mod errors;
mod platforms;
mod schemas;

pub use errors::ERRORS;

use std::sync::{Arc, LazyLock};

use axum::Router;
use mediaparse_sdk::spec::PLATFORMS;
use serde_json::{Map, Value, json};
use utoipa::OpenApi as _;
use utoipa::openapi::{OpenApi, RefOr, Schema};
use utoipa_swagger_ui::{SwaggerUi, Url};

use super::state::AppState;

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
        (name = "service", description = "What the service offers, and whether it is up.")
    )
)]
struct PublicApi;

/// The admin API's own document. Admin handlers are annotated with
/// `#[utoipa::path(..., tag = "admin", security(("operatorToken" = [])))]`;
/// documenting one more is one line in `paths(...)` below.
#[derive(utoipa::OpenApi)]
#[openapi(
    info(
        title = "mediaparse admin API",
        version = "1.0.0",
        description = "The operator's API under `/api/v1/admin/`, guarded by the operator token (`MEDIAPARSE_ADMIN_TOKEN`; the admin API answers 404 when none is configured). A customer token never opens it. Errors use the same envelope `{status, data: null, msg, code}` as the public API."
    ),
    paths(),
    tags((name = "admin", description = "Keys, accounts and credits."))
)]
struct AdminApi;

/// The public document.
pub fn public_document() -> OpenApi {
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
    for p in PLATFORMS {
        extra.insert(platforms::data_schema_name(p), platforms::data_schema(p));
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
    extra.insert("Capabilities".into(), capabilities_schema());
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
    paths.insert(
        "/api/v1/parse".into(),
        json!({"post": parse_operation(Route::Common)}),
    );
    paths.insert(
        "/api/v1/platforms/{platform}/parse".into(),
        json!({"post": parse_operation(Route::Templated)}),
    );
    for p in PLATFORMS {
        paths.insert(
            format!("/api/v1/platforms/{p}/parse"),
            json!({"post": parse_operation(Route::Fixed(p))}),
        );
    }
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
    doc
}

/// Response headers every response of an operation carries.
const REQUIRED_HEADERS: [&str; 2] = ["X-Request-Id", "X-Credits-Charged"];

/// The public document as served: utoipa's document plus `required: true` on
/// the response headers that are always sent (utoipa's `Header` has no
/// `required` field).
pub fn public_value() -> Value {
    let mut doc = serde_json::to_value(public_document())
        .unwrap_or_else(|e| panic!("OpenAPI document does not serialize: {e}"));
    if let Some(paths) = doc["paths"].as_object_mut() {
        for operation in paths.values_mut().filter_map(Value::as_object_mut) {
            for op in operation.values_mut() {
                let Some(responses) = op["responses"].as_object_mut() else {
                    continue;
                };
                for response in responses.values_mut() {
                    let Some(headers) = response["headers"].as_object_mut() else {
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

/// Pretty JSON of the public document (what `docs/openapi.json` holds).
pub fn public_json() -> String {
    pretty(&public_value())
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

static PUBLIC: LazyLock<Value> = LazyLock::new(public_value);
static ADMIN: LazyLock<Value> = LazyLock::new(admin_value);

/// `GET /openapi.json`, `GET /openapi/admin.json` and the `/docs` page.
pub fn router() -> Router<Arc<AppState>> {
    SwaggerUi::new("/docs")
        .external_url_unchecked(Url::new("mediaparse API", "/openapi.json"), PUBLIC.clone())
        .external_url_unchecked(
            Url::new("mediaparse admin API", "/openapi/admin.json"),
            ADMIN.clone(),
        )
        .into()
}

enum Route<'a> {
    Common,
    Templated,
    Fixed(&'a str),
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
                "Seconds to wait before retrying (set with `upstream_rate_limited`).",
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

fn parse_operation(route: Route<'_>) -> Value {
    let (operation_id, summary, description, success, example) = match &route {
        Route::Common => (
            "parse".to_string(),
            "Parse a post URL (platform detected from the URL)".to_string(),
            "`data` is the media object itself, without platform data. Costs the detected platform's credits when media is returned.".to_string(),
            "CommonSuccess".to_string(),
            platforms::example_url("tiktok"),
        ),
        Route::Templated => (
            "parsePlatform".to_string(),
            "Parse a post URL of the platform in the path".to_string(),
            "`data` holds the media, the sanitized platform data and its version. The URL must belong to the path's platform (else `400` code `302`). The fixed paths `/api/v1/platforms/<platform>/parse` below are this operation for each platform, with that platform's `platformData` schema.".to_string(),
            "PlatformSuccess".to_string(),
            platforms::example_url("tiktok"),
        ),
        Route::Fixed(p) => (
            format!("parse{}", suffix(p)),
            format!("Parse a {p} post URL"),
            format!(
                "`data` holds the media, the sanitized {p} platform data and its version. Costs {} credit(s) when media is returned.",
                crate::billing::price(p)
            ),
            format!("PlatformSuccess{}", suffix(p)),
            platforms::example_url(p),
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
                status == 503,
            ),
        );
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
    if templated {
        op["parameters"] = json!([{
            "name": "platform",
            "in": "path",
            "required": true,
            "description": "Platform id; another value is `404 unknown_platform`.",
            "schema": {"type": "string", "enum": PLATFORMS},
        }]);
    }
    op
}

fn capabilities_schema() -> Value {
    let prices: Map<String, Value> = PLATFORMS
        .iter()
        .map(|p| {
            (
                (*p).to_string(),
                json!({"type": "integer", "enum": [crate::billing::price(p)]}),
            )
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
                            "id": {"type": "string", "enum": PLATFORMS},
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
                            "prices": {"type": "object", "required": PLATFORMS, "properties": prices, "additionalProperties": false},
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
            .join("../docs")
            .join(file);
        if std::env::var("MEDIAPARSE_BLESS").is_ok_and(|v| v == "1") {
            std::fs::write(&path, &generated).unwrap();
            return;
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == generated,
            "docs/{file} differs from the document the code generates: the interface changed. Review the change, then run `MEDIAPARSE_BLESS=1 cargo test -p mediaparse openapi` and commit docs/{file}."
        );
    }

    #[test]
    fn committed_public_document_is_current() {
        check("openapi.json", super::public_json());
    }

    #[test]
    fn committed_admin_document_is_current() {
        check("openapi-admin.json", super::admin_json());
    }

    #[test]
    fn public_document_basics() {
        let doc: serde_json::Value = serde_json::from_str(&super::public_json()).unwrap();
        assert_eq!(doc["openapi"], "3.1.0");
        assert_eq!(doc["info"]["version"], "1.0.0");
        assert_eq!(
            doc["components"]["schemas"]["ParseRequest"]["additionalProperties"],
            false
        );
        for p in mediaparse_sdk::spec::PLATFORMS {
            let op = &doc["paths"][format!("/api/v1/platforms/{p}/parse")]["post"];
            assert!(op.is_object(), "{p} has its fixed path");
            assert_eq!(op["security"][0]["bearerAuth"], serde_json::json!([]));
            let data = &doc["components"]["schemas"][super::platforms::data_schema_name(p)];
            for (member, _) in mediaparse_sdk::spec::listed_members(p) {
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
