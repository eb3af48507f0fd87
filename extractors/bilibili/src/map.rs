//! Play-URL objects → the media object and platform data.

use std::borrow::Cow;

use mediaparse_sdk::fields::{self, Object, RawValue};
use mediaparse_sdk::platform_data::fits_listed;
use mediaparse_sdk::serde_json::{self, Map, Value};
use mediaparse_sdk::{
    Audio, Failure, Header, Media, MediaSource, ObjectWriter, PlatformData, Result, Video,
};
use serde::Deserialize;

use crate::api::{PlayUrl, REFERER, USER_AGENT, read};
use mediaparse_sdk::urls::https;

/// What the metadata request (view / season) told us about the post.
#[derive(Clone, Debug, Default)]
pub struct Meta {
    pub title: String,
    pub thumbnail: String,
    /// Seconds, when the play URL has no length.
    pub duration: f64,
    /// For `durl` answers, which carry no dimensions.
    pub width: u32,
    pub height: u32,
    /// Listed `title` and `pic` of platform data.
    pub pd_title: String,
    pub pd_pic: String,
    /// Public members kept beside the play-URL object (`aid`, `ep_id`, …).
    pub extras: Map<String, Value>,
    /// Metadata members kept as upstream wrote them (`owner`, `stat`, …),
    /// after `extras`.
    pub kept: Vec<(&'static str, Box<RawValue>)>,
}

/// A DASH stream. Its URLs are listed twice (camelCase and snake_case
/// names); they stay text until the one used is read.
#[derive(Debug, Default, Deserialize)]
struct Stream<'a> {
    #[serde(default)]
    id: u64,
    #[serde(default, borrow, rename = "baseUrl")]
    base_url_camel: Option<&'a RawValue>,
    #[serde(default, borrow, rename = "base_url")]
    base_url_snake: Option<&'a RawValue>,
    #[serde(default, borrow, rename = "backupUrl")]
    backup_url_camel: Option<&'a RawValue>,
    #[serde(default, borrow, rename = "backup_url")]
    backup_url_snake: Option<&'a RawValue>,
    #[serde(default)]
    bandwidth: Option<u64>,
    #[serde(default, rename = "mimeType")]
    mime_type_camel: Option<String>,
    #[serde(default, rename = "mime_type")]
    mime_type_snake: Option<String>,
    #[serde(default)]
    codecs: Option<String>,
    #[serde(default)]
    codecid: Option<u64>,
    #[serde(default)]
    width: Option<u64>,
    #[serde(default)]
    height: Option<u64>,
}

impl Stream<'_> {
    /// The primary URL, then each backup, in source order (a `null` name
    /// reads as absent).
    fn urls(&self) -> Vec<String> {
        let primary: Option<Cow<str>> = self
            .base_url_camel
            .or(self.base_url_snake)
            .and_then(|r| serde_json::from_str(r.get()).ok());
        let backups: Vec<Cow<str>> = self
            .backup_url_camel
            .or(self.backup_url_snake)
            .and_then(|r| serde_json::from_str(r.get()).ok())
            .unwrap_or_default();
        primary
            .into_iter()
            .chain(backups)
            .filter(|u| !u.is_empty())
            .map(|u| https(&u))
            .collect()
    }

    fn mime(&self, default: &str) -> String {
        let base = self
            .mime_type_camel
            .iter()
            .chain(&self.mime_type_snake)
            .find(|m| !m.is_empty())
            .map(String::as_str)
            .unwrap_or(default);
        match self.codecs.as_deref().filter(|c| !c.is_empty()) {
            Some(codecs) => format!("{base}; codecs=\"{codecs}\""),
            None => base.to_string(),
        }
    }

    /// `avc1`, `hev1`, `av01`, … (the codec family of `codecs`).
    fn codec_family(&self) -> Option<String> {
        if let Some(family) = self
            .codecs
            .as_deref()
            .and_then(|c| c.split('.').next())
            .filter(|f| !f.is_empty())
        {
            return Some(family.to_string());
        }
        Some(
            match self.codecid? {
                7 => "avc1",
                12 => "hev1",
                13 => "av01",
                _ => return None,
            }
            .to_string(),
        )
    }
}

