//! Mapping Toutiao's answers: each strategy's object read into a [`Found`]
//! video, the misses ranked into one failure, and the media object plus
//! SPEC.md's legacy platform-data members built from what was found.

use base64::Engine;
use mediaparse_sdk::cascade;
use mediaparse_sdk::html;
use mediaparse_sdk::html::script_by_id;
use mediaparse_sdk::ids;
use std::borrow::Cow;

use mediaparse_sdk::fields::{self, RawValue, Text, kind_of};
use mediaparse_sdk::platform_data::fits_listed;
use mediaparse_sdk::{Extraction, Failure, HttpResponse, Media, ObjectWriter, Video};
use serde_json::{Map, Value};

use crate::{PLATFORM, playinfo};

/// A video found by one strategy, with the values SPEC.md's members need.
pub struct Found {
    /// The fetched object's text (`initialVideo`, `articleInfo`, legacy item).
    pub object: Box<RawValue>,
    pub group_id: String,
    pub item_id: String,
    pub title: String,
    pub summary: String,
    pub poster: String,
    pub duration: f64,
    /// Object, or the legacy JSON string as upstream sent it (its text).
    pub play_info: Box<RawValue>,
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

fn page_text(response: &HttpResponse) -> std::result::Result<Cow<'_, str>, Failure> {
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
    let text = response.text();
    if is_anti_bot(&text) {
        return Err(anti_bot());
    }
    Ok(text)
}

/// `<script id="RENDER_DATA">` holds URL-encoded JSON (plain JSON
/// tolerated): its decoded text.
fn render_data_text(html: &str) -> std::result::Result<Cow<'_, str>, Failure> {
    let raw = script_by_id(html, "RENDER_DATA")
        .ok_or_else(|| Failure::changed("the page has no RENDER_DATA"))?;
    Ok(if raw.starts_with('{') {
        Cow::Borrowed(raw)
    } else {
        percent_encoding::percent_decode_str(raw).decode_utf8_lossy()
    })
}

/// `RENDER_DATA` as a tree.
fn render_data(html: &str) -> std::result::Result<Value, Failure> {
    parse_render_data(&render_data_text(html)?)
}

fn parse_render_data<'a, T: serde::Deserialize<'a>>(
    text: &'a str,
) -> std::result::Result<T, Failure> {
    serde_json::from_str(text)
        .map_err(|e| Failure::changed(format!("RENDER_DATA is not JSON: {e}")))
}

/// An object's members as its text, looked up as `Value::get` does (of a
/// name given twice, the last); no members when it is no object.
struct Object<'a>(Vec<(Cow<'a, str>, &'a RawValue)>);

impl<'a> Object<'a> {
    fn of(raw: &'a RawValue) -> Object<'a> {
        Object(fields::members(raw).unwrap_or_default())
    }

    fn get(&self, name: &str) -> Option<&'a RawValue> {
        self.0
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| *v)
    }

    /// The first of `keys` holding a string or a number, as text.
    fn text(&self, keys: &[&str]) -> String {
        keys.iter()
            .find_map(|k| id_text(self.get(k)?))
            .unwrap_or_default()
    }

    /// The first of `keys` holding a finite, non-negative number (or a
    /// numeric string).
    fn number(&self, keys: &[&str]) -> Option<f64> {
        keys.iter().find_map(|k| number(self.get(k)?))
    }
}

/// A string's text or a number's digits (as [`ids::id_text`]).
fn id_text(raw: &RawValue) -> Option<String> {
    matches!(kind_of(raw), b'"' | b'-' | b'0'..=b'9')
        .then(|| serde_json::from_str::<Text>(raw.get()).ok())
        .flatten()
        .map(Text::into_string)
}

/// A number or numeric string (as [`ids::number`]).
fn number(raw: &RawValue) -> Option<f64> {
    matches!(kind_of(raw), b'"' | b'-' | b'0'..=b'9')
        .then(|| serde_json::from_str::<Text>(raw.get()).ok())
        .flatten()?
        .number()
}

/// The play-info member as platform data keeps it: as upstream sent it, or
/// `{}` when absent or `null`.
fn play_info_text(raw: Option<&RawValue>) -> Box<RawValue> {
    match raw.filter(|r| kind_of(r) != b'n') {
        Some(r) => r.to_owned(),
        None => empty_object(),
    }
}

fn empty_object() -> Box<RawValue> {
    raw_text(&Value::Object(Map::new()))
}

