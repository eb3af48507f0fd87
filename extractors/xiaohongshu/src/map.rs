//! One note object (web state or app API shape) → platformData and media.
//!
//! The web page's note is camelCase (`noteId`, `imageList`, `masterUrl`);
//! the app API's is snake_case (`images_list`, `video_info_v2`,
//! `master_url`), and SPEC.md lists the app names. Every key is first
//! converted to snake_case, then the web names are moved to the app names,
//! so one typed parser serves both shapes.

use std::borrow::Cow;

use mediaparse_sdk::fields::{self, RawValue, Text, kind_of};
use mediaparse_sdk::platform_data::{ObjectWriter, PlatformData, fits_listed};
use mediaparse_sdk::urls::https;
use mediaparse_sdk::{
    Audio, Extraction, Failure, Header, Image, Media, MediaSource, Result, Video,
};
use serde::{Deserialize, Deserializer};

use crate::page::{get, members_in};

/// A desktop browser User-Agent, sent upstream and suggested for downloads.
pub const DESKTOP_UA: &str = mediaparse_sdk::ua::CHROME_126_WINDOWS;
/// Host of the watermark-free originals addressed by image token.
pub const ORIGINAL_IMAGE_HOST: &str = "https://sns-img-bd.xhscdn.com/";

/// The JSON text `text` with every object member name in `snake_case`
/// (recursively); `None` when no name changes.
pub fn snake_keys(text: &str) -> Option<String> {
    let b = text.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0;
    for (start, end, escaped) in strings(text) {
        let mut next = end;
        while next < b.len() && b[next].is_ascii_whitespace() {
            next += 1;
        }
        if next >= b.len() || b[next] != b':' || end - start < 2 {
            continue; // a string value
        }
        let name: Cow<str> = if escaped {
            match serde_json::from_str::<String>(&text[start..end]) {
                Ok(name) => Cow::Owned(name),
                Err(_) => continue,
            }
        } else {
            Cow::Borrowed(&text[start + 1..end - 1])
        };
        if !name.bytes().any(|c| c.is_ascii_uppercase()) {
            continue;
        }
        let snaked = snake(&name);
        if snaked == name {
            continue;
        }
        let out = out.get_or_insert_with(|| String::with_capacity(text.len() + 64));
        out.push_str(&text[copied..start]);
        out.push_str(&serde_json::to_string(&snaked).unwrap_or_default());
        copied = end;
    }
    out.map(|mut out| {
        out.push_str(&text[copied..]);
        out
    })
}

/// Each string of the JSON `text`: where it starts (its opening quote),
/// where it ends (past its closing quote, or at the text's end) and whether
/// it holds an escape. Jumps between quotes and backslashes with `memchr`
/// (vectorised in the wasm guest too) rather than a byte at a time.
fn strings(text: &str) -> impl Iterator<Item = (usize, usize, bool)> + '_ {
    let b = text.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        let start = i + memchr::memchr(b'"', b.get(i..)?)?;
        i = start + 1;
        let mut escaped = false;
        while i < b.len() {
            match memchr::memchr2(b'"', b'\\', &b[i..]) {
                Some(k) if b[i + k] == b'\\' => {
                    escaped = true;
                    i += k + 2;
                }
                Some(k) => {
                    i += k;
                    break;
                }
                None => i = b.len(),
            }
        }
        let end = (i + 1).min(b.len());
        i = end;
        Some((start, end, escaped))
    })
}

