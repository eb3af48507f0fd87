//! Strategy B (guide §3): the app API `multi/aweme/detail`, used only when
//! the operator configured an install id (`iid`, optionally `device_id`)
//! and the post page failed with an anti-bot, network-block or
//! layout signal. Everything a real app randomises is derived from the
//! install id and `now`, so a parse replays exactly.

use mediaparse_sdk::encode::strict as encode;
use mediaparse_sdk::serde_json::{Map, Value};
use mediaparse_sdk::spec::fill_missing_members;
use mediaparse_sdk::{
    Audio, Context, Exchange, Failure, Header, HttpRequest, HttpResponse, Image, Media,
    MediaSource, Result, Video, ids,
};
use serde::Deserialize;
use sha2::{Digest, Sha256};

use crate::map::{audio_mime, nonempty, parse_url_key, scale, usable};

pub const HOST: &str = "api16-normal-c-useast1a.tiktokv.com";
const PATH: &str = "/aweme/v1/multi/aweme/detail/";
const APP_VERSION: &str = "35.1.3";
const VERSION_CODE: &str = "350103";
const MANIFEST_VERSION: &str = "2023501030";

/// The operator's app identity, when configured.
pub struct AppInfo {
    iid: String,
    device_id: String,
    /// SHA-256 of the install id: the source of every "random" value.
    seed: [u8; 32],
}

impl AppInfo {
    pub fn from_config(ctx: &Context) -> Option<Self> {
        let iid = ctx.config("iid")?.trim().to_string();
        if !iid.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let seed: [u8; 32] = Sha256::digest(iid.as_bytes()).into();
        let device_id = ctx
            .config("device_id")
            .map(|d| d.trim().to_string())
            .filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
            .unwrap_or_else(|| derived_device_id(&seed));
        Some(AppInfo {
            iid,
            device_id,
            seed,
        })
    }

    pub fn user_agent() -> String {
        format!(
            "com.zhiliaoapp.musically/{MANIFEST_VERSION} (Linux; U; Android 13; en_US; Pixel 7; Build/TD1A.220804.031; Cronet/58.0.2991.0)"
        )
    }

    /// The detail request for post `id`.
    pub fn request(&self, id: &str, now_unix_ms: u64) -> HttpRequest {
        let now_s = now_unix_ms / 1000;
        let hex = |from: usize, len: usize| -> String {
            self.seed
                .iter()
                .cycle()
                .skip(from)
                .take(len.div_ceil(2))
                .map(|b| format!("{b:02x}"))
                .collect::<String>()[..len]
                .to_string()
        };
        let cdid = {
            let h = hex(0, 32);
            format!(
                "{}-{}-4{}-a{}-{}",
                &h[..8],
                &h[8..12],
                &h[13..16],
                &h[17..20],
                &h[20..32]
            )
        };
        let params: Vec<(&str, String)> = vec![
            ("device_platform", "android".into()),
            ("os", "android".into()),
            ("ssmix", "a".into()),
            ("_rticket", now_unix_ms.to_string()),
            ("cdid", cdid),
            ("channel", "googleplay".into()),
            ("aid", "0".into()),
            ("app_name", "musical_ly".into()),
            ("version_code", VERSION_CODE.into()),
            ("version_name", APP_VERSION.into()),
            ("manifest_version_code", MANIFEST_VERSION.into()),
            ("update_version_code", MANIFEST_VERSION.into()),
            ("ab_version", APP_VERSION.into()),
            ("resolution", "1080*2400".into()),
            ("dpi", "420".into()),
            ("device_type", "Pixel 7".into()),
            ("device_brand", "Google".into()),
            ("language", "en".into()),
            ("os_api", "29".into()),
            ("os_version", "13".into()),
            ("ac", "wifi".into()),
            ("is_pad", "0".into()),
            ("current_region", "US".into()),
            ("app_type", "normal".into()),
            ("sys_region", "US".into()),
            (
                "last_install_time",
                (now_s.saturating_sub(3 * 86_400)).to_string(),
            ),
            ("timezone_name", "America/New_York".into()),
            ("residence", "US".into()),
            ("app_language", "en".into()),
            ("timezone_offset", "-14400".into()),
            ("host_abi", "armeabi-v7a".into()),
            ("locale", "en".into()),
            ("ac2", "wifi5g".into()),
            ("uoo", "1".into()),
            ("carrier_region", "US".into()),
            ("op_region", "US".into()),
            ("build_number", APP_VERSION.into()),
            ("region", "US".into()),
            ("ts", now_s.to_string()),
            ("iid", self.iid.clone()),
            ("device_id", self.device_id.clone()),
            ("openudid", hex(16, 16)),
        ];
        let query = params
            .iter()
            .map(|(k, v)| format!("{k}={}", encode(v)))
            .collect::<Vec<_>>()
            .join("&");
        HttpRequest::post(
            format!("https://{HOST}{PATH}?{query}"),
            format!("aweme_ids=%5B{id}%5D&request_source=0"),
        )
        .header("User-Agent", Self::user_agent())
        .header("Content-Type", "application/x-www-form-urlencoded")
        .header("X-Argus", "")
        .header("Cookie", format!("odin_tt={}", hex(5, 160)))
    }
}

