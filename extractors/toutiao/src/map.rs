//! Mapping Toutiao's answers: each strategy's object read into a [`Found`]
//! video, the misses ranked into one failure, and the media object plus
//! SPEC.md's legacy platform-data members built from what was found.

use base64::Engine;
use mediaparse_sdk::cascade;
use mediaparse_sdk::html::script_by_id;
use mediaparse_sdk::ids;
use mediaparse_sdk::spec::{fill_missing_members, listed_members};
use mediaparse_sdk::{Extraction, Failure, HttpResponse, Media, Video};
use serde_json::{Map, Value};

use crate::{PLATFORM, playinfo};

/// A video found by one strategy, with the values SPEC.md's members need.
pub struct Found {
    /// The fetched object (`initialVideo`, `articleInfo`, legacy item).
    pub object: Value,
    pub group_id: String,
    pub item_id: String,
    pub title: String,
    pub summary: String,
    pub poster: String,
    pub duration: f64,
    /// Object, or the legacy JSON string as upstream sent it.
    pub play_info: Value,
    pub videos: Vec<Video>,
}

fn anti_bot() -> Failure {
    Failure::RateLimited("Toutiao answered with a verification page".into())
}

fn is_anti_bot(text: &str) -> bool {
    [
        "__ac_nonce",
        "waf-jschallenge",
        "_wafchallengeid",
        "verifycenter",
    ]
    .iter()
    .any(|m| text.contains(m))
}

fn page_text(response: &HttpResponse) -> std::result::Result<String, Failure> {
    match response.status {
        404 | 410 => {
            return Err(Failure::unavailable(
                "Toutiao has no such video (deleted or hidden)",
            ));
        }
        403 | 429 => return Err(anti_bot()),
        s if !response.is_success() => {
            return Err(Failure::upstream(format!("Toutiao answered HTTP {s}")));
        }
        _ => {}
    }
    let text = response.text().into_owned();
    if is_anti_bot(&text) {
        return Err(anti_bot());
    }
    Ok(text)
}

/// `<script id="RENDER_DATA">` holds URL-encoded JSON (plain JSON tolerated).
fn render_data(html: &str) -> std::result::Result<Value, Failure> {
    let raw = script_by_id(html, "RENDER_DATA")
        .ok_or_else(|| Failure::changed("the page has no RENDER_DATA"))?;
    let decoded = if raw.starts_with('{') {
        raw.to_string()
    } else {
        percent_encoding::percent_decode_str(raw)
            .decode_utf8_lossy()
            .into_owned()
    };
    serde_json::from_str(&decoded)
        .map_err(|e| Failure::changed(format!("RENDER_DATA is not JSON: {e}")))
}

fn text_of(v: &Value, keys: &[&str]) -> String {
    keys.iter()
        .find_map(|k| ids::id_text(v.get(*k)?))
        .unwrap_or_default()
}

fn number_of(v: &Value, keys: &[&str]) -> Option<f64> {
    keys.iter().find_map(|k| ids::number(v.get(*k)?))
}

/// Desktop: `data.initialVideo` with `videoPlayInfo`.
pub fn read_desktop(id: &str, response: &HttpResponse) -> std::result::Result<Found, Failure> {
    let text = page_text(response)?;
    let data = render_data(&text)?;
    let video = data
        .pointer("/data/initialVideo")
        .filter(|v| v.is_object())
        .ok_or_else(|| Failure::changed("RENDER_DATA has no data.initialVideo"))?;
    let raw_info = video
        .get("videoPlayInfo")
        .or_else(|| video.get("video_play_info"))
        .cloned()
        .unwrap_or(Value::Null);
    let info = playinfo::as_object(&raw_info).unwrap_or(Value::Null);
    Ok(Found {
        group_id: id.to_string(),
        item_id: text_of(video, &["itemId", "item_id", "itemIdStr"]),
        title: text_of(video, &["title"]),
        summary: text_of(video, &["abstract", "description", "desc"]),
        poster: text_of(video, &["poster", "coverUrl", "poster_url"]),
        duration: number_of(&info, &["video_duration"])
            .or_else(|| number_of(video, &["video_duration", "duration"]))
            .unwrap_or(0.0),
        videos: playinfo::play_info_videos(&info),
        play_info: if raw_info.is_null() {
            Value::Object(Default::default())
        } else {
            raw_info
        },
        object: video.clone(),
    })
}

