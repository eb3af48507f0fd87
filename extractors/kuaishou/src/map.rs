//! Reading Kuaishou's answers: the mobile share page's `INIT_STATE` photo
//! (SPEC.md's member names) and the desktop page's Apollo cache record
//! (renamed to them), each as a cascade attempt; then the media object and
//! platform data of the photo.

use mediaparse_sdk::cascade::Attempt;
use mediaparse_sdk::fields::{self, RawValue, Text, kind_of};
use mediaparse_sdk::html;
use mediaparse_sdk::html::assigned_value;
use mediaparse_sdk::{
    Extraction, Failure, Header, HttpResponse, Image, Media, ObjectWriter, PlatformData, Result,
    Video, jsobj,
};
use std::borrow::Cow;

use serde::{Deserialize, de};
use serde_json::{Map, Value, json};

use crate::PLATFORM;

pub fn download_headers() -> Vec<Header> {
    vec![
        Header::new("Referer", "https://www.kuaishou.com/"),
        Header::new("User-Agent", mediaparse_sdk::ua::SAFARI_17_IPHONE),
    ]
}

fn is_http(url: &str) -> bool {
    url.starts_with("https://") || url.starts_with("http://")
}

/// Progressive MP4s, although described as an adaptation set.
fn video(url: &str, quality: String, width: u32, height: u32) -> Video {
    Video::mp4(url, quality, (width, height), download_headers())
}

/// `deserialize_with`: a number or numeric string as `u32`, clamped; 0
/// when absent, negative or not a number.
fn clamped_u32<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<u32, D::Error> {
    Ok(Text::deserialize(d)?
        .number()
        .map(|n| n.min(f64::from(u32::MAX)) as u32)
        .unwrap_or(0))
}

