//! The InnerTube requests (guide section 3): VISIONOS `player` (primary),
//! ANDROID `reel_item_watch` (fallback) and the small WEB `$fields` call
//! for `microformat`. Bodies are deterministic: same video, same bytes.

use mediaparse_sdk::{Context, HttpRequest};
use serde_json::json;

/// Host of the VISIONOS and ANDROID calls (NewPipe's recorded traffic).
pub const API_HOST: &str = "youtubei.googleapis.com";
/// Host of the WEB `$fields` call.
pub const WEB_HOST: &str = "www.youtube.com";

pub const PLAYER_URL: &str = "https://youtubei.googleapis.com/youtubei/v1/player";
pub const REEL_URL: &str = "https://youtubei.googleapis.com/youtubei/v1/reel/reel_item_watch";
/// The WEB client's own `player` call (its formats carry challenges).
pub const WEB_PLAYER_URL: &str = "https://www.youtube.com/youtubei/v1/player?prettyPrint=false&id=";
pub const WEB_FIELDS_URL: &str = "https://www.youtube.com/youtubei/v1/player?prettyPrint=false&$fields=microformat,videoDetails.thumbnail.thumbnails,videoDetails.videoId";

/// Client versions drift several times a year; each can be overridden by
/// the operator setting of the same name.
pub const VISIONOS_VERSION: &str = "1.02";
pub const ANDROID_VERSION: &str = "21.03.36";
pub const WEB_VERSION: &str = "2.20260603.05.00";

/// A desktop browser's User-Agent for the WEB client and its media URLs.
pub const WEB_USER_AGENT: &str = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/138.0.0.0 Safari/537.36";

const HL: &str = "en";
const GL: &str = "US";
const ACCEPT_LANGUAGE: &str = "en-US,en;q=0.9";

/// Which client produced an answer (its UA goes on the media headers).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Client {
    VisionOs,
    Android,
    /// WEB with the player's `n` and signature challenges solved.
    Web,
}

impl Client {
    pub fn name(self) -> &'static str {
        match self {
            Client::VisionOs => "VISIONOS",
            Client::Android => "ANDROID",
            Client::Web => "WEB",
        }
    }

    pub fn version(self, ctx: &Context) -> String {
        match self {
            Client::VisionOs => ctx.config("visionos_version").unwrap_or(VISIONOS_VERSION),
            Client::Android => ctx.config("android_version").unwrap_or(ANDROID_VERSION),
            Client::Web => ctx.config("web_version").unwrap_or(WEB_VERSION),
        }
        .trim()
        .to_string()
    }

    /// The client's own User-Agent; media URLs it returns are fetched with it.
    pub fn user_agent(self, ctx: &Context) -> String {
        let v = self.version(ctx);
        match self {
            Client::VisionOs => format!(
                "com.google.visionos.youtube/{v}(RealityDevice14,1; U; CPU visionOS 25_6_0 like Mac OS X; US)"
            ),
            Client::Android => {
                format!("com.google.android.youtube/{v} (Linux; U; Android 15; US) gzip")
            }
            Client::Web => WEB_USER_AGENT.to_string(),
        }
    }

    /// Is this exchange this client's call?
    pub fn made(self, url: &str) -> bool {
        match self {
            Client::VisionOs => url.starts_with(PLAYER_URL),
            Client::Android => url.starts_with(REEL_URL),
            Client::Web => url.starts_with(WEB_PLAYER_URL),
        }
    }
}

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

fn api_headers(request: HttpRequest, ua: String, ctx: &Context) -> HttpRequest {
    let request = request
        .header("Content-Type", "application/json")
        .header("User-Agent", ua)
        .header("X-Goog-Api-Format-Version", "2")
        .header("Accept-Language", ACCEPT_LANGUAGE);
    match ctx.config("visitor_data") {
        Some(v) => request.header("X-Goog-Visitor-Id", v.trim()),
        None => request,
    }
}