pub enum Mobile {
    Found(Found),
    /// Only a play token: one VOD call to go.
    Vod {
        found: Found,
        query: String,
    },
    /// `VIDEO_IN_APP_ONLY`: no web stream exists.
    AppOnly,
}

fn find_key<'a>(v: &'a Value, key: &str, depth: usize) -> Option<&'a Value> {
    let map = v.as_object()?;
    if let Some(found) = map.get(key) {
        return Some(found);
    }
    if depth == 0 {
        return None;
    }
    map.values()
        .find_map(|child| find_key(child, key, depth - 1))
}

/// Mobile: `articleInfo` with `playUrlList`, or `playAuthTokenV2`.
pub fn read_mobile(id: &str, response: &HttpResponse) -> std::result::Result<Mobile, Failure> {
    let text = page_text(response)?;
    if text.contains("VIDEO_IN_APP_ONLY") {
        return Ok(Mobile::AppOnly);
    }
    let data = render_data(&text)?;
    let article = find_key(&data, "articleInfo", 3)
        .filter(|v| v.is_object())
        .ok_or_else(|| Failure::changed("mobile RENDER_DATA has no articleInfo"))?;
    let mut found = Found {
        group_id: id.to_string(),
        item_id: text_of(article, &["itemId", "item_id", "groupId"]),
        title: text_of(article, &["title"]),
        summary: text_of(article, &["abstract", "description"]),
        poster: text_of(article, &["posterUrl", "coverUrl", "poster", "poster_url"]),
        duration: number_of(article, &["videoDuration", "video_duration", "duration"])
            .unwrap_or(0.0),
        play_info: Value::Object(Default::default()),
        videos: Vec::new(),
        object: article.clone(),
    };
    if let Some(list) = article
        .get("playUrlList")
        .filter(|l| l.as_array().is_some_and(|a| !a.is_empty()))
    {
        found.videos = playinfo::play_url_list_videos(list);
        found.play_info = serde_json::json!({ "playUrlList": list });
        return Ok(Mobile::Found(found));
    }
    let token = article
        .get("playAuthTokenV2")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if token.is_empty() {
        return Ok(Mobile::Found(found));
    }
    let query = base64::engine::general_purpose::STANDARD
        .decode(token.trim())
        .ok()
        .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok())
        .and_then(|v| {
            v.get("GetPlayInfoToken")
                .and_then(Value::as_str)
                .map(String::from)
        })
        .filter(|q| !q.is_empty() && !q.contains(['#', ' ']))
        .ok_or_else(|| Failure::changed("playAuthTokenV2 holds no GetPlayInfoToken"))?;
    Ok(Mobile::Vod { found, query })
}

/// VOD: `Result.Data.PlayInfoList[]`.
pub fn read_vod(mut found: Found, response: &HttpResponse) -> std::result::Result<Found, Failure> {
    let text = page_text(response)?;
    let body: Value = serde_json::from_str(&text)
        .map_err(|e| Failure::changed(format!("GetPlayInfo is not JSON: {e}")))?;
    let data = body
        .pointer("/Result/Data")
        .filter(|d| d.is_object())
        .ok_or_else(|| Failure::changed("GetPlayInfo has no Result.Data"))?;
    found.videos = playinfo::vod_videos(data);
    if found.poster.is_empty() {
        found.poster = text_of(data, &["CoverUrl"]);
    }
    if found.duration == 0.0 {
        found.duration = number_of(data, &["Duration"]).unwrap_or(0.0);
    }
    found.play_info = data.clone();
    Ok(found)
}