/// A 19-digit device id from the seed (yt-dlp draws a random one).
fn derived_device_id(seed: &[u8; 32]) -> String {
    let mut n = u64::from_be_bytes([
        seed[0], seed[1], seed[2], seed[3], seed[4], seed[5], seed[6], seed[7],
    ]);
    n = 7_250_000_000_000_000_000 + n % 100_000_000_000_000_000;
    n.to_string()
}

pub fn is_app(exchange: &Exchange) -> bool {
    exchange
        .request
        .url
        .starts_with(&format!("https://{HOST}{PATH}"))
}

#[derive(Deserialize)]
struct Detail {
    #[serde(default)]
    aweme_details: Option<Vec<Value>>,
    #[serde(default)]
    status_code: Option<Value>,
}

/// The post's aweme object from a detail answer.
pub fn aweme(response: &HttpResponse, id: &str) -> Result<Value> {
    if response.body.iter().all(u8::is_ascii_whitespace) {
        return Err(Failure::upstream(
            "the app API answered with an empty body (the configured app info must be rotated)",
        ));
    }
    if !response.is_success() {
        return Err(Failure::upstream(format!(
            "the app API answered HTTP {}",
            response.status
        )));
    }
    let detail: Detail = response
        .json()
        .map_err(|e| Failure::changed(format!("app API answer is not the known JSON: {e}")))?;
    let aweme = detail
        .aweme_details
        .unwrap_or_default()
        .into_iter()
        .find(|a| aweme_id(a) == id);
    aweme.ok_or_else(|| {
        let code = detail
            .status_code
            .map(|c| c.to_string())
            .unwrap_or_default();
        Failure::unavailable(format!(
            "the app API does not return this post (status_code {code})"
        ))
    })
}