/// `noteId` → `note_id`, `WB_DFT` stays, `h264` stays, `xsecToken` → `xsec_token`.
pub fn snake(key: &str) -> String {
    if !key.bytes().any(|b| b.is_ascii_lowercase()) {
        return key.to_string(); // CONSTANT_CASE stays
    }
    let mut out = String::with_capacity(key.len() + 4);
    let mut prev_lower = false;
    for c in key.chars() {
        if c.is_ascii_uppercase() {
            if prev_lower {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
            prev_lower = false;
        } else {
            prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
            out.push(c);
        }
    }
    out
}

/// Write member `name` as `value` with its member names in `snake_case`.
fn write_snaked<'a>(out: &mut ObjectWriter<'a>, name: impl Into<Cow<'a, str>>, value: &RawValue) {
    match snake_keys(value.get()).and_then(|text| RawValue::from_string(text).ok()) {
        Some(snaked) => out.raw(name, &snaked),
        None => out.raw(name, value),
    };
}

/// The final target object: SPEC.md's listed members under the app API's
/// names, built from whichever shape was fetched (every name converted to
/// `snake_case`, the web names moved to the app names), other public
/// members kept.
pub fn platform_data(note: &str) -> PlatformData {
    let upstream = members_in(note).unwrap_or_default();
    // Names in snake_case; of two that become one, the last value.
    let mut all: Vec<(Cow<str>, &RawValue)> = Vec::with_capacity(upstream.len());
    for (name, value) in upstream {
        let name = if name.bytes().any(|c| c.is_ascii_uppercase()) {
            Cow::Owned(snake(&name))
        } else {
            name
        };
        match all.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = value,
            None => all.push((name, value)),
        }
    }
    let string = |v: &&RawValue| kind_of(v) == b'"';
    // A web name moved to the app name when the app name is absent.
    let moved = |from: &'static str, to: &str| match get(&all, to) {
        Some(v) => (Some(v), None),
        None => (get(&all, from), Some(from)),
    };
    let (images, images_from) = moved("image_list", "images_list");
    let (video, video_from) = moved("video", "video_info_v2");
    let note_id = get(&all, "note_id")
        .filter(string)
        .or_else(|| get(&all, "id").filter(string));
    let mut data = ObjectWriter::new();
    // Listed members of the wrong type (null from `undefined`) become empty.
    let fits = |name: &str, v: &&RawValue| fits_listed(crate::PLATFORM, name, v);
    for (name, value) in [
        ("note_id", note_id),
        ("images_list", images),
        ("video_info_v2", video),
    ] {
        if let Some(value) = value.filter(|v| fits(name, v)) {
            write_snaked(&mut data, name, value);
        }
    }
    match get(&all, "interact_info").filter(|v| kind_of(v) == b'{') {
        Some(counts) => write_snaked(&mut data, "interact_info", counts),
        None => {
            // app API: flat counters
            data.object("interact_info", |counts| {
                for (from, to) in [
                    ("liked_count", "liked_count"),
                    ("collected_count", "collected_count"),
                    ("comments_count", "comment_count"),
                    ("shared_count", "share_count"),
                ] {
                    if let Some(v) = get(&all, from) {
                        write_snaked(counts, to, v);
                    }
                }
            });
        }
    }
    for (name, value) in &all {
        let moved_away = images_from == Some(name.as_ref()) || video_from == Some(name.as_ref());
        if !moved_away && fits(name, value) {
            write_snaked(&mut data, name.clone(), value);
        }
    }
    data.finish(crate::PLATFORM)
}

/// `deserialize_with`: a JSON string as text, anything else empty.
fn string<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<String, D::Error> {
    Ok(fields::string(d)?.into_string())
}

