//! The upstream rounds, re-derived from `done` on every call: `/is/` hops,
//! the ttwid registration, the desktop page, the mobile page (+ VOD), the
//! legacy info answer.

use base64::Engine;
use mediaparse_sdk::cookies::cookie_value;
use mediaparse_sdk::html::script_by_id;
use mediaparse_sdk::urls::InputUrl;
use mediaparse_sdk::{
    Context, Exchange, Failure, HttpRequest, HttpResponse, Result, Target, Video,
};
use serde_json::Value;

use crate::playinfo;
use crate::urls::{self, Link};
use crate::{DESKTOP_UA, MOBILE_UA};

pub const REGISTER_URL: &str = "https://ttwid.bytedance.com/ttwid/union/register/";
pub const REGISTER_BODY: &str =
    r#"{"aid":24,"needFid":false,"region":"cn","service":"www.toutiao.com","union":true}"#;
/// How long the host may reuse one registration answer.
const TTWID_CACHE_SECONDS: u32 = 6 * 3600;
const MAX_HOPS: usize = 3;

pub enum Step {
    Fetch(Vec<HttpRequest>),
    Found(Box<Found>),
}

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

#[derive(Clone, Debug, PartialEq)]
enum Miss {
    AntiBot,
    NotFound,
    Status(u16),
    Changed(String),
}

pub fn desktop_url(id: &str) -> String {
    format!("https://www.toutiao.com/video/{id}/")
}
pub fn mobile_url(id: &str) -> String {
    format!("https://m.toutiao.com/video/{id}/")
}
pub fn legacy_url(id: &str) -> String {
    format!("https://m.toutiao.com/i{id}/info/")
}

fn last<'a>(done: &'a [Exchange], url: &str) -> Option<&'a HttpResponse> {
    done.iter()
        .rev()
        .find(|e| e.request.url == url)
        .map(|e| &e.response)
}

pub fn step(target: &Target, ctx: &Context, done: &[Exchange]) -> Result<Step> {
    let id = match urls::classify(&InputUrl::parse(&target.canonical_url)?)? {
        Link::Video(id) => id,
        Link::Short(code) => match resolve_short(&code, done)? {
            Ok(id) => id,
            Err(request) => return Ok(Step::Fetch(vec![request])),
        },
    };
    let mut misses = Vec::new();
    // A post whose page parsed but carried no stream (app-only videos).
    let mut no_stream: Option<Found> = None;

    // Strategy 1: ttwid, then the desktop page's RENDER_DATA.
    let cookie = match ctx.config("cookie").filter(|c| c.contains("ttwid=")) {
        Some(operator) => Some(operator.to_string()),
        None => match last(done, REGISTER_URL) {
            None => {
                let request = HttpRequest::post(REGISTER_URL, REGISTER_BODY)
                    .header("Content-Type", "application/json")
                    .header("User-Agent", DESKTOP_UA)
                    .cache_for(TTWID_CACHE_SECONDS);
                return Ok(Step::Fetch(vec![request]));
            }
            Some(response) => cookie_value(response, "ttwid").map(|v| format!("ttwid={v}")),
        },
    };
    if let Some(cookie) = cookie {
        let url = desktop_url(&id);
        let Some(response) = last(done, &url) else {
            let request = HttpRequest::get(url)
                .header("User-Agent", DESKTOP_UA)
                .header("Referer", "https://www.toutiao.com/")
                .header("Cookie", cookie);
            return Ok(Step::Fetch(vec![request]));
        };
        match read_desktop(&id, response) {
            Ok(found) if !found.videos.is_empty() => return Ok(Step::Found(Box::new(found))),
            Ok(found) => no_stream = Some(found),
            Err(miss) => misses.push(miss),
        }
    }

    // Strategy 2: the mobile page, and VOD GetPlayInfo when it holds a token.
    let url = mobile_url(&id);
    let Some(response) = last(done, &url) else {
        let request = HttpRequest::get(url).header("User-Agent", MOBILE_UA);
        return Ok(Step::Fetch(vec![request]));
    };
    match read_mobile(&id, response) {
        Ok(Mobile::Found(found)) if !found.videos.is_empty() => {
            return Ok(Step::Found(Box::new(found)));
        }
        Ok(Mobile::Found(found)) => {
            no_stream.get_or_insert(found);
        }
        Ok(Mobile::AppOnly) => {
            if let Some(found) = no_stream {
                return Ok(Step::Found(Box::new(found)));
            }
        }
        Ok(Mobile::Vod { found, query }) => {
            let url = format!("https://vod.bytedanceapi.com/?{query}");
            let Some(response) = last(done, &url) else {
                let request = HttpRequest::get(url).header("User-Agent", MOBILE_UA);
                return Ok(Step::Fetch(vec![request]));
            };
            match read_vod(found, response) {
                Ok(found) if !found.videos.is_empty() => return Ok(Step::Found(Box::new(found))),
                Ok(found) => {
                    no_stream.get_or_insert(found);
                }
                Err(miss) => misses.push(miss),
            }
        }
        Err(miss) => misses.push(miss),
    }

    // Strategy 3: the legacy info answer (string `video_play_info`).
    let url = legacy_url(&id);
    let Some(response) = last(done, &url) else {
        let request = HttpRequest::get(url).header("User-Agent", MOBILE_UA);
        return Ok(Step::Fetch(vec![request]));
    };
    match read_legacy(&id, response) {
        Ok(found) if !found.videos.is_empty() => return Ok(Step::Found(Box::new(found))),
        Ok(found) => {
            no_stream.get_or_insert(found);
        }
        Err(miss) => misses.push(miss),
    }
    // A post that parsed without any stream is a no-media answer (304).
    if let Some(found) = no_stream {
        return Ok(Step::Found(Box::new(found)));
    }
    Err(verdict(&misses))
}