/// The members of a photo (SPEC.md's names) `map` reads; a member of an
/// unexpected type reads as absent.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct Photo<'a> {
    #[serde(borrow, deserialize_with = "fields::object")]
    manifest: Manifest<'a>,
    #[serde(borrow, rename = "manifestH265", deserialize_with = "fields::object")]
    manifest_h265: Manifest<'a>,
    #[serde(deserialize_with = "clamped_u32")]
    width: u32,
    #[serde(deserialize_with = "clamped_u32")]
    height: u32,
    #[serde(borrow, deserialize_with = "fields::objects")]
    main_mv_urls: Vec<UrlItem<'a>>,
    #[serde(borrow, rename = "photoH265Url", deserialize_with = "fields::string")]
    photo_h265_url: Text<'a>,
    #[serde(borrow, rename = "ext_params", deserialize_with = "fields::object")]
    ext_params: ExtParams<'a>,
    #[serde(borrow, deserialize_with = "fields::objects")]
    cover_urls: Vec<UrlItem<'a>>,
    #[serde(borrow, deserialize_with = "fields::string")]
    caption: Text<'a>,
    // Platform data members, as their text.
    #[serde(borrow, deserialize_with = "fields::raw")]
    duration: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    photo_id: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    author: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    user_id: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    user_eid: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    user_name: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    head_url: Option<&'a RawValue>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct Manifest<'a> {
    #[serde(borrow, deserialize_with = "fields::objects")]
    adaptation_set: Vec<AdaptationSet<'a>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct AdaptationSet<'a> {
    #[serde(borrow, deserialize_with = "fields::objects")]
    representation: Vec<Representation<'a>>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct Representation<'a> {
    #[serde(deserialize_with = "clamped_u32")]
    width: u32,
    #[serde(deserialize_with = "clamped_u32")]
    height: u32,
    #[serde(borrow, deserialize_with = "fields::string")]
    quality_label: Text<'a>,
    #[serde(borrow, deserialize_with = "fields::string")]
    quality_type: Text<'a>,
    #[serde(borrow, deserialize_with = "fields::string")]
    url: Text<'a>,
    #[serde(borrow, deserialize_with = "fields::strings")]
    backup_url: Vec<Option<Text<'a>>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct UrlItem<'a> {
    #[serde(borrow, deserialize_with = "fields::string")]
    url: Text<'a>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ExtParams<'a> {
    #[serde(borrow, deserialize_with = "fields::object")]
    atlas: Atlas<'a>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Atlas<'a> {
    #[serde(borrow, deserialize_with = "fields::strings")]
    cdn: Vec<Option<Text<'a>>>,
    #[serde(borrow, deserialize_with = "fields::strings")]
    list: Vec<Option<Text<'a>>>,
    #[serde(deserialize_with = "fields::objects")]
    size: Vec<Size>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Size {
    #[serde(deserialize_with = "clamped_u32")]
    w: u32,
    #[serde(deserialize_with = "clamped_u32")]
    h: u32,
}

fn string<'s>(s: &'s Option<Text<'_>>) -> Option<&'s str> {
    s.as_ref().map(Text::as_str)
}

/// Every representation of a manifest: its `url`, then each `backupUrl`.
fn manifest_videos(manifest: &Manifest, out: &mut Vec<Video>) {
    for set in &manifest.adaptation_set {
        for rep in &set.representation {
            let (width, height) = (rep.width, rep.height);
            let quality = [&rep.quality_label, &rep.quality_type]
                .iter()
                .map(|s| s.as_str())
                .find(|s| !s.is_empty())
                .map(String::from)
                .unwrap_or_else(|| {
                    if height > 0 {
                        format!("{height}p")
                    } else {
                        "default".into()
                    }
                });
            let mut urls = vec![rep.url.as_str()];
            urls.extend(rep.backup_url.iter().filter_map(string));
            for url in urls.into_iter().filter(|u| is_http(u)) {
                out.push(video(url, quality.clone(), width, height));
            }
        }
    }
}

/// Atlas (image) posts: `ext_params.atlas{cdn[], list[], size[]}`.
fn atlas_images(photo: &Photo) -> Vec<Image> {
    let atlas = &photo.ext_params.atlas;
    let Some(cdn) = atlas.cdn.first().and_then(string) else {
        return Vec::new();
    };
    atlas
        .list
        .iter()
        .enumerate()
        .filter_map(|(i, path)| {
            let path = string(path)?.trim_start_matches('/');
            let size = atlas.size.get(i);
            Some(Image {
                url: format!("https://{cdn}/{path}"),
                width: size.map(|s| s.w).unwrap_or(0),
                height: size.map(|s| s.h).unwrap_or(0),
            })
        })
        .collect()
}

/// Map a photo object in SPEC.md's names (mobile shape, or the desktop
/// record after [`from_desktop`]).
fn to_media(photo: &Photo) -> Media {
    let mut videos = Vec::new();
    manifest_videos(&photo.manifest, &mut videos);
    manifest_videos(&photo.manifest_h265, &mut videos);
    let (width, height) = (photo.width, photo.height);
    for url in photo
        .main_mv_urls
        .iter()
        .map(|m| m.url.as_str())
        .filter(|u| is_http(u))
    {
        videos.push(video(url, "main".into(), width, height));
    }
    let h265 = photo.photo_h265_url.as_str();
    if is_http(h265) {
        videos.push(video(h265, "main h265".into(), width, height));
    }
    let images = atlas_images(photo);
    let thumbnail = photo
        .cover_urls
        .first()
        .map(|c| c.url.as_str().to_string())
        .unwrap_or_default();
    let duration = photo
        .duration
        .and_then(|d| serde_json::from_str::<Text>(d.get()).ok())
        .and_then(|d| d.number());
    Media {
        title: photo.caption.as_str().to_string(),
        thumbnail,
        duration: if images.is_empty() || !videos.is_empty() {
            duration.unwrap_or(0.0) / 1000.0
        } else {
            0.0
        },
        images,
        videos,
        audios: Vec::new(),
    }
}

/// Platform data: the photo object (its text) with SPEC.md's members
/// present and of their types.
fn platform_data(raw: &RawValue, photo: &Photo, requested_id: &str) -> Result<PlatformData> {
    let mut data = ObjectWriter::new();
    let id = match photo.photo_id.map(|r| (kind_of(r), r)) {
        Some((b'"' | b'-' | b'0'..=b'9', r)) => serde_json::from_str::<Text>(r.get())
            .ok()
            .filter(|t| !t.as_str().is_empty())
            .map(Text::into_string),
        _ => None,
    };
    data.str("photoId", id.as_deref().unwrap_or(requested_id));
    if photo.author.is_none_or(|a| kind_of(a) != b'{') {
        data.object("author", |author| {
            for (from, to) in [
                (photo.user_id, "id"),
                (photo.user_eid, "eid"),
                (photo.user_name, "name"),
                (photo.head_url, "headUrl"),
            ] {
                if let Some(v) = from.filter(|v| kind_of(v) != b'n') {
                    author.raw(to, v);
                }
            }
        });
    }
    if let Some(ms) = photo
        .duration
        .filter(|d| kind_of(d) == b'"')
        .and_then(|d| serde_json::from_str::<Text>(d.get()).ok())
        .and_then(|d| d.as_str().trim().parse::<u64>().ok())
    {
        data.value("duration", &ms);
    }
    let is_number = |v: &RawValue| matches!(kind_of(v), b'-' | b'0'..=b'9');
    data.rest_of_where(raw, |name, value| match name {
        "author" => kind_of(value) == b'{',
        "duration" | "width" | "height" => is_number(value),
        "caption" => kind_of(value) == b'"',
        "mainMvUrls" | "coverUrls" => kind_of(value) == b'[',
        "manifest" => kind_of(value) == b'{',
        _ => true,
    })?;
    Ok(data.finish(PLATFORM))
}

/// Rename a desktop Apollo photo record (references already resolved) to
/// the mobile/SPEC.md names: `id`→`photoId`, `coverUrl`→`coverUrls`,
/// `photoUrl`→`mainMvUrls`; the author record becomes `author`.
pub fn from_desktop(mut record: Map<String, Value>, author: Option<Value>) -> Value {
    if let Some(id) = record.get("id").cloned() {
        record.entry("photoId").or_insert(id);
    }
    if let Some(Value::String(cover)) = record.get("coverUrl").cloned() {
        record
            .entry("coverUrls")
            .or_insert_with(|| json!([{ "url": cover }]));
    }
    if let Some(Value::String(url)) = record.get("photoUrl").cloned() {
        record
            .entry("mainMvUrls")
            .or_insert_with(|| json!([{ "url": url }]));
    }
    if let Some(author) = author {
        record.entry("author").or_insert(author);
    }
    Value::Object(record)
}

/// Media and platform data of a found photo (its JSON text).
pub fn extraction(raw: &RawValue, id: &str) -> Result<Extraction> {
    let photo: Photo = fields::from_text(raw.get(), "the photo")?;
    Ok(Extraction {
        media: to_media(&photo),
        platform_data: platform_data(raw, &photo, id)?,
    })
}

fn anti_bot() -> Failure {
    Failure::RateLimited("Kuaishou asked for verification (captcha or antispam)".into())
}

fn not_found() -> Failure {
    Failure::unavailable("Kuaishou has no such post")
}

fn is_verification_page(text: &str) -> bool {
    html::contains(text, "captcha.zt.kuaishou.com")
        || html::contains(text, "请求过快")
        || html::contains(text, "captchaSession")
}

fn page_text(response: &HttpResponse) -> std::result::Result<Cow<'_, str>, Failure> {
    match response.status {
        404 | 410 => return Err(not_found()),
        403 | 429 => return Err(anti_bot()),
        s if !response.is_success() => {
            return Err(Failure::upstream(format!("Kuaishou answered HTTP {s}")));
        }
        _ => {}
    }
    let text = response.text();
    if is_verification_page(&text) {
        return Err(anti_bot());
    }
    Ok(text)
}

/// A `result` code: an integer, or a string holding one.
fn result_code(raw: &RawValue) -> Option<i64> {
    match kind_of(raw) {
        b'"' => serde_json::from_str::<Text>(raw.get())
            .ok()?
            .as_str()
            .parse()
            .ok(),
        _ => serde_json::from_str(raw.get()).ok(),
    }
}

/// The two members of an `INIT_STATE` value that mark the photo's holder.
#[derive(Deserialize, Default)]
struct Holder<'a> {
    #[serde(borrow, default, deserialize_with = "fields::raw")]
    result: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "fields::raw")]
    photo: Option<&'a RawValue>,
}

impl<'a> Holder<'a> {
    /// The holder members of `raw`; both absent when it is no object.
    fn of(raw: &'a RawValue) -> Holder<'a> {
        (kind_of(raw) == b'{')
            .then(|| serde_json::from_str(raw.get()).ok())
            .flatten()
            .unwrap_or(Holder {
                result: None,
                photo: None,
            })
    }
}

/// The values of `INIT_STATE`'s members, each read as a [`Holder`] (one
/// that is no object has neither member); none when the state is no object.
struct State<'a>(Vec<Holder<'a>>);

impl<'de> Deserialize<'de> for State<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct AnyHolder<'a>(Holder<'a>);
        impl<'de> Deserialize<'de> for AnyHolder<'de> {
            fn deserialize<D: serde::Deserializer<'de>>(
                d: D,
            ) -> std::result::Result<Self, D::Error> {
                fields::object(d).map(AnyHolder)
            }
        }
        struct Values;
        impl<'de> de::Visitor<'de> for Values {
            type Value = State<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any value")
            }
            fn visit_map<A: de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> std::result::Result<State<'de>, A::Error> {
                let mut values = Vec::new();
                while let Some((_, holder)) = map.next_entry::<de::IgnoredAny, AnyHolder>()? {
                    values.push(holder.0);
                }
                Ok(State(values))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> std::result::Result<State<'de>, A::Error> {
                while seq.next_element::<de::IgnoredAny>()?.is_some() {}
                Ok(State(Vec::new()))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> std::result::Result<State<'de>, E> {
                Ok(State(Vec::new()))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> std::result::Result<State<'de>, E> {
                Ok(State(Vec::new()))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> std::result::Result<State<'de>, E> {
                Ok(State(Vec::new()))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> std::result::Result<State<'de>, E> {
                Ok(State(Vec::new()))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> std::result::Result<State<'de>, E> {
                Ok(State(Vec::new()))
            }
            fn visit_unit<E: de::Error>(self) -> std::result::Result<State<'de>, E> {
                Ok(State(Vec::new()))
            }
        }
        d.deserialize_any(Values)
    }
}