/// A play-URL object's `dash`: its streams, read once (by the verdict,
/// which needs to know whether it has video streams).
#[derive(Debug, Default, Deserialize)]
pub struct Dash<'a> {
    #[serde(default)]
    duration: Option<f64>,
    #[serde(default, borrow)]
    video: Option<Vec<Stream<'a>>>,
    #[serde(default, borrow)]
    audio: Option<Vec<Stream<'a>>>,
    #[serde(default, borrow)]
    dolby: Option<Dolby<'a>>,
    #[serde(default, borrow)]
    flac: Option<Flac<'a>>,
}

#[derive(Debug, Default, Deserialize)]
struct Dolby<'a> {
    #[serde(default, borrow)]
    audio: Option<Vec<Stream<'a>>>,
}

#[derive(Debug, Default, Deserialize)]
struct Flac<'a> {
    #[serde(default, borrow)]
    audio: Option<Stream<'a>>,
}

#[derive(Debug, Default, Deserialize)]
struct Segment {
    #[serde(default)]
    url: String,
    #[serde(default)]
    backup_url: Option<Vec<String>>,
}

#[derive(Debug, Default, Deserialize)]
struct Format {
    #[serde(default)]
    quality: Option<u64>,
    #[serde(default)]
    new_description: Option<String>,
    #[serde(default)]
    display_desc: Option<String>,
    #[serde(default)]
    description: Option<String>,
}

/// Quality labels of a play-URL object.
struct Labels {
    formats: Vec<Format>,
    accept: Vec<(u64, String)>,
}

impl Labels {
    fn of(object: &View) -> Labels {
        Labels {
            formats: read(object.support_formats.or(object.support_formats_camel))
                .unwrap_or_default(),
            accept: read::<Vec<u64>>(object.accept_quality)
                .unwrap_or_default()
                .into_iter()
                .zip(read::<Vec<String>>(object.accept_description).unwrap_or_default())
                .collect(),
        }
    }

    /// `support_formats[].new_description` (else `display_desc`, `description`),
    /// else `accept_description`, else the documented `qn` name.
    fn label(&self, qn: u64) -> String {
        let from_formats = self
            .formats
            .iter()
            .filter(|f| f.quality == Some(qn))
            .flat_map(|f| [&f.new_description, &f.display_desc, &f.description])
            .flatten()
            .find(|d| !d.trim().is_empty());
        if let Some(label) = from_formats {
            return label.trim().to_string();
        }
        if let Some((_, d)) = self.accept.iter().find(|(q, d)| *q == qn && !d.is_empty()) {
            return d.clone();
        }
        qn_name(qn)
            .map(str::to_string)
            .unwrap_or_else(|| qn.to_string())
    }
}

/// Documented `qn` values.
fn qn_name(qn: u64) -> Option<&'static str> {
    Some(match qn {
        6 => "240P",
        16 => "360P",
        32 => "480P",
        64 => "720P",
        74 => "720P60",
        80 => "1080P",
        100 => "智能修复",
        112 => "1080P+",
        116 => "1080P60",
        120 => "4K",
        125 => "HDR",
        126 => "Dolby Vision",
        127 => "8K",
        129 => "HDR Vivid",
        _ => return None,
    })
}

fn audio_label(id: u64, bandwidth: u64) -> String {
    match id {
        30216 => "64K".into(),
        30232 => "132K".into(),
        30280 => "192K".into(),
        30250 => "Dolby".into(),
        30251 => "Hi-Res".into(),
        _ if bandwidth > 0 => format!("{}K", bandwidth / 1000),
        _ => id.to_string(),
    }
}

