//! A Weibo status (PC `weibo.com/ajax` or `m.weibo.cn` schema) or a video
//! component answer → media and platformData.

use std::collections::HashMap;

use mediaparse_sdk::fields::{self, Object, RawValue, kind_of};
use mediaparse_sdk::ids::{self, nullable};
use mediaparse_sdk::json::without_nulls;
use mediaparse_sdk::platform_data::fits_listed;
use mediaparse_sdk::serde_json::{self, Map, Value};
use mediaparse_sdk::urls::https;
use mediaparse_sdk::{
    Extraction, Failure, Header, Image, Media, MediaSource, ObjectWriter, Result, Video, spec,
};
use serde::Deserialize;

use crate::urls::mblogid_of;

/// A desktop browser User-Agent, sent upstream and suggested for downloads.
pub const DESKTOP_UA: &str = mediaparse_sdk::ua::CHROME_126_WINDOWS;

/// The fields of a status both schemas share or differ in.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Status<'a> {
    #[serde(deserialize_with = "nullable")]
    pub text_raw: String,
    #[serde(deserialize_with = "nullable")]
    pub raw_text: String,
    #[serde(deserialize_with = "nullable")]
    pub text: String,
    // PC
    #[serde(deserialize_with = "nullable")]
    pub pic_ids: Vec<String>,
    /// Each picture's object, as its text.
    #[serde(borrow, deserialize_with = "nullable")]
    pub pic_infos: HashMap<String, &'a RawValue>,
    #[serde(borrow, deserialize_with = "nullable")]
    pub mix_media_info: MixMedia<'a>,
    // m.weibo.cn
    #[serde(deserialize_with = "nullable")]
    pub pics: Vec<MPic>,
    pub page_info: Option<PageInfo>,
    #[serde(borrow)]
    pub retweeted_status: Option<Box<Status<'a>>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct MixMedia<'a> {
    #[serde(borrow, deserialize_with = "nullable")]
    pub items: Vec<MixItem<'a>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct MixItem<'a> {
    #[serde(rename = "type", deserialize_with = "nullable")]
    pub kind: String,
    #[serde(borrow, deserialize_with = "fields::raw")]
    pub data: Option<&'a RawValue>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct PicInfo {
    #[serde(rename = "type", deserialize_with = "nullable")]
    pub kind: String,
    pub largest: Option<PicVariant>,
    pub mw2000: Option<PicVariant>,
    pub original: Option<PicVariant>,
    pub large: Option<PicVariant>,
    /// Live photo: the motion part (`.mov`).
    #[serde(deserialize_with = "nullable")]
    pub video: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct PicVariant {
    #[serde(deserialize_with = "nullable")]
    pub url: String,
    #[serde(flatten)]
    pub size: Size,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct MPic {
    #[serde(deserialize_with = "nullable")]
    pub url: String,
    #[serde(deserialize_with = "nullable")]
    pub large: MLarge,
    #[serde(rename = "type", deserialize_with = "nullable")]
    pub kind: String,
    #[serde(rename = "videoSrc", deserialize_with = "nullable")]
    pub video_src: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct MLarge {
    #[serde(deserialize_with = "nullable")]
    pub url: String,
    #[serde(deserialize_with = "nullable")]
    pub geo: Size,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Size {
    #[serde(deserialize_with = "ids::u32")]
    pub width: u32,
    #[serde(deserialize_with = "ids::u32")]
    pub height: u32,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct PageInfo {
    #[serde(rename = "type")]
    pub kind: Value,
    pub object_type: Value,
    #[serde(deserialize_with = "nullable")]
    pub object_id: String,
    pub page_pic: Value,
    #[serde(deserialize_with = "nullable")]
    pub title: String,
    pub media_info: Option<MediaInfo>,
    /// m.weibo.cn: `{mp4_720p_mp4: url, …}` in quality order.
    #[serde(deserialize_with = "nullable")]
    pub urls: Map<String, Value>,
}

impl PageInfo {
    fn is_video(&self) -> bool {
        let is = |v: &Value, names: &[&str]| match v {
            Value::String(s) => names.contains(&s.as_str()),
            Value::Number(n) => n.as_u64() == Some(11),
            _ => false,
        };
        is(&self.object_type, &["video", "11"]) || is(&self.kind, &["video", "11"])
    }

    fn picture(&self) -> String {
        match &self.page_pic {
            Value::String(s) => https(s),
            Value::Object(o) => o
                .get("url")
                .and_then(Value::as_str)
                .map(https)
                .unwrap_or_default(),
            _ => String::new(),
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct MediaInfo {
    #[serde(deserialize_with = "nullable")]
    pub playback_list: Vec<Playback>,
    #[serde(deserialize_with = "nullable")]
    pub video_title: String,
    #[serde(deserialize_with = "nullable")]
    pub kol_title: String,
    #[serde(deserialize_with = "nullable")]
    pub name: String,
    #[serde(deserialize_with = "ids::f64")]
    pub duration: f64,
    #[serde(flatten)]
    pub rest: Map<String, Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Playback {
    #[serde(deserialize_with = "nullable")]
    pub meta: PlaybackMeta,
    #[serde(deserialize_with = "nullable")]
    pub play_info: PlayInfo,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct PlaybackMeta {
    #[serde(deserialize_with = "nullable")]
    pub label: String,
    #[serde(deserialize_with = "nullable")]
    pub quality_desc: String,
    #[serde(deserialize_with = "nullable")]
    pub quality_label: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct PlayInfo {
    #[serde(rename = "type", deserialize_with = "ids::f64")]
    pub kind: f64,
    #[serde(deserialize_with = "nullable")]
    pub mime: String,
    #[serde(deserialize_with = "nullable")]
    pub url: String,
    #[serde(deserialize_with = "ids::u32")]
    pub width: u32,
    #[serde(deserialize_with = "ids::u32")]
    pub height: u32,
    #[serde(deserialize_with = "nullable")]
    pub quality_desc: String,
    #[serde(deserialize_with = "nullable")]
    pub quality_label: String,
    #[serde(deserialize_with = "nullable")]
    pub label: String,
    #[serde(deserialize_with = "ids::f64")]
    pub duration: f64,
}

/// Flat `media_info` URL keys, best first, used when `playback_list` is empty.
const FLAT_KEYS: [&str; 8] = [
    "mp4_720p_mp4",
    "mp4_hd_url",
    "mp4_sd_url",
    "h265_mp4_hd",
    "hevc_mp4_720p",
    "stream_url_hd",
    "stream_url",
    "replay_hd",
];

/// The media one status carries by itself.
#[derive(Debug, Default)]
struct Own {
    media: Media,
    /// The `1034:` object of the status's video, if it has one.
    video_object: Option<String>,
}

fn download_headers() -> Vec<Header> {
    vec![
        Header::new("Referer", "https://weibo.com/"),
        Header::new("User-Agent", DESKTOP_UA),
    ]
}

/// Map one status object (either schema, its members found in the pass
/// that read the answer) to the extraction. Reposts: the post's own media
/// first; when it has none, the original's. The media and the platform
/// data parse only the members each names; the platform data copies the
/// status's members as their text.
pub fn extract_status(object: &Object) -> Result<Extraction> {
    let status: Status = object.read("the status")?;
    let mut chosen = own_media(&status)?;
    if chosen.media.is_empty()
        && let Some(original) = &status.retweeted_status
    {
        let theirs = own_media(original)?;
        if !theirs.media.is_empty() {
            chosen = theirs;
        }
    }
    if chosen.media.title.is_empty() {
        chosen.media.title = post_text(&status);
    }
    let platform_data = status_data(object, chosen.video_object.as_deref())?;
    Ok(Extraction {
        media: chosen.media,
        platform_data,
    })
}

fn own_media(status: &Status) -> Result<Own> {
    let mut own = Own::default();
    let media = &mut own.media;
    // mixed media (pictures and videos in one carousel)
    for item in &status.mix_media_info.items {
        match item.kind.as_str() {
            "pic" => {
                let info: PicInfo = read(item.data).unwrap_or_default();
                push_pic(media, &info);
            }
            "video" => {
                let page: PageInfo = read(item.data).unwrap_or_default();
                push_page_video(media, &page);
                if own.video_object.is_none() && !page.object_id.is_empty() {
                    own.video_object = Some(page.object_id.clone());
                }
            }
            _ => {}
        }
    }
    if status.mix_media_info.items.is_empty() {
        // PC: order from pic_ids
        for pid in &status.pic_ids {
            if let Some(raw) = status.pic_infos.get(pid) {
                let info: PicInfo = serde_json::from_str(raw.get())
                    .map_err(|e| Failure::changed(format!("pic_infos entry: {e}")))?;
                push_pic(media, &info);
            }
        }
        // m.weibo.cn
        if status.pic_ids.is_empty() || status.pic_infos.is_empty() {
            for pic in &status.pics {
                let url = if pic.large.url.is_empty() {
                    &pic.url
                } else {
                    &pic.large.url
                };
                if url.is_empty() {
                    continue;
                }
                let (width, height) = (pic.large.geo.width, pic.large.geo.height);
                media.images.push(Image {
                    url: https(url),
                    width,
                    height,
                });
                if pic.kind.starts_with("livephoto") && !pic.video_src.is_empty() {
                    media.videos.push(live_photo(&pic.video_src, width, height));
                }
            }
        }
    }
    if let Some(page) = status.page_info.as_ref().filter(|p| p.is_video()) {
        let before = media.videos.len();
        push_page_video(media, page);
        if media.videos.len() > before {
            if media.thumbnail.is_empty() {
                media.thumbnail = page.picture();
            }
            if !page.object_id.is_empty() {
                own.video_object = Some(page.object_id.clone());
            }
        }
    }
    if media.thumbnail.is_empty() {
        media.thumbnail = media
            .images
            .first()
            .map(|i| i.url.clone())
            .unwrap_or_default();
    }
    Ok(own)
}

fn push_pic(media: &mut Media, info: &PicInfo) {
    let variant = [&info.largest, &info.mw2000, &info.original, &info.large]
        .into_iter()
        .flatten()
        .find(|v| !v.url.is_empty());
    let Some(v) = variant else { return };
    let (width, height) = (v.size.width, v.size.height);
    media.images.push(Image {
        url: https(&v.url),
        width,
        height,
    });
    if info.kind == "livephoto" && !info.video.is_empty() {
        media.videos.push(live_photo(&info.video, width, height));
    }
}

fn live_photo(url: &str, width: u32, height: u32) -> Video {
    let mime = if url.contains(".mp4") {
        "video/mp4"
    } else {
        "video/quicktime"
    };
    Video {
        url: https(url),
        quality: "live photo".into(),
        mime_type: mime.into(),
        width,
        height,
        has_audio: true,
        source: MediaSource::LivePhoto,
        headers: download_headers(),
    }
}

/// A video page's renditions: `playback_list` (video entries only), else the
/// flat `media_info` keys, else m.weibo.cn `urls`.
fn push_page_video(media: &mut Media, page: &PageInfo) {
    let before = media.videos.len();
    if let Some(info) = &page.media_info {
        for entry in &info.playback_list {
            let p = &entry.play_info;
            let is_video = p.mime.starts_with("video/") || (p.mime.is_empty() && p.kind == 1.0);
            if !is_video || p.url.is_empty() {
                continue;
            }
            let desc = first_non_empty(&[&p.quality_desc, &entry.meta.quality_desc]);
            let label = first_non_empty(&[&p.quality_label, &entry.meta.quality_label]);
            let quality = match (desc, label) {
                ("", "") => first_non_empty(&[&entry.meta.label, &p.label]).to_string(),
                ("", l) | (l, "") => l.to_string(),
                (d, l) => format!("{d} {l}"),
            };
            media.videos.push(Video {
                url: https(&p.url),
                quality,
                mime_type: if p.mime.is_empty() {
                    "video/mp4".into()
                } else {
                    p.mime.clone()
                },
                width: p.width,
                height: p.height,
                has_audio: true,
                source: MediaSource::Direct,
                headers: download_headers(),
            });
        }
        // m.weibo.cn: `page_info.urls` (best first) before the flat keys
        if media.videos.len() == before {
            push_urls(media, &page.urls);
        }
        if media.videos.len() == before {
            let mut seen: Vec<&str> = Vec::new();
            for key in FLAT_KEYS {
                let Some(url) = info.rest.get(key).and_then(Value::as_str) else {
                    continue;
                };
                if url.is_empty() || seen.contains(&url) {
                    continue;
                }
                seen.push(url);
                media.videos.push(flat_video(key, url));
            }
        }
        if media.duration == 0.0 {
            media.duration = info.duration;
        }
        if media.title.is_empty() {
            media.title = first_non_empty(&[&info.video_title, &info.kol_title, &info.name])
                .trim()
                .to_string();
        }
    }
    if media.videos.len() == before {
        push_urls(media, &page.urls);
    }
    if media.title.is_empty() {
        media.title = page.title.trim().to_string();
    }
}

fn push_urls(media: &mut Media, urls: &Map<String, Value>) {
    for (key, url) in urls {
        if let Some(url) = url.as_str().filter(|u| !u.is_empty()) {
            media.videos.push(flat_video(key, url));
        }
    }
}

/// A video from a flat key: size from the URL's `template=WxH.…`, label
/// from its `label=`; an HLS replay is adaptive.
fn flat_video(key: &str, url: &str) -> Video {
    let (width, height) = template_size(url);
    let hls = url.contains(".m3u8");
    Video {
        url: https(url),
        quality: query_param(url, "label").unwrap_or_else(|| key.to_string()),
        mime_type: if hls {
            "application/x-mpegURL".into()
        } else {
            "video/mp4".into()
        },
        width,
        height,
        has_audio: true,
        source: if hls {
            MediaSource::Adaptive
        } else {
            MediaSource::Direct
        },
        headers: download_headers(),
    }
}

/// `…&template=1920x1080.25.0&…` → (1920, 1080).
pub fn template_size(url: &str) -> (u32, u32) {
    let Some(t) = query_param(url, "template") else {
        return (0, 0);
    };
    let dims = t.split('.').next().unwrap_or("");
    match dims.split_once('x') {
        Some((w, h)) => (w.parse().unwrap_or(0), h.parse().unwrap_or(0)),
        None => (0, 0),
    }
}

fn query_param(url: &str, name: &str) -> Option<String> {
    let query = url.split_once('?')?.1;
    query.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=')?;
        (k == name && !v.is_empty()).then(|| v.to_string())
    })
}

fn first_non_empty<'a>(values: &[&'a String]) -> &'a str {
    values
        .iter()
        .find(|v| !v.is_empty())
        .map(|v| v.as_str())
        .unwrap_or("")
}

/// The post's own text: `text_raw`, `raw_text`, or `text` without tags.
fn post_text(status: &Status) -> String {
    let text = if !status.text_raw.is_empty() {
        status.text_raw.clone()
    } else if !status.raw_text.is_empty() {
        status.raw_text.clone()
    } else {
        strip_tags(&status.text)
    };
    clean(&text)
}

fn clean(text: &str) -> String {
    text.trim()
        .trim_end_matches(['\u{200b}', ' '])
        .trim()
        .to_string()
}

/// Remove HTML tags and decode entities (`<br />` becomes a newline).
pub fn strip_tags(html: &str) -> String {
    let html = html
        .replace("<br />", "\n")
        .replace("<br/>", "\n")
        .replace("<br>", "\n");
    let mut out = String::with_capacity(html.len());
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    mediaparse_sdk::html::decode_entities(&out)
}

/// A member's text read as `T` (`None` when absent or of another type).
fn read<'a, T: Deserialize<'a>>(raw: Option<&'a RawValue>) -> Option<T> {
    serde_json::from_str(raw?.get()).ok()
}

/// The members of a status its platform data reads, as their text.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct DataSource<'a> {
    #[serde(borrow, deserialize_with = "fields::raw")]
    idstr: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    id: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    mid: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    mblogid: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    bid: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    text_raw: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    raw_text: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    text: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    pic_ids: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    pic_infos: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    pics: Option<&'a RawValue>,
}

/// platformData of a status: SPEC.md's members from either schema, then
/// the status's own members (those of a listed name only when of the
/// listed type), copied as their text.
fn status_data(
    object: &Object,
    video_object: Option<&str>,
) -> Result<mediaparse_sdk::PlatformData> {
    let source: DataSource = object.read("the status")?;
    let text_of = |v: Option<&RawValue>| read::<String>(v);
    let id = text_of(source.idstr)
        .or_else(|| read::<Value>(source.id).as_ref().and_then(ids::id_text))
        .or_else(|| text_of(source.mid))
        .unwrap_or_default();
    let mid = text_of(source.mid)
        .filter(|m| !m.is_empty())
        .unwrap_or_else(|| id.clone());
    let mblogid = text_of(source.mblogid)
        .or_else(|| text_of(source.bid))
        .filter(|m| !m.is_empty())
        .unwrap_or_else(|| mblogid_of(&mid));
    let text_raw = text_of(source.text_raw)
        .or_else(|| text_of(source.raw_text))
        .unwrap_or_else(|| strip_tags(&text_of(source.text).unwrap_or_default()));
    let mut data = ObjectWriter::new();
    data.str("id", &id)
        .str("mid", &mid)
        .str("mblogid", &mblogid)
        .str("text_raw", &text_raw);
    match pc_pics(&source) {
        Some(pics) => data.raw("pics", &pics),
        None => match source.pics.filter(|p| kind_of(p) == b'[') {
            Some(pics) => data.raw("pics", pics),
            None => data.value("pics", &[] as &[u8]),
        },
    };
    data.str("video_details_url", &video_details_url(video_object));
    data.rest_of_object_where(object, |name, value| fits_listed("weibo", name, value));
    Ok(data.finish("weibo"))
}

/// PC pictures as an ordered array (`pic_ids` order, `pid` added).
fn pc_pics(source: &DataSource) -> Option<Box<RawValue>> {
    let ids: Vec<Value> = read(source.pic_ids)?;
    let infos: HashMap<String, &RawValue> = source
        .pic_infos
        .filter(|i| kind_of(i) == b'{')
        .and_then(|i| read(Some(i)))?;
    let mut pics = String::from("[");
    for pid in ids.iter().filter_map(Value::as_str) {
        let Some(info) = infos.get(pid).filter(|i| kind_of(i) == b'{') else {
            continue;
        };
        let mut pic = ObjectWriter::new();
        pic.rest_of(info).ok()?;
        pic.str("pid", pid);
        if pics.len() > 1 {
            pics.push(',');
        }
        pics.push_str(pic.finish("").as_str());
    }
    pics.push(']');
    RawValue::from_string(pics).ok()
}

fn video_details_url(object: Option<&str>) -> String {
    object
        .filter(|o| o.starts_with("1034:"))
        .map(|o| format!("https://weibo.com/tv/show/{o}"))
        .unwrap_or_default()
}

/// Listed members of the wrong type become empty values of their type.
fn finish(mut data: Map<String, Value>) -> Map<String, Value> {
    for (name, kind) in spec::listed_members("weibo") {
        if data.get(*name).is_some_and(|v| !kind.accepts(v)) {
            data.remove(*name);
        }
    }
    spec::fill_missing_members("weibo", &mut data);
    data
}

/// The video component's `Component_Play_Playinfo`, if it has media.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct PlayInfoComponent {
    pub mid: Value,
    pub title: String,
    pub text: String,
    pub cover_image: String,
    #[serde(deserialize_with = "ids::f64")]
    pub duration_time: f64,
    pub urls: Map<String, Value>,
}

/// Map the component answer (`data.Component_Play_Playinfo`); `Ok(None)`
/// when it holds no media URL.
pub fn extract_component(play: &Value, oid: &str) -> Result<Option<Extraction>> {
    let info: PlayInfoComponent = serde_json::from_value(without_nulls(play))
        .map_err(|e| Failure::changed(format!("the video component has an unknown shape: {e}")))?;
    let mut media = Media {
        title: clean(if info.title.is_empty() {
            &info.text
        } else {
            &info.title
        }),
        thumbnail: if info.cover_image.is_empty() {
            String::new()
        } else {
            https(&info.cover_image)
        },
        duration: info.duration_time,
        ..Media::default()
    };
    for (label, url) in &info.urls {
        let Some(url) = url.as_str().filter(|u| !u.is_empty()) else {
            continue;
        };
        media.videos.push(Video::mp4(
            https(url),
            label.clone(),
            template_size(url),
            download_headers(),
        ));
    }
    if media.videos.is_empty() {
        return Ok(None);
    }
    let mut data = play.as_object().cloned().unwrap_or_default();
    let mid = ids::id_text(&info.mid).unwrap_or_default();
    if let Some(own_id) = data.get("id").cloned()
        && !data.contains_key("object_id")
    {
        data.insert("object_id".into(), own_id);
    }
    data.insert("id".into(), Value::String(mid.clone()));
    data.insert("mblogid".into(), Value::String(mblogid_of(&mid)));
    data.insert("mid".into(), Value::String(mid));
    data.insert("text_raw".into(), Value::String(strip_tags(&info.text)));
    let mut user = Map::new();
    for (from, to) in [
        ("author_id", "id"),
        ("nickname", "screen_name"),
        ("avatar", "avatar_hd"),
    ] {
        if let Some(v) = data.get(from).filter(|v| !v.is_null()) {
            user.insert(to.into(), v.clone());
        }
    }
    if !user.contains_key("screen_name")
        && let Some(v) = data.get("author").filter(|v| v.is_string())
    {
        user.insert("screen_name".into(), v.clone());
    }
    data.insert("user".into(), Value::Object(user));
    data.insert("pics".into(), Value::Array(vec![]));
    let mut page = Map::new();
    page.insert("object_type".into(), "video".into());
    page.insert("object_id".into(), oid.into());
    page.insert("page_pic".into(), media.thumbnail.clone().into());
    data.insert("page_info".into(), Value::Object(page));
    data.insert(
        "video_details_url".into(),
        video_details_url(Some(oid)).into(),
    );
    Ok(Some(Extraction {
        media,
        platform_data: Value::Object(finish(data)).into(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use mediaparse_sdk::serde_json::json;

    #[test]
    fn template_sizes() {
        assert_eq!(
            template_size(
                "http://f.video.weibocdn.com/o0/x.mp4?label=mp4_720p&template=1280x720.25.0&ori=0"
            ),
            (1280, 720)
        );
        assert_eq!(
            template_size("https://f.video.weibocdn.com/o0/x.mp4"),
            (0, 0)
        );
    }

    #[test]
    fn strips_tags_and_entities() {
        assert_eq!(
            strip_tags("a<br />b <a href=\"/n/x\">@x</a>&amp;"),
            "a\nb @x&"
        );
    }

    /// The extraction of a status given as a tree.
    fn extract(status: &Value) -> Extraction {
        let text = status.to_string();
        extract_status(&Object::from_text(&text, "the status").unwrap()).unwrap()
    }

    #[test]
    fn pc_pictures_livephoto_and_flat_fallback() {
        let status = json!({
            "idstr": "4857828294527603", "mid": "4857828294527603", "mblogid": "MognriZPR",
            "text_raw": "x\u{200b}", "pic_ids": ["b", "a"],
            "pic_infos": {
                "a": {"type": "livephoto", "largest": {"url": "http://wx1.sinaimg.cn/large/a.jpg", "width": 10, "height": "20"}, "video": "https://livephoto.us.sinaimg.cn/a.mov"},
                "b": {"type": "pic", "mw2000": {"url": "https://wx1.sinaimg.cn/mw2000/b.jpg", "width": 1, "height": 2}}
            }
        });
        let ex = extract(&status);
        let urls: Vec<_> = ex.media.images.iter().map(|i| i.url.as_str()).collect();
        assert_eq!(
            urls,
            [
                "https://wx1.sinaimg.cn/mw2000/b.jpg",
                "https://wx1.sinaimg.cn/large/a.jpg"
            ]
        );
        assert_eq!(ex.media.videos[0].source, MediaSource::LivePhoto);
        assert_eq!(
            (ex.media.videos[0].width, ex.media.videos[0].height),
            (10, 20)
        );
        assert_eq!(ex.media.title, "x");
        assert_eq!(ex.platform_data.to_value()["pics"][0]["pid"], "b");
        assert_eq!(ex.platform_data.to_value()["video_details_url"], "");
    }

    #[test]
    fn empty_playback_list_uses_flat_keys_once_each() {
        let status = json!({"idstr": "1", "page_info": {"object_type": "video", "object_id": "1034:1",
            "media_info": {"playback_list": [], "stream_url": "http://f.video.weibocdn.com/a.mp4?label=mp4_ld&template=640x360.25.0",
                            "mp4_sd_url": "http://f.video.weibocdn.com/a.mp4?label=mp4_ld&template=640x360.25.0", "h265_mp4_hd": ""}}});
        let ex = extract(&status);
        assert_eq!(ex.media.videos.len(), 1);
        assert_eq!(ex.media.videos[0].quality, "mp4_ld");
        assert_eq!(
            ex.platform_data.to_value()["video_details_url"],
            "https://weibo.com/tv/show/1034:1"
        );
    }

    #[test]
    fn text_post_has_no_media() {
        let status = json!({"id": 4857851275384530u64, "text_raw": "hello"});
        let ex = extract(&status);
        assert!(ex.media.is_empty());
        assert_eq!(ex.platform_data.to_value()["id"], "4857851275384530");
        assert_eq!(ex.platform_data.to_value()["mblogid"], "MogYvmALg");
        assert!(spec::check_platform_data("weibo", &ex.platform_data.to_value()).is_empty());
    }
}
