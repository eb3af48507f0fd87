//! Toutiao's play-info shapes, all mapped to video items:
//! - `initialVideo.videoPlayInfo` (desktop page): `video_list[]` with plain
//!   `main_url` and `video_meta{definition, vwidth, vheight, vtype}`;
//! - the legacy `video_play_info` (a JSON string in old feeds and info
//!   answers): `video_list{video_1..N}` with base64 `main_url`/`backup_url_1`
//!   and the meta fields flattened;
//! - ixigua-style `dynamic_video.dynamic_video_list` (video-only streams);
//! - the mobile page's `playUrlList[]{mainUrl, backupUrl}`;
//! - VOD `GetPlayInfo`'s `PlayInfoList[]`.

use base64::Engine;
use mediaparse_sdk::{Header, MediaSource, Video};
use serde_json::Value;

/// Headers a caller sends to download Toutiao video (guide section 7).
pub fn download_headers() -> Vec<Header> {
    vec![
        Header::new("Referer", "https://www.toutiao.com/"),
        Header::new("User-Agent", mediaparse_sdk::ua::CHROME_130_WINDOWS),
    ]
}

/// A play-info value that may be an object or its JSON text.
pub fn as_object(info: &Value) -> Option<Value> {
    match info {
        Value::Object(_) => Some(info.clone()),
        Value::String(text) => serde_json::from_str::<Value>(text)
            .ok()
            .filter(Value::is_object),
        _ => None,
    }
}

/// A media URL: plain, or base64 of the URL in legacy and ixigua data.
pub fn media_url(raw: &str) -> Option<String> {
    let raw = raw.trim();
    if raw.is_empty() {
        return None;
    }
    let url = if raw.starts_with("http://") || raw.starts_with("https://") {
        raw.to_string()
    } else if let Some(rest) = raw.strip_prefix("//") {
        format!("https://{rest}")
    } else {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(raw)
            .or_else(|_| base64::engine::general_purpose::URL_SAFE.decode(raw))
            .ok()?;
        String::from_utf8(bytes).ok()?
    };
    (url.starts_with("http://") || url.starts_with("https://")).then_some(url)
}

fn str_of<'a>(v: &'a Value, keys: &[&str]) -> &'a str {
    keys.iter()
        .find_map(|k| v.get(*k).and_then(Value::as_str))
        .unwrap_or_default()
}

fn u32_of(v: &Value, keys: &[&str]) -> u32 {
    keys.iter()
        .find_map(|k| {
            let x = v.get(*k)?;
            x.as_u64()
                .or_else(|| x.as_f64().map(|f| f as u64))
                .or_else(|| x.as_str().and_then(|s| s.parse().ok()))
        })
        .map(|n| u32::try_from(n).unwrap_or(u32::MAX))
        .unwrap_or(0)
}

fn video(url: String, quality: &str, vtype: &str, width: u32, height: u32, dash: bool) -> Video {
    let vtype = if vtype.is_empty() || !vtype.bytes().all(|b| b.is_ascii_alphanumeric()) {
        "mp4"
    } else {
        vtype
    };
    Video {
        url,
        quality: if quality.is_empty() {
            if height > 0 {
                format!("{height}p")
            } else {
                "default".into()
            }
        } else {
            quality.to_string()
        },
        mime_type: format!("video/{}", vtype.to_ascii_lowercase()),
        width,
        height,
        has_audio: !dash,
        source: if dash {
            MediaSource::Dash
        } else {
            MediaSource::Direct
        },
        headers: download_headers(),
    }
}

/// Entries of a `video_list` (array, or the legacy `{video_1: …}` map in
/// document order).
fn entries(list: Option<&Value>) -> Vec<&Value> {
    match list {
        Some(Value::Array(items)) => items.iter().collect(),
        Some(Value::Object(map)) => map.values().collect(),
        _ => Vec::new(),
    }
}

/// Videos of a `videoPlayInfo` / `video_play_info` object: each entry's
/// main URL, then its backups, in source order; then dynamic (video-only)
/// streams.
pub fn play_info_videos(info: &Value) -> Vec<Video> {
    let mut out = Vec::new();
    push_list(&mut out, entries(info.get("video_list")), false);
    if let Some(dynamic) = info.get("dynamic_video") {
        push_list(&mut out, entries(dynamic.get("dynamic_video_list")), true);
    }
    out
}

fn push_list(out: &mut Vec<Video>, list: Vec<&Value>, dash: bool) {
    for entry in list {
        let meta = entry.get("video_meta").unwrap_or(entry);
        let quality = str_of(meta, &["definition", "quality"]);
        let vtype = str_of(meta, &["vtype"]);
        let width = u32_of(meta, &["vwidth", "width"]);
        let height = u32_of(meta, &["vheight", "height"]);
        let mut urls = vec![str_of(entry, &["main_url"])];
        urls.push(str_of(entry, &["backup_url", "backup_url_1"]));
        for raw in urls {
            if let Some(url) = media_url(raw) {
                out.push(video(url, quality, vtype, width, height, dash));
            }
        }
    }
}

/// The mobile page's `playUrlList[]{mainUrl, backupUrl}`.
pub fn play_url_list_videos(list: &Value) -> Vec<Video> {
    let mut out = Vec::new();
    for entry in entries(Some(list)) {
        let quality = str_of(entry, &["definition", "quality"]);
        let width = u32_of(entry, &["width", "vwidth"]);
        let height = u32_of(entry, &["height", "vheight"]);
        for key in ["mainUrl", "backupUrl"] {
            if let Some(url) = media_url(str_of(entry, &[key])) {
                out.push(video(url, quality, "mp4", width, height, false));
            }
        }
    }
    out
}

/// VOD `Result.Data.PlayInfoList[]`: `MainPlayUrl` then `BackupPlayUrl`.
pub fn vod_videos(data: &Value) -> Vec<Video> {
    let mut out = Vec::new();
    for entry in entries(data.get("PlayInfoList")) {
        let quality = str_of(entry, &["Definition"]);
        let format = str_of(entry, &["Format"]);
        let width = u32_of(entry, &["Width"]);
        let height = u32_of(entry, &["Height"]);
        for key in ["MainPlayUrl", "BackupPlayUrl"] {
            if let Some(url) = media_url(str_of(entry, &[key])) {
                out.push(video(url, quality, format, width, height, false));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_base64_and_keeps_plain_urls() {
        assert_eq!(
            media_url("aHR0cDovL3Y2LnBzdGF0cC5jb20vdmlkZW8vYy8=").as_deref(),
            Some("http://v6.pstatp.com/video/c/")
        );
        assert_eq!(
            media_url("https://v3-default.toutiaovod.com/a/b/").as_deref(),
            Some("https://v3-default.toutiaovod.com/a/b/")
        );
        assert_eq!(media_url("not base64 at all!"), None);
        assert_eq!(media_url(""), None);
    }

    #[test]
    fn reads_the_legacy_string_form() {
        let info = Value::String(
            r#"{"video_duration":1.5,"video_list":{"video_1":{"definition":"360p","vtype":"mp4","vwidth":640,"vheight":360,"main_url":"aHR0cDovL2EuZXhhbXBsZS8=","backup_url_1":"aHR0cDovL2IuZXhhbXBsZS8="}}}"#.into(),
        );
        let object = as_object(&info).unwrap();
        let videos = play_info_videos(&object);
        assert_eq!(videos.len(), 2);
        assert_eq!(videos[0].url, "http://a.example/");
        assert_eq!(videos[1].url, "http://b.example/");
        assert_eq!((videos[0].width, videos[0].height), (640, 360));
    }
}