/// Headers a caller needs to download Bilibili streams (anti-hotlinking).
pub fn download_headers() -> Vec<Header> {
    vec![
        Header::new("Referer", REFERER),
        Header::new("User-Agent", USER_AGENT),
    ]
}

fn clamp(n: u64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The members of a play-URL object `build` reads, as their text, and all
/// its members in order (for the platform data), from one reading.
#[derive(Debug, Default)]
pub struct View<'a> {
    timelength: Option<&'a RawValue>,
    durl: Option<&'a RawValue>,
    quality: Option<&'a RawValue>,
    format: Option<&'a RawValue>,
    support_formats: Option<&'a RawValue>,
    support_formats_camel: Option<&'a RawValue>,
    accept_quality: Option<&'a RawValue>,
    accept_description: Option<&'a RawValue>,
    members: Vec<(Cow<'a, str>, &'a RawValue)>,
}

impl<'a> View<'a> {
    /// Of a name given twice, the last.
    pub fn of(object: &Object<'a>) -> View<'a> {
        View {
            timelength: object.get("timelength"),
            durl: object.get("durl"),
            quality: object.get("quality"),
            format: object.get("format"),
            support_formats: object.get("support_formats"),
            support_formats_camel: object.get("supportFormats"),
            accept_quality: object.get("accept_quality"),
            accept_description: object.get("accept_description"),
            members: object.members().to_vec(),
        }
    }
}

impl Dash<'_> {
    /// Does it list a video stream?
    pub fn has_video(&self) -> bool {
        self.video.as_ref().is_some_and(|v| !v.is_empty())
    }
}

/// The media object of one play-URL object; `dash` is its `dash` read (a
/// failed read is an upstream change).
pub fn build(object: &View, dash: Option<&serde_json::Result<Dash>>, meta: &Meta) -> Result<Media> {
    let labels = Labels::of(object);
    let headers = download_headers();
    let mut media = Media {
        title: meta.title.clone(),
        thumbnail: meta.thumbnail.clone(),
        duration: meta.duration,
        ..Media::default()
    };
    let timelength = read::<f64>(object.timelength).unwrap_or(0.0);
    let dash = match dash {
        Some(Ok(dash)) => Some(dash),
        Some(Err(e)) => return Err(Failure::changed(format!("unexpected DASH object: {e}"))),
        None => None,
    };
    if timelength > 0.0 {
        media.duration = timelength / 1000.0;
    } else if let Some(seconds) = dash.as_ref().and_then(|d| d.duration).filter(|d| *d > 0.0) {
        media.duration = seconds;
    }
    if let Some(dash) = dash.filter(|d| d.has_video()) {
        for stream in dash.video.iter().flatten() {
            let mut quality = labels.label(stream.id);
            if let Some(codec) = stream.codec_family() {
                quality = format!("{quality} {codec}");
            }
            for url in stream.urls() {
                media.videos.push(Video {
                    url,
                    quality: quality.clone(),
                    mime_type: stream.mime("video/mp4"),
                    width: clamp(stream.width.unwrap_or(0)),
                    height: clamp(stream.height.unwrap_or(0)),
                    has_audio: false,
                    source: MediaSource::Dash,
                    headers: headers.clone(),
                });
            }
        }
        let audios = dash
            .audio
            .iter()
            .flatten()
            .chain(dash.dolby.iter().flat_map(|d| d.audio.iter().flatten()))
            .chain(dash.flac.iter().flat_map(|f| f.audio.iter()));
        for stream in audios {
            let bandwidth = stream.bandwidth.unwrap_or(0);
            for url in stream.urls() {
                media.audios.push(Audio {
                    url,
                    quality: audio_label(stream.id, bandwidth),
                    mime_type: stream.mime("audio/mp4"),
                    bitrate: clamp(bandwidth),
                    source: MediaSource::Dash,
                    headers: headers.clone(),
                });
            }
        }
        return Ok(media);
    }
    let segments = match object.durl.filter(|d| d.get() != "null") {
        Some(d) => serde_json::from_str::<Vec<Segment>>(d.get())
            .map_err(|e| Failure::changed(format!("unexpected durl list: {e}")))?,
        None => Vec::new(),
    };
    let qn = read::<u64>(object.quality).unwrap_or(0);
    let format = read::<String>(object.format).unwrap_or_default();
    let format = format.as_str();
    let quality = labels.label(qn);
    for segment in &segments {
        let urls = std::iter::once(&segment.url).chain(segment.backup_url.iter().flatten());
        for url in urls.filter(|u| !u.is_empty()) {
            media.videos.push(Video {
                url: https(url),
                quality: quality.clone(),
                mime_type: durl_mime(url, format).into(),
                width: meta.width,
                height: meta.height,
                has_audio: true,
                source: MediaSource::Direct,
                headers: headers.clone(),
            });
        }
    }
    Ok(media)
}

