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
use mediaparse_sdk::fields::{self, RawValue, Text, kind_of};
use mediaparse_sdk::{Header, MediaSource, Video};
use serde::{Deserialize, de};
use serde_json::Value;

/// Headers a caller sends to download Toutiao video (guide section 7).
pub fn download_headers() -> Vec<Header> {
    vec![
        Header::new("Referer", "https://www.toutiao.com/"),
        Header::new("User-Agent", mediaparse_sdk::ua::CHROME_130_WINDOWS),
    ]
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

/// What a `videoPlayInfo` / `video_play_info` object gives: its videos
/// (each entry's main URL, then its backup, in source order; then the
/// dynamic, video-only streams), its duration and poster.
#[derive(Default)]
pub struct PlayInfo {
    pub videos: Vec<Video>,
    /// `video_duration`, a finite non-negative number (or numeric string).
    pub duration: Option<f64>,
    /// `poster_url` (a string, or a number's digits), or empty.
    pub poster: String,
}

/// The play info of a member that is an object or its JSON text in a
/// string; empty for anything else.
pub fn read(raw: Option<&RawValue>) -> PlayInfo {
    let of_text = |text: &str| {
        serde_json::from_str::<Info>(text)
            .ok()
            .map(Info::into_play_info)
    };
    let found = match raw.map(|r| (kind_of(r), r)) {
        Some((b'{', r)) => of_text(r.get()),
        Some((b'"', r)) => serde_json::from_str::<Text>(r.get())
            .ok()
            .filter(|t| t.as_str().trim_start().starts_with('{'))
            .and_then(|t| of_text(t.as_str())),
        _ => None,
    };
    found.unwrap_or_default()
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Info<'a> {
    #[serde(borrow)]
    video_list: Entries<'a>,
    #[serde(borrow, deserialize_with = "fields::object")]
    dynamic_video: Dynamic<'a>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    video_duration: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    poster_url: Option<&'a RawValue>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Dynamic<'a> {
    #[serde(borrow)]
    dynamic_video_list: Entries<'a>,
}

/// A `video_list`: an array, or the legacy `{video_1: …}` map (its values
/// in document order); anything else is empty.
#[derive(Default)]
struct Entries<'a>(Vec<Entry<'a>>);

impl<'de: 'a, 'a> Deserialize<'de> for Entries<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        /// One entry, read as an object (anything else has no members).
        struct AnyEntry<'a>(Entry<'a>);
        impl<'de> Deserialize<'de> for AnyEntry<'de> {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                fields::object(d).map(AnyEntry)
            }
        }
        struct V;
        impl<'de> de::Visitor<'de> for V {
            type Value = Entries<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a list or a map of entries")
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some(entry) = seq.next_element::<AnyEntry>()? {
                    out.push(entry.0);
                }
                Ok(Entries(out))
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some((_, entry)) = map.next_entry::<de::IgnoredAny, AnyEntry>()? {
                    out.push(entry.0);
                }
                Ok(Entries(out))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
                Ok(Entries::default())
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(Entries::default())
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(Entries::default())
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(Entries::default())
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(Entries::default())
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Entries::default())
            }
        }
        d.deserialize_any(V)
    }
}

/// The members of an entry (or of its `video_meta`) the videos need.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Entry<'a> {
    #[serde(borrow, deserialize_with = "fields::raw")]
    video_meta: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    definition: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    quality: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    vtype: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    vwidth: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    width: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    vheight: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    height: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    main_url: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    backup_url: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    backup_url_1: Option<&'a RawValue>,
}

/// The first of `values` that is a string (as `Value::as_str`), or empty.
fn first_str<'a>(values: &[Option<&'a RawValue>]) -> Text<'a> {
    values
        .iter()
        .flatten()
        .find(|v| kind_of(v) == b'"')
        .and_then(|v| serde_json::from_str(v.get()).ok())
        .unwrap_or_default()
}

/// The first of `values` that is a number (truncated, saturating) or a
/// string holding an unsigned integer, clamped to `u32`; else 0.
fn first_u32(values: &[Option<&RawValue>]) -> u32 {
    values
        .iter()
        .flatten()
        .find_map(|v| match kind_of(v) {
            b'"' => serde_json::from_str::<Text>(v.get())
                .ok()?
                .as_str()
                .parse::<u64>()
                .ok(),
            b'-' | b'0'..=b'9' => v
                .get()
                .parse::<u64>()
                .ok()
                .or_else(|| v.get().parse::<f64>().ok().map(|f| f as u64)),
            _ => None,
        })
        .map(|n| u32::try_from(n).unwrap_or(u32::MAX))
        .unwrap_or(0)
}

impl Info<'_> {
    fn into_play_info(self) -> PlayInfo {
        let mut videos = Vec::new();
        push_entries(&mut videos, &self.video_list.0, false);
        push_entries(&mut videos, &self.dynamic_video.dynamic_video_list.0, true);
        fn text(raw: Option<&RawValue>) -> Option<Text<'_>> {
            raw.filter(|r| matches!(kind_of(r), b'"' | b'-' | b'0'..=b'9'))
                .and_then(|r| serde_json::from_str::<Text>(r.get()).ok())
        }
        PlayInfo {
            videos,
            duration: text(self.video_duration).and_then(|t| t.number()),
            poster: text(self.poster_url)
                .map(Text::into_string)
                .unwrap_or_default(),
        }
    }
}

fn push_entries(out: &mut Vec<Video>, entries: &[Entry], dash: bool) {
    for entry in entries {
        let nested;
        let meta = match entry.video_meta {
            Some(raw) => {
                nested = if kind_of(raw) == b'{' {
                    serde_json::from_str::<Entry>(raw.get()).unwrap_or_default()
                } else {
                    Entry::default()
                };
                &nested
            }
            None => entry,
        };
        let quality = first_str(&[meta.definition, meta.quality]);
        let vtype = first_str(&[meta.vtype]);
        let width = first_u32(&[meta.vwidth, meta.width]);
        let height = first_u32(&[meta.vheight, meta.height]);
        let urls = [
            first_str(&[entry.main_url]),
            first_str(&[entry.backup_url, entry.backup_url_1]),
        ];
        for raw in &urls {
            if let Some(url) = media_url(raw.as_str()) {
                out.push(video(
                    url,
                    quality.as_str(),
                    vtype.as_str(),
                    width,
                    height,
                    dash,
                ));
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
        let raw: &RawValue = serde_json::from_str(
            r#""{\"video_duration\":1.5,\"video_list\":{\"video_1\":{\"definition\":\"360p\",\"vtype\":\"mp4\",\"vwidth\":640,\"vheight\":360,\"main_url\":\"aHR0cDovL2EuZXhhbXBsZS8=\",\"backup_url_1\":\"aHR0cDovL2IuZXhhbXBsZS8=\"}}}""#,
        )
        .unwrap();
        let info = read(Some(raw));
        assert_eq!(info.duration, Some(1.5));
        let videos = info.videos;
        assert_eq!(videos.len(), 2);
        assert_eq!(videos[0].url, "http://a.example/");
        assert_eq!(videos[1].url, "http://b.example/");
        assert_eq!((videos[0].width, videos[0].height), (640, 360));
    }
}
