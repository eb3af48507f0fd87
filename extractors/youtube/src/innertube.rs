//! The InnerTube requests (guide section 3): VISIONOS `player` (primary),
//! ANDROID `reel_item_watch` (fallback) and the small WEB `$fields` call
//! for `microformat`. Bodies are deterministic: same video, same bytes.

use mediaparse_sdk::{Context, HttpRequest};
use serde_json::json;

use crate::clients::{ClientDef, Endpoint};

pub use crate::clients::{API_HOST, WEB_HOST, WEB_USER_AGENT};

pub const WEB_FIELDS_URL: &str = "https://www.youtube.com/youtubei/v1/player?prettyPrint=false&$fields=microformat,videoDetails.thumbnail.thumbnails,videoDetails.videoId";
/// The `$fields` call's WEB version (the `web` client's, overridable as `web_version`).
const WEB_FIELDS_VERSION: &str = "2.20260708.00.00";

const HL: &str = "en";
const GL: &str = "US";
const ACCEPT_LANGUAGE: &str = "en-US,en;q=0.9";

/// A 16-character client playback nonce derived from the video id (other
/// projects draw it at random; extractors have no randomness).
pub fn cpn(video_id: &str, salt: &str) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in salt.bytes().chain(video_id.bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    (0..16)
        .map(|_| {
            h ^= h >> 29;
            h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
            ALPHABET[(h >> 58) as usize] as char
        })
        .collect()
}

fn base_context(client: serde_json::Value) -> serde_json::Value {
    json!({
        "client": client,
        "request": {"useSsl": true, "internalExperimentFlags": []},
        "user": {"lockedSafetyMode": false}
    })
}

fn with_visitor(mut client: serde_json::Value, ctx: &Context) -> serde_json::Value {
    if let (Some(v), Some(obj)) = (ctx.config("visitor_data"), client.as_object_mut()) {
        obj.insert("visitorData".into(), v.trim().into());
    }
    client
}

/// What a client's `player` (or `reel_item_watch`) call carries besides
/// the video: the player's signature timestamp for clients with
/// challenges, a proof-of-origin token for clients that need one.
#[derive(Clone, Copy, Debug, Default)]
pub struct Extras<'a> {
    pub signature_timestamp: Option<u32>,
    pub po_token: Option<&'a str>,
}

/// One client's call for `video_id`. Bodies are deterministic (same
/// client, video and extras: same bytes), so the flow finds a client's
/// answer by rebuilding its request.
pub fn player(def: &ClientDef, video_id: &str, ctx: &Context, extras: Extras<'_>) -> HttpRequest {
    let mut client = serde_json::Map::new();
    client.insert("clientName".into(), def.name.clone().into());
    client.insert("clientVersion".into(), def.version.clone().into());
    client.extend(def.context.clone());
    client.insert("hl".into(), HL.into());
    client.insert("gl".into(), GL.into());
    client.insert("utcOffsetMinutes".into(), 0.into());
    let client = with_visitor(serde_json::Value::Object(client), ctx);
    let mut context = json!({"client": client});
    if def.embed_url {
        context["thirdParty"] =
            json!({"embedUrl": format!("https://www.youtube.com/embed/{video_id}")});
    }
    context["request"] = json!({"useSsl": true, "internalExperimentFlags": []});
    context["user"] = json!({"lockedSafetyMode": false});

    // The video part: the cpn for clients without challenges (what NewPipe
    // sends), the signature timestamp for those with.
    let mut video = json!({"videoId": video_id});
    match extras.signature_timestamp {
        Some(sts) => {
            video["playbackContext"] =
                json!({"contentPlaybackContext": {"signatureTimestamp": sts}});
        }
        None => video["cpn"] = cpn(video_id, &def.name).into(),
    }
    video["contentCheckOk"] = true.into();
    video["racyCheckOk"] = true.into();
    let mut body = json!({"context": context});
    match def.endpoint {
        Endpoint::Player => {
            if let (Some(b), Some(v)) = (body.as_object_mut(), video.as_object()) {
                b.extend(v.clone());
            }
        }
        Endpoint::Reel => {
            body["playerRequest"] = video;
            body["disablePlayerResponse"] = false.into();
        }
    }
    if let Some(token) = extras.po_token {
        body["serviceIntegrityDimensions"] = json!({"poToken": token});
    }

    let host = &def.host;
    let mut url = match def.endpoint {
        Endpoint::Player => {
            format!("https://{host}/youtubei/v1/player?prettyPrint=false&id={video_id}")
        }
        Endpoint::Reel => format!(
            "https://{host}/youtubei/v1/reel/reel_item_watch?prettyPrint=false&id={video_id}&$fields=playerResponse"
        ),
    };
    if let Some(key) = &def.api_key {
        url.push_str("&key=");
        url.push_str(key);
    }
    let mut request = HttpRequest::post(url, body.to_string())
        .header("Content-Type", "application/json")
        .header("User-Agent", def.user_agent())
        .header("X-Goog-Api-Format-Version", "2")
        .header("Accept-Language", ACCEPT_LANGUAGE);
    if let Some(v) = ctx.config("visitor_data") {
        request = request.header("X-Goog-Visitor-Id", v.trim());
    }
    if let Some(id) = def.name_id {
        request = request
            .header("X-YouTube-Client-Name", id.to_string())
            .header("X-YouTube-Client-Version", def.version.clone());
    }
    if def.host == WEB_HOST {
        let origin = "https://www.youtube.com";
        request = request.header("Origin", origin);
        if def.embed_url {
            request = request.header("Referer", format!("{origin}/embed/{video_id}"));
        }
        // The anonymous consent cookie NewPipe sends; not an operator secret.
        request = request.header("Cookie", "SOCS=CAE=");
    }
    request
}

