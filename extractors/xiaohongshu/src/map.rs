//! One note object (web state or app API shape) → platformData and media.
//!
//! The web page's note is camelCase (`noteId`, `imageList`, `masterUrl`);
//! the app API's is snake_case (`images_list`, `video_info_v2`,
//! `master_url`), and SPEC.md lists the app names. Every key is first
//! converted to snake_case, then the web names are moved to the app names,
//! so one typed parser serves both shapes.

use mediaparse_sdk::ids;
use mediaparse_sdk::json::without_nulls;
use mediaparse_sdk::serde_json::{Map, Value};
use mediaparse_sdk::urls::https;
use mediaparse_sdk::{
    Audio, Extraction, Failure, Header, Image, Media, MediaSource, Result, Video, spec,
};
use serde::Deserialize;

/// A desktop browser User-Agent, sent upstream and suggested for downloads.
pub const DESKTOP_UA: &str = mediaparse_sdk::ua::CHROME_126_WINDOWS;
/// Host of the watermark-free originals addressed by image token.
pub const ORIGINAL_IMAGE_HOST: &str = "https://sns-img-bd.xhscdn.com/";

/// Convert `camelCase` object keys to `snake_case`, recursively.
pub fn snake_keys(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (snake(&k), snake_keys(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(snake_keys).collect()),
        other => other,
    }
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

/// The final target object: SPEC.md's listed members under the app API's
/// names, built from whichever shape was fetched, other public members kept.
pub fn platform_data(note: Value) -> Map<String, Value> {
    let mut map = match snake_keys(note) {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    let is_str = |v: Option<&Value>| v.is_some_and(Value::is_string);
    if !is_str(map.get("note_id"))
        && let Some(id) = map.get("id").cloned().filter(Value::is_string)
    {
        map.insert("note_id".into(), id);
    }
    move_member(&mut map, "image_list", "images_list");
    move_member(&mut map, "video", "video_info_v2");
    if !map.get("interact_info").is_some_and(Value::is_object) {
        // app API: flat counters
        let mut counts = Map::new();
        for (from, to) in [
            ("liked_count", "liked_count"),
            ("collected_count", "collected_count"),
            ("comments_count", "comment_count"),
            ("shared_count", "share_count"),
        ] {
            if let Some(v) = map.get(from) {
                counts.insert(to.into(), v.clone());
            }
        }
        map.insert("interact_info".into(), Value::Object(counts));
    }
    // Listed members of the wrong type (null from `undefined`) become empty.
    for (name, kind) in spec::listed_members("xiaohongshu") {
        if map.get(*name).is_some_and(|v| !kind.accepts(v)) {
            map.remove(*name);
        }
    }
    spec::fill_missing_members("xiaohongshu", &mut map);
    map
}

fn move_member(map: &mut Map<String, Value>, from: &str, to: &str) {
    if map.contains_key(to) {
        return;
    }
    if let Some(v) = map.remove(from) {
        map.insert(to.into(), v);
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Note {
    pub note_id: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub title: String,
    pub desc: String,
    pub images_list: Vec<ImageEntry>,
    pub video_info_v2: VideoInfo,
    pub native_voice_info: VoiceInfo,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ImageEntry {
    // web
    pub url_default: String,
    pub url_pre: String,
    pub info_list: Vec<InfoItem>,
    pub live_photo: bool,
    pub stream: Streams,
    // both
    pub url: String,
    #[serde(deserialize_with = "ids::u32")]
    pub width: u32,
    #[serde(deserialize_with = "ids::u32")]
    pub height: u32,
    // app
    pub original: String,
    pub url_size_large: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct InfoItem {
    pub image_scene: String,
    pub url: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Streams {
    pub h264: Vec<Stream>,
    pub h265: Vec<Stream>,
    pub av1: Vec<Stream>,
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
    pub master_url: String,
    pub backup_urls: Vec<String>,
    #[serde(deserialize_with = "ids::u32")]
    pub width: u32,
    #[serde(deserialize_with = "ids::u32")]
    pub height: u32,
    pub video_codec: String,
    pub audio_codec: Option<String>,
    #[serde(deserialize_with = "ids::maybe_u64")]
    pub audio_bitrate: Option<u64>,
    pub quality_type: String,
    /// Milliseconds.
    #[serde(deserialize_with = "ids::f64")]
    pub duration: f64,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct VideoInfo {
    pub media: VideoMedia,
    pub capa: Capa,
    pub image: VideoImage,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct VideoMedia {
    pub stream: Streams,
    pub video: VideoMeta,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct VideoMeta {
    /// Seconds.
    #[serde(deserialize_with = "ids::f64")]
    pub duration: f64,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Capa {
    /// Seconds.
    #[serde(deserialize_with = "ids::f64")]
    pub duration: f64,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct VideoImage {
    pub first_frame: String,
    pub thumbnail: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct VoiceInfo {
    pub url: String,
    #[serde(deserialize_with = "ids::f64")]
    pub duration: f64,
}

/// Map a note object (either shape) to the extraction.
pub fn extract(note: Value) -> Result<Extraction> {
    let data = platform_data(note);
    let typed: Note = serde_json::from_value(without_nulls(&Value::Object(data.clone())))
        .map_err(|e| Failure::changed(format!("the note object has an unknown shape: {e}")))?;
    let media = media(&typed)?;
    Ok(Extraction {
        media,
        platform_data: Value::Object(data).into(),
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
    use mediaparse_sdk::serde_json::json;

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
