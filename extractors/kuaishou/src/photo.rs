//! The photo (post) objects and their mapping: the mobile `INIT_STATE`
//! photo (SPEC.md's member names) and the desktop Apollo cache record
//! (renamed to them).

use mediaparse_sdk::spec::fill_missing_members;
use mediaparse_sdk::{Header, Image, Media, MediaSource, Video};
use serde_json::{Map, Value, json};

use crate::PLATFORM;

pub fn download_headers() -> Vec<Header> {
    vec![
        Header::new("Referer", "https://www.kuaishou.com/"),
        Header::new("User-Agent", crate::MOBILE_UA),
    ]
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn num_of(v: &Value, key: &str) -> Option<f64> {
    let x = v.get(key)?;
    x.as_f64()
        .or_else(|| x.as_str().and_then(|s| s.trim().parse().ok()))
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

fn video(url: &str, quality: String, width: u32, height: u32) -> Video {
    Video {
        url: url.to_string(),
        quality,
        mime_type: "video/mp4".into(),
        width,
        height,
        // Progressive MP4s, although described as an adaptation set.
        has_audio: true,
        source: MediaSource::Direct,
        headers: download_headers(),
    }
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