/// Round 1a: the VISIONOS `player` call.
pub fn visionos(video_id: &str, ctx: &Context) -> HttpRequest {
    let c = Client::VisionOs;
    let client = with_visitor(
        json!({
            "clientName": c.name(),
            "clientVersion": c.version(ctx),
            "clientScreen": "WATCH",
            "platform": "MOBILE",
            "deviceMake": "Apple",
            "deviceModel": "RealityDevice14,1",
            "osName": "visionOS",
            "osVersion": "25.6.0.23O471",
            "hl": HL,
            "gl": GL,
            "utcOffsetMinutes": 0
        }),
        ctx,
    );
    let body = json!({
        "context": base_context(client),
        "videoId": video_id,
        "cpn": cpn(video_id, c.name()),
        "contentCheckOk": true,
        "racyCheckOk": true
    });
    let url = format!("{PLAYER_URL}?prettyPrint=false&id={video_id}");
    api_headers(
        HttpRequest::post(url, body.to_string()),
        c.user_agent(ctx),
        ctx,
    )
}

/// Round 2: the ANDROID `reel_item_watch` call (answer wrapped in `playerResponse`).
pub fn android(video_id: &str, ctx: &Context) -> HttpRequest {
    let c = Client::Android;
    let client = with_visitor(
        json!({
            "clientName": c.name(),
            "clientVersion": c.version(ctx),
            "clientScreen": "WATCH",
            "platform": "MOBILE",
            "osName": "Android",
            "osVersion": "15",
            "androidSdkVersion": 35,
            "hl": HL,
            "gl": GL,
            "utcOffsetMinutes": 0
        }),
        ctx,
    );
    let body = json!({
        "context": base_context(client),
        "playerRequest": {
            "videoId": video_id,
            "cpn": cpn(video_id, c.name()),
            "contentCheckOk": true,
            "racyCheckOk": true
        },
        "disablePlayerResponse": false
    });
    let url = format!("{REEL_URL}?prettyPrint=false&id={video_id}&$fields=playerResponse");
    api_headers(
        HttpRequest::post(url, body.to_string()),
        c.user_agent(ctx),
        ctx,
    )
}

/// The WEB client's `player` call, with the player script's signature
/// timestamp so that ciphered formats match the script that deciphers them.
pub fn web(video_id: &str, signature_timestamp: u32, ctx: &Context) -> HttpRequest {
    let c = Client::Web;
    let client = with_visitor(
        json!({
            "clientName": c.name(),
            "clientVersion": c.version(ctx).trim(),
            "clientScreen": "WATCH",
            "platform": "DESKTOP",
            "hl": HL,
            "gl": GL,
            "utcOffsetMinutes": 0
        }),
        ctx,
    );
    let body = json!({
        "context": base_context(client),
        "videoId": video_id,
        "playbackContext": {"contentPlaybackContext": {"signatureTimestamp": signature_timestamp}},
        "contentCheckOk": true,
        "racyCheckOk": true
    });
    api_headers(
        HttpRequest::post(format!("{WEB_PLAYER_URL}{video_id}"), body.to_string()),
        c.user_agent(ctx),
        ctx,
    )
    .header("X-YouTube-Client-Name", "1")
    .header("X-YouTube-Client-Version", c.version(ctx))
    .header("Origin", "https://www.youtube.com")
    .header("Cookie", "SOCS=CAE=")
}

/// Round 1b: the WEB `$fields` call, for `microformat` only.
pub fn web_fields(video_id: &str, ctx: &Context) -> HttpRequest {
    let version = ctx
        .config("web_version")
        .unwrap_or(WEB_VERSION)
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
        let ctx = Context {
            now_unix_ms: 0,
            config: vec![mediaparse_sdk::Header::new("android_version", "21.26.364")],
            remembered: Vec::new(),
        };
        assert!(Client::Android.user_agent(&ctx).contains("/21.26.364 "));
        let req = android("M4gD1WSo5mA", &ctx);
        let body = String::from_utf8(req.body.unwrap_or_default()).unwrap_or_default();
        assert!(body.contains("\"clientVersion\":\"21.26.364\""));
        assert!(body.contains("\"videoId\":\"M4gD1WSo5mA\""));
    }
}
