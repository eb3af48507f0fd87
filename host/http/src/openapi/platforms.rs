//! Per-platform parts of the document, from each platform's `platform.toml`:
//! the `platformData` schema (its listed members, the same ones the tests
//! check responses against, and its optional members) and the example post
//! URL (for the bundled platforms, each one a fixture case the demo service
//! can parse).

use mediaparse_catalogue::{Kind, Manifest};
use serde_json::{Map, Value, json};

/// The platforms whose `detect` accepts share text, for descriptions:
/// `"a, b and c"` (`None` when there is none).
pub fn share_text_platforms(catalogue: &mediaparse_catalogue::Catalogue) -> Option<String> {
    let ids: Vec<&str> = catalogue
        .iter()
        .filter(|m| m.share_text)
        .map(|m| m.id.as_str())
        .collect();
    match ids.split_last() {
        None => None,
        Some((last, [])) => Some(last.to_string()),
        Some((last, rest)) => Some(format!("{} and {last}", rest.join(", "))),
    }
}

/// Schema name of a platform's `platformData`.
pub fn data_schema_name(platform: &str) -> String {
    let mut chars = platform.chars();
    let capital: String = chars
        .next()
        .map(|c| c.to_ascii_uppercase())
        .into_iter()
        .chain(chars)
        .collect();
    format!("PlatformData{capital}")
}

fn kind_schema(kind: Kind) -> Value {
    match kind {
        Kind::String => json!({"type": "string"}),
        Kind::Number => json!({"type": "number"}),
        Kind::Object => json!({"type": "object"}),
        Kind::Array => json!({"type": "array"}),
        Kind::ObjectOrString => json!({
            "type": ["object", "string"],
            "description": "An object; older responses expose it as a JSON string."
        }),
    }
}

/// The `platformData` schema of one platform: the listed members required
/// with their types, every other public member allowed.
pub fn data_schema(manifest: &Manifest) -> Value {
    let platform = &manifest.id;
    let mut properties = Map::new();
    let mut required = Vec::new();
    for (name, kind) in manifest.listed() {
        properties.insert(name.to_string(), kind_schema(kind));
        required.push(name);
    }
    for m in &manifest.optional_members {
        let mut schema = kind_schema(m.kind);
        schema["description"] = Value::String(m.description.clone());
        properties.insert(m.name.clone(), schema);
    }
    json!({
        "type": "object",
        "description": format!(
            "Public fields of the final {platform} target object after recursive removal of sensitive fields (secrets, tokens, contact data, IPs, precise locations). Integers beyond 2^53 are strings. The listed members are stable within `platformDataVersion` \"1\"; further public members are preserved."
        ),
        "required": required,
        "properties": properties,
        "additionalProperties": true,
    })
}

/// `data` of a platform endpoint's success, for one platform (or any, with `None`).
pub fn platform_result_schema(platform: Option<&str>) -> Value {
    let data = match platform {
        Some(p) => json!({"$ref": format!("#/components/schemas/{}", data_schema_name(p))}),
        None => json!({
            "type": "object",
            "description": "The platform's `platformData` (see the `PlatformData…` schemas and the fixed per-platform paths).",
            "additionalProperties": true,
        }),
    };
    json!({
        "type": "object",
        "required": ["media", "platformData", "platformDataVersion"],
        "properties": {
            "media": {"$ref": "#/components/schemas/Media"},
            "platformData": data,
            "platformDataVersion": {"type": "string", "enum": ["1"], "description": "Version of the platform data contract."},
        },
        "additionalProperties": false,
    })
}