fn resolve_short(
    code: &str,
    done: &[Exchange],
) -> Result<std::result::Result<String, HttpRequest>> {
    let mut url = urls::short_url(code);
    for _ in 0..MAX_HOPS {
        let Some(response) = last(done, &url) else {
            return Ok(Err(HttpRequest::get(&url)
                .header("User-Agent", MOBILE_UA)
                .no_redirects()));
        };
        if response.status == 429 {
            return Err(Failure::RateLimited(
                "the share-link host is rate-limiting".into(),
            ));
        }
        if response.status >= 500 {
            return Err(Failure::upstream(format!(
                "the share-link host answered {}",
                response.status
            )));
        }
        let location = match response.location() {
            Some(location) if response.is_redirect() => location,
            _ => {
                return Err(Failure::unsupported(
                    "the share link does not redirect anywhere (expired code)",
                ));
            }
        };
        let landing = InputUrl::parse(&location)?;
        match urls::classify(&landing) {
            Ok(Link::Video(id)) => return Ok(Ok(id)),
            Ok(Link::Short(next)) => url = urls::short_url(&next),
            Err(_) => {
                return Err(Failure::unsupported(format!(
                    "the share link leads to {}{}, which is not a Toutiao video",
                    landing.host,
                    landing.url.path()
                )));
            }
        }
    }
    Err(Failure::unsupported("too many share-link redirects"))
}