/// A page answered by a bare JSON reply instead of HTML: a blocked request
/// (`{"result":2,…}`, 29–63 bytes) or the antispam captcha (`result` 2001);
/// `None` when the body is not JSON.
fn bare_reply(text: &str, page: &str) -> Option<Failure> {
    let bare = serde_json::from_str::<&RawValue>(text.trim()).ok()?;
    Some(match Holder::of(bare).result.and_then(result_code) {
        Some(2) | Some(2001) => anti_bot(),
        _ => Failure::changed(format!("the {page} answered JSON without a photo")),
    })
}

/// The mobile share page's photo (its JSON text); `Missed` moves on to the
/// desktop page, `Err` is final (deleted, under review).
pub fn read_mobile(response: &HttpResponse) -> Result<Attempt<Box<RawValue>>> {
    let text = match page_text(response) {
        Ok(text) => text,
        Err(miss) => return Ok(Attempt::Missed(miss)),
    };
    if let Some(miss) = bare_reply(&text, "share page") {
        return Ok(Attempt::Missed(miss));
    }
    let Some(raw) = assigned_value(&text, "window.INIT_STATE") else {
        return Ok(Attempt::Missed(Failure::changed(
            "the share page has no INIT_STATE",
        )));
    };
    // The page writes JSON; JS-isms are rewritten only when it does not.
    let json: Cow<str> = match serde_json::from_str::<de::IgnoredAny>(raw) {
        Ok(_) => Cow::Borrowed(raw),
        Err(_) => Cow::Owned(jsobj::to_json(raw)),
    };
    // Keys are obfuscated (every character shifted by one): find the value
    // that holds both `result` and `photo`.
    let State(values) =
        serde_json::from_str(&json).map_err(|e| Failure::changed(format!("INIT_STATE: {e}")))?;
    let Some(holder) = values
        .iter()
        .find(|h| h.result.is_some() && h.photo.is_some())
    else {
        return Ok(Attempt::Missed(
            match values.iter().find_map(|h| h.result.and_then(result_code)) {
                Some(2) | Some(2001) => anti_bot(),
                _ => Failure::changed("INIT_STATE holds no photo"),
            },
        ));
    };
    match holder.result.and_then(result_code) {
        Some(1) => {}
        Some(2) | Some(2001) => return Ok(Attempt::Missed(anti_bot())),
        Some(223) => {
            return Err(Failure::unavailable(
                "the post was deleted or never finished uploading",
            ));
        }
        Some(226) => return Err(Failure::unavailable("the post is under review")),
        Some(other) => {
            return Ok(Attempt::Missed(Failure::changed(format!(
                "INIT_STATE result {other}"
            ))));
        }
        None => {
            return Ok(Attempt::Missed(Failure::changed(
                "INIT_STATE result is not a number",
            )));
        }
    }
    match holder.photo.filter(|p| kind_of(p) == b'{') {
        Some(photo) => Ok(Attempt::Got(photo.to_owned())),
        None => Ok(Attempt::Missed(not_found())),
    }
}