/// Legacy: `{"data":{group_id, item_id, title, abstract, video_duration,
/// video_play_info: "<JSON string>", …}}`.
pub fn read_legacy(id: &str, response: &HttpResponse) -> std::result::Result<Found, Failure> {
    let text = page_text(response)?;
    let body: Value = serde_json::from_str(&text)
        .map_err(|e| Failure::changed(format!("the info answer is not JSON: {e}")))?;
    let item = body
        .get("data")
        .filter(|d| d.is_object())
        .ok_or_else(|| Failure::changed("the info answer has no data"))?;
    let raw_info = item.get("video_play_info").cloned().unwrap_or(Value::Null);
    let info = playinfo::as_object(&raw_info).unwrap_or(Value::Null);
    let poster = text_of(&info, &["poster_url"]);
    let poster = if poster.is_empty() {
        item.pointer("/video_detail_info/detail_video_large_image/url")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    } else {
        poster
    };
    Ok(Found {
        group_id: id.to_string(),
        item_id: text_of(item, &["item_id"]),
        title: text_of(item, &["title"]),
        summary: text_of(item, &["abstract"]),
        poster,
        duration: number_of(&info, &["video_duration"])
            .or_else(|| number_of(item, &["video_duration"]))
            .unwrap_or(0.0),
        videos: playinfo::play_info_videos(&info),
        play_info: if raw_info.is_null() {
            Value::Object(Default::default())
        } else {
            raw_info
        },
        object: item.clone(),
    })
}

/// The failure for a video every strategy missed, strongest signal first.
pub fn verdict(misses: Vec<Failure>) -> Failure {
    cascade::most_telling(misses, cascade::telling)
        .unwrap_or_else(|| Failure::changed("no strategy found the video"))
}

/// Media and platform data (SPEC.md's legacy member names, built from
/// whatever object was fetched; upstream members of the right type kept).
pub fn extraction(found: Found) -> Extraction {
    let media = Media {
        title: found.title.clone(),
        thumbnail: found.poster.clone(),
        duration: found.duration,
        images: Vec::new(),
        videos: found.videos,
        audios: Vec::new(),
    };
    let mut data = match found.object {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    let derived: [(&str, Value); 7] = [
        ("group_id", Value::String(found.group_id)),
        ("item_id", Value::String(found.item_id)),
        ("title", Value::String(found.title)),
        ("abstract", Value::String(found.summary)),
        ("poster_url", Value::String(found.poster)),
        ("video_duration", seconds_value(found.duration)),
        ("video_play_info", found.play_info),
    ];
    for (name, value) in derived {
        let kind = listed_members(PLATFORM)
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, k)| *k);
        let keep = name != "group_id"
            && data
                .get(name)
                .is_some_and(|v| kind.is_some_and(|k| k.accepts(v)));
        if !keep {
            data.insert(name.to_string(), value);
        }
    }
    let mut object = Value::Object(data);
    mediaparse_sdk::bigints::stringify_large_integers(&mut object);
    if let Value::Object(map) = &mut object {
        fill_missing_members(PLATFORM, map);
    }
    Extraction {
        media,
        platform_data: object.into(),
    }
}

/// Whole seconds as an integer (as the legacy members were), else a float.
fn seconds_value(seconds: f64) -> Value {
    if seconds.is_finite() && seconds.fract() == 0.0 && seconds.abs() < 1e15 {
        Value::from(seconds as i64)
    } else {
        serde_json::Number::from_f64(seconds)
            .map(Value::Number)
            .unwrap_or_else(|| Value::from(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_data_is_url_decoded() {
        let html = r#"<script id="RENDER_DATA" type="application/json">%7B%22data%22%3A%7B%22a%22%3A1%7D%7D</script>"#;
        assert_eq!(render_data(html).unwrap()["data"]["a"], 1);
        assert!(matches!(
            render_data("<html></html>"),
            Err(Failure::UpstreamChanged(_))
        ));
    }

    #[test]
    fn verdict_order() {
        let not_found = || Failure::unavailable("gone");
        assert_eq!(
            verdict(vec![Failure::changed("x"), anti_bot()]).code(),
            "upstream_rate_limited"
        );
        assert_eq!(
            verdict(vec![not_found(), Failure::changed("x")]).code(),
            "content_unavailable"
        );
        assert_eq!(
            verdict(vec![Failure::changed("x")]).code(),
            "upstream_error"
        );
    }
}