/// The text of a tree built here (writing one cannot fail; `null` if it did).
fn raw_text(value: &Value) -> Box<RawValue> {
    serde_json::value::to_raw_value(value).unwrap_or_default()
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
    let data = render_data_text(&text)?;
    let data: &RawValue = parse_render_data(&data)?;
    let video = fields::at(Some(data), &["data", "initialVideo"])
        .filter(|v| kind_of(v) == b'{')
        .ok_or_else(|| Failure::changed("RENDER_DATA has no data.initialVideo"))?;
    let object = Object::of(video);
    let raw_info = object
        .get("videoPlayInfo")
        .or_else(|| object.get("video_play_info"));
    let info = playinfo::read(raw_info);
    Ok(Found {
        group_id: id.to_string(),
        item_id: object.text(&["itemId", "item_id", "itemIdStr"]),
        title: object.text(&["title"]),
        summary: object.text(&["abstract", "description", "desc"]),
        poster: object.text(&["poster", "coverUrl", "poster_url"]),
        duration: info
            .duration
            .or_else(|| object.number(&["video_duration", "duration"]))
            .unwrap_or(0.0),
        videos: info.videos,
        play_info: play_info_text(raw_info),
        object: video.to_owned(),
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
    if html::contains(&text, "VIDEO_IN_APP_ONLY") {
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
        play_info: empty_object(),
        videos: Vec::new(),
        object: raw_text(article),
    };
    if let Some(list) = article
        .get("playUrlList")
        .filter(|l| l.as_array().is_some_and(|a| !a.is_empty()))
    {
        found.videos = playinfo::play_url_list_videos(list);
        found.play_info = raw_text(&serde_json::json!({ "playUrlList": list }));
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
    found.play_info = raw_text(data);
    Ok(found)
}

/// Legacy: `{"data":{group_id, item_id, title, abstract, video_duration,
/// video_play_info: "<JSON string>", …}}`.
pub fn read_legacy(id: &str, response: &HttpResponse) -> std::result::Result<Found, Failure> {
    #[derive(serde::Deserialize)]
    struct Answer<'a> {
        #[serde(borrow, default, deserialize_with = "fields::raw")]
        data: Option<&'a RawValue>,
    }
    /// The members of the legacy item `map` reads.
    #[derive(serde::Deserialize, Default)]
    #[serde(default)]
    struct Item<'a> {
        #[serde(borrow, deserialize_with = "fields::raw")]
        item_id: Option<&'a RawValue>,
        #[serde(borrow, deserialize_with = "fields::raw")]
        title: Option<&'a RawValue>,
        #[serde(borrow, rename = "abstract", deserialize_with = "fields::raw")]
        summary: Option<&'a RawValue>,
        #[serde(borrow, deserialize_with = "fields::raw")]
        video_duration: Option<&'a RawValue>,
        #[serde(borrow, deserialize_with = "fields::raw")]
        video_play_info: Option<&'a RawValue>,
        #[serde(borrow, deserialize_with = "fields::raw")]
        video_detail_info: Option<&'a RawValue>,
    }
    let text = page_text(response)?;
    let answer: Answer = serde_json::from_str(&text)
        .map_err(|e| Failure::changed(format!("the info answer is not JSON: {e}")))?;
    let raw_item = answer
        .data
        .filter(|d| kind_of(d) == b'{')
        .ok_or_else(|| Failure::changed("the info answer has no data"))?;
    let item: Item = serde_json::from_str(raw_item.get()).unwrap_or_default();
    let info = playinfo::read(item.video_play_info);
    let poster = if info.poster.is_empty() {
        fields::at(item.video_detail_info, &["detail_video_large_image", "url"])
            .filter(|u| kind_of(u) == b'"')
            .and_then(id_text)
            .unwrap_or_default()
    } else {
        info.poster
    };
    let text = |raw: Option<&RawValue>| raw.and_then(id_text).unwrap_or_default();
    Ok(Found {
        group_id: id.to_string(),
        item_id: text(item.item_id),
        title: text(item.title),
        summary: text(item.summary),
        poster,
        duration: info
            .duration
            .or_else(|| item.video_duration.and_then(number))
            .unwrap_or(0.0),
        videos: info.videos,
        play_info: play_info_text(item.video_play_info),
        object: raw_item.to_owned(),
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
    // The fetched object's members, read once: to know which to keep, and
    // then copied after the ones written here.
    let upstream = Object::of(&found.object);
    let keeps = |name: &str| {
        name != "group_id"
            && upstream
                .get(name)
                .is_some_and(|v| fits_listed(PLATFORM, name, v))
    };
    let mut data = ObjectWriter::new();
    for (name, value) in [
        ("group_id", &found.group_id),
        ("item_id", &found.item_id),
        ("title", &found.title),
        ("abstract", &found.summary),
        ("poster_url", &found.poster),
    ] {
        if !keeps(name) {
            data.str(name, value);
        }
    }
    if !keeps("video_duration") {
        data.value("video_duration", &seconds_value(found.duration));
    }
    if !keeps("video_play_info") {
        data.raw("video_play_info", &found.play_info);
    }
    for (name, value) in &upstream.0 {
        data.raw(name.clone(), value);
    }
    Extraction {
        media,
        platform_data: data.finish(PLATFORM),
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