fn aweme_id(aweme: &Value) -> String {
    match aweme.get("aweme_id") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => String::new(),
    }
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Aweme {
    desc: Option<String>,
    video: Option<AppVideo>,
    image_post_info: Option<AppImagePost>,
    music: Option<AppMusic>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct AppVideo {
    #[serde(deserialize_with = "ids::f64")]
    duration: f64,
    #[serde(deserialize_with = "ids::u32")]
    width: u32,
    #[serde(deserialize_with = "ids::u32")]
    height: u32,
    ratio: Option<String>,
    play_addr: Option<Addr>,
    bit_rate: Option<Vec<AppBitRate>>,
    cover: Option<Addr>,
    origin_cover: Option<Addr>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Addr {
    url_list: Option<Vec<Option<String>>>,
    #[serde(deserialize_with = "ids::u32")]
    width: u32,
    #[serde(deserialize_with = "ids::u32")]
    height: u32,
    url_key: Option<String>,
}

impl Addr {
    fn urls(&self) -> impl Iterator<Item = &str> {
        self.url_list
            .iter()
            .flatten()
            .flatten()
            .map(String::as_str)
            .filter(|u| usable(u))
    }
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct AppBitRate {
    gear_name: Option<String>,
    play_addr: Option<Addr>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct AppImagePost {
    images: Option<Vec<AppImage>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct AppImage {
    display_image: Option<Addr>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct AppMusic {
    play_url: Option<Addr>,
}

/// Map an app aweme (snake_case, duration in milliseconds) to the media.
pub fn media(aweme: &Value) -> Result<Media> {
    let aweme = Aweme::deserialize(aweme)
        .map_err(|e| Failure::changed(format!("aweme has an unknown shape: {e}")))?;
    let headers = vec![Header::new("User-Agent", AppInfo::user_agent())];
    let video = aweme.video.unwrap_or_default();
    let first = |a: &Option<Addr>| a.as_ref().and_then(|a| a.urls().next()).map(str::to_string);
    let mut media = Media {
        title: aweme.desc.unwrap_or_default(),
        thumbnail: first(&video.cover)
            .or_else(|| first(&video.origin_cover))
            .unwrap_or_default(),
        duration: video.duration / 1000.0,
        ..Media::default()
    };
    let item = |url: &str, quality: &str, size: (u32, u32)| {
        Video::mp4(url, quality, size, headers.clone())
    };
    match aweme.image_post_info {
        Some(post) => {
            media.images = post
                .images
                .unwrap_or_default()
                .iter()
                .filter_map(|i| {
                    let d = i.display_image.as_ref()?;
                    let url = d
                        .urls()
                        .find(|u| u.contains(".jpeg?"))
                        .or(d.urls().next())?;
                    Some(Image {
                        url: url.to_string(),
                        width: d.width,
                        height: d.height,
                    })
                })
                .collect();
        }
        None => {
            let size = |addr: &Addr| {
                if addr.width > 0 && addr.height > 0 {
                    (addr.width, addr.height)
                } else {
                    addr.url_key
                        .as_deref()
                        .and_then(parse_url_key)
                        .map(|k| scale(k.short_side, video.width, video.height))
                        .unwrap_or((0, 0))
                }
            };
            for rate in video.bit_rate.iter().flatten() {
                let Some(addr) = &rate.play_addr else {
                    continue;
                };
                let key = addr.url_key.as_deref().and_then(parse_url_key);
                if key.is_some_and(|k| k.codec == "bytevc2") {
                    continue;
                }
                let quality = nonempty(rate.gear_name.as_deref())
                    .map(str::to_string)
                    .or_else(|| key.map(|k| format!("{}p", k.label)))
                    .unwrap_or_default();
                for url in addr.urls() {
                    media.videos.push(item(url, &quality, size(addr)));
                }
            }
            if let Some(addr) = &video.play_addr {
                let quality = nonempty(video.ratio.as_deref()).unwrap_or_default();
                for url in addr.urls() {
                    media.videos.push(item(url, quality, size(addr)));
                }
            }
        }
    }
    if let Some(url) = aweme.music.as_ref().and_then(|m| first(&m.play_url)) {
        media.audios.push(Audio {
            mime_type: audio_mime(&url).into(),
            url,
            quality: "music".into(),
            bitrate: 0,
            source: MediaSource::Direct,
            headers,
        });
    }
    Ok(media)
}

/// platformData from an app aweme: its own (already SPEC-named) members,
/// `images` from `image_post_info.images`.
pub fn platform_data(aweme: &Value) -> Value {
    let mut out: Map<String, Value> = aweme.as_object().cloned().unwrap_or_default();
    out.insert("aweme_id".into(), aweme_id(aweme).into());
    let images = aweme
        .pointer("/image_post_info/images")
        .filter(|i| i.is_array())
        .cloned()
        .unwrap_or_else(|| Value::Array(vec![]));
    out.insert("images".into(), images);
    for key in ["desc"] {
        if !out.get(key).is_some_and(Value::is_string) {
            out.insert(key.into(), "".into());
        }
    }
    for key in ["author", "video", "statistics"] {
        if !out.get(key).is_some_and(Value::is_object) {
            out.remove(key);
        }
    }
    fill_missing_members("tiktok", &mut out);
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(pairs: &[(&str, &str)]) -> Context {
        Context {
            now_unix_ms: 1_700_000_000_000,
            config: pairs.iter().map(|(n, v)| Header::new(*n, *v)).collect(),
            remembered: Vec::new(),
        }
    }

    #[test]
    fn only_with_a_numeric_install_id() {
        assert!(AppInfo::from_config(&ctx(&[])).is_none());
        assert!(AppInfo::from_config(&ctx(&[("iid", "abc")])).is_none());
        let app = AppInfo::from_config(&ctx(&[("iid", "7300000000000000001")])).unwrap();
        assert_eq!(app.device_id.len(), 19);
        let given = AppInfo::from_config(&ctx(&[("iid", "1"), ("device_id", "7123")])).unwrap();
        assert_eq!(given.device_id, "7123");
    }

    #[test]
    fn request_is_deterministic() {
        let app = AppInfo::from_config(&ctx(&[("iid", "7300000000000000001")])).unwrap();
        let a = app.request("7", 1_700_000_000_000);
        let b = app.request("7", 1_700_000_000_000);
        assert_eq!(a, b);
        assert_eq!(a.method, "POST");
        assert!(a.url.contains("&iid=7300000000000000001&"));
        assert!(a.url.contains("device_type=Pixel%207"));
        assert_eq!(
            a.body.as_deref(),
            Some(&b"aweme_ids=%5B7%5D&request_source=0"[..])
        );
        let cookie = a.header_value("cookie").unwrap();
        assert_eq!(cookie.len(), "odin_tt=".len() + 160);
    }

    fn response(body: &str) -> HttpResponse {
        HttpResponse {
            request_url: String::new(),
            final_url: String::new(),
            status: 200,
            headers: vec![],
            body: body.as_bytes().to_vec(),
        }
    }

    #[test]
    fn encodes_like_a_form() {
        assert_eq!(encode("Pixel 7"), "Pixel%207");
        assert_eq!(encode("1080*2400"), "1080%2A2400");
        assert_eq!(encode("America/New_York"), "America%2FNew_York");
        assert_eq!(encode("35.1.3-x~"), "35.1.3-x~");
    }

    #[test]
    fn answers() {
        assert_eq!(
            aweme(&response(""), "1").unwrap_err().code(),
            "upstream_error"
        );
        assert_eq!(
            aweme(
                &response(r#"{"aweme_details":[{"aweme_id":"2"}],"status_code":0}"#),
                "1"
            )
            .unwrap_err()
            .code(),
            "content_unavailable"
        );
        let a = aweme(&response(r#"{"aweme_details":[{"aweme_id":"1"}]}"#), "1").unwrap();
        let data = platform_data(&a);
        assert!(mediaparse_sdk::spec::check_platform_data("tiktok", &data).is_empty());
    }
}