/// Round 1b: the WEB `$fields` call, for `microformat` only.
pub fn web_fields(video_id: &str, ctx: &Context) -> HttpRequest {
    let version = ctx
        .config("web_version")
        .unwrap_or(WEB_FIELDS_VERSION)
        .trim()
        .to_string();
    let client = json!({
        "clientName": "WEB",
        "clientVersion": version,
        "clientScreen": "WATCH",
        "platform": "DESKTOP",
        "hl": HL,
        "gl": GL,
        "utcOffsetMinutes": 0
    });
    let body = json!({
        "context": base_context(client),
        "videoId": video_id,
        "contentCheckOk": true,
        "racyCheckOk": true
    });
    HttpRequest::post(WEB_FIELDS_URL, body.to_string())
        .header("Content-Type", "application/json")
        .header("X-YouTube-Client-Name", "1")
        .header("X-YouTube-Client-Version", version)
        .header("Origin", "https://www.youtube.com")
        .header("Referer", "https://www.youtube.com")
        // The anonymous consent cookie NewPipe sends; not an operator secret.
        .header("Cookie", "SOCS=CAE=")
        .header("Accept-Language", ACCEPT_LANGUAGE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpn_is_deterministic_and_url_safe() {
        let a = cpn("M4gD1WSo5mA", "VISIONOS");
        assert_eq!(a, cpn("M4gD1WSo5mA", "VISIONOS"));
        assert_ne!(a, cpn("M4gD1WSo5mA", "ANDROID"));
        assert_eq!(a.len(), 16);
        assert!(
            a.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        );
    }

    #[test]
    fn versions_follow_operator_config() {
        let ctx = mediaparse_sdk::testing::context(&[("android_version", "21.30.100")]);
        let defs = crate::clients::configured(&ctx).unwrap_or_else(|f| panic!("{f}"));
        let android = &defs[1];
        assert!(android.user_agent().contains("/21.30.100 "));
        let req = player(android, "M4gD1WSo5mA", &ctx, Extras::default());
        assert!(req.url.contains("/reel/reel_item_watch?"));
        let body = String::from_utf8(req.body.unwrap_or_default()).unwrap_or_default();
        assert!(body.contains("\"clientVersion\":\"21.30.100\""));
        assert!(body.contains("\"playerRequest\":{\"videoId\":\"M4gD1WSo5mA\""));
    }

    #[test]
    fn embedded_client_names_its_page_and_tokens_ride_along() {
        let ctx = Context::default();
        let def = crate::clients::builtin("web_embedded").unwrap_or_else(|| panic!("built in"));
        let extras = Extras {
            signature_timestamp: Some(20131),
            po_token: Some("tok"),
        };
        let req = player(&def, "M4gD1WSo5mA", &ctx, extras);
        let body: serde_json::Value =
            serde_json::from_slice(&req.body.clone().unwrap_or_default()).unwrap_or_default();
        assert_eq!(
            body["context"]["thirdParty"]["embedUrl"],
            "https://www.youtube.com/embed/M4gD1WSo5mA"
        );
        assert_eq!(
            body["context"]["client"]["clientName"],
            "WEB_EMBEDDED_PLAYER"
        );
        assert_eq!(
            body["playbackContext"]["contentPlaybackContext"]["signatureTimestamp"],
            20131
        );
        assert_eq!(body["serviceIntegrityDimensions"]["poToken"], "tok");
        assert_eq!(req.header_value("X-YouTube-Client-Name"), Some("56"));
    }
}
