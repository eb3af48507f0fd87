//! Per-platform parts of the document: the `platformData` schema of each
//! platform (SPEC.md's listed members, from `mediaparse_sdk::spec`, the same
//! table the tests check responses against), and an example post URL per
//! platform (each one a fixture case the demo service can parse).

use mediaparse_sdk::spec::{self, Kind};
use serde_json::{Map, Value, json};

/// One public post per platform that the demo's fake upstream can serve.
pub fn example_url(platform: &str) -> &'static str {
    match platform {
        "tiktok" => "https://www.tiktok.com/@lina.travels/photo/7349984207157387783",
        "douyin" => {
            "https://p3-sign.douyinpic.com/tos-cn-i-0813c001/oA0BcDeFgHiJkLmNoPqRsTuVwXyZ~tplv-dy-aweme-images:q75.jpeg?x-expires=1702591200&x-signature=Dd0eE%2FfF%3D&from=327834062"
        }
        "toutiao" => "https://www.toutiao.com/video/7505382061495176511/",
        "youtube" => "https://youtu.be/it3OtbTxQk0?si=Q2x7uU3n",
        "twitter" => "https://x.com/DivineDropbear/status/1850000000000000007",
        "instagram" => "https://www.instagram.com/p/DZcriO_x82j/embed/captioned/",
        "threads" => "https://www.threads.com/@carlosentendido/post/C8GJeHhPZX9",
        "xiaohongshu" => {
            "https://www.xiaohongshu.com/explore/644e0f65000000001300c589?xsec_token=ABvEx1nSl3W-RDOrtTZbrS4y5s8oTkFrTYFxpPpGbrEfQ=&xsec_source=pc_user"
        }
        "bilibili" => "https://www.bilibili.com/bangumi/play/ep85046",
        "kuaishou" => "https://v.m.chenzhongtech.com/fw/photo/3xatlas4q8n2k6m",
        "weibo" => "https://mapp.api.weibo.cn/fx/8c2b4e3a1f5d6e7a9b0c1d2e3f4a5b6c.html",
        _ => "",
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
pub fn data_schema(platform: &str) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for (name, kind) in spec::listed_members(platform) {
        properties.insert((*name).to_string(), kind_schema(*kind));
        required.push(*name);
    }
    if platform == "douyin" {
        for name in ["media_url", "media_type"] {
            properties.insert(
                name.into(),
                json!({"type": "string", "description": "Present when a direct media URL was parsed."}),
            );
        }
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