/// `durl` items are FLV or MP4: the file extension says which, else `format`.
fn durl_mime(url: &str, format: &str) -> &'static str {
    let path = url.split('?').next().unwrap_or(url).to_ascii_lowercase();
    if path.ends_with(".mp4") {
        "video/mp4"
    } else if path.ends_with(".flv") || format.starts_with("flv") || format.starts_with("hdflv") {
        "video/x-flv"
    } else {
        "video/mp4"
    }
}

/// platformData: the play-URL object (copied as its text) with the listed
/// `title`/`pic`, the metadata extras, `support_formats` under its listed
/// name, and empty values for listed members the answer lacks or gives
/// another type (`dash` for a durl answer).
pub fn platform_data(play: &PlayUrl, view: &View, meta: Meta) -> Result<PlatformData> {
    let is_array = |raw: &&RawValue| fields::kind_of(raw) == b'[';
    let mut data = ObjectWriter::new();
    data.str("title", &meta.pd_title);
    data.str("pic", &meta.pd_pic);
    if view.support_formats.filter(is_array).is_none() {
        match view.support_formats_camel.filter(is_array) {
            Some(formats) => data.raw("support_formats", formats),
            None => data.value("support_formats", &[] as &[u8]),
        };
    }
    // The play-URL object's own members come before the extras of the
    // same name, even those left out for their type.
    let mut shadowed: Vec<&str> = Vec::new();
    for (name, value) in &view.members {
        if meta.extras.contains_key(name.as_ref()) || meta.kept.iter().any(|(k, _)| k == name) {
            shadowed.push(name);
        }
        if !(play.without_video_info && name == "video_info")
            && fits_listed("bilibili", name, value)
        {
            data.raw(name.clone(), value);
        }
    }
    for (name, value) in &meta.extras {
        let fits = mediaparse_sdk::spec::listed_members("bilibili")
            .iter()
            .find(|(listed, _)| listed == name)
            .is_none_or(|(_, kind)| kind.accepts(value));
        if fits && !shadowed.contains(&name.as_str()) {
            data.value(name.clone(), value);
        }
    }
    for (name, value) in &meta.kept {
        if fits_listed("bilibili", name, value) && !shadowed.contains(name) {
            data.raw(*name, value);
        }
    }
    Ok(data.finish("bilibili"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use mediaparse_sdk::serde_json::json;
    use mediaparse_sdk::spec;

    fn object(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    fn text(v: Value) -> Box<RawValue> {
        serde_json::value::to_raw_value(&v).unwrap()
    }

    fn members(object: &RawValue) -> Object<'_> {
        Object::of(object).unwrap()
    }

    #[test]
    fn dash_items_backups_labels_and_audio_order() {
        let o = text(json!({
            "quality": 80, "format": "flv", "timelength": 1500,
            "support_formats": [{"quality": 80, "new_description": "1080P 高清", "display_desc": "1080P"}],
            "dash": {
                "duration": 2,
                "video": [{"id": 80, "baseUrl": "https://a/v.m4s", "base_url": "https://a/v.m4s",
                           "backupUrl": ["https://b/v.m4s"], "backup_url": ["https://b/v.m4s"],
                           "bandwidth": 10, "mimeType": "video/mp4", "codecs": "hev1.1.6.L150.90",
                           "width": 1920, "height": 1080, "codecid": 12}],
                "audio": null,
                "dolby": {"type": 1, "audio": [{"id": 30250, "base_url": "http://c/d.m4s", "backup_url": null,
                          "bandwidth": 448000, "mime_type": "audio/mp4", "codecs": "ec-3"}]},
                "flac": {"display": true, "audio": {"id": 30251, "baseUrl": "https://c/f.m4s", "backupUrl": null,
                          "bandwidth": 900000, "mimeType": "audio/mp4", "codecs": "fLaC"}}
            }
        }));
        let object = members(&o);
        let view = View::of(&object);
        let dash = object
            .get("dash")
            .filter(|d| fields::kind_of(d) == b'{')
            .map(|d| serde_json::from_str::<Dash>(d.get()));
        let m = build(&view, dash.as_ref(), &Meta::default()).unwrap_or_default();
        assert_eq!(m.duration, 1.5);
        assert_eq!(m.videos.len(), 2);
        assert_eq!(m.videos[0].url, "https://a/v.m4s");
        assert_eq!(m.videos[1].url, "https://b/v.m4s");
        assert_eq!(m.videos[0].quality, "1080P 高清 hev1");
        assert_eq!(
            m.videos[0].mime_type,
            "video/mp4; codecs=\"hev1.1.6.L150.90\""
        );
        assert!(!m.videos[0].has_audio);
        let qualities: Vec<&str> = m.audios.iter().map(|a| a.quality.as_str()).collect();
        assert_eq!(qualities, ["Dolby", "Hi-Res"]);
        assert_eq!(m.audios[0].url, "https://c/d.m4s");
        assert_eq!(m.audios[1].bitrate, 900000);
    }

    #[test]
    fn durl_mime_and_labels() {
        assert_eq!(durl_mime("https://x/a.mp4?e=1", "mp4"), "video/mp4");
        assert_eq!(durl_mime("https://x/a.flv?e=1", "mp4"), "video/x-flv");
        assert_eq!(durl_mime("https://x/a", "flv480"), "video/x-flv");
        let o = text(json!({
            "accept_quality": [116, 16], "accept_description": ["高清 1080P60", "流畅 360P"],
            "supportFormats": [{"quality": 16, "description": "流畅 360P"}]
        }));
        let labels = Labels::of(&View::of(&members(&o)));
        assert_eq!(labels.label(116), "高清 1080P60");
        assert_eq!(labels.label(16), "流畅 360P");
        assert_eq!(labels.label(127), "8K");
        assert_eq!(labels.label(9999), "9999");
    }

    #[test]
    fn platform_data_keeps_members_and_fills_listed_ones() {
        let play_text = text(json!({"quality": 16, "format": "flv360", "timelength": 1,
            "supportFormats": [{"quality": 16}], "durl": [], "dash": null, "title": 5}));
        let play = PlayUrl {
            object: members(&play_text),
            dash: None,
            without_video_info: false,
        };
        let meta = Meta {
            pd_title: "t".into(),
            pd_pic: "https://p".into(),
            extras: object(json!({"aid": "1", "quality": "ignored"})),
            ..Meta::default()
        };
        let pd = platform_data(&play, &View::of(&play.object), meta)
            .unwrap()
            .to_value();
        assert!(
            spec::check_platform_data("bilibili", &pd).is_empty(),
            "{pd}"
        );
        assert_eq!(pd["dash"], json!({}));
        assert_eq!(pd["support_formats"], json!([{"quality": 16}]));
        assert_eq!(pd["quality"], json!(16));
        assert_eq!(pd["aid"], json!("1"));
    }
}