fn verdict(misses: &[Miss]) -> Failure {
    if misses.contains(&Miss::AntiBot) {
        return Failure::RateLimited("Toutiao answered with a verification page".into());
    }
    if misses.contains(&Miss::NotFound) {
        return Failure::unavailable("Toutiao has no such video (deleted or hidden)");
    }
    if let Some(status) = misses.iter().find_map(|m| match m {
        Miss::Status(s) => Some(*s),
        _ => None,
    }) {
        return Failure::upstream(format!("Toutiao answered HTTP {status}"));
    }
    let detail = misses
        .iter()
        .find_map(|m| match m {
            Miss::Changed(d) => Some(d.clone()),
            _ => None,
        })
        .unwrap_or_else(|| "no strategy found the video".into());
    Failure::changed(detail)
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

fn page_text(response: &HttpResponse) -> std::result::Result<String, Miss> {
    match response.status {
        404 | 410 => return Err(Miss::NotFound),
        403 | 429 => return Err(Miss::AntiBot),
        s if !response.is_success() => return Err(Miss::Status(s)),
        _ => {}
    }
    let text = response.text().into_owned();
    if is_anti_bot(&text) {
        return Err(Miss::AntiBot);
    }
    Ok(text)
}

/// `<script id="RENDER_DATA">` holds URL-encoded JSON (plain JSON tolerated).
fn render_data(html: &str) -> std::result::Result<Value, Miss> {
    let raw = script_by_id(html, "RENDER_DATA")
        .ok_or_else(|| Miss::Changed("the page has no RENDER_DATA".into()))?;
    let decoded = if raw.starts_with('{') {
        raw.to_string()
    } else {
        percent_encoding::percent_decode_str(raw)
            .decode_utf8_lossy()
            .into_owned()
    };
    serde_json::from_str(&decoded)
        .map_err(|e| Miss::Changed(format!("RENDER_DATA is not JSON: {e}")))
}

fn text_of(v: &Value, keys: &[&str]) -> String {
    keys.iter()
        .find_map(|k| match v.get(*k)? {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        })
        .unwrap_or_default()
}

fn number_of(v: &Value, keys: &[&str]) -> Option<f64> {
    keys.iter().find_map(|k| {
        let x = v.get(*k)?;
        x.as_f64()
            .or_else(|| x.as_str().and_then(|s| s.parse().ok()))
    })
}

/// Desktop: `data.initialVideo` with `videoPlayInfo`.
fn read_desktop(id: &str, response: &HttpResponse) -> std::result::Result<Found, Miss> {
    let text = page_text(response)?;
    let data = render_data(&text)?;
    let video = data
        .pointer("/data/initialVideo")
        .filter(|v| v.is_object())
        .ok_or_else(|| Miss::Changed("RENDER_DATA has no data.initialVideo".into()))?;
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

enum Mobile {
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
fn read_mobile(id: &str, response: &HttpResponse) -> std::result::Result<Mobile, Miss> {
    let text = page_text(response)?;
    if text.contains("VIDEO_IN_APP_ONLY") {
        return Ok(Mobile::AppOnly);
    }
    let data = render_data(&text)?;
    let article = find_key(&data, "articleInfo", 3)
        .filter(|v| v.is_object())
        .ok_or_else(|| Miss::Changed("mobile RENDER_DATA has no articleInfo".into()))?;
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
        .ok_or_else(|| Miss::Changed("playAuthTokenV2 holds no GetPlayInfoToken".into()))?;
    Ok(Mobile::Vod { found, query })
}

/// VOD: `Result.Data.PlayInfoList[]`.
fn read_vod(mut found: Found, response: &HttpResponse) -> std::result::Result<Found, Miss> {
    let text = page_text(response)?;
    let body: Value = serde_json::from_str(&text)
        .map_err(|e| Miss::Changed(format!("GetPlayInfo is not JSON: {e}")))?;
    let data = body
        .pointer("/Result/Data")
        .filter(|d| d.is_object())
        .ok_or_else(|| Miss::Changed("GetPlayInfo has no Result.Data".into()))?;
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
fn read_legacy(id: &str, response: &HttpResponse) -> std::result::Result<Found, Miss> {
    let text = page_text(response)?;
    let body: Value = serde_json::from_str(&text)
        .map_err(|e| Miss::Changed(format!("the info answer is not JSON: {e}")))?;
    let item = body
        .get("data")
        .filter(|d| d.is_object())
        .ok_or_else(|| Miss::Changed("the info answer has no data".into()))?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_data_is_url_decoded() {
        let html = r#"<script id="RENDER_DATA" type="application/json">%7B%22data%22%3A%7B%22a%22%3A1%7D%7D</script>"#;
        assert_eq!(render_data(html).unwrap()["data"]["a"], 1);
        assert!(matches!(
            render_data("<html></html>"),
            Err(Miss::Changed(_))
        ));
    }

    #[test]
    fn verdict_order() {
        assert_eq!(
            verdict(&[Miss::Changed("x".into()), Miss::AntiBot]).code(),
            "upstream_rate_limited"
        );
        assert_eq!(
            verdict(&[Miss::NotFound, Miss::Changed("x".into())]).code(),
            "content_unavailable"
        );
        assert_eq!(
            verdict(&[Miss::Changed("x".into())]).code(),
            "upstream_error"
        );
    }
}