/// Resolve Apollo references (`{"type":"id","id":…}`) and JSON scalars
/// (`{"type":"json","json":…}`) in a cached record.
fn resolve(value: &Value, cache: &Map<String, Value>, depth: usize) -> Value {
    if depth > 12 {
        return value.clone();
    }
    match value {
        Value::Object(map) => {
            let kind = map.get("type").and_then(Value::as_str);
            if kind == Some("json")
                && map.len() <= 4
                && let Some(inner) = map.get("json")
            {
                return inner.clone();
            }
            if kind == Some("id")
                && map.len() <= 4
                && let Some(id) = map.get("id").and_then(Value::as_str)
                && let Some(target) = cache
                    .get(id)
                    .or_else(|| cache.get(id.trim_start_matches('$')))
            {
                return resolve(target, cache, depth + 1);
            }
            Value::Object(
                map.iter()
                    .filter(|(k, _)| k.as_str() != "__typename")
                    .map(|(k, v)| (k.clone(), resolve(v, cache, depth + 1)))
                    .collect(),
            )
        }
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| resolve(v, cache, depth + 1)).collect())
        }
        other => other.clone(),
    }
}

/// The desktop page's photo record, renamed to SPEC.md's names (its JSON
/// text).
pub fn read_desktop(response: &HttpResponse, id: &str) -> Result<Attempt<Box<RawValue>>> {
    let text = match page_text(response) {
        Ok(text) => text,
        Err(miss) => return Ok(Attempt::Missed(miss)),
    };
    // Desktop User-Agents are often answered `{"result":2,"error_msg":null}`.
    if let Some(miss) = bare_reply(&text, "desktop page") {
        return Ok(Attempt::Missed(miss));
    }
    let Some(raw) = assigned_value(&text, "window.__APOLLO_STATE__") else {
        return Ok(Attempt::Missed(Failure::changed(
            "the desktop page has no __APOLLO_STATE__",
        )));
    };
    let state =
        jsobj::parse(raw).map_err(|e| Failure::changed(format!("__APOLLO_STATE__: {e}")))?;
    let Some(cache) = state.get("defaultClient").and_then(Value::as_object) else {
        return Ok(Attempt::Missed(Failure::changed(
            "__APOLLO_STATE__ has no defaultClient",
        )));
    };
    let detail = cache
        .get("ROOT_QUERY")
        .and_then(Value::as_object)
        .and_then(|root| {
            root.iter()
                .find(|(k, _)| k.starts_with("visionVideoDetail("))
                .map(|(_, v)| resolve(v, cache, 0))
        });
    let status = detail.as_ref().and_then(|d| d.get("status")).and_then(|s| {
        s.as_i64()
            .or_else(|| s.as_str().and_then(|t| t.parse().ok()))
    });
    match status {
        Some(1040) | Some(1041) => return Ok(Attempt::Missed(anti_bot())),
        Some(2) => return Ok(Attempt::Missed(not_found())),
        _ => {}
    }
    let record = cache
        .get(&format!("VisionVideoDetailPhoto:{id}"))
        .map(|r| resolve(r, cache, 0))
        .or_else(|| {
            detail
                .as_ref()
                .and_then(|d| d.get("photo"))
                .filter(|p| p.is_object())
                .cloned()
        });
    let Some(Value::Object(record)) = record else {
        return Ok(Attempt::Missed(Failure::changed(
            "the Apollo cache holds no photo record",
        )));
    };
    let author = detail
        .as_ref()
        .and_then(|d| d.get("author"))
        .filter(|a| a.is_object())
        .cloned()
        .or_else(|| {
            cache
                .iter()
                .find(|(k, _)| k.starts_with("VisionVideoDetailAuthor:"))
                .map(|(_, v)| resolve(v, cache, 0))
        });
    let photo = serde_json::value::to_raw_value(&from_desktop(record, author))
        .map_err(|e| Failure::changed(format!("the Apollo photo record: {e}")))?;
    Ok(Attempt::Got(photo))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atlas_urls_join_cdn_and_path() {
        let text = r#"{"ext_params":{"atlas":{"cdn":["p2.a.yximgs.com"],"list":["/ufile/atlas/a_0.jpg","ufile/atlas/a_1.jpg"],"size":[{"w":1080,"h":1440}]}}}"#;
        let photo: Photo = serde_json::from_str(text).unwrap();
        let images = atlas_images(&photo);
        assert_eq!(images.len(), 2);
        assert_eq!(images[0].url, "https://p2.a.yximgs.com/ufile/atlas/a_0.jpg");
        assert_eq!((images[0].width, images[0].height), (1080, 1440));
        assert_eq!((images[1].width, images[1].height), (0, 0));
    }

    #[test]
    fn platform_data_has_listed_members() {
        let raw: &RawValue =
            serde_json::from_str(r#"{"caption":"x","userName":"u","userId":12}"#).unwrap();
        let photo: Photo = serde_json::from_str(raw.get()).unwrap();
        let data = platform_data(raw, &photo, "3xabc").unwrap().to_value();
        assert!(mediaparse_sdk::spec::check_platform_data("kuaishou", &data).is_empty());
        assert_eq!(data["photoId"], "3xabc");
        assert_eq!(data["author"]["name"], "u");
    }
}
