//! Reading Kuaishou's answers: the mobile share page's `INIT_STATE` photo
//! (SPEC.md's member names) and the desktop page's Apollo cache record
//! (renamed to them), each as a cascade attempt; then the media object and
//! platform data of the photo.

use mediaparse_sdk::cascade::Attempt;
use mediaparse_sdk::html::assigned_value;
use mediaparse_sdk::spec::fill_missing_members;
use mediaparse_sdk::{
    Extraction, Failure, Header, HttpResponse, Image, Media, Result, Video, ids, jsobj,
};
use serde_json::{Map, Value, json};

use crate::PLATFORM;

pub fn download_headers() -> Vec<Header> {
    vec![
        Header::new("Referer", "https://www.kuaishou.com/"),
        Header::new("User-Agent", mediaparse_sdk::ua::SAFARI_17_IPHONE),
    ]
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn num_of(v: &Value, key: &str) -> Option<f64> {
    ids::number(v.get(key)?)
}

fn u32_of(v: &Value, key: &str) -> u32 {
    num_of(v, key)
        .filter(|n| n.is_finite() && *n >= 0.0)
        .map(|n| n.min(f64::from(u32::MAX)) as u32)
        .unwrap_or(0)
}

fn is_http(url: &str) -> bool {
    url.starts_with("https://") || url.starts_with("http://")
}

/// Progressive MP4s, although described as an adaptation set.
fn video(url: &str, quality: String, width: u32, height: u32) -> Video {
    Video::mp4(url, quality, (width, height), download_headers())
}

/// Every representation of a manifest: its `url`, then each `backupUrl`.
fn manifest_videos(manifest: &Value, out: &mut Vec<Video>) {
    let sets = manifest
        .get("adaptationSet")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    for set in sets {
        let reps = set
            .get("representation")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        for rep in reps {
            let (width, height) = (u32_of(rep, "width"), u32_of(rep, "height"));
            let quality = ["qualityLabel", "qualityType"]
                .iter()
                .map(|k| str_of(rep, k))
                .find(|s| !s.is_empty())
                .map(String::from)
                .unwrap_or_else(|| {
                    if height > 0 {
                        format!("{height}p")
                    } else {
                        "default".into()
                    }
                });
            let mut urls = vec![str_of(rep, "url")];
            if let Some(backups) = rep.get("backupUrl").and_then(Value::as_array) {
                urls.extend(backups.iter().filter_map(Value::as_str));
            }
            for url in urls.into_iter().filter(|u| is_http(u)) {
                out.push(video(url, quality.clone(), width, height));
            }
        }
    }
}

/// Atlas (image) posts: `ext_params.atlas{cdn[], list[], size[]}`.
fn atlas_images(photo: &Value) -> Vec<Image> {
    let Some(atlas) = photo.pointer("/ext_params/atlas") else {
        return Vec::new();
    };
    let Some(cdn) = atlas
        .get("cdn")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .and_then(Value::as_str)
    else {
        return Vec::new();
    };
    let sizes = atlas
        .get("size")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    atlas
        .get("list")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .enumerate()
        .filter_map(|(i, path)| {
            let path = path.as_str()?.trim_start_matches('/');
            let size = sizes.get(i);
            Some(Image {
                url: format!("https://{cdn}/{path}"),
                width: size.map(|s| u32_of(s, "w")).unwrap_or(0),
                height: size.map(|s| u32_of(s, "h")).unwrap_or(0),
            })
        })
        .collect()
}

/// Map a photo object in SPEC.md's names (mobile shape, or the desktop
/// record after [`from_desktop`]).
pub fn to_media(photo: &Value) -> Media {
    let mut videos = Vec::new();
    for key in ["manifest", "manifestH265"] {
        if let Some(m) = photo.get(key) {
            manifest_videos(m, &mut videos);
        }
    }
    let (width, height) = (u32_of(photo, "width"), u32_of(photo, "height"));
    if let Some(mains) = photo.get("mainMvUrls").and_then(Value::as_array) {
        for url in mains
            .iter()
            .map(|m| str_of(m, "url"))
            .filter(|u| is_http(u))
        {
            videos.push(video(url, "main".into(), width, height));
        }
    }
    if let Some(h265) = photo.get("photoH265Url").and_then(Value::as_str)
        && is_http(h265)
    {
        videos.push(video(h265, "main h265".into(), width, height));
    }
    let images = atlas_images(photo);
    let thumbnail = photo
        .get("coverUrls")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .map(|c| str_of(c, "url").to_string())
        .unwrap_or_default();
    Media {
        title: str_of(photo, "caption").to_string(),
        thumbnail,
        duration: if images.is_empty() || !videos.is_empty() {
            num_of(photo, "duration").unwrap_or(0.0) / 1000.0
        } else {
            0.0
        },
        images,
        videos,
        audios: Vec::new(),
    }
}

/// Platform data: the photo object with SPEC.md's members present.
pub fn platform_data(photo: &Value, requested_id: &str) -> Value {
    let mut data: Map<String, Value> = photo.as_object().cloned().unwrap_or_default();
    let id = match data.get("photoId") {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => requested_id.to_string(),
    };
    data.insert("photoId".into(), Value::String(id));
    if !data.get("author").is_some_and(Value::is_object) {
        let mut author = Map::new();
        for (from, to) in [
            ("userId", "id"),
            ("userEid", "eid"),
            ("userName", "name"),
            ("headUrl", "headUrl"),
        ] {
            if let Some(v) = photo.get(from).filter(|v| !v.is_null()) {
                author.insert(to.into(), v.clone());
            }
        }
        data.insert("author".into(), Value::Object(author));
    }
    if let Some(duration) = data.get("duration").and_then(Value::as_str) {
        let parsed = duration.trim().parse::<u64>().ok();
        if let Some(ms) = parsed {
            data.insert("duration".into(), json!(ms));
        }
    }
    for (name, numeric) in [("duration", true), ("width", true), ("height", true)] {
        if numeric && data.get(name).is_some_and(|v| !v.is_number()) {
            data.remove(name);
        }
    }
    for name in ["caption"] {
        if data.get(name).is_some_and(|v| !v.is_string()) {
            data.remove(name);
        }
    }
    for name in ["mainMvUrls", "coverUrls"] {
        if data.get(name).is_some_and(|v| !v.is_array()) {
            data.remove(name);
        }
    }
    if data.get("manifest").is_some_and(|v| !v.is_object()) {
        data.remove("manifest");
    }
    fill_missing_members(PLATFORM, &mut data);
    let mut value = Value::Object(data);
    mediaparse_sdk::bigints::stringify_large_integers(&mut value);
    value
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

/// Media and platform data of a found photo.
pub fn extraction(photo: &Value, id: &str) -> Extraction {
    Extraction {
        media: to_media(photo),
        platform_data: platform_data(photo, id).into(),
    }
}

fn anti_bot() -> Failure {
    Failure::RateLimited("Kuaishou asked for verification (captcha or antispam)".into())
}

fn not_found() -> Failure {
    Failure::unavailable("Kuaishou has no such post")
}

fn is_verification_page(text: &str) -> bool {
    text.contains("captcha.zt.kuaishou.com")
        || text.contains("请求过快")
        || text.contains("captchaSession")
}

fn page_text(response: &HttpResponse) -> std::result::Result<String, Failure> {
    match response.status {
        404 | 410 => return Err(not_found()),
        403 | 429 => return Err(anti_bot()),
        s if !response.is_success() => {
            return Err(Failure::upstream(format!("Kuaishou answered HTTP {s}")));
        }
        _ => {}
    }
    let text = response.text().into_owned();
    if is_verification_page(&text) {
        return Err(anti_bot());
    }
    Ok(text)
}

fn result_code(v: &Value) -> Option<i64> {
    let r = v.get("result")?;
    r.as_i64()
        .or_else(|| r.as_str().and_then(|s| s.parse().ok()))
}

/// A page answered by a bare JSON reply instead of HTML: a blocked request
/// (`{"result":2,…}`, 29–63 bytes) or the antispam captcha (`result` 2001);
/// `None` when the body is not JSON.
fn bare_reply(text: &str, page: &str) -> Option<Failure> {
    let bare = serde_json::from_str::<Value>(text.trim()).ok()?;
    Some(match result_code(&bare) {
        Some(2) | Some(2001) => anti_bot(),
        _ => Failure::changed(format!("the {page} answered JSON without a photo")),
    })
}

/// The mobile share page's photo; `Missed` moves on to the desktop page,
/// `Err` is final (deleted, under review).
pub fn read_mobile(response: &HttpResponse) -> Result<Attempt<Value>> {
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
    let state = jsobj::parse(raw).map_err(|e| Failure::changed(format!("INIT_STATE: {e}")))?;
    // Keys are obfuscated (every character shifted by one): find the value
    // that holds both `result` and `photo`.
    let holder = state.as_object().and_then(|members| {
        members
            .values()
            .find(|v| v.get("result").is_some() && v.get("photo").is_some())
    });
    let Some(holder) = holder else {
        return Ok(Attempt::Missed(
            match state
                .as_object()
                .and_then(|m| m.values().find_map(result_code))
            {
                Some(2) | Some(2001) => anti_bot(),
                _ => Failure::changed("INIT_STATE holds no photo"),
            },
        ));
    };
    match result_code(holder) {
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
    match holder.get("photo") {
        Some(photo @ Value::Object(_)) => Ok(Attempt::Got(photo.clone())),
        _ => Ok(Attempt::Missed(not_found())),
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

pub fn read_desktop(response: &HttpResponse, id: &str) -> Result<Attempt<Value>> {
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
    Ok(Attempt::Got(from_desktop(record, author)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atlas_urls_join_cdn_and_path() {
        let photo = json!({"ext_params":{"atlas":{"cdn":["p2.a.yximgs.com"],"list":["/ufile/atlas/a_0.jpg","ufile/atlas/a_1.jpg"],"size":[{"w":1080,"h":1440}]}}});
        let images = atlas_images(&photo);
        assert_eq!(images.len(), 2);
        assert_eq!(images[0].url, "https://p2.a.yximgs.com/ufile/atlas/a_0.jpg");
        assert_eq!((images[0].width, images[0].height), (1080, 1440));
        assert_eq!((images[1].width, images[1].height), (0, 0));
    }

    #[test]
    fn platform_data_has_listed_members() {
        let data = platform_data(&json!({"caption":"x","userName":"u","userId":12}), "3xabc");
        assert!(mediaparse_sdk::spec::check_platform_data("kuaishou", &data).is_empty());
        assert_eq!(data["photoId"], "3xabc");
        assert_eq!(data["author"]["name"], "u");
    }
}