/// `deserialize_with`: `null` or absent reads as the type's default.
fn nullable<'de, D: Deserializer<'de>, T: Deserialize<'de> + Default>(
    d: D,
) -> std::result::Result<T, D::Error> {
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// `deserialize_with`: a number or numeric string truncated to `u64`;
/// `None` when absent, negative or not a number.
fn maybe_u64<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Option<u64>, D::Error> {
    let text = Text::deserialize(d)?;
    Ok(text.as_str().trim().parse::<u64>().ok().or_else(|| {
        text.number()
            .filter(|n| *n >= 0.0 && *n < u64::MAX as f64)
            .map(|n| n as u64)
    }))
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Note {
    #[serde(deserialize_with = "string")]
    pub note_id: String,
    #[serde(rename = "type", deserialize_with = "string")]
    pub kind: String,
    #[serde(deserialize_with = "string")]
    pub title: String,
    #[serde(deserialize_with = "string")]
    pub desc: String,
    #[serde(deserialize_with = "nullable")]
    pub images_list: Vec<ImageEntry>,
    #[serde(deserialize_with = "nullable")]
    pub video_info_v2: VideoInfo,
    #[serde(deserialize_with = "nullable")]
    pub native_voice_info: VoiceInfo,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ImageEntry {
    // web
    #[serde(deserialize_with = "string")]
    pub url_default: String,
    #[serde(deserialize_with = "string")]
    pub url_pre: String,
    #[serde(deserialize_with = "nullable")]
    pub info_list: Vec<InfoItem>,
    #[serde(deserialize_with = "nullable")]
    pub live_photo: bool,
    #[serde(deserialize_with = "nullable")]
    pub stream: Streams,
    // both
    #[serde(deserialize_with = "string")]
    pub url: String,
    #[serde(deserialize_with = "fields::u32")]
    pub width: u32,
    #[serde(deserialize_with = "fields::u32")]
    pub height: u32,
    // app
    #[serde(deserialize_with = "string")]
    pub original: String,
    #[serde(deserialize_with = "string")]
    pub url_size_large: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct InfoItem {
    #[serde(deserialize_with = "string")]
    pub image_scene: String,
    #[serde(deserialize_with = "string")]
    pub url: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Streams {
    #[serde(deserialize_with = "nullable")]
    pub h264: Vec<Stream>,
    #[serde(deserialize_with = "nullable")]
    pub h265: Vec<Stream>,
    #[serde(deserialize_with = "nullable")]
    pub av1: Vec<Stream>,
    #[serde(deserialize_with = "nullable")]
    pub h266: Vec<Stream>,
}

impl Streams {
    /// Every stream in the documented codec order, with its list's codec name.
    fn all(&self) -> impl Iterator<Item = (&'static str, &Stream)> {
        [
            ("h264", &self.h264),
            ("h265", &self.h265),
            ("av1", &self.av1),
            ("h266", &self.h266),
        ]
        .into_iter()
        .flat_map(|(codec, list)| list.iter().map(move |s| (codec, s)))
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Stream {
    #[serde(deserialize_with = "string")]
    pub master_url: String,
    #[serde(deserialize_with = "nullable")]
    pub backup_urls: Vec<String>,
    #[serde(deserialize_with = "fields::u32")]
    pub width: u32,
    #[serde(deserialize_with = "fields::u32")]
    pub height: u32,
    #[serde(deserialize_with = "string")]
    pub video_codec: String,
    pub audio_codec: Option<String>,
    #[serde(deserialize_with = "maybe_u64")]
    pub audio_bitrate: Option<u64>,
    #[serde(deserialize_with = "string")]
    pub quality_type: String,
    /// Milliseconds.
    #[serde(deserialize_with = "fields::f64")]
    pub duration: f64,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct VideoInfo {
    #[serde(deserialize_with = "nullable")]
    pub media: VideoMedia,
    #[serde(deserialize_with = "nullable")]
    pub capa: Capa,
    #[serde(deserialize_with = "nullable")]
    pub image: VideoImage,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct VideoMedia {
    #[serde(deserialize_with = "nullable")]
    pub stream: Streams,
    #[serde(deserialize_with = "nullable")]
    pub video: VideoMeta,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct VideoMeta {
    /// Seconds.
    #[serde(deserialize_with = "fields::f64")]
    pub duration: f64,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Capa {
    /// Seconds.
    #[serde(deserialize_with = "fields::f64")]
    pub duration: f64,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct VideoImage {
    #[serde(deserialize_with = "string")]
    pub first_frame: String,
    #[serde(deserialize_with = "string")]
    pub thumbnail: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct VoiceInfo {
    #[serde(deserialize_with = "string")]
    pub url: String,
    #[serde(deserialize_with = "fields::f64")]
    pub duration: f64,
}

/// Map a note object's JSON text (either shape) to the extraction.
pub fn extract(note: &str) -> Result<Extraction> {
    let data = platform_data(note);
    let typed: Note = serde_json::from_str(data.as_str())
        .map_err(|e| Failure::changed(format!("the note object has an unknown shape: {e}")))?;
    let media = media(&typed)?;
    Ok(Extraction {
        media,
        platform_data: data,
    })
}

/// Headers a caller should send when downloading (anonymous values only).
fn download_headers() -> Vec<Header> {
    vec![
        Header::new("Referer", "https://www.xiaohongshu.com/"),
        Header::new("User-Agent", DESKTOP_UA),
    ]
}

/// The media object of one note.
pub fn media(note: &Note) -> Result<Media> {
    let mut media = Media {
        title: title(note),
        thumbnail: note
            .images_list
            .first()
            .map(preview_url)
            .filter(|u| !u.is_empty())
            .or_else(|| {
                let image = &note.video_info_v2.image;
                [&image.first_frame, &image.thumbnail]
                    .into_iter()
                    .find(|u| !u.is_empty())
                    .map(|u| https(u))
            })
            .unwrap_or_default(),
        ..Media::default()
    };
    if note.kind == "video" {
        let info = &note.video_info_v2;
        for (codec, stream) in info.media.stream.all() {
            push_stream(&mut media.videos, codec, stream, MediaSource::Direct);
        }
        if media.videos.is_empty() {
            return Err(Failure::LoginRequired(
                "the video note came without its streams: Xiaohongshu serves video only to a \
                 signed-in session (configure a valid `cookie` with `web_session`)"
                    .into(),
            ));
        }
        let first_ms = info
            .media
            .stream
            .all()
            .map(|(_, s)| s.duration)
            .find(|d| *d > 0.0);
        media.duration = [info.capa.duration, info.media.video.duration]
            .into_iter()
            .find(|d| *d > 0.0)
            .or(first_ms.map(|ms| ms / 1000.0))
            .unwrap_or(0.0);
    } else {
        for entry in &note.images_list {
            if let Some(url) = full_image_url(entry) {
                media.images.push(Image {
                    url,
                    width: entry.width,
                    height: entry.height,
                });
            }
            if entry.live_photo {
                for (codec, stream) in entry.stream.all() {
                    push_stream(&mut media.videos, codec, stream, MediaSource::LivePhoto);
                }
            }
        }
    }
    let voice = &note.native_voice_info;
    if is_http(&voice.url) {
        media.audios.push(Audio {
            url: https(&voice.url),
            quality: "original".into(),
            mime_type: "audio/mp4".into(),
            bitrate: 0,
            source: MediaSource::NativeVoice,
            headers: download_headers(),
        });
    }
    Ok(media)
}

fn push_stream(out: &mut Vec<Video>, codec: &str, stream: &Stream, source: MediaSource) {
    let codec = if stream.video_codec.is_empty() {
        codec
    } else {
        stream.video_codec.as_str()
    };
    let (width, height) = (stream.width, stream.height);
    let quality = match (width.min(height), stream.quality_type.as_str()) {
        (0, "") => codec.to_string(),
        (0, q) => format!("{q} {codec}"),
        (short, _) => format!("{short}p {codec}"),
    };
    // Muxed mp4: audio is present unless upstream says there is none.
    let has_audio = match (&stream.audio_codec, stream.audio_bitrate) {
        (Some(c), _) if !c.is_empty() => true,
        (_, Some(b)) => b > 0,
        (Some(_), None) => false,
        (None, None) => true,
    };
    let urls = std::iter::once(&stream.master_url).chain(&stream.backup_urls);
    for url in urls.filter(|u| is_http(u)) {
        out.push(Video {
            url: https(url),
            quality: quality.clone(),
            mime_type: "video/mp4".into(),
            width,
            height,
            has_audio,
            source,
            headers: download_headers(),
        });
    }
}

/// `title`, else the first line of `desc`.
fn title(note: &Note) -> String {
    let title = note.title.trim();
    if !title.is_empty() {
        return title.to_string();
    }
    note.desc
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
        .to_string()
}

/// The image as the page shows it (the note's thumbnail).
fn preview_url(entry: &ImageEntry) -> String {
    let dft = entry
        .info_list
        .iter()
        .find(|i| i.image_scene == "WB_DFT")
        .map(|i| &i.url);
    [
        Some(&entry.url_default),
        dft,
        Some(&entry.url_pre),
        Some(&entry.url_size_large),
        Some(&entry.url),
    ]
    .into_iter()
    .flatten()
    .find(|u| is_http(u))
    .map(|u| https(u))
    .unwrap_or_default()
}

/// The full-size, watermark-free image: web entries by image token on the
/// originals host; app entries by `original`, else their URL without the
/// resize query.
pub fn full_image_url(entry: &ImageEntry) -> Option<String> {
    let web_candidates = std::iter::once(&entry.url_default)
        .chain(entry.info_list.iter().map(|i| &i.url))
        .chain([&entry.url_pre, &entry.url]);
    for candidate in web_candidates {
        if let Some(token) = image_token(candidate) {
            return Some(format!("{ORIGINAL_IMAGE_HOST}{token}"));
        }
    }
    if is_http(&entry.original) {
        return Some(https(&entry.original));
    }
    [&entry.url_size_large, &entry.url]
        .into_iter()
        .find(|u| is_http(u))
        .map(|u| https(u.split('?').next().unwrap_or(u)))
}

/// The image token of a web image URL:
/// `http://sns-webpic-qc.xhscdn.com/{yyyymmddHHMM}/{hash}/{token}!{style}`
/// → `{token}` (which may itself contain `/`).
pub fn image_token(url: &str) -> Option<String> {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))?;
    let path = rest.split_once('/')?.1;
    let path = path.split(['?', '#']).next().unwrap_or("");
    let mut parts = path.splitn(3, '/');
    let stamp = parts.next()?;
    let hash = parts.next()?;
    let token = parts.next()?;
    let is_stamp = stamp.len() >= 10 && stamp.bytes().all(|b| b.is_ascii_digit());
    let is_hash = hash.len() >= 16 && hash.bytes().all(|b| b.is_ascii_hexdigit());
    let token = token.split('!').next().unwrap_or("");
    (is_stamp && is_hash && !token.is_empty()).then(|| token.to_string())
}

fn is_http(url: &str) -> bool {
    url.starts_with("http://") || url.starts_with("https://") || url.starts_with("//")
}

#[cfg(test)]
mod tests {
    use super::*;
    use mediaparse_sdk::serde_json::{Value, json};
    use mediaparse_sdk::spec;

    /// Where each string is, read a byte at a time: what [`strings`] must
    /// find.
    fn string_ends_bytewise(text: &str) -> Vec<(usize, usize, bool)> {
        let b = text.as_bytes();
        let mut found = Vec::new();
        let mut i = 0;
        while i < b.len() {
            if b[i] != b'"' {
                i += 1;
                continue;
            }
            let start = i;
            i += 1;
            let mut escaped = false;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    escaped = true;
                    i += 1;
                }
                i += 1;
            }
            let end = (i + 1).min(b.len());
            found.push((start, end, escaped));
            i = end;
        }
        found
    }

    #[test]
    fn strings_are_found_as_a_bytewise_reading_finds_them() {
        let mut texts: Vec<String> = vec![
            r#"{"noteId":"a","imageList":[{"urlDefault":"x\"y","infoList":[]}]}"#.into(),
            r#"{"a\"B":1,"xsecToken" : "t","WB_DFT":{"h264":[]},"k":"v:"}"#.into(),
            r#"{"tail\"#.into(),
            r#"{"openName":"#.into(),
            r#""\\":1,"aB\u0043":2"#.into(),
            r#"no strings at all"#.into(),
            r#"{"é":"ü","nameÄ":1}"#.into(),
        ];
        let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
        for case in std::fs::read_dir(&fixtures).unwrap() {
            let case = case.unwrap().path();
            if !case.is_dir() {
                continue;
            }
            for file in std::fs::read_dir(&case).unwrap() {
                if let Ok(text) = std::fs::read_to_string(file.unwrap().path()) {
                    texts.push(text);
                }
            }
        }
        assert!(texts.len() > 20, "the fixtures were read");
        for text in &texts {
            let found: Vec<_> = strings(text).collect();
            assert_eq!(found, string_ends_bytewise(text), "{text:.200}");
        }
    }

    fn extract(note: Value) -> Result<Extraction> {
        super::extract(&note.to_string())
    }

    #[test]
    fn snake_case_keys() {
        assert_eq!(snake("noteId"), "note_id");
        assert_eq!(snake("imageList"), "image_list");
        assert_eq!(snake("WB_DFT"), "WB_DFT");
        assert_eq!(snake("h264"), "h264");
        assert_eq!(snake("backupUrls"), "backup_urls");
        assert_eq!(snake("already_snake"), "already_snake");
    }

    #[test]
    fn image_tokens() {
        assert_eq!(
            image_token("http://sns-webpic-qc.xhscdn.com/202403211735/9f8c2d1e0a6b4c3d5e7f8a9b0c1d2e3f/1040g008310abc!nd_dft_wlteh_webp_3").as_deref(),
            Some("1040g008310abc")
        );
        assert_eq!(
            image_token("https://i10.rednotecdn.com/202604192126/afa8ba161bb1caf308025ece155eb150/notes_pre_post/1040g3k831v5580b02gdg5ociada40q4pl6pv46g!nd_dft_wlteh_webp_3?src=A").as_deref(),
            Some("notes_pre_post/1040g3k831v5580b02gdg5ociada40q4pl6pv46g")
        );
        // app-API URLs carry no token path
        assert_eq!(
            image_token(
                "http://sns-img-qc.xhscdn.com/1000g0081m4dhih2dg06g5ng26iq080bt6s7392g?imageView2/2/w/1080/format/webp"
            ),
            None
        );
        assert_eq!(image_token("not a url"), None);
    }

    /// The real app-API note (payloads/xiaohongshu, note detail) maps through
    /// the same parser: `original` is the full-size image.
    #[test]
    fn app_api_image_note() {
        let raw = include_str!(
            "../fixtures/_app_api/app_note_detail_note_list_638aa91a000000001b027e24.json"
        );
        let body: Value = serde_json::from_str(raw).unwrap();
        let note = body["data"][0]["note_list"][0].clone();
        let ex = extract(note).unwrap();
        assert_eq!(
            ex.media.images,
            vec![Image {
                url: "https://sns-img-qc.xhscdn.com/1000g0081m4dhih2dg06g5ng26iq080bt6s7392g"
                    .into(),
                width: 1280,
                height: 1706
            }]
        );
        assert!(ex.media.videos.is_empty() && ex.media.audios.is_empty());
        assert_eq!(ex.media.title, "今天是乖乖等姐姐核酸的肥猪猪");
        let pd = &ex.platform_data.to_value();
        assert_eq!(pd["note_id"], "638aa91a000000001b027e24");
        assert_eq!(pd["interact_info"]["liked_count"].to_string(), "1819");
        assert_eq!(pd["interact_info"]["comment_count"].to_string(), "44");
        assert!(spec::check_platform_data("xiaohongshu", pd).is_empty());
    }

    /// The real app-API video note (user notes list): one h264 stream with a
    /// master and three backups, all four returned in order.
    #[test]
    fn app_api_video_note() {
        let raw = include_str!("../fixtures/_app_api/app_user_notes_list_with_video_info_v2.json");
        let body: Value = serde_json::from_str(raw).unwrap();
        let note = body["data"]["notes"][0].clone();
        assert_eq!(note["id"], "6450e04200000000270294e2");
        let ex = extract(note).unwrap();
        let urls: Vec<&str> = ex.media.videos.iter().map(|v| v.url.as_str()).collect();
        assert_eq!(
            urls,
            [
                "https://sns-video-hw.xhscdn.com/stream/110/258/01e450e04177a0f90103700387dbed0f6c_258.mp4",
                "https://sns-video-bd.xhscdn.com/stream/110/258/01e450e04177a0f90103700387dbed0f6c_258.mp4",
                "https://sns-video-qc.xhscdn.com/stream/110/258/01e450e04177a0f90103700387dbed0f6c_258.mp4?sign=848910d52cc4e2c1183a08b8132188dc&t=645526d4",
                "https://sns-video-al.xhscdn.com/stream/110/258/01e450e04177a0f90103700387dbed0f6c_258.mp4",
            ]
        );
        let v = &ex.media.videos[0];
        assert_eq!((v.width, v.height, v.has_audio), (720, 960, true));
        assert_eq!(v.quality, "720p h264");
        assert_eq!(ex.media.duration, 81.0);
        assert!(ex.media.images.is_empty());
        assert_eq!(
            ex.media.thumbnail,
            "https://sns-img-hw.xhscdn.com/1000g0082eamfc6aha0005o2g7kt090s5b9otse8?imageView2/2/w/1080/format/webp"
        );
    }

    /// App search items: `original` is empty, so the resize query is dropped.
    #[test]
    fn app_api_images_without_original() {
        let raw = include_str!("../fixtures/_app_api/app_search_notes_images_list.json");
        let body: Value = serde_json::from_str(raw).unwrap();
        let ex = extract(body["data"]["items"][0]["note"].clone()).unwrap();
        assert_eq!(
            ex.media.images[0].url,
            "https://sns-img-hw.xhscdn.com/spectrum/1000g0k02ejnvt4ugo0005o4mfhsg9e1utslms0o"
        );
        assert_eq!(
            (ex.media.images[0].width, ex.media.images[0].height),
            (794, 791)
        );
    }

    /// `native_voice_info` (field list of the guide; no real instance exists)
    /// becomes one `native_voice` audio; without it there is none.
    #[test]
    fn native_voice_only_when_present() {
        let note = json!({
            "id": "6450e04200000000270294e3", "type": "normal", "title": "t", "desc": "",
            "images_list": [{"original": "http://sns-img-qc.xhscdn.com/abc", "width": 1, "height": 2}],
            "native_voice_info": {"sound_id": "1", "url": "http://sns-audio.xhscdn.com/voice/abc.m4a", "duration": 5}
        });
        let ex = extract(note).unwrap();
        assert_eq!(ex.media.audios.len(), 1);
        assert_eq!(ex.media.audios[0].source, MediaSource::NativeVoice);
        assert_eq!(
            ex.media.audios[0].url,
            "https://sns-audio.xhscdn.com/voice/abc.m4a"
        );
        let no_voice = extract(json!({"noteId": "x", "type": "normal", "imageList": []})).unwrap();
        assert!(no_voice.media.audios.is_empty());
        assert_eq!(
            no_voice.platform_data.to_value()["native_voice_info"],
            json!({})
        );
    }

    #[test]
    fn undefined_members_become_empty_values() {
        let ex =
            extract(json!({"noteId": "x", "type": "normal", "title": null, "user": null})).unwrap();
        assert_eq!(ex.platform_data.to_value()["title"], "");
        assert_eq!(ex.platform_data.to_value()["user"], json!({}));
    }
}
